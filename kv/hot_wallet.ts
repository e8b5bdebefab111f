/**
 * What recorded payouts of an account chain's hot wallet (sol, xrp, sui) will take before they are final: the one
 * rule that keeps two burns processed at once from both being signed against the same funds.
 *
 * - A payout recorded (its write-ahead intent) holds `amount + fee` under `["hot_wallet_hold", chain, txHash]`, written
 *   by the `hotWallet` reservation in the atomic that records it (kv/chain_state.ts `addReservations`), with the
 *   derivation index of the wallet it leaves (kv/hot_wallets.ts): after a rotation the old wallet's holds count
 *   against the old wallet only, and its drain waits until none is left. A hold stored as a bare amount was written
 *   before rotations existed: index 0.
 * - That atomic also checks and bumps the chain's epoch `["hot_wallet_epoch", chain]` against the versionstamp read
 *   before the funding check: of two payouts checked at once, only the first commits; the second's step conflicts,
 *   and its next step reads the first one's hold.
 * - A rotation bumps the same epoch (actors/hot_wallet_rotation.ts), so a payout checked against the old wallet
 *   before it commits is refused and checked again against the new one.
 * - The funding check (`fundsAfterHolds`) subtracts every hold of the wallet from what the payer says it can spend
 *   now. The holds are read BEFORE the chain balance: a hold released since was released because its payout
 *   is final, so the balance read after it already shows it spent.
 * - A hold is released in the commit that moves its order out of `burning`: final (completed), failed on chain, or
 *   proven dead (back to processing, where the next step checks again). Until then a payout included but not final
 *   counts twice (in the balance and in its hold): the next payout waits a little longer, never the other way.
 */
import type { PayoutCheck } from "../chains/adapter.ts";
import { readHotIndex } from "./hot_wallets.ts";

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

/** What a hold key stores: the amount, and the index of the hot wallet it leaves. */
export interface StoredHold {
  amount: bigint;
  hotIndex: number;
}

/** A stored hold, whichever shape it was written in (a bare amount: index 0, written before rotations). */
export function holdOf(value: unknown): StoredHold {
  if (typeof value === "bigint") return { amount: value, hotIndex: 0 };
  const v = value as Partial<StoredHold> | null;
  if (typeof v?.amount === "bigint" && typeof v.hotIndex === "number") {
    return { amount: v.amount, hotIndex: v.hotIndex };
  }
  throw new Error(`a hot-wallet hold is malformed: ${String(value)}`);
}

export interface HotWalletHolds {
  /** The epoch's versionstamp when read (null: no payout ever recorded): the recording atomic checks it. */
  epoch: string | null;
  /** The epoch's value, bumped by each recording. */
  epochValue: bigint;
  /** The wallet these holds are of: `index` given, else the one in effect when read (after the epoch). */
  hotIndex: number;
  /** The sum of every hold of that wallet, and how many. */
  held: bigint;
  count: number;
}

/**
 * The holds of the wallet at `index` (default: the one in effect): the epoch first, then the index in effect, then the
 * holds. A recording or a rotation after the epoch read fails the recording's check.
 */
export async function readHotWalletHolds(
  kv: Deno.Kv,
  chain: HotWalletChain,
  index?: number,
): Promise<HotWalletHolds> {
  const epoch = await kv.get<bigint>(hotWalletEpochKey(chain), { consistency: "strong" });
  const hotIndex = index ?? await readHotIndex(kv, chain);
  let held = 0n;
  let count = 0;
  for await (const e of kv.list<unknown>({ prefix: ["hot_wallet_hold", chain] }, { consistency: "strong" })) {
    const hold = holdOf(e.value);
    if (hold.hotIndex !== hotIndex) continue;
    held += hold.amount;
    count++;
  }
  return { epoch: epoch.versionstamp, epochValue: epoch.value ?? 0n, hotIndex, held, count };
}

/** Adds the epoch's bump to `atomic`, checked against the versionstamp read: a rotation refuses older checks. */
export function bumpHotWalletEpoch(
  atomic: Deno.AtomicOperation,
  chain: HotWalletChain,
  epoch: string | null,
  epochValue: bigint,
): Deno.AtomicOperation {
  const key = hotWalletEpochKey(chain);
  return atomic.check({ key, versionstamp: epoch }).set(key, epochValue + 1n);
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
  hotIndex: number,
): void {
  bumpHotWalletEpoch(atomic, chain, epoch, epochValue)
    .set(hotWalletHoldKey(chain, txHash), { amount, hotIndex } satisfies StoredHold);
}

/** Releases the hold of `txHash` (its payout is final, failed or dead); nothing when it holds none. */
export function releaseHotWalletHold(atomic: Deno.AtomicOperation, chain: string, txHash: string): void {
  if (chain === "sol" || chain === "xrp" || chain === "sui") atomic.delete(hotWalletHoldKey(chain, txHash));
}
