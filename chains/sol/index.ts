/**
 * The live SOL adapters: reader (scanning what the chain finalises, reader.ts) and payer (payouts from the hot
 * wallet, sweeps of deposit addresses into it, payer.ts), over Solana JSON-RPC 2.0 (rpc.ts) on `SOL_RPC_URLS`.
 */
import type { AccountAdapterOptions, AccountAdapters } from "../adapter.ts";
import { solPayer } from "./payer.ts";
import { solReader } from "./reader.ts";
import { solRpc } from "./rpc.ts";

export function solAdapters(opts: AccountAdapterOptions): AccountAdapters {
  const rpc = solRpc({ urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return {
    reader: solReader(rpc, { confirmations: opts.confirmations, detection: opts.detection }),
    payer: solPayer(rpc, opts.signer),
  };
}
