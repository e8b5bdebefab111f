/**
 * How much the next request of a scan asks for, by the bytes answers bring back (docs/scan-budget.md): the one rule
 * every reader sizes its requests by (Solana getBlock batches, Dogecoin and Zcash block batches, Sui checkpoints and
 * further pages, XRP ledgers in flight, EVM `eth_getLogs` spans). Each reader gives its own target and bound.
 *
 * It starts at `first` (one item, nothing being known of their size yet, unless the reader knows better), then asks for
 * as many as fit `target` at the last request's bytes per item, at most twice as many as the request before (a quiet
 * stretch may end with a busy one) and never above `max` nor the cap a provider's refusal set. A refusal halves the
 * cap (or takes the provider's own suggestion when it names a smaller one); the cap rises again, doubling, after
 * `CAP_RECOVERY_REQUESTS` answered requests (a provider's bad minute passes).
 */

/** Answered requests after which a cap lowered by a refusal is raised again. */
export const CAP_RECOVERY_REQUESTS = 20;

export class BatchSizer {
  #size: number;
  #cap: number;
  #sinceRefusal = 0;

  constructor(readonly target: number, readonly max: number, first = 1) {
    if (!Number.isSafeInteger(max) || max < 1) throw new Error(`a batch bound must be a whole number >= 1, not ${max}`);
    this.#cap = max;
    this.#size = Math.max(1, Math.min(first, max));
  }

  /** Items the next request asks for. */
  get size(): number {
    return this.#size;
  }

  /** The most items a request may ask for now (below `max` after a refusal). */
  get cap(): number {
    return this.#cap;
  }

  /** A request for `items` items brought back `bytes`. */
  answered(items: number, bytes: number) {
    if (this.#cap < this.max && ++this.#sinceRefusal >= CAP_RECOVERY_REQUESTS) {
      this.#cap = Math.min(this.max, this.#cap * 2);
      this.#sinceRefusal = 0;
    }
    const fit = Math.max(1, Math.floor(this.target / Math.max(1, bytes / items)));
    this.#size = Math.max(1, Math.min(fit, Math.max(this.#size, items) * 2, this.#cap));
  }

  /**
   * A request for `items` items (more than one) was refused: half as many from now on, down to one, or the provider's
   * `suggested` count when it names one below `items`.
   */
  refused(items: number, suggested?: number) {
    const half = Math.max(1, Math.floor(items / 2));
    this.#cap = suggested !== undefined && suggested >= 1 && suggested < items ? suggested : half;
    this.#size = Math.min(this.#size, this.#cap);
    this.#sinceRefusal = 0;
  }

  /** The provider asked to slow down (a rate refusal): one item at a time until the cap recovers. */
  slowDown() {
    this.#cap = 1;
    this.#size = 1;
    this.#sinceRefusal = 0;
  }
}
