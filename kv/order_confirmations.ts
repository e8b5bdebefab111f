/**
 * What `order.confirmations` events (actors/confirmation_events.ts) read and write: the pending orders with the count
 * last announced for each, and the event committed with its marker. The marker is the one record of what was
 * announced, so a count is announced once whichever process runs the tick.
 */
import { addOutboxEvent } from "./order_events.ts";
import { listOrderIdsByStatus, orderKey } from "./orders.ts";
import { type Confirmations, newOrderId, type Order, parseOrder, toOrderView } from "../model/order.ts";

/** The count last announced for an order (a number). */
export const announcedConfirmationsKey = (orderId: string): Deno.KvKey => ["order_confirmations_announced", orderId];
/** Kept past any pending wait (the confirmation timeout is hours): an order still pending after it is announced again. */
const MARKER_TTL_MS = 30 * 24 * 3600_000;
const MAX_GET_MANY = 10;
const STRONG = { consistency: "strong" } as const;

export interface PendingForConfirmations {
  entry: Deno.KvEntry<Order>;
  announced: Deno.KvEntryMaybe<number>;
}

/**
 * Up to `limit` pending orders (oldest first) with their markers, each pair read together. An order that is no
 * longer pending or fails its schema is left out (the latter is the pipeline's to report: never acted on here).
 */
export async function listPendingForConfirmations(kv: Deno.Kv, limit: number): Promise<PendingForConfirmations[]> {
  const ids = await listOrderIdsByStatus(kv, "pending", limit);
  const out: PendingForConfirmations[] = [];
  for (let i = 0; i < ids.length; i += MAX_GET_MANY / 2) {
    const batch = ids.slice(i, i + MAX_GET_MANY / 2);
    const entries = await kv.getMany<unknown[]>(
      batch.flatMap((id) => [orderKey(id), announcedConfirmationsKey(id)]),
      STRONG,
    );
    for (let j = 0; j < batch.length; j++) {
      const order = entries[2 * j];
      const parsed = order.versionstamp === null ? null : parseOrder(order.value);
      if (!parsed?.ok || parsed.order.status !== "pending") continue;
      out.push({
        entry: { ...order, value: parsed.order } as Deno.KvEntry<Order>,
        announced: entries[2 * j + 1] as Deno.KvEntryMaybe<number>,
      });
    }
  }
  return out;
}

/**
 * Marks `count` as announced for `orderId` in `atomic`: by the tick's events below, and by the commit creating the
 * order whose `order.pending` event already carries its first count (actors/watcher.ts), so that count is not sent
 * twice.
 */
export function addAnnouncedConfirmations(atomic: Deno.AtomicOperation, orderId: string, count: number) {
  return atomic.set(announcedConfirmationsKey(orderId), count, { expireIn: MARKER_TTL_MS });
}

/** Adds the event announcing `c` for `o` and its marker to `atomic` (the caller checks the order and the marker). */
export function addConfirmationsEvent(atomic: Deno.AtomicOperation, o: Order, c: Confirmations, at: string) {
  addAnnouncedConfirmations(atomic, o.id, c.confirmations);
  return addOutboxEvent(atomic, {
    id: newOrderId(),
    type: "order.confirmations",
    createdAt: at,
    owner: o.owner,
    order: { ...toOrderView(o), ...c },
  });
}
