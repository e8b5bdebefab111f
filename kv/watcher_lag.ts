/**
 * Since when a chain's watcher has been behind its lag threshold (actors/watcher_lag.ts): one record per chain,
 * written when the watcher falls behind and when the alert is raised, deleted when it catches up. Nothing is written
 * while it stays at the tip. Key layout lives here and nowhere else.
 */
import type { ChainSymbol } from "../chains/catalog.ts";
import { addAlert, type Alert, type RaiseAlert } from "./alerts.ts";

export interface WatcherLag {
  /** When the watcher was first seen behind its threshold (ISO). */
  since: string;
  /** The lag then, in blocks, and the threshold it passed. */
  lag: number;
  threshold: number;
  /** Whether `watcher_lagging` was raised for this stretch. */
  alerted: boolean;
}

const lagKey = (chain: ChainSymbol): Deno.KvKey => ["watcher_lag", chain];

export async function readWatcherLag(kv: Deno.Kv, chain: ChainSymbol): Promise<Deno.KvEntryMaybe<WatcherLag>> {
  return await kv.get<WatcherLag>(lagKey(chain));
}

/** Starts a stretch behind the threshold, unless the record changed since `entry` was read. */
export async function startWatcherLag(
  kv: Deno.Kv,
  chain: ChainSymbol,
  entry: Deno.KvEntryMaybe<WatcherLag>,
  lag: WatcherLag,
): Promise<boolean> {
  return (await kv.atomic().check(entry).set(lagKey(chain), lag).commit()).ok;
}

/** Marks the stretch alerted and raises the alert in the same commit (read the alert with `readAlert` first). */
export async function alertWatcherLag(
  kv: Deno.Kv,
  entry: Deno.KvEntry<WatcherLag>,
  alert: Deno.KvEntryMaybe<Alert>,
  raise: RaiseAlert,
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(entry.key, { ...entry.value, alerted: true });
  addAlert(op, alert, raise);
  return (await op.commit()).ok;
}

/** Ends the stretch (the alert, if raised, is cleared by the caller first). */
export async function endWatcherLag(kv: Deno.Kv, entry: Deno.KvEntry<WatcherLag>): Promise<boolean> {
  return (await kv.atomic().check(entry).delete(entry.key).commit()).ok;
}
