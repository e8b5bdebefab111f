/**
 * runReconciliation keeps a mismatch that fails twice: a real, lasting difference must not be dropped because the
 * records it lists (orders in flight, held transfers) moved between the two looks, as they do on a busy pipeline.
 */
import assert from "node:assert/strict";
import { runReconciliation } from "../actors/reconciliation.ts";
import { CHAIN_SYMBOLS, NATIVE } from "../chains/catalog.ts";
import { orderKey } from "../kv/orders.ts";
import { simBurnOrders } from "./support/burns.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const OWNER = "0x" + "0d".repeat(20);

Deno.test("a lasting transfer_address_differs is reported even when the orders in flight change between the two looks", async () => {
  const p = await handPipeline();
  try {
    // A burn order whose record is lost: its uAssets at the transfer address are unexplained on both looks.
    const { ids: [lost] } = await simBurnOrders(p, "xrp", OWNER, 1);
    await p.kv.delete(orderKey(lost));
    let looks = 0;
    const chains = {
      ...p.sim,
      uAssetView(chain: Parameters<NonNullable<typeof p.sim.uAssetView>>[0]) {
        const view = p.sim.uAssetView!(chain);
        return {
          ...view,
          async minted(asset: Parameters<typeof view.minted>[0]) {
            // Between the first look and the second, a user sends uXRP for a burn: a new order in flight (normal).
            if (chain === "base" && asset === "uXRP" && looks++ === 1) await simBurnOrders(p, "xrp", OWNER, 1);
            return await view.minted(asset);
          },
        };
      },
    };
    const report = await runReconciliation({
      kv: p.kv,
      chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: CHAIN_SYMBOLS,
      now: () => p.ctx.now(),
    });
    assert.equal(looks, 2, "looked twice");
    assert.deepEqual(report.unknown, [], "every part read");
    const uXrp = report.assets.find((a) => a.asset === "uXRP")!.chains.find((c) => c.chain === "base")!;
    assert.equal(uXrp.redeem.inFlightOrders.length, 1, "the second look saw the new order");
    assert.ok(!report.ok || report.mismatches.length > 0, "reported ok with uAssets unexplained");
    assert.deepEqual(
      report.mismatches.map((m) => `${m.kind} ${m.asset} ${m.chain}`),
      ["transfer_address_differs uXRP base"],
      JSON.stringify(report.mismatches),
    );
    assert.match(report.mismatches[0].message, new RegExp(`unexplained ${NATIVE.xrp.uAsset.minimumBurnAmount} wei`));
    assert.equal(report.ok, false, "uAssets unexplained on both looks is not ok");
  } finally {
    await p.close();
  }
});
