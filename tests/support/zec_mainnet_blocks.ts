/**
 * Mainnet-shaped Zcash blocks, generated from their height (and a seed) whenever asked and never stored: what
 * tests/support/zebra_rpc_server.ts serves with `mainnetBlocks`, in the shapes Zebra's `getblock(height, 2)` answers
 * (zebra-rpc/src/methods/types/transaction.rs `TransactionObject`, with its Sapling `vShieldedSpend` /
 * `vShieldedOutput` and its `orchard` object of actions).
 *
 * Shape, from public statistics: a block every 75 seconds (1,152 a day; ZIP-208 after Blossom); Zcash's chain carried
 * roughly 10,000 to 20,000 transactions a day through 2025, about half of them with a shielded part (Blockworks
 * Research's "Zcash total transactions" chart of shielded and total counts; Blockchair's Zcash dashboard gives the same
 * order). The default here is 12 transactions a block (13,800 a day): the coinbase, transparent P2PKH payments (one to
 * three 107-byte-scriptSig inputs, a payment and change) and shielded-only transactions (Orchard with 2 actions, about
 * 9 KB of bytes with its Halo 2 proof; or Sapling with one spend and two outputs, about 2.4 KB), each object carrying
 * its `hex` as Zebra's does. About 45% shielded-only; a block answers about 100 KB of JSON.
 *
 * Transparent transactions are real v5 bytes (their txid is the ZIP-244 one, as the reader's deposits need); a
 * shielded transaction's `hex` has a v5 header and random-looking bytes of the right length (nothing here parses it;
 * its txid is a hash of that hex). Deposits to chosen addresses are placed at chosen heights among the others.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { outputScript, type UtxoNetwork } from "../../chains/utxo/network.ts";
import { parseZecV5, toHex, V5_VERSION_GROUP_ID, zecTxid, type ZecV5Tx } from "../../chains/utxo/zec_zip244.ts";
import { seededRandom } from "./seeded_random.ts";

/** A transaction the server has the bytes of: its own coinbases, deposits and payouts, and generated ones. */
export interface ChainTx {
  txid: string;
  raw: Uint8Array;
  tx: ZecV5Tx;
}

/** A generated shielded-only transaction: the TransactionObject's block-independent fields. */
export interface ShieldedTx {
  txid: string;
  object: Record<string, unknown>;
}

export interface ZecMainnetShape {
  /** Mean transactions per block, coinbase included (default 12); each block holds between half and 1.5 times it. */
  transactions?: number;
  /** Varies the generated chain (default 1). */
  seed?: number;
}

export interface ZecDeposit {
  height: number;
  address: string;
  amount: bigint;
}

export interface ZecGeneratedBlock {
  hash: string;
  height: number;
  parent: string;
  time: number;
  txs: (ChainTx | ShieldedTx)[];
}

export function u32le(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
}

export function compactSize(n: number): number[] {
  if (n < 0xfd) return [n];
  return [0xfd, n & 0xff, n >> 8];
}

function i64le(v: bigint): number[] {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v, true);
  return [...b];
}

/** Serialises a transparent-only v5 transaction. */
export function serializeV5(
  branchId: number,
  expiryHeight: number,
  inputs: { prevHash: Uint8Array; prevIndex: number; scriptSig: Uint8Array }[],
  outputs: { value: bigint; script: Uint8Array }[],
): Uint8Array {
  const bytes: number[] = [
    ...u32le((5 | 0x80000000) >>> 0),
    ...u32le(V5_VERSION_GROUP_ID),
    ...u32le(branchId),
    ...u32le(0),
    ...u32le(expiryHeight),
    ...compactSize(inputs.length),
  ];
  for (const i of inputs) {
    bytes.push(...i.prevHash, ...u32le(i.prevIndex), ...compactSize(i.scriptSig.length), ...i.scriptSig);
    bytes.push(...u32le(0xffffffff));
  }
  bytes.push(...compactSize(outputs.length));
  for (const o of outputs) bytes.push(...i64le(o.value), ...compactSize(o.script.length), ...o.script);
  bytes.push(0, 0, 0); // no Sapling spends, no Sapling outputs, no Orchard actions
  return Uint8Array.from(bytes);
}

export function chainTx(raw: Uint8Array): ChainTx {
  const tx = parseZecV5(raw);
  return { txid: zecTxid(tx), raw, tx };
}

const randomBytes = (n: number, r: () => number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (r() * 256) | 0;
  return b;
};
/**
 * Random-looking hex of `n` bytes for shielded fields (ciphertexts, proofs, signatures): a slice of one fixed pool at
 * an offset the block's generator picks, so a 160 KB block costs a few hundred random draws, not 160,000.
 */
const POOL_BYTES = 64 * 1024;
const POOL_HEX = toHex(randomBytes(POOL_BYTES, seededRandom(0x5eed)));
const randomHex = (n: number, r: () => number) => {
  if (n > POOL_BYTES) throw new Error(`${n} random bytes asked; the pool holds ${POOL_BYTES}`);
  const at = Math.floor(r() * (POOL_BYTES - n + 1));
  return POOL_HEX.slice(2 * at, 2 * (at + n));
};

function p2pkh(r: () => number): Uint8Array {
  return Uint8Array.of(0x76, 0xa9, 0x14, ...randomBytes(20, r), 0x88, 0xac);
}

/** A P2PKH scriptSig: a 72-byte DER signature with its sighash byte, a compressed key. */
function scriptSig(r: () => number): Uint8Array {
  return Uint8Array.of(0x48, 0x30, 0x45, ...randomBytes(70, r), 0x21, 0x02, ...randomBytes(32, r));
}

/** Orchard's Halo 2 proof length for `actions` actions (ZIP-225: 2,720 + 2,272 per action). */
const orchardProofBytes = (actions: number) => 2720 + 2272 * actions;

function shieldedTx(branchId: number, height: number, r: () => number): ShieldedTx {
  const orchard = r() < 0.75;
  const header = Uint8Array.of(
    ...u32le((5 | 0x80000000) >>> 0),
    ...u32le(V5_VERSION_GROUP_ID),
    ...u32le(branchId),
    ...u32le(0),
    ...u32le(height + 40),
  );
  const actions = orchard ? 2 : 0;
  const spends = orchard ? 0 : 1;
  const outputs = orchard ? 0 : 2;
  // Bytes: Orchard actions 820 each plus the proof, flags, balance, anchor, signatures; Sapling 384 per spend, 948
  // per output, their proofs (192 each) and a binding signature.
  const size = orchard
    ? header.length + 3 + actions * 820 + 1 + 8 + 32 + orchardProofBytes(actions) + actions * 64 + 64
    : header.length + 3 + spends * (96 + 192 + 64) + outputs * (756 + 192) + 8 + 32 + 64 + 1;
  const hex = toHex(header) + randomHex(size - header.length, r);
  const txid = toHex(sha256(new TextEncoder().encode(hex)));
  const fee = 10_000 + Math.floor(r() * 5) * 5_000;
  const object: Record<string, unknown> = {
    in_active_chain: true,
    hex,
    vin: [],
    vout: [],
    vShieldedSpend: Array.from({ length: spends }, () => ({
      cv: randomHex(32, r),
      anchor: randomHex(32, r),
      nullifier: randomHex(32, r),
      rk: randomHex(32, r),
      proof: randomHex(192, r),
      spendAuthSig: randomHex(64, r),
    })),
    vShieldedOutput: Array.from({ length: outputs }, () => ({
      cv: randomHex(32, r),
      cmu: randomHex(32, r),
      ephemeralKey: randomHex(32, r),
      encCiphertext: randomHex(580, r),
      outCiphertext: randomHex(80, r),
      proof: randomHex(192, r),
    })),
    ...(orchard
      ? {
        orchard: {
          actions: Array.from({ length: actions }, () => ({
            cv: randomHex(32, r),
            nullifier: randomHex(32, r),
            rk: randomHex(32, r),
            cmx: randomHex(32, r),
            ephemeralKey: randomHex(32, r),
            encCiphertext: randomHex(580, r),
            spendAuthSig: randomHex(64, r),
            outCiphertext: randomHex(80, r),
          })),
          valueBalance: fee / 1e8,
          valueBalanceZat: fee,
          flags: { enableOutputs: true, enableSpends: true },
          anchor: randomHex(32, r),
          proof: randomHex(orchardProofBytes(actions), r),
          bindingSig: randomHex(64, r),
        },
        valueBalance: 0.0,
        valueBalanceZat: 0,
      }
      : { valueBalance: fee / 1e8, valueBalanceZat: fee, bindingSig: randomHex(64, r) }),
    size,
    txid,
    overwintered: true,
    version: 5,
    versiongroupid: V5_VERSION_GROUP_ID.toString(16),
    locktime: 0,
    expiryheight: height + 40,
  };
  return { txid, object };
}

export class ZecMainnetChain {
  readonly first: number;
  readonly last: number;
  readonly #network: UtxoNetwork;
  readonly #branchId: number;
  readonly #mean: number;
  readonly #seed: number;
  readonly #minerScript: Uint8Array;
  readonly #deposits = new Map<number, ZecDeposit[]>();
  /** Deposit txids and the height each is in (filled at construction). */
  readonly depositTxids = new Map<string, number>();

  constructor(
    network: UtxoNetwork,
    branchId: number,
    minerScript: Uint8Array,
    opts: { first: number; count: number; deposits?: ZecDeposit[] } & ZecMainnetShape,
  ) {
    this.#network = network;
    this.#branchId = branchId;
    this.#minerScript = minerScript;
    this.first = opts.first;
    this.last = opts.first + opts.count - 1;
    this.#mean = opts.transactions ?? 12;
    this.#seed = opts.seed ?? 1;
    for (const d of opts.deposits ?? []) {
      if (d.height <= this.first || d.height > this.last) throw new Error(`deposit height ${d.height} not served`);
      this.#deposits.set(d.height, [...(this.#deposits.get(d.height) ?? []), d]);
    }
    for (const h of this.#deposits.keys()) {
      for (const t of this.blockAt(h)!.txs.slice(-this.#deposits.get(h)!.length)) this.depositTxids.set(t.txid, h);
    }
  }

  hashAt(height: number): string | null {
    if (height < this.first || height > this.last) return null;
    return toHex(sha256(sha256(new TextEncoder().encode(`zec block ${height} seed ${this.#seed}`))));
  }

  heightOf(hash: string): number | null {
    for (let h = this.first; h <= this.last; h++) if (this.hashAt(h) === hash) return h;
    return null;
  }

  blockAt(height: number): ZecGeneratedBlock | null {
    const hash = this.hashAt(height);
    if (hash === null) return null;
    const r = seededRandom(this.#seed * 1_000_003 + height);
    const count = Math.max(1, Math.round(this.#mean * (0.5 + r())));
    // The coinbase: height and a nonce in its script; the miner's reward and the lockbox-era funding output.
    const txs: (ChainTx | ShieldedTx)[] = [chainTx(serializeV5(this.#branchId, 0, [{
      prevHash: new Uint8Array(32),
      prevIndex: 0xffffffff,
      scriptSig: Uint8Array.of(4, ...u32le(height), 8, ...randomBytes(8, r)),
    }], [{ value: 125_000_000n, script: this.#minerScript }, { value: 31_250_000n, script: p2pkh(r) }]))];
    for (let i = 1; i < count; i++) {
      if (r() < 0.45) {
        txs.push(shieldedTx(this.#branchId, height, r));
        continue;
      }
      const ins = r() < 0.7 ? 1 : 2 + ((r() * 2) | 0);
      txs.push(chainTx(serializeV5(
        this.#branchId,
        height + 40,
        Array.from({ length: ins }, () => ({
          prevHash: randomBytes(32, r),
          prevIndex: (r() * 3) | 0,
          scriptSig: scriptSig(r),
        })),
        [{ value: BigInt(Math.floor(r() * 1e10)), script: p2pkh(r) }, {
          value: BigInt(Math.floor(r() * 1e9)),
          script: p2pkh(r),
        }],
      )));
    }
    for (const d of this.#deposits.get(height) ?? []) {
      txs.push(chainTx(serializeV5(
        this.#branchId,
        height + 40,
        [{ prevHash: randomBytes(32, r), prevIndex: 0, scriptSig: scriptSig(r) }],
        [{ value: d.amount, script: outputScript(this.#network, d.address) }, {
          value: BigInt(Math.floor(r() * 1e9)),
          script: p2pkh(r),
        }],
      )));
    }
    const parent = height === this.first
      ? toHex(sha256(new TextEncoder().encode(`zec parent ${this.first}`)))
      : this.hashAt(height - 1)!;
    return { hash, height, parent, time: 1_700_000_000 + height * 75, txs };
  }
}
