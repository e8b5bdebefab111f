/**
 * The cold sweep in the pipeline on sim sol (a finite hot wallet, the sim ledgers, a real KV file; watcher, order
 * steps, deposit sweeps and cold-sweep ticks driven by hand): deposits are minted and swept into the hot wallet, the
 * surplus above the band's ceiling goes to cold each time it appears, exactly once each, burns are paid from what the
 * band keeps, and at the end the hot wallet is within its band and reconciliation is ok with the cold balance counted.
 */
import { displayAmount, nativeUnit } from "../model/amounts.ts";
import assert from "node:assert/strict";
import { coldSweepOnce } from "../actors/cold_sweep.ts";
import type { PipelineContext } from "../actors/context.ts";
import { readHotFunds } from "../actors/hot_band.ts";
import { runReconciliation } from "../actors/reconciliation.ts";
import type { OpContext } from "../actors/ops/op.ts";
import { treasury } from "../actors/ops/treasury.ts";
import { sweepOnce } from "../actors/sweeper.ts";
import { NATIVE } from "../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { listColdSweeps, openColdSweep } from "../kv/cold_sweeps.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ledgerTxs, stored } from "./support/chain_facts.ts";
import { allOrders, completeMints, SIM_DESTINATION, stepNow } from "./support/burns.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { countKeys, handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const SOL = 1_000_000_000n;
const COLD = "sim-sol-cold-vault";

Deno.test("cold sweep in the pipeline (sim sol, finite hot wallet): surplus to cold once each time, burns paid, hot within its band, reconciliation ok with cold counted", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  const band = { floor: 2n * SOL, target: 5n * SOL, ceiling: 12n * SOL };
  const ctx: PipelineContext = { ...p.ctx, settings: { ...p.ctx.settings, hotBand: (c) => c === "sol" ? band : null } };
  const sol = p.sim.ledger("sol");
  const base = p.sim.ledger("base");
  try {
    await p.kv.set(coldAddressKey("sol"), {
      current: { address: COLD, since: new Date(0).toISOString() },
      pending: null,
    });
    let wallets = 0;
    const deposit = async (n: number, each: bigint) => {
      const before = new Set((await allOrders(p.kv)).map((o) => o.id));
      for (let i = 0; i < n; i++) {
        // One deposit address per partner wallet and chain pair: a new wallet each.
        const owner = "0x" + (++wallets).toString(16).padStart(40, "0");
        await ensureUserWallet(p.kv, owner, "test-partner");
        const w = await createMintWallet(p.kv, owner, "sol", "base", (c, k) => `${c}-deposit-${k}`);
        assert.ok(w.ok);
        await sol.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: w.wallet.address, amount: each });
      }
      for (let i = 0; i < 3; i++) await sol.sealBlock();
      await watchToTip(p.ctx, "sol");
      const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint" && !before.has(o.id));
      assert.equal(mints.length, n);
      await completeMints(p, mints, () => base.sealBlock());
      for (let i = 0; i < 20 && (await countKeys(p.kv, ["treasury_sweep_due", "sol"])) > 0; i++) {
        await sweepOnce(ctx, "sol", "test-sweeper", 60_000);
        await sol.sealBlock();
      }
      assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "sol"]), 0, "every deposit swept");
    };
    const coldTick = async () => {
      assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "recorded");
      for (let i = 0; i < 10 && (await openColdSweep(p.kv, "sol")); i++) {
        await sol.sealBlock();
        await coldSweepOnce(ctx, "sol", "test-cold", 60_000);
      }
      assert.equal(await openColdSweep(p.kv, "sol"), null);
      assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "idle", "nothing more to move");
    };
    const hot = async () => (await readHotFunds(p.kv, ctx.chains, "sol")).hot;

    // Four 10 SOL deposits: swept in (less each address's reserve), the surplus above the ceiling goes to cold.
    await deposit(4, 10n * SOL);
    const reserve = NATIVE.sol.reserve;
    // What the deposits bring, less the hot wallet's own reserve (never hot: it always stays).
    const hotAfterDeposits = 4n * (10n * SOL - reserve) - reserve;
    assert.equal(await hot(), hotAfterDeposits);
    await coldTick();
    assert.equal(await hot(), band.target);
    assert.equal(await sol.balance(COLD, "native"), hotAfterDeposits - band.target);

    // Three burns of 1 SOL, of uSOL the first deposit minted (no faucet: every uSOL is backed), are paid from what the
    // band keeps.
    const holder = "0x" + (1).toString(16).padStart(40, "0");
    assert.ok((await createBurnConfig(p.kv, holder, "sol", SIM_DESTINATION.sol, null)).ok);
    const beforeBurns = new Set((await allOrders(p.kv)).map((o) => o.id));
    for (let i = 0; i < 3; i++) {
      const amount = NATIVE.sol.uAsset.minimumBurnAmount;
      const sent = await base.submitErc20Transfer({ from: holder, to: SIM_TRANSFER_ADDRESS, asset: "uSOL", amount });
      assert.ok(sent.ok);
    }
    for (let i = 0; i < 3; i++) await base.sealBlock();
    await watchToTip(p.ctx, "base");
    const ids = (await allOrders(p.kv)).filter((o) => o.type === "burn" && !beforeBurns.has(o.id)).map((o) => o.id);
    assert.equal(ids.length, 3);
    for (
      let i = 0;
      i < 10 && (await Promise.all(ids.map((id) => stored(p.kv, id)))).some((o) => o.status !== "completed");
      i++
    ) {
      for (const id of ids) await stepNow(p, id);
      await sol.sealBlock();
    }
    for (const id of ids) assert.equal((await stored(p.kv, id)).status, "completed");
    assert.equal(await hot(), band.target - 3n * SOL);
    assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "idle", "within the band");

    // Two more deposits: above the ceiling again; the surplus over the target goes, once.
    await deposit(2, 10n * SOL);
    await coldTick();
    const hotNow = await hot();
    assert.equal(hotNow, band.target);
    assert.ok(hotNow >= band.floor && hotNow <= band.ceiling, "within the band at the end");

    const sweeps = await listColdSweeps(p.kv, "sol");
    assert.equal(sweeps.length, 2);
    assert.ok(sweeps.every((s) => s.status === "completed"));
    const toCold = (await ledgerTxs(p.kv, "sol")).filter((t) => t.tx.kind === "payout" && t.tx.to === COLD);
    assert.deepEqual(toCold.map((t) => t.hash).sort(), sweeps.map((s) => s.txHash).sort(), "each sent exactly once");
    const cold = await sol.balance(COLD, "native");
    assert.equal(cold, sweeps.reduce((sum, s) => sum + BigInt(s.amount), 0n));

    const report = await runReconciliation({
      kv: p.kv,
      chains: p.ctx.chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: ["base", "sol"],
      now: () => new Date(),
    });
    const uSol = report.assets.find((a) => a.asset === "uSOL")!;
    assert.equal(uSol.supply.controlled.cold, cold.toString());
    assert.deepEqual(report.mismatches, []);
    assert.equal(report.ok, true, JSON.stringify(report.unknown));
    // The treasury report (CLI text and admin API alike: the `treasury` operation) shows hot / cold / in flight.
    const opCtx = {
      kv: p.kv,
      by: "ops-test",
      now: () => new Date(),
      chains: () => Promise.resolve(ctx.chains),
      settings: () => ctx.settings,
    } as unknown as OpContext;
    const r = await treasury.run(opCtx, { chain: "sol" });
    assert.deepEqual(r.custody, { hot: `${band.target}`, cold: `${cold}`, inFlight: "0", inFlightCount: 0 });
    assert.ok(
      treasury.text(r).join("\n").includes(
        `custody: hot ${displayAmount(band.target, nativeUnit("sol"))}, cold ${
          displayAmount(cold, nativeUnit("sol"))
        }, in flight to cold ${displayAmount(0n, nativeUnit("sol"))}`,
      ),
      "the CLI's line",
    );

    // Every coin is hot, cold or a deposit address's reserve: the outstanding supply, to the lamport (the sim charges
    // no fee).
    assert.equal(BigInt(uSol.supply.controlledNative!), BigInt(uSol.supply.outstandingNative!));
  } finally {
    await p.close();
  }
});
