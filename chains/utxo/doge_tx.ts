/**
 * Dogecoin transaction signing: legacy P2PKH only (Dogecoin has no segwit), version 1, SIGHASH_ALL, built and hashed
 * with bitcoinjs-lib's `Transaction` (`hashForSignature` is the legacy sighash, which Dogecoin shares with Bitcoin).
 * Addresses go through chains/utxo/network.ts, never bitcoinjs's address module (it knows no Dogecoin versions).
 *
 * scriptSig = <DER signature + 0x01> <33-byte compressed public key>, each a direct push (a low-S DER signature with
 * its sighash byte is at most 72 bytes, under OP_PUSHDATA1's 0x4c), which is what standardness rules ask for.
 */
import { concatBytes } from "@noble/hashes/utils.js";
import { Transaction } from "bitcoinjs-lib";
import type { PayoutCoin } from "../adapter.ts";
import { outputScript, p2pkhAddress } from "./network.ts";
import type { InputKey, SignedUtxoTx, UtxoTxPlan, UtxoTxSigner } from "./tx.ts";

const SIGHASH_ALL = 0x01;
const FINAL_SEQUENCE = 0xffffffff;

/** A txid as nodes show it (big-endian hex) to the byte order inside a transaction. */
export function txidBytes(txid: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(txid)) throw new Error(`not a txid: ${txid}`);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(txid.slice(i * 2, i * 2 + 2), 16);
  return bytes.reverse();
}

function pushData(data: Uint8Array): Uint8Array {
  if (data.length >= 0x4c) throw new Error(`a ${data.length}-byte push is not a direct push`);
  const out = new Uint8Array(1 + data.length);
  out[0] = data.length;
  out.set(data, 1);
  return out;
}

export const signDogeTx: UtxoTxSigner = (network, plan: UtxoTxPlan, keyFor): SignedUtxoTx => {
  if (network.chain !== "doge") throw new Error(`signDogeTx signs doge transactions, not ${network.chain}`);
  if (plan.inputs.length === 0) throw new Error("doge: a transaction needs at least one input");
  if (plan.outputs.length === 0) throw new Error("doge: a transaction needs at least one output");
  const tx = new Transaction();
  tx.version = 1;
  for (const coin of plan.inputs) tx.addInput(txidBytes(coin.txHash), coin.index, FINAL_SEQUENCE);
  for (const out of plan.outputs) {
    if (out.amount <= 0n) throw new Error(`doge: output to ${out.address} must be positive, got ${out.amount}`);
    tx.addOutput(outputScript(network, out.address), out.amount);
  }
  // Every key is checked before anything is signed: a coin we cannot prove ours is never signed for.
  const keys: InputKey[] = plan.inputs.map((coin: PayoutCoin) => {
    const key = keyFor(coin);
    const address = p2pkhAddress(network, key.publicKey);
    if (address !== coin.address) {
      throw new Error(
        `doge: the key for coin ${coin.txHash}:${coin.index} is for ${address}, not the coin's address ` +
          `${coin.address}: refusing to sign`,
      );
    }
    return key;
  });
  plan.inputs.forEach((coin, i) => {
    const digest = tx.hashForSignature(i, outputScript(network, coin.address), SIGHASH_ALL);
    const der = keys[i].sign(digest);
    tx.setInputScript(
      i,
      concatBytes(pushData(concatBytes(der, Uint8Array.of(SIGHASH_ALL))), pushData(keys[i].publicKey)),
    );
  });
  return { raw: tx.toHex(), txid: tx.getId() };
};
