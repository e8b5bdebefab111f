/**
 * The sol payer on a Solana-RPC-shaped server (tests/support/solana_rpc_server.ts; no validator runs here): payout
 * checks against the node's rent-exempt minimum and the hot wallet's balance, payouts and sweeps that land with the
 * exact amounts, the recorded intent accepted by the order schema, a re-sent payout landing once, and a payout
 * proven dead only once the finalized block height passes its lastValidBlockHeight.
 */
import assert from "node:assert/strict";
import { NATIVE } from "../chains/catalog.ts";
import { SentTxSchema as IntentSchema } from "../model/sent_tx.ts";
import { FEE_PER_SIGNATURE, RENT_EXEMPT_MINIMUM_0, startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { ours, signer, solOn, stranger } from "./support/sol_env.ts";

const SOL = 1_000_000_000n;
const hot = signer.address("sol", 0, "hot");

Deno.test("sol payer on a Solana-RPC-shaped server: checkPayout refuses a new account below rent and waits when unfunded", async () => {
  const server = startSolanaRpcServer();
  try {
    const { payer } = solOn(server);
    assert.equal(payer.hotWallet, hot);
    const req = (to: string, amount: bigint) => ({ orderId: "o1", to, amount, memo: null });
    const unfunded = await payer.checkPayout!(req(stranger(1), SOL));
    assert.ok(!unfunded.ok && unfunded.reason === "unfunded", JSON.stringify(unfunded));
    assert.match(unfunded.detail, new RegExp(`${hot} holds 0 lamports`));
    server.fund(hot, SOL + FEE_PER_SIGNATURE + RENT_EXEMPT_MINIMUM_0);
    assert.deepEqual(await payer.checkPayout!(req(stranger(1), SOL)), {
      ok: true,
      spendable: SOL,
      fee: FEE_PER_SIGNATURE,
    });
    assert.equal((await payer.checkPayout!(req(stranger(1), SOL + 1n))).ok, false, "the hot wallet keeps its rent");
    const below = await payer.checkPayout!(req(stranger(1), RENT_EXEMPT_MINIMUM_0 - 1n));
    assert.ok(!below.ok && below.reason === "destination_below_reserve", JSON.stringify(below));
    assert.deepEqual(await payer.checkPayout!(req(stranger(1), RENT_EXEMPT_MINIMUM_0)), {
      ok: true,
      spendable: SOL,
      fee: FEE_PER_SIGNATURE,
    });
    // An existing account may receive any amount.
    server.fund(stranger(2), SOL);
    assert.deepEqual(await payer.checkPayout!(req(stranger(2), 1n)), {
      ok: true,
      spendable: SOL,
      fee: FEE_PER_SIGNATURE,
    });
    await assert.rejects(() => payer.checkPayout!(req("not-an-address", 1n)), /not a Solana address/);
  } finally {
    await server.close();
  }
});

Deno.test("sol payer on a Solana-RPC-shaped server: a payout lands once with the exact amount, its intent fits the order schema", async () => {
  const server = startSolanaRpcServer({ finalityLag: 1 });
  try {
    const { payer, reader } = solOn(server);
    server.fund(hot, 10n * SOL);
    const tx = await payer.preparePayout({ orderId: "burn-1", to: stranger(3), amount: 2n * SOL, memo: "7421" });
    assert.equal(tx.expiry?.kind, "height");
    assert.equal(tx.expiry!.value, server.finalizedHeight + 150, "lastValidBlockHeight of the finalized blockhash");
    assert.equal(tx.consumes, undefined);
    assert.equal(tx.reservations, undefined);
    IntentSchema.parse({
      chain: "sol",
      txHash: tx.txHash,
      raw: tx.raw,
      preparedAt: new Date().toISOString(),
      expiry: tx.expiry,
    });
    // Two orders alike in everything but the id are two transactions (the memo carries the id).
    const twin = await payer.preparePayout({ orderId: "burn-2", to: stranger(3), amount: 2n * SOL, memo: "7421" });
    assert.notEqual(twin.txHash, tx.txHash);
    await payer.broadcast(tx);
    await payer.broadcast(tx);
    await payer.nudge!(tx, 0);
    server.produce(2);
    const status = await reader.txStatus(tx.txHash, tx);
    assert.ok(status.state === "included" && status.success && status.final === true, JSON.stringify(status));
    assert.equal(server.balance(stranger(3)), 2n * SOL);
    assert.equal(server.balance(hot), 8n * SOL - FEE_PER_SIGNATURE, "paid once, one fee");
    await payer.broadcast(tx); // after it landed: still harmless
    server.produce(1);
    assert.equal(server.balance(stranger(3)), 2n * SOL);
  } finally {
    await server.close();
  }
});

Deno.test("sol payer on a Solana-RPC-shaped server: a sweep moves the whole balance (closing the account) or the amount asked, its fee taken out of it", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { payer, reader } = solOn(server);
    server.fund(hot, SOL);
    server.fund(ours(5), 300_000_000n);
    const whole = await payer.prepareSweep!({ sweepId: "mint-5", from: ours(5), derivationIndex: 5 });
    await payer.broadcast(whole);
    server.produce(1);
    assert.equal(await reader.balance!(ours(5)), 0n, "the deposit account closes at 0");
    assert.equal(await reader.balance!(hot), SOL + 300_000_000n - FEE_PER_SIGNATURE);
    const sweepTx = await reader.transfersOf(whole.txHash);
    assert.deepEqual(sweepTx?.map((t) => [t.to, t.amount]), [[hot, 300_000_000n - FEE_PER_SIGNATURE]]);

    // As actors/sweeper.ts asks: the balance less the catalog's reserve leaves, the fee taken out of it.
    server.fund(ours(6), 100_000_000n);
    const reserve = NATIVE.sol.reserve;
    const part = await payer.prepareSweep!({
      sweepId: "mint-6",
      from: ours(6),
      derivationIndex: 6,
      amount: 100_000_000n - reserve,
    });
    await payer.broadcast(part);
    server.produce(1);
    assert.equal(await reader.balance!(ours(6)), reserve, "the reserve stays, rent-exempt");
    assert.equal(
      (await reader.transfersOf(part.txHash))?.find((t) => t.to === hot)?.amount,
      100_000_000n - reserve - FEE_PER_SIGNATURE,
    );
    server.fund(ours(7), 100_000_000n);
    await assert.rejects(
      () => payer.prepareSweep!({ sweepId: "x", from: ours(7), derivationIndex: 7, amount: 100_000_000n - 1_000n }),
      /below the rent-exempt minimum/,
    );
    await assert.rejects(() => payer.prepareSweep!({ sweepId: "y", from: ours(9), derivationIndex: 6 }), /is .*, not/);
    await assert.rejects(
      () => payer.prepareSweep!({ sweepId: "z", from: ours(8), derivationIndex: 8 }),
      /do not cover the 5000 lamport fee|do not cover/,
    );
  } finally {
    await server.close();
  }
});

Deno.test("sol payer on a Solana-RPC-shaped server: a dropped payout is dead only once the finalized height passes lastValidBlockHeight", async () => {
  const server = startSolanaRpcServer({ finalityLag: 2, blockhashValidity: 5 });
  try {
    const { payer, reader } = solOn(server);
    server.fund(hot, 10n * SOL);
    const tx = await payer.preparePayout({ orderId: "burn-9", to: stranger(9), amount: SOL, memo: null });
    await payer.broadcast(tx);
    server.drop(tx.txHash);
    const own = { raw: tx.raw, expiry: tx.expiry };
    while (server.finalizedHeight <= tx.expiry!.value) {
      assert.equal((await reader.txStatus(tx.txHash, own)).state, "unknown", `finalized ${server.finalizedHeight}`);
      server.produce(1);
    }
    const dead = await reader.txStatus(tx.txHash, own);
    assert.ok(dead.state === "dead" && dead.proof.kind === "expired", JSON.stringify(dead));
    assert.equal(dead.proof.kind === "expired" && dead.proof.reached, tx.expiry!.value + 1);
    assert.equal((await reader.txStatus(tx.txHash)).state, "unknown", "never dead without the recorded transaction");
    // Re-sent after its expiry: the node never includes it.
    await payer.broadcast(tx);
    server.produce(3);
    assert.equal(server.landedAt(tx.txHash), null);
    assert.equal(server.balance(stranger(9)), 0n);
  } finally {
    await server.close();
  }
});
