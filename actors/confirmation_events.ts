/**
 * `order.confirmations` events (docs/streaming.md "Confirmations"): while an order is pending, a partner following the
 * stream or its webhooks learns each new count of confirmations its source transfer has, as `GET /orders` shows it
 * (docs/order-reads.md), without polling.
 *
 * Where the count comes from: the watchers' cursors (kv/chain_tips.ts), which move only when a watcher scans a new
 * block. So this tick reads the cursors (one read), and only when a chain's cursor moved since its last run does it
 * look at that chain's pending orders. For each whose count differs from the one last announced, it commits the event
 * (outbox, kv/order_events.ts) with a marker of the announced count, checked against the order and the marker as read:
 * one event per new count however many processes run the tick, never after the order left pending (the order's
 * check fails), and at most one per block per order (the count changes at most once per block). At rest (no block
 * scanned, or no pending order) it commits nothing (actors/runtime.ts: no commit at rest). Chains final by a flag show
 * 0 until the order leaves pending: nothing to announce there.
 */
import type { ChainSymbol } from "../chains/catalog.ts";
import { ChainTips } from "../kv/chain_tips.ts";
import { addConfirmationsEvent, listPendingForConfirmations } from "../kv/order_confirmations.ts";
import { type ConfirmationRule, type Order, pendingConfirmations } from "../model/order.ts";
import type { PipelineSettings } from "./context.ts";

/** The confirmation rule of `chain` under `settings`: the one place routes/orders.ts and this tick read it from. */
export function confirmationRule(settings: PipelineSettings, chain: ChainSymbol): ConfirmationRule {
  return { required: settings.confirmations(chain), flag: settings.finality(chain).kind === "flag" };
}

/** Pending orders looked at per run at most; the rest wait for the next block's run. */
const MAX_ORDERS_PER_RUN = 1_000;

export class ConfirmationEvents {
  readonly #tips: ChainTips;
  /** Each chain's cursor when this process last looked at its pending orders. */
  readonly #handled = new Map<ChainSymbol, number>();

  constructor(private readonly kv: Deno.Kv, private readonly settings: PipelineSettings) {
    this.#tips = new ChainTips(kv, -1); // a negative age: every run reads the cursors anew
  }

  /** One run: the number of events committed. */
  async tick(): Promise<number> {
    const { tips } = await this.#tips.snapshot();
    const moved = new Map<ChainSymbol, number>();
    for (const [chain, tip] of tips) {
      if (this.#handled.get(chain) === tip) continue;
      if (!this.settings.enabledChains.includes(chain) || confirmationRule(this.settings, chain).flag) continue;
      moved.set(chain, tip);
    }
    if (moved.size === 0) return 0;
    const pending = await listPendingForConfirmations(this.kv, MAX_ORDERS_PER_RUN);
    let sent = 0;
    for (const { entry, announced } of pending) {
      const order: Order = entry.value;
      const tip = moved.get(order.sourceChain);
      if (tip === undefined) continue;
      const c = pendingConfirmations(order, confirmationRule(this.settings, order.sourceChain), tip);
      if (c === null || announced.value === c.confirmations) continue;
      const atomic = this.kv.atomic().check(entry).check(announced);
      addConfirmationsEvent(atomic, order, c, new Date().toISOString());
      // A failed check: the order changed (it is looked at again on the next block) or another process announced.
      if ((await atomic.commit()).ok) sent++;
    }
    for (const [chain, tip] of moved) this.#handled.set(chain, tip);
    return sent;
  }
}
