/**
 * The order state machine of spec section 3 as one pure function: `transition(order, event, now)` returns the next
 * order or an error naming the refused move. It decides; it does no I/O. Actors and operator commands apply it.
 *
 * Moves beyond the spec's table, decided here:
 * - pending -> failed on `confirmationTimeout`: a deposit that never reaches its confirmations (spec message
 *   `Blockchain confirmation timeout`) fails while still pending, since it never was processed.
 * - pending|processing -> cancelled by an operator, only while no outgoing transaction was recorded.
 * - failed -> pending|processing by an operator retry, only for causes that may pass (see RETRYABLE).
 * - minting|burning -> processing on `txDead`: the recorded transaction is proven never to be mined (its proof is
 *   kept in `details.deadIntents`), so the next step may sign a new one. A mint is safe to re-sign: the actor asks
 *   the contract first, and the contract refuses a second mint of the same deposit id. Back in processing, the order
 *   may also be cancelled by an operator.
 */
import type { Consumed, DeathProof, Expiry } from "../chains/adapter.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import type { Order } from "../kv/orders.ts";

export const ERROR_MESSAGES = {
  insufficientDeposit: "Insufficient deposit amount",
  walletInactive: "Wallet address inactive",
  confirmationTimeout: "Blockchain confirmation timeout",
  mintingError: "Minting contract error",
  belowMinimumBurn: "Amount below minimum burn",
  invalidDestination: "Invalid destination address",
  payoutFailed: "Transaction failed on destination chain",
  sourceChanged: "Source transfer changed by a chain reorganization",
} as const;

/** Failures an operator may retry, and the status the order goes back to. */
const RETRYABLE: Record<string, "pending" | "processing"> = {
  [ERROR_MESSAGES.confirmationTimeout]: "pending",
  [ERROR_MESSAGES.walletInactive]: "processing",
  [ERROR_MESSAGES.mintingError]: "processing",
  [ERROR_MESSAGES.payoutFailed]: "processing",
};

/** A signed outgoing transaction, committed before it is broadcast (DESIGN.md invariant 2). */
export interface Intent {
  chain: ChainSymbol;
  txHash: string;
  raw: string;
  preparedAt: string;
  /** Past this it can never be included: what proves it dead once the chain is past it. */
  expiry?: Expiry;
  /** The coins, nonce or sequence it uses up: released (coins) when it is proven dead. */
  consumes?: Consumed;
}

/**
 * A recorded transaction proven dead, kept on the order for ever: why a second one was signed. `proof` is the
 * adapter's structured proof (plain JSON, chains/adapter.ts `DeathProof`), `detail` the same in words.
 */
export interface DeadIntent extends Intent {
  proof: DeathProof;
  detail: string;
  deadAt: string;
}

export type OrderEvent =
  | { type: "confirmed" }
  | { type: "confirmationTimeout" }
  | { type: "rejected"; message: string; details?: Record<string, unknown> }
  | { type: "intentRecorded"; intent: Intent; extra?: Record<string, unknown> }
  | { type: "txConfirmed"; txHash: string }
  | { type: "txFailed"; message: string }
  | { type: "txDead"; proof: DeathProof; detail: string }
  | { type: "cancel"; reason: string }
  | { type: "retry"; confirmBy: string };

export type TransitionResult = { ok: true; order: Order } | { ok: false; error: string };

export function intentOf(order: Order): Intent | undefined {
  return order.details.intent as Intent | undefined;
}

export function isTerminal(order: Order): boolean {
  return order.status === "completed" || order.status === "failed" || order.status === "cancelled";
}

export function transition(order: Order, event: OrderEvent, now: Date): TransitionResult {
  const at = now.toISOString();
  const refuse = () => ({ ok: false as const, error: `${event.type} is not allowed for a ${order.status} order` });
  const to = (status: Order["status"], patch: Partial<Order> = {}, details: Record<string, unknown> = {}) => {
    const merged: Record<string, unknown> = { ...order.details, ...details };
    for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
    return { ok: true as const, order: { ...order, ...patch, status, updatedAt: at, details: merged } };
  };

  switch (event.type) {
    case "confirmed":
      return order.status === "pending" ? to("processing", {}, { confirmedAt: at }) : refuse();
    case "confirmationTimeout":
      return order.status === "pending" ? to("failed", { errorMessage: ERROR_MESSAGES.confirmationTimeout }) : refuse();
    case "rejected":
      return order.status === "processing" ? to("failed", { errorMessage: event.message }, event.details) : refuse();
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
      const attempts = [...((order.details.failedIntents as Intent[] | undefined) ?? []), intent];
      return to("failed", { errorMessage: event.message, transactionHash: intent.txHash }, {
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
        deadIntents: [...((order.details.deadIntents as DeadIntent[] | undefined) ?? []), dead],
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
      const back = order.status === "failed" && order.errorMessage ? RETRYABLE[order.errorMessage] : undefined;
      if (!back) return refuse();
      const retries = Number(order.details.retries ?? 0) + 1;
      return to(back, { errorMessage: null, transactionHash: null }, {
        retries,
        confirmBy: back === "pending" ? event.confirmBy : order.details.confirmBy,
      });
    }
  }
}
