/**
 * The overview's charts (docs/dashboard.md "Charts"): the samples of watcher lag and of hot, cold and waiting funds,
 * taken by the `chart samples` tick (actors/ticks.ts), and the one read that gathers a day of everything the charts
 * draw (`readCharts`). The hourly order and latency buckets are written in the orders' own commits (kv/charts.ts).
 *
 * KV cost of the samples (actors/runtime.ts, the idle-cost rule): the tick looks at most once per `SAMPLE_MS` (one list
 * read of the latest sample, the chains' tips and balances); it commits only when the sample differs from the last one
 * stored, a lag that moved by less than half a period of its chain's blocks counting as unchanged (`sameValues`), so a
 * live chain's tip running ahead of an idle watcher's stored cursor commits nothing. At rest: no commit. A sample's key is its time: a second process finding
 * one younger than the period does nothing.
 */
import { type ChainSymbol, isNativeChain, type NativeChain } from "../chains/catalog.ts";
import { formatError } from "../chains/shared/redact.ts";
import { ChainTips } from "../kv/chain_tips.ts";
import {
  type ChartSample,
  type FundsSample,
  HOUR_MS,
  KEEP_HOURS,
  latestSample,
  MINT_LATENCY_BUCKETS_SECONDS,
  pruneChartBuckets,
  pruneSamples,
  readHourBuckets,
  readSamples,
  SAMPLE_KEPT_MS,
  writeSample,
} from "../kv/charts.ts";
import { ORDER_STATUSES, ORDER_TYPES, type OrderStatus, type OrderType } from "../model/order.ts";
import { readColdHoldings } from "./cold_balance.ts";
import type { PipelineContext } from "./context.ts";
import { readHotFunds } from "./hot_band.ts";
import { withTimeout } from "./timeout.ts";

/** At most one sample per this long. */
export const SAMPLE_MS = 10 * 60_000;
/** The hours the charts show. */
export const CHART_HOURS = 24;
/** How long one chain read of a sample may take before its part counts as unknown. */
const READ_TIMEOUT_MS = 5_000;

const firstLine = (err: unknown) => formatError(err).split("\n")[0].slice(0, 200);

/** Reads what a sample holds now: each chain's lag, each native chain's hot, cold and waiting funds. */
export async function takeSample(ctx: PipelineContext, chains: readonly ChainSymbol[]): Promise<ChartSample> {
  const at = ctx.now().getTime();
  const cursors = (await new ChainTips(ctx.kv, 0).snapshot()).tips;
  const sample: ChartSample = { at, lag: {}, funds: {} };
  for (const chain of chains) {
    const cursor = cursors.get(chain);
    let lag: number | null = null;
    if (cursor !== undefined) {
      try {
        const tip = await withTimeout(ctx.chains.reader(chain).tip(), READ_TIMEOUT_MS, `${chain} tip`);
        lag = Math.max(0, tip.number - cursor);
      } catch (err) {
        ctx.log(`chart samples: the ${chain} tip could not be read: ${firstLine(err)}`);
      }
    }
    sample.lag[chain] = lag;
  }
  for (const chain of chains.filter(isNativeChain)) sample.funds[chain] = await fundsOf(ctx, chain, at);
  return sample;
}

async function fundsOf(ctx: PipelineContext, chain: NativeChain, at: number): Promise<FundsSample> {
  const out: FundsSample = { hot: null, cold: null, waiting: null };
  try {
    const f = await withTimeout(readHotFunds(ctx.kv, ctx.chains, chain), READ_TIMEOUT_MS, `${chain} hot funds`);
    out.hot = f.hot.toString();
    out.waiting = f.waiting.toString();
  } catch (err) {
    ctx.log(`chart samples: the ${chain} hot funds could not be read: ${firstLine(err)}`);
  }
  try {
    const c = await withTimeout(
      readColdHoldings(ctx.kv, ctx.chains, chain, new Date(at)),
      READ_TIMEOUT_MS,
      `${chain} cold holdings`,
    );
    out.cold = c.cold.toString();
  } catch (err) {
    ctx.log(`chart samples: the ${chain} cold holdings could not be read: ${firstLine(err)}`);
  }
  return out;
}

/**
 * Whether `next` says nothing new: the same funds, and each lag the same within `toleranceMs` of its chain's blocks.
 * At rest a watcher stores its cursor at most once a minute (actors/runtime.ts `BATCH_CURSOR_MS`), so a lag read from
 * the stored cursor wanders by a minute or two of blocks while nothing happens; a stalled watcher falls a whole period
 * behind between two looks, and a catching-up one gains as much.
 */
export function sameValues(ctx: PipelineContext, last: ChartSample, next: ChartSample, toleranceMs: number): boolean {
  if (JSON.stringify(last.funds) !== JSON.stringify(next.funds)) return false;
  const chains = new Set([...Object.keys(last.lag), ...Object.keys(next.lag)]) as Set<ChainSymbol>;
  for (const chain of chains) {
    const [a, b] = [last.lag[chain], next.lag[chain]];
    if (a === b) continue;
    if (a === undefined || b === undefined || a === null || b === null) return false;
    if (Math.abs(a - b) * ctx.settings.blockMs(chain) >= toleranceMs) return false;
  }
  return true;
}

/**
 * The `chart samples` tick: every `sampleMs` (of the pipeline's clock) it deletes what is past keeping (hourly buckets
 * older than `KEEP_HOURS`, samples older than `SAMPLE_KEPT_MS` but the newest), takes a sample, and stores it when it
 * says something new (`sameValues`, half a period of tolerance for lags). Returns what it did, for tests.
 */
export function chartSampleTicker(ctx: PipelineContext, chains: readonly ChainSymbol[], sampleMs = SAMPLE_MS) {
  let lookedAt = -Infinity;
  return async (): Promise<"skipped" | "unchanged" | "written" | "taken"> => {
    const now = ctx.now().getTime();
    if (now - lookedAt < sampleMs) return "skipped";
    lookedAt = now;
    const last = await latestSample(ctx.kv);
    // Another process sampled within the period (its clock may be a little ahead): nothing to do here.
    if (last && now - last.at < sampleMs && now >= last.at) return "skipped";
    const pruned = await pruneChartBuckets(ctx.kv, now - KEEP_HOURS * HOUR_MS) +
      await pruneSamples(ctx.kv, now - SAMPLE_KEPT_MS);
    if (pruned > 0) ctx.log(`chart samples: ${pruned} chart record(s) past keeping deleted`);
    const sample = await takeSample(ctx, chains);
    if (last && sameValues(ctx, last, sample, sampleMs / 2)) return "unchanged";
    return (await writeSample(ctx.kv, sample)) ? "written" : "taken";
  };
}

// ---- the read the dashboard draws ----

export interface ChartData {
  /** Start of each hour shown (ms), oldest first. */
  hours: number[];
  /** Per type and status: orders that entered it in each hour (aligned with `hours`). */
  entered: { type: OrderType; status: OrderStatus; counts: number[] }[];
  /** Per hour: mints completed, and the p50 and p95 of their time from deposit seen to completed. */
  mintLatency: { completed: number; p50: Quantile; p95: Quantile }[];
  /** The samples of the window (and the last one before it), oldest first. */
  samples: ChartSample[];
  chains: readonly ChainSymbol[];
}

/**
 * A percentile read from fixed buckets: the upper bound (seconds) of the bucket holding that rank, so never below the
 * true value and at most one bucket step above it; `above` when it is in the last bucket, beyond every bound.
 */
export type Quantile = { seconds: number } | { above: number } | null;

export function quantile(counts: readonly number[], q: number): Quantile {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i];
    if (seen >= rank) {
      return i < MINT_LATENCY_BUCKETS_SECONDS.length
        ? { seconds: MINT_LATENCY_BUCKETS_SECONDS[i] }
        : { above: MINT_LATENCY_BUCKETS_SECONDS[MINT_LATENCY_BUCKETS_SECONDS.length - 1] };
    }
  }
  return null;
}

/** A day of charts: `CHART_HOURS` hourly buckets ending with the current hour, and the samples since. */
export async function readCharts(kv: Deno.Kv, now: Date, chains: readonly ChainSymbol[]): Promise<ChartData> {
  const t = now.getTime();
  const buckets = await readHourBuckets(kv, t, CHART_HOURS);
  const entered = ORDER_TYPES.flatMap((type) =>
    ORDER_STATUSES.map((status) => ({
      type,
      status,
      counts: buckets.map((b) => b.entered.get(`${type}/${status}`) ?? 0),
    }))
  ).filter((s) => s.counts.some((n) => n > 0));
  const mintLatency = buckets.map((b) => ({
    completed: b.latency.reduce((a, n) => a + n, 0),
    p50: quantile(b.latency, 0.5),
    p95: quantile(b.latency, 0.95),
  }));
  const samples = await readSamples(kv, buckets[0].hour);
  return { hours: buckets.map((b) => b.hour), entered, mintLatency, samples, chains };
}
