/**
 * The crash run on live chains (`CHAOS_MODE=live` of `deno task bench:chaos`, and tests/crash_live_test.ts): the real
 * server as a child process in `CHAIN_MODE=devnet`, SIGKILLed while deposits and burns are in flight, with
 *
 * - base and arbitrum on two anvils (tests/support/anvil.ts), the five uAssets deployed on each: real mints, real
 *   uAsset transfers to the transfer address signed by the partners' own keys, real on-chain burns of redeemed uAssets
 *   (docs/onchain-burn.md) signed by the transfer address, which the operator funds with gas;
 * - doge on a real litecoind regtest node (tests/support/litecoind.ts: Debian's litecoind speaks Dogecoin Core's RPC
 *   family, regtest P2PKH version 111 like Dogecoin regtest);
 * - zec on the Zebra-shaped server, sol, xrp and sui on their local protocol servers (tests/support/
 *   zebra_rpc_server.ts, solana_rpc_server.ts, rippled_rpc_server.ts, sui_graphql_server.ts): nothing installable here
 *   runs a Zebra, validator, rippled or Sui node (docs/architecture.md "Local nodes for tests"). They verify our
 * signatures,
 *   sequences, fees and expiries as the nodes would;
 * - katana, world and unichain simulated, as devnet does with every chain it is not given (config/chain_mode.ts): no
 *   deposit or burn of the run touches them.
 *
 * Every chain runs in this process, not in the killed child, so it keeps making blocks and taking outsiders'
 * transactions while the server is down; the child reads them over HTTP. Deposits are sent by outsiders on the native
 * chains (injected by the local servers, paid from litecoind's wallet) and never wait for the server; a burn is a
 * partner's transfer of uAssets the service minted to it, sent once its wallet holds them. Sweeps into the hot wallets
 * run as in production; the operator funds the hot wallets beforehand (payouts pay their fees from it:
 * docs/reconciliation.md: the surplus the operator put in, less payout fees).
 *
 * The checks are tests/support/chaos.ts `verify`, reading the chains through `liveFacts` instead of the sim ledgers:
 * the same exactly-once, sum, sweep, burn-batch and reconciliation checks, the last run with the service's own
 * adapters on these chains (app.ts `buildServices` on the same environment, after the server stopped).
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  parseAbiItem,
  type PublicClient,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { Transaction } from "bitcoinjs-lib";
import {
  type ChainSymbol,
  EVM_CHAINS,
  type EvmChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  nativeToWei,
  type UAsset,
  UASSETS,
  weiPerNativeUnit,
} from "../../chains/catalog.ts";
import { uAssetsEnvValue } from "../../chains/evm/deploy.ts";
import { Signer } from "../../chains/signer.ts";
import { outputScript, p2pkhAddress, utxoNetwork } from "../../chains/utxo/network.ts";
import { DEVNET_CHAIN_ID } from "../../config/chain_mode.ts";
import { loadConfig } from "../../config/env.ts";
import { UASSET_ABI } from "../../contracts/uasset.ts";
import { runReconciliation } from "../../actors/reconciliation.ts";
import { buildServices } from "../../app.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { listBurnBatches } from "../../kv/onchain_burns.ts";
import { listDepositAddresses } from "../../kv/mint_wallets.ts";
import { openKv } from "../../kv/open.ts";
import type { Order } from "../../model/order.ts";
import { type Anvil, ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./anvil.ts";
import {
  type ChainFacts,
  type ChaosOptions,
  type ChaosResult,
  countOrders,
  drain,
  errorsLogged,
  Http,
  type LedgerTx,
  type Op,
  type Outcome,
  seededRandom,
  sendWithInterruptions,
  ServerProcess,
  settleBurns,
  verify,
  type Wallet,
} from "./chaos.ts";
import { type Litecoind, startLitecoind } from "./litecoind.ts";
import { type RippledServer, startRippledServer } from "./rippled_rpc_server.ts";
import { type SolanaRpcServer, startSolanaRpcServer } from "./solana_rpc_server.ts";
import { startSuiGraphqlServer, type SuiGraphqlServer } from "./sui_graphql_server.ts";
import { ZebraShapedServer } from "./zebra_rpc_server.ts";

/** The two EVM chains on anvil; the other three stay simulated and unused (see the module comment). */
export const LIVE_EVM_CHAINS = ["base", "arbitrum"] as const satisfies readonly EvmChain[];
/** What is left out of the live run, and why: printed by the bench and the test. */
export const LIVE_LEFT_OUT = EVM_CHAINS.filter((c) => !(LIVE_EVM_CHAINS as readonly string[]).includes(c)).map((c) =>
  `${c}: not in the live run (base and a second EVM chain, arbitrum, run on anvil); devnet simulates it and no ` +
  "deposit or burn of the run touches it"
);

/** The server's mnemonic (test-only, public): the hot wallets and the transfer address are derived from it. */
const TEST_MNEMONIC = "test test test test test test test test test test test junk";
/** Burn destinations and deposit senders: addresses of another mnemonic, never ours. */
const OUTSIDE_MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const DOGE_REGTEST = utxoNetwork("doge", "regtest");
const ZEC_REGTEST = utxoNetwork("zec", "regtest");
const BASE_URL = "http://chaos-live.test";
const minterAccount = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const MINTED = parseAbiItem("event Minted(bytes32 indexed depositId, address indexed to, uint256 amount)");
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const ZERO = "0x0000000000000000000000000000000000000000";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The suite's short run (tests/crash_live_test.ts): few operations, kills at fixed points of a fixed seed. Each
 * restart costs the child's start (about 2 s here: every live node is asked who it is), so the kills dominate.
 */
export const LIVE_CHAOS_TEST_OPTIONS: Omit<ChaosOptions, "seed"> = {
  operations: 36,
  trafficKills: 6,
  drainKills: 2,
  wallets: 3,
  concurrency: 4,
  paceMs: 150,
  blockMs: 50,
  sweepMs: 100,
  rpcErrorRate: 0,
  drainTimeoutMs: 60_000,
};

// ---- the chains, in this process ----

interface EvmWorld {
  chain: EvmChain;
  anvil: Anvil;
  uAssets: Record<UAsset, Address>;
  deployedAt: bigint;
  client: PublicClient;
}

export interface LiveWorld {
  evm: EvmWorld[];
  sol: SolanaRpcServer;
  xrp: RippledServer;
  sui: SuiGraphqlServer;
  zec: ZebraShapedServer;
  doge: Litecoind;
  /** The child server's environment (without KV_PATH). */
  env: Record<string, string>;
  /** Stops block production (the chains stay readable). */
  stopBlocks(): Promise<void>;
  close(): Promise<void>;
}

/** Starts every chain of the live run and makes blocks on each every `blockMs` (doge: litecoind's own mining). */
export async function startLiveWorld(dir: string, blockMs: number): Promise<LiveWorld> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    const evm = await Promise.all(LIVE_EVM_CHAINS.map(async (chain): Promise<EvmWorld> => {
      // Anvil's dev chain id on both (devnet accepts no other); `safe` lags `latest` by 4 blocks, not 32.
      const anvil = await startAnvil({ chainId: DEVNET_CHAIN_ID, slotsInAnEpoch: 4 });
      closers.push(() => anvil.stop());
      const { addresses, deployedAtBlock } = await deployTestUAssets(anvil.url, minterAccount.address, {
        chain,
        chainId: DEVNET_CHAIN_ID,
      });
      const viemChain = evmChainOf(anvil.url);
      const client = createPublicClient({ chain: viemChain, transport: http(anvil.url), cacheTime: 0 }) as PublicClient;
      return { chain, anvil, uAssets: addresses, deployedAt: deployedAtBlock, client };
    }));
    const sol = startSolanaRpcServer();
    closers.push(() => sol.close());
    const xrp = startRippledServer();
    closers.push(() => xrp.close());
    const sui = await startSuiGraphqlServer();
    closers.push(() => sui.close());
    const zec = ZebraShapedServer.start({ network: ZEC_REGTEST, initialBlocks: 3 });
    closers.push(() => zec.close());
    const doge = await startLitecoind();
    closers.push(() => doge.stop());
    // 101 blocks mature one coinbase; 150 more mature enough for every deposit of a long run (regtest halves the
    // reward every 150 blocks).
    await doge.mine(150);

    const keyFile = `${dir}/minter.key`;
    await Deno.writeTextFile(keyFile, `${ANVIL_PRIVATE_KEYS[1]}\n`, { mode: 0o600 });
    const mnemonicFile = `${dir}/mnemonic.txt`;
    await Deno.writeTextFile(mnemonicFile, `${TEST_MNEMONIC}\n`, { mode: 0o600 });
    // Generous timeouts: a deposit must not time out because the server was down; timeouts are not what this tests.
    const timeout = "600000";
    const env: Record<string, string> = {
      CHAIN_MODE: "devnet",
      PIPELINE: "on",
      BASE_URL,
      MASTER_MNEMONIC_FILE: mnemonicFile,
      EVM_MINTER_KEY_FILE: keyFile,
      SIM_BLOCK_MS: String(blockMs),
      SIM_CONFIRMATION_TIMEOUT_MS: timeout,
      SOL_RPC_URLS: sol.url,
      SOL_START_BLOCK: String(sol.finalizedSlot),
      XRP_RPC_URLS: xrp.url,
      XRP_START_BLOCK: String(xrp.hooks.validatedIndex),
      SUI_RPC_URLS: sui.url,
      SUI_START_BLOCK: String(sui.tip),
      ZEC_RPC_URLS: zec.url,
      ZEC_START_BLOCK: String(zec.tipHeight),
      DOGE_RPC_URLS: doge.url,
      DOGE_START_BLOCK: String(await doge.call<number>("getblockcount")),
    };
    for (const chain of NATIVE_CHAINS) {
      env[`${chain.toUpperCase()}_BLOCK_MS`] = String(blockMs);
      env[`${chain.toUpperCase()}_CONFIRMATION_TIMEOUT_MS`] = timeout;
    }
    for (const e of evm) {
      const p = e.chain.toUpperCase();
      Object.assign(env, {
        [`${p}_RPC_URLS`]: e.anvil.url,
        [`${p}_UASSETS`]: uAssetsEnvValue(e.uAssets),
        [`${p}_START_BLOCK`]: String(e.deployedAt),
        [`${p}_CONFIRMATIONS`]: "2",
        [`${p}_BLOCK_MS`]: String(blockMs),
        [`${p}_CONFIRMATION_TIMEOUT_MS`]: timeout,
      });
    }

    // Blocks: anvil mines each transaction at once (automine) and one more block every `blockMs`, so confirmations
    // and the `safe` tag move; each native chain makes a block (slot, ledger, checkpoint) every `blockMs`.
    let running = true;
    const loops: Promise<void>[] = [];
    const every = (ms: number, tick: () => unknown) => {
      loops.push((async () => {
        while (running) {
          try {
            await tick();
          } catch { /* a node busy for a moment: the next tick mines */ }
          await sleep(ms);
        }
      })());
    };
    for (const e of evm) every(blockMs, () => anvilRpc(e.anvil.url, "evm_mine"));
    every(blockMs, () => sol.produce(1));
    every(blockMs, () => xrp.hooks.closeLedgers(1));
    every(blockMs, () => sui.mine(1));
    every(blockMs, () => zec.mine(1));
    every(blockMs, () => doge.mine(1));
    const stopBlocks = async () => {
      running = false;
      await Promise.all(loops);
    };
    closers.push(stopBlocks);
    return { evm, sol, xrp, sui, zec, doge, env, stopBlocks, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function evmChainOf(url: string) {
  return defineChain({
    id: DEVNET_CHAIN_ID,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
}

// ---- partners: wallets with keys, deposit addresses, burn destinations ----

/** A partner's wallet: an EVM key of its own, so its burns are real transfers it signs. */
export interface LiveWallet extends Wallet {
  key: Hex;
}

/** The burn destination of wallet `w` on `chain`: outsiders' addresses; on doge, litecoind wallet addresses. */
async function destinationOf(world: LiveWorld, outside: Signer, chain: NativeChain, index: number): Promise<string> {
  switch (chain) {
    // The node's own wallet: `listreceivedbyaddress` then names every transaction that ever paid it.
    case "doge":
      return await world.doge.call<string>("getnewaddress", ["", "legacy"]);
    case "zec":
      return p2pkhAddress(ZEC_REGTEST, outside.publicKey("zec", index));
    default:
      return outside.address(chain, index);
  }
}

async function setUpLive(
  world: LiveWorld,
  http: Http,
  kvPath: string,
  random: () => number,
  count: number,
): Promise<{ wallets: LiveWallet[]; transferAddress: string }> {
  const kv = await openKv(kvPath);
  const keys: string[] = [];
  try {
    for (const partner of ["chaos-a", "chaos-b"]) keys.push((await createApiKey(kv, partner)).apiKey);
  } finally {
    kv.close();
  }
  const outside = Signer.fromMnemonic(OUTSIDE_MNEMONIC, { doge: "regtest", zec: "regtest" });
  const wallets: LiveWallet[] = [];
  let transferAddress = "";
  for (let w = 0; w < count; w++) {
    const key = toHex(Uint8Array.from({ length: 32 }, () => Math.floor(random() * 256)));
    const address = privateKeyToAccount(key).address.toLowerCase();
    // Gas for its burns, on both chains.
    for (const e of world.evm) await anvilRpc(e.anvil.url, "anvil_setBalance", [address, toHex(10n ** 20n)]);
    const { token } = await http.ok("POST", "/auth/token", 200, {
      headers: { "X-API-Key": keys[w % keys.length] },
      body: { walletAddress: address },
    });
    const wallet: LiveWallet = {
      key,
      address,
      token,
      depositAddresses: new Map(),
      burnConfigs: new Map(),
      burnChains: [...LIVE_EVM_CHAINS],
    };
    for (const [i, chain] of NATIVE_CHAINS.entries()) {
      const list: { address: string; dest: EvmChain }[] = [];
      for (const dest of LIVE_EVM_CHAINS) {
        const { data } = await http.ok("POST", "/mint/wallets", 201, {
          token,
          body: { chain, destinationChain: dest },
        });
        list.push({ address: data.address, dest });
      }
      wallet.depositAddresses.set(chain, list);
      // The last wallet has no configuration for two chains: its transfers of those uAssets must be held.
      if (w === count - 1 && (chain === "doge" || chain === "zec")) continue;
      const destination = await destinationOf(world, outside, chain, w * NATIVE_CHAINS.length + i);
      const { data } = await http.ok("POST", "/burn/wallets", 201, {
        token,
        body: { destinationChain: chain, destinationAddress: destination, memo: chain === "xrp" ? `${7000 + w}` : "" },
      });
      transferAddress = String(data.uAssetTransferAddress).toLowerCase();
      wallet.burnConfigs.set(chain, destination);
    }
    wallets.push(wallet);
  }
  return { wallets, transferAddress };
}

// ---- the plan ----

/**
 * The operations, from the seed. A burn redeems only uAssets the service minted to that wallet on that chain from
 * deposits planned before it (at most half of what is left, so the native side always has more than is paid out,
 * fees included); with no room for a burn, a deposit is planned instead. Amounts are unique per chain (and per chain
 * and uAsset for burns), so each transaction on chain names its request. A deposit is a few times what one burn needs
 * at least (xrp: a burn is at least 25 XRP), and one in ten is below the chain's minimum (a failed order).
 */
export function planLive(random: () => number, wallets: LiveWallet[], operations: number): Op[] {
  const ops: Op[] = [];
  const used = new Set<string>();
  const unique = (prefix: string, amount: bigint) => {
    while (used.has(`${prefix}|${amount}`)) amount++;
    used.add(`${prefix}|${amount}`);
    return amount;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const below = (n: bigint) => n <= 0n ? 0n : BigInt(Math.floor(random() * Number(n)));
  const room = new Map<string, bigint>();
  for (let id = 0; id < operations; id++) {
    const w = wallets[Math.floor(random() * wallets.length)];
    // A burn where this wallet holds room for one (what planned deposits minted to it, less planned burns).
    const burnable = id < 2 || random() >= 0.45
      ? []
      : LIVE_EVM_CHAINS.flatMap((evm) =>
        NATIVE_CHAINS.filter((native) =>
          (room.get(`${w.address}|${evm}|${NATIVE[native].uAsset.symbol}`) ?? 0n) / 2n >=
            NATIVE[native].uAsset.minimumBurnAmount
        ).map((native) => ({ evm, native }))
      );
    if (burnable.length > 0) {
      const { evm, native } = pick(burnable);
      const asset = NATIVE[native].uAsset.symbol;
      const key = `${w.address}|${evm}|${asset}`;
      const available = room.get(key)!;
      const min = NATIVE[native].uAsset.minimumBurnAmount;
      // Below the minimum only from a configured wallet: from any other sender it is dust, only counted.
      const small = random() < 0.12 && w.burnConfigs.has(native);
      const amount = unique(`${evm}|${asset}`, small ? 1n + below(min - 1n) : min + below(available / 2n - min));
      room.set(key, available - amount);
      const destination = w.burnConfigs.get(native) ?? null;
      const expect = destination === null ? "held" : amount >= min ? "completed" : "failed";
      ops.push({
        kind: "burn",
        id,
        evm,
        wallet: w.address,
        native,
        asset,
        amount,
        expect,
        message: expect === "failed" ? "Amount below minimum burn" : null,
        destination,
      });
      continue;
    }
    // No margin is needed on doge and zec for the payouts' fees: each payout records what it pays in fee when it is
    // signed, and reconciliation counts those of final payouts as spent (docs/reconciliation.md).
    const chain = pick(NATIVE_CHAINS);
    const { address, dest } = pick(w.depositAddresses.get(chain)!);
    const min = NATIVE[chain].minimumDeposit;
    const dust = NATIVE[chain].dustDeposit;
    const perBurn = NATIVE[chain].uAsset.minimumBurnAmount / weiPerNativeUnit(chain);
    const unit = perBurn * 2n > min ? perBurn * 2n : min;
    const isBelow = random() < 0.1;
    const amount = unique(
      chain,
      isBelow ? dust + below(min - dust) : unit * BigInt(1 + Math.floor(random() * 3)) + below(unit),
    );
    const ok = amount >= min;
    if (ok) {
      const key = `${w.address}|${dest}|${NATIVE[chain].uAsset.symbol}`;
      room.set(key, (room.get(key) ?? 0n) + nativeToWei(chain, amount));
    }
    ops.push({
      kind: "deposit",
      id,
      chain,
      address,
      owner: w.address,
      dest,
      amount,
      expect: ok ? "completed" : "failed",
      message: ok ? null : "Insufficient deposit amount",
    });
  }
  return ops;
}

// ---- sending ----

/** A deposit made by an outsider on the native chain, as the chain names it. */
interface Injected {
  chain: NativeChain;
  hash: string;
  index: number;
  to: string;
  amount: bigint;
}

class LiveSender {
  readonly injected: Injected[] = [];
  /** An outsider paying sol deposits (the server funds a fee payer as needed). */
  readonly #solPayer = Signer.fromMnemonic(OUTSIDE_MNEMONIC).address("sol", 999);
  /** Queues of work that must not overlap (`#serial`). */
  readonly #lanes = new Map<string, Promise<unknown>>();
  #stopped = false;

  constructor(
    private readonly world: LiveWorld,
    private readonly wallets: Map<string, LiveWallet>,
    private readonly transferAddress: string,
    private readonly balanceWaitMs: number,
  ) {}

  stop() {
    this.#stopped = true;
  }

  async send(op: Op): Promise<Outcome> {
    try {
      if (op.kind === "deposit") {
        return { state: "accepted", txHash: await this.#deposit(op.chain, op.address, op.amount) };
      }
      return await this.#burn(op);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      return err instanceof Lost ? { state: "lost", detail } : { state: "refused", detail };
    }
  }

  async #deposit(chain: NativeChain, to: string, amount: bigint): Promise<string> {
    const w = this.world;
    let hash: string;
    let index = 0;
    switch (chain) {
      case "sol":
        // Index 1: the server lists the fee payer first, then the one credited account.
        hash = w.sol.inject({ payer: this.#solPayer, credits: [{ to, lamports: amount }] });
        index = 1;
        break;
      case "xrp":
        hash = w.xrp.hooks.fund(to, amount);
        break;
      case "sui":
        // Index 1: the sender's change comes first in the balance changes, then the recipient's.
        hash = w.sui.deposit(to, amount);
        index = 1;
        break;
      case "zec": {
        const out = w.zec.deposit(to, amount);
        hash = out.txid;
        index = out.index;
        break;
      }
      case "doge":
        // An RPC call can fail after the node acted on it: then the request is lost (it may have happened). The
        // checks read every payment of the node's wallet to our addresses (`liveFacts`), not this list.
        try {
          return await w.doge.send(to, amount);
        } catch (err) {
          throw new Lost(err instanceof Error ? err.message : String(err));
        }
    }
    this.injected.push({ chain, hash, index, to, amount });
    return hash;
  }

  async #burn(op: Extract<Op, { kind: "burn" }>): Promise<Outcome> {
    const e = this.world.evm.find((x) => x.chain === op.evm)!;
    const wallet = this.wallets.get(op.wallet)!;
    const token = e.uAssets[op.asset];
    const balance = () =>
      e.client.readContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "balanceOf",
        args: [op.wallet as Address],
      });
    // The partner burns what the service minted to it: wait until the deposits planned before have been minted. One
    // burn of a wallet's uAsset on a chain at a time (waits and sends), so two never count the same balance.
    const burn = async (): Promise<Outcome> => {
      const deadline = Date.now() + this.balanceWaitMs;
      while ((await balance()) < op.amount) {
        if (this.#stopped || Date.now() > deadline) {
          return {
            state: "refused",
            detail: `not sent: ${op.wallet} never held ${op.amount} ${op.asset} on ${op.evm}`,
          };
        }
        await sleep(100);
      }
      const hash = await this.#serial(`${op.wallet}|${op.evm}`, async () => {
        const client = createWalletClient({
          account: privateKeyToAccount(wallet.key),
          chain: evmChainOf(e.anvil.url),
          transport: http(e.anvil.url),
        });
        const hash = await client.writeContract({
          address: token,
          abi: UASSET_ABI,
          functionName: "transfer",
          args: [this.transferAddress as Address, op.amount],
        });
        const receipt = await e.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
        if (receipt.status !== "success") throw new Error(`burn transfer ${hash} reverted`);
        return hash;
      });
      return { state: "accepted", txHash: hash.toLowerCase() };
    };
    return await this.#serial(`${op.wallet}|${op.evm}|${op.asset}`, burn);
  }

  /** Runs `work` after everything queued on `lane` before it (one account's nonces, one balance). */
  #serial<T>(lane: string, work: () => Promise<T>): Promise<T> {
    const run = (this.#lanes.get(lane) ?? Promise.resolve()).catch(() => {}).then(work);
    this.#lanes.set(lane, run);
    return run;
  }
}

/** A request whose answer was lost: it may or may not have happened. */
class Lost extends Error {}

// ---- the chains' facts, for the checks ----

/**
 * What `verify` reads from the live chains: each deposit the run made (as landed, or not), every payment to a burn
 * destination (each named by the burn order that recorded it, or by nobody), and on each anvil the Minted events,
 * uAsset transfers to the transfer address and its burns, read from the logs from the deployment block on.
 */
export function liveFacts(
  world: LiveWorld,
  env: Record<string, string>,
  transferAddress: string,
  injected: Injected[],
  destinations: Map<NativeChain, Set<string>>,
): (kv: Deno.Kv) => ChainFacts {
  return (kv) => {
    let payoutOwners: Promise<Map<string, { orderId: string; recorded: string }>> | null = null;
    /** Every payout transaction a burn order recorded (its intent, its dead intents): lower-case hash -> order. */
    const owners = () =>
      payoutOwners ??= (async () => {
        const map = new Map<string, { orderId: string; recorded: string }>();
        for await (const e of kv.list<Order>({ prefix: ["order"] })) {
          const o = e.value;
          if (o.type !== "burn") continue;
          const hashes = [
            o.transactionHash,
            o.details.intent?.txHash,
            ...(o.details.deadIntents ?? []).map((d) => d.txHash),
          ];
          for (const h of hashes) if (h) map.set(h.toLowerCase(), { orderId: o.id, recorded: h });
        }
        return map;
      })();
    const payout = async (chain: NativeChain, hash: string, to: string, amount: bigint): Promise<LedgerTx> => {
      const owner = (await owners()).get(hash.toLowerCase());
      return {
        // The order's own spelling of the hash (xrp hashes are hex of either case), so the comparison is exact.
        hash: owner?.recorded ?? hash,
        tx: {
          kind: "payout",
          from: "",
          to,
          amount,
          memo: null,
          orderId: owner?.orderId ?? `(no burn order recorded ${chain} transaction ${hash})`,
          nonce: "",
        },
        success: true,
        reason: null,
        status: "included",
        submittedAt: Number.NaN,
      };
    };
    const deposit = (t: Injected, landed: boolean): LedgerTx => ({
      hash: t.hash,
      index: t.index,
      tx: { kind: "transfer", from: "", to: t.to, amount: t.amount, memo: null, nonce: "" },
      success: true,
      reason: null,
      status: landed ? "included" : "pending",
      submittedAt: Number.NaN,
    });

    /**
     * Every payment litecoind's wallet made to one of our doge deposit addresses (the run's only depositor there),
     * exact from the raw transaction (`amount` in the wallet's answer is a float), mined or not.
     */
    const dogeDeposits = async (): Promise<LedgerTx[]> => {
      const ours = new Set((await listDepositAddresses(kv, "doge")).keys());
      const sent = await world.doge.call<
        { category: string; address?: string; txid: string; vout: number; confirmations: number }[]
      >("listtransactions", ["*", 1_000_000, 0, true]);
      const out: LedgerTx[] = [];
      for (const e of sent) {
        if (e.category !== "send" || !e.address || !ours.has(e.address)) continue;
        const tx = Transaction.fromHex(await world.doge.call<string>("getrawtransaction", [e.txid, false]));
        const amount = BigInt(tx.outs[e.vout].value);
        out.push(deposit({ chain: "doge", hash: e.txid, index: e.vout, to: e.address, amount }, e.confirmations > 0));
      }
      return out;
    };
    const nativeTxs = async (chain: NativeChain): Promise<LedgerTx[]> => {
      const out: LedgerTx[] = [];
      const w = world;
      if (chain === "doge") out.push(...await dogeDeposits());
      for (const t of injected.filter((x) => x.chain === chain)) {
        let landed: boolean;
        switch (chain) {
          case "sol":
            landed = w.sol.landedAt(t.hash) !== null;
            break;
          case "xrp": {
            const at = w.xrp.hooks.ledgerOf(t.hash);
            landed = at !== null && at <= w.xrp.hooks.validatedIndex;
            break;
          }
          case "sui":
            landed = w.sui.included(t.hash);
            break;
          case "zec":
            landed = w.zec.blockOf(t.hash) !== null;
            break;
          case "doge":
            continue; // read from the node's wallet above
        }
        out.push(deposit(t, landed));
      }
      for (const dest of destinations.get(chain) ?? []) {
        switch (chain) {
          case "sol":
            for (const p of w.sol.paymentsTo(dest)) out.push(await payout(chain, p.signature, dest, p.lamports));
            break;
          case "xrp":
            for (const t of w.xrp.hooks.transactions()) {
              if (t.tx.TransactionType !== "Payment" || t.tx.Destination !== dest) continue;
              if (t.meta.TransactionResult !== "tesSUCCESS" || t.ledgerIndex > w.xrp.hooks.validatedIndex) continue;
              out.push(await payout(chain, t.hash, dest, BigInt(String(t.meta.delivered_amount))));
            }
            break;
          case "sui":
            for (const p of w.sui.paymentsTo(dest)) out.push(await payout(chain, p.digest, dest, p.amount));
            break;
          case "zec": {
            const script = toHexString(outputScript(ZEC_REGTEST, dest));
            for (const b of w.zec.blocks) {
              for (const t of b.txs) {
                for (const o of t.tx.outputs) {
                  if (toHexString(o.script) === script) out.push(await payout(chain, t.txid, dest, o.value));
                }
              }
            }
            break;
          }
          case "doge": {
            // Mined transactions only (minconf 1): one still in the mempool is not paid yet.
            const received = await w.doge.call<{ txids: string[] }[]>("listreceivedbyaddress", [1, false, true, dest]);
            const script = outputScript(DOGE_REGTEST, dest);
            for (const txid of received.flatMap((r) => r.txids)) {
              const tx = Transaction.fromHex(await w.doge.call<string>("getrawtransaction", [txid, false]));
              for (const o of tx.outs) {
                if (toHexString(o.script) === toHexString(script)) {
                  out.push(await payout(chain, txid, dest, BigInt(o.value)));
                }
              }
            }
            break;
          }
        }
      }
      return out;
    };

    const evmTxs = async (chain: EvmChain): Promise<LedgerTx[]> => {
      const e = world.evm.find((x) => x.chain === chain);
      if (!e) return [];
      const batchOfTx = new Map<string, string>();
      for (const b of await listBurnBatches(kv, chain, 10_000)) {
        for (const a of b.attempts) batchOfTx.set(a.txHash.toLowerCase(), b.id);
        if (b.burnedTxHash) batchOfTx.set(b.burnedTxHash.toLowerCase(), b.id);
      }
      const out: LedgerTx[] = [];
      const tx = (hash: string, body: LedgerTx["tx"]): LedgerTx => ({
        hash: hash.toLowerCase(),
        tx: body,
        success: true,
        reason: null,
        status: "included",
        submittedAt: Number.NaN,
      });
      for (const asset of UASSETS) {
        const address = e.uAssets[asset];
        const minted = await e.client.getLogs({ address, event: MINTED, fromBlock: e.deployedAt, toBlock: "latest" });
        for (const l of minted) {
          out.push(tx(l.transactionHash!, {
            kind: "mint",
            to: l.args.to!.toLowerCase(),
            asset,
            amount: l.args.amount!,
            depositId: l.args.depositId!.toLowerCase(),
            nonce: "",
          }));
        }
        const transfers = await e.client.getLogs({
          address,
          event: TRANSFER,
          fromBlock: e.deployedAt,
          toBlock: "latest",
        });
        for (const l of transfers) {
          const from = l.args.from!.toLowerCase();
          const to = l.args.to!.toLowerCase();
          if (to === transferAddress) {
            out.push(tx(l.transactionHash!, { kind: "erc20", from, to, asset, amount: l.args.value!, nonce: "" }));
          } else if (from === transferAddress && to === ZERO) {
            const batchId = batchOfTx.get(l.transactionHash!.toLowerCase()) ?? `(no batch: ${l.transactionHash})`;
            out.push(tx(l.transactionHash!, { kind: "burn", from, asset, amount: l.args.value!, batchId, nonce: "" }));
          }
        }
      }
      return out;
    };

    return {
      nativeChains: NATIVE_CHAINS,
      evmChains: LIVE_EVM_CHAINS,
      txs: (chain: ChainSymbol) =>
        (NATIVE_CHAINS as readonly string[]).includes(chain)
          ? nativeTxs(chain as NativeChain)
          : evmTxs(chain as EvmChain),
      pending: async () => {
        let n = world.zec.mempool.size + (await world.doge.call<string[]>("getrawmempool")).length;
        for (const e of world.evm) {
          const pool = await anvilRpc<{ pending: Record<string, Record<string, unknown>> }>(
            e.anvil.url,
            "txpool_content",
          );
          for (const byNonce of Object.values(pool.pending)) n += Object.keys(byNonce).length;
        }
        return n;
      },
      mintedBy: async (chain, depositId) => {
        const e = world.evm.find((x) => x.chain === chain)!;
        const logs = await Promise.all(UASSETS.map((asset) =>
          e.client.getLogs({
            address: e.uAssets[asset],
            event: MINTED,
            args: { depositId: depositId as Hex },
            fromBlock: e.deployedAt,
            toBlock: "latest",
          })
        ));
        const all = logs.flat();
        return all.length === 1
          ? all[0].transactionHash!.toLowerCase()
          : all.length === 0
          ? null
          : `${all.length} mints`;
      },
      supply: async () => {
        const supply = new Map<UAsset, bigint>();
        const atTransfer = new Map<UAsset, bigint>();
        for (const e of world.evm) {
          for (const asset of UASSETS) {
            const read = (functionName: "totalSupply" | "balanceOf", args?: [Address]) =>
              e.client.readContract(
                { address: e.uAssets[asset], abi: UASSET_ABI, functionName, args } as never,
              ) as Promise<
                bigint
              >;
            supply.set(asset, (supply.get(asset) ?? 0n) + await read("totalSupply"));
            atTransfer.set(
              asset,
              (atTransfer.get(asset) ?? 0n) + await read("balanceOf", [transferAddress as Address]),
            );
          }
        }
        return { supply, atTransfer };
      },
      reconcile: () => reconcileLive(env, transferAddress),
    };
  };
}

function toHexString(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * The reconciliation as an operator runs it on this deployment: the service's own adapters, built from the same
 * environment as the server (app.ts `buildServices`: the nodes are asked who they are again), over the KV file.
 */
async function reconcileLive(env: Record<string, string>, transferAddress: string) {
  const saved = { log: console.log, warn: console.warn };
  // Its start-up lines (the plan, the hot wallets, the transfer address) were printed by every server start.
  console.log = console.warn = () => {};
  let services;
  try {
    services = await buildServices(loadConfig(env));
  } finally {
    Object.assign(console, saved);
  }
  try {
    return await runReconciliation({
      kv: services.kv,
      chains: services.pipeline!.chains,
      transferAddress,
      enabledChains: services.chainPlan.enabled,
      now: () => new Date(),
    });
  } finally {
    services.kv.close();
  }
}

// ---- the run ----

export async function runLiveChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const began = performance.now();
  const random = seededRandom(options.seed);
  const dir = await Deno.makeTempDir({ prefix: "issuance-chaos-live-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const client = Deno.createHttpClient({});
  const problems: string[] = [];
  let world: LiveWorld | null = null;
  let server: ServerProcess | null = null;
  let sender: LiveSender | null = null;
  let trafficKills = 0;
  let drainKills = 0;
  const requestsAtKills: number[] = [];
  const ordersAtKills: number[] = [];
  try {
    log(`chaos live: seed ${options.seed}, ${options.operations} operations, folder ${dir}`);
    for (const line of LIVE_LEFT_OUT) log(`chaos live: left out: ${line}`);
    world = await startLiveWorld(dir, options.blockMs);
    const env = { ...world.env, KV_PATH: kvPath, SWEEP_MS: String(options.sweepMs) };
    server = new ServerProcess(dir, env, client);
    const http = new Http(server, client);
    await server.start();
    const { wallets, transferAddress } = await setUpLive(world, http, kvPath, random, options.wallets);
    // The operator funds what pays for itself: the transfer address's gas (burns), the hot wallets (payouts go out
    // before sweeps catch up, and payout fees come out of this surplus).
    const signer = Signer.fromMnemonic(TEST_MNEMONIC);
    for (const e of world.evm) {
      await anvilRpc(e.anvil.url, "anvil_setBalance", [transferAddress, toHex(10n ** 20n)]);
    }
    world.sol.fund(signer.address("sol", 0, "hot"), 10_000n * 10n ** 9n);
    world.xrp.hooks.fund(signer.address("xrp", 0, "hot"), 1_000_000n * 10n ** 6n);
    world.sui.deposit(signer.address("sui", 0, "hot"), 10_000n * 10n ** 9n);

    const ops = planLive(random, wallets, options.operations);
    const destinations = new Map<NativeChain, Set<string>>();
    for (const w of wallets) {
      for (const [chain, dest] of w.burnConfigs) {
        destinations.set(chain, (destinations.get(chain) ?? new Set()).add(dest));
      }
    }
    sender = new LiveSender(
      world,
      new Map(wallets.map((w) => [w.address, w])),
      transferAddress,
      options.drainTimeoutMs,
    );
    const live = sender;
    log(
      `chaos live: set up ${wallets.length} wallets; sending ${ops.length} operations with ${options.trafficKills} kills`,
    );

    const outcomes = await sendWithInterruptions(http, server, ops, options, random, {
      count: options.trafficKills,
      spread: [0.2, 0.6],
      maxDelayMs: 300,
      interrupt: async (inFlight) => {
        requestsAtKills.push(inFlight);
        await server!.killAndRestart();
        trafficKills++;
      },
    }, { send: (op) => live.send(op), waitForServer: false });

    for (let j = 0; j < options.drainKills; j++) {
      await sleep(300 + random() * 700);
      const open = (await countOrders(http, wallets)).open;
      if (open === 0) break;
      ordersAtKills.push(open);
      await server.killAndRestart();
      drainKills++;
    }
    outcomes.forEach((o, i) => {
      if (o.state !== "accepted") log(`chaos live: request ${i} (${ops[i].kind}) ${o.state}: ${o.detail}`);
    });
    const expectedAtLeast = ops.filter((op, i) => outcomes[i].state === "accepted" && op.expect !== "held").length;
    log(`chaos live: sent; ${trafficKills + drainKills} kills; draining`);
    await drain(http, server, wallets, expectedAtLeast, options, problems);
    await settleBurns(kvPath, options, problems);
    await server.stop();
    // The last blocks bury what the drain saw final; then the chains hold still for the checks.
    await sleep(options.blockMs * 5);
    await world.stopBlocks();

    const result = await verify(
      kvPath,
      ops,
      outcomes,
      transferAddress,
      problems,
      liveFacts(world, env, transferAddress, sender.injected, destinations),
    );
    result.errorsLogged = await errorsLogged(server.logs);
    problems.push(...server.unexpectedExits);
    return {
      ...result,
      mode: "live",
      options,
      dir,
      seconds: (performance.now() - began) / 1000,
      kills: trafficKills + drainKills,
      trafficKills,
      drainKills,
      requestsAtKills,
      ordersAtKills,
      starts: server.starts,
      unexpectedExits: server.unexpectedExits,
      problems,
    };
  } finally {
    sender?.stop();
    await server?.stop().catch(() => {});
    await world?.close();
    client.close();
    if (!options.keepDir && problems.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else log(`chaos live: kept ${dir} (KV file and server logs)`);
  }
}
