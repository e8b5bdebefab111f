/**
 * Resolution of held records by refund (docs/refunds.md): `held refund <id> [--to <address>]`
 * creates the refund in one atomic with the held record's removal (or the held order's cancellation) and its audit
 * entry; the refund actor (actors/refunds.ts) then sends it write-ahead. `refunds` lists them.
 */
import { displayAmount } from "../../model/amounts.ts";
import { z } from "zod";
import { InvalidRecordError } from "./errors.ts";
import { listRefunds, REFUND_STATUSES, RefundSchema, refundView } from "../../kv/refunds.ts";
import { createRefund, paysUs, RefundRefusal } from "../refund_create.ts";
import { verifySourceOnChain } from "../refunds.ts";
import { defineOp, OpError } from "./op.ts";

export const heldRefund = defineOp({
  name: "held refund",
  summary: "Resolves a held record by refunding it to its sender (or --to), sent write-ahead like any payout",
  scope: "operate",
  http: { method: "post", path: "/held/{id}/refund" },
  input: z.object({
    id: z.string().min(1).max(300).describe(
      "The held record: order:<orderId> or transfer:<chain>:<txHash>:<index>[:<revision>]",
    ),
    to: z.string().min(1).max(200).optional().describe(
      "Where to send it, instead of the recorded sender (the chain's address rules; an EVM address for uAssets)",
    ),
  }),
  positionals: ["id"],
  output: z.object({
    refund: RefundSchema,
    /** The held order it cancelled, for an order hold. */
    cancelledOrderId: z.string().optional(),
    auditId: z.string(),
  }),
  run: async (ctx, input) => {
    const settings = ctx.settings();
    const transferAddress = await ctx.transferAddress();
    try {
      const { refund, audit, order } = await createRefund(ctx.kv, {
        heldId: input.id,
        ...(input.to !== undefined ? { to: input.to } : {}),
        by: ctx.by,
        now: ctx.now(),
        utxoNetwork: (chain) => settings.utxoNetwork(chain),
        transferAddress,
        verifySource: async (source) => {
          try {
            const ours = (to: string) => paysUs(ctx.kv, source, to, transferAddress);
            return await verifySourceOnChain(await ctx.chains(), settings, source, ours);
          } catch (err) {
            const why = err instanceof Error ? err.message : String(err);
            throw new OpError(
              503,
              `cannot check ${source.txHash} on ${source.chain} now (${why}); nothing was changed`,
            );
          }
        },
      });
      return { refund: refundView(refund), ...(order ? { cancelledOrderId: order.id } : {}), auditId: audit.id };
    } catch (err) {
      if (err instanceof RefundRefusal) throw new OpError(err.status, err.message);
      throw err;
    }
  },
  text: ({ refund, cancelledOrderId, auditId }) => [
    `refund ${refund.id}: ${
      displayAmount(refund.amount, refund.asset)
    } on ${refund.chain} to ${refund.to} (${refund.status})`,
    ...(cancelledOrderId ? [`order ${cancelledOrderId} cancelled: refunded by operator`] : []),
    `held record ${refund.heldId} resolved; audit ${auditId}`,
  ],
});

export const refundsList = defineOp({
  name: "refunds",
  summary: "Refunds of held records, oldest first, with their transactions and why any waits",
  scope: "read",
  http: { method: "get", path: "/refunds" },
  input: z.object({
    status: z.enum(REFUND_STATUSES).optional().describe("Only refunds in this status"),
  }),
  output: z.object({ refunds: z.array(RefundSchema) }),
  run: async (ctx, input) => {
    const listed = await listRefunds(ctx.kv);
    // Not listed on a guess: a stored refund failing its schema is refused with its key and bad fields (409).
    if (listed.invalid.length > 0) {
      throw new InvalidRecordError(listed.invalid.map((e) => e.message).join("; "), null);
    }
    const all = listed.refunds.map(refundView);
    return { refunds: input.status ? all.filter((r) => r.status === input.status) : all };
  },
  text: ({ refunds }) => [
    ...refunds.map((r) =>
      [
        r.id,
        r.status,
        displayAmount(r.amount, r.asset),
        r.chain,
        `to=${r.to}`,
        `held=${r.heldId}`,
        `tx=${r.transactionHash ?? r.intent?.txHash ?? "-"}`,
        `dead=${r.attempts.length}`,
        `by=${r.createdBy}`,
        ...(r.waitingReason ? [`waiting: ${r.waitingReason}`] : []),
      ].join("\t")
    ),
    `${refunds.length} refund(s)`,
  ],
});

export const REFUND_OPS = [heldRefund, refundsList];
