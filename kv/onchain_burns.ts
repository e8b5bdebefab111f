/**
 * On-chain burns of redeemed uAssets (docs/onchain-burn.md). The commit that completes a burn order writes a
 * "burn due" record (`addBurnDueOf`) for its EVM chain, uAsset, order and amount. The burn tick of a chain
 * (actors/onchain_burn.ts) takes due records of one uAsset into ONE batch, recorded write-ahead with its prepared
 * transaction and reservations in the atomic that deletes those due records, then broadcasts it and follows it until
 * it is final (the batch is `burned`) or proven dead (a new attempt of the same batch, same orders, is signed).
 *
 * Exactly once: an order's due record is deleted, and its `orderBatchKey` written (checked absent), in the commit that
 * records its batch, so no order can enter two batches; a batch burns its total once, since every attempt after the
 * first is signed only after the previous one is proven dead. One batch is open per chain at a time (`openKey`), so a
 * chain's burns never race each other for the transfer address's nonce or balance. Key layout lives here only.
 */
import type { DeathProof, PreparedTx } from "../chains/adapter.ts";
import { type EvmChain, isEvmChain, type UAsset } from "../chains/catalog.ts";
import { addReservations } from "./chain_state.ts";
import type { Order } from "../model/order.ts";
import {
  type BurnAttempt,
  type BurnBatch,
  BurnBatchSchema,
  deadSentTx,
  type InvalidRecordError,
  parseRecord,
  sentTxOf,
  validRecord,
} from "../model/sent_tx.ts";
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import { addSentTxEffects } from "./sent_tx_effects.ts";

/**
 * Most orders in one batch. Recording it checks each due record and each order's batch marker (2 per order), the open
 * pointer and the nonce counter, under Deno KV's 100 checks per atomic; its mutations (3 per order and a few) stay far
 * under 1000, and the batch value (about 80 bytes per order) far under 64 KiB.
 */
export const MAX_ORDERS_PER_BATCH = 40;

/**
 * Most attempts a batch keeps (the last ones): each re-sign after a proven death adds one (a few hundred bytes), and a
 * batch re-signed without end would pass Deno KV's 64 KiB value limit. Older dead attempts are dropped and counted
 * (`droppedAttempts`): a dead attempt can never be mined, and what the next attempt needs is the last one's proof only.
 */
export const MAX_KEPT_BURN_ATTEMPTS = 16;

export interface BurnDue {
  chain: EvmChain;
  asset: UAsset;
  orderId: string;
  /** The uAssets the order redeemed (its whole amount), wei as a decimal string. */
  amountWei: string;
  /** When the order completed. */
  at: string;
}

// The batch record's schema and types live in model/sent_tx.ts: checked on every write and read here.
export type { BurnAttempt, BurnBatch } from "../model/sent_tx.ts";

const DUE = "onchain_burn_due";
const BATCH = "onchain_burn_batch";
const OPEN = "onchain_burn_open";
const ORDER = "onchain_burn_order";
const LEFT_OUT = "onchain_burn_left_out";

/** A due record left out of batches (its transfer is not on chain as recorded, or its order is not a completed burn). */
export interface LeftOutBurn extends BurnDue {
  leftOut: { why: string; at: string };
}

export function burnDueKey(chain: EvmChain, asset: UAsset, orderId: string): Deno.KvKey {
  return [DUE, chain, asset, orderId];
}

/** Batch ids are UUIDv7: key order is creation order. */
export function burnBatchKey(chain: EvmChain, batchId: string): Deno.KvKey {
  return [BATCH, chain, batchId];
}

/** A due record left out for an operator: out of the due prefix, so it never blocks (or costs) a later tick. */
export function leftOutBurnKey(chain: EvmChain, asset: UAsset, orderId: string): Deno.KvKey {
  return [LEFT_OUT, chain, asset, orderId];
}

/** The id of the chain's open batch; absent when none is. */
export function openBurnKey(chain: EvmChain): Deno.KvKey {
  return [OPEN, chain];
}

/** The batch an order's uAssets were put in, for ever. */
export function orderBurnKey(orderId: string): Deno.KvKey {
  return [ORDER, orderId];
}

/** Adds the burn-due record of `order` (a burn just completed) to the atomic that completes it. */
export function addBurnDueOf(atomic: Deno.AtomicOperation, order: Order, at: Date): void {
  if (order.type !== "burn" || !isEvmChain(order.sourceChain)) return;
  const asset = order.token as UAsset;
  const due: BurnDue = {
    chain: order.sourceChain,
    asset,
    orderId: order.id,
    amountWei: order.amount,
    at: at.toISOString(),
  };
  atomic.set(burnDueKey(order.sourceChain, asset, order.id), due);
}

/**
 * The due records of the first uAsset of `chain` that has any (after `after`, when given: the step moves past a uAsset
 * it cannot batch), oldest order first, at most `limit`. One read when nothing is due (the idle tick).
 */
export async function nextBurnsDue(
  kv: Deno.Kv,
  chain: EvmChain,
  limit = MAX_ORDERS_PER_BATCH,
  after?: UAsset,
): Promise<Deno.KvEntry<BurnDue>[]> {
  // "\0" sorts after the uAsset's own records and before the next uAsset's.
  const selector = after ? { prefix: [DUE, chain], start: [DUE, chain, `${after}\0`] } : { prefix: [DUE, chain] };
  const first = await kv.list<BurnDue>(selector, { limit: 1 }).next();
  if (first.done) return [];
  const asset = first.value.value.asset;
  const out: Deno.KvEntry<BurnDue>[] = [];
  for await (const e of kv.list<BurnDue>({ prefix: [DUE, chain, asset] }, { limit })) out.push(e);
  return out;
}

/**
 * What the due records of `asset` on `chain` redeemed, in wei (those left out for an operator not counted): the most a
 * new burn batch of it may burn (the signer process's bound, actors/signer/purposes.ts).
 */
export async function burnsDueTotal(kv: Deno.Kv, chain: EvmChain, asset: UAsset): Promise<bigint> {
  let total = 0n;
  for await (const e of kv.list<BurnDue>({ prefix: [DUE, chain, asset] })) total += BigInt(e.value.amountWei);
  return total;
}

/** Every due record (the `burns` report), those left out for an operator included, bounded. */
export async function listBurnsDue(kv: Deno.Kv, limit = 10_000): Promise<BurnDue[]> {
  const out: BurnDue[] = [];
  for await (const e of kv.list<BurnDue>({ prefix: [DUE] }, { limit })) out.push(e.value);
  for await (const e of kv.list<LeftOutBurn>({ prefix: [LEFT_OUT] }, { limit: limit - out.length })) {
    const { leftOut: _, ...due } = e.value;
    out.push(due);
  }
  return out;
}

/** The due records left out for an operator, with why, bounded. */
export async function listLeftOutBurns(kv: Deno.Kv, limit = 10_000): Promise<LeftOutBurn[]> {
  const out: LeftOutBurn[] = [];
  for await (const e of kv.list<LeftOutBurn>({ prefix: [LEFT_OUT] }, { limit })) out.push(e.value);
  return out;
}

/**
 * Moves a due record out of the due prefix (checked unchanged: never one a batch just took), kept with why under
 * `leftOutBurnKey` for an operator. False when it moved since it was read.
 */
export async function leaveOutBurnDue(
  kv: Deno.Kv,
  entry: Deno.KvEntry<BurnDue>,
  why: string,
  at: Date,
): Promise<boolean> {
  const { chain, asset, orderId } = entry.value;
  const left: LeftOutBurn = { ...entry.value, leftOut: { why, at: at.toISOString() } };
  return (await kv.atomic().check(entry).delete(entry.key).set(leftOutBurnKey(chain, asset, orderId), left).commit())
    .ok;
}

/**
 * Puts a left-out record back among the due records (an operator found its transfer on chain after all), checked: the
 * left-out record unchanged, no due record and no batch for its order. The next step reads its transfer back again.
 */
export async function restoreLeftOutBurn(
  kv: Deno.Kv,
  chain: EvmChain,
  asset: UAsset,
  orderId: string,
  audit?: (op: Deno.AtomicOperation, left: LeftOutBurn) => void,
): Promise<boolean> {
  const left = await kv.get<LeftOutBurn>(leftOutBurnKey(chain, asset, orderId));
  if (left.value === null) return false;
  const { leftOut: _, ...due } = left.value;
  const op = kv.atomic().check(left).delete(left.key)
    .check({ key: burnDueKey(chain, asset, orderId), versionstamp: null })
    .check({ key: orderBurnKey(orderId), versionstamp: null })
    .set(burnDueKey(chain, asset, orderId), due);
  audit?.(op, left.value);
  return (await op.commit()).ok;
}

/** The open pointer of a chain names a batch that has no record (never written by this code: a damaged store). */
export class OpenBurnBatchMissingError extends Error {
  constructor(readonly chain: EvmChain, readonly batchId: string) {
    super(`${chain}: the open burn batch ${batchId} has no record`);
  }
}

/** How a batch record is named in errors and alerts: its key. */
const subjectOf = (key: Deno.KvKey) => key.map(String).join("/");

/** `entry`'s value checked against the schema; throws InvalidRecordError naming the key and the bad fields. */
function checked(entry: Deno.KvEntry<unknown>): Deno.KvEntry<BurnBatch> {
  const parsed = parseRecord(BurnBatchSchema, subjectOf(entry.key), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { key: entry.key, value: parsed.value, versionstamp: entry.versionstamp };
}

/** `next`, the batch about to be written, checked: refused naming the field before the commit, nothing written. */
const valid = (next: BurnBatch): BurnBatch =>
  validRecord(BurnBatchSchema, subjectOf(burnBatchKey(next.chain, next.id)), next);

/**
 * The open batch of `chain`, or null. Throws OpenBurnBatchMissingError when the pointer names no record, and
 * InvalidRecordError when its record fails its schema (never followed on a guess).
 */
export async function openBurnBatch(kv: Deno.Kv, chain: EvmChain): Promise<Deno.KvEntry<BurnBatch> | null> {
  const id = await kv.get<string>(openBurnKey(chain));
  if (id.value === null) return null;
  const batch = await kv.get<unknown>(burnBatchKey(chain, id.value));
  if (batch.versionstamp === null) throw new OpenBurnBatchMissingError(chain, id.value);
  return checked(batch);
}

/** The batch, or null; throws InvalidRecordError for a stored record that fails its schema. */
export async function getBurnBatch(kv: Deno.Kv, chain: EvmChain, id: string): Promise<BurnBatch | null> {
  const entry = await kv.get<unknown>(burnBatchKey(chain, id));
  return entry.versionstamp === null ? null : checked(entry).value;
}

/**
 * Batches of `chain`, newest first, at most `limit`. Throws InvalidRecordError for a stored record that fails its
 * schema: a report never lists one on a guess.
 */
export async function listBurnBatches(kv: Deno.Kv, chain: EvmChain, limit: number): Promise<BurnBatch[]> {
  const out: BurnBatch[] = [];
  for await (const e of kv.list<unknown>({ prefix: [BATCH, chain] }, { limit, reverse: true })) {
    out.push(checked(e).value);
  }
  return out;
}

/** The batch an order's uAssets went into, or null. */
export async function batchOfOrder(kv: Deno.Kv, orderId: string): Promise<string | null> {
  return (await kv.get<string>(orderBurnKey(orderId))).value;
}

function attemptOf(chain: EvmChain, tx: PreparedTx, at: Date): BurnAttempt {
  return { ...sentTxOf(chain, tx, at), chain };
}

/**
 * Records a new batch of `due` (one chain, one uAsset) with its first attempt `tx`, write-ahead: in one atomic the due
 * records are deleted (checked unchanged), each order's batch marker is set (checked absent), the batch and the open
 * pointer (checked absent) are written, and the transaction's reservations taken. False when anything moved since it
 * was read: nothing was written, and `tx` must never be sent.
 */
export async function recordBurnBatch(
  kv: Deno.Kv,
  args: { id: string; due: Deno.KvEntry<BurnDue>[]; tx: PreparedTx; at: Date },
): Promise<{ ok: boolean; batch: BurnBatch }> {
  const { id, due, tx, at } = args;
  if (due.length === 0 || due.length > MAX_ORDERS_PER_BATCH) {
    throw new RangeError(`a burn batch takes 1 to ${MAX_ORDERS_PER_BATCH} orders, got ${due.length}`);
  }
  const { chain, asset } = due[0].value;
  if (due.some((d) => d.value.chain !== chain || d.value.asset !== asset)) {
    throw new Error("a burn batch takes the orders of one chain and one uAsset");
  }
  const total = due.reduce((sum, d) => sum + BigInt(d.value.amountWei), 0n);
  const batch: BurnBatch = valid({
    id,
    chain,
    asset,
    orders: due.map((d) => ({ orderId: d.value.orderId, amountWei: d.value.amountWei })),
    totalWei: total.toString(),
    status: "open",
    attempts: [attemptOf(chain, tx, at)],
    createdAt: at.toISOString(),
  });
  const atomic = kv.atomic().check({ key: openBurnKey(chain), versionstamp: null });
  for (const d of due) {
    const marker = orderBurnKey(d.value.orderId);
    atomic.check(d).delete(d.key).check({ key: marker, versionstamp: null }).set(marker, id);
  }
  atomic.set(burnBatchKey(chain, id), batch).set(openBurnKey(chain), id);
  addReservations(atomic, tx);
  return { ok: (await atomic.commit()).ok, batch };
}

/** The open batch's last attempt proven dead (checked against the batch read). */
export async function markBurnAttemptDead(
  kv: Deno.Kv,
  entry: Deno.KvEntry<BurnBatch>,
  dead: { proof: DeathProof; detail: string; at: Date },
  effects: readonly SentTxEffect[],
): Promise<boolean> {
  const attempts = [...entry.value.attempts];
  const last = attempts[attempts.length - 1];
  attempts[attempts.length - 1] = { ...last, ...deadSentTx(last, dead), chain: last.chain };
  const next = valid({ ...entry.value, attempts });
  return (await addSentTxEffects(kv.atomic().check(entry).set(entry.key, next), effects).commit()).ok;
}

/** A new attempt of the batch (its last one is dead), recorded with its reservations before it is sent. */
export async function recordBurnAttempt(
  kv: Deno.Kv,
  entry: Deno.KvEntry<BurnBatch>,
  tx: PreparedTx,
  at: Date,
): Promise<boolean> {
  const last = entry.value.attempts[entry.value.attempts.length - 1];
  if (!last.proof) throw new Error(`burn batch ${entry.value.id}: its last attempt is not dead`);
  const attempts = [...entry.value.attempts, attemptOf(entry.value.chain, tx, at)];
  const drop = Math.max(0, attempts.length - MAX_KEPT_BURN_ATTEMPTS);
  const next: BurnBatch = { ...entry.value, attempts: attempts.slice(drop) };
  if (drop > 0) next.droppedAttempts = (entry.value.droppedAttempts ?? 0) + drop;
  return (await addReservations(kv.atomic().check(entry).set(entry.key, valid(next)), tx).commit()).ok;
}

/** The batch's burn is final: it is burned, and the chain's next batch may start. */
export async function markBurned(
  kv: Deno.Kv,
  entry: Deno.KvEntry<BurnBatch>,
  final: { txHash: string; blockNumber: number; at: Date },
  effects: readonly SentTxEffect[],
): Promise<boolean> {
  const next = valid({
    ...entry.value,
    status: "burned",
    burnedTxHash: final.txHash,
    blockNumber: final.blockNumber,
    burnedAt: final.at.toISOString(),
  });
  const open = openBurnKey(entry.value.chain);
  return (await addSentTxEffects(kv.atomic().check(entry).set(entry.key, next).delete(open), effects).commit()).ok;
}

/**
 * What burn batches took from the transfer address, per EVM chain and uAsset (reconciliation): `burnedWei` by batches
 * burned (final), `burningWei` by the open batch, whose transaction may be on chain already or not yet.
 */
export async function burnTotals(
  kv: Deno.Kv,
): Promise<{
  totals: { chain: EvmChain; asset: UAsset; burnedWei: bigint; burningWei: bigint }[];
  /** Stored batches that fail their schema: counted in no total (the reader reports them, never guesses). */
  invalid: InvalidRecordError[];
}> {
  const totals = new Map<string, { chain: EvmChain; asset: UAsset; burnedWei: bigint; burningWei: bigint }>();
  const invalid: InvalidRecordError[] = [];
  for await (const e of kv.list<unknown>({ prefix: [BATCH] })) {
    const parsed = parseRecord(BurnBatchSchema, subjectOf(e.key), e.value);
    if (!parsed.ok) {
      invalid.push(parsed.error);
      continue;
    }
    const b = parsed.value;
    const key = `${b.chain}:${b.asset}`;
    const t = totals.get(key) ?? { chain: b.chain, asset: b.asset, burnedWei: 0n, burningWei: 0n };
    if (b.status === "burned") t.burnedWei += BigInt(b.totalWei);
    else t.burningWei += BigInt(b.totalWei);
    totals.set(key, t);
  }
  return { totals: [...totals.values()], invalid };
}
