/**
 * The write-ahead record of a cold sweep: the surplus of a native chain's hot funds above its band's ceiling, moved
 * down to the target to the operator's cold address in effect (docs/operations.md "Cold addresses",
 * docs/sent-transactions.md). A sent transaction like the others (model/sent_tx.ts `SENT_TX_FIELDS`): recorded with
 * what it consumes (UTXO coins, or an account chain's hot-wallet hold and XRPL Sequence) before it is broadcast,
 * re-sent as the same bytes, completed once final, and replaced (by a new cold sweep under a new id) only once proven
 * dead.
 *
 * Its own fields stay plain (chain, destination, amount, id) so that anything re-checking the signed bytes against the
 * record (a signer process) reads them directly.
 */
import { z } from "zod";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { DEATH_FIELDS, SENT_TX_FIELDS } from "./sent_tx.ts";

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const decimal = (what: string) => z.string().regex(DECIMAL, `${what} must be a non-negative decimal integer`);
const isoTime = z.iso.datetime();
const nonEmpty = z.string().min(1);

export const COLD_SWEEP_STATUSES = ["prepared", "completed", "dead"] as const;
export type ColdSweepStatus = typeof COLD_SWEEP_STATUSES[number];

/** An output of a completed cold sweep paying the cold address: what reconciliation asks the chain about (UTXO). */
export const ColdOutputSchema = z.strictObject({
  txHash: nonEmpty,
  index: z.int().min(0),
  amount: decimal("amount"),
});
export type ColdOutput = z.infer<typeof ColdOutputSchema>;

export const ColdSweepSchema = z.strictObject({
  ...SENT_TX_FIELDS,
  chain: z.enum(NATIVE_CHAINS),
  id: nonEmpty,
  /** The cold address in effect when it was recorded (checked in the recording commit), and what it pays there. */
  destination: nonEmpty,
  amount: decimal("amount"),
  /** Why: what was hot (after waiting payouts) and the band's ceiling and target at the time. */
  hot: decimal("hot"),
  ceiling: decimal("ceiling"),
  target: decimal("target"),
  status: z.enum(COLD_SWEEP_STATUSES),
  completedAt: isoTime.optional(),
  blockNumber: z.int().min(0).optional(),
  /** Set when completed: the outputs paying the destination, as the chain reports the mined transaction. */
  coldOutputs: z.array(ColdOutputSchema).optional(),
  proof: DEATH_FIELDS.proof.optional(),
  detail: DEATH_FIELDS.detail.optional(),
  deadAt: DEATH_FIELDS.deadAt.optional(),
}).superRefine((c, ctx) => {
  const require = (ok: boolean, path: string, message: string) =>
    ok || ctx.addIssue({ code: "custom", path: [path], message });
  require(!DECIMAL.test(c.amount) || BigInt(c.amount) > 0n, "amount", "must be positive");
  if (c.status === "completed") {
    require(c.completedAt !== undefined, "completedAt", "required for a completed cold sweep");
    require(c.blockNumber !== undefined, "blockNumber", "required for a completed cold sweep");
    require(c.coldOutputs !== undefined, "coldOutputs", "required for a completed cold sweep");
  }
  if (c.status === "dead") {
    require(c.proof !== undefined, "proof", "required for a dead cold sweep");
    require(c.detail !== undefined, "detail", "required for a dead cold sweep");
    require(c.deadAt !== undefined, "deadAt", "required for a dead cold sweep");
  }
});
export type ColdSweep = z.infer<typeof ColdSweepSchema>;

/** The order id a cold sweep's payout request carries (the payer names the transaction with it; alerts name it). */
export function coldSweepOrderId(id: string): string {
  return `cold-sweep:${id}`;
}
