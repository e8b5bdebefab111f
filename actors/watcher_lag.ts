/**
 * The in-service lag alert: `watcher_lagging` is raised when a chain's watcher has stayed more than its threshold
 * behind the tip for `lagAlertMs` (WATCHER_LAG_ALERT_MINUTES, default 15 as docs/alerts.yml's IssuanceWatcherLagging),
 * and cleared when it is back within it. The threshold is the dashboard's (actors/ops/overview.ts `lagThreshold`: a
 * minute of the chain's blocks), so the alert and the `lagging` health speak of the same lag.
 *
 * KV cost (bench/idle.ts's goal: no commit per tick at rest): at the tip nothing is committed, and the stretch record
 * (kv/watcher_lag.ts) is read at most once per `RECHECK_MS` per chain and process; behind, one commit when the stretch
 * starts, one when the alert is raised, two when it ends. Deploy isolates keep nothing between runs but the record.
 */
import type { ChainSymbol } from "../chains/catalog.ts";
import { clearAlert, readAlert } from "../kv/alerts.ts";
import { alertWatcherLag, endWatcherLag, readWatcherLag, startWatcherLag, type WatcherLag } from "../kv/watcher_lag.ts";
import type { PipelineContext } from "./context.ts";
import { lagThreshold } from "./ops/overview.ts";

/** The default of WATCHER_LAG_ALERT_MINUTES (config/watch_plan.ts), in ms. */
export const LAG_ALERT_MS = 15 * 60_000;
/** At the tip, how often the stretch record is read again (another process may have written it). */
const RECHECK_MS = 60_000;

/** Per KV and chain: the record as last read or written here, and when (the pipeline's clock). */
const known = new WeakMap<Deno.Kv, Map<ChainSymbol, { lag: WatcherLag | null; at: number }>>();

function knownOf(kv: Deno.Kv) {
  let m = known.get(kv);
  if (!m) known.set(kv, m = new Map());
  return m;
}

/** "about 4 min": a lag as chain time (blocks times the block time), for messages and the dashboard. */
export function chainTime(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `about ${s} s` : s < 7200 ? `about ${Math.round(s / 60)} min` : `about ${Math.round(s / 3600)} h`;
}

/** Weighs the lag a watcher step ended with (blocks behind the tip it read) and raises or clears the alert. */
export async function noteWatcherLag(
  ctx: PipelineContext,
  chain: ChainSymbol,
  lag: number,
  alertAfterMs = LAG_ALERT_MS,
): Promise<void> {
  const now = ctx.now().getTime();
  const blockMs = ctx.settings.blockMs(chain);
  const threshold = lagThreshold(blockMs);
  const memo = knownOf(ctx.kv);
  const seen = memo.get(chain);
  if (lag <= threshold && seen && seen.lag === null && now - seen.at < RECHECK_MS) return;
  const entry = await readWatcherLag(ctx.kv, chain);
  memo.set(chain, { lag: entry.value, at: now });
  if (lag <= threshold) {
    if (entry.value === null) return;
    const stretch = entry as Deno.KvEntry<WatcherLag>;
    // The alert first: a crash between the two leaves the record, and the next step clears again.
    if (stretch.value.alerted && (await clearAlert(ctx.kv, "watcher_lagging", chain))) {
      ctx.log(`watcher ${chain}: caught up (${lag} blocks behind the tip); watcher_lagging cleared`);
    }
    if (await endWatcherLag(ctx.kv, stretch)) memo.set(chain, { lag: null, at: now });
    return;
  }
  if (entry.value === null) {
    const started: WatcherLag = { since: new Date(now).toISOString(), lag, threshold, alerted: false };
    if (await startWatcherLag(ctx.kv, chain, entry, started)) memo.set(chain, { lag: started, at: now });
    return;
  }
  const stretch = entry as Deno.KvEntry<WatcherLag>;
  const behindMs = now - Date.parse(stretch.value.since);
  if (stretch.value.alerted || behindMs < alertAfterMs) return;
  const minutes = Math.round(behindMs / 60_000);
  const message = `the ${chain} watcher has been more than ${threshold} blocks behind the tip for ${minutes} min ` +
    `(now ${lag} blocks, ${
      chainTime(lag * blockMs)
    } of chain time): it is not keeping up. Check the chain's RPC errors ` +
    "(issuance_rpc_errors_total) and its provider's limits, and in deploy mode the cron runs' logs (a run that " +
    "stops at its budget says so); run this chain's watcher in a long-running process if Deploy cannot keep up " +
    '(docs/operations.md "Deploy on Deno Deploy"). Cleared when it catches up';
  const alert = await readAlert(ctx.kv, "watcher_lagging", chain);
  const raise = { kind: "watcher_lagging" as const, subject: chain, chain, message, now: ctx.now() };
  if (await alertWatcherLag(ctx.kv, stretch, alert, raise)) {
    ctx.log(`watcher ${chain}: ${message}`);
    memo.set(chain, { lag: { ...stretch.value, alerted: true }, at: now });
  }
}
