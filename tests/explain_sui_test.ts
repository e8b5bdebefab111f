/**
 * Verify before record, Sui (chains/effects.ts, chains/sui/explain.ts): transactions built and signed by the real payer
 * (chains/sui/payer.ts) against the Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts; no Sui node runs
 * here, docs/architecture.md), decoded back from their own bytes with @mysten/sui and compared with what they were
 * prepared for. The tamper cases make the builder itself lie (another amount, destination, hot wallet or key) and check
 * that `differences` names the lie, or that `explainSuiTx` refuses bytes it does not understand.
 */
import assert from "node:assert/strict";
import { bcs } from "@mysten/sui/bcs";
import { messageWithIntent, toSerializedSignature } from "@mysten/sui/cryptography";
import { Ed25519PublicKey } from "@mysten/sui/keypairs/ed25519";
import { Secp256k1Keypair } from "@mysten/sui/keypairs/secp256k1";
import { blake2b } from "@noble/hashes/blake2.js";
import { base64 } from "@scure/base";
import type { AccountAdapterOptions, PreparedTx } from "../chains/adapter.ts";
import { differences, type TxIntent } from "../chains/effects.ts";
import { Signer } from "../chains/signer.ts";
import { explainSuiTx } from "../chains/sui/explain.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { decodeSuiRaw, encodeSuiRaw, SUI_GAS_BUDGET } from "../chains/sui/payer.ts";
import { startSuiGraphqlServer, type SuiGraphqlServer } from "./support/sui_graphql_server.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const ours = (i: number) => signer.address("sui", i);
const hot = signer.address("sui", 0, "hot");
const SUI = 1_000_000_000n;
const elsewhere = "0x" + "ab".repeat(32);
const stranger = "0x" + "cd".repeat(32);

type SuiSigner = AccountAdapterOptions["signer"];

async function withSui(
  fn: (server: SuiGraphqlServer, payer: ReturnType<typeof suiAdapters>["payer"]) => Promise<void>,
  withSigner: SuiSigner = signer,
) {
  const server = await startSuiGraphqlServer({ checkpointsPerEpoch: 1000 });
  try {
    await fn(server, suiAdapters({ urls: [server.url], signer: withSigner, confirmations: 1 }).payer);
  } finally {
    await server.close();
  }
}

const payoutIntent = (to: string, amount: bigint): Extract<TxIntent, { kind: "payout" }> => ({
  kind: "payout",
  chain: "sui",
  to,
  amount,
  memo: null,
  from: hot,
});

/** The gas coins of `address`, as the payer spends them (largest first) and locks them (object id, version). */
function gasOutpoints(server: SuiGraphqlServer, address: string) {
  return server.coins(address)
    .sort((a, b) => (a.balance > b.balance ? -1 : a.balance < b.balance ? 1 : a.objectId < b.objectId ? -1 : 1))
    .map((c) => ({ txHash: c.objectId, index: c.version }));
}

/** `bytes` signed the way the payer signs (ed25519 over the BLAKE2b-256 of the intent message) by a key of ours. */
function signedBy(bytes: Uint8Array, index: number, branch: "deposit" | "hot"): string {
  const digest = blake2b(messageWithIntent("TransactionData", bytes), { dkLen: 32 });
  return encodeSuiRaw({
    bytes: base64.encode(bytes),
    signature: toSerializedSignature({
      signature: signer.signMessage("sui", index, digest, branch),
      signatureScheme: "ED25519",
      publicKey: new Ed25519PublicKey(signer.publicKey("sui", index, branch)),
    }),
  });
}

/** A payer-built transaction changed with @mysten/sui's own BCS schema, then signed again by the hot wallet. */
function rebuilt(tx: PreparedTx, change: (data: ReturnType<typeof bcs.TransactionData.parse>) => void): string {
  const data = bcs.TransactionData.parse(base64.decode(decodeSuiRaw(tx.raw).bytes));
  change(data);
  return signedBy(bcs.TransactionData.serialize(data).toBytes(), 0, "hot");
}

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a payout decodes to the hot wallet paying the amount, and the node moves exactly that", () =>
  withSui(async (server, payer) => {
    // Neither coin alone covers the amount and the gas budget: the payout spends both.
    server.deposit(hot, 2n * SUI);
    server.deposit(hot, 5n * SUI / 2n);
    server.mine(1);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 3n * SUI, memo: null });
    const effects = await explainSuiTx(tx.raw);
    assert.equal(effects.chain, "sui");
    assert.equal(effects.from, hot);
    assert.deepEqual(effects.outputs, [{ to: elsewhere, amount: 3n * SUI }]);
    assert.equal(effects.memo, null);
    assert.deepEqual(effects.expiry, { kind: "epoch", value: server.epoch + 1 });
    assert.deepEqual(effects.expiry, tx.expiry, "the expiration the payer records is the one it signed");
    assert.equal(effects.maxFee, SUI_GAS_BUDGET);
    assert.equal(effects.nonce, undefined, "Sui has no nonce");
    assert.equal(effects.inputs?.length, 2);
    assert.deepEqual(effects.inputs, gasOutpoints(server, hot), "both coins, largest first");
    assert.deepEqual(tx.consumes, { kind: "outpoints", outpoints: effects.inputs }, "it spends what it locks");
    assert.equal(effects.call, undefined);
    assert.equal(effects.chainId, undefined);
    assert.deepEqual(differences(payoutIntent(elsewhere, 3n * SUI), effects, tx), []);

    // What the decoder read is what the node does with those bytes.
    await payer.broadcast(tx);
    server.mine(1);
    assert.equal(server.balance(elsewhere), 3n * SUI);
  }));

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a sweep decodes to the deposit address's whole gas coin going to the hot wallet", () =>
  withSui(async (server, payer) => {
    const from = ours(7);
    server.deposit(from, 2n * SUI);
    server.deposit(from, 5n * SUI);
    server.mine(1);
    const tx = await payer.prepareSweep!({ sweepId: "s1", from, derivationIndex: 7, amount: 7n * SUI });
    const effects = await explainSuiTx(tx.raw);
    assert.equal(effects.chain, "sui");
    assert.equal(effects.from, from, "sent and signed by the deposit key");
    // The whole gas coin: its value (the coins' balances less the gas charged) is not in the bytes; 0n stands for it.
    assert.deepEqual(effects.outputs, [{ to: hot, amount: 0n }]);
    assert.equal(effects.memo, null);
    assert.deepEqual(effects.expiry, tx.expiry);
    assert.equal(effects.expiry?.value, server.epoch + 1);
    assert.equal(effects.maxFee, SUI_GAS_BUDGET);
    assert.deepEqual(effects.inputs, gasOutpoints(server, from), "every coin of the address, merged into the gas coin");
    assert.deepEqual(differences({ kind: "sweep", chain: "sui", from, to: hot }, effects, tx), []);

    // Read as a payout, a whole-gas-coin transfer never passes for one: it pays 0 as far as its bytes say.
    assert.deepEqual(differences({ ...payoutIntent(hot, 7n * SUI), from }, effects, tx), [`pays 0, not ${7n * SUI}`]);
  }));

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a payer asked for another amount or destination is named", () =>
  withSui(async (server, payer) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const intent = payoutIntent(elsewhere, 3n * SUI);

    const less = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 2n * SUI, memo: null });
    assert.deepEqual(differences(intent, await explainSuiTx(less.raw), less), [`pays ${2n * SUI}, not ${3n * SUI}`]);

    // One MIST off, the unit error a builder could make, is still named.
    const off = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 3n * SUI + 1n, memo: null });
    assert.deepEqual(differences(intent, await explainSuiTx(off.raw), off), [`pays ${3n * SUI + 1n}, not ${3n * SUI}`]);

    // The payer puts no memo on chain (chains/sui/payer.ts): a payout asked to carry the partner's memo loses it.
    const memo = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: 3n * SUI, memo: "invoice 7" });
    assert.deepEqual(differences({ ...intent, memo: "invoice 7" }, await explainSuiTx(memo.raw), memo), [
      'carries memo/tag null, not "invoice 7"',
    ]);

    const other = await payer.preparePayout({ orderId: "o1", to: stranger, amount: 3n * SUI, memo: null });
    assert.deepEqual(differences(intent, await explainSuiTx(other.raw), other), [`pays ${stranger}, not ${elsewhere}`]);
  }));

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a payer whose hot wallet is another key is named (sweep to a stranger, payout from elsewhere)", async () => {
  // The real payer with a signer that names another key as the hot wallet: the builder lies about where value goes.
  const strangerHot: SuiSigner = {
    publicKey: (chain, index, branch) =>
      branch === "hot" ? signer.publicKey(chain, 3, "deposit") : signer.publicKey(chain, index, branch),
    address: (chain, index, branch) =>
      branch === "hot" ? signer.address(chain, 3, "deposit") : signer.address(chain, index, branch),
    signMessage: (chain, index, message, branch) =>
      branch === "hot"
        ? signer.signMessage(chain, 3, message, "deposit")
        : signer.signMessage(chain, index, message, branch),
    signDigest: (...args) => signer.signDigest(...args),
  };
  await withSui(async (server, payer) => {
    const from = ours(7);
    server.deposit(from, 5n * SUI);
    server.deposit(ours(3), 5n * SUI);
    server.mine(1);
    const sweep = await payer.prepareSweep!({ sweepId: "s1", from, derivationIndex: 7 });
    assert.deepEqual(
      differences({ kind: "sweep", chain: "sui", from, to: hot }, await explainSuiTx(sweep.raw), sweep),
      [
        `pays 0 to ${ours(3)}, not the hot wallet ${hot} alone`,
      ],
    );
    const payout = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: SUI, memo: null });
    assert.deepEqual(differences(payoutIntent(elsewhere, SUI), await explainSuiTx(payout.raw), payout), [
      `paid from ${ours(3)}, not the hot wallet ${hot}`,
    ]);
  }, strangerHot);
});

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a sweep of another deposit address is named", () =>
  withSui(async (server, payer) => {
    server.deposit(ours(8), 5n * SUI);
    server.mine(1);
    const tx = await payer.prepareSweep!({ sweepId: "s1", from: ours(8), derivationIndex: 8 });
    assert.deepEqual(
      differences({ kind: "sweep", chain: "sui", from: ours(7), to: hot }, await explainSuiTx(tx.raw), tx),
      [
        `sweeps from ${ours(8)}, not the deposit address ${ours(7)}`,
      ],
    );
  }));

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: a signature by another key is refused", async () => {
  // The real payer with a signer that signs with another key than the one it names.
  const wrongKey: SuiSigner = {
    publicKey: (...args) => signer.publicKey(...args),
    address: (...args) => signer.address(...args),
    signMessage: (chain, _index, message) => signer.signMessage(chain, 5, message, "deposit"),
    signDigest: (...args) => signer.signDigest(...args),
  };
  await withSui(async (server, payer) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: SUI, memo: null });
    await assert.rejects(explainSuiTx(tx.raw), /signature is not by the sender .* key/);
  }, wrongKey);

  await withSui(async (server, payer) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: SUI, memo: null });
    // The same bytes, validly signed, but by another address's key (its own public key in the signature).
    const bytes = base64.decode(decodeSuiRaw(tx.raw).bytes);
    await assert.rejects(
      explainSuiTx(signedBy(bytes, 5, "deposit")),
      /signature is not by the sender .*provided address/,
    );
    // The signature of one transaction over another's bytes.
    const other = await payer.preparePayout({ orderId: "o2", to: elsewhere, amount: 2n * SUI, memo: null });
    const mixed = encodeSuiRaw({ bytes: decodeSuiRaw(other.raw).bytes, signature: decodeSuiRaw(tx.raw).signature });
    await assert.rejects(explainSuiTx(mixed), /signature is not by the sender/);
    // A signature of another scheme (the signer only makes ed25519).
    const secp = await Secp256k1Keypair.generate().signTransaction(bytes);
    await assert.rejects(
      explainSuiTx(encodeSuiRaw({ bytes: decodeSuiRaw(tx.raw).bytes, signature: secp.signature })),
      /a Secp256k1 signature, not ED25519/,
    );
    // Untouched, the hot wallet's signature is accepted (the refusals above are about the key, not the helper).
    assert.equal((await explainSuiTx(signedBy(bytes, 0, "hot"))).from, hot);
  });
});

Deno.test("explainSuiTx: garbage is refused with a clear error", async () => {
  await assert.rejects(explainSuiTx("not json"), /not JSON/);
  await assert.rejects(explainSuiTx(JSON.stringify({ bytes: "AAAA" })), /needs base64 `bytes` and `signature`/);
  await assert.rejects(explainSuiTx(JSON.stringify({ bytes: "%%%", signature: "AAAA" })), /not base64/);
  await assert.rejects(
    explainSuiTx(JSON.stringify({ bytes: base64.encode(new Uint8Array([0, 9, 9, 9])), signature: "AAAA" })),
    /not Sui TransactionData/,
  );
});

Deno.test("explainSuiTx on a Sui-GraphQL-shaped server: commands, inputs and gas we never build are refused, even signed by our key", () =>
  withSui(async (server, payer) => {
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const tx = await payer.preparePayout({ orderId: "o1", to: elsewhere, amount: SUI, memo: null });
    const ptb = (d: ReturnType<typeof bcs.TransactionData.parse>) => d.V1.kind.ProgrammableTransaction!;
    // The helper itself keeps a valid transaction valid.
    assert.deepEqual((await explainSuiTx(rebuilt(tx, () => {}))).outputs, [{ to: elsewhere, amount: SUI }]);

    // A Move call after the payout (it could move anything the sender owns).
    const moveCall = rebuilt(tx, (d) => {
      ptb(d).commands.push({
        MoveCall: {
          package: "0x2",
          module: "pay",
          function: "split_and_transfer",
          typeArguments: ["0x2::sui::SUI"],
          arguments: [{ GasCoin: true }, { Input: 0 }, { Input: 1 }],
        },
      } as never);
    });
    await assert.rejects(explainSuiTx(moveCall), /command 2 is MoveCall, which we never build/);

    // Another coin merged into the gas coin, as an owned object input.
    const merge = rebuilt(tx, (d) => {
      ptb(d).inputs.push({
        Object: { ImmOrOwnedObject: { ...d.V1.gasData.payment[0], objectId: "0x" + "77".repeat(32) } },
      } as never);
      ptb(d).commands.unshift({ MergeCoins: { destination: { GasCoin: true }, sources: [{ Input: 2 }] } } as never);
    });
    await assert.rejects(explainSuiTx(merge), /input 2 is Object, not pure/);

    // A coin merged into the gas coin (here the split one, after its transfer).
    const merge2 = rebuilt(tx, (d) => {
      ptb(d).commands.push(
        { MergeCoins: { destination: { GasCoin: true }, sources: [{ NestedResult: [0, 0] }] } } as never,
      );
    });
    await assert.rejects(explainSuiTx(merge2), /command 2 is MergeCoins, which we never build/);

    // The split coin transferred twice, and a split coin never transferred.
    const twice = rebuilt(tx, (d) => {
      ptb(d).commands.push(ptb(d).commands[1]);
    });
    await assert.rejects(explainSuiTx(twice), /transfers a coin twice/);
    const kept = rebuilt(tx, (d) => {
      ptb(d).commands.pop();
    });
    await assert.rejects(explainSuiTx(kept), /never transferred/);

    // The gas coin itself sent away after a payout's split (we only ever send it alone, in a sweep).
    const gasToo = rebuilt(tx, (d) => {
      ptb(d).commands.push({ TransferObjects: { objects: [{ GasCoin: true }], address: { Input: 1 } } } as never);
    });
    await assert.rejects(explainSuiTx(gasToo), /transfers the gas coin alongside/);

    // An amount that is not a u64 (nine bytes), a recipient that is not an address.
    const longAmount = rebuilt(tx, (d) => {
      ptb(d).inputs[0] = { Pure: { bytes: new Uint8Array(9) } } as never;
    });
    await assert.rejects(explainSuiTx(longAmount), /pure input of 9 bytes is not a u64 amount/);

    // Gas paid by someone else (sponsored), and no expiration (never provably dead).
    const sponsored = rebuilt(tx, (d) => {
      d.V1.gasData.owner = stranger;
    });
    await assert.rejects(explainSuiTx(sponsored), /gas paid by .*not its sender/);
    const forever = rebuilt(tx, (d) => {
      d.V1.expiration = { None: true } as never;
    });
    await assert.rejects(explainSuiTx(forever), /expiration None, not an epoch/);

    // A byte after the transaction, under a valid signature: not exactly what was decoded.
    const bytes = base64.decode(decodeSuiRaw(tx.raw).bytes);
    await assert.rejects(explainSuiTx(signedBy(new Uint8Array([...bytes, 0]), 0, "hot")), /not exactly one canonical/);
  }));
