/**
 * JSON-RPC over HTTP for the Bitcoin-Core family (Dogecoin Core 1.14) and Zebra, over several URLs with failover,
 * like `<CHAIN>_RPC_URLS` for EVM chains.
 *
 * - Ids, bodies and replies are chains/shared/json_rpc.ts. Every request and every batch entry says
 *   `"jsonrpc": "2.0"`, the one version both families take. Zebra serves RPC through jsonrpsee,
 *   which accepts only "2.0"; its compatibility middleware rewrites a single "1.0" request but passes a batch through
 *   unchanged, so a "1.0" batch entry is refused with -32600 "Invalid request" (docs/toolchain-notes.md cites the
 *   sources). Dogecoin Core 1.14 and the Bitcoin Core releases of its family never read the field, and Bitcoin Core
 *   28+ answers "2.0" requests in strict 2.0 (a `result` or an `error`, not both), which is read the same. A reply
 *   with neither is read leniently (an undefined result), as it always was for this family.
 * - Transport (chains/shared/http_failover.ts): basic auth from the URL's userinfo, failover, timeouts, origins only in
 *   messages, and exact number text (a Dogecoin `value` of 0.1 arrives as the string "0.1").
 * - An answer with a JSON-RPC `error` is the node's answer, not a transport failure: `RpcError`, never failed over
 *   (another node would say the same about the same request), with the node's code.
 * - `batch` sends several calls in one HTTP request (an array body, which both Dogecoin Core and Zebra accept), however
 *   many, and returns each result or `RpcError` in order.
 */
import type { UtxoChain } from "../catalog.ts";
import { ChainError } from "../errors.ts";
import { httpFailover } from "../shared/http_failover.ts";
import { type JsonRpc, jsonRpc } from "../shared/json_rpc.ts";
import { redactUrls } from "../shared/redact.ts";

export { parseExactJson } from "../shared/http_failover.ts";

/** The node answered the call with a JSON-RPC error (unknown transaction, bad parameter, rejected transaction). */
export class RpcError extends ChainError {
  constructor(readonly method: string, readonly code: number, message: string, chain?: UtxoChain) {
    super(redactUrls(`${method}: ${message} (code ${code})`), { chain });
    this.name = "RpcError";
  }
}

/** `batch` sends one HTTP request, however many calls; each entry is the call's result or its `RpcError`. */
export interface UtxoRpc extends JsonRpc<RpcError> {
  readonly chain: UtxoChain;
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
  const http = httpFailover({
    variable: opts.chain.toUpperCase(),
    urls: opts.urls,
    timeoutMs: opts.timeoutMs,
    onRpc: opts.onRpc,
  });
  const rpc = jsonRpc(http, {
    error: (method, code, message) => new RpcError(method, code, message, opts.chain),
    requireResult: false,
  });
  return { chain: opts.chain, call: rpc.call, batch: rpc.batch };
}
