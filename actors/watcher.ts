/**
 * Chain watchers: scan blocks from a stored cursor and turn every transfer that concerns us into a record, in one
 * atomic with its permanent dedupe key. Native chains: a transfer to one of our deposit addresses becomes a mint
 * order. EVM chains: a uAsset transfer to the transfer address becomes a burn order, or a held transfer when the
 * sender has no burn configuration for that uAsset's chain. A transfer whose other chain is disabled in this process
 * (config/chain_mode.ts) is held too, never processed against a simulator nor dropped. Dust (a deposit below the chain's dust limit, or a
 * sub-minimum uAsset transfer from a sender with no burn configuration) is only counted, per (chain, sender, asset).
 * After a reorg the watcher rescans from the common ancestor, found among the block hashes it remembers. Recipients
 * are matched against this process's in-memory set of our deposit addresses (kv/address_index.ts), refreshed once per
 * tick: a block costs no KV read unless something in it is ours.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "@scure/base";
import {
  type BlockRef,
  type ChainReader,
  type ObservedTransfer,
  type ScannedBlock,
  SKIPPED,
  TransientChainError,
} from "../chains/adapter.ts";
import {
  chainFamily,
  type ChainSymbol,
  type EvmChain,
  isEvmChain,
  isNativeChain,
  NATIVE,
  type NativeChain,
  nativeChainOfUAsset,
  REORG_WINDOW_BLOCKS,
  type UAsset,
} from "../chains/catalog.ts";
import { type DepositAddressSet, depositAddressSet } from "../kv/address_index.ts";
import { clearAlert, raiseAlert } from "../kv/alerts.ts";
import { getBurnConfig } from "../kv/burn_configs.ts";
import { addOrderCreate, getOrder } from "../kv/orders.ts";
import { addAnnouncedConfirmations } from "../kv/order_confirmations.ts";
import { confirmationRule } from "./confirmation_events.ts";
import { newOrderId, type Order, pendingConfirmations, type SourceTransfer, validOrder } from "../model/order.ts";
import { holdCoinsAbove } from "../kv/treasury.ts";
import {
  acquireLease,
  addDust,
  addHeldTransfer,
  addReschedule,
  type Cursor,
  cursorKey,
  depositBlockKey,
  dropDustAbove,
  dueAtKey,
  type HeldTransfer,
  type LeaseEntry,
  type OrderHold,
  orderHoldKey,
  ordersAbove,
  pruneDepositBlocks,
  readLease,
  type RecentBlocks,
  recentBlocksKey,
  rememberBlocks,
  scannedThrough,
  seenKey,
  type SeenTransfer,
  type WatchResume,
  watchResumeKey,
} from "../kv/pipeline.ts";
import type { PipelineContext } from "./context.ts";
import { WAKE, type WakeMessage } from "./wake.ts";
import { noteWatcherLag } from "./watcher_lag.ts";

/** Blocks scanned per tick at most; a watcher far behind catches up over several ticks. */
const MAX_BLOCKS_PER_TICK = 200;

/**
 * Bytes of answers one tick may read, for readers that bound a scan by bytes (chains/adapter.ts `ScanOptions`): about
 * 20 mainnet Solana blocks. With the cursor stored after every tick that ends behind the tip, this is what a crash
 * mid-catch-up makes the watcher read again (docs/scan-budget.md).
 */
export const SCAN_BYTES_PER_TICK = 64 * 1024 * 1024;

export interface WatchResult {
  scannedTo: number | null;
  recorded: number;
  /** Blocks between the tip this tick read and where it scanned to, when it scanned (0: caught up). */
  lag?: number;
  /** The chain reorganised deeper than the remembered blocks: the watcher stopped it and raised an alert. */
  halted?: boolean;
  /** Bytes of answers the scan read, from readers that count them (chains/adapter.ts `ScanOptions.meter`). */
  bytes?: number;
}

/** The deposit id a mint carries on chain, and the identity of any detected transfer: sha256(chain:tx:index). */
export function depositIdOf(chain: ChainSymbol, txHash: string, index: number): string {
  return "0x" + hex.encode(sha256(new TextEncoder().encode(`${chain}:${txHash}:${index}`)));
}

export interface WatchOptions {
  /**
   * Batched cursor writes (the runtime and the cron ticks): a tick that recorded nothing keeps its cursor in this
   * process's memory and stores it at most once per `batchCursorMs`, on the lease renewal's own commit when there is
   * one; a tick that recorded something, or followed a reorg, stores it at once. A crash loses at most that much
   * scanning, and the rescan is a no-op (every transfer's dedupe key is permanent). With batching, a tick that finds
   * nothing new and nothing to store takes no lease and commits nothing. Unset or 0: stored on every tick.
   */
  batchCursorMs?: number;
  /** Bytes this step may read at most (what is left of a cron run's byte budget); the step's own bound is lower. */
  maxBytes?: number;
  /** How long the watcher may stay behind its threshold before `watcher_lagging` is raised (actors/watcher_lag.ts). */
  lagAlertMs?: number;
  /** Writes to add to a batched lease renewal (the process's watchers' looks, actors/watcher_looks.ts `rideAlong`). */
  rideOnLease?: () => { add(op: Deno.AtomicOperation): void; committed(): void } | undefined;
}

/** A cursor this process scanned to, and whether it is stored: `base` is the stored entry's version it matches. */
interface ScanMemo {
  cursor: Cursor;
  recent: RecentBlocks;
  base: string;
  savedAt: number;
  dirty: boolean;
}

const memos = new WeakMap<Deno.Kv, Map<string, ScanMemo>>();

function memoMap(kv: Deno.Kv): Map<string, ScanMemo> {
  let m = memos.get(kv);
  if (!m) memos.set(kv, m = new Map());
  return m;
}

/**
 * One tick of the watcher of `chain`, if this process holds (or takes) its lease; then, when it scanned or found
 * itself at the tip, its lag is weighed for the `watcher_lagging` alert (actors/watcher_lag.ts).
 */
export async function watchOnce(
  ctx: PipelineContext,
  chain: ChainSymbol,
  owner: string,
  leaseMs: number,
  opts: WatchOptions = {},
): Promise<WatchResult> {
  const r = await watchStep(ctx, chain, owner, leaseMs, opts);
  if (r.scannedTo !== null && !r.halted) await noteWatcherLag(ctx, chain, r.lag ?? 0, opts.lagAlertMs);
  return r;
}

async function watchStep(
  ctx: PipelineContext,
  chain: ChainSymbol,
  owner: string,
  leaseMs: number,
  opts: WatchOptions,
): Promise<WatchResult> {
  const batchMs = opts.batchCursorMs ?? 0;
  const nowMs = ctx.now().getTime();
  const job = `watch:${chain}`;
  const memoKey = `${owner}:${chain}`;
  const reader = ctx.chains.reader(chain);
  let lease: LeaseEntry | null = null;
  if (batchMs === 0) {
    lease = await acquireLease(ctx.kv, job, owner, leaseMs, nowMs);
    if (!lease) return { scannedTo: null, recorded: 0 };
  }
  const [stored, storedRecent, resume] = await ctx.kv.getMany<[Cursor, RecentBlocks, WatchResume]>([
    cursorKey(chain),
    recentBlocksKey(chain),
    watchResumeKey(chain),
  ]);
  if (resume.value) {
    memoMap(ctx.kv).delete(memoKey);
    lease ??= await acquireLease(ctx.kv, job, owner, leaseMs, nowMs);
    if (!lease) return { scannedTo: null, recorded: 0 };
    return await resumeFrom(ctx, chain, lease, resume as Deno.KvEntry<WatchResume>);
  }
  // What this process scanned past the stored cursor, unless someone else stored a cursor since.
  let memo = batchMs > 0 ? memoMap(ctx.kv).get(memoKey) : undefined;
  if (memo && memo.base !== stored.versionstamp) memo = undefined;
  let cursor = memo?.cursor ?? stored.value ?? await firstCursor(ctx, chain);
  // A cursor stored before hashes were remembered: its own block is the only one known.
  let recent = memo?.recent ?? storedRecent.value ?? [cursor];
  const unstored = stored.value === null || storedRecent.value === null;
  let flushDue = memo !== undefined && memo.dirty && nowMs - memo.savedAt >= batchMs;
  const reorged = cursor.number > 0 && (await reader.blockHash(cursor.number)) !== cursor.hash;
  let tip: BlockRef | null = null;
  if (batchMs > 0) {
    // Read-only first: nothing new and nothing to store costs no lease and no commit.
    if (!reorged && !unstored && !flushDue) {
      tip = await reader.tip();
      if (tip.number <= scannedThrough(cursor)) return { scannedTo: scannedThrough(cursor), recorded: 0 };
      // A reader polling per address waits between its polls (chains/sol/poll.ts): no lease for a tick that waits.
      const from = scannedThrough(cursor) + 1;
      const size = isEvmChain(chain) ? 0 : depositAddressSet(ctx.kv, chain).size;
      if (reader.deferScan?.(from, Math.min(tip.number, from - 1 + MAX_BLOCKS_PER_TICK), size)) {
        return { scannedTo: scannedThrough(cursor), recorded: 0, lag: tip.number - scannedThrough(cursor) };
      }
    }
    // A batched cursor rides on the lease's renewal commit when there is one.
    const carried = memo?.dirty ? memo : undefined;
    const ride = opts.rideOnLease?.();
    lease = await acquireLease(
      ctx.kv,
      job,
      owner,
      leaseMs,
      nowMs,
      carried || ride
        ? (op) => {
          if (carried) op.set(cursorKey(chain), carried.cursor).set(recentBlocksKey(chain), carried.recent);
          ride?.add(op);
        }
        : undefined,
    );
    if (!lease) return { scannedTo: null, recorded: 0 };
    if (lease.renewed) ride?.committed();
    if (carried && lease.renewed) {
      memo = { ...carried, base: lease.versionstamp, savedAt: nowMs, dirty: false };
      memoMap(ctx.kv).set(memoKey, memo);
      flushDue = false;
    }
  }
  const held = lease!;
  const store = async (to: Cursor, blocks: RecentBlocks, now: boolean) => {
    if (batchMs > 0 && !now && memo && nowMs - memo.savedAt < batchMs) {
      memo = {
        ...memo,
        cursor: to,
        recent: blocks,
        dirty: memo.dirty || scannedThrough(to) !== scannedThrough(memo.cursor),
      };
      memoMap(ctx.kv).set(memoKey, memo);
      return;
    }
    const versionstamp = await saveCursor(ctx, chain, held, to, blocks);
    if (batchMs > 0 && versionstamp) {
      memoMap(ctx.kv).set(memoKey, { cursor: to, recent: blocks, base: versionstamp, savedAt: nowMs, dirty: false });
    } else memoMap(ctx.kv).delete(memoKey);
  };
  if (batchMs > 0 && !memo && !unstored) {
    // First tick of this process on the chain: the stored cursor is the base.
    memo = { cursor, recent, base: stored.versionstamp!, savedAt: nowMs, dirty: false };
  }
  if (reorged) {
    const ancestor = await commonAncestor(ctx, chain, recent);
    if (!ancestor) {
      const oldest = recent[0]?.number ?? cursor.number;
      const message = `block ${cursor.number} changed and none of the ${recent.length} remembered blocks back to ` +
        `${oldest} is canonical: a reorg deeper than ${REORG_WINDOW_BLOCKS} blocks. The watcher stopped ${chain} ` +
        `and records nothing until an operator resolves it (deno task admin watch resume ${chain} --from <block>)`;
      ctx.log(`watcher ${chain}: ${message}`);
      await raiseAlert(ctx.kv, { kind: "deep_reorg", subject: chain, chain, message, now: ctx.now() });
      return { scannedTo: null, recorded: 0, halted: true } satisfies WatchResult;
    }
    ctx.log(`watcher ${chain}: block ${cursor.number} changed (reorg); rescanning from ${ancestor.number}`);
    await dropDustAbove(ctx.kv, chain, ancestor.number);
    // Before the cursor moves: a crash in between finds the same reorg again, and this is idempotent.
    if (isDepthFinal(chain)) await holdWhatReorgTouched(ctx, chain, cursor, ancestor);
    cursor = ancestor;
    recent = rememberBlocks(recent, [], cursor);
  }
  tip ??= await reader.tip();
  const from = scannedThrough(cursor) + 1;
  if (tip.number < from) {
    const moved = stored.value === null || scannedThrough(stored.value) !== scannedThrough(cursor);
    if (unstored || reorged || (moved && (batchMs === 0 || flushDue))) {
      await store(cursor, recent, true);
    }
    return { scannedTo: scannedThrough(cursor), recorded: 0 };
  }
  const to = Math.min(tip.number, from - 1 + MAX_BLOCKS_PER_TICK);
  const addresses = isEvmChain(chain) ? null : depositAddressSet(ctx.kv, chain);
  // Refreshed after the tip was read and before the scan: every address a deposit in a final block at or below that tip
  // pays was allocated before the deposit was made, so before the tip was read. Readers of final blocks match with it
  // as they read (chains/adapter.ts `ScanOptions.ours`) and keep nothing else of a block.
  if (addresses) await refreshAddresses(ctx, chain, addresses);
  // A reader polling per address between its polls reads this range on a later tick (chains/sol/poll.ts).
  if (!unstored && !reorged && reader.deferScan?.(from, to, addresses?.size ?? 0)) {
    return { scannedTo: scannedThrough(cursor), recorded: 0, lag: tip.number - scannedThrough(cursor) };
  }
  const meter = { bytes: 0 };
  const blocks = await reader.scan(from, to, {
    maxBytes: Math.max(1, Math.min(SCAN_BYTES_PER_TICK, opts.maxBytes ?? Infinity)),
    meter,
    ...(addresses ? { ours: (address: string) => addresses.get(address) !== undefined, addresses } : {}),
  });
  // Again after the blocks are read: a reader that keeps every transfer (blocks a reorg may still replace) is matched
  // below against a set at least as new as the blocks, since the address of any deposit in them was allocated before
  // they were read. One KV read when nothing is new.
  if (addresses) await refreshAddresses(ctx, chain, addresses);
  let recorded = 0;
  // A range with no block at all (a run of skipped Solana slots longer than one range, proven empty at finality by the
  // reader) is passed: the cursor keeps its last real block and notes the run, so the next tick asks the next range.
  let last: Cursor = blocks.length === 0 ? { number: cursor.number, hash: cursor.hash, emptyThrough: to } : cursor;
  const scanned: BlockRef[] = [];
  for (const block of blocks) {
    // Adapters may leave out blocks without relevant transfers (EVM log scans) and skipped slots have none, but the
    // range's last block is returned when there is one. Where blocks are adjacent they must link: otherwise the chain
    // moved under us and the next tick sees it.
    if (block.number === last.number + 1 && block.parentHash !== last.hash) break;
    try {
      recorded += await recordBlock(ctx, chain, block);
    } catch (err) {
      // A read this block needs failed (a UTXO deposit's sender): the cursor stops before it, the next tick retries
      // it, and what of it was recorded already is deduplicated then.
      if (!(err instanceof TransientChainError)) throw err;
      ctx.log(`watcher ${chain}: block ${block.number} not recorded yet (${err.message}); retrying next tick`);
      break;
    }
    last = { number: block.number, hash: block.hash };
    scanned.push(last);
  }
  // The cursor moves only after every record of those blocks is committed: a crash in between rescans them,
  // and the dedupe keys make the rescan a no-op. Batched: stored now only when something was recorded (or a reorg
  // was followed, or the cursor was never stored, or the tick ended behind the tip: a catch-up stores every bounded
  // step, so a crash in it reads one step again), else at most once per batch period.
  const behind = scannedThrough(last) < tip.number;
  await store(last, rememberBlocks(recent, scanned, last), recorded > 0 || reorged || unstored || behind);
  const lag = Math.max(0, tip.number - scannedThrough(last));
  return { scannedTo: scannedThrough(last), recorded, lag, bytes: meter.bytes };
}

async function refreshAddresses(ctx: PipelineContext, chain: ChainSymbol, addresses: DepositAddressSet) {
  if ((await addresses.refresh()) === "inconsistent") {
    ctx.log(`watcher ${chain}: the deposit address log missed entries its counter promised; reloaded them all`);
  }
}

/**
 * Stores every cursor `owner` scanned to but kept in memory (batched), where it still holds the chain's lease; for a
 * graceful stop. Commits nothing when nothing is unstored. Returns the chains stored.
 */
export async function flushWatchCursors(ctx: PipelineContext, owner: string): Promise<ChainSymbol[]> {
  const stored: ChainSymbol[] = [];
  const map = memoMap(ctx.kv);
  for (const [key, memo] of map) {
    if (!key.startsWith(`${owner}:`) || !memo.dirty) continue;
    const chain = key.slice(owner.length + 1) as ChainSymbol;
    const [lease, cursor] = await Promise.all([
      readLease(ctx.kv, `watch:${chain}`),
      ctx.kv.get<Cursor>(cursorKey(chain)),
    ]);
    if (lease.value?.owner !== owner || cursor.versionstamp !== memo.base) continue;
    const res = await ctx.kv.atomic().check(lease, cursor).set(cursorKey(chain), memo.cursor)
      .set(recentBlocksKey(chain), memo.recent).commit();
    if (res.ok) {
      map.set(key, { ...memo, base: res.versionstamp, dirty: false });
      stored.push(chain);
    }
  }
  return stored;
}

/**
 * Carries out an operator's resume: the cursor moves to the block the operator named (its hash read now), the memory
 * of recent blocks starts over from it, dust counted above it is taken out, the instruction is consumed in the same
 * commit, and the deep-reorg alert is cleared. The next tick scans on from there.
 */
async function resumeFrom(
  ctx: PipelineContext,
  chain: ChainSymbol,
  lease: Deno.KvEntry<unknown>,
  resume: Deno.KvEntry<WatchResume>,
): Promise<WatchResult> {
  const { fromBlock, by } = resume.value;
  const cursor = await blockAtOrBelow(ctx.chains.reader(chain), fromBlock);
  if (cursor === null) {
    ctx.log(`watcher ${chain}: resume from block ${fromBlock} (by ${by}) waits: the node has no such block yet`);
    return { scannedTo: null, recorded: 0, halted: true };
  }
  await dropDustAbove(ctx.kv, chain, cursor.number);
  const done = await ctx.kv.atomic().check(lease).check(resume)
    .set(cursorKey(chain), cursor)
    .set(recentBlocksKey(chain), [cursor])
    .delete(watchResumeKey(chain))
    .commit();
  if (!done.ok) return { scannedTo: null, recorded: 0 };
  await clearAlert(ctx.kv, "deep_reorg", chain);
  ctx.log(`watcher ${chain}: resumed by ${by} from block ${cursor.number}; rescanning from there`);
  return { scannedTo: cursor.number, recorded: 0 };
}

/**
 * The newest remembered block that is still canonical, asking the reader newest first; null when none is (a reorg
 * deeper than the window, which is not guessed at). A remembered block whose slot the chain now skips answers
 * `SKIPPED`, which matches no hash: the walk goes on below it.
 */
async function commonAncestor(ctx: PipelineContext, chain: ChainSymbol, recent: RecentBlocks) {
  const reader = ctx.chains.reader(chain);
  for (let i = recent.length - 1; i >= 0; i--) {
    if ((await reader.blockHash(recent[i].number)) === recent[i].hash) return recent[i];
  }
  return null;
}

/** No cursor yet: start at the configured block (0 for sim chains, usually the tip for a live chain). */
async function firstCursor(ctx: PipelineContext, chain: ChainSymbol): Promise<Cursor> {
  const reader = ctx.chains.reader(chain);
  const start = ctx.settings.startBlock(chain);
  if (start === "tip") return await reader.tip();
  return (await blockAtOrBelow(reader, start)) ?? { number: start, hash: "" };
}

/**
 * The block at `number`, or below it when the chain skipped that slot (a cursor is always a real block: a skipped
 * slot has no hash to compare); null above the tip.
 */
async function blockAtOrBelow(reader: ChainReader, number: number): Promise<BlockRef | null> {
  for (let n = number; n >= 0; n--) {
    const hash = await reader.blockHash(n);
    if (hash === null) return null;
    if (hash !== SKIPPED) return { number: n, hash };
  }
  return null;
}

async function saveCursor(
  ctx: PipelineContext,
  chain: ChainSymbol,
  lease: Deno.KvEntry<unknown>,
  cursor: Cursor,
  recent: RecentBlocks,
): Promise<string | null> {
  const res = await ctx.kv.atomic().check(lease).set(cursorKey(chain), cursor).set(recentBlocksKey(chain), recent)
    .commit();
  if (isDepthFinal(chain)) await pruneDepositBlocks(ctx.kv, chain, cursor.number - REORG_WINDOW_BLOCKS);
  return res.ok ? res.versionstamp : null;
}

/** Chains final by depth alone (doge, zec): a reorg deeper than their confirmations undoes what counted as final. */
export function isDepthFinal(chain: ChainSymbol): boolean {
  return isNativeChain(chain) && NATIVE[chain].finality.kind === "depth";
}

/** Statuses in which an order has not moved value yet: held, it stops before signing anything. */
const HOLDABLE: readonly Order["status"][] = ["processing"];

/**
 * A reorg replaced the blocks above `ancestor` up to the watcher's `cursor`. When that is deeper than the chain's
 * required confirmations, or when it replaced a block whose deposit was already confirmed, what counted as final was
 * not: nothing is guessed. Every confirmed order whose transfer was in a replaced block is listed on a
 * `reorg_past_finality` alert, and those that have not moved value yet (processing) are held for an operator; the
 * treasury coins confirmed in those blocks are held too (never spent until an operator looks). Idempotent: the alert's
 * subject is the replaced block, holds are set once.
 */
async function holdWhatReorgTouched(ctx: PipelineContext, chain: ChainSymbol, cursor: Cursor, ancestor: BlockRef) {
  const required = ctx.settings.confirmations(chain);
  const depth = cursor.number - ancestor.number;
  const subject = `${chain}:${cursor.number}:${cursor.hash}`;
  const alert = { kind: "reorg_past_finality", subject };
  const reason = `a reorg on ${chain} replaced blocks ${ancestor.number + 1} to ${cursor.number} (${depth} deep, ` +
    `${required} confirmations required) after this was confirmed; an operator must check it before it moves`;
  const orders: { id: string; status: string; held: boolean }[] = [];
  for (const orderId of await ordersAbove(ctx.kv, chain, ancestor.number)) {
    const touched = await holdOrderIfUnmoved(ctx, orderId, { reason, at: ctx.now().toISOString(), alert });
    if (touched) orders.push(touched);
  }
  if (depth < required && orders.length === 0) return;
  const family = chainFamily(chain);
  const coins = family.family === "utxo"
    ? await holdCoinsAbove(ctx.kv, family.chain, ancestor.number, { reason, at: ctx.now().toISOString(), alert })
    : [];
  const heldOrders = orders.filter((o) => o.held).map((o) => o.id);
  const message = `a reorg replaced ${chain} blocks ${ancestor.number + 1} to ${cursor.number}: ${depth} blocks, ` +
    `deeper than the ${required} confirmations that count as final. Touched: ${orders.length} confirmed order(s) ` +
    `(held: ${heldOrders.join(", ") || "none"}), ${coins.length} treasury coin(s) held. Check each on the node, ` +
    `then release or cancel (docs/operations.md, "Reorg past finality")`;
  ctx.log(`watcher ${chain}: ${message}`);
  await raiseAlert(ctx.kv, {
    kind: "reorg_past_finality",
    subject,
    chain,
    message,
    now: ctx.now(),
    touched: { orders, coins: coins.map((o) => `${o.txHash}:${o.index}`) },
  });
}

/**
 * An order whose transfer a reorg replaced: null while it is still pending (its own confirmation check decides),
 * else its status and whether it is held. The hold is committed against the order's version and the actor's step
 * commits against the hold's absence, so an order is either held before it signs anything or seen as moved.
 */
async function holdOrderIfUnmoved(ctx: PipelineContext, orderId: string, hold: OrderHold) {
  for (let attempt = 0; attempt < 10; attempt++) {
    const [entry, existing] = await Promise.all([
      getOrder(ctx.kv, orderId),
      ctx.kv.get<OrderHold>(orderHoldKey(orderId)),
    ]);
    if (entry.versionstamp === null || entry.invalid) return null;
    const status = entry.value.status;
    if (status === "pending") return null;
    if (existing.value !== null) return { id: orderId, status, held: true };
    if (!HOLDABLE.includes(status)) return { id: orderId, status, held: false };
    const ok = await ctx.kv.atomic().check(entry, existing).set(orderHoldKey(orderId), hold).commit();
    if (ok.ok) {
      ctx.log(`order ${orderId}: held for an operator: ${hold.reason}`);
      return { id: orderId, status, held: true };
    }
  }
  throw new TransientChainError(`order ${orderId} kept changing while a reorg hold was set; retrying`);
}

async function recordBlock(ctx: PipelineContext, chain: ChainSymbol, block: ScannedBlock): Promise<number> {
  let recorded = 0;
  const dust = new DustOfBlock(chain, block);
  if (isEvmChain(chain)) {
    const transferAddress = ctx.settings.transferAddress;
    for (const t of block.transfers) {
      if (t.asset === "native" || t.to.toLowerCase() !== transferAddress) continue;
      const record = await burnRecordOf(ctx, chain, block.number, t);
      if (record.kind === "dust") dust.add(t.from.toLowerCase(), t.asset, t.amount, record.reason);
      else if (await commitRecord(ctx, chain, t, record)) recorded++;
    }
    return recorded + await dust.commit(ctx);
  }
  const owners = depositAddressSet(ctx.kv, chain).match(block.transfers.map((t) => t.to));
  const reader = ctx.chains.reader(chain);
  for (const t of block.transfers) {
    const owner = t.asset === "native" ? owners.get(t.to) : undefined;
    if (!owner) continue;
    // One dust rule for every native credit, held ones too (docs/partners.md, "Dust and held records"): anyone can send
    // a held kind (an XRPL PaymentChannelClaim) for a fee. Not coinbase outputs (only miners make them), nor a held
    // transfer of 0 native units (a non-native asset, chains/adapter.ts): the dust limit says nothing of its value.
    if (!t.coinbase && t.amount < NATIVE[chain].dustDeposit && !(t.heldReason && t.amount === 0n)) {
      // No sender lookup for dust: its cost would grow with what outsiders send, not with our deposits.
      const sender = t.from || UNKNOWN_SENDER;
      dust.add(sender, NATIVE[chain].token.symbol, t.amount, `deposit below the dust limit of ${NATIVE[chain].name}`);
      continue;
    }
    if (t.coinbase || t.heldReason) {
      // Never credited, whatever its amount: an operator decides what to do with it.
      const held = heldOf(ctx, chain, block.number, t, {
        from: t.from || (t.coinbase ? COINBASE_SENDER : UNKNOWN_SENDER),
        asset: "native",
        to: t.to,
        reason: t.heldReason ?? coinbaseReason(chain),
      });
      if (await commitRecord(ctx, chain, t, { kind: "held", held })) recorded++;
      continue;
    }
    const from = await senderOfTransfer(reader, t);
    if (!ctx.settings.isEnabled(owner.destinationChain)) {
      // Never minted elsewhere, never dropped: held until a process that runs the destination chain is started.
      const held = heldOf(ctx, chain, block.number, t, {
        from,
        asset: "native",
        to: t.to,
        reason: disabledReason(owner.destinationChain),
      });
      if (await commitRecord(ctx, chain, t, { kind: "held", held })) recorded++;
      continue;
    }
    const order = newOrder(ctx, chain, block.number, t, {
      type: "mint",
      sourceChain: chain,
      destinationChain: owner.destinationChain,
      token: NATIVE[chain].token.symbol,
      sourceWallet: from,
      destinationWallet: owner.owner,
      owner: owner.owner,
    });
    if (await commitRecord(ctx, chain, t, { kind: "order", order })) recorded++;
  }
  return recorded + await dust.commit(ctx);
}

/** The sender of a UTXO deposit whose first input the reader cannot attribute (a non-standard script). */
export const UNKNOWN_SENDER = "unknown";
/** The `from` of a held coinbase output: it has no input, so no sender. */
export const COINBASE_SENDER = "coinbase";

export function coinbaseReason(chain: ChainSymbol): string {
  const rule = chain === "zec"
    ? "it needs 100 blocks of maturity and can only be spent to shielded outputs"
    : chain === "doge"
    ? "it needs 240 blocks of maturity"
    : "it needs maturity";
  return `coinbase output paying our deposit address: never credited (${rule}); an operator decides what to do with it`;
}

/**
 * The sender of a transfer that pays us. UTXO readers leave `from` empty and answer `senderOf` per transaction: asked
 * here only for our deposits, so its cost grows with them, never with a block. A transient failure propagates (the
 * block is retried); a transaction whose sender cannot be told gets UNKNOWN_SENDER.
 */
async function senderOfTransfer(reader: ChainReader, t: ObservedTransfer): Promise<string> {
  if (t.from !== "" || !reader.senderOf) return t.from || UNKNOWN_SENDER;
  return (await reader.senderOf(t.txHash)) || UNKNOWN_SENDER;
}

/**
 * A block's sub-minimum transfers from outsiders, summed per (sender, asset): each sum goes to its aggregate as that
 * block's contribution, so no transfer of them gets a record or a dedupe key of its own (anyone could grow our
 * storage for a fraction of a cent otherwise).
 */
class DustOfBlock {
  readonly #parts = new Map<string, { sender: string; asset: string; reason: string; count: number; sum: bigint }>();
  constructor(private readonly chain: ChainSymbol, private readonly block: ScannedBlock) {}

  add(sender: string, asset: string, amount: bigint, reason: string) {
    const id = `${sender}\0${asset}`;
    const part = this.#parts.get(id) ?? { sender, asset, reason, count: 0, sum: 0n };
    part.count++;
    part.sum += amount;
    this.#parts.set(id, part);
  }

  /** Returns how many aggregates changed (0 on a rescan of a block already counted). */
  async commit(ctx: PipelineContext): Promise<number> {
    let changed = 0;
    for (const p of this.#parts.values()) {
      const block = { number: this.block.number, hash: this.block.hash };
      if (await addDust(ctx.kv, { chain: this.chain, ...p, block, now: ctx.now() })) changed++;
    }
    return changed;
  }
}

/** What a transfer that concerns us becomes (docs/architecture.md invariant 3). */
export type TransferRecord = { kind: "order"; order: Order } | { kind: "held"; held: HeldTransfer };

/**
 * Decides what a uAsset transfer to the transfer address becomes: a burn order when its sender has a burn
 * configuration for that uAsset's chain, else a held transfer, or dust when it is also below the uAsset's minimum
 * burn. The watcher and the burn re-check at confirmation (order_actor.ts) both use it. `revision` > 0: the transfer
 * was re-read with other facts after a reorg.
 */
export async function burnRecordOf(
  ctx: PipelineContext,
  chain: EvmChain,
  blockNumber: number,
  t: ObservedTransfer,
  revision = 0,
): Promise<TransferRecord | { kind: "dust"; reason: string }> {
  const asset = t.asset as UAsset;
  const native = nativeChainOfUAsset(asset);
  const sender = t.from.toLowerCase();
  const config = native ? await getBurnConfig(ctx.kv, sender, native) : null;
  if (!native || !config) {
    if (native && t.amount < NATIVE[native].uAsset.minimumBurnAmount) {
      return { kind: "dust", reason: `below the minimum burn, from a sender with no burn configuration for ${native}` };
    }
    const reason = native ? `no burn configuration for ${native}` : `unknown uAsset ${asset}`;
    return { kind: "held", held: heldOf(ctx, chain, blockNumber, t, { from: sender, asset, reason }, revision) };
  }
  // Real uAssets are never "paid" by a simulator or lost: held until a process that runs the native chain starts.
  if (!ctx.settings.isEnabled(native)) {
    const reason = disabledReason(native);
    return { kind: "held", held: heldOf(ctx, chain, blockNumber, t, { from: sender, asset, reason }, revision) };
  }
  const order = newOrder(
    ctx,
    chain,
    blockNumber,
    t,
    {
      type: "burn",
      sourceChain: chain,
      destinationChain: native as NativeChain,
      token: asset,
      sourceWallet: sender,
      destinationWallet: config.destinationAddress,
      owner: sender,
    },
    { memo: config.memo },
    revision,
  );
  return { kind: "order", order };
}

function disabledReason(chain: ChainSymbol): string {
  return `destination chain ${chain} is disabled`;
}

/** A transfer that is ours but must not be processed now. */
function heldOf(
  ctx: PipelineContext,
  chain: ChainSymbol,
  blockNumber: number,
  t: ObservedTransfer,
  what: Pick<HeldTransfer, "from" | "asset" | "to" | "reason">,
  revision = 0,
): HeldTransfer {
  const held: HeldTransfer = {
    chain,
    txHash: t.txHash,
    index: t.index,
    amount: t.amount.toString(),
    blockNumber,
    detectedAt: ctx.now().toISOString(),
    ...what,
  };
  if (revision > 0) held.revision = revision;
  return held;
}

function newOrder(
  ctx: PipelineContext,
  chain: ChainSymbol,
  blockNumber: number,
  t: ObservedTransfer,
  fields: Pick<
    Order,
    "type" | "sourceChain" | "destinationChain" | "token" | "sourceWallet" | "destinationWallet" | "owner"
  >,
  details: { memo?: string | null } = {},
  revision = 0,
): Order {
  const id = newOrderId(ctx.now().getTime());
  const source: SourceTransfer = { chain, txHash: t.txHash, index: t.index, blockNumber };
  if (revision > 0) source.revision = revision;
  // Checked here, so a transfer that would make a malformed order stops its block with the field named.
  return validOrder({
    id,
    status: "pending",
    amount: t.amount.toString(),
    workflowId: `order-actor-${id}`,
    transactionHash: null,
    errorMessage: null,
    createdAt: ctx.now().toISOString(),
    updatedAt: null,
    ...fields,
    details: {
      ...details,
      source,
      depositId: depositIdOf(chain, t.txHash, t.index),
      confirmBy: new Date(ctx.now().getTime() + ctx.settings.confirmationTimeoutMs(chain)).toISOString(),
    },
  });
}

/**
 * Adds a transfer's record to `atomic`, guarded by its permanent dedupe key (the commit fails if it was seen before):
 * an order with its first schedule and doorbell, or a held transfer.
 */
export function addTransferRecord(
  ctx: PipelineContext,
  atomic: Deno.AtomicOperation,
  chain: ChainSymbol,
  t: ObservedTransfer,
  record: TransferRecord,
  revision = 0,
): Deno.AtomicOperation {
  const key = seenKey(chain, t.txHash, t.index, revision);
  const seen: SeenTransfer = record.kind === "order" ? { kind: "order", orderId: record.order.id } : { kind: "held" };
  atomic.check({ key, versionstamp: null }).set(key, seen);
  if (record.kind === "held") return addHeldTransfer(atomic, record.held);
  const order = record.order;
  // Its `order.pending` event carries the first count of confirmations (the block it was seen in is the one being
  // scanned: docs/streaming.md "Confirmations"), marked as announced so the confirmations tick sends only changes.
  const counted = pendingConfirmations(order, confirmationRule(ctx.settings, chain), order.details.source.blockNumber);
  addOrderCreate(atomic, order, counted ?? undefined);
  if (counted) addAnnouncedConfirmations(atomic, order.id, counted.confirmations);
  if (isDepthFinal(chain) && revision === 0) {
    atomic.set(depositBlockKey(chain, order.details.source.blockNumber, t.txHash, t.index), order.id);
  }
  addReschedule(atomic, order.id, { key: dueAtKey(order.id), value: null, versionstamp: null }, ctx.now().getTime());
  return atomic.enqueue({ kind: WAKE, orderId: order.id } satisfies WakeMessage);
}

/** Commits a transfer's record alone; false if it was seen before. */
async function commitRecord(ctx: PipelineContext, chain: ChainSymbol, t: ObservedTransfer, record: TransferRecord) {
  const ok = (await addTransferRecord(ctx, ctx.kv.atomic(), chain, t, record).commit()).ok;
  if (ok && record.kind === "held") {
    const h = record.held;
    ctx.log(`held: ${h.asset} ${h.amount} from ${h.from} on ${chain} (${h.reason})`);
  }
  return ok;
}
