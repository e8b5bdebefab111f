/**
 * KV records of the order pipeline besides the orders themselves: the permanent dedupe record of every detected
 * transfer, the due index the sweep reads, held transfers (uAssets sent with no burn configuration), dust aggregates,
 * watcher cursors with the recent block hashes behind them, and leases. Key layout lives here and nowhere else.
 */
import type { BlockRef } from "../chains/adapter.ts";
import { type ChainSymbol, REORG_WINDOW_BLOCKS, type UAsset } from "../chains/catalog.ts";

// ---- detected transfers: (chain, txHash, index) is seen once, for ever (docs/architecture.md invariant 1) ----

export type SeenTransfer = { kind: "order"; orderId: string } | { kind: "held" };

/**
 * `revision` > 0: the same transfer identity re-read after a reorg re-executed its transaction with other facts
 * (a burn re-checked at confirmation); each revision is recorded once.
 */
export const seenKey = (chain: ChainSymbol, txHash: string, index: number, revision = 0): Deno.KvKey =>
  revision === 0 ? ["transfer_seen", chain, txHash, index] : ["transfer_seen", chain, txHash, index, revision];

// ---- the due index: when the sweep should look at an order next ----

const duePrefix: Deno.KvKey = ["pipeline_due"];
export const dueKey = (dueAtMs: number, orderId: string): Deno.KvKey => ["pipeline_due", dueAtMs, orderId];

/** Order ids whose due time has come, oldest first. */
export async function listDue(
  kv: Deno.Kv,
  nowMs: number,
  limit: number,
): Promise<{ orderId: string; dueAt: number }[]> {
  const out: { orderId: string; dueAt: number }[] = [];
  for await (
    const e of kv.list<string>({ prefix: duePrefix, end: [...duePrefix, nowMs + 1] }, { limit, batchSize: limit })
  ) {
    out.push({ orderId: e.key[2] as string, dueAt: e.key[1] as number });
  }
  return out;
}

export async function countDue(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: duePrefix })) n++;
  return n;
}

// ---- held transfers (spec 4.4: never paid automatically) ----

export interface HeldTransfer {
  chain: ChainSymbol;
  txHash: string;
  index: number;
  from: string;
  /** A uAsset sent to the transfer address, or "native": a deposit held because its destination chain is disabled. */
  asset: UAsset | "native";
  /** The deposit address, for a held native deposit. */
  to?: string;
  amount: string;
  blockNumber: number;
  detectedAt: string;
  reason: string;
  /** Set when the transfer was re-read with other facts after a reorg (seenKey's revision). */
  revision?: number;
}

export const heldKey = (chain: ChainSymbol, txHash: string, index: number, revision = 0): Deno.KvKey =>
  revision === 0 ? ["held_transfer", chain, txHash, index] : ["held_transfer", chain, txHash, index, revision];

/** Every held transfer (reconciliation, metrics). Operator listings page with `listHeldNewest` instead. */
export async function listHeld(kv: Deno.Kv): Promise<HeldTransfer[]> {
  const out: HeldTransfer[] = [];
  for await (const e of kv.list<HeldTransfer>({ prefix: ["held_transfer"] })) out.push(e.value);
  return out;
}

/**
 * Operator listings of held records show at most this many, newest first (`--limit`, up to the max), with the total
 * from a counter (docs/partners.md, "Dust and held records").
 */
export const HELD_PAGE_DEFAULT = 100;
export const HELD_PAGE_MAX = 1000;

/**
 * Held transfers by detection time (a copy of the record: it never changes once written) and their count, written in
 * the same atomic as the record, so a listing reads its page and one counter, never every record.
 */
const heldByTimeKey = (h: HeldTransfer): Deno.KvKey => [
  "held_transfer_by_time",
  h.detectedAt,
  h.chain,
  h.txHash,
  h.index,
  h.revision ?? 0,
];
const HELD_COUNT_KEY: Deno.KvKey = ["held_transfer_count"];
const HELD_INDEX_READY_KEY: Deno.KvKey = ["held_transfer_index_ready"];
const U64_MINUS_ONE = 2n ** 64n - 1n;

/** Adds a held transfer with its time index entry and count (the caller guards it with its dedupe key). */
export function addHeldTransfer(atomic: Deno.AtomicOperation, held: HeldTransfer): Deno.AtomicOperation {
  return atomic
    .set(heldKey(held.chain, held.txHash, held.index, held.revision), held)
    .set(heldByTimeKey(held), held)
    .sum(HELD_COUNT_KEY, 1n);
}

/** Deletes a held transfer read as `entry` (checked), its time index entry and its count. */
export function deleteHeldTransfer(
  atomic: Deno.AtomicOperation,
  entry: Deno.KvEntry<HeldTransfer>,
): Deno.AtomicOperation {
  return atomic.check(entry).delete(entry.key).delete(heldByTimeKey(entry.value)).sum(HELD_COUNT_KEY, U64_MINUS_ONE);
}

/** How many held transfers there are: one read. */
export async function countHeld(kv: Deno.Kv): Promise<number> {
  const n = await kv.get<Deno.KvU64>(HELD_COUNT_KEY);
  return n.value === null ? 0 : Number(n.value.value);
}

/** The newest `limit` held transfers, newest first. */
export async function listHeldNewest(kv: Deno.Kv, limit: number): Promise<HeldTransfer[]> {
  const out: HeldTransfer[] = [];
  const opts = { reverse: true, limit, batchSize: Math.min(limit, 500) };
  for await (const e of kv.list<HeldTransfer>({ prefix: ["held_transfer_by_time"] }, opts)) out.push(e.value);
  return out;
}

/**
 * Indexes and counts held transfers stored before the index existed, once per KV (kv/open.ts runs it at every open;
 * once it found any, later opens make one read; a KV without any makes one read and one empty list). Each record is added in its own atomic checked against the record and the index
 * entry's absence, so two processes doing it at once, or a release racing it, count every record once.
 */
export async function indexHeldTransfers(kv: Deno.Kv): Promise<void> {
  if ((await kv.get(HELD_INDEX_READY_KEY)).value !== null) return;
  let found = false;
  for await (const e of kv.list<HeldTransfer>({ prefix: ["held_transfer"] })) {
    found = true;
    const index = heldByTimeKey(e.value);
    await kv.atomic().check(e, { key: index, versionstamp: null }).set(index, e.value).sum(HELD_COUNT_KEY, 1n)
      .commit();
  }
  // A KV with no held transfer is left unwritten (opening a new or empty KV writes nothing); the ones added later are
  // indexed as they are written, so the next open finds them indexed and only sets the mark.
  if (found) await kv.set(HELD_INDEX_READY_KEY, true);
}

// ---- watcher cursors ----

/**
 * Where a watcher is: the last block it scanned (a real block, so a reorg is seen by its hash), and, when the reader
 * answered that the slots after it hold no block (a run of skipped Solana slots longer than one scan range, proven
 * at finality), the last of those slots. The next scan starts after `emptyThrough`.
 */
export interface Cursor {
  number: number;
  hash: string;
  emptyThrough?: number;
}

/** The last block number a watcher has read past: its block, or the end of the empty run after it. */
export function scannedThrough(cursor: Cursor): number {
  return Math.max(cursor.number, cursor.emptyThrough ?? cursor.number);
}

export const cursorKey = (chain: ChainSymbol): Deno.KvKey => ["watch_cursor", chain];

/**
 * Hashes of the blocks a watcher scanned lately, oldest first, written in the same commit as its cursor: after a reorg
 * the newest one still canonical is the common ancestor to rescan from. Where scans skip blocks (EVM log scans) they
 * are sparse, and the newest match is still a correct restart point.
 */
export type RecentBlocks = BlockRef[];

export const recentBlocksKey = (chain: ChainSymbol): Deno.KvKey => ["watch_recent_blocks", chain];

/** `recent` plus `scanned`, without blocks above `cursor` (a rewind forgets them) or REORG_WINDOW_BLOCKS below it. */
export function rememberBlocks(recent: RecentBlocks, scanned: BlockRef[], cursor: BlockRef): RecentBlocks {
  const byNumber = new Map<number, string>();
  for (const b of [...recent, ...scanned, cursor]) byNumber.set(b.number, b.hash);
  return [...byNumber.entries()]
    .filter(([n]) => n <= cursor.number && n > cursor.number - REORG_WINDOW_BLOCKS)
    .sort(([a], [b]) => a - b)
    .map(([number, hash]) => ({ number, hash }));
}

/**
 * An operator's instruction to a watcher halted by a reorg deeper than its memory (`deno task admin watch resume`):
 * forget what it remembers and rescan from `fromBlock`, a block the operator checked is below the fork. Rescanning
 * blocks already seen is harmless: every transfer's dedupe key is permanent.
 */
export interface WatchResume {
  fromBlock: number;
  by: string;
  at: string;
}

export const watchResumeKey = (chain: ChainSymbol): Deno.KvKey => ["watch_resume", chain];

// ---- dust: sub-minimum transfers from outsiders, counted per (chain, sender, asset) in one record ----

/** One block's part of an aggregate, kept while a reorg could still replace that block. */
export interface DustBlock {
  number: number;
  hash: string;
  count: number;
  sum: string;
}

export interface DustAggregate {
  chain: ChainSymbol;
  sender: string;
  /** A uAsset symbol, or a native token symbol for deposits. */
  asset: string;
  reason: string;
  count: number;
  /** Smallest units (wei for uAssets), as a decimal string. */
  sum: string;
  firstSeenAt: string;
  lastSeenAt: string;
  /** Contributions of the last REORG_WINDOW_BLOCKS blocks, oldest first: a rescan of one is a no-op. */
  blocks: DustBlock[];
  /** Blocks at or below this number fell out of `blocks`: they are counted for good and never counted again. */
  settledThrough: number;
}

const dustKey = (chain: ChainSymbol, sender: string, asset: string): Deno.KvKey => ["dust", chain, sender, asset];

export interface DustContribution {
  chain: ChainSymbol;
  sender: string;
  asset: string;
  reason: string;
  block: BlockRef;
  count: number;
  sum: bigint;
  now: Date;
}

/**
 * Adds one block's dust from one sender in one asset to its aggregate. Exactly once without a key per transfer: a
 * block already counted under the same hash is a no-op, one counted under another hash (reorganised) has its old
 * contribution replaced. Returns whether anything changed.
 */
export async function addDust(kv: Deno.Kv, c: DustContribution): Promise<boolean> {
  const key = dustKey(c.chain, c.sender, c.asset);
  for (;;) {
    const entry = await kv.get<DustAggregate>(key);
    const at = c.now.toISOString();
    const agg: DustAggregate = entry.value ?? {
      chain: c.chain,
      sender: c.sender,
      asset: c.asset,
      reason: c.reason,
      count: 0,
      sum: "0",
      firstSeenAt: at,
      lastSeenAt: at,
      blocks: [],
      settledThrough: -1,
    };
    if (c.block.number <= agg.settledThrough) return false;
    const old = agg.blocks.find((b) => b.number === c.block.number);
    if (old?.hash === c.block.hash) return false;
    const count = agg.count - (old?.count ?? 0) + c.count;
    const sum = BigInt(agg.sum) - BigInt(old?.sum ?? "0") + c.sum;
    const blocks = [
      ...agg.blocks.filter((b) => b.number !== c.block.number),
      { number: c.block.number, hash: c.block.hash, count: c.count, sum: c.sum.toString() },
    ].sort((a, b) => a.number - b.number);
    const newest = blocks[blocks.length - 1].number;
    const kept = blocks.filter((b) => b.number > newest - REORG_WINDOW_BLOCKS);
    const settledThrough = Math.max(
      agg.settledThrough,
      ...blocks.filter((b) => !kept.includes(b)).map((b) => b.number),
    );
    const next: DustAggregate = {
      ...agg,
      reason: c.reason,
      count,
      sum: sum.toString(),
      lastSeenAt: at,
      blocks: kept,
      settledThrough,
    };
    if ((await kv.atomic().check(entry).set(key, next).commit()).ok) return true;
  }
}

/**
 * A reorg replaced the blocks above `ancestor` on `chain`: their contributions leave every aggregate, and the rescan
 * from the ancestor adds back what the canonical blocks hold. Idempotent, so a crash before the rescan is harmless.
 */
export async function dropDustAbove(kv: Deno.Kv, chain: ChainSymbol, ancestor: number): Promise<void> {
  for await (const listed of kv.list<DustAggregate>({ prefix: ["dust", chain] })) {
    for (let entry: Deno.KvEntryMaybe<DustAggregate> = listed; entry.value;) {
      const agg: DustAggregate = entry.value;
      const dropped = agg.blocks.filter((b) => b.number > ancestor);
      if (dropped.length === 0) break;
      const next: DustAggregate = {
        ...agg,
        count: agg.count - dropped.reduce((n, b) => n + b.count, 0),
        sum: (BigInt(agg.sum) - dropped.reduce((n, b) => n + BigInt(b.sum), 0n)).toString(),
        blocks: agg.blocks.filter((b) => b.number <= ancestor),
      };
      if ((await kv.atomic().check(entry).set(entry.key, next).commit()).ok) break;
      entry = await kv.get<DustAggregate>(entry.key);
    }
  }
}

export async function listDust(kv: Deno.Kv): Promise<DustAggregate[]> {
  const out: DustAggregate[] = [];
  for await (const e of kv.list<DustAggregate>({ prefix: ["dust"] })) out.push(e.value);
  return out;
}

// ---- leases: one holder per job across processes sharing a KV ----

export interface Lease {
  owner: string;
  expiresAt: number;
}

const leaseKey = (job: string): Deno.KvKey => ["lease", job];

/** A lease entry as returned by `acquireLease`; `renewed` when this call committed it (taken or renewed). */
export type LeaseEntry = Deno.KvEntry<Lease> & { renewed?: boolean };

/**
 * Takes or renews the lease on `job` for `ttlMs`. Returns the lease entry (to check in later commits, so a holder
 * that lost its lease cannot write) or null when another live holder has it. `expireIn` is not used: expired keys
 * stay visible for a while, so expiry is decided by `expiresAt`.
 *
 * A holder's lease is rewritten only when less than half of `ttlMs` is left, or when more than `ttlMs` is left (a
 * long lease taken while idle is shortened once work arrives, so a takeover after a crash is quick again): an idle
 * holder commits once per half lease, not once per tick. `alsoOnWrite` adds operations to that commit when there is
 * one (a watcher's batched cursor rides on the renewal: one commit instead of two).
 */
export async function acquireLease(
  kv: Deno.Kv,
  job: string,
  owner: string,
  ttlMs: number,
  nowMs = Date.now(),
  alsoOnWrite?: (op: Deno.AtomicOperation) => void,
): Promise<LeaseEntry | null> {
  const key = leaseKey(job);
  const current = await kv.get<Lease>(key);
  if (current.value && current.value.owner !== owner && current.value.expiresAt > nowMs) return null;
  const left = current.value?.owner === owner ? current.value.expiresAt - nowMs : 0;
  if (left > ttlMs / 2 && left <= ttlMs) return current as Deno.KvEntry<Lease>;
  const lease: Lease = { owner, expiresAt: nowMs + ttlMs };
  const op = kv.atomic().check(current).set(key, lease);
  alsoOnWrite?.(op);
  const res = await op.commit();
  if (!res.ok) return null;
  return { key, value: lease, versionstamp: res.versionstamp, renewed: true };
}

/** The lease record of `job` as stored (null value: never taken or pruned). */
export function readLease(kv: Deno.Kv, job: string): Promise<Deno.KvEntryMaybe<Lease>> {
  return kv.get<Lease>(leaseKey(job));
}

/**
 * Gives up every lease `owner` holds (a graceful stop), each checked against the version read: another process
 * takes those jobs on its next tick instead of waiting for them to expire. Returns the jobs released.
 */
export async function releaseLeases(kv: Deno.Kv, owner: string): Promise<string[]> {
  const released: string[] = [];
  for (const { job, lease, entry } of await listLeases(kv)) {
    if (lease.owner !== owner) continue;
    if ((await kv.atomic().check(entry).delete(entry.key).commit()).ok) released.push(job);
  }
  return released;
}

/** Every lease record, for operators and the runtime's checks. */
export async function listLeases(kv: Deno.Kv): Promise<{ job: string; lease: Lease; entry: Deno.KvEntry<Lease> }[]> {
  const out: { job: string; lease: Lease; entry: Deno.KvEntry<Lease> }[] = [];
  for await (const e of kv.list<Lease>({ prefix: ["lease"] })) {
    out.push({ job: String(e.key[1]), lease: e.value, entry: e });
  }
  return out;
}

/**
 * Deletes lease records expired for longer than `olderThanMs` (a process that died holding them, a chain no longer
 * enabled), at most `limit`, each checked against the version read so a lease taken meanwhile stays. Returns how many.
 */
export async function pruneExpiredLeases(kv: Deno.Kv, nowMs: number, olderThanMs: number, limit = 100) {
  const atomic = kv.atomic();
  let n = 0;
  for (const { entry, lease } of await listLeases(kv)) {
    if (n >= limit) break;
    if (lease.expiresAt + olderThanMs > nowMs) continue;
    atomic.check(entry).delete(entry.key);
    n++;
  }
  if (n > 0 && !(await atomic.commit()).ok) return 0;
  return n;
}

// ---- per-order schedule pointer: which due key is the order's, so a reschedule can move it ----

export const dueAtKey = (orderId: string): Deno.KvKey => ["pipeline_due_at", orderId];

/** Moves an order's due entry (from `previous`, if any) to `nextAtMs`, or removes it when `nextAtMs` is null. */
export function addReschedule(
  atomic: Deno.AtomicOperation,
  orderId: string,
  previous: Deno.KvEntryMaybe<number>,
  nextAtMs: number | null,
): Deno.AtomicOperation {
  atomic.check(previous);
  if (previous.value !== null) atomic.delete(dueKey(previous.value, orderId));
  if (nextAtMs === null) return atomic.delete(dueAtKey(orderId));
  return atomic.set(dueKey(nextAtMs, orderId), orderId).set(dueAtKey(orderId), nextAtMs);
}

// ---- deposits by block, on depth-final chains: what a reorg past finality touched ----

/**
 * Written with each order of a depth-final chain (doge, zec) in the watcher's recording atomic: which order a
 * transfer in block `blockNumber` became, so a reorg replacing blocks above an ancestor finds the orders it touched
 * without listing every order. Kept while a reorg the watcher can follow may still replace the block
 * (REORG_WINDOW_BLOCKS), then pruned.
 */
export const depositBlockKey = (chain: ChainSymbol, blockNumber: number, txHash: string, index: number): Deno.KvKey => [
  "deposit_by_block",
  chain,
  blockNumber,
  txHash,
  index,
];

/** The order ids of transfers recorded in blocks above `ancestor` on `chain`. */
export async function ordersAbove(kv: Deno.Kv, chain: ChainSymbol, ancestor: number): Promise<string[]> {
  const out: string[] = [];
  const prefix: Deno.KvKey = ["deposit_by_block", chain];
  for await (
    const e of kv.list<string>({ start: [...prefix, ancestor + 1], end: [...prefix, Number.MAX_SAFE_INTEGER] })
  ) {
    out.push(e.value);
  }
  return out;
}

/** Removes (up to `limit`) index entries of blocks below `below`: no followable reorg can replace those any more. */
export async function pruneDepositBlocks(kv: Deno.Kv, chain: ChainSymbol, below: number, limit = 100): Promise<void> {
  if (below <= 0) return;
  const prefix: Deno.KvKey = ["deposit_by_block", chain];
  const atomic = kv.atomic();
  let n = 0;
  for await (const e of kv.list({ start: prefix, end: [...prefix, below] }, { limit })) {
    atomic.delete(e.key);
    n++;
  }
  if (n > 0) await atomic.commit();
}

// ---- order holds: an order an operator must look at before it moves value ----

/**
 * Set on an order before it moved value (processing: confirmed, nothing signed yet) that an operator must look at:
 * a reorg past finality touched it, or it is above a cap (actors/controls.ts). The order actor does not step it (no
 * mint, no payout) until an operator releases it (`deno task admin held release order:<id>`, or `order release`) or
 * cancels the order.
 */
export interface OrderHold {
  /** Absent on holds stored before kinds existed: those are all reorg holds (`holdKind`). */
  kind?: "reorg" | "cap";
  /** A cap hold: the caps the order was above when held; releasing it approves the order over these. */
  caps?: ("perOrder" | "perDay")[];
  reason: string;
  at: string;
  /** The alert that held it (kv/alerts.ts, kind and subject). */
  alert: { kind: string; subject: string };
}

export const orderHoldKey = (orderId: string): Deno.KvKey => ["order_hold", orderId];

/** What held the order: a hold stored without a kind is a reorg hold. */
export function holdKind(hold: OrderHold): "reorg" | "cap" {
  return hold.kind ?? "reorg";
}

export async function listOrderHolds(kv: Deno.Kv): Promise<{ orderId: string; hold: OrderHold }[]> {
  const out: { orderId: string; hold: OrderHold }[] = [];
  for await (const e of kv.list<OrderHold>({ prefix: ["order_hold"] })) {
    out.push({ orderId: String(e.key[1]), hold: e.value });
  }
  return out;
}
