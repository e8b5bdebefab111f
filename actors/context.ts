/** What the pipeline's actors, watchers and operator commands share: KV, chains, settings, a clock and a log. */
import type { Chains } from "../chains/adapter.ts";
import {
  chainFamily,
  type ChainSymbol,
  EVM,
  EVM_CHAINS,
  type Finality,
  isEvmChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  requiredConfirmations,
  type UtxoChain,
} from "../chains/catalog.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import type { UtxoNetworkName } from "../chains/utxo/network.ts";
import type { Order } from "../model/order.ts";
import type { FaultPoint } from "../config/env.ts";
import type { HotBand, HotBands } from "../config/hot_band.ts";

export interface PipelineSettings {
  /**
   * When a transaction on `chain` is final: the catalog's rule on a live chain (a depth, or the flag its adapter
   * reports as `TxStatus.final`), the catalog's small sim depth on a simulated one.
   */
  finality(chain: ChainSymbol): Finality;
  /** Confirmations a transaction on `chain` needs before it counts (with `final` where the chain reports it). */
  confirmations(chain: ChainSymbol): number;
  /** How long a deposit or uAsset transfer may wait for its confirmations. */
  confirmationTimeoutMs(chain: ChainSymbol): number;
  /** Expected time between blocks, to schedule the next look at a waiting order. */
  blockMs(chain: ChainSymbol): number;
  /** The shared EVM address uAssets are sent to for burning (lowercase). */
  transferAddress: string;
  /** Where a chain's watcher starts when it has no cursor yet: a block number or the tip at that moment. */
  startBlock(chain: ChainSymbol): number | "tip";
  /** Backoff after a transient chain error: first delay, doubled per attempt, capped. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * The chains this process runs (live or simulated). A disabled chain is not watched, and orders and transfers that
   * need it are held until a process that runs it picks them up (config/chain_mode.ts).
   */
  enabledChains: readonly ChainSymbol[];
  isEnabled(chain: ChainSymbol): boolean;
  /**
   * The address network of `chain`'s deposit addresses and burn destinations: "regtest" for a UTXO chain a devnet
   * process runs on a regtest node, "mainnet" for every other chain (config/chain_mode.ts `utxoNetworks`).
   */
  utxoNetwork(chain: NativeChain): UtxoNetworkName;
  /**
   * The fee rule of a UTXO chain's payouts: coin selection (actors/treasury_steps.ts) and the payer must both use
   * this one, so the coins chosen pay exactly the fee the transaction is built with. A live doge chain: at
   * `DOGE_FEE_PER_KB`; otherwise chains/shared/utxo_fee.ts's default (the sim ledger refuses anything else).
   */
  utxoFee(chain: UtxoChain): FeeFunction;
  /** `minter_allowance_low` below this percent of the allowance last configured (actors/minter_allowance.ts). */
  minterAllowanceAlertPercent: number;
  /** The chain's hot-wallet band (`<CHAIN>_HOT_BAND`, config/hot_band.ts), or null: no band, no refill alert. */
  hotBand(chain: NativeChain): HotBand | null;
}

export interface PipelineContext {
  kv: Deno.Kv;
  chains: Chains;
  settings: PipelineSettings;
  now: () => Date;
  log: (msg: string, err?: unknown) => void;
  /**
   * Fault injection for crash tests: called at "after-sign" (prepared, not recorded), "after-record" (recorded, not
   * broadcast) and "after-broadcast" (sent, completion not recorded). Unset in normal operation.
   */
  faultPoint?: (point: FaultPoint) => void;
  /**
   * Told after each step that moved an order committed (`before` as read, `after` as stored, `at` the step's time):
   * metrics (actors/metrics.ts). Must not throw; unset in tools and most tests.
   */
  onOrderMoved?: (before: Order, after: Order, at: Date) => void;
}

/**
 * A chain that runs live, with what its configuration overrides of the catalog (config/evm.ts `LiveEvmChain` has
 * these fields). Unset fields are the catalog's.
 */
export interface LiveChainSettings {
  /**
   * Replaces the catalog's depth (`<CHAIN>_CONFIRMATIONS`); a chain whose finality is a flag keeps its flag and
   * needs this many confirmations on top of it.
   */
  confirmations?: number;
  blockMs?: number;
  /** Unset: the tip when the watcher first runs. */
  startBlock?: number | "tip";
  confirmationTimeoutMs?: number;
}

/**
 * Settings per chain. A live chain (a key of `live`) uses the catalog's finality, block time and production timeout,
 * each unless its configuration overrides it; a simulated chain the catalog's small sim confirmations, SIM_BLOCK_MS
 * blocks and SIM_CONFIRMATION_TIMEOUT_MS.
 */
export function pipelineSettings(opts: {
  blockMs: number;
  confirmationTimeoutMs: number;
  transferAddress: string;
  live?: Partial<Record<ChainSymbol, LiveChainSettings>>;
  /** Unset: every chain. */
  enabled?: readonly ChainSymbol[];
  /** Unset: mainnet for every UTXO chain. */
  utxoNetworks?: Partial<Record<UtxoChain, UtxoNetworkName>>;
  /** The fee rule of each live UTXO chain (config/utxo.ts `configuredUtxoFee`); unset: the default rule. */
  utxoFees?: Partial<Record<UtxoChain, FeeFunction>>;
  /** Unset: 20 (config/env.ts `MINTER_ALLOWANCE_ALERT_PERCENT`). */
  minterAllowanceAlertPercent?: number;
  /** Unset: no band on any chain. */
  hotBands?: HotBands;
}): PipelineSettings {
  const live = opts.live ?? {};
  const networks = opts.utxoNetworks ?? {};
  const fees = opts.utxoFees ?? {};
  const enabledChains: readonly ChainSymbol[] = opts.enabled ?? [...NATIVE_CHAINS, ...EVM_CHAINS];
  const info = (c: ChainSymbol) => (isEvmChain(c) ? EVM[c] : NATIVE[c]);
  const finality = (c: ChainSymbol): Finality => {
    const cfg = live[c];
    if (!cfg) return { kind: "depth", confirmations: info(c).simConfirmations };
    // EVM: a depth, and the reader's own finality tag (EVM[c].finalityTag) on top.
    const rule: Finality = isEvmChain(c) ? { kind: "depth", confirmations: EVM[c].confirmations } : NATIVE[c].finality;
    return rule.kind === "depth" && cfg.confirmations !== undefined
      ? { kind: "depth", confirmations: cfg.confirmations }
      : rule;
  };
  return {
    finality,
    // A flag chain's `<CHAIN>_CONFIRMATIONS` counts on top of its flag (isCounted requires both): its finality stays
    // the flag, the depth asked of it is the configured one.
    confirmations: (c) =>
      finality(c).kind === "flag" && live[c]?.confirmations !== undefined
        ? live[c].confirmations
        : requiredConfirmations(finality(c)),
    confirmationTimeoutMs: (c) =>
      live[c]
        ? live[c].confirmationTimeoutMs ?? info(c).confirmationTimeoutMinutes * 60_000
        : opts.confirmationTimeoutMs,
    blockMs: (c) => live[c] ? live[c].blockMs ?? info(c).blockMs : opts.blockMs,
    startBlock: (c) => live[c] ? live[c].startBlock ?? "tip" : 0,
    transferAddress: opts.transferAddress.toLowerCase(),
    retryBaseMs: Math.max(50, Math.floor(opts.blockMs / 2)),
    retryMaxMs: Math.max(1000, opts.blockMs * 10),
    enabledChains,
    isEnabled: (c) => enabledChains.includes(c),
    utxoNetwork: (c) => {
      const family = chainFamily(c);
      return family.family === "utxo" ? networks[family.chain] ?? "mainnet" : "mainnet";
    },
    utxoFee: (c) => fees[c] ?? utxoFee(c),
    minterAllowanceAlertPercent: opts.minterAllowanceAlertPercent ?? 20,
    hotBand: (c) => opts.hotBands?.[c] ?? null,
  };
}
