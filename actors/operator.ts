/**
 * Operator interventions on orders, applied through the same pure `transition` as the actors: cancel (only while no
 * outgoing transaction is recorded: before the first, or after the recorded one was proven dead) and retry (a failed
 * order whose cause may pass). Each is one atomic, checked against the order version read, together with the order's
 * schedule and doorbell.
 *
 * A `minting`/`burning` order (a stuck transaction) is cancelled or retried only once the chain proves its recorded
 * transaction dead: `settleStuckOrder` asks the chain, then applies `txDead` (and `cancel`) in one commit that also
 * releases what the transaction held, exactly as the order actor would. While the transaction may still land, it
 * refuses and changes nothing.
 */
import type { Chains } from "../chains/adapter.ts";
import { addOrderUpdate, getOrder } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { addReschedule, dueAtKey, orderHoldKey } from "../kv/pipeline.ts";
import { deadDecision } from "./order_actor.ts";
import { lookAtSentTx } from "./sent_tx.ts";
import { ORDER_POLICY } from "./follow_up.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { WAKE, type WakeMessage } from "./wake.ts";
import { intentOf, isTerminal, type OrderEvent, transition } from "./transition.ts";

/** A refusal says whether the order exists at all (`missing`: a 404 for the admin API), besides why. */
export type OperatorResult = { ok: true; order: Order } | { ok: false; error: string; missing?: true };

/** Adds the operator's audit entry to the commit that changes the order (kv/audit.ts). */
export type OperatorAudit = (atomic: Deno.AtomicOperation, before: Order, after: Order) => void;

export async function applyOperatorEvent(
  kv: Deno.Kv,
  orderId: string,
  event: OrderEvent,
  now = new Date(),
  audit?: OperatorAudit,
) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [entry, due] = await Promise.all([getOrder(kv, orderId), kv.get<number>(dueAtKey(orderId))]);
    if (entry.versionstamp === null) {
      return { ok: false, error: `no order ${orderId}`, missing: true } satisfies OperatorResult;
    }
    // Not changed on a guess: the operator sees which fields are wrong (deno task admin order show).
    if (entry.invalid) return { ok: false, error: entry.invalid.message } satisfies OperatorResult;
    const result = transition(entry.value, event, now);
    if (!result.ok) return result;
    const order = result.order;
    if (await commitOperatorUpdate(kv, entry, due, order, now, (a) => audit?.(a, entry.value, order))) {
      return { ok: true, order: result.order } satisfies OperatorResult;
    }
  }
  return { ok: false, error: `order ${orderId} kept changing; try again` } satisfies OperatorResult;
}

/** Whether the order waits on a recorded transaction: the case `settleStuckOrder` handles. */
export function isStuckOnTransaction(order: Order): boolean {
  return (order.status === "minting" || order.status === "burning") && intentOf(order) !== undefined;
}

/**
 * Cancels or retries an order stuck on its recorded transaction, once the chain proves that transaction dead: the
 * order goes back to processing (`txDead`, the proof kept in `deadIntents`), and for a cancel on to cancelled, in one
 * commit that frees the transaction's coins. A retry then signs a new transaction at the order's next step.
 */
export async function settleStuckOrder(
  kv: Deno.Kv,
  chains: Chains,
  orderId: string,
  action: "cancel" | "retry",
  now = new Date(),
  audit?: OperatorAudit,
): Promise<OperatorResult> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [entry, due] = await Promise.all([getOrder(kv, orderId), kv.get<number>(dueAtKey(orderId))]);
    if (entry.versionstamp === null) return { ok: false, error: `no order ${orderId}`, missing: true };
    if (entry.invalid) return { ok: false, error: entry.invalid.message };
    const order = entry.value;
    const intent = intentOf(order);
    if (!isStuckOnTransaction(order) || !intent) {
      return { ok: false, error: `order ${orderId} is ${order.status}: it waits on no recorded transaction` };
    }
    // Looked at, never sent: the one rule under the order policy, as the order actor would apply it (actors/sent_tx.ts).
    // Required confirmations do not matter here: only a proof of death lets the operator act.
    const { status, next: followed } = await lookAtSentTx(chains, intent, 1, ORDER_POLICY);
    if (followed.kind !== "dead") {
      const why = followed.kind === "failed"
        ? "it failed on chain; the pipeline fails the order, which can then be retried"
        : `the chain says it is ${status.state}, so it may still land`;
      return {
        ok: false,
        error: `order ${orderId}: ${action} refused: its transaction ${intent.txHash} on ${intent.chain} is not ` +
          `proven dead (${why}); nothing was changed`,
      };
    }
    // The same decision as the order actor's: `txDead`, releasing what the transaction held.
    const dead = deadDecision(intent, followed.proof, followed.detail);
    const events: OrderEvent[] = [dead.event];
    if (action === "cancel") events.push({ type: "cancel", reason: "cancelled by operator" });
    let next = order;
    for (const event of events) {
      const result = transition(next, event, now);
      if (!result.ok) return result;
      next = result.order;
    }
    const effects = (atomic: Deno.AtomicOperation) => {
      addSentTxEffects(atomic, dead.effects);
      audit?.(atomic, order, next);
    };
    if (await commitOperatorUpdate(kv, entry, due, next, now, effects)) return { ok: true, order: next };
  }
  return { ok: false, error: `order ${orderId} kept changing; try again` };
}

async function commitOperatorUpdate(
  kv: Deno.Kv,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  order: Order,
  now: Date,
  effects?: (atomic: Deno.AtomicOperation) => void,
): Promise<boolean> {
  const atomic = kv.atomic();
  addOrderUpdate(atomic, entry, order);
  const next = isTerminal(order) ? null : now.getTime();
  addReschedule(atomic, order.id, due, next);
  if (next !== null) atomic.enqueue({ kind: WAKE, orderId: order.id } satisfies WakeMessage);
  // A cancelled order held after a reorg needs its hold no more.
  else atomic.delete(orderHoldKey(order.id));
  effects?.(atomic);
  return (await atomic.commit()).ok;
}
