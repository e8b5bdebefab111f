/**
 * Hot-wallet rotation on sim xrp (docs/operations.md "Rotating a hot wallet"; sim ledgers verified before record as the
 * registry verifies them, a real KV file, order steps, sweeper and drain ticks driven by hand). Payouts are in flight
 * when the wallet rotates: one recorded from the old wallet completes from it, one recorded from it and proven dead is
 * signed again from the new one, and the next burn is paid from the new one; the old wallet is drained into the new one
 * once, although the drain crashes between its record and its broadcast; reconciliation is ok before, during and after.
 * Refusals change nothing: an unknown chain, a UTXO chain, and a second rotation while a drain is open.
 */
import assert from "node:assert/strict";
import { drainTick, rotateHotWallet, RotationRefused } from "../actors/hot_wallet_rotation.ts";
import { runReconciliation } from "../actors/reconciliation.ts";
import { accountTreasuryReport } from "../actors/account_treasury_report.ts";
import { readHotFunds } from "../actors/hot_band.ts";
import { hotRotate } from "../actors/ops/hot_wallets.ts";
import { OpError } from "../actors/ops/op.ts";
import { type AccountPayer, type Chains, type NativePayer, payerFor } from "../chains/adapter.ts";
import { CHAIN_SYMBOLS, EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { defaultSimOperatorAddress, type SimChains, simHotWallet } from "../chains/sim/adapters.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { listAlerts } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { readHotWalletState } from "../kv/hot_wallets.ts";
import { addHotWalletHold, hotWalletHoldKey, readHotWalletHolds } from "../kv/hot_wallet.ts";
import { readSweep, recordSweep } from "../kv/treasury.ts";
import { hotPayerChecked } from "../actors/hot_wallet_in_effect.ts";
import { ledgerTxs, payoutTxs, stored } from "./support/chain_facts.ts";
import { SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { type HandPipeline, handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const OWNER = "0x" + "4d".repeat(20);
const XRP = 1_000_000n;
const OLD = defaultSimOperatorAddress("xrp");
const NEW = simHotWallet(OLD, 1);
const FUNDED = 200n * XRP;

/**
 * The sim chains verified as the registry verifies them. `lie`: the xrp payer of a rotated wallet builds its sweeps
 * (a drain) into the next index's wallet instead of its own.
 */
async function verifiedPipeline(lie = false): Promise<HandPipeline> {
  const all = new Set([...EVM_CHAINS, ...NATIVE_CHAINS]);
  const lying = (sim: SimChains): Chains => ({
    ...sim,
    payer: (c) => {
      const inner: NativePayer = sim.payer(c);
      if (c !== "xrp" || inner.family !== "account") return payerFor(c, inner);
      const atHotIndex = (i: number): AccountPayer => ({
        ...inner.atHotIndex!(i),
        atHotIndex,
        prepareSweep: (req) => inner.atHotIndex!(i + 1).prepareSweep(req),
      });
      return payerFor(c, { ...inner, atHotIndex });
    },
  });
  return await handPipeline({
    hotWalletGenesis: 0n,
    chains: (kv, sim) =>
      verifyingChains(lie ? lying(sim) : sim, {
        explainer: explainerOf({ simulated: all, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set() }),
        evm: evmFactsOf({ simulated: all, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      }),
  });
}

async function reconciled(p: HandPipeline) {
  const report = await runReconciliation({
    kv: p.kv,
    chains: p.ctx.chains,
    transferAddress: SIM_TRANSFER_ADDRESS,
    enabledChains: CHAIN_SYMBOLS,
    now: () => p.ctx.now(),
  });
  assert.deepEqual(report.unknown, [], "every part read");
  assert.ok(report.ok, JSON.stringify(report.mismatches));
  return report;
}

/** Steps `id` and seals an xrp block until it is completed (at most `rounds`). */
async function payOut(p: HandPipeline, id: string, rounds = 12): Promise<void> {
  const xrp = p.sim.ledger("xrp");
  for (let i = 0; i < rounds && (await stored(p.kv, id)).status !== "completed"; i++) {
    await stepNow(p, id);
    await xrp.sealBlock();
  }
  assert.equal((await stored(p.kv, id)).status, "completed", JSON.stringify((await stored(p.kv, id)).details));
}

Deno.test("sim xrp: a rotation with payouts in flight: old payouts finish from the old wallet, new ones from the new, the drain moves the rest once (crash after record), reconciliation ok throughout", async () => {
  const p = await verifiedPipeline();
  try {
    const xrp = p.sim.ledger("xrp");
    const drain = () => drainTick(p.ctx, "xrp", "test-drainer", 60_000);
    // The old hot wallet holds 200 XRP (from outside: more than the uXRP minted, so reconciliation has a surplus; it
    // is ok below only while every wallet holding it is counted).
    await xrp.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.xrp, to: OLD, amount: FUNDED });
    await xrp.sealBlock();
    await reconciled(p);
    assert.equal(await drain(), "idle", "never rotated: nothing to drain");

    // Three burns of 25 XRP. The first two are recorded from the old wallet; the second is held out of every block.
    const { ids: [a, b, c], payout } = await simBurnOrders(p, "xrp", OWNER, 3);
    assert.equal(payout, 25n * XRP);
    assert.equal(await stepNow(p, a), "moved");
    assert.equal(await stepNow(p, a), "moved");
    await xrp.setFaults({ stallPayouts: 1 });
    assert.equal(await stepNow(p, b), "moved");
    assert.equal(await stepNow(p, b), "moved");
    for (const id of [a, b]) {
      assert.equal((await stored(p.kv, id)).status, "burning");
      assert.deepEqual((await payoutTxs(p.kv, "xrp", id)).map((t) => t.tx.kind === "payout" && t.tx.from), [OLD]);
    }

    // The rotation: index 1 in effect, the old wallet retired, audited and alerted in the same commit.
    const rotated = await rotateHotWallet(p.ctx, "xrp", "ops@test", p.ctx.now());
    assert.deepEqual([rotated.from, rotated.to], [{ index: 0, address: OLD }, { index: 1, address: NEW }]);
    const audit = (await listAudit(p.kv)).find((e) => e.id === rotated.auditId)!;
    assert.equal(audit.action, "hot.rotate");
    assert.equal(audit.by, "ops@test");
    const [alert] = await listAlerts(p.kv, "hot_wallet_rotation");
    assert.match(alert.message, new RegExp(`${OLD} \\(index 0\\) to ${NEW} \\(index 1\\); 2 payout\\(s\\)`));
    // A second rotation while the old wallet drains is refused, and changes nothing.
    const before = await readHotWalletState(p.kv, "xrp");
    await assert.rejects(rotateHotWallet(p.ctx, "xrp", "ops@test", p.ctx.now()), (err: Error) => {
      assert.ok(err instanceof RotationRefused && err.status === 409);
      assert.match(err.message, /still draining into/);
      return true;
    });
    assert.deepEqual(await readHotWalletState(p.kv, "xrp"), before);

    // The third burn is checked against the new wallet, which holds nothing yet: it waits, nothing signed.
    assert.equal(await stepNow(p, c), "moved");
    assert.equal(await stepNow(p, c), "waiting");
    assert.deepEqual(await payoutTxs(p.kv, "xrp", c), []);
    // The hot band reads the wallet in effect: empty.
    assert.equal((await readHotFunds(p.kv, p.ctx.chains, "xrp")).hot, 0n);
    // The drain waits while payouts recorded from the old wallet are open.
    assert.equal(await drain(), "waiting");
    await reconciled(p);

    // The first completes from the old wallet (the same bytes, never re-signed by the new key).
    await payOut(p, a);
    assert.equal((await payoutTxs(p.kv, "xrp", a)).length, 1);
    // The second is proven dead past its expiry; its next attempt is signed from the new wallet, once funded.
    for (let i = 0; i < 40 && (await stored(p.kv, b)).details.deadIntents === undefined; i++) {
      await stepNow(p, b);
      await xrp.sealBlock();
    }
    assert.equal((await stored(p.kv, b)).details.deadIntents?.length, 1, "the stalled payout was proven dead");
    assert.equal((await stored(p.kv, b)).status, "processing", "waiting for the new wallet's funds");

    // Nothing open from the old wallet now: the drain is recorded, and the process dies before broadcasting it.
    p.ctx.faultPoint = (point) => {
      if (point === "drain-after-record") throw new Error("crash after recording the drain");
    };
    assert.equal(await drain(), "waiting");
    p.ctx.faultPoint = undefined;
    const retired = (await readHotWalletState(p.kv, "xrp")).state!.retired[0];
    const attempt = retired.attempt!;
    assert.equal(attempt.amount, (FUNDED - payout - NATIVE.xrp.reserve).toString());
    assert.equal(attempt.leave, NATIVE.xrp.reserve.toString());
    assert.equal((await xrp.txStatus(attempt.txHash)).state, "unknown", "recorded, never sent");
    await reconciled(p);
    // The next tick sends the same bytes; once final the retired wallet is drained.
    assert.equal(await drain(), "resent");
    const steps = [];
    for (let i = 0; i < 10 && steps.at(-1) !== "drained"; i++) {
      await xrp.sealBlock();
      steps.push(await drain());
    }
    assert.equal(steps.at(-1), "drained", JSON.stringify(steps));
    const drains = (await ledgerTxs(p.kv, "xrp")).filter((t) => t.tx.kind === "sweep" && t.tx.from === OLD);
    assert.deepEqual(drains.map((t) => [t.hash, t.status]), [[attempt.txHash, "included"]], "exactly one drain");
    assert.equal(await xrp.balance(OLD, "native"), NATIVE.xrp.reserve, "the old account keeps its base reserve");
    assert.equal(await xrp.balance(NEW, "native"), FUNDED - payout - NATIVE.xrp.reserve);
    assert.equal(await drain(), "idle");
    await reconciled(p);

    // The waiting payouts go out from the new wallet, each exactly once more.
    for (const id of [b, c]) {
      await payOut(p, id);
      const paid = (await stored(p.kv, id)).transactionHash;
      const txs = await payoutTxs(p.kv, "xrp", id);
      const last = txs.find((t) => t.hash === paid)!;
      assert.equal(last.tx.kind === "payout" && last.tx.from, NEW, "paid from the new wallet");
    }
    assert.equal(await xrp.balance(SIM_DESTINATION.xrp, "native"), 3n * payout);
    assert.equal(await xrp.balance(NEW, "native"), FUNDED - 3n * payout - NATIVE.xrp.reserve);
    assert.deepEqual(await Array.fromAsync(p.kv.list({ prefix: ["hot_wallet_hold"] })), [], "every hold released");
    await reconciled(p);
    const report = await accountTreasuryReport(p.kv, p.ctx.chains, "xrp", p.ctx.now());
    assert.deepEqual([report.hotWallet.address, report.hotWallet.index], [NEW, 1]);
    assert.deepEqual(
      report.retiredWallets.map((w) => [w.address, w.status, w.balance, w.drainTxHash]),
      [[OLD, "drained", NATIVE.xrp.reserve.toString(), attempt.txHash]],
    );
    assert.equal(
      (await listAlerts(p.kv, "transaction_mismatch")).length,
      0,
      "every transaction matched its request",
    );
  } finally {
    await p.close();
  }
});

Deno.test("hot rotate refuses an unknown chain, a UTXO chain, and a rotation while a drain is open, changing nothing", async () => {
  const p = await verifiedPipeline();
  try {
    const ctx = {
      kv: p.kv,
      by: "ops@test",
      via: "cli" as const,
      now: () => p.ctx.now(),
      chains: () => Promise.resolve(p.ctx.chains),
    } as unknown as Parameters<typeof hotRotate.run>[0];
    const keys = async () => (await Array.fromAsync(p.kv.list({ prefix: [] }))).map((e) => JSON.stringify(e.key));
    const untouched = await keys();
    for (const chain of ["btc", "doge", "base"]) {
      const parsed = hotRotate.input.safeParse({ chain });
      assert.ok(!parsed.success, chain);
      assert.match(parsed.error.message, /must be one of sol, xrp, sui/);
    }
    assert.deepEqual(await keys(), untouched);
    // Rotated once; the old wallet (funded) drains; a second rotation is refused with 409 and writes nothing.
    await p.sim.ledger("sol").submitNativeTransfer({
      from: SIM_DEPOSIT_SENDER.sol,
      to: defaultSimOperatorAddress("sol"),
      amount: 5n * NATIVE.sol.reserve,
    });
    await p.sim.ledger("sol").sealBlock();
    const first = await hotRotate.run(ctx, { chain: "sol" });
    assert.equal(first.to.index, 1);
    const after = await keys();
    await assert.rejects(hotRotate.run(ctx, { chain: "sol" }), (err: Error) => {
      assert.ok(err instanceof OpError && err.status === 409, String(err));
      assert.match(err.message, /still draining/);
      return true;
    });
    assert.deepEqual(await keys(), after);
  } finally {
    await p.close();
  }
});

Deno.test("a drain whose bytes pay another wallet than the one in effect is refused before it is recorded (sim xrp, lying builder)", async () => {
  const p = await verifiedPipeline(true);
  try {
    const xrp = p.sim.ledger("xrp");
    await xrp.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.xrp, to: OLD, amount: 10n * XRP });
    await xrp.sealBlock();
    await rotateHotWallet(p.ctx, "xrp", "ops@test", p.ctx.now());
    assert.equal(await drainTick(p.ctx, "xrp", "test-drainer", 60_000), "waiting");
    const retired = (await readHotWalletState(p.kv, "xrp")).state!.retired[0];
    assert.equal(retired.attempt, undefined, "nothing recorded");
    assert.deepEqual((await ledgerTxs(p.kv, "xrp")).filter((t) => t.tx.kind === "sweep"), [], "nothing sent");
    const [mismatch] = await listAlerts(p.kv, "transaction_mismatch");
    assert.match(mismatch.subject, /^xrp:sweep:drain-0-[0-9a-f]{8}$/);
    assert.match(mismatch.message, new RegExp(simHotWallet(OLD, 2)));
    assert.equal(await xrp.balance(OLD, "native"), 10n * XRP, "the old wallet keeps everything");
  } finally {
    await p.close();
  }
});

Deno.test("a payout or a sweep prepared against the wallet in effect before a rotation is refused at its commit, recording nothing (sim sol)", async () => {
  const p = await verifiedPipeline();
  try {
    // Read as the payout funding check and the sweeper read them, just before another process rotates.
    const holds = await readHotWalletHolds(p.kv, "sol");
    const { payer, check } = await hotPayerChecked(p.ctx, "sol");
    assert.equal(payer.hotWallet, defaultSimOperatorAddress("sol"));
    await rotateHotWallet(p.ctx, "sol", "ops@test", p.ctx.now());

    const payout = p.kv.atomic();
    addHotWalletHold(payout, "sol", holds.epoch, holds.epochValue, "payout-tx", 5n, holds.hotIndex);
    assert.equal((await payout.commit()).ok, false, "the rotation bumped the epoch the payout's check read");
    assert.equal((await p.kv.get(hotWalletHoldKey("sol", "payout-tx"))).versionstamp, null);

    const from = { address: "sol-deposit-0", derivationIndex: 0 };
    const sweep = await recordSweep(p.kv, {
      sweepId: "sweep-1",
      chain: "sol",
      from,
      to: payer.hotWallet!,
      amount: 10n,
      leave: 0n,
      tx: { txHash: "sweep-tx", raw: "raw" },
      at: p.ctx.now(),
      checks: [check],
    });
    assert.deepEqual(sweep, { ok: false, reason: "reservation_taken" });
    assert.equal(await readSweep(p.kv, "sol", "sweep-1"), null, "nothing recorded into the retired wallet");
    // Read again, the sweeper finds the new wallet in effect.
    assert.equal(
      (await hotPayerChecked(p.ctx, "sol")).payer.hotWallet,
      simHotWallet(defaultSimOperatorAddress("sol"), 1),
    );
  } finally {
    await p.close();
  }
});
