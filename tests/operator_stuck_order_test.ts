/**
 * Operators cancel or retry an order stuck on its transaction (`deno task admin order cancel|retry <id>`, a separate
 * process on the same KV file, sim chains): refused while the transaction may still land, allowed once the chain
 * proves it dead, through the same `txDead` transition the order actor applies. A retried order signs a new payout
 * that lands once; a cancelled one pays nothing.
 */
import assert from "node:assert/strict";
import { type DeadIntent, intentOf } from "../actors/transition.ts";
import { SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { payoutTxs, stored } from "./support/chain_facts.ts";
import { runTask } from "./support/cli.ts";
import { handPipeline } from "./support/watch.ts";

const OWNER = "0x" + "0f".repeat(20);

Deno.test("admin order cancel|retry on a burning order: refused until its payout is proven dead, then applied", async (t) => {
  const p = await handPipeline();
  try {
    const xrp = p.sim.ledger("xrp");
    const admin = (...args: string[]) => runTask("admin", { KV_PATH: p.kvPath }, args);
    const { ids: [retried, cancelled], payout } = await simBurnOrders(p, "xrp", OWNER, 2);
    await xrp.setFaults({ stallPayouts: 2 });
    for (const id of [retried, cancelled]) {
      await stepNow(p, id); // confirmed
      await stepNow(p, id); // payout signed, recorded, sent: stalled
      assert.equal((await stored(p.kv, id)).status, "burning");
    }

    await t.step("while the payout may still land: both refused, nothing changed", async () => {
      for (const [command, id] of [["cancel", cancelled], ["retry", retried]]) {
        const before = await stored(p.kv, id);
        const res = await admin("order", command, id);
        assert.equal(res.code, 2, res.stdout + res.stderr);
        assert.match(res.stderr, /not proven dead .*may still land/);
        assert.deepEqual(await stored(p.kv, id), before);
      }
    });

    // Ledgers go by until the stalled payouts expire and are dropped (no step of the orders runs meanwhile).
    const expiry = intentOf(await stored(p.kv, retried))!.expiry!;
    while ((await xrp.head()).number <= expiry.value) await xrp.sealBlock();

    await t.step("retry: proven dead (expired), back to processing; a new payout lands once", async () => {
      const first = intentOf(await stored(p.kv, retried))!;
      const res = await admin("order", "retry", retried);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /proven dead/);
      const back = await stored(p.kv, retried);
      assert.equal(back.status, "processing");
      const dead = back.details.deadIntents as DeadIntent[];
      assert.equal(dead.length, 1);
      assert.equal(dead[0].txHash, first.txHash);
      assert.equal(dead[0].proof.kind, "expired");
      for (let i = 0; i < 5 && (await stored(p.kv, retried)).status !== "completed"; i++) {
        await stepNow(p, retried);
        await xrp.sealBlock();
      }
      const done = await stored(p.kv, retried);
      assert.equal(done.status, "completed", JSON.stringify(done.details));
      const paid = (await payoutTxs(p.kv, "xrp", retried)).filter((tx) => tx.status === "included");
      assert.deepEqual(paid.map((tx) => tx.hash), [done.transactionHash]);
    });

    await t.step("cancel: proven dead, cancelled with the proof kept; nothing is paid for it", async () => {
      const res = await admin("order", "cancel", cancelled);
      assert.equal(res.code, 0, res.stderr);
      const order = await stored(p.kv, cancelled);
      assert.equal(order.status, "cancelled");
      assert.equal((order.details.deadIntents as DeadIntent[])[0].proof.kind, "expired");
      assert.equal(await stepNow(p, cancelled), "done");
      const txs = await payoutTxs(p.kv, "xrp", cancelled);
      assert.ok(txs.every((tx) => tx.status !== "included"));
      assert.equal(await xrp.balance(SIM_DESTINATION.xrp, "native"), payout, "only the retried order was paid");
    });
  } finally {
    await p.close();
  }
});
