/**
 * The xrp payer on a rippled-shaped server (tests/support/rippled_rpc_server.ts; no rippled runs here): payouts and
 * sweeps applied by a server that verifies them, checkPayout's reserve and funding rules, the Sequence locked in the
 * recording atomic, and deaths proven by expiry (LastLedgerSequence passed, searched all) or by a used Sequence.
 */
import assert from "node:assert/strict";
import { decode } from "xrpl";
import { deadEffects } from "../model/sent_tx_effects.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import type { Intent } from "../actors/transition.ts";
import { type OwnTx, type PreparedTx, TransientChainError } from "../chains/adapter.ts";
import { addReservations, sequenceLockKey } from "../kv/chain_state.ts";
import { withKv } from "./support/kv.ts";
import type { RippledServer } from "./support/rippled_rpc_server.ts";
import { depositAddress, elsewhere, hotWallet, withRippled, XRP, xrpOn } from "./support/xrp_env.ts";

function own(tx: PreparedTx): OwnTx {
  return { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes };
}

/** Records `tx` as the order actor does: the intent and its reservations in one atomic. */
async function record(kv: Deno.Kv, tx: PreparedTx): Promise<boolean> {
  const key = ["xrp_test_intent", tx.txHash];
  return (await addReservations(kv.atomic().check({ key, versionstamp: null }).set(key, tx.raw), tx).commit()).ok;
}

function funded(server: RippledServer, drops = 100n * XRP): void {
  server.hooks.fund(hotWallet, drops);
  server.hooks.validateThrough(server.hooks.closedIndex + 1);
}

Deno.test("xrp checkPayout on a rippled-shaped server: reserve of a new destination, funds of the hot wallet", async () => {
  await withRippled({}, async (server) => {
    const { payer } = xrpOn(server);
    const req = (to: string, amount: bigint) => ({ orderId: "o", to, amount, memo: "1" });
    const none = await payer.checkPayout(req(elsewhere, 5n * XRP));
    assert.ok(!none.ok && none.reason === "unfunded" && /does not exist yet/.test(none.detail), JSON.stringify(none));
    funded(server, 10n * XRP);
    const below = await payer.checkPayout(req(elsewhere, XRP - 1n));
    assert.ok(!below.ok && below.reason === "destination_below_reserve", JSON.stringify(below));
    assert.match(
      below.detail,
      /does not exist on the XRP Ledger and 999999 drops is below the 1000000 drops base reserve/,
    );
    assert.deepEqual(await payer.checkPayout(req(elsewhere, XRP)), { ok: true, spendable: 9n * XRP - 10n, fee: 10n });
    // 10 XRP less the 1 XRP reserve and the 10-drop fee.
    assert.deepEqual(await payer.checkPayout(req(elsewhere, 9n * XRP - 10n)), {
      ok: true,
      spendable: 9n * XRP - 10n,
      fee: 10n,
    });
    const short = await payer.checkPayout(req(elsewhere, 9n * XRP - 9n));
    assert.ok(!short.ok && short.reason === "unfunded", JSON.stringify(short));
    assert.match(short.detail, /can spend 8999990 drops \(balance 10000000 less its 1000000 reserve and a 10 fee\)/);
    // An existing destination takes less than the reserve.
    server.hooks.fund(depositAddress(1), 2n * XRP);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    assert.deepEqual(await payer.checkPayout(req(depositAddress(1), 1n)), {
      ok: true,
      spendable: 9n * XRP - 10n,
      fee: 10n,
    });
  });
});

Deno.test("xrp payout on a rippled-shaped server: applied once in a validated ledger, rebroadcast harmless", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer, reader } = xrpOn(server);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 3n * XRP, memo: "77" });
    await payer.broadcast(tx);
    await payer.broadcast(tx); // same bytes, already applied in the open ledger: tefPAST_SEQ of a known hash
    assert.deepEqual(server.hooks.submissions.map((s) => s.engineResult), ["tesSUCCESS", "tefPAST_SEQ"]);
    server.hooks.closeLedgers(1);
    const seen = await reader.txStatus(tx.txHash, own(tx));
    assert.ok(seen.state === "included" && seen.final === false, "closed, not validated yet");
    server.hooks.closeLedgers(1);
    const status = await reader.txStatus(tx.txHash, own(tx));
    assert.ok(status.state === "included" && status.final && status.success, JSON.stringify(status));
    await payer.nudge!(tx, 0);
    server.hooks.closeLedgers(2);
    assert.equal(server.hooks.account(elsewhere)?.balance, 3n * XRP, "paid once");
    assert.equal(server.hooks.account(hotWallet)?.balance, 97n * XRP - 10n);
  });
});

Deno.test("xrp payout on a rippled-shaped server: below the reserve to an unfunded account fails on chain with tecNO_DST_INSUF_XRP", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer, reader } = xrpOn(server);
    const sequence = server.hooks.account(hotWallet)!.sequence;
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: XRP / 2n, memo: "1" });
    await payer.broadcast(tx); // a tec is applied (fee claimed, Sequence used): not a broadcast error
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const status = await reader.txStatus(tx.txHash, own(tx));
    assert.ok(status.state === "included" && !status.success && status.final, JSON.stringify(status));
    assert.equal(status.reason, "tecNO_DST_INSUF_XRP");
    assert.equal(server.hooks.account(hotWallet)!.sequence, sequence + 1, "the tec used the Sequence");
    assert.equal(server.hooks.account(elsewhere), null);
  });
});

Deno.test("xrp Sequence on a rippled-shaped server: two payouts prepared at once, one records, the other is refused", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer } = xrpOn(server);
    await withKv("xrp-seq-", async (kv) => {
      const [a, b] = await Promise.all([
        payer.preparePayout({ orderId: "a", to: elsewhere, amount: 2n * XRP, memo: "1" }),
        payer.preparePayout({ orderId: "b", to: elsewhere, amount: 3n * XRP, memo: "2" }),
      ]);
      const seq = server.hooks.account(hotWallet)!.sequence;
      assert.equal(a.consumes?.kind === "nonce" && a.consumes.nonce, seq);
      assert.equal(b.consumes?.kind === "nonce" && b.consumes.nonce, seq, "both took the same Sequence");
      assert.equal(await record(kv, a), true);
      assert.equal(await record(kv, b), false, "the second is refused by the commit");
      assert.deepEqual((await kv.get(sequenceLockKey("xrp", hotWallet, seq))).value, { txHash: a.txHash });
      // Once the first is applied in the open ledger, the next payout takes the next Sequence.
      await payer.broadcast(a);
      const c = await payer.preparePayout({ orderId: "b", to: elsewhere, amount: 3n * XRP, memo: "2" });
      assert.equal((decode(c.raw) as { Sequence: number }).Sequence, seq + 1);
      assert.equal(await record(kv, c), true);
      await payer.broadcast(c);
      server.hooks.validateThrough(server.hooks.closedIndex + 1);
      assert.equal(server.hooks.account(elsewhere)?.balance, 5n * XRP);
    });
  });
});

Deno.test("xrp payout on a rippled-shaped server: a lost payout is dead only once a validated ledger passes LastLedgerSequence, and its Sequence is reused", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer, reader } = xrpOn(server);
    await withKv("xrp-expiry-", async (kv) => {
      const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 2n * XRP, memo: "5" });
      assert.ok(await record(kv, tx));
      server.hooks.drop(tx.txHash);
      await payer.broadcast(tx); // accepted by the node, then lost
      const last = tx.expiry!.value;
      while (server.hooks.validatedIndex <= last) {
        const s = await reader.txStatus(tx.txHash, own(tx));
        assert.equal(s.state, "unknown", `validated ${server.hooks.validatedIndex} <= LastLedgerSequence ${last}`);
        server.hooks.closeLedgers(1);
      }
      // A node that no longer keeps the start of the range cannot say it searched it all: no proof.
      server.hooks.keepHistoryFrom(last - 10);
      assert.equal((await reader.txStatus(tx.txHash, own(tx))).state, "unknown", "searched_all false: not dead");
      server.hooks.keepHistoryFrom(0);
      const dead = await reader.txStatus(tx.txHash, own(tx));
      assert.ok(dead.state === "dead" && dead.proof.kind === "expired", JSON.stringify(dead));
      assert.deepEqual(dead.proof, { kind: "expired", expiry: tx.expiry, reached: last + 1 });
      assert.equal((await reader.txStatus(tx.txHash)).state, "unknown", "never dead without the recorded transaction");
      // Transient, not unexpected: the ordinary way to its proof of death, which the next look gives.
      await assert.rejects(payer.broadcast(tx), TransientChainError, "too late to land");
      await assert.rejects(payer.broadcast(tx), /tefMAX_LEDGER/);
      // The Sequence was never used: the commit recording the death releases it, and the next payout takes it.
      const seq = (tx.consumes as { nonce: number }).nonce;
      const again = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 2n * XRP, memo: "5" });
      assert.equal((again.consumes as { nonce: number }).nonce, seq);
      assert.equal(await record(kv, again), false, "held until the death is recorded");
      const intent: Intent = {
        chain: "xrp",
        txHash: tx.txHash,
        raw: tx.raw,
        preparedAt: new Date().toISOString(),
        expiry: tx.expiry,
        consumes: tx.consumes,
      };
      const atomic = kv.atomic();
      addSentTxEffects(atomic, deadEffects(intent, dead.proof));
      assert.ok((await atomic.commit()).ok);
      assert.equal(await record(kv, again), true);
      await payer.broadcast(again);
      server.hooks.validateThrough(server.hooks.closedIndex + 1);
      assert.equal(server.hooks.account(elsewhere)?.balance, 2n * XRP, "paid once");
    });
  });
});

Deno.test("xrp payout on a rippled-shaped server: a Sequence used by another transaction proves it dead (conflict)", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer, reader } = xrpOn(server);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 2n * XRP, memo: "5" });
    server.hooks.useSequence(hotWallet);
    server.hooks.closeLedgers(1);
    assert.equal((await reader.txStatus(tx.txHash, own(tx))).state, "unknown", "used in a ledger not yet validated");
    server.hooks.closeLedgers(1);
    const dead = await reader.txStatus(tx.txHash, own(tx));
    assert.ok(dead.state === "dead" && dead.proof.kind === "conflict", JSON.stringify(dead));
    assert.deepEqual(dead.proof.consumed, tx.consumes);
    await assert.rejects(
      payer.broadcast(tx),
      (err: Error) => err instanceof TransientChainError && /tefPAST_SEQ/.test(err.message),
    );
  });
});

Deno.test("xrp sweep on a rippled-shaped server: the deposit moves to the hot wallet, the address keeps its reserve", async () => {
  await withRippled({}, async (server) => {
    const from = depositAddress(4);
    server.hooks.fund(from, 12n * XRP);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const { payer, reader } = xrpOn(server);
    const tx = await payer.prepareSweep({ sweepId: "s", from, derivationIndex: 4, amount: 11n * XRP });
    await payer.broadcast(tx);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const status = await reader.txStatus(tx.txHash, own(tx));
    assert.ok(status.state === "included" && status.success && status.final);
    assert.equal(await reader.balance!(from), XRP, "the base reserve stays");
    assert.equal(await reader.balance!(hotWallet), 11n * XRP - 10n);
    await assert.rejects(
      payer.prepareSweep({ sweepId: "s2", from, derivationIndex: 4 }),
      /nothing above its 1000000 reserve/,
    );
  });
});
