/**
 * The overview reads (actors/ops/overview.ts) over real HTTP and the CLI: `chains` (mode from the chain plan, tip,
 * watcher cursor and lag, lease, alerts, pause, the documented health rule), `orders` (every partner, newest first,
 * filtered, bounded, with holds) and `stuck` (old recorded transactions, orders waiting with a reason). Each answer
 * is checked against /openapi.json by `call`.
 */
import assert from "node:assert/strict";
import { raiseAlert } from "../kv/alerts.ts";
import { controlsKey } from "../kv/controls.ts";
import { createOrder } from "../kv/orders.ts";
import { type Order, withDetails } from "../model/order.ts";
import { acquireLease, cursorKey, orderHoldKey } from "../kv/pipeline.ts";
import { writeWatcherLooks } from "../kv/watcher_looks.ts";
import { runTask } from "./support/cli.ts";
import { makeOrder } from "./support/orders.ts";
import { call, operatorKeyFor, randomWallet, startTestServer } from "./support/server.ts";

const aged = (o: Order, minutesAgo: number): Order =>
  withDetails(o, {
    intent: { ...o.details.intent!, preparedAt: new Date(Date.now() - minutesAgo * 60_000).toISOString() },
  });

Deno.test("overview reads: chains, orders and stuck over the API and the CLI", async (t) => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const key = await operatorKeyFor(server, ["read"], "reader");

    await t.step("chains: sim mode, the tip from the sim ledger, the health rule in order", async () => {
      // sol: a cursor and a live lease, close to the tip: ok. xrp: paused. sui: erroring by a deep_reorg alert.
      // doge: a cursor, no lease, a look older than WATCHER_UNWATCHED_SECONDS: unwatched. zec: no cursor, a recent
      // look 100 blocks behind (threshold 60): lagging. base: no lease, a recent look at the tip: ok (an idle watcher).
      // arbitrum: nothing ever: unwatched.
      for (const chain of ["sol", "xrp", "sui", "doge"] as const) {
        await kv.set(cursorKey(chain), { number: 0, hash: "h" });
      }
      await acquireLease(kv, "watch:sol", "proc-1", 60_000);
      const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
      await writeWatcherLooks(kv, {
        owner: "proc-2",
        at: ago(5),
        chains: { zec: { at: ago(5), scannedTo: 0, lag: 100 }, base: { at: ago(5), scannedTo: 0, lag: 0 } },
      });
      await writeWatcherLooks(kv, {
        owner: "proc-gone",
        at: ago(600),
        chains: { doge: { at: ago(600), scannedTo: 0, lag: 0 }, base: { at: ago(600), scannedTo: 0, lag: 0 } },
      });
      await kv.set(controlsKey, {
        pausedChains: { xrp: { by: "alice (op_x)", at: new Date().toISOString(), reason: "maintenance" } },
        pausedAssets: {},
        caps: {},
      });
      await raiseAlert(kv, { kind: "deep_reorg", subject: "sui", chain: "sui", message: "halted" });
      const res = await call(server, "GET", "/admin/chains", { token: key });
      assert.equal(res.status, 200);
      const rows = Object.fromEntries(res.body.data.chains.map((c: { chain: string }) => [c.chain, c]));
      assert.equal(res.body.data.chains.length, 10);
      assert.equal(rows.sol.mode, "sim");
      assert.equal(rows.sol.tip, 0);
      assert.equal(rows.sol.cursor, 0);
      assert.equal(rows.sol.lag, 0);
      assert.equal(rows.sol.leaseHolder, "proc-1");
      assert.equal(rows.sol.health, "ok", rows.sol.why);
      assert.equal(rows.xrp.health, "paused");
      assert.match(rows.xrp.why, /maintenance/);
      assert.deepEqual(rows.xrp.paused.reason, "maintenance");
      assert.equal(rows.sui.health, "erroring");
      assert.equal(rows.sui.alerts[0].kind, "deep_reorg");
      assert.equal(rows.doge.health, "unwatched", rows.doge.why);
      assert.match(rows.doge.why, /no process has looked at this chain since .*10m 0s ago.*unwatched after 180 s/);
      assert.equal(rows.doge.lookedBy, "proc-gone");
      assert.equal(rows.zec.health, "lagging", rows.zec.why);
      assert.equal(rows.zec.lag, 100);
      assert.match(rows.zec.why, /100 blocks behind the tip \(threshold 60\)/);
      assert.equal(rows.base.health, "ok", rows.base.why);
      assert.equal(rows.base.leaseHolder, null);
      assert.equal(rows.base.lookedBy, "proc-2");
      assert.equal(rows.arbitrum.health, "unwatched");
      assert.match(rows.arbitrum.why, /no process has ever looked at this chain/);
    });

    const owners = [randomWallet().toLowerCase(), randomWallet().toLowerCase()];
    const made: Order[] = [];
    await t.step("orders: every partner, newest first, filters, limit, holds and held reasons", async () => {
      for (let i = 0; i < 6; i++) {
        let o = makeOrder(owners[i % 2], i % 3 === 0 ? "burn" : "mint", i === 5 ? "processing" : "pending", i);
        if (i === 4) o = withDetails(o, { heldReason: "the destination chain is not run by this process" });
        made.push(o);
        assert.ok(await createOrder(kv, o));
      }
      await kv.set(orderHoldKey(made[5].id), {
        reason: "reorg past finality",
        at: new Date().toISOString(),
        alert: { kind: "reorg_past_finality", subject: "doge" },
      });
      const all = await call(server, "GET", "/admin/orders", { token: key });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.data.orders.map((o: Order) => o.id), made.map((o) => o.id).reverse());
      assert.deepEqual(new Set(all.body.data.orders.map((o: Order) => o.owner)), new Set(owners));
      const held = all.body.data.orders.find((o: Order) => o.id === made[5].id);
      assert.equal(held.hold.reason, "reorg past finality");
      assert.equal(all.body.data.orders.find((o: Order) => o.id === made[4].id).heldReason, made[4].details.heldReason);

      const burns = await call(server, "GET", "/admin/orders?type=burn&limit=1", { token: key });
      assert.deepEqual(burns.body.data.orders.map((o: Order) => o.id), [made[3].id]);
      const processing = await call(server, "GET", "/admin/orders?status=processing", { token: key });
      assert.deepEqual(processing.body.data.orders.map((o: Order) => o.id), [made[5].id]);
      const none = await call(server, "GET", "/admin/orders?status=processing&type=burn", { token: key });
      assert.deepEqual(none.body.data.orders, []);
      for (const bad of ["limit=0", "limit=501", "limit=1.5", "status=stuck", "type=swap"]) {
        const r = await call(server, "GET", `/admin/orders?${bad}`, { token: key });
        assert.equal(r.status, 400, bad);
      }
    });

    await t.step(
      "stuck: transactions recorded longer ago than the threshold, and orders waiting with a reason",
      async () => {
        const old = aged(makeOrder(owners[0], "burn", "burning", 7), 20);
        const young = aged(makeOrder(owners[0], "mint", "minting", 8), 2);
        assert.ok(await createOrder(kv, old));
        assert.ok(await createOrder(kv, young));
        const res = await call(server, "GET", "/admin/stuck", { token: key });
        assert.equal(res.status, 200);
        assert.equal(res.body.data.thresholdMinutes, 15);
        assert.deepEqual(res.body.data.transactions.map((t: { orderId: string }) => t.orderId), [old.id]);
        const tx = res.body.data.transactions[0];
        assert.equal(tx.txHash, old.details.intent!.txHash);
        assert.equal(tx.amount, old.type === "burn" ? old.details.nativeAmount : "");
        assert.deepEqual(res.body.data.waiting.map((w: { orderId: string }) => w.orderId), [made[4].id]);
        const lower = await call(server, "GET", "/admin/stuck?olderThanMinutes=1", { token: key });
        assert.deepEqual(
          lower.body.data.transactions.map((t: { orderId: string }) => t.orderId).sort(),
          [old.id, young.id].sort(),
        );
        assert.equal((await call(server, "GET", "/admin/stuck?olderThanMinutes=0", { token: key })).status, 400);
      },
    );

    await t.step("the CLI runs the same operations on the same KV", async () => {
      const res = await runTask("admin", { KV_PATH: server.kvPath }, ["stuck", "--json"]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(JSON.parse(res.stdout).transactions.length, 1);
      const chains = await runTask("admin", { KV_PATH: server.kvPath }, ["chains"]);
      assert.equal(chains.code, 0, chains.stderr);
      assert.match(chains.stdout, /^xrp\tsim\tpaused\t/m);
    });

    await t.step("a key without the read scope is refused", async () => {
      const metrics = await operatorKeyFor(server, ["metrics"], "scraper");
      const res = await call(server, "GET", "/admin/chains", { token: metrics });
      assert.equal(res.status, 403);
    });
  } finally {
    await server.close();
  }
});
