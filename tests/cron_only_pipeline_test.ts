/**
 * The pipeline driven by cron alone, as on Deno Deploy: the service is built in deploy mode (secrets from the
 * environment, no KV queue, cron leases) on the simulated chains, its runtime is started without a single timer, and
 * only the handlers that `registerCronJobs` hands to a recorder are run, all at once per simulated minute as Deno
 * runs them, with the pipeline's clock moved a minute each time (blocks come from the sim-blocks tick, confirmations
 * and deadlines read the moved clock). A deposit on every native chain becomes a completed mint (each EVM chain a
 * destination once) and a burn towards every native chain is paid. Also printed: how many cron periods pass between
 * a source transaction reaching its required confirmations and the outgoing transaction's broadcast. Once everything
 * has ended, a cron minute commits one thing to KV: the process's watchers' looks (actors/watcher_looks.ts), what the
 * dashboard's health reads at rest.
 */
import assert from "node:assert/strict";
import { buildServices, createApp, pipelineRuntime } from "../app.ts";
import { type CronJob, cronJobs, registerCronJobs } from "../actors/cron.ts";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, nativeChainOfUAsset } from "../chains/catalog.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { getOrder } from "../kv/orders.ts";
import { outside } from "./support/pipeline.ts";
import { call, randomWallet, type TestServer, tokenFor } from "./support/server.ts";
import { deployModeConfig } from "./support/deploy.ts";

const MINUTE = 60_000;

Deno.test("cron alone, no timer: deposits on every native chain mint and burns to every native chain pay", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cron-only-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const config = await deployModeConfig(kvPath);
  const services = await buildServices(config);
  let clock = Date.now();
  const ctx = services.pipeline!;
  ctx.now = () => new Date(clock);
  const logs: string[] = [];
  ctx.log = (msg) => logs.push(msg);
  const runtime = pipelineRuntime(services)!;
  runtime.startCronOnly();
  const jobs: CronJob[] = [];
  registerCronJobs((name, schedule, handler) => jobs.push({ name, schedule, handler }), cronJobs(runtime));
  const commits = countCommits(services.kv);
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, createApp(services).fetch);
  const server = { url: `http://127.0.0.1:${http.addr.port}`, services } as TestServer;
  let minutes = 0;
  /** One cron minute: the clock moves on and every job due this minute runs, all at once. */
  const cronMinute = async () => {
    clock += MINUTE;
    minutes++;
    const due = jobs.filter((j) => j.schedule === "* * * * *" || minutes % 10 === 0);
    await Promise.all(due.map((j) => j.handler()));
  };
  try {
    assert.deepEqual(jobs.map((j) => j.name), [
      "pipeline-blocks",
      "pipeline-watch",
      "pipeline-treasury",
      "pipeline-orders",
      "pipeline-events",
      "pipeline-checks",
      "pipeline-housekeeping",
    ]);
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    // A deposit on every native chain, each to another EVM chain.
    for (const [i, chain] of NATIVE_CHAINS.entries()) {
      const res = await call(server, "POST", "/mint/wallets", {
        token,
        body: { chain, destinationChain: EVM_CHAINS[i % EVM_CHAINS.length] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      await simPost(server, "deposits", {
        chain,
        address: res.body.data.address,
        amount: (NATIVE[chain].minimumDeposit * 3n).toString(),
      });
    }
    // A burn towards every native chain, each from another EVM chain.
    const destinations = new Map<string, string>();
    for (const [i, native] of NATIVE_CHAINS.entries()) {
      const destination = outside.depositAddress(native, 7);
      destinations.set(native, destination);
      const res = await call(server, "POST", "/burn/wallets", {
        token,
        body: { destinationChain: native, destinationAddress: destination, ...(native === "xrp" ? { memo: "7" } : {}) },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const evm = EVM_CHAINS[(i + 1) % EVM_CHAINS.length];
      const amount = (NATIVE[native].uAsset.minimumBurnAmount * 2n).toString();
      const asset = NATIVE[native].uAsset.symbol;
      await simPost(server, "faucet", { chain: evm, address: wallet, token: asset, amount });
      await simPost(server, "transfers", { chain: evm, from: wallet, token: asset, amount });
    }

    // Cron minutes until all ten orders have ended; per order, the minute its source transaction had its required
    // confirmations and the minute its outgoing transaction was recorded and broadcast.
    const confirmedAt = new Map<string, number>();
    const sentAt = new Map<string, number>();
    let orders: { id: string; status: string }[] = [];
    for (let i = 0; i < 40; i++) {
      await cronMinute();
      orders = (await call(server, "GET", "/orders?limit=100", { token })).body.data.orders;
      for (const o of orders) {
        const stored = (await getOrder(services.kv, o.id)).value!;
        const source = stored.details.source;
        const status = await new SimLedger(services.kv, stored.sourceChain).txStatus(source.txHash);
        const required = ctx.settings.confirmations(stored.sourceChain);
        if (status.state === "included" && status.confirmations >= required && !confirmedAt.has(o.id)) {
          confirmedAt.set(o.id, minutes);
        }
        if (stored.details.intent && !sentAt.has(o.id)) sentAt.set(o.id, minutes);
      }
      if (orders.length === 10 && orders.every((o) => ["completed", "failed", "cancelled"].includes(o.status))) break;
    }
    assert.equal(orders.length, 10, JSON.stringify(orders));
    for (const o of orders) assert.equal(o.status, "completed", `${JSON.stringify(o)}\n${logs.join("\n")}`);
    const mints = orders.filter((o) => (o as { type?: string }).type === "mint");
    assert.equal(mints.length, NATIVE_CHAINS.length);
    for (const native of NATIVE_CHAINS) {
      const ledger = new SimLedger(services.kv, native);
      const paid = await ledger.balance(destinations.get(native)!, "native");
      assert.ok(paid > 0n, `${native}: the burn's payout arrived`);
    }
    for (const [i, chain] of NATIVE_CHAINS.entries()) {
      const evm = EVM_CHAINS[i % EVM_CHAINS.length];
      const minted = await new SimLedger(services.kv, evm).balance(wallet.toLowerCase(), NATIVE[chain].uAsset.symbol);
      assert.ok(minted > 0n, `${chain} -> ${evm}: minted`);
      assert.equal(nativeChainOfUAsset(NATIVE[chain].uAsset.symbol), chain);
    }
    // Each chain needs at most 3 sim blocks for its confirmations, one per cron minute while work waits: a run that
    // takes much longer means some minute made no block (or took no step) although something waited.
    assert.ok(minutes <= 12, `ten orders took ${minutes} cron minutes`);
    const lags = orders.map((o) => sentAt.get(o.id)! - confirmedAt.get(o.id)!);
    for (const lag of lags) assert.ok(lag >= 0 && lag <= 1, `broadcast ${lag} cron periods after confirmation`);
    console.log(
      `cron only: all 10 orders completed in ${minutes} cron minutes; confirmation -> broadcast: ` +
        `${lags.join(", ")} cron period(s) (max ${Math.max(...lags)})`,
    );

    // Idle: once the sweeps that follow the mints are done, the sim chains' last blocks made (SIM_ACTIVE_TAIL_BLOCKS
    // after their last transaction) and the cursors stored, a cron minute commits only the watchers' looks: one set.
    let quiet = 0;
    for (let i = 0; i < 30 && quiet < 3; i++) {
      const before = commits.n;
      commits.heads.length = 0;
      await cronMinute();
      quiet = commits.n === before + 1 && commits.heads.join() === "watcher_looks" ? quiet + 1 : 0;
    }
    assert.equal(quiet, 3, "three idle cron minutes in a row with one KV commit each: the watchers' looks");
    // Deploy mode writes nothing beside the KV file: no generated secret.
    const files = [];
    for await (const e of Deno.readDir(dir)) files.push(e.name);
    assert.deepEqual(files.filter((f) => !f.startsWith("kv.sqlite3")), []);
  } finally {
    await http.shutdown();
    await runtime.stop();
    services.kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

async function simPost(server: TestServer, path: string, body: unknown) {
  const res = await call(server, "POST", `/sim/${path}`, { body });
  assert.equal(res.status, 201, `POST /sim/${path}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Counts commits on `kv` (atomic commits, sets, deletes). */
function countCommits(kv: Deno.Kv) {
  /** `heads`: the first key part of each `kv.set` (the looks record is one). */
  const counter = { n: 0, heads: [] as string[] };
  const atomic = kv.atomic.bind(kv);
  const set = kv.set.bind(kv);
  const del = kv.delete.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => {
      counter.n++;
      return commit();
    };
    return op;
  };
  kv.set = (key, value, options) => {
    counter.n++;
    counter.heads.push(String(key[0]));
    return set(key, value, options);
  };
  kv.delete = (key) => {
    counter.n++;
    return del(key);
  };
  return counter;
}
