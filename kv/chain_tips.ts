/**
 * The watchers' tips as the read side sees them: each chain's watcher cursor (kv/pipeline.ts `cursorKey`, the last
 * block it scanned, written only when it moves), read in one getMany and shared for at most `maxAgeMs`. Pending
 * orders show their confirmations from this (routes/orders.ts), so nothing is written per block for them and an idle
 * service reads nothing: the cursors are read only when a response carries a pending order.
 */
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { type Cursor, cursorKey, scannedThrough } from "./pipeline.ts";

const CHAINS: readonly ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];
const MAX_GET_MANY = 10; // Deno KV refuses more keys in one getMany

/** One read of every chain's cursor: `gen` changes with every read, `at` is when it started (ms). */
export interface TipSnapshot {
  gen: number;
  at: number;
  tips: ReadonlyMap<ChainSymbol, number>;
}

/** Every chain's watcher cursor, re-read when the last read started more than `maxAgeMs` ago (one read at a time). */
export class ChainTips {
  #last: TipSnapshot | null = null;
  #reading: Promise<TipSnapshot> | null = null;
  #gen = 0;

  constructor(
    private readonly kv: Deno.Kv,
    readonly maxAgeMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last snapshot if it is young enough: no await on the hot path. */
  fresh(): TipSnapshot | null {
    const last = this.#last;
    return last && this.now() - last.at <= this.maxAgeMs ? last : null;
  }

  snapshot(): Promise<TipSnapshot> {
    const last = this.fresh();
    if (last) return Promise.resolve(last);
    return this.#reading ??= this.#read().finally(() => (this.#reading = null));
  }

  async #read(): Promise<TipSnapshot> {
    const at = this.now();
    const tips = new Map<ChainSymbol, number>();
    for (let i = 0; i < CHAINS.length; i += MAX_GET_MANY) {
      const chains = CHAINS.slice(i, i + MAX_GET_MANY);
      const entries = await this.kv.getMany<Cursor[]>(chains.map(cursorKey));
      entries.forEach((e, j) => {
        if (e.value && Number.isSafeInteger(e.value.number)) tips.set(chains[j], scannedThrough(e.value));
      });
    }
    return this.#last = { gen: ++this.#gen, at, tips };
  }
}
