/**
 * Mainnet-shaped Sui checkpoints for the Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts,
 * `mainnetCheckpoints`), generated from the sequence number when asked and never stored, so a catch-up over thousands
 * of checkpoints costs the server no memory.
 *
 * The shape, from public chain statistics:
 * - a checkpoint about every 250 ms (Flipside's Sui `fact_checkpoints` documentation: "approximately every 250ms";
 *   sui-indexer-alt-graphql's config.rs sizes `max_scan_limit` "at 4 checkpoints/second"), so about 345,000 a day;
 * - tens of millions of transactions a day (Sui's blog, "Sui's 90 Day Metrics": 65.8 million transaction blocks in one
 *   day at its 2023 peak; Suiscan's daily counts run around ten million since): a median of 22 and a mean of about 30
 *   transactions per checkpoint (about 10 million a day), log-normally spread, from 1 to 400, about 15% of them above
 *   a page of 50;
 * - balance changes per transaction: the gas payer alone (a quarter: object-only calls), a transfer's two sides, a
 *   swap's three or four coins, now and then a multi-send to tens of owners (one in a thousand above 20), 2.5 on
 *   average; 2% of transactions fail (gas only); about a third of the other changes are coins other than SUI.
 *
 * Digests encode (sequence number, position) with a keyed check, so `transactionEffects(digest)` regenerates the
 * transaction; addresses are drawn from the generator and are never one of ours.
 */
import { base58 } from "@scure/base";

export interface MainnetCheckpointShape {
  /** Median transactions per checkpoint (default 22). */
  medianTransactions?: number;
  /** Seed of the generator (default 1): the same seed gives the same chain. */
  seed?: number;
}

export interface GeneratedChange {
  owner: string;
  coinType: string;
  amount: bigint;
}

export interface GeneratedTx {
  digest: string;
  sender: string;
  status: "SUCCESS" | "FAILURE";
  balanceChanges: GeneratedChange[];
}

const LONG_SUI = "0x" + "2".padStart(64, "0") + "::sui::SUI";
const OTHER_COINS = [
  "0x" + "dba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7" + "::usdc::USDC",
  "0x" + "deeb7a4662eec9f2f3def03fb937a663dddaa2e215b8078a284d026b7946c270" + "::deep::DEEP",
  "0x" + "c060006111016b8a020ad5b33834984a437aaa7d3c74c18e09a95d48aceab08c" + "::coin::COIN",
];
const MARKER = 0xa5;

/** A small fast generator (mulberry32) seeded by the numbers given. */
function rng(...keys: number[]): () => number {
  let a = 0x9e3779b9;
  for (const k of keys) a = Math.imul(a ^ (k >>> 0) ^ Math.floor(k / 2 ** 32), 0x85ebca6b) + 0x6a09e667 | 0;
  return () => {
    a = a + 0x6d2b79f5 | 0;
    let t = Math.imul(a ^ a >>> 15, 1 | a);
    t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
    return ((t ^ t >>> 14) >>> 0) / 4294967296;
  };
}

function address(next: () => number): string {
  let hex = "0x";
  for (let i = 0; i < 8; i++) hex += Math.floor(next() * 2 ** 32).toString(16).padStart(8, "0");
  return hex;
}

/** Transactions in checkpoint `seq`. */
export function transactionCount(seq: number, shape: MainnetCheckpointShape = {}): number {
  const next = rng(shape.seed ?? 1, seq, 7);
  const z = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return Math.max(1, Math.min(400, Math.round((shape.medianTransactions ?? 22) * Math.exp(0.8 * z))));
}

/** A checkpoint's digest: a pure function of its sequence number. */
export function checkpointDigest(seq: number, shape: MainnetCheckpointShape = {}): string {
  const next = rng(shape.seed ?? 1, seq, 3);
  return base58.encode(Uint8Array.from({ length: 32 }, () => Math.floor(next() * 256)));
}

function txDigest(seq: number, index: number, seed: number): string {
  const bytes = new Uint8Array(32);
  bytes[0] = MARKER;
  const view = new DataView(bytes.buffer);
  view.setUint32(1, Math.floor(seq / 2 ** 32));
  view.setUint32(5, seq >>> 0);
  view.setUint32(9, index);
  const next = rng(seed, seq, index, 5);
  for (let i = 13; i < 32; i++) bytes[i] = Math.floor(next() * 256);
  return base58.encode(bytes);
}

/** The (sequence number, position) a generated digest encodes, or null for any other digest. */
export function generatedAt(digest: string, shape: MainnetCheckpointShape = {}): [number, number] | null {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(digest);
  } catch {
    return null;
  }
  if (bytes.length !== 32 || bytes[0] !== MARKER) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const seq = view.getUint32(1) * 2 ** 32 + view.getUint32(5);
  const index = view.getUint32(9);
  return txDigest(seq, index, shape.seed ?? 1) === digest ? [seq, index] : null;
}

/** Transaction `index` of checkpoint `seq`. */
export function generatedTransaction(seq: number, index: number, shape: MainnetCheckpointShape = {}): GeneratedTx {
  const seed = shape.seed ?? 1;
  const next = rng(seed, seq, index, 11);
  const sender = address(next);
  const failed = next() < 0.02;
  const u = next();
  const changes = failed || u < 0.25
    ? 1
    : u < 0.65
    ? 2
    : u < 0.9
    ? 3
    : u < 0.985
    ? 4 + Math.floor(next() * 5)
    : u < 0.999
    ? 9 + Math.floor(next() * 12)
    : 21 + Math.floor(next() * 100);
  const gas = BigInt(1_000_000 + Math.floor(next() * 5_000_000));
  const balanceChanges: GeneratedChange[] = [{ owner: sender, coinType: LONG_SUI, amount: -gas }];
  for (let i = 1; i < changes; i++) {
    const coinType = next() < 0.67 ? LONG_SUI : OTHER_COINS[Math.floor(next() * OTHER_COINS.length)];
    const amount = BigInt(Math.floor(next() * 2 ** 40)) + 1n;
    balanceChanges.push({ owner: address(next), coinType, amount: next() < 0.3 ? -amount : amount });
  }
  return { digest: txDigest(seq, index, seed), sender, status: failed ? "FAILURE" : "SUCCESS", balanceChanges };
}
