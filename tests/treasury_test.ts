/**
 * The treasury primitives (kv/treasury.ts) on real KV files: coins added idempotently by outpoint, spendable coins
 * leave out locked (kv/chain_state.ts coin reservations) and coinbase ones, a final spend removes a coin for good,
 * account totals; a sweep is recorded with its address lock and reservations in one atomic, one open sweep per
 * address, and a sweep proven dead releases what it held.
 */
import { withKv as withTempKv } from "./support/kv.ts";
import assert from "node:assert/strict";
import type { DeathProof, PreparedTx } from "../chains/adapter.ts";
import { addReleases, addReservations, coinLockKey } from "../kv/chain_state.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { sentTxOf } from "../model/sent_tx.ts";
import { deadEffects } from "../model/sent_tx_effects.ts";
import {
  accountLockKey,
  accountTotals,
  addCoins,
  addSpent,
  type Coin,
  coinTotals,
  completeSweep,
  openSweep,
  readCoin,
  readSweep,
  recordSweep,
  setAccountBalance,
  spendableCoins,
  spentBy,
  sweepDead,
  type SweepInput,
} from "../kv/treasury.ts";

const withKv = (fn: (kv: Deno.Kv, path: string) => Promise<void>) => withTempKv("treasury-", fn);

const coin = (i: number, amount: bigint, extra: Partial<Coin> = {}): Coin => ({
  chain: "doge",
  outpoint: { txHash: `deposit-${i}`, index: i % 2 },
  address: `D-ours-${i}`,
  derivationIndex: i,
  amount,
  height: 100 + i,
  coinbase: false,
  ...extra,
});

/** Records `tx` with its reservations, as the order actor's recording atomic does. */
async function recordTx(kv: Deno.Kv, tx: PreparedTx): Promise<boolean> {
  return (await addReservations(kv.atomic().set(["test_tx", tx.txHash], tx.raw), tx).commit()).ok;
}

const spendTx = (txHash: string, coins: Coin[]): PreparedTx => {
  const outpoints = coins.map((c) => c.outpoint);
  return {
    txHash,
    raw: `raw-${txHash}`,
    consumes: { kind: "outpoints", outpoints },
    reservations: [{ kind: "coins", chain: "doge", outpoints }],
  };
};

Deno.test("treasury: adding coins is idempotent by outpoint, and other facts for a known outpoint are refused", async () => {
  await withKv(async (kv) => {
    const coins = [coin(1, 1_000n), coin(2, 2_500n)];
    assert.equal(await addCoins(kv, coins), 2);
    assert.equal(await addCoins(kv, coins), 0);
    assert.equal(await addCoins(kv, [coin(2, 2_500n), coin(3, 7n)]), 1);
    assert.deepEqual(await coinTotals(kv, "doge"), { confirmed: 3_507n, locked: 0n, spendable: 3_507n });
    await assert.rejects(addCoins(kv, [coin(1, 999n)]), /recorded with other facts/);
    assert.equal((await readCoin(kv, "doge", coin(1, 0n).outpoint))?.amount, 1_000n);
    // Bad input changes nothing, even for the valid coins given with it.
    await assert.rejects(addCoins(kv, [coin(4, 5n), coin(5, 0n)]), /amount must be positive/);
    await assert.rejects(addCoins(kv, [coin(6, 5n, { chain: "sol" as "doge" })]), /not a UTXO chain/);
    await assert.rejects(addCoins(kv, [coin(7, 5n, { derivationIndex: -1 })]), /derivation index/);
    assert.equal(await readCoin(kv, "doge", coin(4, 0n).outpoint), null);
    assert.deepEqual((await coinTotals(kv, "zec")).confirmed, 0n);
  });
});

Deno.test("treasury: spendable coins leave out coins locked by a recorded transaction and coinbase coins", async () => {
  await withKv(async (kv) => {
    const [a, b, c, mined] = [coin(1, 1_000n), coin(2, 2_000n), coin(3, 4_000n), coin(4, 8_000n, { coinbase: true })];
    await addCoins(kv, [a, b, c, mined]);
    assert.ok(await recordTx(kv, spendTx("payout-1", [b, c])));
    // A second transaction wanting a locked coin is not recorded at all.
    assert.ok(!await recordTx(kv, spendTx("payout-2", [a, b])));
    assert.equal((await kv.get(coinLockKey("doge", a.outpoint))).value, null);

    assert.deepEqual((await spendableCoins(kv, "doge")).map((x) => x.outpoint), [a.outpoint]);
    assert.deepEqual(await coinTotals(kv, "doge"), { confirmed: 15_000n, locked: 6_000n, spendable: 1_000n });

    // payout-1 proven dead: its release (kv/chain_state.ts) makes its coins spendable again.
    await addReleases(kv.atomic(), "doge", spendTx("payout-1", [b, c]).consumes).commit();
    assert.deepEqual(await coinTotals(kv, "doge"), { confirmed: 15_000n, locked: 0n, spendable: 7_000n });
  });
});

Deno.test("treasury: a final spend removes its coins for good and keeps their locks naming it, in the recording atomic", async () => {
  await withKv(async (kv) => {
    const [a, b] = [coin(1, 1_000n), coin(2, 2_000n)];
    await addCoins(kv, [a, b]);
    assert.ok(await recordTx(kv, spendTx("payout-1", [a])));
    assert.ok(
      (await addSpent(kv.atomic().set(["test_final", "payout-1"], true), "doge", [a.outpoint], "payout-1")
        .commit()).ok,
    );
    assert.equal(await readCoin(kv, "doge", a.outpoint), null);
    // The lock names the spender: a transaction prepared over the coin before this commit cannot reserve it.
    assert.deepEqual((await kv.get(coinLockKey("doge", a.outpoint))).value, { txHash: "payout-1" });
    assert.ok(!await recordTx(kv, spendTx("payout-2", [a])), "a spent coin is never reserved again");
    assert.equal(await spentBy(kv, "doge", a.outpoint), "payout-1");
    // A rescan that sees the spent coin again does not bring it back.
    assert.equal(await addCoins(kv, [a]), 0);
    assert.deepEqual(await coinTotals(kv, "doge"), { confirmed: 2_000n, locked: 0n, spendable: 2_000n });
  });
});

// ---------------------------------------------------------------- sweeps

const HOT = "hot-wallet";
const sweepInput = (sweepId: string, address: string, extra: Partial<SweepInput> = {}): SweepInput => ({
  sweepId,
  chain: "xrp",
  from: { address, derivationIndex: 7 },
  to: HOT,
  amount: 4_000_000n,
  leave: 1_000_000n,
  tx: { txHash: `sweep-tx-${sweepId}`, raw: `raw-${sweepId}`, expiry: { kind: "ledger", value: 500 } },
  at: new Date("2026-01-02T03:04:05Z"),
  ...extra,
});
const EXPIRED: DeathProof = { kind: "expired", expiry: { kind: "ledger", value: 500 }, reached: 501 };

Deno.test("treasury: one open sweep per address; a second is refused by the KV check and writes nothing", async () => {
  await withKv(async (kv) => {
    const first = await recordSweep(kv, sweepInput("order-1", "rDeposit1"));
    assert.ok(first.ok);
    assert.equal(first.sweep.status, "prepared");
    assert.deepEqual(first.sweep.expiry, { kind: "ledger", value: 500 });

    const second = await recordSweep(kv, sweepInput("order-2", "rDeposit1"));
    assert.deepEqual(second, { ok: false, reason: "address_busy", openSweepId: "order-1" });
    assert.equal(await readSweep(kv, "xrp", "order-2"), null);
    const again = await recordSweep(kv, sweepInput("order-1", "rDeposit1"));
    assert.equal(again.ok ? "ok" : again.reason, "exists");
    assert.equal((await openSweep(kv, "xrp", "rDeposit1"))?.sweepId, "order-1");

    // Another address sweeps independently; two racing sweeps of one address: exactly one is recorded.
    assert.ok((await recordSweep(kv, sweepInput("order-3", "rDeposit2"))).ok);
    const race = await Promise.all([
      recordSweep(kv, sweepInput("order-4", "rDeposit3")),
      recordSweep(kv, sweepInput("order-5", "rDeposit3")),
    ]);
    assert.equal(race.filter((r) => r.ok).length, 1);
  });
});

Deno.test("treasury: a sweep whose reservation is taken records nothing, address lock included", async () => {
  await withKv(async (kv) => {
    const o = { txHash: "coin", index: 0 };
    const reserving = (txHash: string): PreparedTx => ({
      txHash,
      raw: "r",
      consumes: { kind: "outpoints", outpoints: [o] },
      reservations: [{ kind: "coins", chain: "xrp", outpoints: [o] }],
    });
    assert.ok(await recordTx(kv, reserving("other")));
    const res = await recordSweep(kv, sweepInput("order-1", "rDeposit1", { tx: reserving("sweep") }));
    assert.deepEqual(res, { ok: false, reason: "reservation_taken" });
    assert.equal(await readSweep(kv, "xrp", "order-1"), null);
    assert.equal((await kv.get(accountLockKey("xrp", "rDeposit1"))).value, null);
  });
});

Deno.test("treasury: a sweep proven dead keeps its proof and releases its address and reservations", async () => {
  await withKv(async (kv) => {
    const o = { txHash: "sweep-input", index: 0 };
    const tx: PreparedTx = {
      txHash: "sweep-tx",
      raw: "raw",
      consumes: { kind: "outpoints", outpoints: [o] },
      reservations: [{ kind: "coins", chain: "sui", outpoints: [o] }],
    };
    await setAccountBalance(kv, { chain: "sui", address: "0xdep", derivationIndex: 3, balance: 9_000n, reserve: 0n });
    await setAccountBalance(kv, { chain: "sui", address: HOT, derivationIndex: 0, balance: 1_000n, reserve: 100n });
    assert.ok((await recordSweep(kv, sweepInput("order-1", "0xdep", { chain: "sui", tx }))).ok);
    assert.deepEqual(await accountTotals(kv, "sui"), { confirmed: 10_000n, locked: 9_000n, spendable: 900n });
    assert.equal((await kv.get(coinLockKey("sui", o))).value !== null, true);

    // What the driver hands the store (actors/sent_tx.ts): the dead sweep's releases, written in its settling commit.
    const releases = (a: Deno.AtomicOperation) =>
      void addSentTxEffects(a, deadEffects(sentTxOf("sui", tx, new Date()), EXPIRED));
    const dead = await sweepDead(
      kv,
      "sui",
      "order-1",
      { proof: EXPIRED, detail: "ledger 501 > 500", at: new Date() },
      releases,
    );
    assert.ok(dead.ok);
    assert.equal(dead.sweep.status, "dead");
    assert.deepEqual(dead.sweep.proof, EXPIRED);
    assert.equal(await openSweep(kv, "sui", "0xdep"), null);
    assert.equal((await kv.get(coinLockKey("sui", o))).value, null);
    assert.deepEqual(await accountTotals(kv, "sui"), { confirmed: 10_000n, locked: 0n, spendable: 9_900n });
    // Proven dead once: again is a no-op, completing it is refused.
    assert.ok(
      (await sweepDead(kv, "sui", "order-1", { proof: EXPIRED, detail: "again", at: new Date() }, releases)).ok,
    );
    assert.equal((await readSweep(kv, "sui", "order-1"))?.detail, "ledger 501 > 500");
    const late = await completeSweep(kv, "sui", "order-1", { blockNumber: 9, at: new Date() });
    assert.equal(late.ok ? "ok" : late.reason, "settled");

    // The address is free: a new sweep may be signed and recorded.
    assert.ok((await recordSweep(kv, sweepInput("order-1-retry", "0xdep", { chain: "sui" }))).ok);
  });
});

Deno.test("treasury: a completed sweep frees its address; a dead proof after it is refused", async () => {
  await withKv(async (kv) => {
    assert.ok((await recordSweep(kv, sweepInput("order-1", "rDeposit1"))).ok);
    const done = await completeSweep(kv, "xrp", "order-1", { blockNumber: 480, at: new Date("2026-01-02T03:05:00Z") });
    assert.ok(done.ok);
    assert.equal(done.sweep.status, "completed");
    assert.equal(done.sweep.blockNumber, 480);
    assert.equal(await openSweep(kv, "xrp", "rDeposit1"), null);
    const dead = await sweepDead(kv, "xrp", "order-1", { proof: EXPIRED, detail: "x", at: new Date() }, () => {});
    assert.equal(dead.ok ? "ok" : dead.reason, "settled");
    assert.equal((await completeSweep(kv, "xrp", "nope", { blockNumber: 1, at: new Date() })).ok, false);
    assert.ok((await recordSweep(kv, sweepInput("order-2", "rDeposit1"))).ok);
  });
});

Deno.test("treasury: bad sweep and balance input is refused and changes nothing", async () => {
  await withKv(async (kv) => {
    await assert.rejects(recordSweep(kv, sweepInput("s", "D1", { chain: "doge" as "xrp" })), /not an account chain/);
    await assert.rejects(recordSweep(kv, sweepInput("s", "r1", { amount: 0n })), /amount must be positive/);
    await assert.rejects(recordSweep(kv, sweepInput("s", "r1", { leave: -1n })), /leave must not be negative/);
    await assert.rejects(recordSweep(kv, sweepInput("s", HOT)), /another address/);
    await assert.rejects(recordSweep(kv, sweepInput("", "r1")), /sweepId is required/);
    await assert.rejects(
      setAccountBalance(kv, { chain: "sol", address: "a", derivationIndex: 0, balance: -1n, reserve: 0n }),
      /balance must not be negative/,
    );
    const left: Deno.KvEntry<unknown>[] = [];
    for await (const e of kv.list({ prefix: [] })) left.push(e);
    assert.deepEqual(left, []);
  });
});
