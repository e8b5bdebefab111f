/**
 * Orders as an operator sees and steers them (kv/orders.ts, actors/operator.ts): held transfers and dust, one order
 * whole, and cancel or retry. A stuck `minting`/`burning` order is cancelled or retried only once the chain proves its
 * recorded transaction dead; every change appends its audit entry in the commit that makes it.
 */
import { z } from "zod";
import { appendAudit } from "../../kv/audit.ts";
import { displayAssetAmount } from "../../model/amounts.ts";
import { getOrder } from "../../kv/orders.ts";
import { type Order, OrderSchema } from "../../model/order.ts";
import { countHeld, listDust, listHeldNewest } from "../../kv/pipeline.ts";
import { heldCountLine, heldLimit, heldLimitInput } from "./held.ts";
import type { DeadIntent } from "../transition.ts";
import {
  applyOperatorEvent,
  isStuckOnTransaction,
  type OperatorAudit,
  type OperatorResult,
  settleStuckOrder,
} from "../operator.ts";
import { InvalidRecordError } from "./errors.ts";
import { defineOp, type OpContext, OpError } from "./op.ts";

const HeldTransferSchema = z.object({
  chain: z.string(),
  txHash: z.string(),
  index: z.number().int(),
  from: z.string(),
  asset: z.string().describe('A uAsset symbol, or "native": a deposit held because its destination chain is disabled'),
  to: z.string().optional(),
  amount: z.string().describe("Smallest units (wei for uAssets), decimal"),
  blockNumber: z.number().int(),
  detectedAt: z.string(),
  reason: z.string(),
  revision: z.number().int().optional(),
});

const DustSchema = z.object({
  chain: z.string(),
  sender: z.string(),
  asset: z.string(),
  reason: z.string(),
  count: z.number().int(),
  sum: z.string().describe("Smallest units (wei for uAssets), decimal"),
  firstSeenAt: z.string(),
  lastSeenAt: z.string(),
  settledThrough: z.number().int(),
});

export const ordersHeld = defineOp({
  name: "orders held",
  summary: "Held transfers (never paid automatically), newest first, and dust aggregates (sub-minimum transfers from " +
    "outsiders)",
  scope: "read",
  http: { method: "get", path: "/transfers/held" },
  input: z.object({ limit: heldLimitInput }),
  output: z.object({
    held: z.array(HeldTransferSchema),
    heldTotal: z.number().int().describe("Held transfers in all, shown or not"),
    dust: z.array(DustSchema),
  }),
  run: async (ctx, input) => ({
    held: await listHeldNewest(ctx.kv, heldLimit(input.limit)),
    heldTotal: await countHeld(ctx.kv),
    dust: (await listDust(ctx.kv)).map(({ blocks: _, ...d }) => d),
  }),
  text: ({ held, heldTotal, dust }) => [
    ...held.map((h) =>
      `${h.chain}\t${h.txHash}:${h.index}\tfrom=${h.from}\t${
        displayAssetAmount(h.amount, h.asset, h.chain)
      }\tblock=${h.blockNumber}\t${h.reason}`
    ),
    `${heldCountLine(held.length, heldTotal, "held transfer(s)")}; they are never paid automatically`,
    ...dust.map((d) =>
      `${d.chain}\tdust\tfrom=${d.sender}\t${displayAssetAmount(d.sum, d.asset, d.chain)} in ${d.count} transfer(s)\t` +
      `first=${d.firstSeenAt}\tlast=${d.lastSeenAt}\t${d.reason}`
    ),
    `${dust.length} dust aggregate(s): sub-minimum transfers from outsiders, counted, never paid`,
  ],
});

const orderId = z.string().min(1).max(100).describe("The order's id");

/**
 * The order, or 404; a stored record that fails its schema is refused (409), and with `show` the CLI prints it as
 * stored so an operator can repair it.
 */
async function readOrder(ctx: OpContext, id: string, show = false): Promise<Order> {
  const entry = await getOrder(ctx.kv, id);
  if (entry.versionstamp === null) throw new OpError(404, `no order ${id}`);
  if (entry.invalid) {
    throw show ? new InvalidRecordError(entry.invalid.message, entry.raw) : new OpError(409, entry.invalid.message);
  }
  return entry.value;
}

export const orderShow = defineOp({
  name: "order show",
  summary: "One order whole, including pipeline details (recorded transactions, remainders, errors)",
  scope: "read",
  http: { method: "get", path: "/orders/{id}" },
  input: z.object({ id: orderId }),
  positionals: ["id"],
  output: OrderSchema,
  run: (ctx, { id }) => readOrder(ctx, id, true),
  text: (order) => [JSON.stringify(order, null, 2)],
});

const ChangedOrder = z.object({
  orderId: z.string(),
  status: z.string().describe("The order's status after the change"),
  deadProof: z.string().nullable().describe("When it waited on a transaction: the chain's proof that it is dead"),
  auditId: z.string(),
});

function deadProofOf(order: Order): string {
  const dead = order.details.deadIntents as DeadIntent[] | undefined;
  return dead?.at(-1)?.detail ?? "see the order's deadIntents";
}

/** Audits the change as `action` and captures the entry's id (the last attempt's is the one committed). */
function auditing(ctx: OpContext, action: string): { audit: OperatorAudit; id: () => string } {
  let id = "";
  return {
    audit: (atomic, before, after) => {
      const entry = {
        by: ctx.by,
        action,
        subject: after.id,
        before: { status: before.status },
        after: { status: after.status },
      };
      id = appendAudit(atomic, entry, ctx.now()).id;
    },
    id: () => id,
  };
}

function refused(res: OperatorResult & { ok: false }): never {
  throw new OpError(res.missing ? 404 : 409, res.error);
}

export const orderCancel = defineOp({
  name: "order cancel",
  summary: "Cancels an order with no outgoing transaction recorded, or (minting/burning) one whose transaction the " +
    "chain proves dead now; refused while it may still land",
  scope: "operate",
  http: { method: "post", path: "/orders/{id}/cancel" },
  input: z.object({ id: orderId }),
  positionals: ["id"],
  output: ChangedOrder,
  run: async (ctx, { id }) => {
    const order = (await getOrder(ctx.kv, id)).value;
    const a = auditing(ctx, "order.cancel");
    if (order && isStuckOnTransaction(order)) {
      const res = await settleStuckOrder(ctx.kv, await ctx.chains(), id, "cancel", ctx.now(), a.audit);
      if (!res.ok) refused(res);
      return { orderId: id, status: res.order.status, deadProof: deadProofOf(res.order), auditId: a.id() };
    }
    const res = await applyOperatorEvent(
      ctx.kv,
      id,
      { type: "cancel", reason: "cancelled by operator" },
      ctx.now(),
      a.audit,
    );
    if (!res.ok) refused(res);
    return { orderId: id, status: res.order.status, deadProof: null, auditId: a.id() };
  },
  text: (r) => [
    r.deadProof === null
      ? `order ${r.orderId} is cancelled`
      : `order ${r.orderId}: its transaction is proven dead (${r.deadProof}); the order is cancelled`,
  ],
});

export const orderRetry = defineOp({
  name: "order retry",
  summary: "Retries a failed order whose cause may pass, or (minting/burning) one whose transaction the chain " +
    "proves dead now: the pipeline then signs a new transaction",
  scope: "operate",
  http: { method: "post", path: "/orders/{id}/retry" },
  input: z.object({ id: orderId }),
  positionals: ["id"],
  output: ChangedOrder,
  run: async (ctx, { id }) => {
    const order = await readOrder(ctx, id);
    const a = auditing(ctx, "order.retry");
    if (isStuckOnTransaction(order)) {
      const res = await settleStuckOrder(ctx.kv, await ctx.chains(), id, "retry", ctx.now(), a.audit);
      if (!res.ok) refused(res);
      return { orderId: id, status: res.order.status, deadProof: deadProofOf(res.order), auditId: a.id() };
    }
    // A retried timeout waits again for as long as its source chain allows (live chains have their own limits).
    const now = ctx.now();
    const confirmBy = new Date(now.getTime() + ctx.settings().confirmationTimeoutMs(order.sourceChain)).toISOString();
    const res = await applyOperatorEvent(ctx.kv, id, { type: "retry", confirmBy }, now, a.audit);
    if (!res.ok) refused(res);
    return { orderId: id, status: res.order.status, deadProof: null, auditId: a.id() };
  },
  text: (r) => [
    r.deadProof === null
      ? `order ${r.orderId} is ${r.status} again; the pipeline picks it up`
      : `order ${r.orderId}: its transaction is proven dead (${r.deadProof}); the order is processing again ` +
        "and the pipeline signs a new transaction",
  ],
});

export const ORDER_OPS = [ordersHeld, orderShow, orderCancel, orderRetry];
