/**
 * The sim-mode `Chains`: readers, minters and payers over the embedded `SimLedger`s. Every call first rolls the
 * chain's `rpcErrorRate` and may throw `TransientChainError` without reaching the ledger, which is how the pipeline's
 * retries get exercised. Prepared transactions carry a random nonce, so preparing the same request twice gives two
 * different transactions: exactly the hazard write-ahead recording (docs/architecture.md invariant 2) exists for.
 *
 * Payouts on sol, xrp, sui and zec carry the expiry their live chain would set (ledger.ts `SIM_PAYOUT_EXPIRY`), and
 * the reader proves an expired one dead. On doge and zec a payout request naming coins is a UTXO-mode payout
 * (chains/sim/utxo.ts): it spends those outputs, pays the destination and returns change to the operator address,
 * and the ledger refuses it if an input is missing or spent or the fee too low; the coins are consumed and reserved.
 * A payout without coins keeps debiting the hot wallet's account-style balance. On the account chains (sol, xrp, sui)
 * the hot wallet is finite when the process sets a small genesis: a payout it cannot fund is refused (`checkPayout`
 * says so first), sweeps of deposit addresses fund it (`prepareSweep`, its balance less the catalog's reserve), and
 * `checkPayout` refuses a payout too small to create its destination account. The sim charges no fee on account
 * chains. Finality is depth for every sim chain: `included.final` is left unset.
 */
import {
  type AccountPayer,
  type ChainReader,
  type Chains,
  type ChainSender,
  type EvmMinter,
  type ObservedTransfer,
  type Outpoint,
  outpointsOf,
  type PayerOf,
  type PayoutCheck,
  type PayoutCoin,
  type PayoutRequest,
  type PreparedTx,
  type ScannedBlock,
  TransientChainError,
  type UAssetSender,
  type UtxoPayer,
} from "../adapter.ts";
import { UAssetBalanceShortError } from "../uasset_errors.ts";
import {
  type ChainSymbol,
  type EvmChain,
  isAccountChain,
  isEvmChain,
  isNativeChain,
  isUtxoChain,
  NATIVE,
  type NativeChain,
  payerFamily,
  type UAsset,
  type UtxoChain,
} from "../catalog.ts";
import { payoutChange } from "../shared/utxo_fee.ts";
import { CHANGE_INDEX } from "./utxo.ts";
import { simUAssetView } from "./uasset_view.ts";
import { SimLedger, simNonce, simPayoutExpiry, simTxHash } from "./ledger.ts";
import { encodeSimTx, parseSimTx, type SimTx } from "./tx.ts";

export interface SimChainsOptions {
  /** Drives injected RPC errors, nonces and block salts; inject for reproducible tests. */
  random?: () => number;
  /** The operator hot wallet payouts are sent from; funded by the ledger at its first payout. */
  operatorAddress?: (chain: NativeChain) => string;
  /** The clock of stalls (`stalledUntil`) and of the pending set's order. */
  now?: () => number;
  /** What a hot wallet is credited at its first payout (ledger.ts `HOT_WALLET_GENESIS` when unset; 0: finite). */
  hotWalletGenesis?: bigint;
  /**
   * The shared transfer address, when its key is ours: `uAssetSender` signs burns and refunds from it (the sim checks
   * no signature). Unset: `uAssetSender` is absent.
   */
  transferAddress?: string;
}

/**
 * The inputs and change of a UTXO-mode payout of `amount` spending `coins` (read from the ledger, as a live adapter
 * reads them from its node or the treasury), change to `changeAddress` by the fee rule coin selection used.
 */
async function utxoSpend(l: SimLedger, chain: UtxoChain, coins: Outpoint[], amount: bigint, changeAddress: string) {
  const inputs = [];
  for (const o of coins) {
    const out = await l.unspentOutput(o);
    // The treasury's view lags the chain by a commit (a coin listed just before the commit that spent it): a
    // later step selects again. A coin that stays wrong raises the persistent-errors alert.
    if (!out) throw new TransientChainError(`sim ${chain}: coin ${o.txHash}:${o.index} is not an unspent output`);
    inputs.push({ txHash: o.txHash, index: o.index, ...out });
  }
  const total = inputs.reduce((sum, i) => sum + i.amount, 0n);
  const outputs = payoutChange(chain, inputs.length, total, amount);
  if (!outputs) throw new Error(`sim ${chain}: coins worth ${total} cannot pay ${amount} and the fee`);
  const change = outputs.change === null ? null : { address: changeAddress, amount: outputs.change };
  return { inputs, change, fee: total - amount - (outputs.change ?? 0n) };
}

/**
 * UTXO chains: a transaction has inputs, not a sender, so a live reader's scan leaves `from` empty (the watcher asks
 * `senderOf` for the transfers that pay us). The sim reader does the same, so the pipeline is tested as it runs live.
 */
function withoutSenders(chain: ChainSymbol, blocks: ScannedBlock[]): ScannedBlock[] {
  if (!isUtxoChain(chain)) return blocks;
  return blocks.map((b) => ({ ...b, transfers: b.transfers.map(withoutSender) }));
}

function withoutSender(t: ObservedTransfer): ObservedTransfer {
  return { ...t, from: "" };
}

/** `Chains` plus direct access to each ledger, for the block producer, the sim routes and tests. */
export interface SimChains extends Chains {
  ledger(chain: ChainSymbol): SimLedger;
}

/** The sim's transfer-address sender of one EVM chain: `burn` and `erc20` transactions from it, refused when short. */
function simUAssetSender(
  l: SimLedger,
  chain: EvmChain,
  address: string,
  base: ChainSender,
  rpc: <T>(l: SimLedger, what: string, call: () => T | Promise<T>) => Promise<T>,
  prepare: (chain: ChainSymbol, tx: SimTx) => PreparedTx,
  random: () => number,
): UAssetSender {
  const requireBalance = async (asset: UAsset, amount: bigint) => {
    if (amount <= 0n) throw new RangeError(`sim ${chain}: the amount of ${asset} must be positive, got ${amount}`);
    const balance = await l.balance(address, asset);
    if (balance < amount) throw new UAssetBalanceShortError(chain, asset, balance, amount);
  };
  return {
    ...base,
    address,
    prepareBurn: (req) =>
      rpc(l, "prepareBurn", async () => {
        await requireBalance(req.asset, req.amount);
        const tx: SimTx = {
          kind: "burn",
          from: address,
          asset: req.asset,
          amount: req.amount,
          batchId: req.batchId,
          nonce: simNonce(random),
        };
        return prepare(chain, tx);
      }),
    prepareTransfer: (req) =>
      rpc(l, "prepareTransfer", async () => {
        await requireBalance(req.asset, req.amount);
        const tx: SimTx = {
          kind: "erc20",
          from: address,
          to: req.to,
          asset: req.asset,
          amount: req.amount,
          nonce: simNonce(random),
        };
        return prepare(chain, tx);
      }),
  };
}

/** Used when no operator address is configured: sim does not check native address formats. */
export function defaultSimOperatorAddress(chain: NativeChain): string {
  return `sim-${chain}-hot-wallet`;
}

/**
 * The sim hot wallet at derivation index `index` (docs/operations.md "Rotating a hot wallet"): the operator address at
 * 0, as before rotations existed, and a name of its own for every later index.
 */
export function simHotWallet(operatorAddress: string, index: number): string {
  return index === 0 ? operatorAddress : `${operatorAddress}-${index}`;
}

export function simChains(kv: Deno.Kv, opts: SimChainsOptions = {}): SimChains {
  const random = opts.random ?? Math.random;
  const operatorAddress = opts.operatorAddress ?? defaultSimOperatorAddress;
  const ledgers = new Map<ChainSymbol, SimLedger>();
  const ledger = (chain: ChainSymbol): SimLedger => {
    let l = ledgers.get(chain);
    if (!l) {
      ledgers.set(
        chain,
        l = new SimLedger(kv, chain, { random, now: opts.now, hotWalletGenesis: opts.hotWalletGenesis }),
      );
    }
    return l;
  };

  /** Runs `call` unless the roll against the chain's `rpcErrorRate` says the RPC failed. */
  async function rpc<T>(l: SimLedger, what: string, call: () => T | Promise<T>): Promise<T> {
    const { rpcErrorRate } = await l.getFaults();
    if (rpcErrorRate > 0 && random() < rpcErrorRate) {
      throw new TransientChainError(`sim ${l.chain}: injected RPC error in ${what}`);
    }
    return await call();
  }

  /** Validates like the ledger will, and hashes without submitting. */
  function prepare(chain: ChainSymbol, tx: SimTx): PreparedTx {
    const raw = encodeSimTx(tx);
    parseSimTx(chain, raw);
    return { txHash: simTxHash(chain, raw), raw };
  }

  /** The hot wallet's funds less its reserve cover the amount; a new destination gets at least the reserve. */
  async function checkPayout(
    l: SimLedger,
    chain: NativeChain,
    req: PayoutRequest,
    hotWallet: string,
  ): Promise<PayoutCheck> {
    const reserve = NATIVE[chain].reserve;
    if (req.amount < reserve && (await l.balance(req.to, "native")) === 0n) {
      return {
        ok: false,
        reason: "destination_below_reserve",
        detail: `${req.to} does not exist on ${chain} and ${req.amount} is below the ${reserve} reserve`,
      };
    }
    const payable = await l.payable(hotWallet);
    if (payable < req.amount) {
      return { ok: false, reason: "unfunded", detail: `hot wallet cannot fund this payout yet (${chain})` };
    }
    return { ok: true, spendable: payable, fee: 0n };
  }

  function sender(l: SimLedger): ChainSender {
    return {
      chain: l.chain,
      broadcast: (tx: PreparedTx) =>
        rpc(l, "broadcast", async () => {
          const { txHash } = await l.submitRaw(tx.raw);
          if (txHash !== tx.txHash) {
            throw new Error(`sim ${l.chain}: broadcast hash ${txHash} differs from prepared ${tx.txHash}`);
          }
        }),
    };
  }

  return {
    ledger,

    reader(chain: ChainSymbol): ChainReader {
      const l = ledger(chain);
      return {
        chain,
        finality: { kind: "depth" },
        tip: () => rpc(l, "tip", () => l.head()),
        blockHash: (n) => rpc(l, "blockHash", () => l.blockHash(n)),
        scan: (from, to) => rpc(l, "scan", async () => withoutSenders(chain, await l.blocks(from, to))),
        txStatus: (hash, ours) => rpc(l, "txStatus", () => l.txStatus(hash, ours)),
        transfersOf: (hash) =>
          rpc(l, "transfersOf", async () => {
            const transfers = await l.txTransfers(hash);
            return transfers && isUtxoChain(chain) ? transfers.map(withoutSender) : transfers;
          }),
        // As a live UTXO reader: a scan leaves `from` empty, and the sender is asked for, transaction by transaction.
        ...(isUtxoChain(chain)
          ? {
            senderOf: (hash: string) => rpc(l, "senderOf", () => l.senderOf(hash)),
            unspent: (_address: string, outpoints: readonly Outpoint[]) =>
              rpc(l, "unspent", async () => {
                const out: boolean[] = [];
                for (const o of outpoints) out.push((await l.unspentOutput(o)) !== null);
                return out;
              }),
          }
          : {}),
        ...(isNativeChain(chain) && isAccountChain(chain)
          ? { balance: (address: string) => rpc(l, "balance", () => l.balance(address, "native")) }
          : {}),
      };
    },

    uAssetView(chain: EvmChain) {
      if (!isEvmChain(chain)) throw new Error(`${chain} is not an EVM chain: it has no uAssets`);
      return simUAssetView(ledger(chain), random);
    },

    minter(chain: EvmChain): EvmMinter {
      if (!isEvmChain(chain)) throw new Error(`${chain} is not an EVM chain: it has no uAsset minter`);
      const l = ledger(chain);
      return {
        ...sender(l),
        prepareMint: (req) =>
          rpc(l, "prepareMint", () =>
            prepare(chain, {
              kind: "mint",
              to: req.to,
              asset: req.asset,
              amount: req.amountWei,
              depositId: req.depositId,
              nonce: simNonce(random),
            })),
        mintedBy: (depositId) => rpc(l, "mintedBy", () => l.mintedBy(depositId)),
      };
    },

    ...(opts.transferAddress
      ? {
        uAssetSender(chain: EvmChain): UAssetSender {
          if (!isEvmChain(chain)) throw new Error(`${chain} is not an EVM chain: it has no uAsset sender`);
          const l = ledger(chain);
          return simUAssetSender(l, chain, opts.transferAddress!, sender(l), rpc, prepare, random);
        },
      }
      : {}),

    payer<C extends NativeChain>(chain: C): PayerOf<C> {
      if (!isNativeChain(chain)) throw new Error(`${chain} is not a native chain: it has no payer`);
      const l = ledger(chain);
      /**
       * One ledger serves both families. Coins given are spent (a UTXO payout or consolidation); a payout without
       * coins (a sim doge/zec payout asked with `coins: []`, which only tests do: the pipeline always funds UTXO
       * payouts from treasury coins) keeps the account-style hot-wallet balance (docs/simulated-chains.md).
       */
      const preparePayout = (
        req: PayoutRequest & { coins?: PayoutCoin[] },
        from = operatorAddress(chain),
        changeIndex = 0,
      ) =>
        rpc(l, "preparePayout", async () => {
          const expiry = simPayoutExpiry(chain, (await l.head()).number);
          const utxo = isUtxoChain(chain) && req.coins && req.coins.length > 0
            ? await utxoSpend(l, chain, req.coins, req.amount, from)
            : null;
          const tx = prepare(chain, {
            kind: "payout",
            from,
            to: req.to,
            amount: req.amount,
            memo: req.memo,
            orderId: req.orderId,
            nonce: simNonce(random),
            expiry: expiry ?? null,
            ...(utxo ? { inputs: utxo.inputs, change: utxo.change } : {}),
          });
          if (expiry) tx.expiry = expiry;
          if (req.coins && req.coins.length > 0) {
            const outpoints = outpointsOf(req.coins);
            tx.consumes = { kind: "outpoints", outpoints };
            tx.reservations = [{ kind: "coins", chain, outpoints }];
          }
          if (utxo?.change) {
            tx.change = {
              index: CHANGE_INDEX,
              ...utxo.change,
              ...(changeIndex === 0 ? {} : { derivationIndex: changeIndex }),
            };
          }
          if (utxo) tx.fee = utxo.fee;
          return tx;
        });
      // UTXO chains: payouts send their change, and consolidations merge coins, to the operator address (after a
      // change rotation, its name at that index: `simHotWallet`).
      const utxoPayer = (changeIndex: number): UtxoPayer => ({
        ...sender(l),
        family: "utxo",
        changeAddress: simHotWallet(operatorAddress(chain), changeIndex),
        changeIndex,
        atChangeIndex: utxoPayer,
        preparePayout: (req) => preparePayout(req, simHotWallet(operatorAddress(chain), changeIndex), changeIndex),
      });
      const accountPayer = (hotIndex: number): AccountPayer => ({
        ...sender(l),
        family: "account",
        hotWallet: simHotWallet(operatorAddress(chain), hotIndex),
        hotIndex,
        atHotIndex: accountPayer,
        preparePayout: (req) => preparePayout(req, simHotWallet(operatorAddress(chain), hotIndex)),
        checkPayout: (req: PayoutRequest) =>
          rpc(l, "checkPayout", () => checkPayout(l, chain, req, simHotWallet(operatorAddress(chain), hotIndex))),
        prepareSweep: (req) =>
          rpc(l, "prepareSweep", async () => {
            const to = simHotWallet(operatorAddress(chain), hotIndex);
            if (req.from === to) throw new RangeError(`sim ${chain}: ${to} is the hot wallet itself`);
            const reserve = NATIVE[chain].reserve;
            const amount = req.amount ?? (await l.balance(req.from, "native")) - reserve;
            if (amount <= 0n) throw new RangeError(`sim ${chain}: nothing above the reserve to sweep`);
            const expiry = simPayoutExpiry(chain, (await l.head()).number);
            const tx = prepare(chain, {
              kind: "sweep",
              from: req.from,
              to,
              amount,
              sweepId: req.sweepId,
              nonce: simNonce(random),
              expiry: expiry ?? null,
            });
            if (expiry) tx.expiry = expiry;
            return tx;
          }),
      });
      return (payerFamily(chain) === "utxo" ? utxoPayer(0) : accountPayer(0)) as PayerOf<C>;
    },
  };
}
