/**
 * Dogecoin signing (chains/utxo/doge_tx.ts) and the doge fee rule (chains/shared/utxo_fee.ts), without a node:
 * the scriptSig shape, low-S signatures that verify against the legacy sighash, the fee's size estimate never below a
 * real signed transaction's size, keys that are not the coin's refused. (Acceptance by a real node's mempool is in
 * tests/utxo_doge_regtest_test.ts.)
 */
import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { Transaction } from "bitcoinjs-lib";
import type { PayoutCoin } from "../chains/adapter.ts";
import { DEFAULT_DOGE_SATS_PER_KB, dogeTxBytes, payoutChange, utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { signDogeTx } from "../chains/utxo/doge_tx.ts";
import { outputScript, p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import type { InputKey } from "../chains/utxo/tx.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const MAINNET = utxoNetwork("doge", "mainnet");

function coin(i: number, amount = 100_000_000n): PayoutCoin {
  const address = p2pkhAddress(MAINNET, signer.publicKey("doge", i));
  const txHash = (i + 1).toString(16).padStart(64, "a");
  return { txHash, index: i % 3, amount, address, derivationIndex: i, height: 10 };
}

function keyFor(c: PayoutCoin): InputKey {
  return {
    publicKey: signer.publicKey("doge", c.derivationIndex),
    sign: (digest) => {
      const sig = signer.signDigest("doge", c.derivationIndex, digest);
      return sig.bytes;
    },
  };
}

const DEST = p2pkhAddress(MAINNET, signer.publicKey("doge", 999));

Deno.test("doge signing: legacy P2PKH, version 1, <DER+01> <33-byte key>, low-S signatures over the sighash", () => {
  const inputs = [coin(0), coin(1)];
  const outputs = [{ address: DEST, amount: 150_000_000n }, { address: inputs[0].address, amount: 40_000_000n }];
  const signed = signDogeTx(MAINNET, { inputs, outputs }, keyFor);
  const tx = Transaction.fromHex(signed.raw);
  assert.equal(tx.getId(), signed.txid);
  assert.equal(tx.version, 1);
  assert.equal(tx.hasWitnesses(), false);
  assert.deepEqual(tx.outs.map((o) => o.value), [150_000_000n, 40_000_000n]);
  assert.deepEqual(tx.outs[0].script, outputScript(MAINNET, DEST));
  tx.ins.forEach((input, i) => {
    assert.equal(
      Array.from(input.hash).reverse().map((b) => b.toString(16).padStart(2, "0")).join(""),
      inputs[i].txHash,
    );
    assert.equal(input.index, inputs[i].index);
    const s = input.script;
    const sigLen = s[0];
    const sig = s.subarray(1, 1 + sigLen);
    assert.equal(sig.at(-1), 0x01, "SIGHASH_ALL");
    assert.equal(s[1 + sigLen], 33);
    const pub = s.subarray(2 + sigLen);
    assert.deepEqual(pub, signer.publicKey("doge", i));
    const digest = tx.hashForSignature(i, outputScript(MAINNET, inputs[i].address), 0x01);
    assert.ok(secp256k1.verify(sig.subarray(0, -1), digest, pub, { prehash: false, format: "der", lowS: true }));
  });
});

Deno.test("doge fee: the size estimate is never below a real signed transaction (1..4 inputs, 1..3 outputs, 253 inputs)", () => {
  const shapes: [number, number][] = [];
  for (let inputs = 1; inputs <= 4; inputs++) {
    for (let outputs = 1; outputs <= 3; outputs++) shapes.push([inputs, outputs]);
  }
  shapes.push([253, 2]); // the input count's varint grows to 3 bytes
  let tightest = Infinity;
  for (const [n, m] of shapes) {
    for (let round = 0; round < (n > 10 ? 1 : 8); round++) {
      const inputs = Array.from({ length: n }, (_, i) => coin(i + round * 7));
      const outputs = Array.from({ length: m }, () => ({ address: DEST, amount: 1_000_000n }));
      const size = signDogeTx(MAINNET, { inputs, outputs }, keyFor).raw.length / 2;
      assert.ok(size <= dogeTxBytes(n, m), `${n} in, ${m} out: ${size} bytes > estimate ${dogeTxBytes(n, m)}`);
      tightest = Math.min(tightest, dogeTxBytes(n, m) - size);
    }
  }
  // A low-S signature is 70-72 bytes with its sighash byte (an input 146-148 bytes): some transaction came close.
  assert.ok(tightest <= 8, `the estimate is an upper bound, not a loose guess (closest: ${tightest} bytes)`);
});

Deno.test("doge signing refuses a key that is not the coin's, an empty plan, and another chain's network", () => {
  const c = coin(0);
  const outputs = [{ address: DEST, amount: 1_000_000n }];
  assert.throws(
    () => signDogeTx(MAINNET, { inputs: [c], outputs }, () => keyFor(coin(1))),
    /refusing to sign/,
  );
  assert.throws(() => signDogeTx(MAINNET, { inputs: [], outputs }, keyFor), /at least one input/);
  assert.throws(() => signDogeTx(MAINNET, { inputs: [c], outputs: [] }, keyFor), /at least one output/);
  assert.throws(() => signDogeTx(utxoNetwork("zec"), { inputs: [c], outputs }, keyFor), /not zec/);
  assert.throws(
    () => signDogeTx(MAINNET, { inputs: [c], outputs: [{ address: "tmXYZ", amount: 1n }] }, keyFor),
    /not a transparent address/,
  );
});

Deno.test("doge fee rate: 0.01 DOGE/kB by default, configurable, rounded up; payoutChange uses the given rule", () => {
  assert.equal(DEFAULT_DOGE_SATS_PER_KB, 1_000_000n);
  assert.equal(utxoFee("doge")(1, 2), 226n * 1_000n); // 10 + 148 + 68 bytes at 1,000 sats per byte
  assert.equal(utxoFee("doge", { dogeSatsPerKb: 2_000_000n })(1, 2), 452_000n);
  assert.equal(utxoFee("doge", { dogeSatsPerKb: 1_001n })(1, 2), 227n, "226.226 sats rounds up");
  assert.throws(() => utxoFee("doge", { dogeSatsPerKb: 0n }), RangeError);
  assert.equal(dogeTxBytes(253, 1), 8 + 3 + 1 + 148 * 253 + 34);
  const cheap = utxoFee("doge", { dogeSatsPerKb: 100_000n });
  assert.deepEqual(payoutChange("doge", 1, 300_000_000n, 100_000_000n, cheap), { change: 200_000_000n - 22_600n });
  assert.deepEqual(payoutChange("doge", 1, 300_000_000n, 100_000_000n), { change: 200_000_000n - 226_000n });
  assert.equal(payoutChange("doge", 1, 100_000_000n, 100_000_000n), null);
});
