/**
 * Order events (docs/streaming.md, docs/webhooks.md): every order creation and status change, as partners see it, for
 * SSE and webhooks.
 *
 * INTERFACE FIXED BY THE LEAD; the `events` branch implements it, the `webhooks` branch codes against it.
 *
 * How it works (the `events` branch builds this):
 * 1. Outbox: `addOrderCreate` and `addOrderUpdate` (kv/orders.ts) add an outbox record to the same atomic that
 *    creates the order or changes its status, so an event exists exactly when the change committed.
 * 2. Sequencer: `sequenceOrderEvents` (one process at a time, under a KV lease, run by the pipeline runtime) lists
 *    the outbox in commit (versionstamp) order, gives each event the next gapless per-owner `seq`, appends it to the
 *    owner's event log, lets every `EventSink` add its writes (webhook deliveries) and deletes the outbox record, all
 *    in one atomic per batch. Per-order order holds because an order's changes commit one after another.
 * 3. Readers: `GET /orders/stream` (SSE, `id:` = seq, `Last-Event-ID` resumes) reads `listOwnerEvents`.
 */
import type { Confirmations, OrderStatus, OrderView } from "../model/order.ts";

/** An order event as partners receive it (SSE `data:` and the webhook body). */
export interface OrderEvent {
  /** Globally unique, stable across re-deliveries and replays (UUIDv7 made when the change committed). */
  id: string;
  /**
   * `order.<status>`: the status the order entered (`order.pending` for a new deposit's order, and so on); or
   * `order.confirmations`: a pending order's source transfer has a new count of confirmations
   * (actors/confirmation_events.ts).
   */
  type: `order.${OrderStatus}` | "order.confirmations";
  /** ISO time of the change (the order's `updatedAt`, or `createdAt` for a new order). */
  createdAt: string;
  /** The partner's wallet (lowercase) the order belongs to. */
  owner: string;
  /** Gapless per owner, from 1, in commit order: SSE's `id:`. */
  seq: number;
  /** The order as `GET /orders` shows it, at the time of the change. */
  order: OrderView & Partial<Confirmations>;
}

/**
 * Something that reacts to sequenced events inside the sequencer's atomic (the webhook deliveries).
 * `prepare` is called once per batch before the atomic is built: it reads what it needs (for example each owner's
 * endpoints) and returns a function adding, for one event, its writes to the atomic and the checks that make the
 * commit fail if what it read has changed meanwhile (the sequencer then retries the batch).
 */
export interface EventSink {
  prepare(
    kv: Deno.Kv,
    events: readonly OrderEvent[],
  ): Promise<(atomic: Deno.AtomicOperation, event: OrderEvent) => void>;
}

// ---- keys ----

/** An event committed with its order change and not sequenced yet; the value is the event without `seq`. */
export type OutboxEvent = Omit<OrderEvent, "seq">;
/** Exported for tests (a crash between the order write and the sequencer leaves records here). */
export const outboxKey = (id: string): Deno.KvKey => ["order_event_outbox", id];
const OUTBOX_PREFIX: Deno.KvKey = ["order_event_outbox"];
/** The owner's last sequenced `seq` (a number); watched by the SSE route. Never expires, so seq never restarts. */
export const ownerSeqKey = (owner: string): Deno.KvKey => ["order_event_seq", owner];
/** The owner's event log, in seq order. */
export const ownerEventKey = (owner: string, seq: number): Deno.KvKey => ["order_event", owner, seq];
/**
 * Changed by every sequencer commit and checked by the next: a sequencer that read the outbox before another one's
 * commit cannot commit, so an outbox record is sequenced at most once even without the lease.
 */
const SEQUENCER_KEY: Deno.KvKey = ["order_event_sequencer"];

/** How long an owner's events stay readable (SSE replay); the log entries expire after it. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const STRONG = { consistency: "strong" } as const;

// ---- outbox (written with the order change) ----

/** Adds `event` to the outbox in the caller's atomic (kv/orders.ts, on a creation or a status change). */
export function addOutboxEvent(atomic: Deno.AtomicOperation, event: OutboxEvent): Deno.AtomicOperation {
  return atomic.set(outboxKey(event.id), event);
}

/** Every outbox record in commit order (versionstamp, then key for records of one commit). */
export async function listOutbox(kv: Deno.Kv): Promise<Deno.KvEntry<OutboxEvent>[]> {
  const entries: Deno.KvEntry<OutboxEvent>[] = [];
  for await (const e of kv.list<OutboxEvent>({ prefix: OUTBOX_PREFIX }, { ...STRONG, batchSize: 1000 })) {
    entries.push(e);
  }
  const keyOf = (e: Deno.KvEntry<OutboxEvent>) => String(e.key[1]);
  return entries.sort((a, b) =>
    a.versionstamp < b.versionstamp ? -1 : a.versionstamp > b.versionstamp ? 1 : keyOf(a) < keyOf(b) ? -1 : 1
  );
}

// ---- sequencer ----

/**
 * Deno KV's limits of one atomic (measured on Deno 2.9.6: "Too many checks (max 100)", "Too many mutations (max
 * 1000)", "Total mutation size too large (max 819200 bytes)", "Total key size too large (max 81920 bytes)"), with a
 * margin since sizes here are estimates.
 */
const ATOMIC_LIMITS = { checks: 100, mutations: 1000, keyBytes: 60_000, mutationBytes: 600_000 };
/** Events offered to one atomic (and to the sinks' `prepare`) at most. */
const MAX_BATCH_EVENTS = 200;
const DEFAULT_LIMIT = 5_000;
const MAX_CONFLICTS = 50;

type Op = (a: Deno.AtomicOperation) => void;

/** Approximate encoded size of a key or value (the limits count serialized bytes). */
function sizeOf(v: unknown): number {
  if (v instanceof Deno.KvU64) return 8;
  if (v instanceof Uint8Array) return v.byteLength;
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x))?.length ?? 8;
  } catch {
    return 1_000;
  }
}

/**
 * Records what is added to an atomic, counting it against ATOMIC_LIMITS, so a batch is cut before Deno refuses it;
 * `replay` then adds the operations to a real atomic. Identical checks are kept once.
 */
class Recorder {
  readonly ops: Op[] = [];
  readonly checkIds = new Set<string>();
  mutations = 0;
  keyBytes = 0;
  mutationBytes = 0;

  /** A recording stand-in for Deno.AtomicOperation (commit is not for sinks to call). */
  asAtomic(): Deno.AtomicOperation {
    const mutation = (key: Deno.KvKey, value: unknown, op: Op) => {
      this.mutations++;
      const k = sizeOf(key);
      this.keyBytes += k;
      this.mutationBytes += k + sizeOf(value);
      this.ops.push(op);
    };
    const atomic = {
      check: (...checks: Deno.AtomicCheck[]) => {
        for (const c of checks) {
          const id = JSON.stringify([c.key, c.versionstamp], (_k, x) => (typeof x === "bigint" ? `${x}n` : x));
          if (this.checkIds.has(id)) continue;
          this.checkIds.add(id);
          this.keyBytes += sizeOf(c.key);
          this.ops.push((a) => a.check(c));
        }
        return atomic;
      },
      mutate: (...ms: Deno.KvMutation[]) => {
        for (const m of ms) mutation(m.key, "value" in m ? m.value : null, (a) => a.mutate(m));
        return atomic;
      },
      set: (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
        mutation(key, value, (a) => a.set(key, value, options));
        return atomic;
      },
      delete: (key: Deno.KvKey) => {
        mutation(key, null, (a) => a.delete(key));
        return atomic;
      },
      sum: (key: Deno.KvKey, n: bigint) => {
        mutation(key, 8, (a) => a.sum(key, n));
        return atomic;
      },
      min: (key: Deno.KvKey, n: bigint) => {
        mutation(key, 8, (a) => a.min(key, n));
        return atomic;
      },
      max: (key: Deno.KvKey, n: bigint) => {
        mutation(key, 8, (a) => a.max(key, n));
        return atomic;
      },
      enqueue: (value: unknown, options?: Parameters<Deno.AtomicOperation["enqueue"]>[1]) => {
        mutation([], value, (a) => a.enqueue(value, options));
        return atomic;
      },
      commit: (): never => {
        throw new Error("an event sink must not commit the sequencer's atomic");
      },
    };
    return atomic as unknown as Deno.AtomicOperation;
  }

  /** The counts after adding `other` (for a trial: an event's operations recorded apart). */
  plus(other: Recorder): boolean {
    const checks = new Set([...this.checkIds, ...other.checkIds]).size;
    return checks <= ATOMIC_LIMITS.checks && this.mutations + other.mutations <= ATOMIC_LIMITS.mutations &&
      this.keyBytes + other.keyBytes <= ATOMIC_LIMITS.keyBytes &&
      this.mutationBytes + other.mutationBytes <= ATOMIC_LIMITS.mutationBytes;
  }

  absorb(other: Recorder) {
    this.ops.push(...other.ops);
    for (const id of other.checkIds) this.checkIds.add(id);
    this.mutations += other.mutations;
    this.keyBytes += other.keyBytes;
    this.mutationBytes += other.mutationBytes;
  }

  replay(atomic: Deno.AtomicOperation): Deno.AtomicOperation {
    for (const op of this.ops) op(atomic);
    return atomic;
  }
}

/** What the sequencer knows between its commits: the sequencer record and each owner's seq record as read. */
interface SequencerState {
  epoch: Deno.KvEntryMaybe<number>;
  seqs: Map<string, Deno.KvEntryMaybe<number>>;
}

async function readSeqs(kv: Deno.Kv, owners: string[], into: Map<string, Deno.KvEntryMaybe<number>>) {
  const missing = owners.filter((o) => !into.has(o));
  for (let i = 0; i < missing.length; i += 10) { // getMany reads at most 10 keys
    const chunk = missing.slice(i, i + 10);
    const entries = await kv.getMany<number[]>(chunk.map(ownerSeqKey), STRONG);
    chunk.forEach((owner, j) => into.set(owner, entries[j]));
  }
}

/**
 * Builds and commits one atomic for the first events of `pending` (already in commit order): returns how many it
 * sequenced, or null when a check failed (another sequencer committed, or a sink's read changed).
 */
async function commitBatch(
  kv: Deno.Kv,
  sinks: readonly EventSink[],
  state: SequencerState,
  pending: Deno.KvEntry<OutboxEvent>[],
  maxEvents: number,
): Promise<number | null> {
  const candidates = pending.slice(0, maxEvents);
  await readSeqs(kv, [...new Set(candidates.map((e) => e.value.owner))], state.seqs);
  // Tentative seqs for every candidate; the ones cut from the atomic get the same seqs in the next batch.
  const next = new Map<string, number>();
  const events: OrderEvent[] = candidates.map(({ value }) => {
    const seq = (next.get(value.owner) ?? state.seqs.get(value.owner)!.value ?? 0) + 1;
    next.set(value.owner, seq);
    return { ...value, seq } as OrderEvent;
  });
  const adders = await Promise.all(sinks.map((s) => s.prepare(kv, events)));

  const epochValue = (state.epoch.value ?? 0) + 1;
  const base = new Recorder();
  base.asAtomic().check(state.epoch).set(SEQUENCER_KEY, epochValue);
  const owners = new Map<string, number>(); // owner -> last seq in this atomic
  let taken = 0;
  for (const event of events) {
    const trial = new Recorder();
    const a = trial.asAtomic();
    if (!owners.has(event.owner)) {
      a.check(state.seqs.get(event.owner)!);
      trial.mutations++; // the owner's seq record, set once per owner below
    }
    a.set(ownerEventKey(event.owner, event.seq), event, { expireIn: EVENT_RETENTION_MS })
      .delete(outboxKey(event.id));
    for (const add of adders) add(a, event);
    if (!base.plus(trial)) break;
    base.absorb(trial);
    owners.set(event.owner, event.seq);
    taken++;
  }
  if (taken === 0) throw new Error(`order event ${events[0].id}: its writes alone exceed one atomic's limits`);
  const atomic = base.replay(kv.atomic());
  for (const [owner, seq] of owners) atomic.set(ownerSeqKey(owner), seq);
  const res = await atomic.commit();
  if (!res.ok) return null;
  state.epoch = { key: SEQUENCER_KEY, value: epochValue, versionstamp: res.versionstamp };
  for (const [owner, seq] of owners) {
    state.seqs.set(owner, { key: ownerSeqKey(owner), value: seq, versionstamp: res.versionstamp });
  }
  return taken;
}

const isLimitError = (err: unknown) => err instanceof TypeError && /too (many|large)/i.test(err.message);

/**
 * Sequences up to `opts.limit` outbox events (see the module comment) and returns how many it sequenced; called by
 * the pipeline runtime under a lease, and correct without it: every commit checks the sequencer record and the
 * owners' seq records as read before the outbox was listed, so of two sequencers racing one commits and the other
 * re-lists. Each commit moves events from the outbox to the log, so a crash anywhere leaves every event either still
 * in the outbox or sequenced, never both nor neither.
 */
export async function sequenceOrderEvents(
  kv: Deno.Kv,
  sinks: readonly EventSink[],
  opts: { limit?: number } = {},
): Promise<number> {
  const limit = opts.limit ?? DEFAULT_LIMIT;
  let done = 0;
  let conflicts = 0;
  let maxEvents = MAX_BATCH_EVENTS;
  while (done < limit) {
    // The sequencer record first: a commit by anyone after this read makes ours fail, so the listing is never stale.
    const state: SequencerState = { epoch: await kv.get<number>(SEQUENCER_KEY, STRONG), seqs: new Map() };
    let pending = await listOutbox(kv);
    if (pending.length === 0) break;
    let conflicted = false;
    while (pending.length > 0 && done < limit) {
      let n: number | null;
      try {
        n = await commitBatch(kv, sinks, state, pending, Math.min(maxEvents, limit - done));
      } catch (err) {
        // A size estimate fell short: smaller atomics.
        if (!isLimitError(err) || maxEvents === 1) throw err;
        maxEvents = Math.max(1, Math.floor(maxEvents / 2));
        continue;
      }
      if (n === null) {
        conflicted = true;
        break;
      }
      done += n;
      pending = pending.slice(n);
    }
    if (conflicted) {
      if (++conflicts > MAX_CONFLICTS) throw new Error(`order events: ${conflicts} conflicting sequencer commits`);
      await new Promise((r) => setTimeout(r, Math.random() * 5 * conflicts));
    }
  }
  return done;
}

/** Whether the outbox holds anything: the idle check of the runtime's loop (one read, no lease, no write). */
export async function hasOutboxEvents(kv: Deno.Kv): Promise<boolean> {
  for await (const _ of kv.list({ prefix: OUTBOX_PREFIX }, { ...STRONG, limit: 1 })) return true;
  return false;
}

// ---- readers ----

/** The owner's events with `seq > afterSeq`, oldest first, at most `limit`. */
export async function listOwnerEvents(
  kv: Deno.Kv,
  owner: string,
  afterSeq: number,
  limit: number,
): Promise<OrderEvent[]> {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError(`bad afterSeq ${afterSeq}`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`bad limit ${limit}`);
  if (limit === 0) return [];
  const who = owner.toLowerCase();
  const events: OrderEvent[] = [];
  const entries = kv.list<OrderEvent>(
    { prefix: ["order_event", who], start: ownerEventKey(who, afterSeq + 1) },
    { ...STRONG, limit, batchSize: Math.min(limit, 1000) },
  );
  for await (const e of entries) events.push(e.value);
  return events;
}

/** The owner's last sequenced seq (0 before the first event): where "from now" starts. */
export async function ownerLastSeq(kv: Deno.Kv, owner: string): Promise<number> {
  return (await kv.get<number>(ownerSeqKey(owner.toLowerCase()), STRONG)).value ?? 0;
}

/**
 * The owner's events newest first, at most `limit`, stopping at the first one `stop` accepts (the order page reads back
 * to its order's creation and no further: actors/ops/order_detail.ts). `complete`: it stopped there or the log ended,
 * rather than at `limit`.
 */
export async function listOwnerEventsNewest(
  kv: Deno.Kv,
  owner: string,
  limit: number,
  stop: (e: OrderEvent) => boolean,
): Promise<{ events: OrderEvent[]; complete: boolean }> {
  const events: OrderEvent[] = [];
  let read = 0;
  const entries = kv.list<OrderEvent>({ prefix: ["order_event", owner.toLowerCase()] }, {
    reverse: true,
    limit,
    batchSize: Math.min(limit, 500),
  });
  for await (const e of entries) {
    read++;
    if (stop(e.value)) return { events, complete: true };
    events.push(e.value);
  }
  return { events, complete: read < limit };
}
