/**
 * The live XRP Ledger adapters: reader (validated ledgers, chains/xrp/reader.ts) and payer (payouts from the hot
 * wallet, sweeps of deposit addresses into it, chains/xrp/payer.ts), over rippled's JSON-RPC (chains/xrp/rpc.ts).
 */
import type { AccountAdapterOptions, AccountAdapters } from "../adapter.ts";
import { xrpPayer } from "./payer.ts";
import { xrpReader } from "./reader.ts";
import { xrplRpc } from "./rpc.ts";

export function xrpAdapters(opts: AccountAdapterOptions): AccountAdapters {
  if (!Number.isInteger(opts.confirmations) || opts.confirmations < 1) {
    throw new RangeError(`XRP_CONFIRMATIONS must be a whole number of at least 1, got ${opts.confirmations}`);
  }
  const rpc = xrplRpc({ urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return {
    reader: xrpReader({ rpc, confirmations: opts.confirmations }),
    payer: xrpPayer({ rpc, signer: opts.signer }),
  };
}
