/**
 * Deploy mode's watch budget and the split of watchers between processes (config/watch_plan.ts, actors/ticks.ts,
 * docs/scan-budget.md "Deploy mode"), through the real configuration loading and services:
 * - `WATCH_CHAINS` / `SKIP_WATCH_CHAINS` / `WATCH_BYTES_PER_RUN` / `CRON_RUN_MS` / `WATCHER_LAG_ALERT_MINUTES` are
 *   read and refused with the variable named;
 * - deploy mode refuses at start to watch a live chain whose mainnet volume a cron run cannot read (Solana), naming
 *   the chain, the figures and what to do instead, before any node is asked anything;
 * - a deploy-mode service that skips a chain does not watch it, and a long-running process on the same KV watching
 *   only that chain does;
 * - on a Solana-RPC-shaped server serving mainnet-sized slots, a deploy-mode cron run of the watchers stops at its
 *   byte budget with its cursor stored, each next run goes on from there, and the hidden deposit is credited once.
 */
import assert from "node:assert/strict";
import { buildServices, createApp, pipelineRuntime } from "../app.ts";
import { loadConfig } from "../config/env.ts";
import { chainPlan } from "../config/chain_mode.ts";
import { checkWatchPlan, DEFAULT_WATCH_BYTES_PER_RUN, loadWatchConfig, watchedChains } from "../config/watch_plan.ts";
import { MAINNET_WATCH_BYTES_PER_MINUTE } from "../chains/watch_volume.ts";
import { listOrders } from "../kv/orders.ts";
import { type Cursor, cursorKey, readLease } from "../kv/pipeline.ts";
import { deployModeConfig } from "./support/deploy.ts";
import { evmChainEnv } from "./support/live_env.ts";
import { depositAddress, partner } from "./support/pipeline.ts";
import { startPeerServer, startTestServer, type TestServer } from "./support/server.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { signer as solSigner } from "./support/sol_env.ts";

const MiB = 1024 * 1024;

Deno.test("watch configuration: which chains, the per-run budgets, the lag alert; bad values named", () => {
  const d = loadWatchConfig({});
  assert.equal(d.chains, null, "every enabled chain by default");
  assert.equal(d.bytesPerRun, DEFAULT_WATCH_BYTES_PER_RUN);
  assert.equal(d.cronRunMs, 45_000);
  assert.equal(d.lagAlertMs, 15 * 60_000, "docs/alerts.yml's 15 minutes");
  assert.deepEqual(loadWatchConfig({ WATCH_CHAINS: "sol" }).chains, ["sol"]);
  assert.deepEqual(loadWatchConfig({ WATCH_CHAINS: "none" }).chains, []);
  assert.equal(loadWatchConfig({ WATCH_CHAINS: "all" }).chains, null);
  const enabled = ["sol", "xrp", "doge", "base"] as const;
  assert.deepEqual(watchedChains(loadWatchConfig({ SKIP_WATCH_CHAINS: "sol,xrp" }), enabled), ["doge", "base"]);
  assert.deepEqual(watchedChains(loadWatchConfig({ WATCH_CHAINS: "sol,xrp", SKIP_WATCH_CHAINS: "xrp" }), enabled), [
    "sol",
  ]);
  assert.deepEqual(watchedChains(d, enabled), [...enabled]);
  assert.equal(loadWatchConfig({ WATCH_BYTES_PER_RUN: String(8 * MiB) }).bytesPerRun, 8 * MiB);
  assert.equal(loadWatchConfig({ WATCHER_LAG_ALERT_MINUTES: "5" }).lagAlertMs, 5 * 60_000);
  assert.throws(() => loadWatchConfig({ WATCH_CHAINS: "sol,btc" }), /WATCH_CHAINS must be .*unknown: "btc"/);
  assert.throws(() => loadWatchConfig({ SKIP_WATCH_CHAINS: "all" }), /WATCH_CHAINS=none/);
  assert.throws(() => loadWatchConfig({ WATCH_BYTES_PER_RUN: "1000" }), /WATCH_BYTES_PER_RUN must be from 1048576/);
  assert.throws(() => loadWatchConfig({ CRON_RUN_MS: "55000" }), /CRON_RUN_MS must be from 1000 to 50000/);
  assert.throws(() => loadWatchConfig({ WATCHER_LAG_ALERT_MINUTES: "0" }), /WATCHER_LAG_ALERT_MINUTES/);
  // Read with the rest of the configuration.
  assert.deepEqual(loadConfig({ WATCH_CHAINS: "doge" }).watch.chains, ["doge"]);
  // A chain named that this process does not run is refused.
  const plan = chainPlan("sim", loadConfig({}).evm);
  assert.throws(
    () => checkWatchPlan({ ...d, chains: ["sol"] }, "process", { ...plan, enabled: ["xrp"], live: [] }),
    /WATCH_CHAINS names sol, which this process does not run/,
  );
});

Deno.test("deploy mode refuses at start to watch Solana mainnet, saying why and what to do instead", async () => {
  const dir = await Deno.makeTempDir({ prefix: "deploy-watch-refuse-" });
  try {
    const evm = await evmChainEnv(dir, "http://127.0.0.1:9/");
    delete evm.EVM_MINTER_KEY_FILE;
    const live = {
      ...evm,
      CHAIN_MODE: "live",
      EVM_MINTER_KEY: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
      // Port 9 (discard): were any node asked anything, the start would fail on that instead.
      SOL_RPC_URLS: "http://127.0.0.1:9/",
      XRP_RPC_URLS: "http://127.0.0.1:9/",
    };
    const config = await deployModeConfig(`${dir}/kv.sqlite3`, live);
    const perMinute = Math.round(MAINNET_WATCH_BYTES_PER_MINUTE.sol / MiB);
    await assert.rejects(
      () => buildServices(config),
      (err: Error) => {
        assert.match(err.message, /^RUNTIME_MODE=deploy cannot keep up with sol on mainnet/);
        assert.match(err.message, new RegExp(`sol reads about ${perMinute} MiB a minute`));
        assert.match(err.message, /WATCH_BYTES_PER_RUN=256 MiB per chain/);
        assert.match(err.message, /SKIP_WATCH_CHAINS=sol on Deno Deploy/);
        assert.match(err.message, /RUNTIME_MODE=process WATCH_CHAINS=sol/);
        assert.match(err.message, /SOL_DETECTION=addresses/);
        assert.doesNotMatch(err.message, /xrp/, "xrp's minute fits the budget: not named");
        return true;
      },
    );
    // Not in deploy mode, or not watched here: the watch plan has nothing to refuse (the start goes on to ask the
    // nodes, which is another test's business).
    const plan = (c: typeof config) => {
      const p = chainPlan(c.chainMode, c.evm, c.utxo, c.account);
      return { mode: p.mode, enabled: p.enabled, live: [...p.live, ...p.liveUtxo, ...p.liveAccount] };
    };
    const skipping = await deployModeConfig(`${dir}/kv.sqlite3`, { ...live, SKIP_WATCH_CHAINS: "sol" });
    checkWatchPlan(skipping.watch, skipping.runtimeMode, plan(skipping));
    const bigger = await deployModeConfig(`${dir}/kv.sqlite3`, { ...live, WATCH_BYTES_PER_RUN: String(1024 * MiB) });
    checkWatchPlan(bigger.watch, bigger.runtimeMode, plan(bigger));
    // Polling each address reads what our addresses cost, not what Solana's blocks weigh: nothing to refuse.
    // The start goes past the watch plan and fails only at asking the (absent) nodes.
    const polling = await deployModeConfig(`${dir}/kv.sqlite3`, { ...live, SOL_DETECTION: "addresses" });
    await assert.rejects(() => buildServices(polling), (err: Error) => {
      assert.doesNotMatch(err.message, /cannot keep up/);
      return true;
    });
    const processMode = loadConfig({ ...live, EVM_MINTER_KEY: "", ...(await evmChainEnv(dir, "http://127.0.0.1:9/")) });
    checkWatchPlan(processMode.watch, processMode.runtimeMode, plan(processMode));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a deploy-mode app skipping sol does not watch it; a long-running process on the same KV watching only sol does", async () => {
  const deploy = await startTestServer(); // a KV file and its folder (its own pipeline is off)
  // Built like main.ts builds each: the deploy app from deploy-mode configuration (cron only), the process beside it.
  const appConfig = await deployModeConfig(deploy.kvPath, { SKIP_WATCH_CHAINS: "sol" });
  const app = await buildServices(appConfig);
  let watcher: TestServer | null = null;
  try {
    const appRuntime = pipelineRuntime(app)!;
    appRuntime.startCronOnly();
    const names = appRuntime.ticks.map((t) => t.name);
    assert.ok(!names.includes("watch sol"), names.join(", "));
    assert.ok(names.includes("watch xrp") && names.includes("treasury sol"), "everything else still runs there");
    await appRuntime.runGroup("watch", 10_000);
    assert.equal((await app.kv.get(cursorKey("sol"))).value, null, "nobody watched sol");
    assert.notEqual((await app.kv.get(cursorKey("xrp"))).value, null);

    watcher = await startPeerServer(deploy, { PIPELINE: "on", WATCH_CHAINS: "sol", RUNTIME_MODE: "process" });
    const proc = pipelineRuntime(watcher.services)!;
    assert.deepEqual(proc.ticks.filter((t) => t.group === "watch").map((t) => t.name), ["watch sol"]);
    proc.startCronOnly(); // its loops would do the same; one cron run is deterministic
    await proc.runGroup("watch", 10_000);
    assert.notEqual((await app.kv.get(cursorKey("sol"))).value, null, "the long-running process watched sol");
    const lease = (await readLease(app.kv, "watch:sol")).value;
    assert.ok(lease && lease.owner !== (await readLease(app.kv, "watch:xrp")).value?.owner);
    await proc.stop();
    await appRuntime.stop();
  } finally {
    await watcher?.close();
    app.kv.close();
    await deploy.close();
  }
});

Deno.test("on a Solana-RPC-shaped server: deploy-mode cron runs stop at their byte budget, cursor stored, deposit credited once", async () => {
  // 30 mainnet-sized slots (~2.9 MiB each) against a 16 MiB budget: several runs, each stopping at its budget. The
  // full-size figures (256 MiB runs over 600 slots, and 45 s runs) are bench/deploy_watch.ts's.
  const sol = startSolanaRpcServer({ finalityLag: 0, mainnetBlocks: {} });
  sol.produce(1);
  sol.finalize();
  const start = sol.finalizedSlot;
  const ours = solSigner.address("sol", 0);
  const dir = await Deno.makeTempDir({ prefix: "deploy-watch-sol-" });
  const config = await deployModeConfig(`${dir}/kv.sqlite3`, {
    CHAIN_MODE: "devnet",
    SOL_RPC_URLS: sol.url,
    SOL_START_BLOCK: String(start),
    WATCH_BYTES_PER_RUN: String(16 * MiB),
    MASTER_MNEMONIC: "test test test test test test test test test test test junk",
  });
  const services = await buildServices(config);
  const logs: string[] = [];
  services.pipeline!.log = (m: string) => void logs.push(m);
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, createApp(services).fetch);
  const server: TestServer = {
    url: `http://127.0.0.1:${http.addr.port}`,
    services,
    pipeline: null,
    dir,
    kvPath: `${dir}/kv.sqlite3`,
    close: () => Promise.resolve(),
  };
  try {
    const { wallet, token } = await partner(server);
    assert.equal(await depositAddress(server, token, "sol", "base"), ours);
    sol.produce(14);
    sol.inject({ payer: solSigner.address("sol", 900), credits: [{ to: ours, lamports: 2_000_000_000n }] });
    sol.produce(15);
    sol.finalize();
    const end = sol.finalizedSlot;
    const at = async () => (await services.kv.get<Cursor>(cursorKey("sol"))).value?.number ?? start;
    let cursor = start;
    let runs = 0;
    while (cursor < end) {
      // Each run in a fresh runtime, as a fresh Deploy isolate: only what is in KV carries over.
      const runtime = pipelineRuntime(services)!;
      runtime.startCronOnly();
      await runtime.runGroup("watch", 45_000);
      await runtime.stop();
      const next = await at();
      assert.ok(next > cursor, `run ${runs + 1} moved the stored cursor (${cursor} -> ${next})`);
      if (next < end) assert.ok(next - cursor <= 8, `at most ~16 MiB of ~2.9 MiB slots per run, read ${next - cursor}`);
      cursor = next;
      runs++;
    }
    assert.ok(runs >= 4, `${runs} runs`);
    assert.ok(
      logs.some((l) => /watch sol: this run stopped at its byte budget \(\d+ MiB read\)/.test(l)),
      logs.join("\n"),
    );
    const orders = (await listOrders(services.kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.equal(orders.filter((o) => o.type === "mint" && o.amount === "2000000000").length, 1);
  } finally {
    services.shutdown.abort();
    await http.shutdown();
    services.kv.close();
    await sol.close();
    await Deno.remove(dir, { recursive: true });
  }
});
