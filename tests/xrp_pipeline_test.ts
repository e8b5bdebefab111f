/**
 * The pipeline with the xrp adapter on a rippled-shaped server (no rippled runs here; base is the sim's, real KV
 * file, watcher, order steps and sweeper ticks driven by hand): a deposit of XRP to our address, seen in a validated
 * ledger next to a partial payment to the same address, is minted for what was delivered, swept into the hot wallet
 * (the address keeps its reserve, the fee comes out of the sweep), and that funds a waiting burn, paid once with its
 * DestinationTag.
 */
import assert from "node:assert/strict";
import { decode } from "xrpl";
import { sweepOnce } from "../actors/sweeper.ts";
import { intentOf } from "../actors/transition.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { readSweep } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, completeMints, simBurnOrders, stepNow } from "./support/burns.ts";
import { stored } from "./support/chain_facts.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { countKeys, watchToTip } from "./support/watch.ts";
import { elsewhere, hotWallet, signer, XRP, xrpHandPipeline } from "./support/xrp_env.ts";

const OWNER = "0x" + "5f".repeat(20);

Deno.test("xrp pipeline on a rippled-shaped server: deposit minted for what was delivered, swept to the hot wallet, burn paid once", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  // Live xrp: the catalog's finality (a validated ledger), watched from the validated ledger at start.
  const { p, xrp } = await xrpHandPipeline(server, { live: { xrp: { startBlock: "tip" } } });
  try {
    const base = p.sim.ledger("base");
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    // A burn of 25 XRP waits: the hot wallet does not exist yet.
    assert.ok((await createBurnConfig(p.kv, OWNER, "xrp", elsewhere, "42")).ok);
    const { ids: [burnId] } = await simBurnOrders(p, "xrp", OWNER);
    for (let i = 0; i < 2; i++) await stepNow(p, burnId);
    assert.match(String((await stored(p.kv, burnId)).details.heldReason), /hot wallet/);

    // A deposit of 30 XRP and a partial payment claiming 1000 XRP but delivering 2 XRP, to our deposit address.
    const wallet = await createMintWallet(p.kv, OWNER, "xrp", "base", (_c, i) => signer.address("xrp", i));
    assert.ok(wallet.ok);
    const deposit = wallet.wallet.address;
    assert.equal(await watchToTip(p.ctx, "xrp"), 0, "the watcher starts at the validated ledger");
    const plain = h.fund(deposit, 30n * XRP);
    const partial = h.partialPayment(deposit, 1000n * XRP, 2n * XRP);
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await watchToTip(p.ctx, "xrp"), 2);
    const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint");
    const byTx = new Map(mints.map((m) => [m.details.source?.txHash, m]));
    assert.equal(byTx.get(plain)?.amount, (30n * XRP).toString());
    assert.equal(byTx.get(partial)?.amount, (2n * XRP).toString(), "delivered, never Amount");
    await completeMints(p, mints, async () => {
      await base.sealBlock();
      h.closeLedgers(1);
    });

    // The sweeper moves the deposits to the hot wallet: one open sweep per address at a time.
    const sweep = () => sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000);
    for (let i = 0; i < 20 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await sweep();
      h.closeLedgers(1);
    }
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 0);
    const swept = await Promise.all(mints.map((m) => readSweep(p.kv, "xrp", m.id)));
    assert.ok(swept.some((s) => s?.status === "completed"), JSON.stringify(swept));
    h.validateThrough(h.closedIndex);
    assert.equal(await xrp.reader.balance!(deposit), XRP, "the deposit address keeps its base reserve");
    const hot = await xrp.reader.balance!(hotWallet);
    const sweeps = swept.filter((s) => s?.status === "completed").length;
    assert.equal(hot, 32n * XRP - XRP - 10n * BigInt(sweeps), "everything above the reserve, less the sweep fees");

    // The waiting burn is paid, once, with its DestinationTag.
    for (let i = 0; i < 10 && (await stored(p.kv, burnId)).status !== "completed"; i++) {
      await stepNow(p, burnId);
      h.closeLedgers(1);
    }
    const paid = await stored(p.kv, burnId);
    assert.equal(paid.status, "completed", JSON.stringify(paid.details));
    assert.equal(h.account(elsewhere)?.balance, 25n * XRP);
    const intent = intentOf(paid)!;
    assert.equal(intent.txHash, paid.transactionHash);
    assert.equal((decode(intent.raw) as { DestinationTag: number }).DestinationTag, 42, "the registered memo");
    assert.equal(
      h.submissions.filter((s) => s.engineResult === "tesSUCCESS" && s.hash !== intent.txHash).length,
      sweeps,
      "one payout, the rest sweeps",
    );
  } finally {
    await p.close();
    await server.close();
  }
});
