/**
 * Verify before record (chains/effects.ts), UTXO family: what a signed doge or zec payout does, read back from its own
 * bytes (`PreparedTx.raw`, hex, as chains/utxo/doge_tx.ts and zec_tx.ts serialise it) with the chains' libraries,
 * never with the code that built it:
 *
 * - doge: bitcoinjs-lib's `Transaction.fromHex`; output scripts and scriptSigs through its `payments.p2pkh`/`p2sh`
 *   decoders with the network's Dogecoin version bytes (bitcoinjs ships no Dogecoin network object).
 * - zec: our ZIP-225 parser `parseZecV5` (chains/utxo/zec_zip244.ts: the format and digests, checked against the
 *   official vectors; it is not the builder, @bitgo/utxo-lib builds), cross-checked with @bitgo/utxo-lib's
 *   `ZcashTransaction.fromBuffer` (both must give the same ZIP-244 txid); addresses through @bitgo/utxo-lib's zcash
 *   `address.fromOutputScript` (t1/t3 on mainnet, tm/t2 on regtest).
 *
 * Refused, because the payer (chains/utxo/payer.ts) never builds them and each could move value or keep a
 * transaction from being what it looks like: outputs other than P2PKH and P2SH (OP_RETURN, bare multisig, witness
 * programs), a coinbase input, an input not signed as <signature SIGHASH_ALL> <public key> (a SIGHASH_NONE or
 * ANYONECANPAY signature would let anyone change the outputs or add inputs after we signed), a non-final sequence or
 * a lock time (the payer sets neither), doge witness data (Dogecoin has no segwit), zec shielded (Sapling, Orchard)
 * parts, and a zec transaction without an expiry height.
 *
 * What the bytes do not carry: the fee (an input's value is in the coin it spends, not in the spending transaction),
 * so `maxFee` stays absent and `differences` bounds the fee from `intent.coins`; and `from` (a UTXO transaction's
 * inputs say who pays: `inputs`).
 */
import * as utxolib from "@bitgo/utxo-lib";
import { type Network, payments, Transaction } from "bitcoinjs-lib";
import type { TxEffects, TxOutput } from "../effects.ts";
import type { Outpoint } from "../adapter.ts";
import type { UtxoNetwork } from "./network.ts";
import { parseZecV5, zecTxid } from "./zec_zip244.ts";

const SIGHASH_ALL = 0x01;
const FINAL_SEQUENCE = 0xffffffff;
/** Doge: the transaction version the payer builds (chains/utxo/doge_tx.ts). */
const DOGE_VERSION = 1;

/** The decoded effects of `raw` (hex, as `PreparedTx.raw`) on `network`; throws for anything the payer never builds. */
export async function explainUtxoTx(raw: string, network: UtxoNetwork): Promise<TxEffects> {
  await Promise.resolve(); // pure: async only to share the family-wide explain contract (chains/effects.ts)
  return explainBytes(raw, network, "signed");
}

/**
 * The same reading of a transaction not signed yet (chains/utxo/tx.ts `UtxoTxFamily.build`: every scriptSig empty),
 * as the signer process is shown it: the same refusals, except that each input must carry no scriptSig at all.
 */
export function explainUnsignedUtxoTx(unsigned: string, network: UtxoNetwork): TxEffects {
  return explainBytes(unsigned, network, "unsigned");
}

/** Whether the inputs must be signed P2PKH spends (a transaction to record) or empty (one to sign). */
type InputsAre = "signed" | "unsigned";

function explainBytes(raw: string, network: UtxoNetwork, inputsAre: InputsAre): TxEffects {
  if (typeof raw !== "string" || !/^(?:[0-9a-fA-F]{2})+$/.test(raw)) {
    throw new Error(`${network.chain}: cannot explain the transaction: its raw bytes are not hex`);
  }
  return network.chain === "doge" ? explainDoge(raw, network, inputsAre) : explainZec(raw, network, inputsAre);
}

// --- doge ----------------------------------------------------------------------------------------------------------

/** A bitcoinjs network object with the Dogecoin version bytes of `network` (chains/utxo/network.ts). */
function dogeLibraryNetwork(network: UtxoNetwork): Network {
  if (network.p2pkh.length !== 1 || network.p2sh.length !== 1) {
    throw new Error(`doge ${network.name}: address versions must be one byte each`);
  }
  return {
    messagePrefix: "\x19Dogecoin Signed Message:\n",
    // Dogecoin has no segwit: no bech32 address exists, and a witness program output is refused below anyway.
    bech32: "",
    bip32: { public: 0x02facafd, private: 0x02fac398 },
    pubKeyHash: network.p2pkh[0],
    scriptHash: network.p2sh[0],
    wif: network.wif,
  };
}

function explainDoge(raw: string, network: UtxoNetwork, inputsAre: InputsAre): TxEffects {
  let tx: Transaction;
  try {
    tx = Transaction.fromHex(raw);
  } catch (err) {
    throw new Error(`doge: cannot explain the transaction: bitcoinjs-lib cannot decode it (${message(err)})`);
  }
  const lib = dogeLibraryNetwork(network);
  if (tx.hasWitnesses()) throw new Error("doge: the transaction carries witness data; Dogecoin has no segwit");
  if (tx.version !== DOGE_VERSION) {
    throw new Error(`doge: transaction version ${tx.version}; the payer builds version ${DOGE_VERSION} only`);
  }
  if (tx.locktime !== 0) throw new Error(`doge: the transaction has lock time ${tx.locktime}; the payer sets none`);
  if (tx.ins.length === 0) throw new Error("doge: the transaction spends nothing");
  if (tx.outs.length === 0) throw new Error("doge: the transaction has no output");
  if (tx.isCoinbase()) throw new Error("doge: a coinbase transaction is never ours to sign");
  const inputs = tx.ins.map((input, i): Outpoint => {
    checkInput("doge", i, input.sequence, input.script, inputsAre);
    return { txHash: displayTxid(input.hash), index: input.index };
  });
  const outputs = tx.outs.map((out, i): TxOutput => ({ to: dogeAddress(out.script, lib, i), amount: out.value }));
  return { chain: "doge", inputs, outputs, memo: null };
}

/** The P2PKH or P2SH address an output script pays, decoded by bitcoinjs-lib's payments; throws for anything else. */
function dogeAddress(script: Uint8Array, network: Network, index: number): string {
  for (const payment of [payments.p2pkh, payments.p2sh]) {
    try {
      const address = payment({ output: script, network }).address;
      if (address) return address;
    } catch {
      // not this kind: try the next
    }
  }
  throw new Error(
    `doge: output ${index} has a script that is neither P2PKH nor P2SH (${hex(script)}); the payer never builds one`,
  );
}

// --- zec -----------------------------------------------------------------------------------------------------------

function zecLibraryNetwork(network: UtxoNetwork): utxolib.Network {
  const lib = network.name === "mainnet" ? utxolib.networks.zcash : utxolib.networks.zcashTest;
  // The library's versions must be the ones the service derives its addresses with (chains/utxo/network.ts).
  const version = (b: Uint8Array) => b.length === 2 ? b[0] << 8 | b[1] : -1;
  if (lib.pubKeyHash !== version(network.p2pkh) || lib.scriptHash !== version(network.p2sh)) {
    throw new Error(`zec ${network.name}: @bitgo/utxo-lib's address versions are not this network's`);
  }
  return lib;
}

function explainZec(raw: string, network: UtxoNetwork, inputsAre: InputsAre): TxEffects {
  const lib = zecLibraryNetwork(network);
  const bytes = Uint8Array.from(raw.match(/../g)!.map((b) => parseInt(b, 16)));
  let tx: ReturnType<typeof parseZecV5>;
  try {
    tx = parseZecV5(bytes);
  } catch (err) {
    throw new Error(`zec: cannot explain the transaction: not a v5 transaction we can parse (${message(err)})`);
  }
  const shielded = tx.sapling.spends.length + tx.sapling.outputs.length + (tx.orchard?.actions.length ?? 0);
  if (shielded > 0 || tx.sapling.valueBalance !== 0n || (tx.orchard && tx.orchard.valueBalance !== 0n)) {
    throw new Error(
      `zec: the transaction has shielded parts (${tx.sapling.spends.length} Sapling spends, ` +
        `${tx.sapling.outputs.length} Sapling outputs, ${tx.orchard?.actions.length ?? 0} Orchard actions); ` +
        `the payer builds transparent-only transactions`,
    );
  }
  // The library reads the same bytes: both parsers must agree on the ZIP-244 txid, which commits to every field
  // except the scriptSigs (checked one by one below).
  let libraryTxid: string;
  try {
    libraryTxid = utxolib.bitgo.ZcashTransaction.fromBuffer<bigint>(
      Buffer.from(bytes),
      false,
      "bigint",
      lib as utxolib.bitgo.ZcashNetwork,
    ).getId();
  } catch (err) {
    throw new Error(`zec: cannot explain the transaction: @bitgo/utxo-lib cannot decode it (${message(err)})`);
  }
  if (libraryTxid !== zecTxid(tx)) {
    throw new Error(`zec: the two v5 parsers disagree on the transaction (txid ${zecTxid(tx)} vs ${libraryTxid})`);
  }
  if (tx.lockTime !== 0) throw new Error(`zec: the transaction has lock time ${tx.lockTime}; the payer sets none`);
  if (tx.expiryHeight === 0) {
    throw new Error("zec: the transaction has no expiry height (0); every payout commits to one (ZIP-203)");
  }
  if (tx.inputs.length === 0) throw new Error("zec: the transaction spends nothing (transparent inputs)");
  if (tx.outputs.length === 0) throw new Error("zec: the transaction has no transparent output");
  const inputs = tx.inputs.map((input, i): Outpoint => {
    if (input.prevHash.every((b) => b === 0) && input.prevIndex === 0xffffffff) {
      throw new Error("zec: a coinbase transaction is never ours to sign");
    }
    checkInput("zec", i, input.sequence, input.scriptSig, inputsAre);
    return { txHash: displayTxid(input.prevHash), index: input.prevIndex };
  });
  const outputs = tx.outputs.map((out, i): TxOutput => {
    let to: string;
    try {
      to = utxolib.address.fromOutputScript(Buffer.from(out.script), lib);
    } catch {
      throw new Error(
        `zec: output ${i} has a script that is neither P2PKH nor P2SH (${hex(out.script)}); ` +
          `the payer never builds one`,
      );
    }
    return { to, amount: out.value };
  });
  return { chain: "zec", inputs, outputs, memo: null, expiry: { kind: "height", value: tx.expiryHeight } };
}

// --- shared ----------------------------------------------------------------------------------------------------------

/**
 * An input as the payer signs it: final sequence, scriptSig <DER signature + SIGHASH_ALL> <33-byte public key> (a P2PKH
 * spend, decoded by bitcoinjs-lib's `payments.p2pkh`; the same script in Zcash's transparent part).
 */
function checkInput(chain: string, index: number, sequence: number, scriptSig: Uint8Array, inputsAre: InputsAre) {
  if (sequence !== FINAL_SEQUENCE) {
    throw new Error(`${chain}: input ${index} has sequence 0x${sequence.toString(16)}; the payer signs final inputs`);
  }
  if (inputsAre === "unsigned") {
    if (scriptSig.length !== 0) throw new Error(`${chain}: input ${index} of an unsigned transaction has a scriptSig`);
    return;
  }
  let signature: Uint8Array | undefined;
  try {
    signature = payments.p2pkh({ input: scriptSig }).signature;
  } catch (err) {
    throw new Error(
      `${chain}: input ${index} is not a signed P2PKH spend (<signature> <public key>): ${message(err)}`,
    );
  }
  const hashType = signature?.at(-1);
  if (hashType !== SIGHASH_ALL) {
    throw new Error(
      `${chain}: input ${index} is signed with hash type 0x${hashType?.toString(16)}, not SIGHASH_ALL: ` +
        `its outputs or inputs could be changed after signing`,
    );
  }
}

/** A previous txid as it sits in a transaction (internal order) to how nodes and the payer's coins show it. */
function displayTxid(internal: Uint8Array): string {
  return hex(Uint8Array.from(internal).reverse());
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
