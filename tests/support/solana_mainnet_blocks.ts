/**
 * Mainnet-sized Solana blocks as `getBlock(slot, {transactionDetails: "accounts"})` answers them, generated from the
 * slot number each time they are asked for, so that neither a test's server nor its reader holds hundreds of them
 * (docs/scan-budget.md gives the sizes and where they come from: about 2,000 transactions per slot, a third of them
 * votes, about 2.9 MB of JSON per block in this mode).
 *
 * The generated transactions are someone else's: random-looking account keys from a fixed pool (none of them ever
 * one of our deposit addresses), vote transactions (fee payer, vote account, Vote program; only the fee moves), and
 * others with 12 account keys (the last three from a lookup table) where two accounts receive lamports, one in ten failed (only its fee charged), as
 * `accounts` mode lists them (`source`, `writable`, token balances, status). Only the text is built, never objects:
 * a block is a few thousand string concatenations of pieces made once.
 */
import { base58 } from "@scure/base";

export interface MainnetBlockShape {
  /** Transactions per block (default 2,000). */
  transactions?: number;
  /** Share of vote transactions (default 1/3). */
  voteShare?: number;
}

const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";
const KEYS_PER_TRANSFER = 12;
const POOL = 4096;

/** The `salt` of the mainnet filler's keys: another salt gives keys that are never among them. */
const FILLER_SALT = 0x9e3779b9;

/**
 * A deterministic 32-byte key from `seed` and `salt`, base58 (never a real address: no one holds its private key). The
 * filler of the blocks uses `FILLER_SALT`; a bench that needs keys of its own passes another salt.
 */
export function syntheticKey(seed: number, salt = FILLER_SALT): string {
  const bytes = new Uint8Array(32);
  let x = (seed * 2654435761 + salt) >>> 0;
  for (let i = 0; i < 32; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    bytes[i] = x & 0xff;
  }
  return base58.encode(bytes);
}

const pool = Array.from({ length: POOL }, (_, i) => syntheticKey(i + 1));

function keyJson(pubkey: string, signer: boolean, writable: boolean, source = "transaction"): string {
  return `{"pubkey":"${pubkey}","signer":${signer},"source":"${source}","writable":${writable}}`;
}

/** A signature unique to (slot, index): 64 bytes, base58. */
function signatureOf(slot: number, index: number): string {
  const bytes = new Uint8Array(64);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, slot);
  view.setUint32(4, index);
  bytes.fill(7, 8);
  return base58.encode(bytes);
}

/** The text of one vote transaction after its signature. */
function voteTail(t: number): string {
  const payer = pool[t % POOL];
  const vote = pool[(t * 7 + 1) % POOL];
  const pre = 20_000_000_000 + t;
  return `"],"accountKeys":[${keyJson(payer, true, true)},${keyJson(vote, false, true)},` +
    `${keyJson(VOTE_PROGRAM, false, false)}]},"meta":{"err":null,"fee":5000,"preBalances":[${pre},27074400000,` +
    `1141440],"postBalances":[${pre - 5000},27074400000,1141440],"preTokenBalances":[],"postTokenBalances":[],` +
    `"status":{"Ok":null}},"version":"legacy"}`;
}

/** The text of one other transaction after its signature: two accounts credited unless it failed. */
function transferTail(t: number): string {
  const failed = t % 10 === 0;
  const keys: string[] = [];
  const pre: number[] = [];
  const post: number[] = [];
  for (let i = 0; i < KEYS_PER_TRANSFER; i++) {
    const pubkey = pool[(t * 13 + i * 101) % POOL];
    const lookup = i >= 9;
    keys.push(keyJson(pubkey, i === 0, i < 6, lookup ? "lookupTable" : "transaction"));
    const balance = 1_000_000_000 + t * 1_000 + i;
    pre.push(balance);
    const credit = !failed && (i === 1 || i === 10) ? 2_039_280 : 0;
    post.push(i === 0 ? balance - 5_000 - (failed ? 0 : 4_078_560) : balance + credit);
  }
  const err = failed ? `{"InstructionError":[2,{"Custom":6001}]}` : "null";
  const status = failed ? `{"Err":${err}}` : `{"Ok":null}`;
  return `"],"accountKeys":[${keys.join(",")}]},"meta":{"err":${err},"fee":5000,"preBalances":[${pre}],` +
    `"postBalances":[${post}],"preTokenBalances":[],"postTokenBalances":[],"status":${status}},"version":0}`;
}

const TEMPLATES = 64;
const voteTails = Array.from({ length: TEMPLATES }, (_, t) => voteTail(t));
const transferTails = Array.from({ length: TEMPLATES }, (_, t) => transferTail(t));
/** Each transaction's text up to its signature; the templates above hold the rest. */
const HEAD = `{"transaction":{"signatures":["`;

/**
 * The transactions of the generated block at `slot`, as the comma-separated JSON texts of a `transactions` list
 * (without the brackets). Fixed by `slot`: asked twice, the same text.
 */
export function mainnetTransactionsJson(slot: number, shape: MainnetBlockShape = {}): string {
  const n = shape.transactions ?? 2_000;
  const everyVote = Math.max(1, Math.round(1 / (shape.voteShare ?? 1 / 3)));
  const parts: string[] = new Array(n);
  for (let t = 0; t < n; t++) {
    const tail = t % everyVote === 0 ? voteTails[(slot + t) % TEMPLATES] : transferTails[(slot * 3 + t) % TEMPLATES];
    parts[t] = HEAD + signatureOf(slot, t) + tail;
  }
  return parts.join(",");
}
