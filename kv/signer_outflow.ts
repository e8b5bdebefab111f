/**
 * The signer process's outflow per chain (docs/operations.md "Roles", the signer process): what it signed to leave our
 * control, in buckets of one minute, so the last hour's total is a sum of at most 61 buckets. Key layout and the
 * conditional write live here; the rule (what counts, the limit) is actors/signer/outflow.ts.
 */
import type { NativeChain } from "../chains/catalog.ts";

/** Minute (ms since the epoch / 60,000, as text) -> smallest units signed out in it (decimal text). */
export type OutflowBuckets = Record<string, string>;

export const signerOutflowKey = (chain: NativeChain): Deno.KvKey => ["signer_outflow", chain];

export async function readOutflow(kv: Deno.Kv, chain: NativeChain): Promise<Deno.KvEntryMaybe<OutflowBuckets>> {
  return await kv.get<OutflowBuckets>(signerOutflowKey(chain), { consistency: "strong" });
}

/**
 * Writes `next` only if the buckets are still the `read` ones: of two signer processes deciding at once, one commits
 * and the other reads again, so both can never spend the last of an hour's limit.
 */
export async function writeOutflow(
  kv: Deno.Kv,
  chain: NativeChain,
  read: Deno.KvEntryMaybe<OutflowBuckets>,
  next: OutflowBuckets,
): Promise<boolean> {
  return (await kv.atomic().check(read).set(signerOutflowKey(chain), next).commit()).ok;
}
