/**
 * What the overview's charts read (docs/dashboard.md "Charts"), kept at a bounded cost:
 *
 * - **Hourly order buckets**: `["chart_orders", hourStartMs, type, status]`, a `Deno.KvU64` counting the orders that
 *   entered `status` in that hour. Added by `addOrderCreate` and `addOrderUpdate` (kv/orders.ts) to the atomic that
 *   changes the status, beside the order event: no extra commit, one `sum` mutation per status change.
 * - **Hourly mint latency histograms**: `["chart_mint_latency", hourStartMs, bucket]`, a `Deno.KvU64` counting the mints
 *   completed in that hour whose time from deposit seen (the order's `createdAt`, when the watcher recorded it) to
 *   completed fell in `MINT_LATENCY_BUCKETS_SECONDS[bucket]` (the last bucket: above every bound). One more `sum` in
 *   the commit that completes a mint. Percentiles come from these counts, never from a list of durations.
 * - **Samples** (watcher lag per chain; hot, cold and waiting payouts per native chain): `["chart_sample", atMs]`, one
 *   record per sample, written by actors/charts.ts at most once per `SAMPLE_MS` and only when a value moved: a value
 *   holds until the next sample. Samples older than `SAMPLE_KEPT_MS` are deleted by `pruneSamples`, all but the newest
 *   of them, which still says what held at the start of the window.
 *
 * `sum` is a blind add (no read, no check): two orders moving in the same hour never make each other's commit fail.
 * Buckets older than `KEEP_HOURS` are deleted by `pruneChartBuckets` (a `sum` cannot carry `expireIn`).
 */
import type { ChainSymbol, NativeChain } from "../chains/catalog.ts";
import type { Order, OrderStatus, OrderType } from "../model/order.ts";

export const HOUR_MS = 3_600_000;
/** Hours of buckets kept: the charts show 24; the rest is slack for clocks and late prunes. */
export const KEEP_HOURS = 48;
/** Upper bounds (seconds) of the mint latency buckets: a sim chain's seconds to a doge deposit's hours. */
export const MINT_LATENCY_BUCKETS_SECONDS = [
  1,
  2,
  5,
  10,
  20,
  30,
  60,
  120,
  300,
  600,
  1200,
  1800,
  3600,
  7200,
  14400,
] as const;
/** How long a sample is kept (but the newest is always kept): a day of chart and an hour of slack. */
export const SAMPLE_KEPT_MS = 25 * HOUR_MS;

const ORDERS = "chart_orders";
const LATENCY = "chart_mint_latency";
const SAMPLE = "chart_sample";
const ONE = 1n;
const MAX_LIST = 1000;

export const hourOf = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

export function orderBucketKey(hour: number, type: OrderType, status: OrderStatus): Deno.KvKey {
  return [ORDERS, hour, type, status];
}
export function latencyBucketKey(hour: number, bucket: number): Deno.KvKey {
  return [LATENCY, hour, bucket];
}
function sampleKey(at: number): Deno.KvKey {
  return [SAMPLE, at];
}

/** The bucket a duration falls in: the first bound at or above it, or one past the last bound. */
export function latencyBucket(seconds: number): number {
  const i = MINT_LATENCY_BUCKETS_SECONDS.findIndex((b) => seconds <= b);
  return i === -1 ? MINT_LATENCY_BUCKETS_SECONDS.length : i;
}

// ---- writes in the order's own commit ----

/**
 * Counts `o` entering its status at `at` (ISO time) in `atomic`: its hour's order bucket, and when a mint completes,
 * its latency bucket. Called where the order event is added (kv/orders.ts), so both exist exactly when the change
 * committed.
 */
export function addChartCounts(atomic: Deno.AtomicOperation, o: Order, at: string): void {
  const ms = Date.parse(at);
  if (!Number.isFinite(ms)) return; // the order schema checks its times; nothing to count against a bad one
  const hour = hourOf(ms);
  atomic.sum(orderBucketKey(hour, o.type, o.status), ONE);
  if (o.type === "mint" && o.status === "completed") {
    const seen = Date.parse(o.createdAt);
    if (Number.isFinite(seen)) atomic.sum(latencyBucketKey(hour, latencyBucket(Math.max(0, ms - seen) / 1000)), ONE);
  }
}

// ---- reads ----

export interface HourCounts {
  hour: number;
  /** `${type}/${status}` -> orders that entered it in the hour. */
  entered: Map<string, number>;
  /** Mints completed in the hour per latency bucket (length: the bounds plus one). */
  latency: number[];
}

/** The `hours` hourly buckets ending with the one holding `now`, oldest first; an hour with nothing is all zero. */
export async function readHourBuckets(kv: Deno.Kv, now: number, hours: number): Promise<HourCounts[]> {
  const last = hourOf(now);
  const first = last - (hours - 1) * HOUR_MS;
  const out: HourCounts[] = [];
  for (let h = first; h <= last; h += HOUR_MS) {
    out.push({ hour: h, entered: new Map(), latency: new Array(MINT_LATENCY_BUCKETS_SECONDS.length + 1).fill(0) });
  }
  const at = (hour: number) => out[(hour - first) / HOUR_MS];
  const range = (prefix: string) => ({ start: [prefix, first], end: [prefix, last + HOUR_MS] });
  for await (const e of kv.list<Deno.KvU64>(range(ORDERS), { batchSize: MAX_LIST })) {
    const [, hour, type, status] = e.key as [string, number, string, string];
    const row = at(hour);
    if (row) row.entered.set(`${type}/${status}`, Number(e.value.value));
  }
  for await (const e of kv.list<Deno.KvU64>(range(LATENCY), { batchSize: MAX_LIST })) {
    const [, hour, bucket] = e.key as [string, number, number];
    const row = at(hour);
    if (row && bucket >= 0 && bucket < row.latency.length) row.latency[bucket] = Number(e.value.value);
  }
  return out;
}

/**
 * Deletes the order and latency buckets of hours before `before` (ms), at most `limit` keys per call; returns how many.
 * At rest there is nothing that old and it commits nothing.
 */
export async function pruneChartBuckets(kv: Deno.Kv, before: number, limit = 500): Promise<number> {
  const keys: Deno.KvKey[] = [];
  for (const prefix of [ORDERS, LATENCY]) {
    const iter = kv.list({ start: [prefix], end: [prefix, before] }, { limit: limit - keys.length });
    for await (const e of iter) keys.push(e.key);
  }
  for (let i = 0; i < keys.length; i += 100) {
    const op = kv.atomic();
    for (const k of keys.slice(i, i + 100)) op.delete(k);
    await op.commit();
  }
  return keys.length;
}

// ---- samples ----

/** Smallest units as decimal strings; null where the part could not be read (never shown as 0). */
export interface FundsSample {
  hot: string | null;
  cold: string | null;
  waiting: string | null;
}

export interface ChartSample {
  /** When it was taken (ms, the pipeline's clock). */
  at: number;
  /** Blocks behind the tip per watched chain; null when the tip or cursor was unknown. */
  lag: Partial<Record<ChainSymbol, number | null>>;
  funds: Partial<Record<NativeChain, FundsSample>>;
}

export async function latestSample(kv: Deno.Kv): Promise<ChartSample | null> {
  for await (const e of kv.list<ChartSample>({ prefix: [SAMPLE] }, { reverse: true, limit: 1 })) return e.value;
  return null;
}

/** Stores `s` unless a sample with its time exists (another process took it); true when written. */
export async function writeSample(kv: Deno.Kv, s: ChartSample): Promise<boolean> {
  const key = sampleKey(s.at);
  return (await kv.atomic().check({ key, versionstamp: null }).set(key, s).commit()).ok;
}

/**
 * Deletes the samples taken before `before` (ms) but the newest of them (what held when the window starts), at most
 * `limit` per call; returns how many. At rest (one old sample at most) it commits nothing.
 */
export async function pruneSamples(kv: Deno.Kv, before: number, limit = 500): Promise<number> {
  const keys: Deno.KvKey[] = [];
  const old = kv.list({ start: [SAMPLE], end: [SAMPLE, before] }, { reverse: true, limit: limit + 1 });
  for await (const e of old) keys.push(e.key);
  const doomed = keys.slice(1);
  for (let i = 0; i < doomed.length; i += 100) {
    const op = kv.atomic();
    for (const k of doomed.slice(i, i + 100)) op.delete(k);
    await op.commit();
  }
  return doomed.length;
}

/** The samples taken at or after `since` (ms), oldest first, and the last one before it (its values held until then). */
export async function readSamples(kv: Deno.Kv, since: number): Promise<ChartSample[]> {
  const out: ChartSample[] = [];
  for await (const e of kv.list<ChartSample>({ start: [SAMPLE], end: [SAMPLE, since] }, { reverse: true, limit: 1 })) {
    out.push(e.value);
  }
  for await (const e of kv.list<ChartSample>({ prefix: [SAMPLE], start: [SAMPLE, since] })) out.push(e.value);
  return out;
}
