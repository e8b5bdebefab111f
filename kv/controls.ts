/**
 * Operator controls (docs/controls.md), one record: which chains and uAssets are paused, and the caps per order and per
 * day per uAsset. Read by the order actor before any value moves (actors/controls.ts), written only by the operations
 * in actors/ops/controls.ts, each change in one atomic with its audit entry. Key layout lives here and nowhere else.
 *
 * Paused: deposits and burns are still detected and recorded, and orders still confirm; no mint and no payout is
 * recorded until resumed (a transaction already recorded is still followed to its end: it may be on chain already).
 * Caps: amounts in the uAsset's native smallest units (decimal strings); an order above a cap is held for an
 * operator's approval (`held release`) or refund (`held refund`).
 */
import { z } from "zod";
import { CHAIN_SYMBOLS, UASSETS } from "../chains/catalog.ts";

const Pause = z.object({ by: z.string(), at: z.string(), reason: z.string() });
export type Pause = z.infer<typeof Pause>;

const Cap = z.object({
  /** Most one order may move, in native smallest units; absent: no limit. */
  perOrder: z.string().regex(/^\d+$/).optional(),
  /** Most all orders of the uAsset may move per UTC day, in native smallest units; absent: no limit. */
  perDay: z.string().regex(/^\d+$/).optional(),
});
export type Cap = z.infer<typeof Cap>;

export const ControlsSchema = z.object({
  pausedChains: z.partialRecord(z.enum(CHAIN_SYMBOLS), Pause),
  pausedAssets: z.partialRecord(z.enum(UASSETS), Pause),
  caps: z.partialRecord(z.enum(UASSETS), Cap),
});
export type Controls = z.infer<typeof ControlsSchema>;

export const NO_CONTROLS: Controls = { pausedChains: {}, pausedAssets: {}, caps: {} };

export const controlsKey: Deno.KvKey = ["controls"];

/** The controls now, with the entry for a checked write. */
export async function getControls(kv: Deno.Kv): Promise<{ controls: Controls; entry: Deno.KvEntryMaybe<Controls> }> {
  const entry = await kv.get<Controls>(controlsKey);
  return { controls: entry.value ? ControlsSchema.parse(entry.value) : NO_CONTROLS, entry };
}

export type CapName = "perOrder" | "perDay";
export const CAP_NAMES = ["perOrder", "perDay"] as const satisfies readonly CapName[];

/** Writes `controls`, checked against the entry read (an operator change racing another fails, changes nothing). */
export function addControlsUpdate(
  atomic: Deno.AtomicOperation,
  entry: Deno.KvEntryMaybe<Controls>,
  controls: Controls,
): Deno.AtomicOperation {
  return atomic.check(entry).set(controlsKey, ControlsSchema.parse(controls));
}

// ---- the day's usage per uAsset: kept only for an asset with a per-day cap ----

/** What the orders of `asset` moved on UTC day `day` (YYYY-MM-DD), in native smallest units. */
export interface DayUsage {
  asset: string;
  day: string;
  used: string;
}

export const usageKey = (asset: string, day: string): Deno.KvKey => ["control_usage", asset, day];

/** The UTC day of `at`, as usage records key it. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export function getDayUsage(kv: Deno.Kv, asset: string, day: string): Promise<Deno.KvEntryMaybe<DayUsage>> {
  return kv.get<DayUsage>(usageKey(asset, day));
}

// ---- orders waiting on a pause: what a resume makes due now ----

/** Set by each commit of an order waiting on a pause; a resume reschedules every listed order and deletes its entry. */
export const pausedOrderKey = (orderId: string): Deno.KvKey => ["control_paused_order", orderId];

export async function listPausedOrders(kv: Deno.Kv): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: ["control_paused_order"] })) out.push(String(e.key[1]));
  return out;
}
