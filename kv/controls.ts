/**
 * Operator controls (issue 14), one record: which chains and uAssets are paused, and the caps per order and per day
 * per uAsset. Read by the order actor before any value moves (actors/controls.ts), written only by the operations in
 * actors/ops/controls.ts, each change in one atomic with its audit entry. Key layout lives here and nowhere else.
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
