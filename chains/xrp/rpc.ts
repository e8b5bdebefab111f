/**
 * rippled's JSON-RPC over chains/shared/http_failover.ts: POST `{method, params: [{...}]}`, answered
 * `{result: {status: "success" | "error", error?, ...}}`. An error status is the node's answer about the request
 * (`XrplRpcError` with rippled's `error` code: `txnNotFound`, `actNotFound`, `lgrNotFound`, ...), except `slowDown`,
 * `tooBusy` and the like, which say the node is overloaded or not synced: `TransientChainError`, as is every transport
 * failure.
 */
import { TransientChainError } from "../adapter.ts";
import { ChainError } from "../errors.ts";
import { type ByteMeter, httpFailover } from "../shared/http_failover.ts";
import { redactUrls } from "../shared/redact.ts";

/** rippled answered the request with an error status: `code` is its `error` field; `result` the whole answer. */
export class XrplRpcError extends ChainError {
  constructor(readonly method: string, readonly code: string, readonly result: Record<string, unknown>) {
    const message = typeof result.error_message === "string" ? `: ${result.error_message}` : "";
    super(redactUrls(`xrp RPC ${method} answered ${code}${message}`), { chain: "xrp" });
    this.name = "XrplRpcError";
  }
}

/** Codes that describe the node's state, not the request: another try (or another node) may answer. */
const TRANSIENT_CODES = new Set([
  "slowDown",
  "tooBusy",
  "noNetwork",
  "noCurrent",
  "noClosed",
  "notSynced",
  "amendmentBlocked",
]);

export type XrplResult = Record<string, unknown>;

export interface XrplRpc {
  /** `meter`, when given, is credited with the bytes of the answer (chains/shared/http_failover.ts `ByteMeter`). */
  call(method: string, params?: Record<string, unknown>, meter?: ByteMeter): Promise<XrplResult>;
}

export interface XrplRpcOptions {
  urls: readonly string[];
  timeoutMs?: number;
  onRpc?: (info: { url: string; method: string }) => void;
}

export function xrplRpc(opts: XrplRpcOptions): XrplRpc {
  const http = httpFailover({ variable: "XRP", urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return {
    async call(method, params = {}, meter) {
      const answer = await http.post([method], { method, params: [params] }, meter);
      const result = (answer as { result?: unknown } | null)?.result;
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        throw new TransientChainError(`xrp RPC ${method}: the answer has no result object`, { chain: "xrp" });
      }
      const r = result as XrplResult;
      if (r.status === "success") return r;
      const code = typeof r.error === "string" ? r.error : "unknownError";
      const refusal = new XrplRpcError(method, code, r);
      if (TRANSIENT_CODES.has(code)) {
        // The node's own words (its `error_message`) stay reachable as the cause.
        throw new TransientChainError(`xrp RPC ${method}: the node answered ${code}`, { chain: "xrp", cause: refusal });
      }
      throw refusal;
    },
  };
}

/** Whether `err` is rippled's answer `code` to a request. */
export function isXrplError(err: unknown, code: string): err is XrplRpcError {
  return err instanceof XrplRpcError && err.code === code;
}
