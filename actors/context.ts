/** What the pipeline's actors, watchers and operator commands share: KV, chains, settings, a clock and a log. */
import type { Chains } from "../chains/adapter.ts";
import { type ChainSymbol, EVM, isEvmChain, NATIVE } from "../chains/catalog.ts";

export interface PipelineSettings {
  /** Confirmations a transaction on `chain` needs before it counts. */
  confirmations(chain: ChainSymbol): number;
  /** How long a deposit or uAsset transfer may wait for its confirmations. */
  confirmationTimeoutMs(chain: ChainSymbol): number;
  /** Expected time between blocks, to schedule the next look at a waiting order. */
  blockMs(chain: ChainSymbol): number;
  /** The shared EVM address uAssets are sent to for burning (lowercase). */
  transferAddress: string;
  /** Backoff after a transient chain error: first delay, doubled per attempt, capped. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface PipelineContext {
  kv: Deno.Kv;
  chains: Chains;
  settings: PipelineSettings;
  now: () => Date;
  log: (msg: string, err?: unknown) => void;
}

/** Sim mode: the catalog's small sim confirmation counts, blocks every `blockMs`, a configurable timeout. */
export function simSettings(
  opts: { blockMs: number; confirmationTimeoutMs: number; transferAddress: string },
): PipelineSettings {
  return {
    confirmations: (c) => (isEvmChain(c) ? EVM[c].simConfirmations : NATIVE[c].simConfirmations),
    confirmationTimeoutMs: () => opts.confirmationTimeoutMs,
    blockMs: () => opts.blockMs,
    transferAddress: opts.transferAddress.toLowerCase(),
    retryBaseMs: Math.max(50, Math.floor(opts.blockMs / 2)),
    retryMaxMs: Math.max(1000, opts.blockMs * 10),
  };
}
