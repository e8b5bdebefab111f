/**
 * The scheduled reconciliation (actors/reconcile_schedule.ts) on the simulated chains: the running pipeline stores a
 * report soon after start, runs again only once `RECONCILE_EVERY_MS` has passed (no commit meanwhile), raises one
 * `reconciliation_mismatch` alert when coins stop adding up, and clears it when they add up again.
 */
import assert from "node:assert/strict";
import { RECONCILE_EVERY_MS, scheduledReconcile } from "../actors/reconcile_schedule.ts";
import { nativeToWei } from "../chains/catalog.ts";
import { getAlert } from "../kv/alerts.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { encodeSimTx } from "../chains/sim/tx.ts";
import { FAST_PIPELINE, sim } from "./support/pipeline.ts";
import { randomWallet, startTestServer } from "./support/server.ts";

Deno.test("scheduled reconciliation: stored at start, hourly, a mismatch raises one alert and a clean run clears it", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const kv = server.services.kv;
    const ctx = server.services.pipeline!;
    let stored = null;
    for (let i = 0; i < 200 && stored === null; i++) {
      stored = await lastReconciliation(kv);
      if (stored === null) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(stored, "the pipeline stored a report soon after start");
    assert.equal(stored.ok, true, JSON.stringify(stored.mismatches));

    // Not due within the hour: nothing read but the stored report's time, nothing written.
    assert.equal(await scheduledReconcile(ctx, "test"), "not due");
    assert.equal((await lastReconciliation(kv))?.at, stored.at);

    // uDOGE credited outside the pipeline, beyond every coin we hold: the next due run names it and alerts.
    const holder = randomWallet().toLowerCase();
    const extra = nativeToWei("doge", 10n ** 18n);
    await sim(server, "faucet", { chain: "world", address: holder, token: "uDOGE", amount: extra.toString() });
    let clock = Date.now() + RECONCILE_EVERY_MS + 1_000;
    const later = { ...ctx, now: () => new Date(clock) };
    assert.equal(await scheduledReconcile(later, "test"), "mismatch");
    const alert = await getAlert(kv, "reconciliation_mismatch", "scheduled");
    assert.ok(alert);
    assert.match(alert.message, /1 mismatch\(es\) \(supply_exceeds_controlled\)/);
    assert.equal((await lastReconciliation(kv))?.ok, false);

    // Still wrong at the next run: the alert stays one record, counted again.
    clock += RECONCILE_EVERY_MS + 1_000;
    assert.equal(await scheduledReconcile(later, "test"), "mismatch");
    assert.equal((await getAlert(kv, "reconciliation_mismatch", "scheduled"))?.count, 2);

    // The holder burns the credit (ERC20Burnable on the sim's world chain): the coins add up again, the next run
    // clears the alert.
    const world = new SimLedger(kv, "world");
    const raw = encodeSimTx({ kind: "burn", from: holder, asset: "uDOGE", amount: extra, batchId: "t", nonce: "n1" });
    await world.submitRaw(raw);
    await world.sealBlock();
    clock += RECONCILE_EVERY_MS + 1_000;
    assert.equal(await scheduledReconcile(later, "test"), "ok");
    assert.equal(await getAlert(kv, "reconciliation_mismatch", "scheduled"), null);
    assert.equal((await lastReconciliation(kv))?.ok, true);
  } finally {
    await server.close();
  }
});
