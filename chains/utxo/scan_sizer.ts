/**
 * How many blocks the UTXO reader's next request asks for (docs/scan-budget.md, "Dogecoin and Zcash"): one block
 * first (nothing is known of their size yet), then as many as fit the target at the last request's bytes per block,
 * at most twice as many as the request before (a quiet stretch may end with a busy one), never above `MAX_SCAN_BATCH`
 * nor above the cap a provider's refusal set. The rule of chains/sol/reader.ts `BlockBatchSizer`, with this family's
 * own bounds.
 */

/**
 * Bytes one block request should bring back. A Dogecoin mainnet block is ~35 KB of hex (50 per request, 1.7 MB), a
 * Zcash one ~160 KB of verbosity 2 JSON (12 per request): at 8 MiB (Solana's target) a Zcash catch-up peaked ~45 MiB
 * higher (bench/scale.ts: 359 against 313-315 MiB) for no gain, requests being a small share of a day either way.
 */
export const UTXO_TARGET_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Most blocks one request asks for, however small they are (a quiet regtest chain). */
export const MAX_SCAN_BATCH = 50;
/** Successful requests after which a cap lowered by a refusal is raised again (a provider's bad minute passes). */
const CAP_RECOVERY_REQUESTS = 20;

export class UtxoBatchSizer {
  #size = 1;
  #cap = MAX_SCAN_BATCH;
  #sinceRefusal = 0;

  constructor(readonly target: number) {}

  get size(): number {
    return this.#size;
  }

  /** A request for `blocks` blocks brought back `bytes`. */
  answered(blocks: number, bytes: number) {
    if (this.#cap < MAX_SCAN_BATCH && ++this.#sinceRefusal >= CAP_RECOVERY_REQUESTS) {
      this.#cap = Math.min(MAX_SCAN_BATCH, this.#cap * 2);
      this.#sinceRefusal = 0;
    }
    const fit = Math.max(1, Math.floor(this.target / Math.max(1, bytes / blocks)));
    this.#size = Math.max(1, Math.min(fit, Math.max(this.#size, blocks) * 2, this.#cap));
  }

  /** A request for `blocks` blocks (more than one) failed: half as many from now on, down to one. */
  refused(blocks: number) {
    this.#cap = Math.max(1, Math.floor(blocks / 2));
    this.#size = Math.min(this.#size, this.#cap);
    this.#sinceRefusal = 0;
  }
}
