/**
 * The stored refund record (docs/refunds.md): a held record's value sent back, as an outgoing transaction like any
 * payout. Its transactions are sent-transaction records (model/sent_tx.ts): the current one under `intent`, those
 * proven dead under `attempts` with their proofs, the one that failed on chain under `failedIntent`. Checked on every
 * write and every read like the other records we send for, so a malformed refund is never stepped on a guess.
 */
import { z } from "zod";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { DeadSentTxSchema, SentTxSchema } from "./sent_tx.ts";

export const REFUND_STATUSES = ["pending", "sending", "completed", "failed"] as const;
export type RefundStatus = typeof REFUND_STATUSES[number];

/** The chains refunds can be on. */
export const REFUND_CHAINS = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const isoTime = z.iso.datetime();
const nonEmpty = z.string().min(1);

export const RefundRecordSchema = z.strictObject({
  id: nonEmpty,
  /** The held record it resolved: `order:<orderId>` or `transfer:<chain>:<txHash>:<index>[:<revision>]`. */
  heldId: nonEmpty,
  /** "native": a payout of the chain's coin (treasury or hot wallet); "uasset": a transfer from the transfer address. */
  kind: z.enum(["native", "uasset"]),
  chain: z.enum(REFUND_CHAINS),
  /** The native token symbol (SOL, DOGE, ...) or the uAsset symbol. */
  asset: nonEmpty,
  to: nonEmpty,
  /** Smallest units (native units, or wei for a uAsset), decimal. */
  amount: z.string().regex(DECIMAL, "amount must be a non-negative decimal integer"),
  createdBy: z.string(),
  createdAt: isoTime,
  /**
   * pending: nothing recorded to send (yet, or again after a dead attempt); sending: `intent` recorded (maybe sent);
   * completed: `transactionHash` final on chain; failed: its transaction failed on chain (final), nothing more is sent.
   */
  status: z.enum(REFUND_STATUSES),
  /** The transaction of the current attempt, recorded with its reservations before it is broadcast. */
  intent: SentTxSchema.optional(),
  /** Attempts proven never to be mined, with their proofs (why another one was signed). */
  attempts: z.array(DeadSentTxSchema),
  /** Why it waits (funds, a chain not run here, no uAsset sender), cleared when it moves. */
  waitingReason: z.string().optional(),
  transactionHash: nonEmpty.optional(),
  /** The attempt that failed on chain, for a failed refund. */
  failedIntent: SentTxSchema.optional(),
  updatedAt: isoTime,
}).superRefine((r, ctx) => {
  // What each status is written with (actors/refunds.ts): a refund that breaks these would be sent twice or never.
  const require = (ok: boolean, path: string, message: string) =>
    ok || ctx.addIssue({ code: "custom", path: [path], message });
  // Sending and completed refunds carry their transaction; a pending one has none (yet, or again), a failed one keeps
  // it as `failedIntent`.
  const carries = r.status === "sending" || r.status === "completed";
  require(
    carries === (r.intent !== undefined),
    "intent",
    `${carries ? "required" : "absent"} for a ${r.status} refund`,
  );
  require((r.status === "completed") === (r.transactionHash !== undefined), "transactionHash", "set when completed");
  require((r.status === "failed") === (r.failedIntent !== undefined), "failedIntent", "set when failed");
  for (const tx of [r.intent, r.failedIntent, ...r.attempts]) {
    if (tx && tx.chain !== r.chain) require(false, "intent", `its transactions are on the refund's chain, ${r.chain}`);
  }
});
export type Refund = z.infer<typeof RefundRecordSchema>;
