/**
 * Operator interventions on orders, applied through the same pure `transition` as the actors: cancel (only while no
 * outgoing transaction is recorded: before the first, or after the recorded one was proven dead) and retry (a failed
 * order whose cause may pass). Each is one atomic,
 * checked against the order version read, together with the order's schedule and doorbell.
 */
import { addOrderUpdate, getOrder, type Order } from "../kv/orders.ts";
import { addReschedule, dueAtKey } from "../kv/pipeline.ts";
import { WAKE, type WakeMessage } from "./order_actor.ts";
import { isTerminal, type OrderEvent, transition } from "./transition.ts";

export type OperatorResult = { ok: true; order: Order } | { ok: false; error: string };

export async function applyOperatorEvent(kv: Deno.Kv, orderId: string, event: OrderEvent, now = new Date()) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [entry, due] = await Promise.all([getOrder(kv, orderId), kv.get<number>(dueAtKey(orderId))]);
    if (entry.versionstamp === null) return { ok: false, error: `no order ${orderId}` } satisfies OperatorResult;
    // Not changed on a guess: the operator sees which fields are wrong (deno task admin order show).
    if (entry.invalid) return { ok: false, error: entry.invalid.message } satisfies OperatorResult;
    const result = transition(entry.value, event, now);
    if (!result.ok) return result;
    const atomic = kv.atomic();
    addOrderUpdate(atomic, entry, result.order);
    const next = isTerminal(result.order) ? null : now.getTime();
    addReschedule(atomic, orderId, due, next);
    if (next !== null) atomic.enqueue({ kind: WAKE, orderId } satisfies WakeMessage);
    if ((await atomic.commit()).ok) return { ok: true, order: result.order } satisfies OperatorResult;
  }
  return { ok: false, error: `order ${orderId} kept changing; try again` } satisfies OperatorResult;
}
