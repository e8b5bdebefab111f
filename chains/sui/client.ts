/**
 * The Sui GraphQL client: POSTs `{query, variables}` over the shared HTTP failover transport
 * (chains/shared/http_failover.ts: several URLs, timeouts, 429 -> next URL). A transport failure is
 * `TransientChainError` (retried by the pipeline); a GraphQL `errors` answer is the node's answer about this request
 * (`SuiGraphqlError`, never failed over: another node would say the same). Calls are named by operation name.
 */
import { TransientChainError } from "../adapter.ts";
import { ChainError } from "../errors.ts";
import { type ByteMeter, httpFailover } from "../shared/http_failover.ts";
import { redactUrls } from "../shared/redact.ts";
import { operationName } from "./graphql.ts";

/** The node answered with GraphQL errors (a rejected transaction, a bad argument). */
export class SuiGraphqlError extends ChainError {
  constructor(readonly operation: string, readonly messages: string[]) {
    super(redactUrls(`sui GraphQL ${operation} answered errors: ${messages.join("; ")}`), { chain: "sui" });
    this.name = "SuiGraphqlError";
  }
}

export interface SuiGraphql {
  /**
   * Sends `document` with `variables`; resolves `data`, or throws `SuiGraphqlError` / `TransientChainError`. `meter`,
   * when given, is credited with the bytes of every answer read (a scan bounded by bytes: chains/sui/reader.ts).
   */
  request<T>(document: string, variables?: Record<string, unknown>, meter?: ByteMeter): Promise<T>;
}

export interface SuiGraphqlOptions {
  urls: readonly string[];
  timeoutMs?: number;
  onRpc?: (info: { url: string; method: string }) => void;
}

export function suiGraphql(opts: SuiGraphqlOptions): SuiGraphql {
  const http = httpFailover({ variable: "SUI", urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return {
    async request<T>(document: string, variables: Record<string, unknown> = {}, meter?: ByteMeter): Promise<T> {
      const op = operationName(document);
      const answer = await http.post([op], { query: document, variables, operationName: op }, meter);
      if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
        throw new TransientChainError(`sui GraphQL ${op}: the node's answer is not a GraphQL response`);
      }
      const { data, errors } = answer as { data?: unknown; errors?: unknown };
      if (Array.isArray(errors) && errors.length > 0) {
        throw new SuiGraphqlError(
          op,
          errors.map((e) => typeof e?.message === "string" ? e.message : JSON.stringify(e)),
        );
      }
      if (typeof data !== "object" || data === null) {
        throw new TransientChainError(`sui GraphQL ${op}: the answer has neither data nor errors`);
      }
      return data as T;
    },
  };
}

/** A `BigInt` scalar (a decimal string; a safe integer number is accepted too) as bigint, never a JS number. */
export function bigIntOf(value: unknown, what: string): bigint {
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  throw new TransientChainError(`sui GraphQL: ${what} is not an integer: ${JSON.stringify(value)}`);
}

/** A `UInt53` scalar as a number. */
export function uint53Of(value: unknown, what: string): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^\d+$/.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
  throw new TransientChainError(`sui GraphQL: ${what} is not a UInt53: ${JSON.stringify(value)}`);
}

/** A Sui address in its one canonical form: `0x` and 64 lowercase hex digits (short forms are zero-padded). */
export function normalizeSuiAddress(address: string): string {
  const m = /^0x([0-9a-fA-F]{1,64})$/.exec(address);
  if (!m) throw new Error(`${JSON.stringify(address)} is not a Sui address`);
  return "0x" + m[1].toLowerCase().padStart(64, "0");
}

const SUI_TYPE = "0x" + "2".padStart(64, "0") + "::sui::SUI";

/** Whether a coin type is SUI, in its short (`0x2::sui::SUI`) or long (`0x000...0002::sui::SUI`) form. */
export function isSuiCoinType(repr: string): boolean {
  const m = /^(0x[0-9a-fA-F]{1,64})::sui::SUI$/.exec(repr);
  return m !== null && normalizeSuiAddress(m[1]) + "::sui::SUI" === SUI_TYPE;
}
