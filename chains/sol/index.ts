/**
 * The live SOL adapters: reader (scanning what the chain finalises) and payer (payouts from the hot wallet, sweeps of
 * deposit addresses into it). STUB: the signature is fixed (chains/registry.ts calls it); the body is being written.
 */
import type { AccountAdapterOptions, AccountAdapters } from "../adapter.ts";

export function solAdapters(_opts: AccountAdapterOptions): AccountAdapters {
  throw new Error("sol live adapters are not built yet");
}
