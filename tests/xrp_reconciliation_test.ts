/**
 * Reconciliation of uXRP against a rippled-shaped local server (tests/support/rippled_rpc_server.ts stands in for
 * rippled: no rippled runs here), base the sim's, a real KV file, the watcher, order steps and sweeper ticks driven by
 * hand. Deposits of exactly the 1 XRP base reserve to fresh addresses leave nothing to sweep: those addresses still
 * hold coins we control. A sweep's fee leaves the service: the sweep records what it delivered and what it paid, and
 * the report balances to the drop (docs/reconciliation.md).
 */
import assert from "node:assert/strict";
import { runReconciliation } from "../actors/reconciliation.ts";
import { sweepOnce } from "../actors/sweeper.ts";
import { accountTreasuryReport } from "../actors/account_treasury_report.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { balanceKey, readAccountBalance, readSweep, type Sweep, sweepKey } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, completeMints } from "./support/burns.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { countKeys, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";
import { elsewhere, hotWallet, signer, XRP, xrpHandPipeline } from "./support/xrp_env.ts";
import { nativeToWei } from "../chains/catalog.ts";

const owner = (n: number) => "0x" + n.toString(16).padStart(2, "0").repeat(20);

Deno.test("xrp reconciliation on a rippled-shaped local server: 1 XRP deposits (the whole reserve) and the sweep fee add up to the drop", async (t) => {
  const server = startRippledServer();
  const h = server.hooks;
  const { p, xrp } = await xrpHandPipeline(server, { live: { xrp: { startBlock: "tip" } } });
  const reconcileNow = () =>
    runReconciliation({
      kv: p.kv,
      chains: p.ctx.chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: ["base", "xrp"],
      now: () => new Date(),
    });
  try {
    const base = p.sim.ledger("base");
    // Three fresh deposit addresses: 10,000 XRP to one, exactly the 1 XRP base reserve (the minimum) to two.
    const amounts = [10_000n * XRP, XRP, XRP];
    const addresses: string[] = [];
    for (const [i] of amounts.entries()) {
      await ensureUserWallet(p.kv, owner(i + 1), "test-partner");
      const w = await createMintWallet(p.kv, owner(i + 1), "xrp", "base", (_c, n) => signer.address("xrp", n));
      assert.ok(w.ok);
      addresses.push(w.wallet.address);
    }
    assert.equal(await watchToTip(p.ctx, "xrp"), 0);
    amounts.forEach((a, i) => h.fund(addresses[i], a));
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await watchToTip(p.ctx, "xrp"), 3);
    const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint");
    await completeMints(p, mints, async () => {
      await base.sealBlock();
      h.closeLedgers(1);
    });

    for (let i = 0; i < 20 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000);
      h.closeLedgers(1);
    }
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 0, "every mark done");
    h.validateThrough(h.closedIndex);
    const big = mints.find((m) => m.amount === (10_000n * XRP).toString())!;
    const sweep = (await readSweep(p.kv, "xrp", big.id))!;
    assert.equal(sweep.status, "completed");
    // On the ledger: the hot wallet got the 9,999 XRP above the reserve less the 10 drop fee; every address keeps 1 XRP.
    assert.equal(await xrp.reader.balance!(hotWallet), 9_999n * XRP - h.baseFee);
    for (const a of addresses) assert.equal(await xrp.reader.balance!(a), XRP);

    await t.step("the sweep records what it delivered and what it paid in fee", () => {
      assert.equal(sweep.amount, (9_999n * XRP).toString(), "what left the address above its reserve");
      assert.equal(sweep.delivered, (9_999n * XRP - h.baseFee).toString(), "what the hot wallet received");
      assert.equal(sweep.fee, h.baseFee.toString());
    });

    const checkBook = async () => {
      const r = await reconcileNow();
      const uXrp = r.assets.find((a) => a.asset === "uXRP")!;
      assert.deepEqual(r.mismatches, [], JSON.stringify(uXrp.supply));
      assert.equal(uXrp.supply.ok, true, JSON.stringify(uXrp.supply));
      const s = uXrp.supply;
      assert.equal(s.outstandingNative, (10_002n * XRP).toString());
      assert.equal(s.controlled.hotWallet, (9_999n * XRP - h.baseFee).toString());
      assert.equal(s.controlled.unsweptDeposits, "0");
      assert.equal(s.controlled.reserves, (3n * XRP).toString(), "every deposit address holding coins");
      assert.equal(s.sweepFees, h.baseFee.toString());
      assert.equal(BigInt(s.controlledNative!) + BigInt(s.sweepFees!), BigInt(s.outstandingNative!), "to the drop");
      assert.equal(r.ok, true, JSON.stringify(r.unknown));
    };

    await t.step(
      "reconciliation: controlled plus the recorded sweep fees is the outstanding supply, to the drop",
      async () => {
        await checkBook();
      },
    );

    await t.step("the account treasury report shows the sweep fees recorded", async () => {
      const report = await accountTreasuryReport(p.kv, p.ctx.chains, "xrp");
      assert.deepEqual(report.swept, { count: 1, amount: (9_999n * XRP).toString(), fees: h.baseFee.toString() });
    });

    await t.step("a sweep record as the code before fee records wrote it still reads and still adds up", async () => {
      // No delivered, no fee, and no balance record of its address: its fee is read from the chain, its reserve from
      // the sweep's `leave`.
      const { delivered: _d, fee: _f, ...legacy } = sweep;
      await p.kv.set(sweepKey("xrp", sweep.sweepId), legacy satisfies Omit<Sweep, "delivered" | "fee">);
      assert.ok(await readAccountBalance(p.kv, "xrp", sweep.from.address));
      await p.kv.delete(balanceKey("xrp", sweep.from.address));
      assert.equal((await readSweep(p.kv, "xrp", sweep.sweepId))?.status, "completed");
      assert.deepEqual(
        (await accountTreasuryReport(p.kv, p.ctx.chains, "xrp")).swept,
        { count: 1, amount: (9_999n * XRP).toString(), fees: "0" },
        "none recorded",
      );
      await checkBook();
      // Read from the chain once and stored: the next run does not ask the chain about this sweep again.
      const backfilled = await readSweep(p.kv, "xrp", sweep.sweepId);
      assert.deepEqual([backfilled?.delivered, backfilled?.fee], [sweep.delivered, sweep.fee]);
      const report = await accountTreasuryReport(p.kv, p.ctx.chains, "xrp");
      assert.deepEqual(report.swept, { count: 1, amount: (9_999n * XRP).toString(), fees: sweep.fee });
    });

    await t.step("a drop gone that no record explains is a mismatch, to the drop (no tolerance)", async () => {
      // A payment from the hot wallet the ledger refuses (1 drop to an account that does not exist): it still burns
      // its 10 drop fee, and nothing records it.
      const refused = await xrp.payer.preparePayout({ orderId: "outside", to: elsewhere, amount: 1n, memo: "1" });
      await xrp.payer.broadcast(refused);
      h.validateThrough(h.closedIndex + 1);
      assert.equal(await xrp.reader.balance!(hotWallet), 9_999n * XRP - 2n * h.baseFee);
      const r = await reconcileNow();
      assert.deepEqual(r.mismatches.map((m) => [m.kind, m.asset]), [["supply_exceeds_controlled", "uXRP"]]);
      assert.match(r.mismatches[0].message, new RegExp(`short by ${nativeToWei("xrp", h.baseFee)} wei`));
    });
  } finally {
    await p.close();
    await server.close();
  }
});
