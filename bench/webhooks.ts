/**
 * Webhook delivery figures (docs/webhooks.md), in process over real HTTP to receivers on 127.0.0.1:
 * 1. Delivery throughput and latency: BENCH_EVENTS events (4 status changes per order) handed to the webhook fan-out
 *    in batches, as the sequencer does, for one wallet with a fast endpoint; then again with a slow endpoint
 *    (BENCH_SLOW_MS per answer) registered beside it. Events/s delivered to the fast endpoint, and latency from the
 *    event's createdAt (the status change) to its arrival, p50/p99.
 * 2. The pipeline with real sim mints: BENCH_ORDERS sol deposits over 10 wallets, each with a fast endpoint, without and
 *    with a slow endpoint beside it: orders/s (first deposit to last order completed) and the fast endpoint's latency
 *    from status change to arrival (sequencer and worker polling included).
 * Run: deno task bench:webhooks   (BENCH_EVENTS=2000, BENCH_ORDERS=60, BENCH_SLOW_MS=2000)
 */
import { newOrderId, type OrderStatus } from "../model/order.ts";
import type { OrderEvent } from "../kv/order_events.ts";
import { webhookSink } from "../kv/webhooks.ts";
import { depositAddress, sim } from "../tests/support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "../tests/support/server.ts";
import { syntheticOrderEvent } from "../tests/support/order_events.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const EVENTS = num("BENCH_EVENTS", 2000);
const ORDERS = num("BENCH_ORDERS", 60);
const SLOW_MS = num("BENCH_SLOW_MS", 2000);
const WALLETS = 10;
const BATCH = 50;
const ENV = { PIPELINE: "on", SIM_BLOCK_MS: "50", SWEEP_MS: "50", WEBHOOK_TIMEOUT_MS: "10000" };
const STATUSES: OrderStatus[] = ["pending", "processing", "minting", "completed"];

function receiver(delayMs = 0) {
  const latencies: number[] = [];
  let lastAt = 0;
  let completed = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const event = JSON.parse(await req.text()) as OrderEvent;
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    lastAt = Date.now();
    latencies.push(lastAt - Date.parse(event.createdAt));
    if (event.type === "order.completed") completed++;
    return new Response("ok");
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    latencies,
    lastAt: () => lastAt,
    completed: () => completed,
    close: () => server.shutdown(),
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function register(server: TestServer, token: string, url: string) {
  const res = await call(server, "POST", "/webhooks/endpoints", { token, body: { url } });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
}

// ---- 1. delivery throughput through the fan-out ----

async function deliveryRun(withSlow: boolean) {
  const server = await startTestServer(ENV);
  const fast = receiver();
  const slow = receiver(SLOW_MS);
  try {
    const wallet = randomWallet();
    const owner = wallet.toLowerCase();
    const token = await tokenFor(server, wallet);
    await register(server, token, fast.url);
    if (withSlow) await register(server, token, slow.url);
    const orders = Array.from({ length: Math.ceil(EVENTS / STATUSES.length) }, () => newOrderId());
    const events: OrderEvent[] = [];
    let seq = 0;
    for (const status of STATUSES) {
      for (const id of orders) {
        if (events.length >= EVENTS) break;
        events.push(event(owner, ++seq, id, status));
      }
    }
    const sink = webhookSink();
    const started = Date.now();
    for (let i = 0; i < events.length; i += BATCH) {
      const batch = events.slice(i, i + BATCH).map((e) => ({ ...e, createdAt: new Date().toISOString() }));
      const add = await sink.prepare(server.services.kv, batch);
      const atomic = server.services.kv.atomic();
      for (const e of batch) add(atomic, e);
      if (!(await atomic.commit()).ok) throw new Error("fan-out commit failed");
    }
    await until("the fast endpoint's deliveries", () => fast.latencies.length >= events.length, 300_000);
    const seconds = (fast.lastAt() - started) / 1000;
    return {
      rate: events.length / seconds,
      p50: pct(fast.latencies, 50),
      p99: pct(fast.latencies, 99),
      slowDelivered: slow.latencies.length,
      seconds,
      count: events.length,
    };
  } finally {
    await server.close();
    await fast.close();
    await slow.close();
  }
}

function event(owner: string, seq: number, orderId: string, status: OrderStatus): OrderEvent {
  return syntheticOrderEvent(owner, seq, orderId, status);
}

// ---- 2. the pipeline with real mints ----

async function pipelineRun(withSlow: boolean) {
  const server = await startTestServer({ ...ENV, SIM_CONFIRMATION_TIMEOUT_MS: "120000" });
  const fast = receiver();
  const slow = receiver(SLOW_MS);
  try {
    const wallets: { token: string; address: string }[] = [];
    for (let w = 0; w < WALLETS; w++) {
      const wallet = randomWallet();
      const token = await tokenFor(server, wallet);
      await register(server, token, fast.url);
      if (withSlow) await register(server, token, slow.url);
      wallets.push({ token, address: await depositAddress(server, token, "sol", "base") });
    }
    const started = Date.now();
    for (let i = 0; i < ORDERS; i++) {
      const w = wallets[i % WALLETS];
      await sim(server, "deposits", { chain: "sol", address: w.address, amount: `${500_000_000 + i}` });
    }
    let completedAt = 0;
    await until("every order completed", async () => {
      let done = 0;
      for (const w of wallets) {
        const res = await call(server, "GET", "/orders?limit=100&status=completed", { token: w.token });
        done += res.body.data.pagination.total;
      }
      completedAt = Date.now();
      return done >= ORDERS;
    }, 300_000);
    const seconds = (completedAt - started) / 1000;
    // Every order's completion event reaches the fast endpoint (its last event).
    await until("the fast endpoint's deliveries", () => fast.completed() >= ORDERS, 120_000);
    return {
      ordersPerSecond: ORDERS / seconds,
      seconds,
      delivered: fast.latencies.length,
      p50: pct(fast.latencies, 50),
      p99: pct(fast.latencies, 99),
      slowDelivered: slow.latencies.length,
    };
  } finally {
    await server.close();
    await fast.close();
    await slow.close();
  }
}

const ms = (x: number) => `${Math.round(x)} ms`;

console.log(`Webhook deliveries, ${EVENTS} events (4 per order) through the fan-out to a fast endpoint on 127.0.0.1`);
for (const withSlow of [false, true]) {
  const r = await deliveryRun(withSlow);
  const label = withSlow ? `fast endpoint, a ${SLOW_MS} ms endpoint beside it` : "fast endpoint only";
  console.log(
    `  ${label.padEnd(44)} ${r.rate.toFixed(0).padStart(6)} events/s delivered  latency p50 ${ms(r.p50)}, p99 ${
      ms(r.p99)
    }` + (withSlow ? `  (slow endpoint got ${r.slowDelivered} meanwhile)` : ""),
  );
}
console.log(`Pipeline, ${ORDERS} sol mints over ${WALLETS} wallets, each wallet with a fast endpoint`);
for (const withSlow of [false, true]) {
  const r = await pipelineRun(withSlow);
  const label = withSlow ? `and a ${SLOW_MS} ms endpoint per wallet` : "fast endpoint only";
  console.log(
    `  ${label.padEnd(44)} ${r.ordersPerSecond.toFixed(1).padStart(6)} orders/s  status change -> delivery p50 ${
      ms(r.p50)
    }, p99 ${ms(r.p99)} (${r.delivered} events)` + (withSlow ? `  (slow endpoint got ${r.slowDelivered})` : ""),
  );
}
