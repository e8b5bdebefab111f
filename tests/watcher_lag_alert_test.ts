/**
 * The in-service lag alert (actors/watcher_lag.ts) and the lag as shown to operators (actors/ops/overview.ts, the
 * dashboard):
 * - a watcher held behind a Solana-RPC-shaped server's tip (1,000 slots to read, 200 per step) raises
 *   `watcher_lagging` only once it has stayed above its threshold (a minute of slots: 150) for
 *   WATCHER_LAG_ALERT_MINUTES, raises it once, clears it when it catches up, and at the tip commits nothing;
 * - `GET /admin/chains` and the dashboard page, over real HTTP, show a chain's lag in blocks and as chain time.
 * The pipeline's clock is injected: no test waits for minutes to pass.
 */
import assert from "node:assert/strict";
import { watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import { getAlert } from "../kv/alerts.ts";
import { readWatcherLag } from "../kv/watcher_lag.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { solWatcherByHand } from "./support/sol_env.ts";
import { call, operatorKeyFor, startTestServer, type TestServer } from "./support/server.ts";

async function snapshot(kv: Deno.Kv): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) out.push(`${JSON.stringify(e.key)}@${e.versionstamp}`);
  return out;
}

Deno.test("watcher_lagging on a Solana-RPC-shaped server: raised after 15 min behind, once; cleared on catch-up; no commit at rest", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  const h = await solWatcherByHand(sol);
  try {
    let clock = Date.parse("2026-11-27T08:00:00Z");
    const logs: string[] = [];
    // sol's real block time (400 ms: a threshold of 150 slots), whatever the test server's simulated one.
    const ctx: PipelineContext = {
      ...h.ctx,
      now: () => new Date(clock),
      log: (m: string) => void logs.push(m),
      settings: { ...h.ctx.settings, blockMs: (c) => c === "sol" ? 400 : h.ctx.settings.blockMs(c) },
    };
    const step = () => watchOnce(ctx, "sol", "proc-1", 60_000, { batchCursorMs: 60_000, lagAlertMs: 15 * 60_000 });
    const alert = () => getAlert(h.kv, "watcher_lagging", "sol");
    sol.produce(1000);
    sol.finalize();

    assert.equal((await step()).lag, 800);
    const stretch = (await readWatcherLag(h.kv, "sol")).value;
    assert.deepEqual(stretch, { since: new Date(clock).toISOString(), lag: 800, threshold: 150, alerted: false });
    assert.equal(await alert(), null, "behind, but not yet for 15 minutes");

    clock += 10 * 60_000;
    assert.equal((await step()).lag, 600);
    assert.equal(await alert(), null, "10 minutes behind");

    clock += 6 * 60_000;
    assert.equal((await step()).lag, 400);
    const raised = await alert();
    assert.ok(raised, "16 minutes behind its threshold");
    assert.equal(raised.chain, "sol");
    assert.match(raised.message, /more than 150 blocks behind the tip for 16 min \(now 400 blocks, about 3 min of/);
    assert.ok(logs.some((l) => l.startsWith("watcher sol: the sol watcher has been more than 150 blocks")));

    assert.equal((await step()).lag, 200);
    assert.equal((await alert())!.count, 1, "raised once per stretch, not once per step");

    assert.equal((await step()).lag, 0);
    assert.equal(await alert(), null, "cleared when caught up");
    assert.equal((await readWatcherLag(h.kv, "sol")).value, null);
    assert.ok(logs.some((l) => /caught up .* watcher_lagging cleared/.test(l)), logs.join("\n"));

    // At the tip: no commit at all (bench/idle.ts's goal), the stretch record not even read again within a minute.
    await step(); // stores the batched cursor, if due
    const before = await snapshot(h.kv);
    for (let i = 0; i < 5; i++) assert.equal((await step()).scannedTo, sol.finalizedSlot);
    assert.deepEqual(await snapshot(h.kv), before);

    // Behind again, but caught up within the 15 minutes: no alert, and the stretch ends.
    sol.produce(400);
    sol.finalize();
    assert.equal((await step()).lag, 200);
    assert.notEqual((await readWatcherLag(h.kv, "sol")).value, null);
    clock += 14 * 60_000;
    assert.equal((await step()).lag, 0);
    assert.equal(await alert(), null);
    assert.equal((await readWatcherLag(h.kv, "sol")).value, null);
  } finally {
    await h.close();
    await sol.close();
  }
});

async function dashboard(server: TestServer, key: string): Promise<string> {
  const login = await fetch(`${server.url}/admin/ui/login`, {
    method: "POST",
    redirect: "manual",
    headers: { Origin: server.url, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ key }),
  });
  await login.body?.cancel();
  assert.equal(login.status, 303);
  const cookie = login.headers.get("Set-Cookie")!.split(";")[0];
  const page = await fetch(`${server.url}/admin/ui`, { headers: { Cookie: cookie } });
  assert.equal(page.status, 200);
  return await page.text();
}

Deno.test("the lag over real HTTP: /admin/chains and the dashboard show blocks and chain time", async () => {
  const server = await startTestServer(); // sim chains, SIM_BLOCK_MS 1000, no pipeline: the cursor stays put
  try {
    const kv = server.services.kv;
    const ledger = new SimLedger(kv, "xrp");
    const start = await ledger.sealBlock();
    await kv.set(cursorKey("xrp"), { number: start.number, hash: start.hash });
    for (let i = 0; i < 200; i++) await ledger.sealBlock();
    const key = await operatorKeyFor(server, ["read"], "reader");
    const res = await call(server, "GET", "/admin/chains", { token: key });
    assert.equal(res.status, 200);
    const xrp = res.body.data.chains.find((c: { chain: string }) => c.chain === "xrp");
    assert.equal(xrp.lag, 200);
    assert.equal(xrp.lagMs, 200_000, "200 blocks of 1 s");
    assert.equal(xrp.lagThreshold, 60);
    const page = await dashboard(server, key);
    const row = /<tr id="chain-xrp"[\s\S]*?<\/tr>/.exec(page)![0];
    assert.match(row, /200<span class="muted"> \/ 60<\/span><br><span class="muted lag-time">about 3 min<\/span>/);
  } finally {
    await server.close();
  }
});
