/**
 * End-to-end pipeline throughput on the sim chains, in process: N deposits spread over every native chain, timed
 * from the first deposit to the last order completed; the KV commits each order costs, counted by wrapping the
 * server's KV; and the raw local KV atomic-commit rate measured in the same run, so the figures compare across
 * machines as a ratio.
 * Run: deno task bench:pipeline   (BENCH_ORDERS=500, BENCH_BLOCK_MS=50, BENCH_SWEEP_MS=100, BENCH_CONCURRENCY=32)
 */
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { listOrders } from "../kv/orders.ts";
import { sim } from "../tests/support/pipeline.ts";
import { call, randomWallet, startTestServer, tokenFor } from "../tests/support/server.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const ORDERS = num("BENCH_ORDERS", 500);
const BLOCK_MS = num("BENCH_BLOCK_MS", 50);
const SWEEP_MS = num("BENCH_SWEEP_MS", 100);
const CONCURRENCY = num("BENCH_CONCURRENCY", 32);
const WALLETS = 10;
const RAW_COMMITS = 2_000;
const RAW_WRITERS = 32;

// ---- counting commits ----

type Kind = "orders" | "sim chains" | "watchers, leases" | "other";

/** What a commit was for, by the first key it writes (kv/ and chains/sim/ own these prefixes). */
function kindOf(key: Deno.KvKey | undefined): Kind {
  const head = String(key?.[0]);
  if (head === "sim") return "sim chains";
  if (head === "lease" || head === "watch_cursor") return "watchers, leases";
  if (/^(order|pipeline_due|transfer_seen|held_transfer)/.test(head)) return "orders";
  return "other";
}

class CommitCounter {
  counts = new Map<Kind, number>();
  conflicts = 0;
  total = 0;

  reset() {
    this.counts.clear();
    this.conflicts = 0;
    this.total = 0;
  }

  count(kind: Kind, ok: boolean) {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    this.total++;
    if (!ok) this.conflicts++;
  }

  get(kind: Kind) {
    return this.counts.get(kind) ?? 0;
  }

  /**
   * Wraps `kv.atomic()`, `kv.set` and `kv.delete` (on top of kv/open.ts's lock retries, so a retried commit counts
   * once): every commit is counted under the kind of the first key it writes.
   */
  install(kv: Deno.Kv) {
    const atomic = kv.atomic.bind(kv);
    const set = kv.set.bind(kv);
    const del = kv.delete.bind(kv);
    kv.atomic = () => {
      const op = atomic();
      let first: Deno.KvKey | undefined;
      const note = (key: Deno.KvKey) => (first ??= key);
      const wrap = <M extends "set" | "delete" | "sum" | "min" | "max">(name: M) => {
        const original = (op[name] as (...a: unknown[]) => Deno.AtomicOperation).bind(op);
        (op[name] as unknown) = (key: Deno.KvKey, ...rest: unknown[]) => {
          note(key);
          return original(key, ...rest);
        };
      };
      for (const name of ["set", "delete", "sum", "min", "max"] as const) wrap(name);
      const mutate = op.mutate.bind(op);
      op.mutate = (...mutations) => {
        for (const m of mutations) note(m.key);
        return mutate(...mutations);
      };
      const commit = op.commit.bind(op);
      op.commit = async () => {
        const res = await commit();
        this.count(kindOf(first), res.ok);
        return res;
      };
      return op;
    };
    kv.set = async (key, value, options) => {
      const res = await set(key, value, options);
      this.count(kindOf(key), true);
      return res;
    };
    kv.delete = async (key) => {
      await del(key);
      this.count(kindOf(key), true);
    };
  }
}

// ---- the raw KV rate ----

async function rawCommitRate(path: string): Promise<number> {
  const kv = await Deno.openKv(path);
  try {
    let next = 0;
    const began = performance.now();
    await Promise.all(Array.from({ length: RAW_WRITERS }, async () => {
      for (let i = next++; i < RAW_COMMITS; i = next++) {
        const res = await kv.atomic().check({ key: ["raw", i], versionstamp: null }).set(["raw", i], { i }).commit();
        if (!res.ok) throw new Error("raw commit refused");
      }
    }));
    return RAW_COMMITS / ((performance.now() - began) / 1000);
  } finally {
    kv.close();
  }
}

// ---- the run ----

const counter = new CommitCounter();
const server = await startTestServer({
  PIPELINE: "on",
  SIM_BLOCK_MS: String(BLOCK_MS),
  SWEEP_MS: String(SWEEP_MS),
  SIM_CONFIRMATION_TIMEOUT_MS: "600000",
});
// Installed before any pipeline timer has fired: the runtime's first ticks are scheduled with setTimeout.
counter.install(server.services.kv);
try {
  // Every wallet has an address per (native chain, EVM chain): deposits spread over 250 addresses, as a partner's
  // users would, rather than piling onto a few balance keys of the sim ledger.
  const wallets: { address: string; token: string }[] = [];
  const addresses = new Map<string, string[]>(NATIVE_CHAINS.map((c) => [c, []]));
  for (let w = 0; w < WALLETS; w++) {
    const address = randomWallet().toLowerCase();
    const token = await tokenFor(server, address);
    for (const chain of NATIVE_CHAINS) {
      for (const destinationChain of EVM_CHAINS) {
        const res = await call(server, "POST", "/mint/wallets", { token, body: { chain, destinationChain } });
        if (res.status !== 201) throw new Error(`mint wallet: ${res.status}`);
        addresses.get(chain)!.push(res.body.data.address);
      }
    }
    wallets.push({ address, token });
  }
  const deposits = Array.from({ length: ORDERS }, (_, i) => {
    const chain = NATIVE_CHAINS[i % NATIVE_CHAINS.length];
    const list = addresses.get(chain)!;
    const address = list[Math.floor(i / NATIVE_CHAINS.length) % list.length];
    return { chain, address, amount: (NATIVE[chain].minimumDeposit * BigInt(2 + (i % 7))).toString() };
  });

  // Background commits of an idle pipeline (blocks, watcher cursors, leases), to set the per-order figures apart.
  await new Promise((r) => setTimeout(r, 500));
  counter.reset();
  const idleBegan = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  const idleRate = counter.total / ((performance.now() - idleBegan) / 1000);
  const idleByKind = new Map(counter.counts);
  const idleSeconds = (performance.now() - idleBegan) / 1000;

  counter.reset();
  const steps0 = server.pipeline!.steps;
  const began = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < deposits.length; i = next++) await sim(server, "deposits", deposits[i]);
  }));
  const submitted = performance.now();
  const kv = server.services.kv;
  const count = async (status: "completed" | "failed") => {
    let n = 0;
    for (const w of wallets) n += (await listOrders(kv, w.address, { status, limit: 0, offset: 0 })).total;
    return n;
  };
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [completed, failed] = await Promise.all([count("completed"), count("failed")]);
    if (failed > 0) throw new Error(`${failed} orders failed`);
    if (completed === ORDERS) break;
    if (Date.now() > deadline) throw new Error(`only ${completed} of ${ORDERS} completed after 300 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const done = performance.now();
  const seconds = (done - began) / 1000;
  const steps = server.pipeline!.steps - steps0;
  await server.pipeline!.stop();

  const raw = await rawCommitRate(`${server.dir}/raw.sqlite3`);

  const ordersPerSecond = ORDERS / seconds;
  const perOrder = (kind: Kind) => counter.get(kind) / ORDERS;
  const orderCommits = perOrder("orders");
  const idle = (kind: Kind) => (idleByKind.get(kind) ?? 0) / idleSeconds;
  const f = (n: number, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
  const out = [
    `pipeline: ${ORDERS} deposits over ${NATIVE_CHAINS.length} native chains to ${WALLETS * 25} deposit addresses; ` +
    `sim blocks every ${BLOCK_MS} ms, sweep ${SWEEP_MS} ms, ${CONCURRENCY} HTTP senders`,
    `  deposits submitted over HTTP in ${f((submitted - began) / 1000, 2)} s`,
    `  all ${ORDERS} orders completed ${f(seconds, 2)} s after the first deposit: ` +
    `${f(ordersPerSecond)} orders/s end to end (${f(steps / ORDERS, 2)} actor steps per order)`,
    `  KV commits per order: ${f(orderCommits, 2)} order records (order + indexes + dedupe + schedule), ` +
    `${f(perOrder("sim chains"), 2)} sim chains (deposit, mint, blocks), ` +
    `${f(perOrder("watchers, leases"), 2)} watchers and leases, ${f(perOrder("other"), 2)} other: ` +
    `${f(counter.total / ORDERS, 2)} in all; ${counter.conflicts} commits refused by a check`,
    `  idle pipeline before the run: ${f(idleRate, 0)} commits/s (${f(idle("sim chains"), 0)} sim blocks, ` +
    `${f(idle("watchers, leases"), 0)} watcher cursors and leases), whether or not any order moves`,
    `  raw local KV, same run: ${RAW_COMMITS} small atomic commits, ${RAW_WRITERS} writers, fresh file: ` +
    `${f(raw, 0)} commits/s`,
    `  ratio: ${f(ordersPerSecond)} orders/s x ${f(orderCommits, 2)} commits/order = ` +
    `${f(ordersPerSecond * orderCommits, 0)} commits/s = ${f((ordersPerSecond * orderCommits) / raw, 2)} of the raw ` +
    `rate; every commit of the run: ${f(counter.total / seconds, 0)}/s = ${f(counter.total / seconds / raw, 2)} of it`,
  ];
  console.log(out.join("\n"));
} finally {
  await server.close();
}
