/**
 * Solana JSON-RPC 2.0 over the shared HTTP transport (chains/shared/http_failover.ts: failover over `SOL_RPC_URLS`,
 * basic auth from userinfo, timeouts, 429 -> next URL, exact number text so a balance above 2^53 lamports arrives as
 * its exact string).
 *
 * A JSON-RPC `error` is the node's answer (a skipped slot, a bad parameter): `SolRpcError` with the node's code, never
 * failed over. Transport failures are `TransientChainError` (thrown by the transport). Ids, batches and reading the
 * replies are chains/shared/json_rpc.ts; Solana's replies are strict JSON-RPC 2.0 (a reply without `result` is an
 * error), and a batch is split at `MAX_BATCH`.
 */
import { ChainError } from "../errors.ts";
import { httpFailover } from "../shared/http_failover.ts";
import { type JsonRpc, jsonRpc } from "../shared/json_rpc.ts";
import { redactUrls } from "../shared/redact.ts";

/** Codes Solana's RPC answers that the adapter acts on (solana rpc-client-api `custom_error.rs`). */
export const SOL_RPC_CODES = {
  /** "Block {slot} cleaned up, does not exist on node. First available block: {n}": the node lacks that history. */
  blockCleanedUp: -32001,
  /** sendTransaction preflight failure; its message says "already been processed" for a duplicate. */
  sendTransactionPreflightFailure: -32002,
  /** "Block not available for slot {slot}": not yet stored by this node. */
  blockNotAvailable: -32004,
  /** "Slot {slot} was skipped, or missing due to ledger jump to recent snapshot". */
  slotSkipped: -32007,
  /** "Slot {slot} was skipped, or missing in long-term storage" (nodes backed by Bigtable). */
  longTermStorageSlotSkipped: -32009,
} as const;

/** The node answered the call with a JSON-RPC error. */
export class SolRpcError extends ChainError {
  constructor(readonly method: string, readonly code: number, message: string, readonly data?: unknown) {
    super(redactUrls(`sol ${method}: ${message} (code ${code})`), { chain: "sol" });
    this.name = "SolRpcError";
  }
}

/** `batch` sends one HTTP request per `MAX_BATCH` calls; each entry is the call's result or its `SolRpcError`. */
export type SolRpc = JsonRpc<SolRpcError>;

export interface SolRpcOptions {
  urls: readonly string[];
  timeoutMs?: number;
  onRpc?: (info: { url: string; method: string }) => void;
}

/**
 * Calls per batch at most: public providers cap batches (often at 100 or fewer). A scan sizes its getBlock requests
 * by bytes below this (chains/shared/batch_sizer.ts `BatchSizer`, docs/scan-budget.md).
 */
export const MAX_BATCH = 50;

export function solRpc(opts: SolRpcOptions): SolRpc {
  const http = httpFailover({ variable: "SOL", urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return jsonRpc(http, {
    error: (method, code, message, data) => new SolRpcError(method, code, message, data),
    requireResult: true,
    maxBatch: MAX_BATCH,
  });
}

/** A batch entry's result, or its error thrown. */
export function unwrap<T>(r: T | SolRpcError): T {
  if (r instanceof SolRpcError) throw r;
  return r;
}
