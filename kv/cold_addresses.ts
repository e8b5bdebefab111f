/**
 * Each native chain's cold address: where reserves above the hot wallet's band go (docs/architecture.md "The sent
 * transaction and custody tiers"). Watch-only: the service never holds its key, only its address. A change is
 * scheduled, never immediate: it takes effect `config.coldAddressDelayMs` after it was asked (default 24 h), and an
 * alert is raised at once (actors/ops/cold.ts), so an operator key used by someone else cannot redirect reserves before
 * the operators see it and cancel. The effective address is computed from the record at read time (no background
 * write), so every process agrees on it from the same record. Key layout lives here and nowhere else.
 */
import { z } from "zod";
import type { NativeChain } from "../chains/catalog.ts";

const Scheduled = z.object({
  address: z.string(),
  /** When the operator asked for it. */
  at: z.string(),
  /** When it takes effect. */
  effectiveAt: z.string(),
  by: z.string(),
});

export const ColdAddressSchema = z.object({
  /** In effect since `since` (null before the first change took effect). */
  current: z.object({ address: z.string(), since: z.string() }).nullable(),
  /** A change waiting for its delay, or null. */
  pending: Scheduled.nullable(),
});
export type ColdAddress = z.infer<typeof ColdAddressSchema>;

export const coldAddressKey = (chain: NativeChain): Deno.KvKey => ["cold_address", chain];

/** The record as stored, or an empty one. A malformed record is an error naming the chain, never read as empty. */
export async function readColdAddress(kv: Deno.Kv, chain: NativeChain): Promise<Deno.KvEntryMaybe<ColdAddress>> {
  const entry = await kv.get(coldAddressKey(chain));
  if (entry.value === null) return entry as Deno.KvEntryMaybe<ColdAddress>;
  const parsed = ColdAddressSchema.safeParse(entry.value);
  if (!parsed.success) throw new Error(`the cold address record of ${chain} is malformed: ${parsed.error.message}`);
  return { ...entry, value: parsed.data } as Deno.KvEntry<ColdAddress>;
}

/** The record as it stands at `now`: a pending change whose time has come is current (since its `effectiveAt`). */
export function coldAddressAt(record: ColdAddress | null, now: Date): ColdAddress {
  const r = record ?? { current: null, pending: null };
  if (r.pending && Date.parse(r.pending.effectiveAt) <= now.getTime()) {
    return { current: { address: r.pending.address, since: r.pending.effectiveAt }, pending: null };
  }
  return r;
}
