/**
 * How many checkpoints (or further pages) the next Sui scan request asks for (docs/scan-budget.md, "Sui"): one first
 * (nothing is known of their size yet), then as many as fit `target` bytes at the last request's bytes per item, at
 * most twice as many as the request before (a quiet stretch may end with a busy one), never above `max` (the service's
 * page size) nor above the cap a provider's refusal set. The same rule as the Solana reader's `BlockBatchSizer`
 * (chains/sol/reader.ts), with Sui's own bound.
 */

/** Answered requests after which a cap lowered by a refusal is raised again (a provider's bad minute passes). */
export const CAP_RECOVERY_REQUESTS = 20;

export class CheckpointBatchSizer {
  #size: number;
  #cap: number;
  #sinceRefusal = 0;

  constructor(readonly target: number, readonly max: number, first = 1) {
    this.#cap = max;
    this.#size = Math.min(first, max);
  }

  get size(): number {
    return this.#size;
  }

  get cap(): number {
    return this.#cap;
  }

  /** A request for `items` brought back `bytes`. */
  answered(items: number, bytes: number) {
    if (this.#cap < this.max && ++this.#sinceRefusal >= CAP_RECOVERY_REQUESTS) {
      this.#cap = Math.min(this.max, this.#cap * 2);
      this.#sinceRefusal = 0;
    }
    const fit = Math.max(1, Math.floor(this.target / Math.max(1, bytes / items)));
    this.#size = Math.max(1, Math.min(fit, Math.max(this.#size, items) * 2, this.#cap));
  }

  /** A request for `items` (more than one) failed: half as many from now on, down to one. */
  refused(items: number) {
    this.#cap = Math.max(1, Math.floor(items / 2));
    this.#size = Math.min(this.#size, this.#cap);
    this.#sinceRefusal = 0;
  }
}
