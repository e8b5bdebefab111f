/**
 * A Bitcoin-Core-family block as `getblock(hash, false)` serialises it (hex), read into the shared view: the header's
 * hash and parent, then every transaction decoded by `coreTxView` (bitcoinjs-lib; amounts bigint, the node's float
 * `value` never exists here).
 *
 * Why raw blocks: Dogecoin Core 1.14's `getblock` takes a boolean `verbose` only (docs/architecture.md, "Chain facts"):
 * `true` lists txids, so reading a block's transactions took one `getrawtransaction` per transaction on top (2 + txs
 * calls per block); `false` answers the whole block in one call, in fewer bytes (the transactions' hex with no per-call
 * JSON around each). Litecoin Core 0.21 (the regtest node of the tests) reads `false` as verbosity 0, the same bytes.
 *
 * Merged mining: a Dogecoin header whose version has bit 8 set (`VERSION_AUXPOW`, 0x100; Dogecoin Core 1.14
 * src/primitives/pureheader.h) is followed by its AuxPoW (src/auxpow.h `CAuxPow` serialisation): the parent chain's
 * coinbase transaction, the parent block hash, the coinbase's merkle branch and index, the chain merkle branch and
 * index, and the parent's 80-byte header. bitcoinjs's `Block.fromHex` cannot read it; it is skipped here (the AuxPoW
 * proves work, which the node checked; nothing in it pays anyone on this chain). The block's hash is the hash of its
 * own 80-byte header, never the parent's.
 */
import { Transaction } from "bitcoinjs-lib";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { scriptAddress, type UtxoNetwork } from "./network.ts";
import type { UtxoBlockView, UtxoTxView } from "./node.ts";

/** Dogecoin Core 1.14 src/primitives/pureheader.h `VERSION_AUXPOW`. */
export const VERSION_AUXPOW = 1 << 8;
const HEADER_BYTES = 80;

/** A decoded transaction as the shared view: outpoints in display order, each output's P2PKH/P2SH address or null. */
export function coreTxView(network: UtxoNetwork, tx: Transaction): UtxoTxView {
  const coinbase = tx.isCoinbase();
  return {
    txid: tx.getId(),
    coinbase,
    inputs: coinbase ? [] : tx.ins.map((i) => ({ txHash: displayHex(i.hash), index: i.index })),
    outputs: tx.outs.map((o, index) => ({ index, address: scriptAddress(network, o.script), amount: o.value })),
  };
}

/** A transaction's hex as the node serialises it, decoded to the shared view (legacy or segwit serialisation). */
export function decodeCoreTx(network: UtxoNetwork, hex: string, expectTxid?: string): UtxoTxView {
  let view: UtxoTxView;
  try {
    view = coreTxView(network, Transaction.fromHex(hex));
  } catch (err) {
    throw new Error(
      `${network.chain}: cannot decode transaction ${expectTxid ?? "(unnamed)"} (${
        err instanceof Error ? err.message : String(err)
      }); not a Bitcoin-style serialisation (a Litecoin MWEB transaction?)`,
    );
  }
  if (expectTxid !== undefined && view.txid !== expectTxid) {
    throw new Error(`${network.chain}: the node's bytes for ${expectTxid} hash to ${view.txid}`);
  }
  return view;
}

/** Display hex (byte-reversed) of a 32-byte internal hash. */
function displayHex(internal: Uint8Array): string {
  return bytesToHex(internal.slice().reverse());
}

/** The block hash of an 80-byte header: double SHA-256, displayed reversed. */
export function headerHash(header: Uint8Array): string {
  return displayHex(sha256(sha256(header)));
}

class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array, readonly what: string) {}

  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) {
      throw new Error(`${this.what}: ends after ${this.bytes.length} bytes, inside a field at byte ${this.at}`);
    }
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  u32(): number {
    const b = this.take(4);
    return (b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24) >>> 0;
  }

  /** Bitcoin's CompactSize (canonical or not: the node wrote it, and only counts within the bytes are accepted). */
  compact(): number {
    const first = this.take(1)[0];
    if (first < 0xfd) return first;
    if (first === 0xfd) {
      const b = this.take(2);
      return b[0] | b[1] << 8;
    }
    if (first === 0xfe) return this.u32();
    const lo = this.u32();
    const hi = this.u32();
    if (hi !== 0) throw new Error(`${this.what}: a count of more than 2^32 at byte ${this.at - 9}`);
    return lo;
  }

  /** A transaction: decoded from where it starts, its length from its own serialisation. */
  tx(): Transaction {
    let tx: Transaction;
    try {
      tx = Transaction.fromBuffer(this.bytes.subarray(this.at), true);
    } catch (err) {
      throw new Error(
        `${this.what}: no transaction can be read at byte ${this.at} (${err instanceof Error ? err.message : err})`,
      );
    }
    this.take(tx.byteLength());
    return tx;
  }

  /** A merkle branch (count, hashes) and its index: skipped. */
  skipBranch() {
    const n = this.compact();
    this.take(32 * n);
    this.take(4);
  }
}

/** `hex` as `getblock(hash, false)` answered it for `expectHash` at `height`, read into the shared view. */
export function decodeRawBlock(network: UtxoNetwork, hex: string, height: number, expectHash: string): UtxoBlockView {
  const what = `${network.chain}: block ${height} (${expectHash})`;
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error(`${what}: the node's answer is not hex`);
  const r = new Reader(hexToBytes(hex), what);
  const header = r.take(HEADER_BYTES);
  const hash = headerHash(header);
  if (hash !== expectHash) throw new Error(`${what}: the node's bytes hash to ${hash}`);
  const version = (header[0] | header[1] << 8 | header[2] << 16 | header[3] << 24) >>> 0;
  const parentHash = displayHex(header.subarray(4, 36));
  if (version & VERSION_AUXPOW && network.chain === "doge") {
    r.tx(); // the parent chain's coinbase (CMerkleTx)
    r.take(32); // its block hash
    r.skipBranch(); // coinbase merkle branch, index
    r.skipBranch(); // chain merkle branch, index
    r.take(HEADER_BYTES); // the parent block's header
  }
  const count = r.compact();
  const txs: UtxoTxView[] = [];
  for (let i = 0; i < count; i++) txs.push(coreTxView(network, r.tx()));
  if (r.at !== r.bytes.length) {
    throw new Error(`${what}: ${r.bytes.length - r.at} bytes after its ${count} transactions`);
  }
  return { number: height, hash, parentHash, txs };
}
