/**
 * Which adapter serves each chain, as the chain plan (config/chain_mode.ts) says: a live EVM chain gets the viem
 * adapters, a live UTXO chain (doge, zec) the UTXO adapters on the plan's network, a live account chain (sol, xrp,
 * sui) its factory (`solAdapters`, `xrpAdapters`, `suiAdapters`), a simulated chain its embedded ledger, and a disabled chain an adapter whose every call throws `ChainDisabledError`. There is no fallback: a chain
 * that is not simulated is never served by a simulator.
 */
import type { LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  type AccountAdapterOptions,
  type AccountAdapters,
  ChainDisabledError,
  type ChainReader,
  type Chains,
  type EvmMinter,
  type NativePayer,
  payerFor,
  type RpcHook,
  type UAssetSender,
  type UAssetView,
} from "../chains/adapter.ts";
import { raiseAlert } from "../kv/alerts.ts";
import {
  type AccountChain,
  chainFamily,
  type ChainSymbol,
  EVM,
  type EvmChain,
  type NativeChain,
  type UAsset,
  type UtxoChain,
} from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { verifyingChains, type VerifyOptions } from "../chains/verify.ts";
import {
  type EvmChainAdapters,
  evmChainAdapters,
  type EvmDigestSigner,
  TRANSFER_ADDRESS_INDEX,
} from "../chains/evm/index.ts";
import { simChains } from "../chains/sim/adapters.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { Signer } from "../chains/signer.ts";
import { type UtxoAdapters, utxoAdapters } from "../chains/utxo/index.ts";
import type { UtxoSigningPort } from "../chains/utxo/tx.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { type EvmConfig, minterKeyOf } from "./evm.ts";
import type { ChainPlan } from "./chain_mode.ts";
import type { UtxoConfig } from "./utxo.ts";
import type { AccountConfig } from "./account.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { xrpAdapters } from "../chains/xrp/index.ts";
import { evmKvState } from "../kv/chain_state.ts";

export interface ChainSetup {
  chains: Chains;
  /** Chains served by an embedded simulated ledger (the sim block producer runs for these only). */
  simulated: ChainSymbol[];
}

/** What the live UTXO chains of the plan need: their configuration, the signer and the pipeline's own settings. */
export interface UtxoChainsOptions {
  config: UtxoConfig;
  /**
   * From the master mnemonic, on the plan's networks (`Signer.fromMnemonic(mnemonic, plan.utxoNetworks)`), or the
   * signer process's client (a keyless worker: chains/signer_client.ts).
   */
  signer: UtxoSigningPort;
  /** The pipeline settings' rules (actors/context.ts), so the adapters count and charge exactly as the actors do. */
  settings: { confirmations(chain: UtxoChain): number; utxoFee(chain: UtxoChain): FeeFunction };
}

export type AccountAdapterFactory = (opts: AccountAdapterOptions) => AccountAdapters;

/** The live account chains' factories (fixed signature, chains/adapter.ts `AccountAdapterOptions`). */
export const ACCOUNT_ADAPTER_FACTORIES: Readonly<Record<AccountChain, AccountAdapterFactory>> = {
  sol: solAdapters,
  xrp: xrpAdapters,
  sui: suiAdapters,
};

/** What the live account chains of the plan need: their configuration, the signer and the pipeline's confirmations. */
export interface AccountChainsOptions {
  config: AccountConfig;
  /**
   * From the master mnemonic (the same Signer the UTXO chains use): deposit keys for sweeps, hot-wallet keys; or the
   * signer process's client (chains/signer_client.ts) in a worker started with SIGNER_SOCKET.
   */
  signer: AccountAdapterOptions["signer"];
  settings: { confirmations(chain: AccountChain): number };
  /** Replaces a chain's factory (tests that check what the registry hands it). Unset: `ACCOUNT_ADAPTER_FACTORIES`. */
  factories?: Partial<Record<AccountChain, AccountAdapterFactory>>;
}

export async function buildChains(
  kv: Deno.Kv,
  plan: ChainPlan,
  evm: EvmConfig,
  transferAddress: string,
  simOpts: {
    hotWalletGenesis?: bigint;
    utxo?: UtxoChainsOptions;
    account?: AccountChainsOptions;
    /** Each live chain's RPC clients report calls and endpoint failures here (actors/metrics.ts). */
    rpcHook?: (chain: ChainSymbol) => RpcHook;
    /**
     * The master mnemonic's signer, for the transfer address's burns and refunds (`uAssetSender`). Used only when it
     * derives `transferAddress`; otherwise (BURN_TRANSFER_ADDRESS names another address) no `uAssetSender` is built and
     * one alert says redeemed uAssets are not burned. Unset: no `uAssetSender`, no alert.
     */
    transferSigner?: EvmDigestSigner;
    /**
     * The minter's account on each live EVM chain when this process holds no minter key: the signer process's
     * (chains/signer_client.ts `minterAccount`). Unset: the key from EVM_MINTER_KEY_FILE / EVM_MINTER_KEY.
     */
    minterAccount?: (chain: EvmChain) => LocalAccount;
  } = {},
): Promise<ChainSetup> {
  const transferSigner = await ownTransferSigner(kv, transferAddress, simOpts.transferSigner);
  const sim = simChains(kv, {
    hotWalletGenesis: simOpts.hotWalletGenesis,
    ...(transferSigner ? { transferAddress } : {}),
  });
  const utxo = utxoChainAdapters(plan, simOpts.utxo, simOpts.rpcHook);
  const account = accountChainAdapters(plan, simOpts.account, simOpts.rpcHook);
  const simulated = new Set(plan.simulated);
  const adapters = new Map<EvmChain, EvmChainAdapters>();
  const liveEvm = new Map<EvmChain, { minter: string; chainId: number; uAssets: Record<UAsset, string> }>();
  if (plan.live.length > 0) {
    const own = simOpts.minterAccount ? null : privateKeyToAccount(await minterKeyOf(evm));
    for (const chain of plan.live) {
      const account = own ?? simOpts.minterAccount!(chain);
      const c = evm.chains[chain]!;
      adapters.set(
        chain,
        await evmChainAdapters({
          chain,
          state: evmKvState(kv),
          urls: c.rpcUrls,
          account,
          uAssets: c.uAssets,
          transferAddress: transferAddress as `0x${string}`,
          minter: {
            replaceAfterMs: evm.feeBumpAfterMs,
            maxFeePerGasCap: c.maxFeePerGasWei,
            mintedLogsFromBlock: deployBlockOf(c),
          },
          chainId: plan.chainIdOverride,
          onRpc: simOpts.rpcHook?.(chain),
          transferSigner,
        }),
      );
      liveEvm.set(chain, {
        minter: account.address,
        chainId: plan.chainIdOverride ?? EVM[chain].chainId,
        uAssets: c.uAssets,
      });
    }
  }
  const chains: Chains = {
    reader: (c) =>
      adapters.get(c as EvmChain)?.reader ?? utxo.get(c as UtxoChain)?.reader ??
        account.get(c as AccountChain)?.reader ?? (simulated.has(c) ? sim.reader(c) : disabledReader(c)),
    minter: (c) => adapters.get(c)?.minter ?? (simulated.has(c) ? sim.minter(c) : disabledMinter(c)),
    payer: (c) =>
      payerFor(
        c,
        utxo.get(c as UtxoChain)?.payer ?? account.get(c as AccountChain)?.payer ??
          (simulated.has(c) ? sim.payer(c) : disabledPayer(c)),
      ),
    uAssetView: (c) => adapters.get(c)?.view ?? (simulated.has(c) ? sim.uAssetView!(c) : disabledView(c)),
  };
  if (transferSigner) {
    chains.uAssetSender = (c) =>
      adapters.get(c)?.uAssetSender ?? (simulated.has(c) ? sim.uAssetSender!(c) : disabledUAssetSender(c));
  }
  // Verify before record (chains/effects.ts): every prepared transaction is read back from its own bytes first.
  const verified = verifyingChains(chains, {
    explainer: explainerOf({
      simulated,
      liveEvm: new Set(liveEvm.keys()),
      liveUtxo: new Map(
        plan.liveUtxo.map((c) => [c, {
          network: utxoNetwork(c, plan.utxoNetworks[c]),
          fee: simOpts.utxo!.settings.utxoFee(c),
        }]),
      ),
      liveAccount: new Set(account.keys()),
    }),
    evm: evmFactsOf({ simulated, transferAddress, live: liveEvm }),
    onMismatch: alertOnMismatch(kv),
  });
  return { chains: verified, simulated: plan.simulated };
}

/** A refused transaction's `transaction_mismatch` alert: one per chain and purpose, counted when it repeats. */
export function alertOnMismatch(kv: Deno.Kv): VerifyOptions["onMismatch"] {
  return async (err, subject) => {
    await raiseAlert(kv, {
      kind: "transaction_mismatch",
      subject: `${err.intent.chain}:${subject}`,
      chain: err.intent.chain,
      message: err.message,
    });
  };
}

/**
 * `signer` when it derives the transfer address (its key is ours, so burns and refunds can be signed), else undefined;
 * a foreign transfer address (BURN_TRANSFER_ADDRESS) raises the `burn_disabled` alert.
 */
async function ownTransferSigner(
  kv: Deno.Kv,
  transferAddress: string,
  signer: EvmDigestSigner | undefined,
): Promise<EvmDigestSigner | undefined> {
  if (!signer) return undefined;
  const derived = signer.address("base", TRANSFER_ADDRESS_INDEX);
  if (derived.toLowerCase() === transferAddress.toLowerCase()) return signer;
  await raiseAlert(kv, {
    kind: "burn_disabled",
    subject: transferAddress.toLowerCase(),
    chain: null,
    message: `the transfer address ${transferAddress} (BURN_TRANSFER_ADDRESS) is not the master mnemonic's ` +
      `${derived}: its key is not ours, so redeemed uAssets are not burned on chain and held uAssets cannot be ` +
      "refunded; totalSupply overstates what is owed by what burn orders redeemed",
  });
  return undefined;
}

function disabledUAssetSender(chain: EvmChain): UAssetSender {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return { chain, address: "", broadcast: refuse, nudge: refuse, prepareBurn: refuse, prepareTransfer: refuse };
}

/** The live UTXO chains' adapters: one RPC client over the chain's URLs each, on the plan's network. */
function utxoChainAdapters(
  plan: ChainPlan,
  opts: UtxoChainsOptions | undefined,
  rpcHook?: (chain: ChainSymbol) => RpcHook,
): Map<UtxoChain, UtxoAdapters> {
  const built = new Map<UtxoChain, UtxoAdapters>();
  if (plan.liveUtxo.length === 0) return built;
  if (!opts) {
    throw new Error(
      `live UTXO chains (${plan.liveUtxo.join(", ")}) need their configuration and a signer: this caller gave none`,
    );
  }
  for (const chain of plan.liveUtxo) {
    const c = opts.config.chains[chain];
    if (!c) throw new Error(`${chain} is live in the chain plan but ${chain.toUpperCase()}_RPC_URLS is not set`);
    built.set(
      chain,
      utxoAdapters({
        chain,
        network: utxoNetwork(chain, plan.utxoNetworks[chain]),
        rpc: utxoRpc({ chain, urls: c.rpcUrls, timeoutMs: c.rpcTimeoutMs, onRpc: rpcHook?.(chain) }),
        signer: opts.signer,
        settings: {
          confirmations: opts.settings.confirmations(chain),
          fee: opts.settings.utxoFee(chain),
          expiryWindow: opts.config.zecExpiryWindow,
        },
      }),
    );
  }
  return built;
}

/** The live account chains' adapters: each factory called once, with its URLs, timeout, signer and confirmations. */
function accountChainAdapters(
  plan: ChainPlan,
  opts: AccountChainsOptions | undefined,
  rpcHook?: (chain: ChainSymbol) => RpcHook,
): Map<AccountChain, AccountAdapters> {
  const built = new Map<AccountChain, AccountAdapters>();
  if (plan.liveAccount.length === 0) return built;
  if (!opts) {
    throw new Error(
      `live account chains (${
        plan.liveAccount.join(", ")
      }) need their configuration and a signer: this caller gave none`,
    );
  }
  for (const chain of plan.liveAccount) {
    const c = opts.config.chains[chain];
    if (!c) throw new Error(`${chain} is live in the chain plan but ${chain.toUpperCase()}_RPC_URLS is not set`);
    const factory = opts.factories?.[chain] ?? ACCOUNT_ADAPTER_FACTORIES[chain];
    built.set(
      chain,
      factory({
        urls: c.rpcUrls,
        timeoutMs: c.rpcTimeoutMs,
        signer: opts.signer,
        confirmations: opts.settings.confirmations(chain),
        onRpc: rpcHook?.(chain),
        ...(chain === "sol" && opts.config.solDetection ? { detection: opts.config.solDetection } : {}),
      }),
    );
  }
  return built;
}

/** The Signer of the live native chains (doge, zec, sol, xrp, sui), or undefined when none is live. */
export function liveSigner(
  plan: Pick<ChainPlan, "liveUtxo" | "liveAccount" | "utxoNetworks">,
  mnemonic: string,
): Signer | undefined {
  return plan.liveUtxo.length + plan.liveAccount.length > 0
    ? Signer.fromMnemonic(mnemonic, plan.utxoNetworks)
    : undefined;
}

function disabledReader(chain: ChainSymbol): ChainReader {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return {
    chain,
    finality: { kind: "depth" },
    tip: refuse,
    blockHash: refuse,
    scan: refuse,
    txStatus: refuse,
    transfersOf: refuse,
  };
}

/**
 * Where a live chain's `Minted` events start: `<CHAIN>_DEPLOY_BLOCK`, else a numeric `<CHAIN>_START_BLOCK` (the
 * contracts are older than the watcher's first block), else block 0.
 */
function deployBlockOf(c: { deployBlock?: number; startBlock: number | "tip" }): bigint {
  return BigInt(c.deployBlock ?? (c.startBlock === "tip" ? 0 : c.startBlock));
}

function disabledView(chain: EvmChain): UAssetView {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return { chain, totalSupply: refuse, balanceOf: refuse, minted: refuse };
}

/** Nothing is ever signed or sent for a disabled chain. */
function disabledMinter(chain: EvmChain): EvmMinter {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return { chain, broadcast: refuse, nudge: refuse, prepareMint: refuse, mintedBy: refuse };
}

/**
 * A disabled chain's payer, of the family the catalog gives it: every call refuses. It has no hot wallet or change
 * address (null): reports say so, nothing is swept to it and no coins are merged.
 */
function disabledPayer(chain: NativeChain): NativePayer {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  const sender = { chain, broadcast: refuse, nudge: refuse, preparePayout: refuse };
  const family = chainFamily(chain);
  switch (family.family) {
    case "utxo":
      return { ...sender, family: "utxo", changeAddress: null };
    case "account":
      // Its check finds nothing against a payout (as before payers had families): `preparePayout` is what refuses, so
      // a payout to a disabled chain fails where it always did and the treasury report reads as it always did.
      return {
        ...sender,
        family: "account",
        hotWallet: null,
        checkPayout: () => Promise.resolve({ ok: true }),
        prepareSweep: refuse,
      };
  }
}
