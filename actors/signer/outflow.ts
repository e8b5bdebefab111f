/**
 * The signer process's hourly outflow limit per chain (docs/operations.md "Roles", the signer process): value leaving
 * our control (a burn's payout, a refund, a cold sweep) counts; moves between our own addresses (sweeps,
 * consolidations, drains) do not, and purposes.ts says which is which. The window is the last 60 whole minutes plus the
 * current one, so a signature counts for at least an hour and at most 61 minutes: the limit errs on the side of
 * refusing. A payout signed again (a retry after its record lost a race, a re-sign after proven death) counts again,
 * for the same reason.
 *
 * The check and the spend are one conditional write (kv/signer_outflow.ts): of two signer processes on one KV, only
 * one can spend the last of the hour.
 */
import type { NativeChain } from "../../chains/catalog.ts";
import { type OutflowBuckets, readOutflow, writeOutflow } from "../../kv/signer_outflow.ts";

const MINUTE_MS = 60_000;
const WINDOW_MINUTES = 60;

/** Limits by chain, in the chain's smallest unit (`SIGNER_HOURLY_LIMITS`); a chain without one pays nothing out. */
export type OutflowLimits = Partial<Record<NativeChain, bigint>>;

export type OutflowDecision = { ok: true; used: bigint } | { ok: false; reason: string };

/** The buckets of the window ending at `nowMs`, older ones dropped, and their total. */
export function windowOf(buckets: OutflowBuckets, nowMs: number): { kept: OutflowBuckets; total: bigint } {
  const minute = Math.floor(nowMs / MINUTE_MS);
  const kept: OutflowBuckets = {};
  let total = 0n;
  for (const [m, amount] of Object.entries(buckets)) {
    if (Number(m) >= minute - WINDOW_MINUTES) {
      kept[m] = amount;
      total += BigInt(amount);
    }
  }
  return { kept, total };
}

/** Spends `amount` of `chain`'s hourly limit, or refuses saying how much is left; nothing is written on a refusal. */
export async function spendOutflow(
  kv: Deno.Kv,
  limits: OutflowLimits,
  chain: NativeChain,
  amount: bigint,
  nowMs: number,
): Promise<OutflowDecision> {
  const limit = limits[chain];
  if (limit === undefined) {
    return {
      ok: false,
      reason:
        `no hourly outflow limit is configured for ${chain} (SIGNER_HOURLY_LIMITS): the signer pays nothing out ` +
        "on a chain without one",
    };
  }
  for (;;) {
    const read = await readOutflow(kv, chain);
    const { kept, total } = windowOf(read.value ?? {}, nowMs);
    if (total + amount > limit) {
      return {
        ok: false,
        reason:
          `the hourly outflow limit of ${limit} on ${chain} would be exceeded: ${total} signed in the last hour, ` +
          `${amount} more asked`,
      };
    }
    const minute = String(Math.floor(nowMs / MINUTE_MS));
    const next = { ...kept, [minute]: (BigInt(kept[minute] ?? "0") + amount).toString() };
    if (await writeOutflow(kv, chain, read, next)) return { ok: true, used: total + amount };
  }
}
