/**
 * What recorded payouts of an account chain's hot wallet (sol, xrp, sui) will take before they are final: the one
 * rule that keeps two burns processed at once from both being signed against the same funds.
 *
 * - A payout recorded (its write-ahead intent) holds `amount + fee` under `["hot_wallet_hold", chain, txHash]`, written
 *   by the `hotWallet` reservation in the atomic that records it (kv/chain_state.ts `addReservations`).
 * - That atomic also checks and bumps the chain's epoch `["hot_wallet_epoch", chain]` against the versionstamp read
 *   before the funding check: of two payouts checked at once, only the first commits; the second's step conflicts,
 *   and its next step reads the first one's hold.
 * - The funding check (`fundsAfterHolds`) subtracts every hold of the chain from what the payer says the hot wallet
 *   can spend now. The holds are read BEFORE the chain balance: a hold released since was released because its payout
 *   is final, so the balance read after it already shows it spent.
 * - A hold is released in the commit that moves its order out of `burning`: final (completed), failed on chain, or
 *   proven dead (back to processing, where the next step checks again). Until then a payout included but not final
 *   counts twice (in the balance and in its hold): the next payout waits a little longer, never the other way.
 */
import type { PayoutCheck } from "../chains/adapter.ts";

export type HotWalletChain = "sol" | "xrp" | "sui";

/** The held reason of a burn the hot wallet cannot fund once recorded payouts are counted. */
export function hotWalletHeldReason(chain: HotWalletChain): string {
  return `hot wallet cannot fund this payout yet (${chain}): recorded payouts not yet final hold part of its balance`;
}

export function hotWalletEpochKey(chain: HotWalletChain): Deno.KvKey {
  return ["hot_wallet_epoch", chain];
}

/** What the recorded payout `txHash` will take from the hot wallet (amount + fee), until it is final or dead. */
export function hotWalletHoldKey(chain: HotWalletChain, txHash: string): Deno.KvKey {
  return ["hot_wallet_hold", chain, txHash];
}

export interface HotWalletHolds {
  /** The epoch's versionstamp when read (null: no payout ever recorded): the recording atomic checks it. */
  epoch: string | null;
  /** The epoch's value, bumped by each recording. */
  epochValue: bigint;
  /** The sum of every hold, and how many. */
  held: bigint;
  count: number;
}

/** The chain's holds: the epoch first, then the holds (a recording after the epoch read fails its check). */
export async function readHotWalletHolds(kv: Deno.Kv, chain: HotWalletChain): Promise<HotWalletHolds> {
  const epoch = await kv.get<bigint>(hotWalletEpochKey(chain), { consistency: "strong" });
  let held = 0n;
  let count = 0;
  for await (const e of kv.list<bigint>({ prefix: ["hot_wallet_hold", chain] }, { consistency: "strong" })) {
    held += e.value;
    count++;
  }
  return { epoch: epoch.versionstamp, epochValue: epoch.value ?? 0n, held, count };
}

/**
 * Whether the payer's answer still funds `amount` once the holds are subtracted: null when it does, else the held
 * reason. A payer that does not say what it can spend (`spendable` absent) is taken at its word.
 */
export function fundsAfterHolds(
  chain: HotWalletChain,
  check: PayoutCheck & { ok: true },
  holds: HotWalletHolds,
  amount: bigint,
): string | null {
  if (check.spendable === undefined) return null;
  return check.spendable - holds.held >= amount ? null : hotWalletHeldReason(chain);
}

/** The recording atomic's part: checks and bumps the epoch read, and writes this payout's hold. */
export function addHotWalletHold(
  atomic: Deno.AtomicOperation,
  chain: HotWalletChain,
  epoch: string | null,
  epochValue: bigint,
  txHash: string,
  amount: bigint,
): void {
  const key = hotWalletEpochKey(chain);
  atomic.check({ key, versionstamp: epoch }).set(key, epochValue + 1n).set(hotWalletHoldKey(chain, txHash), amount);
}

/** Releases the hold of `txHash` (its payout is final, failed or dead); nothing when it holds none. */
export function releaseHotWalletHold(atomic: Deno.AtomicOperation, chain: string, txHash: string): void {
  if (chain === "sol" || chain === "xrp" || chain === "sui") atomic.delete(hotWalletHoldKey(chain, txHash));
}
