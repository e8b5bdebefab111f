/**
 * The HTTP side of every RPC client of the native chains (JSON-RPC 1.0 for doge/zec, JSON-RPC 2.0 for Solana,
 * rippled's JSON-RPC for the XRP Ledger, GraphQL for Sui): several URLs in order of preference with failover,
 * credentials from the URL's userinfo as HTTP basic auth, a timeout per request, and exact numbers.
 *
 * - Failover: a transport failure (connection refused, timeout), an answer that is not JSON (a proxy's error page),
 *   401/403 (wrong credentials) and 429 (rate limited: the next URL is tried at once, and when every URL failed the
 *   caller gets `TransientChainError`, which the pipeline retries with its own backoff) hand the request to the next
 *   URL. A JSON answer is the node's answer, even with HTTP 500 (Bitcoin Core answers JSON-RPC errors so): never
 *   failed over, since another node would say the same about the same request.
 * - Messages name the URL's origin only (chains/shared/redact.ts): providers put keys in paths, users in userinfo.
 * - Numbers: the response is parsed keeping the exact text of every number that is not a safe integer, so a float
 *   (Dogecoin's `value`) or a big integer arrives as a string, never as a rounded JavaScript number.
 */
import { type RpcFailureReason, type RpcHook, TransientChainError } from "../adapter.ts";
import { redactUrls } from "./redact.ts";

/**
 * Where a number that is not a safe integer may start: a number token follows a key's closing quote and `:`, a `,`, a
 * `[` or the start (whitespace aside), and it is unsafe only with a fraction or an exponent or with 16 digits or more.
 * A match inside a string is only a false alarm (the exact parse runs); no unsafe number escapes it. The quote before
 * `:` keeps times out of it (`"close_time_iso":"2025-05-08T06:13:36.000Z"`, in every XRPL API v2 transaction, would
 * otherwise send every ledger through the slow path).
 */
const MAYBE_UNSAFE_NUMBER = /(?:^|"\s*:|[,[])\s*-?(?:\d{16}|\d+[.eE])/;

/**
 * Parses `text` keeping non-safe-integer numbers as their exact source text. The reviver that does so costs about ten
 * times the plain parse (bench/sol_block.ts: ~50 ms against ~4 ms for a 3 MB Solana block), so a text whose numbers
 * are all safe integers, which the plain parse reads exactly, is parsed plainly.
 */
export function parseExactJson(text: string): unknown {
  if (!MAYBE_UNSAFE_NUMBER.test(text)) return JSON.parse(text);
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined
        ? context.source
        : value,
  );
}

export interface HttpFailoverOptions {
  /** Names the variable in messages: `SOL` for `SOL_RPC_URLS`. */
  variable: string;
  /** In order of preference; userinfo, when present, is the basic-auth credential for that URL. */
  urls: readonly string[];
  timeoutMs?: number;
  /**
   * Called once per logical call sent (a batch reports each of its calls): metrics, tests counting calls. Its `failed`
   * is called per call an endpoint failed, before the next URL is tried.
   */
  onRpc?: RpcHook;
}

/** Counts what a caller's requests received: readers that bound their work by bytes (chains/sol/reader.ts) read it. */
export interface ByteMeter {
  /** Characters of response text received (JSON-RPC answers are ASCII: one byte each). */
  bytes: number;
}

export interface HttpFailover {
  /**
   * POSTs `body` as JSON to each URL in turn until one answers JSON; `methods` name the calls for `onRpc` and errors.
   * `meter`, when given, is credited with the size of every response read, answered or not.
   */
  post(methods: readonly string[], body: unknown, meter?: ByteMeter): Promise<unknown>;
}

interface Endpoint {
  url: string;
  origin: string;
  headers: Record<string, string>;
}

function endpointOf(variable: string, raw: string): Endpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${variable}_RPC_URLS: ${redactUrls(raw)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${variable}_RPC_URLS: ${url.origin} must be http or https`);
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

export function httpFailover(opts: HttpFailoverOptions): HttpFailover {
  if (opts.urls.length === 0) throw new Error(`${opts.variable}_RPC_URLS: no RPC URL configured`);
  const endpoints = opts.urls.map((u) => endpointOf(opts.variable, u));
  const timeoutMs = opts.timeoutMs ?? 15_000;

  /** Sends `body` to each endpoint in turn until one answers with JSON-RPC; throws TransientChainError otherwise. */
  async function post(methods: readonly string[], body: unknown, meter?: ByteMeter): Promise<unknown> {
    const failures: string[] = [];
    for (const ep of endpoints) {
      for (const method of methods) opts.onRpc?.({ url: ep.origin, method });
      const failed = (reason: RpcFailureReason) => {
        for (const method of methods) opts.onRpc?.failed?.({ url: ep.origin, method, reason });
      };
      let res: Response;
      try {
        res = await fetch(ep.url, {
          method: "POST",
          headers: ep.headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        failed(err instanceof DOMException && err.name === "TimeoutError" ? "timeout" : "network");
        failures.push(`${ep.origin}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        // The answer was cut short while it was read (a timeout on a large or slow answer): said as such, not as a
        // bad answer, so that a caller can ask for less.
        failed(err instanceof DOMException && err.name === "TimeoutError" ? "timeout" : "network");
        failures.push(
          `${ep.origin}: HTTP ${res.status}, answer cut short (${err instanceof Error ? err.message : err})`,
        );
        continue;
      }
      if (meter) meter.bytes += text.length;
      // Bitcoin Core answers JSON-RPC errors with HTTP 500 (or 404 for an unknown method) and a JSON body: that is
      // an answer. An auth failure, a proxy error page or rate limiting is not.
      let parsed: unknown;
      try {
        parsed = parseExactJson(text);
      } catch {
        failed(httpFailure(res.status, "invalid_answer"));
        failures.push(`${ep.origin}: HTTP ${res.status}${res.status === 401 ? " (wrong RPC credentials)" : ""}`);
        continue;
      }
      if (res.status === 429 || res.status === 401 || res.status === 403 || parsed === null) {
        failed(httpFailure(res.status, "invalid_answer"));
        failures.push(`${ep.origin}: HTTP ${res.status}`);
        continue;
      }
      return parsed;
    }
    throw new TransientChainError(
      redactUrls(
        `${opts.variable.toLowerCase()} RPC ${methods[0]}${
          methods.length > 1 ? ` (+${methods.length - 1})` : ""
        } failed on ` +
          `every URL: ${failures.join("; ")}`,
      ),
    );
  }

  return { post };
}

/** The failure an HTTP status names (refused credentials, rate limiting, another error), or `otherwise` for a 2xx. */
export function httpFailure(status: number, otherwise: RpcFailureReason): RpcFailureReason {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 429) return "rate_limited";
  return status >= 200 && status < 300 ? otherwise : "http";
}
