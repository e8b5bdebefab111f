/**
 * Solana JSON-RPC 2.0 over the shared HTTP transport (chains/shared/http_failover.ts: failover over `SOL_RPC_URLS`,
 * basic auth from userinfo, timeouts, 429 -> next URL, exact number text so a balance above 2^53 lamports arrives as
 * its exact string).
 *
 * A JSON-RPC `error` is the node's answer (a skipped slot, a bad parameter): `SolRpcError` with the node's code, never
 * failed over. Transport failures are `TransientChainError` (thrown by the transport).
 */
import { httpFailover } from "../shared/http_failover.ts";
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
export class SolRpcError extends Error {
  constructor(readonly method: string, readonly code: number, message: string, readonly data?: unknown) {
    super(redactUrls(`sol ${method}: ${message} (code ${code})`));
    this.name = "SolRpcError";
  }
}

export interface SolRpcCall {
  method: string;
  params?: unknown[];
}

export interface SolRpc {
  call<T>(method: string, params?: unknown[]): Promise<T>;
  /** One HTTP request (a JSON-RPC 2.0 batch); each entry is the call's result or its `SolRpcError`, in order. */
  batch<T>(calls: readonly SolRpcCall[]): Promise<(T | SolRpcError)[]>;
}

export interface SolRpcOptions {
  urls: readonly string[];
  timeoutMs?: number;
  onRpc?: (info: { url: string; method: string }) => void;
}

/** Calls per batch: public providers cap batches (often at 100 or fewer); a scan of many blocks sends several. */
export const MAX_BATCH = 50;

export function solRpc(opts: SolRpcOptions): SolRpc {
  const { post } = httpFailover({ variable: "SOL", urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  let nextId = 1;

  function resultOf<T>(method: string, reply: unknown): T | SolRpcError {
    const r = reply as { result?: unknown; error?: { code?: number; message?: string; data?: unknown } | null };
    if (r === null || typeof r !== "object") return new SolRpcError(method, -32603, "malformed JSON-RPC reply");
    if (r.error) {
      return new SolRpcError(method, Number(r.error.code ?? -1), String(r.error.message ?? "error"), r.error.data);
    }
    if (!("result" in r)) return new SolRpcError(method, -32603, "JSON-RPC reply without result");
    return r.result as T;
  }

  async function batchOnce<T>(calls: readonly SolRpcCall[]): Promise<(T | SolRpcError)[]> {
    const first = nextId;
    nextId += calls.length;
    const body = calls.map((c, i) => ({ jsonrpc: "2.0", id: first + i, method: c.method, params: c.params ?? [] }));
    const reply = await post(calls.map((c) => c.method), body);
    if (!Array.isArray(reply)) {
      // A node or proxy that refuses batches answers one error object for the whole request.
      const err = resultOf<T>(calls[0].method, reply);
      throw err instanceof SolRpcError ? err : new SolRpcError(calls[0].method, -32600, "batch answered by one object");
    }
    const byId = new Map<number, unknown>();
    for (const r of reply) byId.set(Number((r as { id?: unknown })?.id), r);
    return calls.map((c, i) => {
      const r = byId.get(first + i);
      return r === undefined ? new SolRpcError(c.method, -32603, "no reply in the batch") : resultOf<T>(c.method, r);
    });
  }

  return {
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const reply = await post([method], { jsonrpc: "2.0", id: nextId++, method, params });
      const result = resultOf<T>(method, reply);
      if (result instanceof SolRpcError) throw result;
      return result;
    },
    async batch<T>(calls: readonly SolRpcCall[]): Promise<(T | SolRpcError)[]> {
      const out: (T | SolRpcError)[] = [];
      for (let i = 0; i < calls.length; i += MAX_BATCH) out.push(...await batchOnce<T>(calls.slice(i, i + MAX_BATCH)));
      return out;
    },
  };
}

/** A batch entry's result, or its error thrown. */
export function unwrap<T>(r: T | SolRpcError): T {
  if (r instanceof SolRpcError) throw r;
  return r;
}
