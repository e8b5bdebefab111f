/**
 * XRP payouts and sweeps signed by our signer, decoded and verified with xrpl's own codec and verifier: every field
 * exact, the signature over the right key, the hash rippled would give.
 */
import assert from "node:assert/strict";
import { decode, deriveAddress, encode, hashes, type Payment, verifySignature } from "xrpl";
import { bytesToHex } from "@noble/hashes/utils.js";
import { SentTxSchema as IntentSchema } from "../model/sent_tx.ts";
import { depositAddress, elsewhere, hotWallet, signer, withRippled, XRP, xrpOn } from "./support/xrp_env.ts";

Deno.test("xrp payout on a rippled-shaped server: signed blob decodes with xrpl, signature verifies, fields exact", async () => {
  await withRippled({}, async (server) => {
    server.hooks.fund(hotWallet, 100n * XRP);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const { payer } = xrpOn(server);
    assert.equal(payer.hotWallet, hotWallet);
    const validated = server.hooks.validatedIndex;
    const hot = server.hooks.account(hotWallet)!;
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 12_345_678n, memo: "4294967295" });
    const decoded = decode(tx.raw) as Record<string, unknown>;
    assert.equal(decoded.TransactionType, "Payment");
    assert.equal(decoded.Account, hotWallet);
    assert.equal(decoded.Destination, elsewhere);
    assert.equal(decoded.Amount, "12345678", "drops, as a string");
    assert.equal(decoded.DestinationTag, 4294967295);
    assert.equal(decoded.Fee, "10");
    assert.equal(decoded.Sequence, hot.sequence);
    assert.equal(decoded.LastLedgerSequence, validated + 20, "the catalog's window above the validated ledger");
    assert.equal(decoded.SigningPubKey, bytesToHex(signer.publicKey("xrp", 0, "hot")).toUpperCase());
    assert.equal(deriveAddress(String(decoded.SigningPubKey)), hotWallet);
    assert.ok(verifySignature(tx.raw), "xrpl verifies the signature");
    assert.equal(tx.txHash, hashes.hashSignedTx(tx.raw));
    assert.deepEqual(tx.expiry, { kind: "ledger", value: validated + 20 });
    assert.deepEqual(tx.consumes, { kind: "nonce", account: hotWallet, nonce: hot.sequence });
    assert.deepEqual(tx.reservations, [{ kind: "sequence", chain: "xrp", account: hotWallet, sequence: hot.sequence }]);
    // The order schema takes the intent as recorded (a field it does not know would fail recording).
    IntentSchema.parse({
      chain: "xrp",
      txHash: tx.txHash,
      raw: tx.raw,
      preparedAt: new Date().toISOString(),
      expiry: tx.expiry,
      consumes: tx.consumes,
    });
    // A tampered blob does not verify: the check above could fail.
    assert.equal(verifySignature(encode({ ...decoded, Amount: "12345679" } as unknown as Payment)), false);
  });
});

Deno.test("xrp payout on a rippled-shaped server: the memo must be a uint32 destination tag", async () => {
  await withRippled({}, async (server) => {
    server.hooks.fund(hotWallet, 100n * XRP);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const { payer } = xrpOn(server);
    for (const memo of [null, "", "4294967296", "-1", "1.5", "12a", "0x10", " 7"]) {
      await assert.rejects(
        payer.preparePayout({ orderId: "o", to: elsewhere, amount: XRP, memo }),
        /destination tag/,
        `memo ${JSON.stringify(memo)}`,
      );
    }
    await assert.rejects(
      payer.preparePayout({ orderId: "o", to: "rNotAnAddress", amount: XRP, memo: "1" }),
      /classic address/,
    );
    await assert.rejects(payer.preparePayout({ orderId: "o", to: elsewhere, amount: 0n, memo: "1" }), /positive/);
    const tx = await payer.preparePayout({ orderId: "o", to: elsewhere, amount: XRP, memo: "0" });
    assert.equal((decode(tx.raw) as Record<string, unknown>).DestinationTag, 0);
  });
});

Deno.test("xrp sweep on a rippled-shaped server: signed by the deposit key, to the hot wallet, the reserve kept", async () => {
  await withRippled({}, async (server) => {
    const from = depositAddress(7);
    server.hooks.fund(from, 25n * XRP);
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    const { payer } = xrpOn(server);
    const root = server.hooks.account(from)!;
    const tx = await payer.prepareSweep({ sweepId: "s1", from, derivationIndex: 7 });
    const decoded = decode(tx.raw) as Record<string, unknown>;
    assert.equal(decoded.Account, from);
    assert.equal(decoded.Destination, hotWallet);
    assert.equal(decoded.Amount, String(25n * XRP - XRP - 10n), "balance less the base reserve and the fee");
    assert.equal(decoded.DestinationTag, undefined);
    assert.equal(decoded.Sequence, root.sequence);
    assert.equal(decoded.Fee, "10");
    assert.equal(decoded.LastLedgerSequence, server.hooks.validatedIndex + 20);
    assert.equal(decoded.SigningPubKey, bytesToHex(signer.publicKey("xrp", 7)).toUpperCase());
    assert.ok(verifySignature(tx.raw));
    assert.equal(tx.txHash, hashes.hashSignedTx(tx.raw));
    // An amount asked for is moved as asked when the balance covers it and the fee.
    const partial = await payer.prepareSweep({ sweepId: "s2", from, derivationIndex: 7, amount: 5n * XRP });
    assert.equal((decode(partial.raw) as Record<string, unknown>).Amount, String(5n * XRP));
    // The sweeper's ask (balance less the catalog reserve): the fee comes out of it.
    const sweeperAsk = await payer.prepareSweep({ sweepId: "s3", from, derivationIndex: 7, amount: 24n * XRP });
    assert.equal((decode(sweeperAsk.raw) as Record<string, unknown>).Amount, String(24n * XRP - 10n));
    await assert.rejects(payer.prepareSweep({ sweepId: "s4", from, derivationIndex: 8 }), /not ours/);
  });
});
