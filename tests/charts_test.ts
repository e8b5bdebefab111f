/**
 * The overview's charts (docs/dashboard.md "Charts"): the hourly buckets written in an order's own commit
 * (kv/charts.ts), percentiles from fixed buckets, pruning, the samples tick on a started sim server (actors/charts.ts),
 * and the SVG each chart draws with its numbers (routes/admin_ui/charts.ts). Real KV files throughout.
 */
import assert from "node:assert/strict";
import { withKv } from "./support/kv.ts";
import { makeOrder } from "./support/orders.ts";
import { startTestServer } from "./support/server.ts";
import { addOrderUpdate, createOrder, getOrder } from "../kv/orders.ts";
import {
  type ChartSample,
  HOUR_MS,
  hourOf,
  latencyBucket,
  latencyBucketKey,
  latestSample,
  MINT_LATENCY_BUCKETS_SECONDS,
  orderBucketKey,
  pruneChartBuckets,
  readHourBuckets,
  readSamples,
  writeSample,
} from "../kv/charts.ts";
import type { ChainReader, Chains } from "../chains/adapter.ts";
import { type ChartData, chartSampleTicker, quantile, readCharts } from "../actors/charts.ts";
import { fundsChart, lagChart, latencyChart, niceCeil, ordersChart } from "../routes/admin_ui/charts.ts";
import { inStatus } from "./support/orders.ts";
import type { Order } from "../model/order.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";

const OWNER = `0x${"ab".repeat(20)}`;
const T0 = Date.parse("2026-11-27T08:10:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** Moves the stored order to `status` at `at` in one commit; false when the commit was refused. */
async function move(kv: Deno.Kv, id: string, status: Order["status"], at: number, stale?: string): Promise<boolean> {
  const entry = await getOrder(kv, id);
  if (entry.versionstamp === null || entry.invalid) throw new Error("no order");
  const e = stale ? { ...entry, versionstamp: stale } : entry;
  const next = { ...inStatus(entry.value, status), updatedAt: iso(at) };
  return (await addOrderUpdate(kv.atomic(), e as Deno.KvEntry<Order>, next).commit()).ok;
}

Deno.test("an order's status changes are counted in their hour's bucket, in the change's own commit", async () => {
  await withKv("charts-buckets-", async (kv) => {
    const mint = { ...makeOrder(OWNER, "mint", "pending", 0), createdAt: iso(T0), updatedAt: iso(T0) };
    assert.ok(await createOrder(kv, mint));
    const stale = (await getOrder(kv, mint.id)).versionstamp!;
    assert.ok(await move(kv, mint.id, "processing", T0 + 60_000));
    // A refused commit (the order changed since it was read) counts nothing.
    assert.equal(await move(kv, mint.id, "failed", T0 + 70_000, stale), false);
    assert.ok(await move(kv, mint.id, "minting", T0 + HOUR_MS));
    assert.ok(await move(kv, mint.id, "completed", T0 + HOUR_MS + 5_000)); // 3,605 s after the deposit was seen
    const burn = { ...makeOrder(OWNER, "burn", "pending", 1), createdAt: iso(T0), updatedAt: iso(T0) };
    assert.ok(await createOrder(kv, burn));

    const [h0, h1] = await readHourBuckets(kv, T0 + HOUR_MS, 2);
    assert.equal(h0.hour, hourOf(T0));
    assert.deepEqual(Object.fromEntries(h0.entered), { "mint/pending": 1, "mint/processing": 1, "burn/pending": 1 });
    assert.deepEqual(Object.fromEntries(h1.entered), { "mint/minting": 1, "mint/completed": 1 });
    assert.ok(h0.latency.every((n) => n === 0));
    const bucket = MINT_LATENCY_BUCKETS_SECONDS.indexOf(7200);
    assert.equal(latencyBucket(3605), bucket);
    assert.deepEqual(h1.latency.map((n, i) => [i, n]).filter(([, n]) => n > 0), [[bucket, 1]]);
    // Stored as the KV counters the commit summed into.
    const stored = await kv.get<Deno.KvU64>(orderBucketKey(hourOf(T0), "mint", "pending"));
    assert.equal(stored.value?.value, 1n);
  });
});

Deno.test("latency buckets: bounds are inclusive, beyond the last bound is the overflow bucket", () => {
  assert.equal(latencyBucket(0), 0);
  assert.equal(latencyBucket(1), 0);
  assert.equal(latencyBucket(1.001), 1);
  assert.equal(latencyBucket(14400), MINT_LATENCY_BUCKETS_SECONDS.length - 1);
  assert.equal(latencyBucket(14401), MINT_LATENCY_BUCKETS_SECONDS.length);
});

Deno.test("percentiles from fixed buckets: the upper bound of the bucket holding the rank", () => {
  const counts = new Array(MINT_LATENCY_BUCKETS_SECONDS.length + 1).fill(0);
  assert.equal(quantile(counts, 0.5), null);
  counts[2] = 90; // <= 5 s
  counts[6] = 9; // <= 60 s
  counts[MINT_LATENCY_BUCKETS_SECONDS.length] = 1; // > 4 h
  assert.deepEqual(quantile(counts, 0.5), { seconds: 5 });
  assert.deepEqual(quantile(counts, 0.9), { seconds: 5 });
  assert.deepEqual(quantile(counts, 0.95), { seconds: 60 });
  assert.deepEqual(quantile(counts, 1), { above: 14400 });
});

Deno.test("pruning deletes the buckets of hours before the cutoff and keeps the rest", async () => {
  await withKv("charts-prune-", async (kv) => {
    const old = hourOf(T0) - 50 * HOUR_MS;
    const kept = hourOf(T0) - 47 * HOUR_MS;
    await kv.atomic()
      .sum(orderBucketKey(old, "mint", "pending"), 3n)
      .sum(latencyBucketKey(old, 2), 1n)
      .sum(orderBucketKey(kept, "burn", "completed"), 2n)
      .commit();
    assert.equal(await pruneChartBuckets(kv, T0 - 48 * HOUR_MS), 2);
    assert.equal((await kv.get(orderBucketKey(old, "mint", "pending"))).versionstamp, null);
    assert.equal((await kv.get(latencyBucketKey(old, 2))).versionstamp, null);
    assert.equal((await kv.get<Deno.KvU64>(orderBucketKey(kept, "burn", "completed"))).value?.value, 2n);
    assert.equal(await pruneChartBuckets(kv, T0 - 48 * HOUR_MS), 0);
  });
});

Deno.test("chart samples on a started sim server: lag and funds per chain, a commit only when something moved", async () => {
  const server = await startTestServer({ PIPELINE: "on" });
  try {
    const kv = server.services.kv;
    const ctx = server.services.pipeline!;
    const enabled = ctx.settings.enabledChains;
    // The runtime's own tick takes the first sample at start.
    let sample: ChartSample | null = null;
    for (let i = 0; !sample && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 25));
      sample = await latestSample(kv);
    }
    assert.ok(sample, "the chart samples tick took no sample");
    // Stopped, so only this test's ticker (on its own clock) looks from here on; the KV and chains stay open.
    await server.pipeline!.stop();
    const first: ChartSample = (await latestSample(kv))!;
    assert.deepEqual(Object.keys(first.lag).sort(), [...enabled].sort());
    for (const chain of NATIVE_CHAINS) {
      const f = first.funds[chain]!;
      assert.match(f.hot ?? "", /^\d+$/, `${chain} hot`);
      assert.equal(f.cold, "0", `${chain} cold: no cold address, nothing swept`);
      assert.equal(f.waiting, "0", `${chain} waiting`);
    }
    // base's tip as its reader says, `ahead` blocks further (a live chain's tip moving while its watcher is idle).
    let ahead = 0;
    const chains = Object.create(ctx.chains) as Chains;
    chains.reader = (c) => {
      const r = ctx.chains.reader(c);
      if (c !== "base") return r;
      const moved = Object.create(r) as ChainReader;
      moved.tip = async () => {
        const t = await r.tip();
        return { ...t, number: t.number + ahead };
      };
      return moved;
    };
    let clock = first.at + 60_000;
    const ticker = chartSampleTicker({ ...ctx, chains, now: () => new Date(clock) }, enabled, 10 * 60_000);
    assert.equal(await ticker(), "skipped", "a sample of another process within the period");
    clock += 10 * 60_000;
    // The cursors the stop stored may have moved a lag since the runtime's sample.
    assert.ok(["unchanged", "written"].includes(await ticker()));
    ahead = 2; // less than half a period of base's blocks: the same for the chart
    clock += 10 * 60_000;
    assert.equal(await ticker(), "unchanged", "a lag wandering by a few blocks commits nothing");
    clock += 1_000;
    assert.equal(await ticker(), "skipped", "looked at less than a period ago");
    clock += 3 * HOUR_MS;
    assert.equal(await ticker(), "unchanged", "hours at rest: nothing committed");
    // What is past keeping goes on the next look: a bucket 49 h old, and samples older than 25 h but the newest.
    const old = hourOf(clock) - 49 * HOUR_MS;
    await kv.atomic().sum(orderBucketKey(old, "mint", "pending"), 1n).commit();
    for (const hoursAgo of [30, 26]) await writeSample(kv, { ...first, at: clock - hoursAgo * HOUR_MS });
    ahead = 1_000;
    clock += 10 * 60_000;
    assert.equal(await ticker(), "written", "a lag that moved by more than half a period of blocks is stored");
    assert.equal((await kv.get(orderBucketKey(old, "mint", "pending"))).versionstamp, null);
    const now = clock;
    const kept = await readSamples(kv, now - 25 * HOUR_MS);
    const at26 = now - 10 * 60_000 - 26 * HOUR_MS;
    assert.equal(kept[0].at, at26, "the newest sample before the window says what held when it starts");
    const all: number[] = [];
    for await (const e of kv.list<ChartSample>({ prefix: ["chart_sample"] })) all.push(e.value.at);
    assert.equal(all[0], at26, "the older one is deleted");
    const stored = kept.at(-1)!;
    assert.equal(stored.at, now);
    assert.ok(stored.lag.base! >= 1_000, `base lag ${stored.lag.base}`);
    // The read the dashboard draws: 24 hours ending with the current one, the samples since and the one before.
    const data = await readCharts(kv, new Date(now), enabled);
    assert.equal(data.hours.length, 24);
    assert.equal(data.hours.at(-1), hourOf(now));
    assert.equal(data.samples.at(-1)!.at, now);
    assert.ok(data.samples[0].at < data.hours[0]);
  } finally {
    await server.close();
  }
});

// ---- the SVG ----

const HOURS = Array.from({ length: 24 }, (_, i) => hourOf(T0) - (23 - i) * HOUR_MS);
const empty = (n = 24) => new Array(n).fill(0);

function data(over: Partial<ChartData> = {}): ChartData {
  return {
    hours: HOURS,
    entered: [],
    mintLatency: HOURS.map(() => ({ completed: 0, p50: null, p95: null })),
    samples: [],
    chains: ["sol", "base"],
    ...over,
  };
}

/** The markup with the whitespace between tags removed (deno fmt lays out the templates). */
const flat = (h: unknown) => String(h).replace(/>\s+</g, "><").replace(/\s+/g, " ");

/** The attributes of every `<tag ...>` in `svg` with `class="cls"`. */
function elements(svg: string, tag: string, cls: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const m of svg.matchAll(new RegExp(`<${tag}\\s([^>]*)>`, "g"))) {
    const attrs = Object.fromEntries([...m[1].matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]]));
    if (attrs.class === cls) out.push(attrs);
  }
  return out;
}

Deno.test("orders chart: stacked bars in proportion to the counts, with the numbers in a table", async () => {
  const mintCompleted = empty(), burnPending = empty();
  mintCompleted[23] = 6;
  burnPending[23] = 4;
  mintCompleted[20] = 2;
  const out = flat(
    await ordersChart(data({
      entered: [
        { type: "mint", status: "completed", counts: mintCompleted },
        { type: "burn", status: "pending", counts: burnPending },
      ],
    })),
  );
  assert.match(out, /<title id="chart-orders-title">Orders per hour by status, last 24 h<\/title>/);
  assert.match(out, /<desc id="chart-orders-desc">[^<]*12 status changes in all/);
  assert.doesNotMatch(out, /style=|<script/);
  const bars = elements(out, "rect", "bar");
  assert.deepEqual(bars.map((b) => [b["data-hour"], b["data-series"], b["data-count"]]), [
    [new Date(HOURS[20]).toISOString().slice(11, 16), "mint/completed", "2"],
    [new Date(HOURS[23]).toISOString().slice(11, 16), "mint/completed", "6"],
    [new Date(HOURS[23]).toISOString().slice(11, 16), "burn/pending", "4"],
  ]);
  // The axis tops at 10 (niceCeil of 10); the plot is 156 px high: 6 -> 93.6 px, 4 -> 62.4 px, stacked.
  const h = bars.map((b) => Number(b.height));
  assert.deepEqual(h, [31.2, 93.6, 62.4]);
  assert.equal(Number(bars[2].y) + h[2], Number(bars[1].y), "stacked on the bar below");
  assert.match(out, /<table id="chart-orders-table">[\s\S]*<td class="num">6<\/td><td class="num">4<\/td>/);
  assert.equal(niceCeil(10), 10);
  assert.equal(niceCeil(11), 20);
  assert.equal(niceCeil(0), 1);
});

Deno.test("latency chart: a p50 and a p95 point per hour with mints, the values in its table", async () => {
  const mintLatency = HOURS.map(() => ({ completed: 0, p50: null, p95: null } as ChartData["mintLatency"][number]));
  mintLatency[22] = { completed: 40, p50: { seconds: 5 }, p95: { seconds: 60 } };
  mintLatency[23] = { completed: 1, p50: { above: 14400 }, p95: { above: 14400 } };
  const out = flat(await latencyChart(data({ mintLatency })));
  assert.equal(elements(out, "circle", "p50").length, 2);
  const p95 = elements(out, "circle", "p95");
  assert.equal(p95.length, 2);
  assert.ok(Number(p95[1].cy) < Number(p95[0].cy), "beyond every bound sits above 60 s");
  assert.match(out, /<td class="num">40<\/td><td class="num">≤ 5 s<\/td><td class="num">≤ 60 s<\/td>/);
  assert.match(out, /<td class="num">&gt; 4 h<\/td>/);
  assert.match(out, /41 mints completed in all/);
});

Deno.test("funds chart: heights from bigint amounts beyond 2^53, exact amounts in coin units in the table", async () => {
  const top = 2n ** 80n; // far beyond a float's exact integers
  const samples = [
    { at: HOURS[0], lag: {}, funds: { sol: { hot: top.toString(), cold: (top / 2n).toString(), waiting: "0" } } },
    { at: HOURS[12], lag: {}, funds: { sol: { hot: (top / 4n + 1n).toString(), cold: null, waiting: "1" } } },
  ];
  const out = flat(await fundsChart(data({ samples }), "sol", new Date(HOURS[23] + 1000)));
  const paths = Object.fromEntries(elements(out, "path", "funds").map((p) => [p["data-part"], p.d]));
  // Plot from y=18 to y=174 (156 px): the top at 18, half at 96, a quarter (and 1) 39 px up: 135 (bigint floor).
  assert.match(paths.hot, /^M56\.0 18\.0 H\d+\.\d V135\.0 H708\.0$/);
  assert.match(paths.cold, /^M56\.0 96\.0 H\d+\.\d$/, "broken where the cold balance was unknown");
  assert.match(paths.waiting, /^M56\.0 174\.0 H\d+\.\d V174\.0 H708\.0$/);
  assert.match(out, /title="1208925819614629174706176 smallest units">1,208,925,819,614,629\.174706176 SOL/);
  assert.match(out, /<span class="na">unknown<\/span>/);
  assert.match(out, /<title id="chart-funds-sol-title">sol: hot and cold balances against waiting payouts/);
});

Deno.test("funds and lag charts: a sample taken just now shows as a dot (a zero-length step with round caps)", async () => {
  const now = HOURS[23] + 1000;
  const samples = [{ at: now, lag: { sol: 3 }, funds: { sol: { hot: "5", cold: "0", waiting: "0" } } }];
  const funds = flat(await fundsChart(data({ samples }), "sol", new Date(now)));
  const hot = elements(funds, "path", "funds").find((p) => p["data-part"] === "hot")!;
  const [, x, , end] = hot.d.match(/^M(\d+\.\d) (\d+\.\d) H(\d+\.\d)$/)!;
  assert.equal(x, end, "the step has no length: without round caps nothing would be drawn");
  assert.equal(hot["stroke-linecap"], "round");
  const lag = elements(flat(await lagChart(data({ samples }), new Date(now))), "path", "lag");
  assert.ok(lag.length > 0 && lag.every((p) => p["stroke-linecap"] === "round"));
});
