/**
 * Operator controls end to end on the sim chains, over HTTP with an operator key (docs/controls.md): a paused chain or
 * uAsset still detects and confirms deposits and burns but records no mint or payout until resumed; caps per order and
 * per day hold orders for an operator, and `held release` approves them; held transfers are released only once a burn
 * configuration exists; every change has its audit entry with who; refusals change nothing.
 */
import assert from "node:assert/strict";
import { listAlerts } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { getControls, getDayUsage, listPausedOrders, utcDay } from "../kv/controls.ts";
import { listHeld, listOrderHolds } from "../kv/pipeline.ts";
import { MIN_BURN_WEI, stored, toWei, waitUntil } from "./support/chain_facts.ts";
import { runTask } from "./support/cli.ts";
import {
  balance,
  depositAddress,
  FAST_PIPELINE,
  type Json,
  outside,
  partner,
  sim,
  waitForOrders,
} from "./support/pipeline.ts";
import { call, operatorKeyFor, startTestServer, type TestServer } from "./support/server.ts";

async function oneOrder(server: TestServer, token: string, done: (o: Json) => boolean): Promise<Json> {
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && done(o[0]));
  return order;
}

Deno.test("controls over the admin API: pause, resume, caps, held release, audit, refusals", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  const kv = server.services.kv;
  const key = await operatorKeyFor(server, ["read", "operate"], "alice");
  const admin = (method: string, path: string, body?: unknown) =>
    call(server, method, `/admin${path}`, { token: key, ...(body !== undefined ? { body } : {}) });
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await admin(method, path, body);
    assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  /** The stored order once the actor recorded `reason` on it (it waits). */
  const heldWith = (id: string, reason: RegExp) =>
    waitUntil(`order ${id} held: ${reason}`, async () => {
      const o = await stored(kv, id);
      return reason.test(o.details.heldReason ?? "") ? o : null;
    });
  try {
    await t.step("pause sol: a deposit confirms but does not mint; resume: it mints at once", async () => {
      const paused = await ok("POST", "/chains/sol/pause", { reason: "node upgrade" });
      assert.equal(paused.chain, "sol");
      assert.match(paused.by, /^alice \(op_[0-9a-f]{16}\)$/);
      const shown = await ok("GET", "/controls");
      assert.deepEqual(shown.pausedChains.map((p: Json) => [p.chain, p.reason]), [["sol", "node upgrade"]]);

      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sol", "base");
      await sim(server, "deposits", { chain: "sol", address, amount: "50000000" });
      const order = await oneOrder(server, token, (o) => o.status === "processing");
      const held = await heldWith(order.id, /^paused by operator: chain sol \(node upgrade\)$/);
      assert.equal(held.status, "processing", "confirmed while paused");
      assert.equal(held.details.intent, undefined, "no mint recorded");
      assert.equal(await balance(server, "base", wallet, "uSOL"), 0n);
      assert.deepEqual(await listPausedOrders(kv), [order.id]);
      assert.equal((await ok("GET", "/controls")).pausedOrders, 1);

      const resumed = await ok("POST", "/chains/sol/resume");
      assert.equal(resumed.ordersDue, 1);
      assert.deepEqual(await listPausedOrders(kv), []);
      const done = await oneOrder(server, token, (o) => o.status === "completed");
      assert.equal(done.id, order.id);
      assert.equal(await balance(server, "base", wallet, "uSOL"), toWei("sol", 50_000_000n));
      assert.equal((await stored(kv, order.id)).details.heldReason, undefined);
    });

    await t.step("pause uSOL: a burn is detected and confirmed, not paid; resume: paid", async () => {
      await ok("POST", "/assets/uSOL/pause", { reason: "audit" });
      const { wallet, token } = await partner(server);
      const destination = outside.depositAddress("sol", 3);
      const cfg = await call(server, "POST", "/burn/wallets", {
        token,
        body: { destinationChain: "sol", destinationAddress: destination },
      });
      assert.equal(cfg.status, 201, JSON.stringify(cfg.body));
      const amount = (MIN_BURN_WEI.sol * 2n).toString();
      await sim(server, "faucet", { chain: "arbitrum", address: wallet, token: "uSOL", amount });
      await sim(server, "transfers", { chain: "arbitrum", from: wallet, token: "uSOL", amount });
      const order = await oneOrder(server, token, (o) => o.status === "processing");
      const held = await heldWith(order.id, /^paused by operator: asset uSOL \(audit\)$/);
      assert.equal(held.details.intent, undefined, "no payout recorded");
      assert.equal(await balance(server, "sol", destination), 0n);
      const resumed = await ok("POST", "/assets/uSOL/resume");
      assert.equal(resumed.ordersDue, 1);
      await oneOrder(server, token, (o) => o.status === "completed");
      assert.equal(await balance(server, "sol", destination), 2_000_000_000n);
    });

    await t.step("per-order cap: held with an alert, listed, released (approved): completes", async () => {
      const set = await ok("POST", "/caps/uXRP", { perOrder: "2000000" });
      assert.deepEqual(set.after, { perOrder: "2000000", perDay: null });
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "xrp", "base");
      await sim(server, "deposits", { chain: "xrp", address, amount: "2500000" });
      const order = await oneOrder(server, token, (o) => o.status === "processing");
      const held = await heldWith(order.id, /above the per-order cap of 2000000/);
      assert.equal(held.details.intent, undefined);
      // The alert is raised right after the hold's commit (the hold is the record; the alert follows it).
      const alert = await waitUntil(
        "cap_exceeded alert",
        async () => (await listAlerts(kv, "cap_exceeded"))[0] ?? null,
      );
      assert.equal(alert.subject, order.id);
      const listed = (await ok("GET", "/held")).held.find((h: Json) => h.id === `order:${order.id}`);
      assert.equal(listed.kind, "cap");
      assert.deepEqual(listed.caps, ["perOrder"]);
      assert.equal(listed.order.amount, "2500000");
      assert.equal(listed.order.token, "XRP");

      const released = await ok("POST", `/held/order:${order.id}/release`);
      assert.deepEqual([released.kind, released.approvedCaps], ["cap", ["perOrder"]]);
      await oneOrder(server, token, (o) => o.status === "completed");
      assert.equal(await balance(server, "base", wallet, "uXRP"), toWei("xrp", 2_500_000n));
      const approvals = (await stored(kv, order.id)).details.capApprovals!;
      assert.deepEqual(approvals.map((a) => [a.caps, a.by.startsWith("alice")]), [[["perOrder"], true]]);
      assert.deepEqual(await listOrderHolds(kv), []);
      await ok("POST", "/caps/uXRP", {}); // no flag: the caps are removed
      assert.equal((await getControls(kv)).controls.caps.uXRP, undefined);
    });

    await t.step("per-day cap: two orders racing, exactly one under the cap; the approved one counts", async () => {
      await ok("POST", "/caps/uSUI", { perDay: "3000000000" });
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sui", "world");
      await Promise.all([
        sim(server, "deposits", { chain: "sui", address, amount: "2000000000" }),
        sim(server, "deposits", { chain: "sui", address, amount: "2000000000" }),
      ]);
      const orders = await waitForOrders(
        server,
        token,
        (os) => os.length === 2 && os.some((o: Json) => o.status === "completed"),
      );
      const other = orders.find((o: Json) => o.status !== "completed");
      const held = await heldWith(other.id, /today's total would be 4000000000, above the per-day cap of 3000000000/);
      assert.equal(held.details.intent, undefined);
      assert.equal(await balance(server, "world", wallet, "uSUI"), toWei("sui", 2_000_000_000n), "one minted");
      const day = utcDay(new Date());
      assert.equal((await getDayUsage(kv, "uSUI", day)).value?.used, "2000000000");
      assert.equal((await getDayUsage(kv, "uSOL", day)).value, null, "no per-day cap: no usage record");

      const released = await ok("POST", `/orders/${other.id}/release`);
      assert.deepEqual(released.approvedCaps, ["perDay"]);
      await waitForOrders(server, token, (os) => os.every((o: Json) => o.status === "completed"));
      assert.equal((await getDayUsage(kv, "uSUI", day)).value?.used, "4000000000", "the approved order counts");
      const shown = (await ok("GET", "/controls")).caps.find((c: Json) => c.asset === "uSUI");
      assert.deepEqual([shown.perDay, shown.usedToday], ["3000000000", "4000000000"]);
    });

    await t.step(
      "a held transfer: release refused (points at held refund) until a burn configuration exists",
      async () => {
        const { wallet, token } = await partner(server);
        const amount = (MIN_BURN_WEI.xrp * 2n).toString();
        await sim(server, "faucet", { chain: "base", address: wallet, token: "uXRP", amount });
        const tr = await sim(server, "transfers", { chain: "base", from: wallet, token: "uXRP", amount });
        const h = await waitUntil(
          "the transfer held",
          async () => (await listHeld(kv)).find((x) => x.txHash === tr.txHash),
        );
        const id = `transfer:base:${h.txHash}:${h.index}`;
        const listed = (await ok("GET", "/held")).held.find((x: Json) => x.id === id);
        assert.equal(listed.kind, "transfer");
        assert.equal(listed.transfer.amount, amount);
        const refused = await admin("POST", `/held/${id}/release`);
        assert.equal(refused.status, 409);
        assert.match(
          refused.body.message,
          /has no burn configuration for xrp\. Return it .*`held refund transfer:base:/,
        );
        assert.equal((await listHeld(kv)).length, 1, "unchanged");

        const destination = outside.depositAddress("xrp", 2);
        await call(server, "POST", "/burn/wallets", {
          token,
          body: { destinationChain: "xrp", destinationAddress: destination, memo: "7" },
        });
        const released = await ok("POST", `/held/${id}/release`);
        assert.equal(released.kind, "transfer");
        assert.deepEqual(await listHeld(kv), []);
        const done = await oneOrder(server, token, (o) => o.status === "completed");
        assert.equal(done.id, released.orderId);
        assert.equal(await balance(server, "xrp", destination), 50_000_000n, "50 XRP, paid as configured");
        const again = await admin("POST", `/held/${id}/release`);
        assert.equal(again.status, 404);
        assert.equal(again.body.message, `no held record ${id}`);
      },
    );

    await t.step("refusals: 400/404/409 with messages, and nothing changes", async () => {
      const before = await getControls(kv);
      const audits = (await listAudit(kv)).length;
      const eth = await admin("POST", "/chains/eth/pause", {});
      assert.equal(eth.status, 400);
      assert.match(JSON.stringify(eth.body.error.issues), /Must be one of sol, xrp/);
      assert.equal((await admin("POST", "/assets/uETH/pause")).status, 400);
      const digits = await admin("POST", "/caps/uSOL", { perOrder: "1.5" });
      assert.equal(digits.status, 400);
      assert.match(JSON.stringify(digits.body.error.issues), /whole number in decimal digits/);
      assert.equal((await admin("POST", "/caps/uSOL", { perDay: "-1" })).status, 400);
      const notPaused = await admin("POST", "/chains/xrp/resume");
      assert.deepEqual([notPaused.status, notPaused.body.message], [
        409,
        "chain xrp is not paused; nothing was changed",
      ]);
      const unknown = "0193a5b2-7c1d-7e3f-8a9b-0123456789ab";
      const rel = await admin("POST", `/held/order:${unknown}/release`);
      assert.deepEqual([rel.status, rel.body.message], [404, `order ${unknown} is not held`]);
      const bad = await admin("POST", "/held/nonsense/release");
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /nonsense is not a held record id: order:<orderId> or transfer:/);
      const after = await getControls(kv);
      assert.equal(after.entry.versionstamp, before.entry.versionstamp);
      assert.equal((await listAudit(kv)).length, audits);
      const read = await operatorKeyFor(server, ["read"], "reader");
      const scoped = await call(server, "POST", "/admin/chains/sol/pause", { token: read, body: {} });
      assert.equal(scoped.status, 403);
    });

    await t.step("every change is audited with who, before and after; the CLI shares the implementation", async () => {
      const audit = await listAudit(kv);
      assert.deepEqual(
        audit.filter((e) => e.by.startsWith("alice")).map((e) => `${e.action} ${e.subject}`),
        [
          "chain.pause sol",
          "chain.resume sol",
          "asset.pause uSOL",
          "asset.resume uSOL",
          "cap.set uXRP",
          `order.release ${audit.find((e) => e.action === "order.release")!.subject}`,
          "cap.set uXRP",
          "cap.set uSUI",
          `order.release ${audit.filter((e) => e.action === "order.release")[1].subject}`,
          `held.release ${audit.find((e) => e.action === "held.release")!.subject}`,
        ],
      );
      const pause = audit.find((e) => e.action === "chain.pause")!;
      assert.equal(pause.before, null);
      assert.deepEqual((pause.after as Json).reason, "node upgrade");
      const env = { KV_PATH: server.kvPath };
      const cli = await runTask("admin", env, ["chain", "pause", "zec", "--reason", "test", "--by", "bob"]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /chain zec paused by bob/);
      assert.equal((await getControls(kv)).controls.pausedChains.zec?.by, "bob");
      const notHeld = await runTask("admin", env, ["order", "release", "0193a5b2-7c1d-7e3f-8a9b-0123456789ab"]);
      assert.equal(notHeld.code, 2);
      assert.match(notHeld.stderr, /is not held/);
    });
  } finally {
    await server.close();
  }
});
