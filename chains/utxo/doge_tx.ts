/**
 * Dogecoin transaction signing: legacy P2PKH only (Dogecoin has no segwit), version 1, SIGHASH_ALL, built and hashed
 * with bitcoinjs-lib's `Transaction` (`hashForSignature` is the legacy sighash, which Dogecoin shares with Bitcoin: it
 * commits to the script of the coin each input spends, not to its amount). Addresses go through
 * chains/utxo/network.ts, never bitcoinjs's address module (it knows no Dogecoin versions).
 *
 * scriptSig = <DER signature + 0x01> <33-byte compressed public key>, each a direct push (tx.ts `p2pkhScriptSig`),
 * which is what standardness rules ask for.
 */
import { Transaction } from "bitcoinjs-lib";
import { outputScript, p2pkhAddress } from "./network.ts";
import { p2pkhScriptSig, SIGHASH_ALL, signWith, type UtxoTxFamily, type UtxoTxSigner } from "./tx.ts";

const FINAL_SEQUENCE = 0xffffffff;

/** A txid as nodes show it (big-endian hex) to the byte order inside a transaction. */
export function txidBytes(txid: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(txid)) throw new Error(`not a txid: ${txid}`);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(txid.slice(i * 2, i * 2 + 2), 16);
  return bytes.reverse();
}

/** The unsigned transaction as bitcoinjs-lib reads it; throws for anything but whole transaction bytes. */
function parseUnsigned(unsigned: string): Transaction {
  const tx = Transaction.fromHex(unsigned);
  if (tx.toHex() !== unsigned.toLowerCase()) throw new Error("doge: the transaction is not its own serialization");
  return tx;
}

export const DOGE_TX: UtxoTxFamily = {
  build(network, plan) {
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
    return tx.toHex();
  },

  sighashes(network, unsigned, spent) {
    if (network.chain !== "doge") throw new Error(`doge sighashes, not ${network.chain}`);
    const tx = parseUnsigned(unsigned);
    if (spent.length !== tx.ins.length) throw new Error("doge: a sighash needs the coin of every input");
    return spent.map((coin, i) => tx.hashForSignature(i, coin.script, SIGHASH_ALL));
  },

  assemble(network, unsigned, signatures) {
    if (network.chain !== "doge") throw new Error(`doge assembly, not ${network.chain}`);
    const tx = parseUnsigned(unsigned);
    if (signatures.length !== tx.ins.length) throw new Error("doge: every input needs its signature");
    signatures.forEach((sig, i) => tx.setInputScript(i, p2pkhScriptSig(sig)));
    return { raw: tx.toHex(), txid: tx.getId() };
  },
};

export const signDogeTx: UtxoTxSigner = signWith(DOGE_TX, p2pkhAddress, outputScript);
