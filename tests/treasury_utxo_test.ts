/**
 * The treasury wired into the order pipeline on doge (sim ledger in UTXO mode, real KV file, watcher and order steps
 * driven by hand, no genesis coins): a burn the treasury cannot fund waits visibly; a deposit's output enters the
 * treasury when its mint order is confirmed; the burn is then paid from that coin with change back to us; a crash
 * between recording and broadcast re-sends the same bytes without selecting the coins twice; a conflicting spend of
 * the payout's input proves it dead, its coins leave the treasury, and a new payout is paid exactly once.
 */
import assert from "node:assert/strict";
import { intentOf } from "../actors/transition.ts";
import { TREASURY_CANNOT_FUND, TREASURY_TOO_FRAGMENTED } from "../actors/treasury_steps.ts";
import { consolidate, treasuryTick } from "../actors/sweeper.ts";
import { MAX_TX_INPUTS } from "../chains/shared/coin_select.ts";
import type { Outpoint } from "../chains/adapter.ts";
import { NATIVE } from "../chains/catalog.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { CHANGE_INDEX } from "../chains/sim/utxo.ts";
import { coinLocks } from "../kv/chain_state.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { addCoins, readCoin, spendableCoins, spentBy } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { payoutTxs, stored } from "./support/chain_facts.ts";
import { allOrders, SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { type HandPipeline, handPipeline, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "0d".repeat(20);
const DOGE = 100_000_000n;
const BURN_WEI = 30n * 10n ** 18n; // 30 uDOGE
const HOT = defaultSimOperatorAddress("doge");

/** A deposit (default 100 DOGE) to the owner's doge deposit address, scanned, its mint order confirmed; its outpoint. */
async function deposit(p: HandPipeline, n: number, amount = 100n * DOGE): Promise<Outpoint & { orderId: string }> {
  const chain = "doge";
  await ensureUserWallet(p.kv, OWNER, "test-partner");
  const created = await createMintWallet(p.kv, OWNER, chain, "base", (_c, i) => `sim-doge-deposit-${i}`);
  const address = created.ok ? created.wallet.address : "sim-doge-deposit-0";
  const before = new Set((await allOrders(p.kv)).map((o) => o.id));
  const l = p.sim.ledger(chain);
  const { txHash } = await l.submitNativeTransfer({ from: `outsider-${n}`, to: address, amount });
  for (let i = 0; i < NATIVE.doge.simConfirmations; i++) await l.sealBlock();
  assert.equal(await watchToTip(p.ctx, chain), 1);
  const [mint] = (await allOrders(p.kv)).filter((o) => !before.has(o.id));
  const coin = { txHash, index: 0 };
  assert.equal(await readCoin(p.kv, chain, coin), null, "not a coin before its order is confirmed");
  assert.equal(await stepNow(p, mint.id), "moved");
  assert.equal((await stored(p.kv, mint.id)).status, "processing");
  const recorded = await readCoin(p.kv, chain, coin);
  assert.equal(recorded?.amount, amount, "the deposit output is a treasury coin");
  assert.equal(recorded?.address, address);
  return { ...coin, orderId: mint.id };
}

/** A burn of 30 uDOGE, confirmed, then waiting: nothing in the treasury pays it. */
async function waitingBurn(p: HandPipeline): Promise<string> {
  const { ids: [id] } = await simBurnOrders(p, "doge", OWNER, 1, BURN_WEI);
  assert.equal(await stepNow(p, id), "moved"); // confirmed
  assert.equal(await stepNow(p, id), "waiting");
  const waiting = await stored(p.kv, id);
  assert.equal(waiting.status, "processing");
  assert.equal(waiting.details.heldReason, TREASURY_CANNOT_FUND);
  assert.equal(waiting.errorMessage, null, "waiting is not failing");
  return id;
}

/** Steps `id` as blocks go by until it completes. */
async function payOut(p: HandPipeline, id: string) {
  for (let i = 0; i < 10 && (await stored(p.kv, id)).status !== "completed"; i++) {
    await p.sim.ledger("doge").sealBlock();
    await stepNow(p, id);
  }
  const done = await stored(p.kv, id);
  assert.equal(done.status, "completed", JSON.stringify(done.details));
  return done;
}

/** Steps the order once with a crash right after the payout is recorded, before it is broadcast. */
async function recordThenCrash(p: HandPipeline, id: string) {
  p.ctx.faultPoint = (point) => {
    if (point === "after-record") throw new Error("crash after record");
  };
  await assert.rejects(() => stepNow(p, id), /crash after record/);
  p.ctx.faultPoint = undefined;
  const burning = await stored(p.kv, id);
  assert.equal(burning.status, "burning");
  assert.equal(burning.details.heldReason, undefined, "the held reason goes when the order moves");
  assert.deepEqual(await payoutTxs(p.kv, "doge", id), [], "recorded, never broadcast");
  return intentOf(burning)!;
}

Deno.test("doge treasury: a waiting burn is paid from a deposit's coin, change back to us, once across a crash", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    const id = await waitingBurn(p);
    const { orderId: _, ...coin } = await deposit(p, 1);
    const intent = await recordThenCrash(p, id);
    assert.deepEqual(intent.consumes, { kind: "outpoints", outpoints: [coin] });
    assert.deepEqual(await coinLocks(p.kv, "doge", [coin]), [intent.txHash], "locked in the recording atomic");
    assert.deepEqual(await spendableCoins(p.kv, "doge"), [], "never selected twice");

    // The next step re-sends the very same bytes.
    assert.equal(await stepNow(p, id), "waiting");
    const txs = await payoutTxs(p.kv, "doge", id);
    assert.deepEqual(txs.map((t) => t.hash), [intent.txHash]);
    const done = await payOut(p, id);
    assert.equal(done.transactionHash, intent.txHash);
    assert.equal((await payoutTxs(p.kv, "doge", id)).length, 1, "paid exactly once");

    // The treasury: the deposit coin spent by the payout, the change a new coin.
    const fee = utxoFee("doge")(1, 2);
    const change = 100n * DOGE - 30n * DOGE - fee;
    assert.equal(await spentBy(p.kv, "doge", coin), intent.txHash);
    assert.equal(await readCoin(p.kv, "doge", coin), null);
    const spendable = await spendableCoins(p.kv, "doge");
    assert.deepEqual(spendable.map((c) => [c.outpoint, c.address, c.amount]), [
      [{ txHash: intent.txHash, index: CHANGE_INDEX }, HOT, change],
    ]);
    // The ledger's sums: the deposit is split between the destination, our change and the fee.
    const l = p.sim.ledger("doge");
    assert.equal(await l.balance(SIM_DESTINATION.doge, "native"), 30n * DOGE);
    assert.equal(await l.balance(HOT, "native"), change);
    assert.equal(await l.balance("sim-doge-deposit-0", "native"), 0n);
  } finally {
    await p.close();
  }
});

Deno.test("doge treasury: a conflicting spend of the payout's input proves it dead; a new payout is paid once", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    const id = await waitingBurn(p);
    const { orderId: _first, ...first } = await deposit(p, 1);
    const intent = await recordThenCrash(p, id);
    const l = p.sim.ledger("doge");
    // Someone with our key spends the coin first; our recorded payout can never be mined once that is buried.
    const thief = await l.submitConflictingSpend([first], "thief");
    await l.sealBlock();
    assert.equal(await stepNow(p, id), "waiting", "not buried yet: not dead");
    assert.equal((await stored(p.kv, id)).status, "burning");
    for (let i = 1; i < NATIVE.doge.simConfirmations; i++) await l.sealBlock();
    assert.equal(await stepNow(p, id), "moved");
    const back = await stored(p.kv, id);
    assert.equal(back.status, "processing");
    const [dead] = back.details.deadIntents!;
    assert.equal(dead.txHash, intent.txHash);
    assert.deepEqual(dead.proof, {
      kind: "conflict",
      consumed: { kind: "outpoints", outpoints: [first] },
      spentBy: thief.txHash,
    });
    // Spent for good by the conflicting transaction: its lock names it, so no payout reserves the coin again.
    assert.deepEqual(await coinLocks(p.kv, "doge", [first]), [thief.txHash], "held by its spender");
    assert.equal(await spentBy(p.kv, "doge", first), thief.txHash, "and gone from the treasury");

    // Nothing left to pay with: it waits; a second deposit funds the new payout.
    assert.equal(await stepNow(p, id), "waiting");
    assert.equal((await stored(p.kv, id)).details.heldReason, TREASURY_CANNOT_FUND);
    const { orderId: _second, ...second } = await deposit(p, 2);
    assert.equal(await stepNow(p, id), "moved");
    const next = intentOf(await stored(p.kv, id))!;
    assert.notEqual(next.txHash, intent.txHash);
    assert.deepEqual(next.consumes, { kind: "outpoints", outpoints: [second] });
    const done = await payOut(p, id);
    assert.equal(done.transactionHash, next.txHash);
    const txs = await payoutTxs(p.kv, "doge", id);
    assert.deepEqual(txs.map((t) => [t.hash, t.status]), [[next.txHash, "included"]], "paid exactly once");
    // The dead payout's bytes are refused by the chain for good.
    await assert.rejects(() => p.sim.payer("doge").broadcast({ txHash: intent.txHash, raw: intent.raw }), /spent/);
    assert.equal(await l.balance(SIM_DESTINATION.doge, "native"), 30n * DOGE);
  } finally {
    await p.close();
  }
});

Deno.test("doge treasury: a below-minimum deposit fails its order but its coin is ours; dust makes no coin", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    const small = NATIVE.doge.minimumDeposit / 2n;
    assert.ok(small >= NATIVE.doge.dustDeposit);
    const { orderId, ...coin } = await deposit(p, 1, small);
    assert.equal(await stepNow(p, orderId), "moved");
    assert.equal((await stored(p.kv, orderId)).status, "failed");
    assert.deepEqual((await spendableCoins(p.kv, "doge")).map((c) => [c.outpoint, c.amount]), [[coin, small]]);

    // Dust: no order, so no coin; the output stays at our deposit address, on the ledger.
    const l = p.sim.ledger("doge");
    const before = (await allOrders(p.kv)).length;
    const dust = NATIVE.doge.dustDeposit / 2n;
    await l.submitNativeTransfer({ from: "outsider-dust", to: "sim-doge-deposit-0", amount: dust });
    for (let i = 0; i < NATIVE.doge.simConfirmations; i++) await l.sealBlock();
    await watchToTip(p.ctx, "doge");
    assert.equal((await allOrders(p.kv)).length, before);
    assert.equal((await spendableCoins(p.kv, "doge")).length, 1);
    assert.equal(await l.balance("sim-doge-deposit-0", "native"), small + dust);
  } finally {
    await p.close();
  }
});

Deno.test("doge treasury: enough only in more coins than one transaction may spend: the burn waits saying so, and is paid once the operator consolidates", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    // MAX_TX_INPUTS + 10 coins of 1 DOGE each at our change address: enough, but only in more than one transaction
    // may spend.
    const l = p.sim.ledger("doge");
    const coins = [];
    for (let i = 0; i < MAX_TX_INPUTS + 10; i++) {
      const outpoint = await l.ensureGenesisOutput(HOT, DOGE, i);
      coins.push({
        chain: "doge" as const,
        outpoint,
        address: HOT,
        derivationIndex: 0,
        amount: DOGE,
        height: 0,
        coinbase: false,
      });
    }
    await addCoins(p.kv, coins);
    const burn = BigInt(MAX_TX_INPUTS + 5);
    const { ids: [id] } = await simBurnOrders(p, "doge", OWNER, 1, burn * 10n ** 18n);
    assert.equal(await stepNow(p, id), "moved"); // confirmed
    assert.equal(await stepNow(p, id), "waiting");
    const waiting = await stored(p.kv, id);
    assert.equal(waiting.status, "processing");
    assert.equal(waiting.details.heldReason, TREASURY_TOO_FRAGMENTED);
    assert.equal(intentOf(waiting), undefined, "nothing signed: such a payout could never be recorded");

    // The operator consolidates MAX_TX_INPUTS of them into one coin; the burn then goes out from it.
    const started = await consolidate(p.kv, p.ctx.chains, "doge", p.ctx.settings.confirmations("doge"), {
      maxInputs: MAX_TX_INPUTS,
      minInputs: 2,
      by: "ops",
      now: p.ctx.now(),
      fee: p.ctx.settings.utxoFee("doge"),
    });
    assert.equal(started.kind, "started");
    const ticks = [];
    for (let i = 0; i < 10 && ticks.at(-1) !== "completed"; i++) {
      await l.sealBlock();
      ticks.push(await treasuryTick(p.ctx, "doge", "test", 60_000));
    }
    assert.equal(ticks.at(-1), "completed", ticks.join(", "));
    const paid = await payOut(p, id);
    assert.equal(paid.details.heldReason, undefined);
    assert.equal(await l.balance(SIM_DESTINATION.doge, "native"), burn * DOGE);
  } finally {
    await p.close();
  }
});
