/**
 * The order store: orders by id, the per-owner indexes that serve GET /orders (spec 4.7), a global status index the
 * pipeline sweeps, and per-owner counters that give `total` without a scan. This is the only code that knows these
 * keys; every write keeps order, indexes and counters in one atomic so they can never disagree.
 */
import { addOutboxEvent } from "./order_events.ts";
import { addChartCounts } from "./charts.ts";
import {
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
export function addOrderCreate(atomic: Deno.AtomicOperation, order: Order): Deno.AtomicOperation {
  const o = validOrder(order);
  atomic.check({ key: orderKey(o.id), versionstamp: null }).set(orderKey(o.id), o);
  for (const f of filtersOf(o)) {
    atomic.set(ownerIndexKey(o.owner, f, o.id), o).sum(ownerCounterKey(o.owner, f), ONE);
  }
  addStatusEvent(atomic, o, o.createdAt);
  addChartCounts(atomic, o, o.createdAt); // the overview's hourly charts (kv/charts.ts): a sum, no extra commit
  return atomic.set(statusIndexKey(o.status, o.id), o.id).sum(ownerVersionKey(o.owner), ONE);
}

/**
 * The order event of `o` entering its status (kv/order_events.ts), in the same atomic as the change: an event exists
 * exactly when the change committed.
 */
function addStatusEvent(atomic: Deno.AtomicOperation, o: Order, at: string) {
  addOutboxEvent(atomic, {
    id: newOrderId(),
    type: `order.${o.status}`,
    createdAt: at,
    owner: o.owner,
    order: toOrderView(o),
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
