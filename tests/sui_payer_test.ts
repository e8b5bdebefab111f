/**
 * The Sui payer (chains/sui/payer.ts) on a Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts; no Sui node
 * runs here): payouts from the hot wallet and sweeps into it, built offline with @mysten/sui, signed through our
 * signer, verified with @mysten/sui's own verifier and decoded back (sender, recipient, amount, gas, expiration), then
 * executed by the server, which checks them as a validator would. Recorded as the order actor records them (the
 * order schema validates the intent) with their coin reservations.
 */
import assert from "node:assert/strict";
import { bcs } from "@mysten/sui/bcs";
import { Transaction } from "@mysten/sui/transactions";
import { verifyTransactionSignature } from "@mysten/sui/verify";
import { base64 } from "@scure/base";
import type { PreparedTx } from "../chains/adapter.ts";
import { Signer } from "../chains/signer.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { decodeSuiRaw, SUI_GAS_BUDGET } from "../chains/sui/payer.ts";
import { addReservations, coinLocks } from "../kv/chain_state.ts";
import type { Intent } from "../model/order.ts";
import { SentTxSchema as IntentSchema } from "../model/sent_tx.ts";
import { withKv } from "./support/kv.ts";
import { startSuiGraphqlServer, type SuiGraphqlServer } from "./support/sui_graphql_server.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const ours = (i: number) => signer.address("sui", i);
const hot = signer.address("sui", 0, "hot");
const SUI = 1_000_000_000n;
const elsewhere = "0x" + "ab".repeat(32);

async function withSui(fn: (server: SuiGraphqlServer, sui: ReturnType<typeof suiAdapters>) => Promise<void>) {
  const server = await startSuiGraphqlServer({ checkpointsPerEpoch: 1000 });
  try {
    await fn(server, suiAdapters({ urls: [server.url], signer, confirmations: 1 }));
  } finally {
    await server.close();
  }
}

/** What the order actor records (actors/order_actor.ts recordIntent), validated by the order schema. */
function intentOf(tx: PreparedTx): Intent {
  const intent: Intent = { chain: "sui", txHash: tx.txHash, raw: tx.raw, preparedAt: new Date().toISOString() };
  if (tx.expiry) intent.expiry = tx.expiry;
  if (tx.consumes) intent.consumes = tx.consumes;
  return IntentSchema.parse(intent);
}

/** The transaction decoded by @mysten/sui, its signature verified for `sender` by its verifier. */
async function decoded(tx: PreparedTx, sender: string) {
  const { bytes, signature } = decodeSuiRaw(tx.raw);
  const raw = base64.decode(bytes);
  const publicKey = await verifyTransactionSignature(raw, signature, { address: sender });
  assert.equal(publicKey.toSuiAddress(), sender);
  const data = Transaction.from(raw).getData();
  assert.equal(await Transaction.from(raw).getDigest(), tx.txHash, "txHash is the transaction digest");
  const pure = (i: number) => base64.decode((data.inputs[i] as { Pure: { bytes: string } }).Pure.bytes);
  return { data, pure };
}

Deno.test("sui payer on a Sui-GraphQL-shaped server: a payout from the hot wallet, verified, decoded, executed once", () =>
  withSui(async (server, { reader, payer }) => {
    assert.equal(payer.hotWallet, hot);
    const req = { orderId: "o1", to: elsewhere, amount: 3n * SUI, memo: null };
    const unfunded = await payer.checkPayout!(req);
    assert.ok(
      !unfunded.ok && unfunded.reason === "unfunded" && unfunded.detail.includes(hot),
      JSON.stringify(unfunded),
    );
    // Exactly the amount is not enough: the gas budget comes on top.
    server.deposit(hot, 3n * SUI + SUI_GAS_BUDGET - 1n);
    server.mine(1);
    assert.equal((await payer.checkPayout!(req)).ok, false);
    server.deposit(hot, 2n * SUI);
    server.mine(1);
    assert.deepEqual(await payer.checkPayout!(req), { ok: true, spendable: 5n * SUI - 1n, fee: SUI_GAS_BUDGET });
    const before = server.balance(hot);

    const tx = await payer.preparePayout(req);
    const { data, pure } = await decoded(tx, hot);
    assert.equal(data.sender, hot);
    assert.equal(Number(data.expiration?.$kind === "Epoch" && data.expiration.Epoch), server.epoch + 1);
    assert.deepEqual(tx.expiry, { kind: "epoch", value: server.epoch + 1 });
    assert.equal(BigInt(data.gasData.price!), server.referenceGasPrice, "the epoch's reference gas price");
    assert.equal(BigInt(data.gasData.budget!), SUI_GAS_BUDGET);
    const coins = server.coins(hot).sort((a, b) => (a.balance > b.balance ? -1 : 1));
    assert.deepEqual(data.gasData.payment?.map((p) => p.objectId), coins.map((c) => c.objectId), "largest first");
    assert.deepEqual(data.commands.map((c) => c.$kind), ["SplitCoins", "TransferObjects"]);
    assert.equal(BigInt(bcs.u64().parse(pure(0))), 3n * SUI);
    assert.equal(bcs.Address.parse(pure(1)), elsewhere);
    const outpoints = coins.map((c) => ({ txHash: c.objectId, index: c.version }));
    assert.deepEqual(tx.consumes, { kind: "outpoints", outpoints });
    assert.deepEqual(tx.reservations, [{ kind: "coins", chain: "sui", outpoints }]);
    assert.deepEqual(intentOf(tx).expiry, tx.expiry, "the order schema accepts the recorded payout");

    await payer.broadcast(tx);
    assert.deepEqual(await reader.txStatus(tx.txHash), { state: "unknown" }, "in no checkpoint yet");
    server.mine(1);
    const status = await reader.txStatus(tx.txHash, { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes });
    assert.ok(status.state === "included" && status.success && status.final === true, JSON.stringify(status));
    assert.equal(await reader.balance!(elsewhere), 3n * SUI);
    const gas = server.referenceGasPrice * 1000n + 988_000n;
    assert.equal(await reader.balance!(hot), before - 3n * SUI - gas);
    assert.deepEqual((await reader.transfersOf(tx.txHash))?.map((t) => [t.from, t.to, t.amount]), [
      [hot, elsewhere, 3n * SUI],
    ]);
    // The same bytes again (a crash after the broadcast; a nudge): already executed is success, nothing moves twice.
    await payer.broadcast(tx);
    await payer.nudge!(tx, 0);
    server.mine(1);
    assert.equal(await reader.balance!(elsewhere), 3n * SUI);
  }));

Deno.test("sui payer on a Sui-GraphQL-shaped server: a sweep moves the deposit address's whole gas coin to the hot wallet", () =>
  withSui(async (server, { reader, payer }) => {
    const from = ours(7);
    server.deposit(from, 2n * SUI);
    server.deposit(from, 5n * SUI);
    server.mine(1);
    const tx = await payer.prepareSweep!({ sweepId: "s1", from, derivationIndex: 7, amount: 7n * SUI });
    const { data, pure } = await decoded(tx, from);
    assert.equal(data.sender, from, "signed by the deposit key");
    assert.deepEqual(data.commands.map((c) => c.$kind), ["TransferObjects"]);
    assert.equal(data.commands[0].TransferObjects!.objects[0].$kind, "GasCoin");
    assert.equal(bcs.Address.parse(pure(0)), hot);
    assert.equal(data.gasData.payment?.length, 2, "every coin of the address, merged into the gas coin");
    intentOf(tx);
    await payer.broadcast(tx);
    server.mine(1);
    const gas = server.referenceGasPrice * 1000n + 988_000n;
    assert.equal(await reader.balance!(from), 0n);
    assert.equal(await reader.balance!(hot), 7n * SUI - gas);
    assert.deepEqual((await reader.transfersOf(tx.txHash))?.map((t) => [t.to, t.amount]), [[hot, 7n * SUI - gas]]);
    // Refused with clear errors: the wrong key, an empty address.
    await assert.rejects(payer.prepareSweep!({ sweepId: "s2", from, derivationIndex: 8 }), /not the key of/);
    await assert.rejects(payer.prepareSweep!({ sweepId: "s3", from, derivationIndex: 7 }), /holds 0 MIST/);
  }));

Deno.test("sui payer on a Sui-GraphQL-shaped server: a payout past its expiration epoch is refused and proven dead", () =>
  withSui(async (server, { reader, payer }) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const tx = await payer.preparePayout({ orderId: "o2", to: elsewhere, amount: SUI, memo: null });
    const own = { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes };
    assert.equal(tx.expiry?.value, server.epoch + 1);
    server.advanceEpoch(); // the expiration epoch itself: still valid
    assert.deepEqual(await reader.txStatus(tx.txHash, own), { state: "unknown" });
    server.advanceEpoch();
    await assert.rejects(payer.broadcast(tx), /Transaction Expired/);
    await payer.nudge!(tx, 0); // a refusal of the same bytes changes nothing
    const dead = await reader.txStatus(tx.txHash, own);
    assert.ok(dead.state === "dead", JSON.stringify(dead));
    assert.deepEqual(dead.proof, { kind: "expired", expiry: tx.expiry, reached: server.epoch });
    assert.equal((await reader.txStatus(tx.txHash)).state, "unknown", "never dead without the recorded transaction");
  }));

Deno.test("sui payer on a Sui-GraphQL-shaped server: two payouts over the same coins never both record (no equivocation)", () =>
  withKv("sui-payer-", (kv) =>
    withSui(async (server, { payer }) => {
      server.deposit(hot, 10n * SUI);
      server.mine(1);
      const a = await payer.preparePayout({ orderId: "a", to: elsewhere, amount: SUI, memo: null });
      const b = await payer.preparePayout({ orderId: "b", to: elsewhere, amount: 2n * SUI, memo: null });
      assert.ok((await addReservations(kv.atomic(), a).commit()).ok);
      assert.equal((await addReservations(kv.atomic(), b).commit()).ok, false, "the second is refused at recording");
      const outpoints = a.consumes!.kind === "outpoints" ? a.consumes!.outpoints : [];
      assert.deepEqual(await coinLocks(kv, "sui", outpoints), [a.txHash]);
      // The node refuses the rival too, had it been sent.
      await payer.broadcast(a);
      await assert.rejects(payer.broadcast(b), /locked/);
      server.mine(1);
      // Once the first executed, its coins have new versions: a new payout records.
      const c = await payer.preparePayout({ orderId: "b", to: elsewhere, amount: 2n * SUI, memo: null });
      assert.ok((await addReservations(kv.atomic(), c).commit()).ok);
    })));

Deno.test("sui payer on a Sui-GraphQL-shaped server: bad destinations and amounts are refused with clear errors", () =>
  withSui(async (server, { payer }) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    for (const to of ["0x2", "ab".repeat(32), "0x" + "zz".repeat(32)]) {
      await assert.rejects(payer.preparePayout({ orderId: "x", to, amount: SUI, memo: null }), /Invalid destination/);
    }
    await assert.rejects(payer.preparePayout({ orderId: "x", to: elsewhere, amount: 0n, memo: null }), /positive/);
    await assert.rejects(
      payer.preparePayout({ orderId: "x", to: elsewhere, amount: 10n * SUI, memo: null }),
      /less than the .* MIST needed/,
    );
  }));
