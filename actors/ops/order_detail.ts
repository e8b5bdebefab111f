/**
 * One order as an operator follows it (docs/dashboard.md "Order detail"): its transitions with their times (the
 * owner's event log, kv/order_events.ts, and events committed but not yet sequenced), every transaction it has (the
 * source transfer, the current outgoing one, those that failed or were proven dead, a refund's) with its chain, status
 * and explorer link (config/explorers.ts), its webhook deliveries, its operator hold and its audit entries. Read only,
 * and bounded: each log is read back at most a fixed number of records and says so when it stopped there.
 * `order show` stays the record as stored (GET /admin/orders/{id}); this is the page `/admin/ui/orders/:id` shows.
 */
import { z } from "zod";
import type { ChainSymbol } from "../../chains/catalog.ts";
import { chainPlan } from "../../config/chain_mode.ts";
import { explorerTxUrl } from "../../config/explorers.ts";
import { listAudit } from "../../kv/audit.ts";
import { listOutbox, listOwnerEventsNewest } from "../../kv/order_events.ts";
import { getOrder } from "../../kv/orders.ts";
import { type OrderHold, orderHoldKey } from "../../kv/pipeline.ts";
import { getRefund } from "../../kv/refunds.ts";
import { readPayoutObservation } from "../../kv/treasury.ts";
import { listDeliveries, listEndpoints } from "../../kv/webhooks.ts";
import type { Order } from "../../model/order.ts";
import { defineOp, type OpContext, OpError } from "./op.ts";
import { orderRow } from "./overview.ts";

/** Most events of the owner's log read back to find the order's (an owner with many orders since stops here). */
export const MAX_EVENTS_READ = 2_000;
/** Most deliveries read per webhook endpoint, newest first. */
export const MAX_DELIVERIES_READ = 500;
/** Most audit entries read, newest first. */
export const MAX_AUDIT_READ = 2_000;

/** The order ids this service makes (UUIDv7, model/order.ts); anything else is no order. */
export const ORDER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const TransitionSchema = z.object({
  at: z.string(),
  status: z.string(),
  /** The event's per-owner seq; null while it waits in the outbox to be sequenced. */
  seq: z.number().int().nullable(),
});

const TransactionSchema = z.object({
  /** What it is to the order: `deposit` (a mint's source), `burn` (a burn's uAsset transfer), `mint`, `payout`, `refund`. */
  role: z.string(),
  chain: z.string(),
  txHash: z.string(),
  /** In words: `confirmed`, `recorded, not yet final`, `final`, `failed on chain`, `dead: <proof>`, ... */
  status: z.string(),
  at: z.string().nullable(),
  /** The chain explorer's page (`<CHAIN>_EXPLORER_TX_URL`); null for a simulated chain without one. */
  url: z.string().nullable(),
});

const DeliverySchema = z.object({
  endpointId: z.string(),
  url: z.string(),
  deliveryId: z.string(),
  eventType: z.string(),
  state: z.string(),
  attemptCount: z.number().int(),
  lastAttempt: z.object({ at: z.string(), status: z.number().int().nullable(), error: z.string().nullable() })
    .nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

const AuditSchema = z.object({ at: z.string(), by: z.string(), action: z.string(), subject: z.string() });

const OutputSchema = z.object({
  order: z.object({
    id: z.string(),
    type: z.string(),
    status: z.string(),
    owner: z.string(),
    sourceChain: z.string(),
    destinationChain: z.string(),
    token: z.string(),
    amount: z.string().describe("Smallest units of `token`, decimal"),
    createdAt: z.string(),
    updatedAt: z.string().nullable(),
    errorMessage: z.string().nullable(),
    heldReason: z.string().nullable(),
    display: z.object({ amount: z.string() }),
  }),
  transitions: z.array(TransitionSchema),
  /** False when the owner's event log was read back MAX_EVENTS_READ events without reaching the order's creation. */
  transitionsComplete: z.boolean(),
  transactions: z.array(TransactionSchema),
  webhooks: z.array(DeliverySchema),
  hold: z.object({ reason: z.string(), at: z.string() }).nullable(),
  audit: z.array(AuditSchema),
  /** False when the audit log holds more than MAX_AUDIT_READ entries: older ones about the order are not shown. */
  auditComplete: z.boolean(),
});
export type OrderDetail = z.infer<typeof OutputSchema>;

function linkOf(ctx: OpContext) {
  const c = ctx.config;
  const plan = chainPlan(c.chainMode, c.evm, c.utxo, c.account);
  return (chain: string, hash: string) => {
    const symbol = chain as ChainSymbol;
    const live = plan.enabled.includes(symbol) && !plan.simulated.includes(symbol);
    return explorerTxUrl(c.explorers, symbol, hash, live);
  };
}

async function transactionsOf(ctx: OpContext, o: Order): Promise<z.infer<typeof TransactionSchema>[]> {
  const link = linkOf(ctx);
  const d = o.details;
  const out: z.infer<typeof TransactionSchema>[] = [];
  const add = (role: string, chain: string, txHash: string, status: string, at: string | null) =>
    out.push({ role, chain, txHash, status, at, url: link(chain, txHash) });
  add(
    o.type === "mint" ? "deposit" : "burn",
    d.source.chain,
    d.source.txHash,
    d.confirmedAt ? "confirmed" : `seen in block ${d.source.blockNumber}, confirming`,
    d.confirmedAt ?? o.createdAt,
  );
  const outgoing = o.type === "mint" ? "mint" : "payout";
  for (const f of d.failedIntents ?? []) add(outgoing, f.chain, f.txHash, "failed on chain", f.preparedAt);
  for (const dead of d.deadIntents ?? []) {
    add(outgoing, dead.chain, dead.txHash, `dead (never mined): ${dead.detail}`, dead.deadAt);
  }
  if (d.intent) {
    let status = o.status === "completed" ? "final" : `recorded, not yet final (order ${o.status})`;
    if (o.type === "burn" && o.status !== "completed") {
      const seen = await readPayoutObservation(ctx.kv, o.id);
      if (seen) status += `; last seen ${seen.state} at ${seen.at}`;
    }
    add(outgoing, d.intent.chain, d.intent.txHash, status, d.intent.preparedAt);
  }
  if (d.refundId) {
    const refund = (await getRefund(ctx.kv, d.refundId)).value;
    const tx = refund?.intent ?? null;
    if (refund && tx) add("refund", refund.chain, tx.txHash, `refund ${refund.status}`, tx.preparedAt);
  }
  return out;
}

async function transitionsOf(kv: Deno.Kv, o: Order) {
  const created = Date.parse(o.createdAt);
  const { events, complete } = await listOwnerEventsNewest(
    kv,
    o.owner,
    MAX_EVENTS_READ,
    (e) => Date.parse(e.createdAt) < created,
  );
  const mine = events.filter((e) => e.order.id === o.id).map((e) => ({
    at: e.createdAt,
    status: e.order.status,
    seq: e.seq,
  }));
  const waiting = (await listOutbox(kv)).filter((e) => e.value.order.id === o.id)
    .map((e) => ({ at: e.value.createdAt, status: e.value.order.status, seq: null }));
  const all = [...mine.reverse(), ...waiting];
  return { transitions: all, complete };
}

async function webhooksOf(kv: Deno.Kv, o: Order): Promise<z.infer<typeof DeliverySchema>[]> {
  const out: z.infer<typeof DeliverySchema>[] = [];
  for (const endpoint of await listEndpoints(kv, o.owner)) {
    for (const d of await listDeliveries(kv, endpoint.id, MAX_DELIVERIES_READ)) {
      if (d.orderId !== o.id) continue;
      const last = d.attempts.at(-1) ?? null;
      out.push({
        endpointId: endpoint.id,
        url: endpoint.url,
        deliveryId: d.id,
        eventType: d.event.type,
        state: d.state,
        attemptCount: d.attemptCount,
        lastAttempt: last ? { at: last.at, status: last.status, error: last.error } : null,
        createdAt: d.createdAt,
        finishedAt: d.finishedAt,
      });
    }
  }
  return out.sort((a, b) => a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);
}

export async function orderDetail(ctx: OpContext, id: string): Promise<OrderDetail> {
  if (!ORDER_ID.test(id)) throw new OpError(404, `no order ${id}`);
  const entry = await getOrder(ctx.kv, id);
  if (entry.versionstamp === null) throw new OpError(404, `no order ${id}`);
  if (entry.invalid) throw new OpError(409, entry.invalid.message);
  const o = entry.value;
  const [transactions, { transitions, complete }, webhooks, hold, audit] = await Promise.all([
    transactionsOf(ctx, o),
    transitionsOf(ctx.kv, o),
    webhooksOf(ctx.kv, o),
    ctx.kv.get<OrderHold>(orderHoldKey(o.id)),
    listAudit(ctx.kv, MAX_AUDIT_READ),
  ]);
  // The head is the orders list's row (the transactions below carry every hash), the hold shown on its own.
  const { transactionHash: _listed, hold: shownHold, ...order } = orderRow(o, hold.value);
  return {
    order,
    transitions,
    transitionsComplete: complete,
    transactions,
    webhooks,
    hold: shownHold,
    audit: audit.filter((a) => a.subject === o.id || a.subject.includes(o.id))
      .map((a) => ({ at: a.at, by: a.by, action: a.action, subject: a.subject })),
    auditComplete: audit.length < MAX_AUDIT_READ,
  };
}

export const orderDetailOp = defineOp({
  name: "order detail",
  summary: "One order as an operator follows it: its transitions with times, every transaction with its chain, " +
    "status and explorer link, its webhook deliveries, its hold and its audit entries",
  scope: "read",
  http: { method: "get", path: "/orders/{id}/detail" },
  input: z.object({ id: z.string().min(1).max(100).describe("The order's id") }),
  positionals: ["id"],
  output: OutputSchema,
  run: (ctx, { id }) => orderDetail(ctx, id),
  text: (r) => [
    `order ${r.order.id}: ${r.order.type} ${r.order.status}, ${r.order.display.amount}, ` +
    `${r.order.sourceChain} -> ${r.order.destinationChain}, owner ${r.order.owner}`,
    ...(r.hold ? [`HOLD: ${r.hold.reason} (since ${r.hold.at})`] : []),
    ...(r.order.heldReason ? [`waiting: ${r.order.heldReason}`] : []),
    ...(r.order.errorMessage ? [`error: ${r.order.errorMessage}`] : []),
    `transitions${r.transitionsComplete ? "" : ` (the newest ${MAX_EVENTS_READ} events of the owner read)`}:`,
    ...r.transitions.map((t) => `  ${t.at}\t${t.status}${t.seq === null ? "\t(not yet sequenced)" : ""}`),
    `transactions:`,
    ...r.transactions.map((t) => `  ${t.role}\t${t.chain}\t${t.txHash}\t${t.status}${t.url ? `\t${t.url}` : ""}`),
    `webhook deliveries: ${r.webhooks.length}`,
    ...r.webhooks.map((w) =>
      `  ${w.createdAt}\t${w.eventType}\t${w.state}\t${w.attemptCount} attempt(s)\t${w.url}` +
      (w.lastAttempt ? `\tlast ${w.lastAttempt.status ?? w.lastAttempt.error}` : "")
    ),
    `audit entries: ${r.audit.length}${r.auditComplete ? "" : ` (the newest ${MAX_AUDIT_READ} read)`}`,
    ...r.audit.map((a) => `  ${a.at}\t${a.action}\tby ${a.by}`),
  ],
});

export const ORDER_DETAIL_OPS = [orderDetailOp];
