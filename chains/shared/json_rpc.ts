/**
 * JSON-RPC 2.0 calls and batches over chains/shared/http_failover.ts, for the clients that speak it (Solana,
 * chains/sol/rpc.ts; the Bitcoin-Core family and Zebra, chains/utxo/rpc.ts). Each client brings its own error class
 * and says how strict it is about replies; this module owns the request ids, the bodies, and reading the replies.
 *
 * - Every request and batch entry says `"jsonrpc": "2.0"`: Zebra's jsonrpsee refuses any other version inside a batch
 *   with -32600 "Invalid request" (docs/toolchain-notes.md cites the sources), and Solana and Dogecoin Core accept it.
 * - A batch is one HTTP request (an array body) of at most `maxBatch` calls; a longer list is sent as several. Replies
 *   are matched to calls by id, in any order. A call the node did not answer is its error "no reply in the batch"; a
 *   node or proxy that refuses batches answers one object for the whole request, which is thrown (its own error, or
 *   "batch answered by one object").
 * - A reply's `error` is the node's answer about that call: the client's error, as a value in a batch and thrown by
 *   `call`, never failed over (another node would say the same about the same request).
 */
import type { ByteMeter, HttpFailover } from "./http_failover.ts";

/** The `jsonrpc` member of every request and batch entry (see above). */
export const JSONRPC_VERSION = "2.0";

export interface JsonRpcCall {
  method: string;
  params?: unknown[];
}

export interface JsonRpcDialect<E extends Error> {
  /** The client's error for a call: the node's JSON-RPC error, or a reply that cannot be read (code -326xx). */
  error(method: string, code: number, message: string, data?: unknown): E;
  /**
   * Whether a reply with neither `result` nor `error` is an error ("JSON-RPC reply without result"). JSON-RPC 2.0
   * requires one of them; old Bitcoin-Core-family nodes are read leniently (the result is then undefined).
   */
  requireResult: boolean;
  /** Calls per HTTP request; a longer batch is split. Unbounded when absent. */
  maxBatch?: number;
}

export interface JsonRpc<E extends Error> {
  /** One call: its result, or its error thrown. */
  call<T>(method: string, params?: unknown[]): Promise<T>;
  /**
   * Each call's result or its error, in the order asked. An empty list sends nothing. `meter` is credited with the
   * bytes of every response read.
   */
  batch<T>(calls: readonly JsonRpcCall[], meter?: ByteMeter): Promise<(T | E)[]>;
}

type Read<T, E> = { ok: true; result: T } | { ok: false; error: E };

export function jsonRpc<E extends Error>(http: Pick<HttpFailover, "post">, dialect: JsonRpcDialect<E>): JsonRpc<E> {
  const maxBatch = dialect.maxBatch ?? Infinity;
  let nextId = 1;

  function read<T>(method: string, reply: unknown): Read<T, E> {
    if (reply === null || typeof reply !== "object") {
      return { ok: false, error: dialect.error(method, -32603, "malformed JSON-RPC reply") };
    }
    const r = reply as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } | null };
    if (r.error) {
      const { code, message, data } = r.error;
      return { ok: false, error: dialect.error(method, Number(code ?? -1), String(message ?? "error"), data) };
    }
    if (dialect.requireResult && !("result" in r)) {
      return { ok: false, error: dialect.error(method, -32603, "JSON-RPC reply without result") };
    }
    return { ok: true, result: r.result as T };
  }

  async function batchOnce<T>(calls: readonly JsonRpcCall[], meter?: ByteMeter): Promise<(T | E)[]> {
    const first = nextId;
    nextId += calls.length;
    const body = calls.map((c, i) => ({
      jsonrpc: JSONRPC_VERSION,
      id: first + i,
      method: c.method,
      params: c.params ?? [],
    }));
    const reply = await http.post(calls.map((c) => c.method), body, meter);
    if (!Array.isArray(reply)) {
      const one = read<T>(calls[0].method, reply);
      throw one.ok ? dialect.error(calls[0].method, -32600, "batch answered by one object") : one.error;
    }
    const byId = new Map<number, unknown>();
    for (const r of reply) byId.set(Number((r as { id?: unknown } | null)?.id), r);
    return calls.map((c, i) => {
      const r = byId.get(first + i);
      if (r === undefined) return dialect.error(c.method, -32603, "no reply in the batch");
      const one = read<T>(c.method, r);
      return one.ok ? one.result : one.error;
    });
  }

  return {
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const reply = await http.post([method], { jsonrpc: JSONRPC_VERSION, id: nextId++, method, params });
      const one = read<T>(method, reply);
      if (!one.ok) throw one.error;
      return one.result;
    },
    async batch<T>(calls: readonly JsonRpcCall[], meter?: ByteMeter): Promise<(T | E)[]> {
      const out: (T | E)[] = [];
      for (let i = 0; i < calls.length; i += maxBatch) {
        out.push(...await batchOnce<T>(calls.slice(i, i + maxBatch), meter));
      }
      return out;
    },
  };
}
