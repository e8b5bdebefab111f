/**
 * How many blocks one `eth_getLogs` of a scan spans (docs/scan-budget.md, "EVM log ranges"), and which failures are a
 * provider refusing the span rather than the node being down.
 *
 * Providers cap `eth_getLogs` differently and say so in their own words; a refused span is asked again smaller, down
 * to one block, and the span grows back after answers come in. What they answer (each quoted from the provider's
 * documentation or from threads where its users pasted the answer):
 * - Infura: `-32005 "query returned more than 10000 results"` and `-32005 "query timeout exceeded"` (its eth_getLogs
 *   reference, "Constraints"); its live API also answers `-32602 "range 1000000 exceeds limit of 10000"`.
 * - Alchemy: `"Log response size exceeded. ... this block range should work: [0x..., 0x...]"`, and answers capped at
 *   150 MB (its eth_getLogs reference, "Supported Block Ranges").
 * - reth (the Base node): `"query exceeds max results 20000, retry with the range 24383075-24383096"` and `"query
 *   exceeds max block range 100000"`; erigon: `"query block range exceeds server limit"`, `"query returns too many
 *   logs"` (its `--rpc.blockrange.limit` / `--rpc.logs.maxresults`).
 * - Tenderly: `"range 9009594 is bigger than range limit 2000"`; Frontier: `"block range is too wide (maximum 10)"`;
 *   QuickNode-style gateways: `"eth_getLogs is limited to a 10,000 range"`; zkSync: `-32008 "Response is too big"`.
 * - Any gateway: HTTP 413, or no answer within the timeout for a huge range; and our own client refuses an answer
 *   above `MAX_ANSWER_BYTES` (viem's `ResponseBodyTooLargeError`).
 * Infura's -32005 is also its rate-limit code, so a refusal is told by its words, and words about rates are not one.
 */
import { BaseError, HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";
import { describeRpcError } from "./client.ts";

/** Bytes one `eth_getLogs` answer should bring back at most: far below every provider's cap and `MAX_ANSWER_BYTES`. */
export const TARGET_LOG_ANSWER_BYTES = 2 * 1024 * 1024;

/** A provider refusing a span: why (for the log line) and the span it named, when it named one. */
export interface RangeRefusal {
  reason: string;
  /** Blocks per request the provider said it would answer (a cap or a suggested range), when it said. */
  suggested?: number;
  /**
   * No answer came at all: maybe a span too heavy, maybe a node that hangs. A reader asks smaller once, and takes a
   * second timeout in a row as the node's (a hanging node would otherwise cost a timeout per halving).
   */
  timeout?: true;
}

const TOO_LARGE =
  /more than \d|too many|too large|too big|too wide|response size|range limit|limited to|exceeds (the )?(max|limit|server limit)|timeout exceeded|narrow/i;
const ABOUT_RATE = /rate limit|rate exceeded|too many requests|per second|request count|credits|capacity|daily|quota/i;

/** A refusal of the span asked, or null when the failure says nothing about size (a node down, a rate limit). */
export function rangeRefusal(err: unknown): RangeRefusal | null {
  if (!(err instanceof BaseError)) return null;
  if (err.walk((e) => e instanceof ResponseBodyTooLargeError)) {
    return { reason: "the answer was larger than this client reads" };
  }
  if (err.walk((e) => e instanceof TimeoutError)) return { reason: "no answer within the timeout", timeout: true };
  const status = (err.walk((e) => e instanceof HttpRequestError || e instanceof RpcRequestError) as
    | { status?: number }
    | null)?.status;
  if (status === 413) return { reason: `HTTP 413: ${nodeMessage(err)}`, ...suggestion(textOf(err)) };
  // Only a node's JSON-RPC answer (it carries a code) can say the span was too large; a dead node says nothing.
  const answered = err.walk((e) => typeof (e as { code?: unknown } | null)?.code === "number") !== null;
  if (!answered) return null;
  const text = textOf(err);
  if (!TOO_LARGE.test(text) || ABOUT_RATE.test(text)) return null;
  return { reason: nodeMessage(err), ...suggestion(text) };
}

/** The node's own words (viem wraps them in a generic first line), on one line for the log. */
function nodeMessage(err: BaseError): string {
  const rpc = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  return (rpc?.details || describeRpcError(err)).replace(/\s+/g, " ");
}

function textOf(err: BaseError): string {
  const parts: string[] = [];
  err.walk((e) => {
    if (e instanceof Error) parts.push(e.message, (e as { details?: string }).details ?? "");
    return false;
  });
  return parts.join(" ");
}

/**
 * The span a provider's message names: a range of blocks (`[0x1f, 0x2a]`, `24383075-24383096`) or, in a message about
 * blocks rather than results, a limit (`limit of 10000`, `maximum 10`, `limited to a 10,000 range`).
 */
export function suggestion(text: string): { suggested?: number } {
  const hexPair = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(text);
  if (hexPair) return spanOf(BigInt(hexPair[1]), BigInt(hexPair[2]));
  const decPair = /range (\d+)\s*-\s*(\d+)/i.exec(text);
  if (decPair) return spanOf(BigInt(decPair[1]), BigInt(decPair[2]));
  if (/result|\blogs\b/i.test(text)) return {};
  const cap = /(?:max(?:imum)?|limit(?:ed to)?(?: of)?)\D{0,16}?(\d[\d,]*)/i.exec(text);
  if (!cap) return {};
  const n = Number(cap[1].replaceAll(",", ""));
  return Number.isSafeInteger(n) && n >= 1 ? { suggested: n } : {};
}

function spanOf(from: bigint, to: bigint): { suggested?: number } {
  const n = Number(to - from + 1n);
  return Number.isSafeInteger(n) && n >= 1 ? { suggested: n } : {};
}
