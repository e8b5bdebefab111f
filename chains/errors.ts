/**
 * The one root of the errors chain code raises, after viem's `BaseError` (viem `src/errors/base.ts`): an error keeps
 * what caused it in the standard ES `cause`, so a log (chains/shared/redact.ts `formatError`) shows the whole chain and
 * code can `walk` it; it says which chain it concerns when it knows; and it says whether it is `transient`: a later
 * try (or another node) may succeed, so the pipeline reschedules the step instead of failing anything
 * (docs/architecture.md "How the order pipeline works": transient RPC errors reschedule the step with exponential
 * backoff).
 *
 * Unlike viem's, the message is kept exactly as given: operators read these texts and tests match them, so no
 * "Details:" or "Version:" lines are appended (our messages are already viem's `shortMessage`).
 */
import type { ChainSymbol } from "./catalog.ts";

export interface ChainErrorOptions {
  /** The chain the error concerns, when the code raising it knows. */
  chain?: ChainSymbol;
  /** Whether retrying the same thing later may succeed. Defaults to false: an answer, a refusal, a bug. */
  transient?: boolean;
  /** What caused it (ES2022 `Error` `cause`): kept, never replaced by its text. */
  cause?: unknown;
}

/** The root of chain errors. */
export class ChainError extends Error {
  declare readonly chain?: ChainSymbol;
  readonly transient: boolean;

  constructor(message: string, options: ChainErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.name = "ChainError";
    if (options.chain !== undefined) this.chain = options.chain;
    this.transient = options.transient ?? false;
  }

  /** `walk(this, fn)`. */
  walk(fn?: (err: unknown) => boolean): unknown {
    return walk(this, fn);
  }
}

/**
 * Follows `err`'s causes as viem's `walk` does: with `fn`, the first error in the chain (`err` included) that `fn`
 * accepts, else null; without `fn`, the innermost cause. A cause chain that loops ends where it repeats.
 */
export function walk(err: unknown, fn?: (err: unknown) => boolean): unknown {
  const seen = new Set<unknown>();
  let e = err;
  for (;;) {
    if (fn?.(e)) return e;
    seen.add(e);
    const cause = e !== null && typeof e === "object" && "cause" in e ? e.cause : undefined;
    if (cause === undefined || seen.has(cause)) return fn ? null : e;
    e = cause;
  }
}

/**
 * Whether `err` is transient: the first `ChainError` in its cause chain says so. The outermost one decides, since
 * whoever wrapped an error knew more about what it means (a node's timeout may be final for a step that already gave
 * up on it). An error with no `ChainError` in its chain is not transient.
 */
export function isTransient(err: unknown): boolean {
  const found = walk(err, (e) => e instanceof ChainError);
  return found instanceof ChainError && found.transient;
}
