/**
 * Operator controls as the order actor applies them (docs/controls.md): pauses per chain and per uAsset, caps per order
 * and per UTC day per uAsset (kv/controls.ts). Only the step that would record a mint or a payout is controlled: a
 * processing order with no recorded transaction. Deposits and burns are still detected and confirmed while paused,
 * and a transaction already recorded is followed to its end (it may be on chain).
 *
 * `controlDecision` is pure: the actor reads the controls with the order (one get in the same Promise.all), the day's
 * usage only when a per-day cap applies, and commits what the decision says.
 */
import { type ChainSymbol, NATIVE, type NativeChain, type UAsset, weiToNative } from "../chains/catalog.ts";
import type { CapName, Controls } from "../kv/controls.ts";
import type { Order } from "../model/order.ts";

export type ControlDecision =
  /** Not a step the controls govern (pending, minting, burning, terminal). */
  | { kind: "free" }
  /** Wait: a chain of the order or its uAsset is paused. */
  | { kind: "paused"; reason: string }
  /** Hold for an operator: the order is above `caps`. */
  | { kind: "cap"; caps: CapName[]; reason: string }
  /** Go ahead; `count`: add the order to its uAsset's day usage in the commit that records its transaction. */
  | { kind: "go"; count: { asset: UAsset; amount: bigint } | null };

/** The order's uAsset: what a mint issues or a burn redeems. */
export function uAssetOf(order: Order): UAsset {
  const native = (order.type === "mint" ? order.sourceChain : order.destinationChain) as NativeChain;
  return NATIVE[native].uAsset.symbol;
}

/** What the order moves in the uAsset's native smallest units: a mint's deposit, a burn's payout (wei / 10^k). */
export function nativeAmountOf(order: Order): bigint {
  if (order.type === "mint") return BigInt(order.amount);
  return weiToNative(order.destinationChain as NativeChain, BigInt(order.amount)).native;
}

/** Whether the controls govern this step: processing, nothing recorded yet. */
export function isControlled(order: Order): boolean {
  return order.status === "processing" && order.details.intent === undefined;
}

/**
 * An order is checked against the caps and counted once, at its first recorded transaction: one re-signed after its
 * transaction was proven dead, or retried after a failure, is the same movement of value (pauses still apply).
 */
function countedBefore(order: Order): boolean {
  return (order.details.deadIntents?.length ?? 0) > 0 || (order.details.failedIntents?.length ?? 0) > 0;
}

function approvedOver(order: Order): Set<CapName> {
  return new Set((order.details.capApprovals ?? []).flatMap((a) => a.caps));
}

/**
 * The uAsset whose day usage the decision needs (a per-day cap applies to this order's step), or null: the actor
 * reads it only then.
 */
export function usageNeeded(order: Order, controls: Controls): UAsset | null {
  if (!isControlled(order) || countedBefore(order)) return null;
  const asset = uAssetOf(order);
  return controls.caps[asset]?.perDay !== undefined ? asset : null;
}

/**
 * What the controls say about the order's next step. `usedToday`: what its uAsset moved today (native smallest
 * units), read when `usageNeeded` named the asset, else null.
 */
export function controlDecision(order: Order, controls: Controls, usedToday: bigint | null): ControlDecision {
  if (!isControlled(order)) return { kind: "free" };
  const asset = uAssetOf(order);
  const paused: string[] = [];
  for (const chain of new Set<ChainSymbol>([order.sourceChain, order.destinationChain])) {
    const p = controls.pausedChains[chain];
    if (p) paused.push(`chain ${chain}${p.reason ? ` (${p.reason})` : ""}`);
  }
  const pa = controls.pausedAssets[asset];
  if (pa) paused.push(`asset ${asset}${pa.reason ? ` (${pa.reason})` : ""}`);
  if (paused.length > 0) return { kind: "paused", reason: `paused by operator: ${paused.join("; ")}` };

  if (countedBefore(order)) return { kind: "go", count: null };
  const cap = controls.caps[asset];
  if (!cap) return { kind: "go", count: null };
  const amount = nativeAmountOf(order);
  const approved = approvedOver(order);
  const over: CapName[] = [];
  const why: string[] = [];
  if (cap.perOrder !== undefined && !approved.has("perOrder") && amount > BigInt(cap.perOrder)) {
    over.push("perOrder");
    why.push(`${amount} is above the per-order cap of ${cap.perOrder}`);
  }
  if (cap.perDay !== undefined) {
    if (usedToday === null) throw new Error(`order ${order.id}: the day usage of ${asset} was not read`);
    if (!approved.has("perDay") && usedToday + amount > BigInt(cap.perDay)) {
      over.push("perDay");
      why.push(`with it today's total would be ${usedToday + amount}, above the per-day cap of ${cap.perDay}`);
    }
  }
  if (over.length > 0) {
    return {
      kind: "cap",
      caps: over,
      reason: `held for an operator: ${asset} order of ${amount} (native units): ${why.join("; ")}; ` +
        `approve with held release order:${order.id}, or cancel it`,
    };
  }
  return { kind: "go", count: cap.perDay !== undefined ? { asset, amount } : null };
}
