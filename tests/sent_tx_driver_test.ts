/**
 * The one driver of our sent transactions (actors/sent_tx.ts) where the five followers it replaced differed
 * (actors/follow_up.ts, the table's rows 9 and 13), and the settling effects it returns as data
 * (model/sent_tx_effects.ts), written by one writer (kv/sent_tx_effects.ts) on real KV files.
 *
 * The xrp sweep runs on a rippled-shaped local server (tests/support/rippled_rpc_server.ts; no rippled runs here).
 */
import assert from "node:assert/strict";
import { sweepOnce } from "../actors/sweeper.ts";
import { getAlert } from "../kv/alerts.ts";
import { addReservations, coinLockKey, sequenceLockKey } from "../kv/chain_state.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { listSweeps, readSweep } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { deadEffects, failedEffects, finalEffects } from "../model/sent_tx_effects.ts";
import type { SentTx } from "../model/sent_tx.ts";
import { allOrders, completeMints } from "./support/burns.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { countKeys, watchToTip } from "./support/watch.ts";
import { signer, XRP, xrpHandPipeline } from "./support/xrp_env.ts";

const owner = "0x" + "ab".repeat(20);

Deno.test("xrp sweep on a rippled-shaped server: its Sequence taken by another transaction of the deposit account is proven dead, alerted as a payout's would be, its lock released, and the next sweep lands once", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  const { p, xrp } = await xrpHandPipeline(server, { live: { xrp: { startBlock: "tip" } } });
  try {
    await ensureUserWallet(p.kv, owner, "test-partner");
    const w = await createMintWallet(p.kv, owner, "xrp", "base", (_c, n) => signer.address("xrp", n));
    assert.ok(w.ok);
    const address = w.wallet.address;
    assert.equal(await watchToTip(p.ctx, "xrp"), 0);
    h.fund(address, 500n * XRP);
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await watchToTip(p.ctx, "xrp"), 1);
    await completeMints(p, await allOrders(p.kv), async () => {
      await p.sim.ledger("base").sealBlock();
      h.closeLedgers(1);
    });

    // The sweeper records its sweep and dies before broadcasting it.
    p.ctx.faultPoint = (point) => {
      if (point === "sweep-after-record") throw new Error("crash after recording the sweep");
    };
    assert.deepEqual(await sweepOnce(p.ctx, "xrp", "sweeper", 60_000), ["waiting"]);
    p.ctx.faultPoint = undefined;
    const [first] = (await listSweeps(p.kv, "xrp")).sweeps;
    assert.equal(first.status, "prepared");
    assert.equal(first.consumes?.kind, "nonce");
    const sequence = first.consumes.kind === "nonce" ? first.consumes.nonce : -1;
    assert.ok((await p.kv.get(sequenceLockKey("xrp", address, sequence))).value, "its Sequence is locked");

    // Another transaction of the deposit account (a leaked deposit key) takes that Sequence, validated.
    h.useSequence(address);
    h.closeLedgers(1);
    h.validateThrough(h.closedIndex);

    let steps: unknown[] = [];
    for (let i = 0; i < 10 && (await readSweep(p.kv, "xrp", first.sweepId))?.status === "prepared"; i++) {
      steps = (await sweepOnce(p.ctx, "xrp", "sweeper", 60_000)) ?? [];
      h.closeLedgers(1);
    }
    const dead = (await readSweep(p.kv, "xrp", first.sweepId))!;
    assert.equal(dead.status, "dead", JSON.stringify(steps));
    assert.equal(dead.proof?.kind, "conflict");
    // What the old sweep follower never did: the operator hears of a Sequence used elsewhere, as for a payout.
    const alert = await getAlert(p.kv, "nonce_used_elsewhere", first.txHash);
    assert.ok(alert, "an operator is told");
    assert.equal(alert.chain, "xrp");
    assert.match(alert.message, new RegExp(`sweep xrp ${first.sweepId}`));
    assert.match(alert.message, /the next sweep of the deposit is signed/);
    assert.equal((await p.kv.get(sequenceLockKey("xrp", address, sequence))).value, null, "its lock released");

    // The next attempt lands, once.
    for (let i = 0; i < 20 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await sweepOnce(p.ctx, "xrp", "sweeper", 60_000);
      h.closeLedgers(1);
      h.validateThrough(h.closedIndex);
    }
    const all = (await listSweeps(p.kv, "xrp")).sweeps;
    assert.deepEqual(all.map((s) => s.status).sort(), ["completed", "dead"]);
    assert.equal(await xrp.reader.balance!(address), XRP, "the address keeps its reserve, swept once");
  } finally {
    await p.close();
    await server.close();
  }
});

// ---- the settling effects, per chain family (pure) ----

const AT = "2026-01-02T03:04:05.000Z";
const outpoints = [{ txHash: "a".repeat(64), index: 0 }, { txHash: "b".repeat(64), index: 3 }];
const utxo: SentTx = {
  chain: "doge",
  txHash: "c".repeat(64),
  raw: "00",
  preparedAt: AT,
  consumes: { kind: "outpoints", outpoints, since: 10 },
  change: { index: 1, address: "D-change", amount: "1234" },
};
const xrpTx: SentTx = {
  chain: "xrp",
  txHash: "D".repeat(64),
  raw: "12",
  preparedAt: AT,
  consumes: { kind: "nonce", account: "rHot", nonce: 7 },
};

Deno.test("settling effects: a final UTXO transaction spends its inputs as the mined hash and adds its change, once", () => {
  const effects = finalEffects(utxo, "e".repeat(64), 120);
  assert.deepEqual(effects, [
    { kind: "releaseHotWalletHold", chain: "doge", txHash: utxo.txHash },
    { kind: "spendCoins", chain: "doge", outpoints, spentBy: "e".repeat(64) },
    {
      kind: "addCoin",
      coin: {
        chain: "doge",
        outpoint: { txHash: "e".repeat(64), index: 1 },
        address: "D-change",
        derivationIndex: 0,
        amount: 1234n,
        height: 120,
      },
    },
  ]);
  assert.deepEqual(structuredClone(effects), effects, "plain data");
});

Deno.test("settling effects: a failed or dead transaction frees what it held; a conflict's spent coins leave", () => {
  assert.deepEqual(failedEffects(xrpTx), [
    { kind: "releaseConsumed", chain: "xrp", consumes: xrpTx.consumes },
    { kind: "releaseHotWalletHold", chain: "xrp", txHash: xrpTx.txHash },
  ]);
  const conflict = {
    kind: "conflict" as const,
    consumed: { kind: "outpoints" as const, outpoints: [outpoints[0]] },
    spentBy: "f".repeat(64),
  };
  assert.deepEqual(deadEffects(utxo, conflict).at(-1), {
    kind: "spendCoins",
    chain: "doge",
    outpoints: [outpoints[0]],
    spentBy: "f".repeat(64),
  });
  const expired = { kind: "expired" as const, expiry: { kind: "height" as const, value: 5 }, reached: 6 };
  assert.deepEqual(deadEffects(utxo, expired), failedEffects(utxo), "an expiry only releases");
  // An account chain's conflict spends no coins of ours: only the lock and hold go.
  assert.deepEqual(
    deadEffects(xrpTx, { kind: "conflict", consumed: xrpTx.consumes!, spentBy: null }),
    failedEffects(xrpTx),
  );
});

Deno.test("settling effects on a real KV file: a coin spent by a final payout cannot be reserved again by a step that chose it before; a conflict's other coins are free", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sent-tx-effects-" });
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  try {
    const [c1, c2] = outpoints;
    const reserve = (txHash: string, coins: { txHash: string; index: number }[]) =>
      addReservations(kv.atomic(), {
        txHash,
        raw: "00",
        reservations: [{ kind: "coins", chain: "doge", outpoints: coins }],
      })
        .commit();
    const payoutA = { ...utxo, txHash: "1".repeat(64), consumes: { kind: "outpoints" as const, outpoints: [c1] } };
    assert.ok((await reserve(payoutA.txHash, [c1])).ok);
    // Payout A is final: its commit writes its effects.
    assert.ok((await addSentTxEffects(kv.atomic(), finalEffects(payoutA, payoutA.txHash, 50)).commit()).ok);
    // A step that read c1 as spendable before that commit signs payout B over it: the reservation refuses it.
    assert.equal((await reserve("2".repeat(64), [c1])).ok, false, "a spent coin is never reserved again");
    assert.deepEqual(
      (await kv.get(coinLockKey("doge", c1))).value,
      { txHash: payoutA.txHash },
      "its lock names who spent it",
    );

    // Payout C on c1's neighbour c2 and a fresh coin c3, killed by a conflict that took c2 only.
    const c3 = { txHash: "f".repeat(64), index: 0 };
    const payoutC = { ...utxo, txHash: "3".repeat(64), consumes: { kind: "outpoints" as const, outpoints: [c2, c3] } };
    assert.ok((await reserve(payoutC.txHash, [c2, c3])).ok);
    const conflict = {
      kind: "conflict" as const,
      consumed: { kind: "outpoints" as const, outpoints: [c2] },
      spentBy: "9".repeat(64),
    };
    assert.ok((await addSentTxEffects(kv.atomic(), deadEffects(payoutC, conflict)).commit()).ok);
    assert.deepEqual(
      (await kv.get(coinLockKey("doge", c2))).value,
      { txHash: "9".repeat(64) },
      "taken: spent for good",
    );
    assert.equal((await kv.get(coinLockKey("doge", c3))).value, null, "not taken: free again");
    assert.equal((await reserve("4".repeat(64), [c3])).ok, true, "and reservable");
    assert.equal((await reserve("5".repeat(64), [c2])).ok, false);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
