/**
 * When each process's watchers last looked at their chains (actors/watcher_looks.ts): one record per process, holding
 * per chain the time of its last look, the block it had scanned through and how far behind the tip it was then. The
 * dashboard's health reads them (actors/ops/overview.ts): a chain some process looked at recently is watched, whether
 * or not it holds the watcher lease (an idle watcher holds none) and whether or not blocks arrive. Key layout lives
 * here and nowhere else.
 */
import type { ChainSymbol } from "../chains/catalog.ts";

export interface ChainLook {
  /** When the watcher last looked (ISO): it read the tip, whether or not it found blocks. */
  at: string;
  /** The last block it had scanned through then. */
  scannedTo: number;
  /** Blocks it was behind the tip it read then (0 at the tip). */
  lag: number;
}

export interface WatcherLooks {
  /** The process (its lease owner id). */
  owner: string;
  /** When this record was written (ISO). */
  at: string;
  chains: Partial<Record<ChainSymbol, ChainLook>>;
}

const looksKey = (owner: string): Deno.KvKey => ["watcher_looks", owner];
/** A record no process rewrote for this long is gone: a stopped process's record does not stay forever. */
const KEPT_MS = 24 * 3600_000;
/** Most records read: far more processes than one deployment runs. */
const MAX_RECORDS = 200;

/** One commit: this process's looks, replacing its previous record. */
export async function writeWatcherLooks(kv: Deno.Kv, looks: WatcherLooks): Promise<void> {
  await kv.set(looksKey(looks.owner), looks, { expireIn: KEPT_MS });
}

/** The same write added to `op`: the looks ride on a commit made anyway (a watcher's lease renewal). */
export function addWatcherLooks(op: Deno.AtomicOperation, looks: WatcherLooks): Deno.AtomicOperation {
  return op.set(looksKey(looks.owner), looks, { expireIn: KEPT_MS });
}

/** Every process's record (at most MAX_RECORDS). */
export async function listWatcherLooks(kv: Deno.Kv): Promise<WatcherLooks[]> {
  const out: WatcherLooks[] = [];
  for await (const e of kv.list<WatcherLooks>({ prefix: ["watcher_looks"] }, { limit: MAX_RECORDS })) {
    out.push(e.value);
  }
  return out;
}

/** Per chain, the newest look of any process, with the process that looked. */
export function newestLooks(records: readonly WatcherLooks[]): Map<ChainSymbol, ChainLook & { owner: string }> {
  const out = new Map<ChainSymbol, ChainLook & { owner: string }>();
  for (const r of records) {
    for (const [chain, look] of Object.entries(r.chains) as [ChainSymbol, ChainLook][]) {
      const seen = out.get(chain);
      if (!seen || Date.parse(look.at) > Date.parse(seen.at)) out.set(chain, { ...look, owner: r.owner });
    }
  }
  return out;
}
