/**
 * JSON-RPC 1.0 over HTTP for the Bitcoin-Core family (Dogecoin Core 1.14) and Zebra, over several URLs with
 * failover, like `<CHAIN>_RPC_URLS` for EVM chains.
 *
 * - Credentials: the URL's userinfo (`http://user:password@host:port/`) becomes HTTP basic auth (fetch refuses URLs
 *   with credentials). Messages and logs name the URL's origin only (chains/shared/redact.ts), never the password.
 * - Failover: a transport failure (connection refused, timeout, HTTP 5xx other than a JSON-RPC error body, 401/403,
 *   429) hands the call to the next URL; when every URL failed, `TransientChainError`: the pipeline retries later.
 *   An answer with a JSON-RPC `error` is the node's answer, not a transport failure: `RpcError`, never failed over
 *   (another node would say the same about the same request), with the node's code.
 * - Numbers: the response is parsed keeping the exact text of every number that is not a safe integer, so a
 *   Dogecoin `value` of 0.1 arrives as the string "0.1", never as a float anyone could do arithmetic on.
 * - `batch` sends several calls in one HTTP request (an array body, which both Dogecoin Core and Zebra accept) and
 *   returns each result or `RpcError` in order.
 */
import { TransientChainError } from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import { redactUrls } from "../shared/redact.ts";

/** The node answered the call with a JSON-RPC error (unknown transaction, bad parameter, rejected transaction). */
export class RpcError extends Error {
  constructor(readonly method: string, readonly code: number, message: string) {
    super(`${method}: ${message} (code ${code})`);
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

interface Endpoint {
  url: string;
  origin: string;
  headers: Record<string, string>;
}

/** Parses `text` keeping non-safe-integer numbers as their exact source text. */
export function parseExactJson(text: string): unknown {
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined
        ? context.source
        : value,
  );
}

function endpointOf(chain: UtxoChain, raw: string): Endpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${chain.toUpperCase()}_RPC_URLS: ${redactUrls(raw)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${chain.toUpperCase()}_RPC_URLS: ${url.origin} must be http or https`);
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.authorization = "Basic " + btoa(`${user}:${password}`);
    url.username = "";
    url.password = "";
  }
  return { url: url.toString(), origin: url.origin, headers };
}

export function utxoRpc(opts: UtxoRpcOptions): UtxoRpc {
  if (opts.urls.length === 0) throw new Error(`${opts.chain}: no RPC URL configured`);
  const endpoints = opts.urls.map((u) => endpointOf(opts.chain, u));
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let nextId = 1;

  /** Sends `body` to each endpoint in turn until one answers with JSON-RPC; throws TransientChainError otherwise. */
  async function post(methods: string[], body: unknown): Promise<unknown> {
    const failures: string[] = [];
    for (const ep of endpoints) {
      for (const method of methods) opts.onRpc?.({ url: ep.origin, method });
      let res: Response;
      try {
        res = await fetch(ep.url, {
          method: "POST",
          headers: ep.headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        failures.push(`${ep.origin}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const text = await res.text().catch(() => "");
      // Bitcoin Core answers JSON-RPC errors with HTTP 500 (or 404 for an unknown method) and a JSON body: that is
      // an answer. An auth failure, a proxy error page or rate limiting is not.
      let parsed: unknown;
      try {
        parsed = parseExactJson(text);
      } catch {
        failures.push(`${ep.origin}: HTTP ${res.status}${res.status === 401 ? " (wrong RPC credentials)" : ""}`);
        continue;
      }
      if (res.status === 429 || res.status === 401 || res.status === 403 || parsed === null) {
        failures.push(`${ep.origin}: HTTP ${res.status}`);
        continue;
      }
      return parsed;
    }
    throw new TransientChainError(
      redactUrls(
        `${opts.chain} RPC ${methods[0]}${methods.length > 1 ? ` (+${methods.length - 1})` : ""} failed on ` +
          `every URL: ${failures.join("; ")}`,
      ),
    );
  }

  function resultOf<T>(method: string, reply: unknown): T | RpcError {
    const r = reply as { result?: unknown; error?: { code?: number; message?: string } | null };
    if (r === null || typeof r !== "object") return new RpcError(method, -32603, "malformed JSON-RPC reply");
    if (r.error) return new RpcError(method, Number(r.error.code ?? -1), String(r.error.message ?? "error"));
    return r.result as T;
  }

  return {
    chain: opts.chain,
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const reply = await post([method], { jsonrpc: "1.0", id: nextId++, method, params });
      const result = resultOf<T>(method, reply);
      if (result instanceof RpcError) throw result;
      return result;
    },
    async batch<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]> {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const body = calls.map((c, i) => ({ jsonrpc: "1.0", id: first + i, method: c.method, params: c.params ?? [] }));
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
