/**
 * The order store: orders by id, the per-owner indexes that serve GET /orders (spec 4.7), a global status index the
 * pipeline sweeps, and per-owner counters that give `total` without a scan. This is the only code that knows these
 * keys; every write keeps order, indexes and counters in one atomic so they can never disagree.
 */
import { addOutboxEvent } from "./order_events.ts";
import { addChartCounts } from "./charts.ts";
import {
  type Confirmations,
  InvalidOrderError,
  newOrderId,
  type Order,
  ORDER_STATUSES,
  type OrderStatus,
  type OrderType,
  parseOrder,
  toOrderView,
  validOrder,
} from "../model/order.ts";

// ---- key layout ----

/** A per-owner listing: every order appears under all four filters that match it. */
type Filter = { type?: OrderType; status?: OrderStatus };
const ANY = "*"; // never a type or status, so "no filter" cannot collide with a value

/** Exported for tests that must write a record the store would refuse (a corrupt order); nothing else writes here. */
export function orderKey(id: string): Deno.KvKey {
  return ["order", id];
}
function ownerIndexPrefix(owner: string, f: Filter): Deno.KvKey {
  return ["order_by_owner", owner, f.type ?? ANY, f.status ?? ANY];
}
function ownerIndexKey(owner: string, f: Filter, id: string): Deno.KvKey {
  return [...ownerIndexPrefix(owner, f), id];
}
// One counter per owner and filter: hot only for that owner's own writes, never a global hot key.
function ownerCounterKey(owner: string, f: Filter): Deno.KvKey {
  return ["order_count", owner, f.type ?? ANY, f.status ?? ANY];
}
/** Bumped by every write to an owner's orders, so a cached page is known fresh with one read. */
export function ownerVersionKey(owner: string): Deno.KvKey {
  return ["order_version", owner];
}
/**
 * The per-owner change index that serves incremental sync (`GET /orders?updatedSince=` and `cursor`, docs/order-reads.md):
 * every order once, under the moment it last changed (`updatedAt`, or `createdAt` before its first change; ISO 8601
 * strings in one format, so they sort as the times do), oldest change first.
 */
function changeIndexPrefix(owner: string): Deno.KvKey {
  return ["order_by_change", owner];
}
function changeIndexKey(o: Order): Deno.KvKey {
  return [...changeIndexPrefix(o.owner), changedAt(o), o.id];
}
/** When the order last changed: what the change index sorts it by. */
export function changedAt(o: Pick<Order, "createdAt" | "updatedAt">): string {
  return o.updatedAt ?? o.createdAt;
}
const CHANGE_INDEX_READY_KEY: Deno.KvKey = ["order_by_change_ready"];
function statusIndexPrefix(status: OrderStatus): Deno.KvKey {
  return ["order_by_status", status];
}
function statusIndexKey(status: OrderStatus, id: string): Deno.KvKey {
  return [...statusIndexPrefix(status), id];
}

function filtersOf(o: Order): Filter[] {
  return [{}, { type: o.type }, { status: o.status }, { type: o.type, status: o.status }];
}
const filterId = (f: Filter) => `${f.type ?? ANY}/${f.status ?? ANY}`;

// `sum` wraps the bigint in a Deno.KvU64 and adds modulo 2^64, so adding 2^64 - 1 is the decrement.
const ONE = 1n;
const MINUS_ONE = 2n ** 64n - 1n;
const STRONG = { consistency: "strong" } as const;
const MAX_LIST_BATCH = 1000; // Deno KV refuses larger list batches
const MAX_UPDATE_ATTEMPTS = 100;

// ---- writes (composable into the caller's atomic) ----

/** Adds a new order, its indexes and counters to `atomic`; the commit fails if the id exists. */
export function addOrderCreate(
  atomic: Deno.AtomicOperation,
  order: Order,
  confirmations?: Confirmations,
): Deno.AtomicOperation {
  const o = validOrder(order);
  atomic.check({ key: orderKey(o.id), versionstamp: null }).set(orderKey(o.id), o);
  for (const f of filtersOf(o)) {
    atomic.set(ownerIndexKey(o.owner, f, o.id), o).sum(ownerCounterKey(o.owner, f), ONE);
  }
  atomic.set(changeIndexKey(o), o);
  addStatusEvent(atomic, o, o.createdAt, confirmations);
  addChartCounts(atomic, o, o.createdAt); // the overview's hourly charts (kv/charts.ts): a sum, no extra commit
  return atomic.set(statusIndexKey(o.status, o.id), o.id).sum(ownerVersionKey(o.owner), ONE);
}

/**
 * The order event of `o` entering its status (kv/order_events.ts), in the same atomic as the change: an event exists
 * exactly when the change committed.
 */
function addStatusEvent(atomic: Deno.AtomicOperation, o: Order, at: string, confirmations?: Confirmations) {
  addOutboxEvent(atomic, {
    id: newOrderId(),
    type: `order.${o.status}`,
    createdAt: at,
    owner: o.owner,
    order: confirmations ? { ...toOrderView(o), ...confirmations } : toOrderView(o),
  });
}

/**
 * Adds the change `previous -> next` to `atomic`; the commit fails if the order changed since `previous` was read.
 * Throws if id, owner or type change: they place the order in its indexes and are fixed for its life.
 */
export function addOrderUpdate(
  atomic: Deno.AtomicOperation,
  previous: Deno.KvEntry<Order>,
  next: Order,
): Deno.AtomicOperation {
  const before = previous.value;
  const o = validOrder(next);
  for (const field of ["id", "owner", "type"] as const) {
    if (before[field] !== o[field]) throw new Error(`order ${before.id}: ${field} cannot change`);
  }
  atomic.check({ key: orderKey(o.id), versionstamp: previous.versionstamp }).set(orderKey(o.id), o);
  const after = filtersOf(o);
  const kept = new Set(after.map(filterId));
  const was = new Set(filtersOf(before).map(filterId));
  for (const f of filtersOf(before)) {
    if (kept.has(filterId(f))) continue;
    atomic.delete(ownerIndexKey(o.owner, f, o.id)).sum(ownerCounterKey(o.owner, f), MINUS_ONE);
  }
  for (const f of after) {
    atomic.set(ownerIndexKey(o.owner, f, o.id), o); // denormalized copies must follow every change
    if (!was.has(filterId(f))) atomic.sum(ownerCounterKey(o.owner, f), ONE);
  }
  // The change index holds the order once, under its latest change: the previous entry goes in the same commit.
  if (changedAt(before) !== changedAt(o)) atomic.delete(changeIndexKey(before));
  atomic.set(changeIndexKey(o), o);
  if (before.status !== o.status) {
    atomic.delete(statusIndexKey(before.status, o.id)).set(statusIndexKey(o.status, o.id), o.id);
    const at = o.updatedAt ?? new Date().toISOString();
    addStatusEvent(atomic, o, at);
    addChartCounts(atomic, o, at);
  }
  return atomic.sum(ownerVersionKey(o.owner), ONE);
}

/** Stores a new order; false if an order with its id already exists. */
export async function createOrder(kv: Deno.Kv, order: Order): Promise<boolean> {
  return (await addOrderCreate(kv.atomic(), order).commit()).ok;
}

/**
 * A stored order as read: valid, missing, or stored but failing the schema. An invalid one is never handed out as an
 * Order: the caller gets the stored value only as `raw`, with the fields that are wrong, and must not act on a guess.
 */
export type OrderEntry =
  | (Deno.KvEntry<Order> & { invalid?: undefined })
  | (Deno.KvEntryMaybe<never> & { versionstamp: null; invalid?: undefined })
  | { key: Deno.KvKey; value: null; versionstamp: string; invalid: InvalidOrderError; raw: unknown };

export async function getOrder(kv: Deno.Kv, id: string): Promise<OrderEntry> {
  const entry = await kv.get<unknown>(orderKey(id), STRONG);
  if (entry.versionstamp === null) return { key: entry.key, value: null, versionstamp: null };
  const parsed = parseOrder(entry.value);
  if (parsed.ok) return { key: entry.key, value: parsed.order, versionstamp: entry.versionstamp };
  // Named by the key read, whatever the stored value says its id is.
  const invalid = new InvalidOrderError(id, parsed.error.issues);
  return { key: entry.key, value: null, versionstamp: entry.versionstamp, invalid, raw: entry.value };
}

/**
 * Reads the order, applies `change` and writes the result with `updatedAt` set, retrying on a concurrent write
 * (so `change` may run more than once and must be pure). Returns the stored order, or null when the order does not
 * exist or `change` returned null (nothing written).
 */
export async function updateOrder(
  kv: Deno.Kv,
  id: string,
  change: (o: Order) => Order | null,
  now: () => Date = () => new Date(),
): Promise<Order | null> {
  for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const entry = await getOrder(kv, id);
    if (entry.versionstamp === null) return null;
    if (entry.invalid) throw entry.invalid; // never rewritten on a guess
    // A copy, so a `change` that mutates in place cannot corrupt `previous`, which says which index keys to move.
    const changed = change(structuredClone(entry.value));
    if (changed === null) return null;
    const next = validOrder({ ...changed, updatedAt: now().toISOString() });
    if ((await addOrderUpdate(kv.atomic(), entry, next).commit()).ok) return next;
  }
  throw new Error(`order ${id}: update kept conflicting after ${MAX_UPDATE_ATTEMPTS} attempts`);
}

// ---- reads ----

/**
 * One page of an owner's orders, newest first, with the number matching the filter.
 * Deno KV has no offset: the first `offset` entries are read and dropped, so a page costs O(offset + limit).
 * `total` comes from the filter's counter (one get). The list and the get are separate reads, so under concurrent
 * writes `total` may be one write ahead of or behind the page.
 */
export async function listOrders(
  kv: Deno.Kv,
  owner: string,
  q: { type?: OrderType; status?: OrderStatus; limit: number; offset: number },
): Promise<{ orders: Order[]; total: number }> {
  if (!Number.isSafeInteger(q.limit) || q.limit < 0) throw new RangeError(`bad limit ${q.limit}`);
  if (!Number.isSafeInteger(q.offset) || q.offset < 0) throw new RangeError(`bad offset ${q.offset}`);
  const who = owner.toLowerCase();
  const filter: Filter = { type: q.type, status: q.status };
  const want = q.offset + q.limit;
  const page = async () => {
    const orders: Order[] = [];
    if (q.limit === 0) return orders;
    const entries = kv.list<Order>(
      { prefix: ownerIndexPrefix(who, filter) },
      { ...STRONG, reverse: true, limit: want, batchSize: Math.min(want, MAX_LIST_BATCH) },
    );
    let seen = 0;
    for await (const e of entries) if (seen++ >= q.offset) orders.push(e.value);
    return orders;
  };
  const [orders, counter] = await Promise.all([page(), kv.get<Deno.KvU64>(ownerCounterKey(who, filter), STRONG)]);
  return { orders, total: Number(counter.value?.value ?? 0n) };
}

export type OrderQuery = { type?: OrderType; status?: OrderStatus; limit: number; offset: number };
export type OrderPage = { orders: Order[]; total: number };

/**
 * Pages of `listOrders`, rendered once (`render`: the response bytes, say) and kept per process while the owner's
 * order version is unchanged. Partners poll (spec 6), so most reads repeat the last one: a hit costs no KV read beyond
 * the version, which the caller reads per request (in the JWT gate's read). Every write to an owner's orders bumps
 * that version in its own atomic (addOrderCreate, addOrderUpdate), so a page is never served after a write that
 * committed before its request's version read, from this process or another one on the same KV.
 * The version is read before the page, so a cached page is never older than the version it is filed under.
 */
const pageKey = (who: string, q: OrderQuery) => `${who}|${q.type ?? ANY}|${q.status ?? ANY}|${q.limit}|${q.offset}`;
const versionOf = (entry: Deno.KvEntryMaybe<unknown>) => entry.value instanceof Deno.KvU64 ? entry.value.value : 0n;

export class OrderPageCache<T = OrderPage> {
  readonly #pages = new Map<string, { version: bigint; value: T }>();
  readonly #render: (page: OrderPage, q: OrderQuery) => T;

  constructor(
    private readonly kv: Deno.Kv,
    render?: (page: OrderPage, q: OrderQuery) => T,
    private readonly maxEntries = 5_000,
  ) {
    this.#render = render ?? ((page) => page as T);
  }

  /** The page filed under exactly this version, if any: the hot path, without an await. */
  cached(owner: string, q: OrderQuery, versionEntry: Deno.KvEntryMaybe<unknown>): T | undefined {
    const key = pageKey(owner.toLowerCase(), q);
    const hit = this.#pages.get(key);
    if (hit === undefined || hit.version !== versionOf(versionEntry)) return undefined;
    if (this.#pages.size > 1) {
      this.#pages.delete(key); // re-inserted: Map order is the LRU order
      this.#pages.set(key, hit);
    }
    return hit.value;
  }

  /** `versionEntry`: the owner's version entry when the caller already read it (in the same snapshot as its auth). */
  async list(owner: string, q: OrderQuery, versionEntry?: Deno.KvEntryMaybe<unknown>): Promise<T> {
    const who = owner.toLowerCase();
    const entry = versionEntry ?? await this.kv.get<Deno.KvU64>(ownerVersionKey(who), STRONG);
    const hit = this.cached(who, q, entry);
    if (hit !== undefined) return hit;
    const version = versionOf(entry);
    const key = pageKey(who, q);
    const value = this.#render(await listOrders(this.kv, who, q), q);
    // A slower miss must not replace a page filed under a newer version.
    const now = this.#pages.get(key);
    if (now && now.version > version) return value;
    this.#pages.delete(key);
    this.#pages.set(key, { version, value });
    if (this.#pages.size > this.maxEntries) this.#pages.delete(this.#pages.keys().next().value!);
    return value;
  }
}

/** A place in an owner's change index: after the order `id` changed at `at` (`id` "" is before every order at `at`). */
export interface ChangePosition {
  at: string;
  id: string;
}

/**
 * How long a change stays out of incremental sync after its `updatedAt`. That time is read from the writer's clock
 * just before its commit (updateOrder; a new order's `createdAt` when the watcher records it), so a write can commit a
 * moment after another one with a later time: a reader that had already moved its position past the later one would
 * never see the earlier one. Serving only changes older than this margin (commit latency plus clock skew between the
 * processes sharing one KV, with room to spare) keeps every position final: nothing can still land behind it.
 */
export const ORDER_SYNC_SETTLE_MS = 2_000;
/** At most this many index entries are read for one filtered sync page (a page may then hold fewer orders). */
const MAX_SYNC_SCAN = 1_000;

export interface OrderChangesQuery {
  type?: OrderType;
  status?: OrderStatus;
  limit: number;
  /** Start after this position (exclusive). */
  after: ChangePosition;
  /** Changes at or after this time are not served yet (ORDER_SYNC_SETTLE_MS before now). */
  settledBefore: string;
}

/**
 * One page of an owner's orders by last change, oldest first, after `q.after`: the orders matching `type`/`status`,
 * the position to continue from (the last entry read, matching or not) and whether entries remain before
 * `settledBefore`. One list of at most `limit + 1` entries without a filter, at most MAX_SYNC_SCAN + 1 with one.
 * Inserts and changes land after every served position (they are newer than `settledBefore`), so paging on never
 * misses nor repeats an order that did not change meanwhile; one that changed shows again at its new place.
 */
export async function listOrderChanges(
  kv: Deno.Kv,
  owner: string,
  q: OrderChangesQuery,
): Promise<{ orders: Order[]; next: ChangePosition; hasMore: boolean; total: number }> {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new RangeError(`bad limit ${q.limit}`);
  const who = owner.toLowerCase();
  const prefix = changeIndexPrefix(who);
  const filtered = q.type !== undefined || q.status !== undefined;
  const scanCap = filtered ? MAX_SYNC_SCAN : q.limit;
  const start = [...prefix, q.after.at, q.after.id];
  const end = [...prefix, q.settledBefore];
  const page = async () => {
    const orders: Order[] = [];
    let next = q.after;
    let hasMore = false;
    let scanned = 0;
    if (q.after.at >= q.settledBefore) return { orders, next, hasMore };
    const entries = kv.list<Order>({ start, end }, {
      ...STRONG,
      limit: scanCap + 2,
      batchSize: Math.min(scanCap + 2, MAX_LIST_BATCH),
    });
    for await (const e of entries) {
      if (e.key.length === start.length && e.key[2] === q.after.at && e.key[3] === q.after.id) continue; // exclusive
      if (orders.length === q.limit || scanned === scanCap) {
        hasMore = true;
        break;
      }
      scanned++;
      next = { at: e.key[2] as string, id: e.key[3] as string };
      const o = e.value;
      if ((q.type === undefined || o.type === q.type) && (q.status === undefined || o.status === q.status)) {
        orders.push(o);
      }
    }
    return { orders, next, hasMore };
  };
  const filter: Filter = { type: q.type, status: q.status };
  const [result, counter] = await Promise.all([page(), kv.get<Deno.KvU64>(ownerCounterKey(who, filter), STRONG)]);
  return { ...result, total: Number(counter.value?.value ?? 0n) };
}

/**
 * Adds orders stored before the change index existed to it, once per KV (kv/open.ts runs it at every open; afterwards
 * one read). Each order is added in its own atomic checked against the order as read, so an update racing it either
 * commits after it (and moves the entry) or makes it re-read the order and find the entry the update wrote.
 */
export async function indexOrderChanges(kv: Deno.Kv): Promise<void> {
  if ((await kv.get(CHANGE_INDEX_READY_KEY)).value !== null) return;
  let found = false;
  for await (const e of kv.list<unknown>({ prefix: ["order"] }, { batchSize: MAX_LIST_BATCH })) {
    found = true;
    for (let entry: Deno.KvEntryMaybe<unknown> = e; entry.versionstamp !== null;) {
      const parsed = parseOrder(entry.value);
      if (!parsed.ok) {
        // Never indexed on a guess (getOrder refuses it too); named so an operator can repair it.
        console.error(`order ${String(entry.key[1])} fails its schema; not added to the change index`);
        break;
      }
      if ((await kv.atomic().check(entry).set(changeIndexKey(parsed.order), parsed.order).commit()).ok) break;
      entry = await kv.get<unknown>(entry.key, STRONG); // changed meanwhile: index it as it is now
    }
  }
  // A KV with no order is left unwritten; orders added later are indexed as they are written.
  if (found) await kv.set(CHANGE_INDEX_READY_KEY, true);
}

/** Ids of orders in `status` across all owners, oldest first: the pipeline's sweep of due work. */
export async function listOrderIdsByStatus(kv: Deno.Kv, status: OrderStatus, limit?: number): Promise<string[]> {
  const ids: string[] = [];
  if (limit === 0) return ids;
  const batchSize = limit === undefined ? undefined : Math.min(limit, MAX_LIST_BATCH);
  for await (const e of kv.list<string>({ prefix: statusIndexPrefix(status) }, { ...STRONG, limit, batchSize })) {
    ids.push(e.value);
  }
  return ids;
}

/**
 * How many orders there are of each type and status, summed over the per-owner counters: one list of at most 22
 * entries per owner whatever the number of orders (not a global counter, which every order write would contend on).
 * For /metrics (actors/metrics.ts). A list is not a snapshot: under concurrent writes a move may be counted in both
 * of its statuses or in neither, until the next read.
 */
export async function countOrdersByTypeAndStatus(kv: Deno.Kv): Promise<Record<OrderType, Record<OrderStatus, number>>> {
  const zero = () => Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<OrderStatus, number>;
  const counts: Record<OrderType, Record<OrderStatus, number>> = { mint: zero(), burn: zero() };
  for await (const e of kv.list<Deno.KvU64>({ prefix: ["order_count"] }, { batchSize: MAX_LIST_BATCH })) {
    const [, , type, status] = e.key;
    if (type === ANY || status === ANY || !(e.value instanceof Deno.KvU64)) continue;
    const row = counts[type as OrderType];
    if (row && (status as OrderStatus) in row) row[status as OrderStatus] += Number(e.value.value);
  }
  return counts;
}
