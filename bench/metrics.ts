/**
 * The cost of a GET /metrics scrape with 10,000 orders in KV, the real service in process (sim chains, pipeline on;
 * the seeded orders are not due, so nothing steps them; the pipeline is stopped before measuring, its adapters kept),
 * in two shapes of the same count:
 * - `backlog`: one owner, mints and burns alternating, every third one pending (bench/support/seed_orders.ts): the
 *   in-flight scan reads each of the 3,334 pending orders;
 * - `owners`: every order completed, spread over BENCH_METRICS_OWNERS owners: the order gauges sum the per-owner
 *   counters, about 8 entries per owner here (at most 22).
 * For each: a cold scrape over HTTP (every part read), a warm one (the parts' few seconds of reuse), and
 * BENCH_METRICS_RUNS reads of every part with nothing reused (a new registry each), with the KV reads each made
 * (tests/support/kv_reads.ts: a list counts once however many entries it returns; a getMany counts once).
 * Run: deno task bench:metrics   (BENCH_METRICS_ORDERS=10000, BENCH_METRICS_OWNERS=1000, BENCH_METRICS_RUNS=5)
 */
import { Metrics } from "../actors/metrics.ts";
import { addOrderCreate } from "../kv/orders.ts";
import { metricsSources } from "../routes/metrics.ts";
import { countReads } from "../tests/support/kv_reads.ts";
import { makeOrder } from "../tests/support/orders.ts";
import { parsePrometheusText, valueOf } from "../tests/support/prometheus.ts";
import { operatorKeyFor, randomWallet, startTestServer, type TestServer } from "../tests/support/server.ts";
import { positiveIntEnv as int } from "./support/env.ts";
import { seedOrders } from "./support/seed_orders.ts";

const ORDERS = int("BENCH_METRICS_ORDERS", 10_000);
const OWNERS = int("BENCH_METRICS_OWNERS", 1_000);
const RUNS = int("BENCH_METRICS_RUNS", 5);
const PARTS = ["orders", "in_flight", "records", "chain_tips", "payout_funds"];

async function seedOwners(kv: Deno.Kv, count: number, owners: number) {
  const wallets = Array.from({ length: owners }, () => randomWallet());
  for (let i = 0; i < count; i += 50) {
    const atomic = kv.atomic();
    for (let j = i; j < Math.min(count, i + 50); j++) {
      addOrderCreate(atomic, makeOrder(wallets[j % owners], j % 2 ? "mint" : "burn", "completed", j));
    }
    if (!(await atomic.commit()).ok) throw new Error("seeding failed");
  }
}

const ms = (start: number) => (performance.now() - start).toFixed(1).padStart(7);

async function measure(name: string, server: TestServer) {
  // The pipeline ran long enough to scan the sim chains once (cursors to measure lag from); stopped now, so the reads
  // counted are the scrapes' alone. Its chain adapters stay, for the tips and hot-wallet balances.
  await server.pipeline?.stop();
  const reads = countReads(server.services.kv);
  const key = await operatorKeyFor(server, ["metrics"], "bench");
  const scrape = async () => {
    reads.reset();
    const start = performance.now();
    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text}`);
    // The operator key's check is one read of the request, not of the metrics.
    return { took: ms(start), reads: reads.reads.length, text };
  };
  const cold = await scrape();
  const m = parsePrometheusText(cold.text);
  const orders = ["mint", "burn"].reduce(
    (sum, type) =>
      sum +
      ["pending", "completed"].reduce((s, status) => s + (valueOf(m, "issuance_orders", { type, status }) ?? 0), 0),
    0,
  );
  console.log(`\n${name}: ${orders} orders counted by the gauges, ${cold.text.length} bytes of text`);
  console.log(`  GET /metrics, cold (every part read)   ${cold.took} ms  ${cold.reads} KV reads`);
  const warm = await scrape();
  console.log(`  GET /metrics, warm (parts reused)      ${warm.took} ms  ${warm.reads} KV reads`);

  const sources = metricsSources(server.services);
  const partTimes = new Map<string, number[]>();
  const totals: number[] = [];
  let partReads = 0;
  for (let i = 0; i < RUNS; i++) {
    const fresh = new Metrics({ processDefaults: false });
    reads.reset();
    const start = performance.now();
    const text = await fresh.scrape(sources);
    totals.push(performance.now() - start);
    partReads = reads.reads.length;
    const parsed = parsePrometheusText(text);
    for (const part of PARTS) {
      const s = valueOf(parsed, "issuance_metrics_part_read_seconds", { part });
      if (s !== undefined) partTimes.set(part, [...(partTimes.get(part) ?? []), s * 1000]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `  every part re-read, median of ${RUNS}      ${median(totals).toFixed(1).padStart(7)} ms  ${partReads} KV reads`,
  );
  for (const part of PARTS) {
    const t = partTimes.get(part);
    if (t) console.log(`    ${part.padEnd(14)} ${median(t).toFixed(1).padStart(7)} ms (parts are read in parallel)`);
  }
}

for (const shape of ["backlog", "owners"] as const) {
  const server = await startTestServer({ PIPELINE: "on" });
  try {
    const start = performance.now();
    if (shape === "backlog") await seedOrders(server.services.kv, randomWallet(), ORDERS);
    else await seedOwners(server.services.kv, ORDERS, OWNERS);
    const label = shape === "backlog"
      ? `${ORDERS} orders, one owner, every third pending`
      : `${ORDERS} completed orders over ${OWNERS} owners`;
    console.log(`\nseeded ${label} in ${ms(start).trim()} ms`);
    await measure(label, server);
  } finally {
    await server.close();
  }
}
