/**
 * Chain watchers: scan blocks from a stored cursor and turn every transfer that concerns us into a record, in one
 * atomic with its permanent dedupe key. Native chains: a transfer to one of our deposit addresses becomes a mint
 * order. EVM chains: a uAsset transfer to the transfer address becomes a burn order, or a held transfer when the
 * sender has no burn configuration for that uAsset's chain. A transfer whose other chain is disabled in this process
 * (config/chain_mode.ts) is held too, never processed against a simulator nor dropped. Cost grows with chain
 * activity, not with the number of deposit addresses: each block's recipients are looked up in the reverse index in
 * batches.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "@scure/base";
import type { ObservedTransfer, ScannedBlock } from "../chains/adapter.ts";
import {
  type ChainSymbol,
  type EvmChain,
  isEvmChain,
  NATIVE,
  type NativeChain,
  nativeChainOfUAsset,
  type UAsset,
} from "../chains/catalog.ts";
import { getBurnConfig } from "../kv/burn_configs.ts";
import { findDepositAddresses } from "../kv/mint_wallets.ts";
import { addOrderCreate, newOrderId, type Order } from "../kv/orders.ts";
import {
  acquireLease,
  addReschedule,
  type Cursor,
  cursorKey,
  dueAtKey,
  heldKey,
  type HeldTransfer,
  seenKey,
  type SeenTransfer,
} from "../kv/pipeline.ts";
import type { PipelineContext } from "./context.ts";
import { type SourceTransfer, WAKE, type WakeMessage } from "./order_actor.ts";

/** Blocks scanned per tick at most; a watcher far behind catches up over several ticks. */
const MAX_BLOCKS_PER_TICK = 200;
/** How far back to rescan when the block under the cursor changed (a reorg). */
const REORG_REWIND = 32;

export interface WatchResult {
  scannedTo: number | null;
  recorded: number;
}

/** The deposit id a mint carries on chain, and the identity of any detected transfer: sha256(chain:tx:index). */
export function depositIdOf(chain: ChainSymbol, txHash: string, index: number): string {
  return "0x" + hex.encode(sha256(new TextEncoder().encode(`${chain}:${txHash}:${index}`)));
}

/** One tick of the watcher of `chain`, if this process holds (or takes) its lease. */
export async function watchOnce(ctx: PipelineContext, chain: ChainSymbol, owner: string, leaseMs: number) {
  const lease = await acquireLease(ctx.kv, `watch:${chain}`, owner, leaseMs, ctx.now().getTime());
  if (!lease) return { scannedTo: null, recorded: 0 } satisfies WatchResult;
  const reader = ctx.chains.reader(chain);
  const stored = await ctx.kv.get<Cursor>(cursorKey(chain));
  let cursor = stored.value ?? await firstCursor(ctx, chain);
  if (cursor.number > 0 && (await reader.blockHash(cursor.number)) !== cursor.hash) {
    const back = Math.max(0, cursor.number - REORG_REWIND);
    ctx.log(`watcher ${chain}: block ${cursor.number} changed (reorg); rescanning from ${back}`);
    cursor = { number: back, hash: (await reader.blockHash(back)) ?? "" };
  }
  const tip = await reader.tip();
  if (tip.number <= cursor.number) {
    if (stored.value === null || stored.value.number !== cursor.number) await saveCursor(ctx, chain, lease, cursor);
    return { scannedTo: cursor.number, recorded: 0 };
  }
  const to = Math.min(tip.number, cursor.number + MAX_BLOCKS_PER_TICK);
  const blocks = await reader.scan(cursor.number + 1, to);
  let recorded = 0;
  let last = cursor;
  for (const block of blocks) {
    // Adapters may skip blocks without relevant transfers (EVM log scans), but always return the last block of the
    // range. Where blocks are adjacent they must link: otherwise the chain moved under us and the next tick sees it.
    if (block.number === last.number + 1 && block.parentHash !== last.hash) break;
    recorded += await recordBlock(ctx, chain, block);
    last = { number: block.number, hash: block.hash };
  }
  // The cursor moves only after every record of those blocks is committed: a crash in between rescans them,
  // and the dedupe keys make the rescan a no-op.
  await saveCursor(ctx, chain, lease, last);
  return { scannedTo: last.number, recorded };
}

/** No cursor yet: start at the configured block (0 for sim chains, usually the tip for a live chain). */
async function firstCursor(ctx: PipelineContext, chain: ChainSymbol): Promise<Cursor> {
  const reader = ctx.chains.reader(chain);
  const start = ctx.settings.startBlock(chain);
  if (start === "tip") return await reader.tip();
  return { number: start, hash: (await reader.blockHash(start)) ?? "" };
}

async function saveCursor(ctx: PipelineContext, chain: ChainSymbol, lease: Deno.KvEntry<unknown>, cursor: Cursor) {
  await ctx.kv.atomic().check(lease).set(cursorKey(chain), cursor).commit();
}

async function recordBlock(ctx: PipelineContext, chain: ChainSymbol, block: ScannedBlock): Promise<number> {
  let recorded = 0;
  if (isEvmChain(chain)) {
    const transferAddress = ctx.settings.transferAddress;
    for (const t of block.transfers) {
      if (t.asset === "native" || t.to.toLowerCase() !== transferAddress) continue;
      if (await recordBurnTransfer(ctx, chain, block, t)) recorded++;
    }
    return recorded;
  }
  const owners = await findDepositAddresses(ctx.kv, chain, block.transfers.map((t) => t.to));
  for (const t of block.transfers) {
    const owner = t.asset === "native" ? owners.get(t.to) : undefined;
    if (!owner) continue;
    if (!ctx.settings.isEnabled(owner.destinationChain)) {
      // Never minted elsewhere, never dropped: held until a process that runs the destination chain is started.
      const reason = disabledReason(owner.destinationChain);
      if (await commitHeld(ctx, chain, block, t, { from: t.from, asset: "native", to: t.to, reason })) recorded++;
      continue;
    }
    const order = newOrder(ctx, chain, block, t, {
      type: "mint",
      sourceChain: chain,
      destinationChain: owner.destinationChain,
      token: NATIVE[chain].token.symbol,
      sourceWallet: t.from,
      destinationWallet: owner.owner,
      owner: owner.owner,
    });
    if (await commitNewOrder(ctx, order, t, chain)) recorded++;
  }
  return recorded;
}

async function recordBurnTransfer(
  ctx: PipelineContext,
  chain: EvmChain,
  block: ScannedBlock,
  t: ObservedTransfer,
): Promise<boolean> {
  const asset = t.asset as UAsset;
  const native = nativeChainOfUAsset(asset);
  const sender = t.from.toLowerCase();
  const config = native ? await getBurnConfig(ctx.kv, sender, native) : null;
  if (!native || !config) {
    const reason = native ? `no burn configuration for ${native}` : `unknown uAsset ${asset}`;
    return await commitHeld(ctx, chain, block, t, { from: sender, asset, reason });
  }
  // Real uAssets are never "paid" by a simulator or lost: held until a process that runs the native chain starts.
  if (!ctx.settings.isEnabled(native)) {
    return await commitHeld(ctx, chain, block, t, { from: sender, asset, reason: disabledReason(native) });
  }
  const order = newOrder(ctx, chain, block, t, {
    type: "burn",
    sourceChain: chain,
    destinationChain: native as NativeChain,
    token: asset,
    sourceWallet: sender,
    destinationWallet: config.destinationAddress,
    owner: sender,
  }, { memo: config.memo });
  return await commitNewOrder(ctx, order, t, chain);
}

function disabledReason(chain: ChainSymbol): string {
  return `destination chain ${chain} is disabled`;
}

/** A transfer that is ours but must not be processed now: one held record, with its permanent dedupe key. */
async function commitHeld(
  ctx: PipelineContext,
  chain: ChainSymbol,
  block: ScannedBlock,
  t: ObservedTransfer,
  what: Pick<HeldTransfer, "from" | "asset" | "to" | "reason">,
): Promise<boolean> {
  const held: HeldTransfer = {
    chain,
    txHash: t.txHash,
    index: t.index,
    amount: t.amount.toString(),
    blockNumber: block.number,
    detectedAt: ctx.now().toISOString(),
    ...what,
  };
  const seen: SeenTransfer = { kind: "held" };
  const res = await ctx.kv.atomic()
    .check({ key: seenKey(chain, t.txHash, t.index), versionstamp: null })
    .set(seenKey(chain, t.txHash, t.index), seen)
    .set(heldKey(chain, t.txHash, t.index), held)
    .commit();
  if (res.ok) ctx.log(`held: ${held.asset} ${t.amount} from ${held.from} on ${chain} (${held.reason})`);
  return res.ok;
}

function newOrder(
  ctx: PipelineContext,
  chain: ChainSymbol,
  block: ScannedBlock,
  t: ObservedTransfer,
  fields: Pick<
    Order,
    "type" | "sourceChain" | "destinationChain" | "token" | "sourceWallet" | "destinationWallet" | "owner"
  >,
  details: Record<string, unknown> = {},
): Order {
  const id = newOrderId(ctx.now().getTime());
  const source: SourceTransfer = { chain, txHash: t.txHash, index: t.index, blockNumber: block.number };
  return {
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
  };
}

/** Creates the order, its dedupe record, its first schedule and its doorbell in one commit; false if seen before. */
async function commitNewOrder(ctx: PipelineContext, order: Order, t: ObservedTransfer, chain: ChainSymbol) {
  const seen: SeenTransfer = { kind: "order", orderId: order.id };
  const atomic = ctx.kv.atomic()
    .check({ key: seenKey(chain, t.txHash, t.index), versionstamp: null })
    .set(seenKey(chain, t.txHash, t.index), seen);
  addOrderCreate(atomic, order);
  addReschedule(atomic, order.id, { key: dueAtKey(order.id), value: null, versionstamp: null }, ctx.now().getTime());
  atomic.enqueue({ kind: WAKE, orderId: order.id } satisfies WakeMessage);
  return (await atomic.commit()).ok;
}
