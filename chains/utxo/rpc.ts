/**
 * JSON-RPC over HTTP for the Bitcoin-Core family (Dogecoin Core 1.14) and Zebra, over several URLs with failover,
 * like `<CHAIN>_RPC_URLS` for EVM chains.
 *
 * - Every request and every batch entry says `"jsonrpc": "2.0"` (`JSONRPC_VERSION`), the one version both families
 *   take. Zebra serves RPC through jsonrpsee, which accepts only "2.0"; its compatibility middleware rewrites a single
 *   "1.0" request but passes a batch through unchanged, so a "1.0" batch entry is refused with -32600 "Invalid
 *   request" (docs/toolchain-notes.md cites the sources). Dogecoin Core 1.14 and the Bitcoin Core releases of its
 *   family never read the field, and Bitcoin Core 28+ answers "2.0" requests in strict 2.0 (a `result` or an `error`,
 *   not both), which `resultOf` reads the same.
 * - Transport (chains/shared/http_failover.ts): basic auth from the URL's userinfo, failover, timeouts, origins only in
 *   messages, and exact number text (a Dogecoin `value` of 0.1 arrives as the string "0.1").
 * - An answer with a JSON-RPC `error` is the node's answer, not a transport failure: `RpcError`, never failed over
 *   (another node would say the same about the same request), with the node's code.
 * - `batch` sends several calls in one HTTP request (an array body, which both Dogecoin Core and Zebra accept) and
 *   returns each result or `RpcError` in order.
 */
import type { UtxoChain } from "../catalog.ts";
import { httpFailover } from "../shared/http_failover.ts";
import { redactUrls } from "../shared/redact.ts";

export { parseExactJson } from "../shared/http_failover.ts";

/** The `jsonrpc` member of every request and batch entry (see the top of this file). */
export const JSONRPC_VERSION = "2.0";

/** The node answered the call with a JSON-RPC error (unknown transaction, bad parameter, rejected transaction). */
export class RpcError extends Error {
  constructor(readonly method: string, readonly code: number, message: string) {
    super(redactUrls(`${method}: ${message} (code ${code})`));
    this.name = "RpcError";
  }
}

export interface RpcCall {
  method: string;
  params?: unknown[];
}

export interface UtxoRpc {
  readonly chain: UtxoChain;
  call<T>(method: string, params?: unknown[]): Promise<T>;
  /** One HTTP request; each entry is the call's result or its `RpcError`. An empty list sends nothing. */
  batch<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]>;
}

export interface UtxoRpcOptions {
  chain: UtxoChain;
  /** In order of preference; userinfo, when present, is the basic-auth credential for that URL. */
  urls: readonly string[];
  timeoutMs?: number;
  /** Called once per JSON-RPC call sent (a batch reports each of its calls): metrics, tests counting calls. */
  onRpc?: (info: { url: string; method: string }) => void;
}

export function utxoRpc(opts: UtxoRpcOptions): UtxoRpc {
  if (opts.urls.length === 0) throw new Error(`${opts.chain}: no RPC URL configured`);
  const { post } = httpFailover({
    variable: opts.chain.toUpperCase(),
    urls: opts.urls,
    timeoutMs: opts.timeoutMs,
    onRpc: opts.onRpc,
  });
  let nextId = 1;

  function resultOf<T>(method: string, reply: unknown): T | RpcError {
    const r = reply as { result?: unknown; error?: { code?: number; message?: string } | null };
    if (r === null || typeof r !== "object") return new RpcError(method, -32603, "malformed JSON-RPC reply");
    if (r.error) return new RpcError(method, Number(r.error.code ?? -1), String(r.error.message ?? "error"));
    return r.result as T;
  }

  return {
    chain: opts.chain,
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const reply = await post([method], { jsonrpc: JSONRPC_VERSION, id: nextId++, method, params });
      const result = resultOf<T>(method, reply);
      if (result instanceof RpcError) throw result;
      return result;
    },
    async batch<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]> {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const body = calls.map((c, i) => ({
        jsonrpc: JSONRPC_VERSION,
        id: first + i,
        method: c.method,
        params: c.params ?? [],
      }));
      const reply = await post(calls.map((c) => c.method), body);
      if (!Array.isArray(reply)) {
        // A node that refuses batches answers one error object for the whole request.
        const err = resultOf<T>(calls[0].method, reply);
        throw err instanceof RpcError ? err : new RpcError(calls[0].method, -32600, "batch answered by one object");
      }
      const byId = new Map<number, unknown>();
      for (const r of reply) byId.set(Number((r as { id?: unknown })?.id), r);
      return calls.map((c, i) => {
        const r = byId.get(first + i);
        return r === undefined ? new RpcError(c.method, -32603, "no reply in the batch") : resultOf<T>(c.method, r);
      });
    },
  };
}
