/**
 * The order state machine of spec section 3 as one pure function: `transition(order, event, now)` returns the next
 * order or an error naming the refused move. It decides; it does no I/O. Actors and operator commands apply it.
 *
 * Moves beyond the spec's table, decided here:
 * - pending -> failed on `confirmationTimeout`: a deposit that never reaches its confirmations (spec message
 *   `Blockchain confirmation timeout`) fails while still pending, since it never was processed.
 * - pending|processing -> cancelled by an operator, only while no outgoing transaction was recorded.
 * - failed -> pending|processing by an operator retry, only for causes that may pass (see RETRYABLE): decided by the
 *   failure's kind (`errorKind`), never by its message text.
 * - minting|burning -> processing on `txDead`: the recorded transaction is proven never to be mined (its proof is
 *   kept in `details.deadIntents`), so the next step may sign a new one. A mint is safe to re-sign: the actor asks
 *   the contract first, and the contract refuses a second mint of the same deposit id. Back in processing, the order
 *   may also be cancelled by an operator.
 */
import type { DeathProof } from "../chains/adapter.ts";
import {
  type DeadIntent,
  type DetailsPatch,
  type Intent,
  mergeDetails,
  type Order,
  type OrderFieldsPatch,
  parseOrder,
  type SourceChange,
} from "../model/order.ts";
import { ORDER_ERRORS, type OrderErrorKind } from "../messages.ts";

/** Failures an operator may retry, by kind, and the status the order goes back to. */
const RETRYABLE: Partial<Record<OrderErrorKind, "pending" | "processing">> = {
  confirmation_timeout: "pending",
  wallet_inactive: "processing",
  minting_error: "processing",
  payout_failed: "processing",
};

export type { DeadIntent, Intent };

/**
 * The `errorMessage` texts of orders failed before the kind was stored with them, frozen as they were written then:
 * a later rewording in messages.ts must not make an old order lose its kind.
 */
const KIND_OF_LEGACY_MESSAGE: Readonly<Record<string, OrderErrorKind>> = {
  "Insufficient deposit amount": "insufficient_deposit",
  "Wallet address inactive": "wallet_inactive",
  "Blockchain confirmation timeout": "confirmation_timeout",
  "Minting contract error": "minting_error",
  "Amount below minimum burn": "below_minimum_burn",
  "Invalid destination address": "invalid_destination",
  "Transaction failed on destination chain": "payout_failed",
  "Source transfer changed by a chain reorganization": "source_changed",
};

/** Why a failed order failed: its stored kind, or for an order stored before kinds, the kind of its message. */
export function errorKindOf(order: Order): OrderErrorKind | undefined {
  if (order.errorKind) return order.errorKind;
  return order.errorMessage === null ? undefined : KIND_OF_LEGACY_MESSAGE[order.errorMessage];
}

/** Whether an operator may retry `order`, and the status it would go back to. */
export function retryTarget(order: Order): "pending" | "processing" | undefined {
  const kind = order.status === "failed" ? errorKindOf(order) : undefined;
  return kind === undefined ? undefined : RETRYABLE[kind];
}

export type OrderEvent =
  | { type: "confirmed" }
  | { type: "confirmationTimeout" }
  | { type: "rejected"; kind: OrderErrorKind; details?: { sourceChange: SourceChange } }
  | { type: "intentRecorded"; intent: Intent; extra?: { nativeAmount: string; remainderWei: string } }
  | { type: "txConfirmed"; txHash: string }
  | { type: "txFailed"; kind: OrderErrorKind }
  | { type: "txDead"; proof: DeathProof; detail: string }
  | { type: "cancel"; reason: string }
  | { type: "retry"; confirmBy: string };

export type TransitionResult = { ok: true; order: Order } | { ok: false; error: string };

export function intentOf(order: Order): Intent | undefined {
  return order.details.intent;
}

export function isTerminal(order: Order): boolean {
  return order.status === "completed" || order.status === "failed" || order.status === "cancelled";
}

export function transition(order: Order, event: OrderEvent, now: Date): TransitionResult {
  const at = now.toISOString();
  const refuse = () => ({ ok: false as const, error: `${event.type} is not allowed for a ${order.status} order` });
  // Every result is checked against the schema: a move that would leave the order without what its next step
  // needs is refused here, naming the field, instead of failing later at the write or in the step that reads it.
  const to = (status: Order["status"], patch: OrderFieldsPatch = {}, details: DetailsPatch = {}): TransitionResult => {
    const next = parseOrder(mergeDetails(order, details, { ...patch, status, updatedAt: at }));
    return next.ok ? next : { ok: false, error: `${event.type}: ${next.error.message}` };
  };

  // The partner sees the message; decisions read the kind stored beside it.
  const failure = (kind: OrderErrorKind) => ({ errorMessage: ORDER_ERRORS[kind], errorKind: kind });

  switch (event.type) {
    case "confirmed":
      return order.status === "pending" ? to("processing", {}, { confirmedAt: at }) : refuse();
    case "confirmationTimeout":
      return order.status === "pending" ? to("failed", failure("confirmation_timeout")) : refuse();
    case "rejected":
      return order.status === "processing" ? to("failed", failure(event.kind), event.details) : refuse();
    case "intentRecorded":
      if (order.status !== "processing" || intentOf(order)) return refuse();
      return to(order.type === "mint" ? "minting" : "burning", {}, { ...event.extra, intent: event.intent });
    case "txConfirmed": {
      const intent = intentOf(order);
      if ((order.status !== "minting" && order.status !== "burning") || !intent) return refuse();
      return to("completed", { transactionHash: event.txHash });
    }
    case "txFailed": {
      const intent = intentOf(order);
      if ((order.status !== "minting" && order.status !== "burning") || !intent) return refuse();
      // The failed transaction is kept as a proven-dead attempt; a retry may then sign a new one.
      const attempts = [...(order.details.failedIntents ?? []), intent];
      return to("failed", { ...failure(event.kind), transactionHash: intent.txHash }, {
        intent: undefined,
        failedIntents: attempts,
      });
    }
    case "txDead": {
      const intent = intentOf(order);
      if ((order.status !== "minting" && order.status !== "burning") || !intent) return refuse();
      const dead: DeadIntent = { ...intent, proof: event.proof, detail: event.detail, deadAt: at };
      return to("processing", {}, {
        intent: undefined,
        deadIntents: [...(order.details.deadIntents ?? []), dead],
      });
    }
    case "cancel": {
      const intent = intentOf(order);
      if (intent && !isTerminal(order)) {
        return {
          ok: false as const,
          error: `cancel is not allowed for a ${order.status} order: its transaction ${intent.txHash} may still be ` +
            "mined; it can be cancelled once that transaction is proven dead",
        };
      }
      if (order.status !== "pending" && order.status !== "processing") return refuse();
      return to("cancelled", {}, { cancelReason: event.reason });
    }
    case "retry": {
      const back = retryTarget(order);
      if (!back) return refuse();
      const retries = (order.details.retries ?? 0) + 1;
      return to(back, { errorMessage: null, errorKind: null, transactionHash: null }, {
        retries,
        confirmBy: back === "pending" ? event.confirmBy : order.details.confirmBy,
      });
    }
  }
}
