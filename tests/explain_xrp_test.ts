/**
 * Verify before record for the XRP Ledger (chains/effects.ts, chains/xrp/explain.ts): payouts and sweeps built by the
 * real payer on a rippled-shaped server (tests/support/rippled_rpc_server.ts; no rippled runs here), read back from
 * their signed blobs with xrpl, field by field, and compared with what they were asked for; a payer made to lie is
 * named by `differences`; blobs we never build, or signed by another key than their Account's, are refused.
 */
import assert from "node:assert/strict";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { decode, encode, encodeForSigning, hashes, type Transaction } from "xrpl";
import type { PreparedTx } from "../chains/adapter.ts";
import { differences, type TxIntent } from "../chains/effects.ts";
import { explainXrpTx, xrpRecordDifferences } from "../chains/xrp/explain.ts";
import { MAX_FEE_DROPS, xrpPayer } from "../chains/xrp/payer.ts";
import type { Signer } from "../chains/signer.ts";
import type { RippledServer } from "./support/rippled_rpc_server.ts";
import { depositAddress, elsewhere, hotWallet, signer, withRippled, XRP, xrpOn } from "./support/xrp_env.ts";

function funded(server: RippledServer, address = hotWallet, drops = 100n * XRP): void {
  server.hooks.fund(address, drops);
  server.hooks.validateThrough(server.hooks.closedIndex + 1);
}

const payout = (to: string, amount: bigint, memo: string | null): TxIntent => ({
  kind: "payout",
  chain: "xrp",
  to,
  amount,
  memo,
  from: hotWallet,
});

/**
 * Signs `tx` with our signer's key `index`/`branch` the way rippled single-signs (xrpl's `encodeForSigning`,
 * SHA-512Half, DER): what a payer that built something else would hand over. Used only where the real payer cannot
 * be asked to build it (no tag, a flag, another transaction type, another key).
 */
function signed(tx: Record<string, unknown>, index: number, branch: "deposit" | "hot", pubOf = { index, branch }) {
  const SigningPubKey = bytesToHex(signer.publicKey("xrp", pubOf.index, pubOf.branch)).toUpperCase();
  const unsigned = { ...tx, SigningPubKey } as unknown as Transaction;
  const digest = sha512(hexToBytes(encodeForSigning(unsigned))).slice(0, 32);
  const sig = signer.signDigest("xrp", index, digest, branch);
  return encode({ ...unsigned, TxnSignature: bytesToHex(sig.bytes).toUpperCase() } as unknown as Transaction);
}

/** A payout from the hot wallet, as the payer builds one, with `extra` fields changed. */
const hotPayment = (extra: Record<string, unknown>) =>
  signed(
    {
      TransactionType: "Payment",
      Account: hotWallet,
      Destination: elsewhere,
      DestinationTag: 77,
      Amount: String(3n * XRP),
      Fee: "10",
      Sequence: 5,
      LastLedgerSequence: 100,
      ...extra,
    },
    0,
    "hot",
  );

Deno.test("explain xrp payout on a rippled-shaped server: the signed blob says who pays whom, how much, with which tag", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer } = xrpOn(server);
    const sequence = server.hooks.account(hotWallet)!.sequence;
    const validated = server.hooks.validatedIndex;
    for (const memo of ["4294967295", "0", "77"]) {
      const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 12_345_678n, memo });
      const effects = await explainXrpTx(tx.raw);
      assert.equal(effects.chain, "xrp");
      assert.equal(effects.from, hotWallet);
      assert.deepEqual(effects.outputs, [{ to: elsewhere, amount: 12_345_678n }]);
      assert.equal(effects.memo, memo, "the tag as decimal text, as the memo was");
      assert.equal(effects.nonce, BigInt(sequence));
      assert.deepEqual(effects.expiry, { kind: "ledger", value: validated + 20 });
      assert.deepEqual(effects.expiry, tx.expiry, "the expiry the payer records is the blob's");
      assert.equal(effects.maxFee, 10n, "the server's base fee");
      assert.equal(effects.inputs, undefined);
      assert.equal(effects.call, undefined);
      assert.equal(effects.chainId, undefined);
      assert.deepEqual(differences(payout(elsewhere, 12_345_678n, memo), effects, tx), []);
      assert.deepEqual(xrpRecordDifferences(tx, effects, MAX_FEE_DROPS), []);
    }
  });
});

Deno.test("explain xrp payout without a tag on a rippled-shaped server: the payer builds none; a tagless payment reads memo null", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer } = xrpOn(server);
    // XRP payouts need a destination tag (chains/catalog.ts, memo required): the payer refuses to build one without.
    await assert.rejects(
      payer.preparePayout({ orderId: "o", to: elsewhere, amount: XRP, memo: null }),
      /destination tag/,
    );
    const raw = hotPayment({ DestinationTag: undefined });
    assert.equal((decode(raw) as Record<string, unknown>).DestinationTag, undefined);
    const effects = await explainXrpTx(raw);
    assert.equal(effects.memo, null);
    assert.deepEqual(effects.outputs, [{ to: elsewhere, amount: 3n * XRP }]);
    const prepared = { txHash: hashes.hashSignedTx(raw), raw };
    assert.deepEqual(differences(payout(elsewhere, 3n * XRP, null), effects, prepared), []);
  });
});

Deno.test("explain xrp sweep on a rippled-shaped server: from the deposit address to the hot wallet, no tag", async () => {
  await withRippled({}, async (server) => {
    const from = depositAddress(4);
    funded(server, from, 12n * XRP);
    const { payer } = xrpOn(server);
    const sequence = server.hooks.account(from)!.sequence;
    const tx = await payer.prepareSweep({ sweepId: "s", from, derivationIndex: 4 });
    const effects = await explainXrpTx(tx.raw);
    assert.deepEqual(effects, {
      chain: "xrp",
      from,
      outputs: [{ to: hotWallet, amount: 12n * XRP - XRP - 10n }],
      memo: null,
      nonce: BigInt(sequence),
      expiry: { kind: "ledger", value: server.hooks.validatedIndex + 20 },
      maxFee: 10n,
    });
    assert.deepEqual(differences({ kind: "sweep", chain: "xrp", from, to: hotWallet }, effects, tx), []);
    assert.deepEqual(xrpRecordDifferences(tx, effects, MAX_FEE_DROPS), []);
    // The blob the server applies is the one explained: it lands and moves what the effects say.
    await payer.broadcast(tx);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    assert.equal(server.hooks.account(hotWallet)?.balance, 11n * XRP - 10n);
  });
});

Deno.test("explain xrp on a rippled-shaped server: a payer asked for another amount, destination or tag is named", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer } = xrpOn(server);
    const intent = payout(elsewhere, 3n * XRP, "77");
    const lie = async (req: { to?: string; amount?: bigint; memo?: string }) => {
      const tx = await payer.preparePayout({ orderId: "o", to: elsewhere, amount: 3n * XRP, memo: "77", ...req });
      return differences(intent, await explainXrpTx(tx.raw), tx);
    };
    assert.deepEqual(await lie({ amount: 3n * XRP + 1n }), [`pays ${3n * XRP + 1n}, not ${3n * XRP}`]);
    assert.deepEqual(await lie({ amount: 3n }), [`pays 3, not ${3n * XRP}`], "drops read as XRP");
    const stranger = depositAddress(3);
    assert.deepEqual(await lie({ to: stranger }), [`pays ${stranger}, not ${elsewhere}`]);
    assert.deepEqual(await lie({ memo: "78" }), [`carries memo/tag "78", not "77"`]);
    // The tag dropped: the payer cannot be asked for that, so the blob is signed with the hot key as it would sign it.
    const raw = hotPayment({ DestinationTag: undefined });
    const dropped = differences(intent, await explainXrpTx(raw), { txHash: hashes.hashSignedTx(raw), raw });
    assert.deepEqual(dropped, [`carries memo/tag null, not "77"`]);
    // The payer takes a memo with leading zeros and signs the tag's number: the text differs, so it is refused
    // (fail closed) unless the intent carries the tag in its canonical decimal form.
    const zeros = await payer.preparePayout({ orderId: "o", to: elsewhere, amount: XRP, memo: "077" });
    const read = await explainXrpTx(zeros.raw);
    assert.equal(read.memo, "77");
    assert.deepEqual(differences(payout(elsewhere, XRP, "077"), read, zeros), [`carries memo/tag "77", not "077"`]);
  });
});

Deno.test("explain xrp on a rippled-shaped server: a sweep to a stranger, or from another deposit address, is named", async () => {
  await withRippled({}, async (server) => {
    const from = depositAddress(4);
    funded(server, from, 12n * XRP);
    funded(server, depositAddress(5), 12n * XRP);
    const intent: TxIntent = { kind: "sweep", chain: "xrp", from, to: hotWallet };
    // A payer whose hot wallet is misconfigured: the real deposit keys, a stranger's address as the hot wallet.
    const misconfigured = {
      address: (chain: "xrp", index: number, branch?: "deposit" | "hot") =>
        branch === "hot" ? elsewhere : signer.address(chain, index, branch),
      publicKey: signer.publicKey.bind(signer),
      signDigest: signer.signDigest.bind(signer),
    } as unknown as Signer;
    const { rpc, payer } = xrpOn(server);
    const lying = xrpPayer({ rpc, signer: misconfigured });
    const toStranger = await lying.prepareSweep({ sweepId: "s", from, derivationIndex: 4 });
    const effects = await explainXrpTx(toStranger.raw);
    assert.equal(effects.from, from, "signed by the real deposit key");
    assert.deepEqual(differences(intent, effects, toStranger), [
      `pays ${12n * XRP - XRP - 10n} to ${elsewhere}, not the hot wallet ${hotWallet} alone`,
    ]);
    const other = await payer.prepareSweep({ sweepId: "s", from: depositAddress(5), derivationIndex: 5 });
    assert.deepEqual(differences(intent, await explainXrpTx(other.raw), other), [
      `sweeps from ${depositAddress(5)}, not the deposit address ${from}`,
    ]);
  });
});

Deno.test("explain xrp on a rippled-shaped server: a record that misstates its blob's hash, expiry or Sequence is named", async () => {
  await withRippled({}, async (server) => {
    funded(server);
    const { payer } = xrpOn(server);
    const tx = await payer.preparePayout({ orderId: "o", to: elsewhere, amount: XRP, memo: "1" });
    const effects = await explainXrpTx(tx.raw);
    const seq = Number(effects.nonce);
    const last = tx.expiry!.value;
    const wrong: PreparedTx = {
      ...tx,
      txHash: "00".repeat(32),
      expiry: { kind: "ledger", value: last + 1 },
      consumes: { kind: "nonce", account: hotWallet, nonce: seq + 1 },
      reservations: [],
    };
    const named = xrpRecordDifferences(wrong, effects, 9n);
    assert.equal(named.length, 5, named.join("\n"));
    assert.match(named[0], new RegExp(`recorded hash 0{64}, but its blob hashes to ${tx.txHash}`));
    assert.match(named[1], new RegExp(`recorded expiry .*${last + 1}.*, but its blob says .*${last}`));
    assert.match(named[2], new RegExp(`but its blob uses Sequence ${seq} of ${hotWallet}`));
    assert.match(named[3], new RegExp(`reserves \\[\\], not Sequence ${seq} of ${hotWallet} alone`));
    assert.equal(named[4], "pays a fee of 10 drops, above the 9 drops cap");
  });
});

Deno.test("explain xrp refuses garbage: not hex, odd length, not a transaction, truncated, trailing bytes", async () => {
  const good = hotPayment({});
  assert.ok(await explainXrpTx(good), "the untampered blob is read");
  for (const raw of ["", "zz", "ABC", "not a blob", "0x" + good]) {
    await assert.rejects(explainXrpTx(raw), /xrp explain: the blob is not hex/, JSON.stringify(raw));
  }
  await assert.rejects(explainXrpTx("DEADBEEF"), /xrp explain: xrpl cannot decode the blob/);
  await assert.rejects(explainXrpTx(good.slice(0, -20)), /xrpl cannot decode the blob/, "truncated");
  await assert.rejects(explainXrpTx(good + "00"), /xrpl cannot decode the blob/, "a trailing byte");
  // A field appended after the signature (SourceTag, field code 2E), or put in front: not the canonical encoding
  // rippled would apply, whatever the fields say.
  await assert.rejects(explainXrpTx(good + "2E00000001"), /not the canonical encoding/);
  await assert.rejects(explainXrpTx("2E00000001" + good), /not the canonical encoding/);
  // Decodes, but to no Payment of ours.
  await assert.rejects(explainXrpTx("1200002200000000"), /xrp explain: the Payment has no Account/);
});

Deno.test("explain xrp refuses a blob whose signature is not its Account's key's", async () => {
  // Account is the hot wallet, the key and signature are deposit address 1's: a valid signature of another account.
  const otherKey = signed(
    {
      TransactionType: "Payment",
      Account: hotWallet,
      Destination: elsewhere,
      DestinationTag: 1,
      Amount: "1000000",
      Fee: "10",
      Sequence: 5,
      LastLedgerSequence: 100,
    },
    1,
    "deposit",
  );
  await assert.rejects(
    explainXrpTx(otherKey),
    new RegExp(`SigningPubKey [0-9A-F]+ is the key of ${depositAddress(1)}, not of its Account ${hotWallet}`),
  );
  // The hot wallet's public key, signed by another key: the signature does not verify.
  const forged = signed(
    {
      TransactionType: "Payment",
      Account: hotWallet,
      Destination: elsewhere,
      DestinationTag: 1,
      Amount: "1000000",
      Fee: "10",
      Sequence: 5,
      LastLedgerSequence: 100,
    },
    1,
    "deposit",
    { index: 0, branch: "hot" },
  );
  await assert.rejects(explainXrpTx(forged), /TxnSignature is not .*'s signature of this transaction/);
  // A signed blob changed afterwards (another amount) no longer verifies.
  const changed = encode({ ...(decode(hotPayment({})) as Record<string, unknown>), Amount: "3000001" } as Transaction);
  await assert.rejects(explainXrpTx(changed), /TxnSignature is not .*'s signature/);
  // Multi-signed (no SigningPubKey): not ours.
  const multi = encode({ ...(decode(hotPayment({})) as Record<string, unknown>), SigningPubKey: "" } as Transaction);
  await assert.rejects(explainXrpTx(multi), /no SigningPubKey/);
});

Deno.test("explain xrp refuses what the payer never builds: partial payment, issued currency, SendMax, Paths, other fields and types", async () => {
  await assert.rejects(explainXrpTx(hotPayment({ Flags: 0x00020000 })), /Flags 0x20000 \(tfPartialPayment\)/);
  await assert.rejects(
    explainXrpTx(hotPayment({ Flags: 0x80020000 })),
    /Flags 0x80020000 \(tfPartialPayment, tfFullyCanonicalSig\)/,
  );
  const usd = { currency: "USD", issuer: elsewhere, value: "3" };
  await assert.rejects(explainXrpTx(hotPayment({ Amount: usd })), /Amount is .* not XRP drops/);
  await assert.rejects(explainXrpTx(hotPayment({ SendMax: "4000000" })), /carries SendMax/);
  await assert.rejects(
    explainXrpTx(hotPayment({ Amount: usd, SendMax: "4000000", Paths: [[{ account: depositAddress(2) }]] })),
    /carries SendMax, Paths/,
  );
  await assert.rejects(explainXrpTx(hotPayment({ DeliverMin: "1" })), /carries DeliverMin/);
  await assert.rejects(explainXrpTx(hotPayment({ Sequence: 0, TicketSequence: 9 })), /carries TicketSequence/);
  const memo = { Memo: { MemoData: "AB" } };
  await assert.rejects(explainXrpTx(hotPayment({ Memos: [memo] })), /carries Memos/);
  await assert.rejects(explainXrpTx(hotPayment({ LastLedgerSequence: undefined })), /no LastLedgerSequence/);
  const deleteAccount = signed(
    {
      TransactionType: "AccountDelete",
      Account: hotWallet,
      Destination: elsewhere,
      Fee: "200000",
      Sequence: 5,
      LastLedgerSequence: 100,
    },
    0,
    "hot",
  );
  await assert.rejects(explainXrpTx(deleteAccount), /TransactionType "AccountDelete" is not a Payment/);
  const regularKey = signed(
    {
      TransactionType: "SetRegularKey",
      Account: hotWallet,
      RegularKey: elsewhere,
      Fee: "10",
      Sequence: 5,
      LastLedgerSequence: 100,
    },
    0,
    "hot",
  );
  await assert.rejects(explainXrpTx(regularKey), /TransactionType "SetRegularKey" is not a Payment/);
});
