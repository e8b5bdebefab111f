/**
 * Which hot wallet an account chain (sol, xrp, sui) pays from, and the wallets it retired (docs/operations.md "Rotating
 * a hot wallet"). The derivation index in effect is state, not a constant: a rotation moves it to a fresh index of the
 * hot branch (chains/derivation.ts `hotWalletPath`) and retires the old wallet, whose balance above its reserve is then
 * drained into the new one by one write-ahead transaction (docs/sent-transactions.md: a purpose of the one driver).
 *
 * One record per chain holds it all, so the rotation, each drain attempt and its settling are single version-checked
 * commits of one key: a rotation and a drain can never interleave, and a drain is recorded at most once per attempt.
 * No record means index 0, the path every deployment used before rotations existed, so it keeps its address.
 */
import { z } from "zod";
import { DEATH_FIELDS, SENT_TX_FIELDS } from "./sent_tx.ts";
import { MAX_DEPOSIT_INDEX } from "../chains/derivation.ts";
import { ACCOUNT_CHAINS, UTXO_CHAINS } from "../chains/catalog.ts";

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const decimal = (what: string) => z.string().regex(DECIMAL, `${what} must be a non-negative decimal integer`);
const isoTime = z.iso.datetime();
const nonEmpty = z.string().min(1);
const hotIndex = z.int().min(0).max(MAX_DEPOSIT_INDEX);

/** A hot wallet: its derivation index on the hot branch and the address that index gives. */
export const HotWalletRefSchema = z.strictObject({ index: hotIndex, address: nonEmpty });
export type HotWalletRef = z.infer<typeof HotWalletRefSchema>;

/**
 * One drain attempt: a sent transaction (model/sent_tx.ts fields) moving `amount` (its fee included) from the retired
 * wallet to the wallet in effect, leaving `leave` (the chain's reserve) behind.
 */
export const DrainAttemptSchema = z.strictObject({
  ...SENT_TX_FIELDS,
  chain: z.enum(ACCOUNT_CHAINS),
  drainId: nonEmpty,
  amount: decimal("amount"),
  leave: decimal("leave"),
});
export type DrainAttempt = z.infer<typeof DrainAttemptSchema>;

export const DeadDrainAttemptSchema = z.strictObject({ ...DrainAttemptSchema.shape, ...DEATH_FIELDS });

/**
 * A retired hot wallet. `draining` until its drain is final (`drained`, with what the wallet in effect received) or
 * until there was nothing above its reserve to move (`drained` without a transaction).
 */
export const RetiredHotWalletSchema = z.strictObject({
  ...HotWalletRefSchema.shape,
  /** The wallet it drains into: the one that took over from it. */
  into: HotWalletRefSchema,
  retiredAt: isoTime,
  by: z.string(),
  status: z.enum(["draining", "drained"]),
  /** The open attempt, recorded before its broadcast. */
  attempt: DrainAttemptSchema.optional(),
  /** Attempts proven dead (the next is signed only then), the last few. */
  deadAttempts: z.array(DeadDrainAttemptSchema),
  drainedAt: isoTime.optional(),
  /** The final drain: its hash, block, and what the wallet in effect received (null: nothing to move). */
  drainTxHash: nonEmpty.nullable().optional(),
  blockNumber: z.int().min(0).optional(),
  delivered: decimal("delivered").optional(),
  /** What left the old wallet by the final drain, its fee included (`amount` of that attempt). */
  drainAmount: decimal("drainAmount").optional(),
}).superRefine((r, ctx) => {
  const require = (ok: boolean, path: string, message: string) =>
    ok || ctx.addIssue({ code: "custom", path: [path], message });
  require(r.into.index !== r.index, "into", "a wallet drains into another index");
  if (r.status === "drained") {
    require(r.attempt === undefined, "attempt", "a drained wallet has no open attempt");
    require(r.drainedAt !== undefined, "drainedAt", "required for a drained wallet");
    require(r.drainTxHash !== undefined, "drainTxHash", "required for a drained wallet");
  }
});
export type RetiredHotWallet = z.infer<typeof RetiredHotWalletSchema>;

/** An account chain's hot wallets: the one in effect, and every one it retired (oldest first). */
export const HotWalletStateSchema = z.strictObject({
  chain: z.enum(ACCOUNT_CHAINS),
  current: HotWalletRefSchema.extend({ since: isoTime, by: z.string() }),
  retired: z.array(RetiredHotWalletSchema),
}).superRefine((s, ctx) => {
  const indexes = [s.current.index, ...s.retired.map((r) => r.index)];
  if (new Set(indexes).size !== indexes.length) {
    ctx.addIssue({ code: "custom", path: ["retired"], message: "a hot wallet index is never used twice" });
  }
  if (s.retired.filter((r) => r.status === "draining").length > 1) {
    ctx.addIssue({ code: "custom", path: ["retired"], message: "at most one retired wallet drains at a time" });
  }
});
export type HotWalletState = z.infer<typeof HotWalletStateSchema>;

/**
 * The index a rotation moves to: one above every index the chain's hot wallets (or change addresses) ever used, so an
 * index is never used twice (the schemas refuse it). No record: index 0 is in effect, so 1.
 */
export function nextRotationIndex(state: { current: { index: number }; retired: { index: number }[] } | null): number {
  return Math.max(state?.current.index ?? 0, ...(state?.retired.map((r) => r.index) ?? [])) + 1;
}

/** The last dead drain attempts kept on the record (older ones are in the logs and the audit). */
export const MAX_KEPT_DEAD_DRAINS = 5;

/**
 * A UTXO chain's change address in effect (doge, zec: chains/derivation.ts `CHANGE_PARENT_PATHS`) and the ones it
 * retired. Nothing is drained on a UTXO chain: coins at a retired change address are treasury coins like any other,
 * spent by payouts with the key their `derivationIndex` names. No record means index 0.
 */
export const ChangeAddressStateSchema = z.strictObject({
  chain: z.enum(UTXO_CHAINS),
  current: HotWalletRefSchema.extend({ since: isoTime, by: z.string() }),
  retired: z.array(HotWalletRefSchema.extend({ retiredAt: isoTime, by: z.string() })),
}).superRefine((s, ctx) => {
  const indexes = [s.current.index, ...s.retired.map((r) => r.index)];
  if (new Set(indexes).size !== indexes.length) {
    ctx.addIssue({ code: "custom", path: ["retired"], message: "a change index is never used twice" });
  }
});
export type ChangeAddressState = z.infer<typeof ChangeAddressStateSchema>;
