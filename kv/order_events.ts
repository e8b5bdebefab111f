/**
 * Order events (issue 12): every order creation and status change, as partners see it, for SSE and webhooks.
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
import type { OrderStatus, OrderView } from "./orders.ts";

/** An order event as partners receive it (SSE `data:` and the webhook body). */
export interface OrderEvent {
  /** Globally unique, stable across re-deliveries and replays (UUIDv7 made when the change committed). */
  id: string;
  /** `order.<status>`: the status the order entered (`order.pending` for a new deposit's order, and so on). */
  type: `order.${OrderStatus}`;
  /** ISO time of the change (the order's `updatedAt`, or `createdAt` for a new order). */
  createdAt: string;
  /** The partner's wallet (lowercase) the order belongs to. */
  owner: string;
  /** Gapless per owner, from 1, in commit order: SSE's `id:`. */
  seq: number;
  /** The order as `GET /orders` shows it, at the time of the change. */
  order: OrderView;
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

/**
 * Sequences up to `opts.limit` outbox events (see the module comment) and returns how many it sequenced; called by
 * the pipeline runtime under a lease. IMPLEMENTED BY THE `events` BRANCH.
 */
export declare function sequenceOrderEvents(
  kv: Deno.Kv,
  sinks: readonly EventSink[],
  opts?: { limit?: number },
): Promise<number>;

/** The owner's events with `seq > afterSeq`, oldest first, at most `limit`. IMPLEMENTED BY THE `events` BRANCH. */
export declare function listOwnerEvents(
  kv: Deno.Kv,
  owner: string,
  afterSeq: number,
  limit: number,
): Promise<OrderEvent[]>;
