/**
 * Reading a node's answer through a zod schema, for every native adapter (chains/sol/answers.ts,
 * chains/sui/answers.ts): an answer that is not in the documented shape is refused by name, `sol getBlock:
 * transactions[3].meta.preBalances[1] is not a whole number of lamports ("1.5")`, before anything is read from it,
 * rather than a `TypeError` half way through, a `SyntaxError` from `BigInt`, or a wrong number.
 *
 * The refusal is transient (`TransientChainError`): it says nothing about our request, the node (or another one) may
 * answer well next time, and meanwhile nothing moves: the watcher's cursor stays before the block, nothing is recorded,
 * no payout is prepared (docs/architecture.md, "How the order pipeline works": transient RPC errors reschedule the step
 * with exponential backoff).
 *
 * Amounts (lamports, MIST, zatoshis) become `bigint` here and nowhere else: a JSON integer that is safe, or a string of
 * decimal digits (chains/shared/http_failover.ts `parseExactJson` hands every number that is not a safe integer over
 * as its exact text, so a balance above 2^53 arrives as digits). A float, a negative, an exponent, a sign or any other
 * character is refused, never rounded.
 */
import { z } from "zod";
import { TransientChainError } from "../adapter.ts";

/** A node's answer to `method` is not in the documented shape: `field` (a path into the answer) `problem`. */
export class MalformedAnswerError extends TransientChainError {
  constructor(
    readonly source: string,
    readonly method: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${source} ${method}: ${field} ${problem}`);
    this.name = "MalformedAnswerError";
  }
}

type Path = readonly PropertyKey[];

/** `["transactions", 3, "meta"]` as `transactions[3].meta`. */
export function fieldOf(path: Path): string {
  if (path.length === 0) return "the answer";
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : `${i === 0 ? "" : "."}${String(p)}`).join("");
}

/**
 * `answer` read through `schema`, or a `MalformedAnswerError` naming `source` (`sol`, `sui GraphQL`), the method and
 * the first field in error. `at` prefixes the field's path when `answer` is a part of a larger answer.
 */
export function readAnswer<S extends z.ZodType>(
  source: string,
  method: string,
  schema: S,
  answer: unknown,
  at: Path = [],
): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new MalformedAnswerError(source, method, fieldOf([...at, ...issue.path]), issue.message);
}

/** An error message for a missing value or one of another kind. */
export const missingOr = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? "is missing" : `is not ${what} (${JSON.stringify(issue.input)})`;

/** A string, present. */
export const text = z.string({ error: missingOr("a string") });

/** true or false, present. */
export const flag = z.boolean({ error: missingOr("true or false") });

/**
 * A whole amount of `unit` (lamports, MIST, zatoshis) as bigint: a safe JSON integer or decimal digits, nothing else;
 * `signed` admits a leading minus (a balance change). One transform rather than a union of a string and a number
 * schema: a Solana block has tens of thousands of balances.
 */
export function units(unit: string, { signed = false } = {}) {
  const what = `a whole number of ${unit}`;
  const digits = signed ? /^-?\d+$/ : /^\d+$/;
  return z.unknown().transform((v, ctx) => {
    if (
      (typeof v === "number" && Number.isSafeInteger(v) && (signed || v >= 0)) ||
      (typeof v === "string" && digits.test(v))
    ) {
      return BigInt(v);
    }
    ctx.addIssue({ code: "custom", message: missingOr(what)({ input: v }), input: v });
    return z.NEVER;
  });
}

/** A slot, height, sequence number or epoch: a safe whole number, as a JSON number or decimal digits. */
export const whole = z.unknown().transform((v, ctx) => {
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n === "number" && Number.isSafeInteger(n) && n >= 0) return n;
  ctx.addIssue({ code: "custom", message: missingOr("a whole number")({ input: v }), input: v });
  return z.NEVER;
});
