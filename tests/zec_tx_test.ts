/**
 * The zec payout signer (chains/utxo/zec_tx.ts): v5 transparent transactions for every branch id we know, on mainnet
 * (t1) and regtest (tm) encodings, signatures that verify over the ZIP-244 digest, the ZIP-244 txid, refusal of an
 * unknown branch id, never v4, and the fee rule (chains/shared/utxo_fee.ts) against ZIP-317 on real signed sizes.
 */
import assert from "node:assert/strict";
import * as utxolib from "@bitgo/utxo-lib";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import type { PayoutCoin } from "../chains/adapter.ts";
import { outputScript, p2pkhAddress, type UtxoNetwork, utxoNetwork } from "../chains/utxo/network.ts";
import type { InputKey } from "../chains/utxo/tx.ts";
import { signZecTx, UnknownBranchIdError, ZEC_BRANCH_IDS, zip317ConventionalFee } from "../chains/utxo/zec_tx.ts";
import { fromHex, parseZecV5, SIGHASH_ALL, toHex, transparentSighash, zecTxid } from "../chains/utxo/zec_zip244.ts";
import { Signer } from "../chains/signer.ts";
import { bitcoinBase58check } from "../chains/shared/base58check.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { VECTORS_ABSENT, zcashVectors } from "./support/zcash_vectors.ts";

const MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const signer = Signer.fromMnemonic(MNEMONIC);
const NU6_3 = 0x37a5165b;

const keyFor = (coin: PayoutCoin): InputKey => ({
  publicKey: signer.publicKey("zec", coin.derivationIndex),
  sign: (digest) => signer.signDigest("zec", coin.derivationIndex, digest).bytes,
});

function coin(network: UtxoNetwork, derivationIndex: number, amount: bigint, n = 0): PayoutCoin {
  const txHash = toHex(Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n * 13 + derivationIndex) & 0xff));
  return {
    txHash,
    index: n % 3,
    amount,
    address: p2pkhAddress(network, signer.publicKey("zec", derivationIndex)),
    derivationIndex,
    height: 100,
  };
}

for (const name of ["mainnet", "regtest"] as const) {
  const network = utxoNetwork("zec", name);
  const prefix = name === "mainnet" ? "t1" : "tm";
  Deno.test(`zec signer (${name}, ${prefix}): a v5 transaction for every known branch id; signatures verify over ZIP-244`, () => {
    const inputs = [coin(network, 3, 70_000n), coin(network, 5, 50_000n, 1)];
    const payTo = p2pkhAddress(network, signer.publicKey("zec", 9));
    const change = p2pkhAddress(network, signer.publicKey("zec", 1, "change"));
    assert.ok(payTo.startsWith(prefix) && inputs[0].address.startsWith(prefix));
    for (const [upgrade, branchId] of Object.entries(ZEC_BRANCH_IDS)) {
      const outputs = [{ address: payTo, amount: 100_000n }, { address: change, amount: 10_000n }];
      const signed = signZecTx(network, { inputs, outputs, expiryHeight: 1_234, branchId }, keyFor);
      const tx = parseZecV5(fromHex(signed.raw));
      assert.equal(toHex(fromHex(signed.raw).subarray(0, 4)), "05000080", `${upgrade}: header v5 + overwintered`);
      assert.equal(tx.consensusBranchId, branchId);
      assert.equal(tx.expiryHeight, 1_234);
      assert.equal(tx.lockTime, 0);
      assert.equal(signed.txid, zecTxid(tx));
      // The library reads it back and agrees on the id.
      const lib = utxolib.bitgo.ZcashTransaction.fromBuffer<bigint>(
        Buffer.from(fromHex(signed.raw)),
        false,
        "bigint",
        utxolib.networks.zcash,
      );
      assert.equal(lib.getId(), signed.txid);
      assert.deepEqual(tx.outputs.map((o) => [toHex(o.script), o.value]), [
        [toHex(outputScript(network, payTo)), 100_000n],
        [toHex(outputScript(network, change)), 10_000n],
      ]);
      const spent = inputs.map((c) => ({ value: c.amount, script: outputScript(network, c.address) }));
      tx.inputs.forEach((input, i) => {
        assert.equal(toHex(input.prevHash.slice().reverse()), inputs[i].txHash);
        assert.equal(input.prevIndex, inputs[i].index);
        // scriptSig: <sig||01> <pubkey>
        const sigLen = input.scriptSig[0];
        const sig = input.scriptSig.subarray(1, 1 + sigLen);
        const pub = input.scriptSig.subarray(2 + sigLen);
        assert.equal(input.scriptSig[1 + sigLen], 33);
        assert.equal(sig[sig.length - 1], SIGHASH_ALL);
        assert.equal(p2pkhAddress(network, pub), inputs[i].address);
        const digest = transparentSighash(tx, i, spent, SIGHASH_ALL);
        assert.ok(secp256k1.verify(sig.subarray(0, -1), digest, pub, { prehash: false, format: "der", lowS: true }));
        // A digest under another branch id does not verify: the signature commits to the branch.
        const otherBranch = branchId === NU6_3 ? ZEC_BRANCH_IDS.NU5 : NU6_3;
        const other = transparentSighash({ ...tx, consensusBranchId: otherBranch }, i, spent, SIGHASH_ALL);
        assert.ok(!secp256k1.verify(sig.subarray(0, -1), other, pub, { prehash: false, format: "der" }));
      });
    }
  });
}

Deno.test("zec signer: an unknown consensus branch id is refused with UnknownBranchIdError naming it", () => {
  const network = utxoNetwork("zec", "regtest");
  const plan = (branchId: number) => ({
    inputs: [coin(network, 1, 50_000n)],
    outputs: [{ address: coin(network, 2, 0n).address, amount: 40_000n }],
    expiryHeight: 100,
    branchId,
  });
  for (const unknown of [0xe9ff75a6, /* Canopy (v4 era) */ 0x12345678, 0]) {
    assert.throws(() => signZecTx(network, plan(unknown), keyFor), (e: unknown) => {
      assert.ok(e instanceof UnknownBranchIdError);
      assert.match(e.message, new RegExp(`0x${unknown.toString(16).padStart(8, "0")}`));
      assert.match(e.message, /payouts are refused/);
      return true;
    });
  }
  assert.throws(() => signZecTx(network, { ...plan(NU6_3), branchId: undefined }, keyFor), /branch id/);
  assert.throws(() => signZecTx(network, { ...plan(NU6_3), expiryHeight: undefined }, keyFor), /expiry height/);
  assert.throws(() => signZecTx(network, { ...plan(NU6_3), expiryHeight: 500_000_000 }, keyFor), /expiry height/);
});

Deno.test("zec signer: a key that does not own the coin is refused before signing", () => {
  const network = utxoNetwork("zec", "regtest");
  const c = coin(network, 1, 50_000n);
  const wrong = (_: PayoutCoin) => keyFor({ ...c, derivationIndex: 2 });
  assert.throws(
    () =>
      signZecTx(network, {
        inputs: [c],
        outputs: [{ address: c.address, amount: 40_000n }],
        expiryHeight: 10,
        branchId: NU6_3,
      }, wrong),
    /does not own/,
  );
});

Deno.test("zec signer: an address of the other network is refused (t1 on regtest)", () => {
  const regtest = utxoNetwork("zec", "regtest");
  const mainnetAddress = p2pkhAddress(utxoNetwork("zec", "mainnet"), signer.publicKey("zec", 4));
  assert.throws(
    () =>
      signZecTx(regtest, {
        inputs: [coin(regtest, 1, 50_000n)],
        outputs: [{ address: mainnetAddress, amount: 40_000n }],
        expiryHeight: 10,
        branchId: NU6_3,
      }, keyFor),
    /not a transparent address/,
  );
});

const v4Vectors = zcashVectors("zip_0243.json");
if (!v4Vectors) console.warn(VECTORS_ABSENT);
Deno.test({
  name:
    "zec signer never produces v4: ZIP-243 (v4 Sapling) vectors are refused by the v5 parser our signer checks with",
  ignore: !v4Vectors,
  fn() {
    for (const v of v4Vectors!) {
      const raw = fromHex(v.tx as string);
      assert.equal(toHex(raw.subarray(0, 4)), "04000080");
      assert.throws(() => parseZecV5(raw), /not a v5 transaction/);
    }
  },
});

Deno.test("ZIP-317: utxo_fee's 5,000 x max(2, inputs, outputs) equals the conventional fee of real signed P2PKH payouts", () => {
  const network = utxoNetwork("zec", "regtest");
  const fee = utxoFee("zec");
  const p2pkh = coin(network, 7, 0n).address;
  // A regtest P2SH address (t2...): version 0x1cba and a 20-byte script hash (its output is 32 bytes, not 34).
  const t2 = bitcoinBase58check.encode(Uint8Array.of(0x1c, 0xba, ...new Uint8Array(20).fill(7)));
  assert.ok(t2.startsWith("t2"));
  for (let inputs = 1; inputs <= 49; inputs += inputs < 5 ? 1 : 11) {
    for (const outputs of [[p2pkh], [p2pkh, p2pkh], [t2], [t2, p2pkh]]) {
      const coins = Array.from({ length: inputs }, (_, k) => coin(network, 10 + k, 1_000_000n, k));
      const signed = signZecTx(network, {
        inputs: coins,
        outputs: outputs.map((address) => ({ address, amount: 1_000n })),
        expiryHeight: 50,
        branchId: NU6_3,
      }, keyFor);
      const tx = parseZecV5(fromHex(signed.raw));
      assert.equal(
        fee(inputs, outputs.length),
        zip317ConventionalFee(tx),
        `${inputs} inputs, ${outputs.length} outputs`,
      );
    }
  }
});

Deno.test("ZIP-317: from 75 inputs the size rule (ceil(bytes / 150)) counts fewer actions than inputs: utxo_fee overpays, never underpays", () => {
  const network = utxoNetwork("zec", "regtest");
  const coins = Array.from({ length: 75 }, (_, k) => coin(network, 100 + k, 1_000_000n, k));
  const signed = signZecTx(network, {
    inputs: coins,
    outputs: [{ address: coins[0].address, amount: 1_000n }],
    expiryHeight: 50,
    branchId: NU6_3,
  }, keyFor);
  const conventional = zip317ConventionalFee(parseZecV5(fromHex(signed.raw)));
  assert.ok(conventional < utxoFee("zec")(75, 1), `${conventional} < ${utxoFee("zec")(75, 1)}`);
  assert.ok(conventional >= 5_000n * 74n);
});
