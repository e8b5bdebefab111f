/**
 * The last reconciliation report (docs/reconciliation.md; computed by actors/reconciliation.ts), kept so `/metrics` and
 * the dashboard show its mismatches without recomputing it. Key layout lives here and nowhere else.
 */
export interface StoredMismatch {
  /** What does not add up, e.g. `minted_without_order`, `supply_exceeds_controlled`. */
  kind: string;
  asset: string;
  /** The chain it is about, or null for a sum across chains. */
  chain: string | null;
  message: string;
  /** The records that cause it: order ids, deposit ids, transaction hashes. */
  records: string[];
}

export interface StoredReconciliation {
  at: string;
  ok: boolean;
  mismatches: StoredMismatch[];
  /** The whole report as the operation returned it. */
  report: unknown;
}

const lastKey: Deno.KvKey = ["reconciliation", "last"];

export async function lastReconciliation(kv: Deno.Kv): Promise<StoredReconciliation | null> {
  return (await kv.get<StoredReconciliation>(lastKey)).value;
}

export async function storeReconciliation(kv: Deno.Kv, r: StoredReconciliation): Promise<void> {
  await kv.set(lastKey, r);
}
