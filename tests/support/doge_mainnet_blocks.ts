/**
 * Mainnet-shaped Dogecoin blocks, generated from their height (and a seed) whenever asked and never stored: what
 * tests/support/bitcoin_core_server.ts serves with `mainnetBlocks`, as Dogecoin Core 1.14's `getblock(hash, false)`
 * serialises a block (src/primitives/block.h, the AuxPoW of src/auxpow.h after a header with `VERSION_AUXPOW`).
 *
 * Shape, from public statistics: a block a minute (1,440 a day; Dogecoin's target spacing, src/chainparams.cpp
 * `nPowTargetSpacing = 60`); about 20,000 to 30,000 transactions a day on ordinary days since 2015 (Blockworks,
 * "Dogecoin flips Ethereum transaction count", 2023, and Blockchair's figure of ~20,000 a day quoted by BTC News the
 * same month; inscription waves reached 1-2 million a day in May 2023). The default here is 40 transactions a block
 * (57,600 a day, twice an ordinary day), each like the chain's: P2PKH spends (a 72-byte signature and a 33-byte key,
 * 107 bytes of scriptSig), mostly one or two inputs and a payment plus change, now and then a consolidation of 10-20
 * inputs, outputs P2PKH (80%), P2SH (15%) or OP_RETURN (5%); every block merge-mined (AuxPoW: the parent's coinbase,
 * its merkle branch, the parent header) with a coinbase paying 10,000 DOGE. About 16 KB a block (32 KB of hex).
 *
 * Every block's merkle root is the real one of its transactions and its hash the double SHA-256 of its header, so the
 * chain links as a node's does; only the 32-byte hashes are kept (for `getblockhash` and linking), computed once at
 * construction. Inputs spend made-up outpoints (nothing checks them here). Deposits to chosen addresses are placed at
 * chosen heights, among the others.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { outputScript, type UtxoNetwork } from "../../chains/utxo/network.ts";
import { VERSION_AUXPOW } from "../../chains/utxo/raw_block.ts";
import { seededRandom } from "./seeded_random.ts";

export interface DogeMainnetShape {
  /** Mean transactions per block, coinbase included (default 40); each block holds between half and 1.5 times it. */
  transactions?: number;
  /** Varies the generated chain (default 1). */
  seed?: number;
}

export interface DogeDeposit {
  height: number;
  address: string;
  amount: bigint;
}

/** Dogecoin's merge-mined block version (chain id 0x62, AuxPoW bit, version 4). */
const BLOCK_VERSION = (0x62 << 16) | VERSION_AUXPOW | 4;
const COINBASE_KOINU = 10_000n * 100_000_000n;

const POOL = (() => {
  const r = seededRandom(0x5eed);
  return Uint8Array.from({ length: 16 * 1024 }, () => (r() * 256) | 0);
})();

class Writer {
  buf = new Uint8Array(64 * 1024);
  at = 0;

  #room(n: number) {
    if (this.at + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }

  bytes(b: Uint8Array) {
    this.#room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** `n` random-looking bytes: a slice of one fixed pool at an offset `r` picks (one draw, not `n`). */
  random(n: number, r: () => number) {
    this.#room(n);
    const at = Math.floor(r() * (POOL.length - n + 1));
    this.buf.set(POOL.subarray(at, at + n), this.at);
    this.at += n;
  }

  u32(n: number) {
    this.#room(4);
    new DataView(this.buf.buffer).setUint32(this.at, n >>> 0, true);
    this.at += 4;
  }

  u64(v: bigint) {
    this.#room(8);
    new DataView(this.buf.buffer).setBigUint64(this.at, v, true);
    this.at += 8;
  }

  compact(n: number) {
    if (n < 0xfd) {
      this.#room(1);
      this.buf[this.at++] = n;
    } else {
      this.#room(3);
      this.buf[this.at++] = 0xfd;
      this.buf[this.at++] = n & 0xff;
      this.buf[this.at++] = n >> 8;
    }
  }

  done(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
}

const sha256d = (b: Uint8Array) => sha256(sha256(b));

function merkleRoot(ids: Uint8Array[]): Uint8Array {
  let level = ids;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const pair = new Uint8Array(64);
      pair.set(level[i]);
      pair.set(level[i + 1] ?? level[i], 32);
      next.push(sha256d(pair));
    }
    level = next;
  }
  return level[0];
}

function p2pkhRandom(r: () => number): Uint8Array {
  const at = Math.floor(r() * (POOL.length - 20));
  return Uint8Array.of(0x76, 0xa9, 0x14, ...POOL.subarray(at, at + 20), 0x88, 0xac);
}

function p2shRandom(r: () => number): Uint8Array {
  const at = Math.floor(r() * (POOL.length - 20));
  return Uint8Array.of(0xa9, 0x14, ...POOL.subarray(at, at + 20), 0x87);
}

function pick(r: () => number, weights: [number, () => number][]): number {
  let x = r();
  for (const [w, f] of weights) {
    if (x < w) return f();
    x -= w;
  }
  return weights.at(-1)![1]();
}

/** One P2PKH spend of a made-up outpoint: the previous txid, its index, a DER signature and a compressed key. */
function spend(w: Writer, r: () => number) {
  w.random(32, r);
  w.u32((r() * 4) | 0);
  w.compact(107);
  w.bytes(Uint8Array.of(0x48, 0x30, 0x45));
  w.random(70, r); // the rest of the DER signature and its sighash byte
  w.bytes(Uint8Array.of(0x21, 0x02));
  w.random(32, r);
  w.u32(0xffffffff);
}

function output(w: Writer, value: bigint, script: Uint8Array) {
  w.u64(value);
  w.compact(script.length);
  w.bytes(script);
}

export class DogeMainnetChain {
  readonly first: number;
  readonly last: number;
  readonly #network: UtxoNetwork;
  readonly #mean: number;
  readonly #seed: number;
  readonly #deposits: Map<number, DogeDeposit[]>;
  /** Internal-order hashes, index 0 the block at `first`. */
  readonly #hashes: Uint8Array[] = [];
  /** Deposit txids (display hex) and the height each is in. */
  readonly depositTxids = new Map<string, number>();

  constructor(
    network: UtxoNetwork,
    opts: { first: number; count: number; deposits?: DogeDeposit[] } & DogeMainnetShape,
  ) {
    this.#network = network;
    this.first = opts.first;
    this.last = opts.first + opts.count - 1;
    this.#mean = opts.transactions ?? 40;
    this.#seed = opts.seed ?? 1;
    this.#deposits = new Map();
    for (const d of opts.deposits ?? []) {
      if (d.height <= this.first || d.height > this.last) throw new Error(`deposit height ${d.height} not served`);
      this.#deposits.set(d.height, [...(this.#deposits.get(d.height) ?? []), d]);
    }
    let parent = this.#firstParent();
    for (let h = this.first; h <= this.last; h++) {
      const { header, txids } = this.#build(h, parent, false);
      parent = sha256d(header);
      this.#hashes.push(parent);
      txids.forEach((id, i) => {
        if (i >= txids.length - (this.#deposits.get(h)?.length ?? 0)) {
          this.depositTxids.set(bytesToHex(id.slice().reverse()), h);
        }
      });
    }
  }

  /** The display hash of the block at `height`, or null when not served. */
  hashAt(height: number): string | null {
    const internal = this.#hashes[height - this.first];
    return internal ? bytesToHex(internal.slice().reverse()) : null;
  }

  heightOf(hash: string): number | null {
    // Linear, but only on hash lookups (getblock by hash); a day is 1,440 entries.
    for (let i = 0; i < this.#hashes.length; i++) {
      if (this.hashAt(this.first + i) === hash) return this.first + i;
    }
    return null;
  }

  /** The block's serialised bytes, generated again from its height. */
  blockBytes(height: number): Uint8Array {
    const parent = height === this.first ? this.#firstParent() : this.#hashes[height - this.first - 1];
    return this.#build(height, parent, true).block!;
  }

  /** The parent of the first block served: none (all zeros) for a chain from genesis, else a made-up hash. */
  #firstParent(): Uint8Array {
    if (this.first === 0) return new Uint8Array(32);
    return sha256d(new TextEncoder().encode(`doge parent of ${this.first} seed ${this.#seed}`));
  }

  /** The txids of the block at `height` (for `getblock` verbose). */
  txids(height: number): string[] {
    const parent = height === this.first ? this.#firstParent() : this.#hashes[height - this.first - 1];
    return this.#build(height, parent, false).txids.map((id) => bytesToHex(id.slice().reverse()));
  }

  /** The bytes of the transaction `txid` of the block at `height`, or null. */
  txBytes(height: number, txid: string): Uint8Array | null {
    const parent = height === this.first ? this.#firstParent() : this.#hashes[height - this.first - 1];
    const { txids, txs } = this.#build(height, parent, false);
    const i = txids.findIndex((id) => bytesToHex(id.slice().reverse()) === txid);
    return i < 0 ? null : txs[i];
  }

  #build(height: number, parent: Uint8Array, whole: boolean) {
    const r = seededRandom(this.#seed * 1_000_003 + height);
    const count = Math.max(1, Math.round(this.#mean * (0.5 + r())));
    const deposits = this.#deposits.get(height) ?? [];
    const txs: Uint8Array[] = [];
    // The coinbase: BIP34 height push, an extra nonce and a pool tag; 10,000 DOGE to the pool.
    {
      const w = new Writer();
      w.u32(1);
      w.compact(1);
      w.bytes(new Uint8Array(32));
      w.u32(0xffffffff);
      w.compact(4 + 8 + 16);
      w.bytes(Uint8Array.of(3, height & 0xff, (height >> 8) & 0xff, (height >> 16) & 0xff));
      w.random(24, r);
      w.u32(0xffffffff);
      w.compact(1);
      output(w, COINBASE_KOINU + BigInt((r() * 1e8) | 0), p2pkhRandom(r));
      w.u32(0);
      txs.push(w.done());
    }
    for (let i = 1; i < count; i++) {
      const w = new Writer();
      w.u32(r() < 0.7 ? 1 : 2);
      const ins = pick(r, [
        [0.6, () => 1],
        [0.25, () => 2],
        [0.1, () => 3 + ((r() * 3) | 0)],
        [0.05, () => 10 + ((r() * 11) | 0)],
      ]);
      w.compact(ins);
      for (let k = 0; k < ins; k++) spend(w, r);
      const outs = pick(r, [[0.2, () => 1], [0.7, () => 2], [0.1, () => 3 + ((r() * 8) | 0)]]);
      w.compact(outs);
      for (let k = 0; k < outs; k++) {
        const kind = r();
        if (kind < 0.05) {
          const at = Math.floor(r() * (POOL.length - 40));
          output(w, 0n, Uint8Array.of(0x6a, 0x28, ...POOL.subarray(at, at + 40)));
        } else output(w, BigInt(Math.floor(r() * 5e12)), kind < 0.2 ? p2shRandom(r) : p2pkhRandom(r));
      }
      w.u32(0);
      txs.push(w.done());
    }
    for (const d of deposits) {
      const w = new Writer();
      w.u32(1);
      w.compact(1);
      spend(w, r);
      w.compact(2);
      output(w, d.amount, outputScript(this.#network, d.address));
      output(w, BigInt(Math.floor(r() * 1e12)), p2pkhRandom(r));
      w.u32(0);
      txs.push(w.done());
    }
    const txids = txs.map(sha256d);
    const header = new Writer();
    header.u32(BLOCK_VERSION);
    header.bytes(parent);
    header.bytes(merkleRoot(txids));
    header.u32(1_700_000_000 + height * 60);
    header.u32(0x1a01cd2d);
    header.u32(0); // merge-mined: the work is in the parent's header
    const head = header.done();
    if (!whole) return { header: head, txids, txs, block: null };
    const w = new Writer();
    w.bytes(head);
    // AuxPoW (src/auxpow.h): the parent chain's coinbase (CMerkleTx: tx, block hash, branch, index), the chain merkle
    // branch and index, the parent's header.
    w.u32(1);
    w.compact(1);
    w.bytes(new Uint8Array(32));
    w.u32(0xffffffff);
    w.compact(4 + 4 + 32 + 8 + 20);
    w.bytes(Uint8Array.of(3, 0x10, 0x20, 0x30, 0xfa, 0xbe, 0x6d, 0x6d)); // height push, merged-mining magic
    w.random(60, r);
    w.u32(0xffffffff);
    w.compact(2);
    output(w, 625_000_000n, p2pkhRandom(r));
    const commitment = Math.floor(r() * (POOL.length - 36));
    output(w, 0n, Uint8Array.of(0x6a, 0x24, ...POOL.subarray(commitment, commitment + 36)));
    w.u32(0);
    w.random(32, r); // the parent block's hash
    w.compact(9);
    w.random(9 * 32, r); // coinbase merkle branch
    w.u32(0);
    w.compact(2);
    w.random(2 * 32, r); // chain merkle branch
    w.u32(1);
    w.random(80, r); // the parent's header
    w.compact(txs.length);
    for (const t of txs) w.bytes(t);
    return { header: head, txids, txs, block: w.done() };
  }
}
