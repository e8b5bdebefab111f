/**
 * Held records (docs/admin-api.md, docs/refunds.md): what waits for an operator, listed and released through one
 * implementation.
 *
 * - `order:<orderId>`: an order hold (kv/pipeline.ts `orderHoldKey`), set by a reorg past finality (kind `reorg`) or
 *   by a cap (kind `cap`, actors/controls.ts). Release lifts it and makes the order due now; a cap hold's release
 *   also records the approval on the order (`details.capApprovals`), so the caps it was above do not hold it again.
 * - `transfer:<chain>:<txHash>:<index>[:<revision>]`: a held transfer (kv/pipeline.ts `heldKey`): uAssets sent to the
 *   transfer address with no burn configuration, native deposits for a disabled chain. Never paid automatically.
 *   Release is refused (`held refund` returns them), except a uAsset transfer whose sender has configured a burn for
 *   its chain since: it becomes the burn order the watcher would have made (docs/controls.md).
 *
 * Every change is one atomic, checked against what was read, with its audit entry; a refusal changes nothing.
 */
import { z } from "zod";
import { isEvmChain, isNativeChain, nativeChainOfUAsset, type UAsset } from "../../chains/catalog.ts";
import { displayAmount, nativeUnit } from "../../model/amounts.ts";
import { appendAudit } from "../../kv/audit.ts";
import { getBurnConfig } from "../../kv/burn_configs.ts";
import { addOrderCreate, addOrderUpdate, getOrder } from "../../kv/orders.ts";
import { type Order, withDetails } from "../../model/order.ts";
import {
  addReschedule,
  countHeld,
  deleteHeldTransfer,
  dueAtKey,
  HELD_PAGE_DEFAULT,
  HELD_PAGE_MAX,
  heldKey,
  type HeldTransfer,
  holdKind,
  listHeldNewest,
  listOrderHolds,
  type OrderHold,
  orderHoldKey,
  seenKey,
  type SeenTransfer,
} from "../../kv/pipeline.ts";
import type { PipelineContext } from "../context.ts";
import { WAKE, type WakeMessage } from "../wake.ts";
import { burnRecordOf } from "../watcher.ts";
import { defineOp, type OpContext, OpError } from "./op.ts";
import { HELD_ID_FORMAT, type HeldId, heldTransferId, parseHeldId } from "../../kv/held_ids.ts";
export { HELD_ID_FORMAT, heldTransferId, parseHeldId };

// ---- ids ----

// ---- held list ----

const OrderSummary = z.object({
  id: z.string(),
  type: z.string(),
  status: z.string(),
  sourceChain: z.string(),
  destinationChain: z.string(),
  token: z.string(),
  amount: z.string(),
  owner: z.string(),
  createdAt: z.string(),
});

const TransferSummary = z.object({
  chain: z.string(),
  txHash: z.string(),
  index: z.number().int(),
  revision: z.number().int(),
  from: z.string(),
  to: z.string().nullable(),
  asset: z.string(),
  amount: z.string(),
  blockNumber: z.number().int(),
});

const HeldItem = z.object({
  id: z.string().describe(HELD_ID_FORMAT),
  kind: z.enum(["reorg", "cap", "transfer"]),
  reason: z.string(),
  at: z.string(),
  caps: z.array(z.string()).describe("A cap hold: the caps the order is above"),
  order: OrderSummary.nullable(),
  transfer: TransferSummary.nullable(),
});

function orderSummary(o: Order): z.infer<typeof OrderSummary> {
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    sourceChain: o.sourceChain,
    destinationChain: o.destinationChain,
    token: o.token,
    amount: o.amount,
    owner: o.owner,
    createdAt: o.createdAt,
  };
}

type HeldItemOut = z.infer<typeof HeldItem>;

async function orderHoldItem(ctx: OpContext, orderId: string, hold: OrderHold): Promise<HeldItemOut> {
  const entry = await getOrder(ctx.kv, orderId);
  return {
    id: `order:${orderId}`,
    kind: holdKind(hold),
    reason: hold.reason,
    at: hold.at,
    caps: hold.caps ?? [],
    order: entry.value ? orderSummary(entry.value) : null,
    transfer: null,
  };
}

function heldTransferItem(h: HeldTransfer): HeldItemOut {
  return {
    id: heldTransferId(h),
    kind: "transfer",
    reason: h.reason,
    at: h.detectedAt,
    caps: [],
    order: null,
    transfer: {
      chain: h.chain,
      txHash: h.txHash,
      index: h.index,
      revision: h.revision ?? 0,
      from: h.from,
      to: h.to ?? null,
      asset: h.asset,
      amount: h.amount,
      blockNumber: h.blockNumber,
    },
  };
}

/** `--limit` of the operator listings of held records (`held list`, `orders held`): kv/pipeline.ts HELD_PAGE_*. */
export const heldLimitInput = z.string()
  .regex(/^[1-9]\d*$/, `Must be a whole number from 1 to ${HELD_PAGE_MAX}`)
  .refine((v) => Number(v) <= HELD_PAGE_MAX, `Must be a whole number from 1 to ${HELD_PAGE_MAX}`)
  .optional()
  .describe(`At most this many records, the newest (default ${HELD_PAGE_DEFAULT}, at most ${HELD_PAGE_MAX})`);

export const heldLimit = (limit: string | undefined): number => limit ? Number(limit) : HELD_PAGE_DEFAULT;

/** The listing's last line: how many of how many, and how to see more. */
export function heldCountLine(shown: number, total: number, what: string): string {
  const more = shown < total ? ` (--limit shows more, up to ${HELD_PAGE_MAX})` : "";
  return `${shown} of ${total} ${what}, newest first${more}`;
}

export const heldList = defineOp({
  name: "held list",
  summary: "Records held for an operator, newest first: orders held by a reorg or a cap, and held transfers",
  scope: "read",
  http: { method: "get", path: "/held" },
  input: z.object({ limit: heldLimitInput }),
  output: z.object({
    held: z.array(HeldItem),
    total: z.number().int().describe("Held records in all, shown or not"),
  }),
  run: async (ctx, input) => {
    const limit = heldLimit(input.limit);
    // Order holds are read whole: each is a confirmed order a reorg or a cap held, so they grow with real deposits,
    // not with what outsiders send. Held transfers come from their time index and counter (kv/pipeline.ts).
    const [holds, transfers, transferCount] = await Promise.all([
      listOrderHolds(ctx.kv),
      listHeldNewest(ctx.kv, limit),
      countHeld(ctx.kv),
    ]);
    const page = [
      ...holds.map(({ orderId, hold }) => ({ at: hold.at, item: () => orderHoldItem(ctx, orderId, hold) })),
      ...transfers.map((h) => ({ at: h.detectedAt, item: () => Promise.resolve(heldTransferItem(h)) })),
    ].sort((a, b) => a.at < b.at ? 1 : a.at > b.at ? -1 : 0).slice(0, limit);
    const held: HeldItemOut[] = [];
    for (const p of page) held.push(await p.item());
    return { held, total: holds.length + transferCount };
  },
  text: ({ held, total }) => [
    ...held.map((h) => {
      const t = h.transfer;
      const what = h.order
        ? `${h.order.type} ${displayAmount(h.order.amount, h.order.token)} ` +
          `${h.order.sourceChain}->${h.order.destinationChain} (${h.order.status}, owner ${h.order.owner})`
        : `${
          displayAmount(t!.amount, t!.asset === "native" && isNativeChain(t!.chain) ? nativeUnit(t!.chain) : t!.asset)
        } from ${t!.from} (block ${t!.blockNumber})`;
      return `${h.id}\t${h.kind}\t${h.at}\t${what}\t${h.reason}`;
    }),
    heldCountLine(held.length, total, "held record(s)"),
  ],
});

// ---- release ----

const ReleaseOut = z.object({
  id: z.string(),
  kind: z.enum(["reorg", "cap", "transfer"]),
  orderId: z.string().describe("The order released, or the burn order a released transfer became"),
  approvedCaps: z.array(z.string()).describe("A cap hold: the caps the order is approved over"),
  by: z.string(),
  auditId: z.string(),
});
type ReleaseResult = z.infer<typeof ReleaseOut>;

/** Releases a held record (the one implementation behind `held release` and `order release`). */
export async function releaseHeld(ctx: OpContext, id: HeldId): Promise<ReleaseResult> {
  return id.kind === "order" ? await releaseOrderHold(ctx, id.orderId) : await releaseTransfer(ctx, id);
}

/**
 * Lifts an order hold in one atomic checked against the hold, the order and its schedule: a cap hold records its
 * approval on the order (and clears its held reason); the order is due now.
 */
async function releaseOrderHold(ctx: OpContext, orderId: string): Promise<ReleaseResult> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const [hold, entry, due] = await Promise.all([
      ctx.kv.get<OrderHold>(orderHoldKey(orderId)),
      getOrder(ctx.kv, orderId),
      ctx.kv.get<number>(dueAtKey(orderId)),
    ]);
    if (hold.value === null) throw new OpError(404, `order ${orderId} is not held`);
    const kind = holdKind(hold.value);
    const at = ctx.now();
    const op = ctx.kv.atomic().check(hold).delete(hold.key);
    let after: unknown = null;
    const caps = kind === "cap" ? hold.value.caps ?? [] : [];
    if (kind === "cap") {
      if (entry.invalid || entry.versionstamp === null) {
        throw new OpError(409, `order ${orderId} cannot be approved: its stored record is missing or invalid`);
      }
      const approval = {
        caps: caps.length ? caps : ["perOrder" as const, "perDay" as const],
        by: ctx.by,
        at: at.toISOString(),
      };
      const approvals = [...(entry.value.details.capApprovals ?? []), approval];
      addOrderUpdate(op, entry, withDetails(entry.value, { capApprovals: approvals, heldReason: undefined }));
      after = { approved: approval };
    }
    // Due now: the pipeline steps it at its next sweep instead of after its long wait.
    addReschedule(op, orderId, due, at.getTime());
    op.enqueue({ kind: WAKE, orderId } satisfies WakeMessage);
    const audit = appendAudit(
      op,
      { by: ctx.by, action: "order.release", subject: orderId, before: hold.value, after },
      at,
    );
    if ((await op.commit()).ok) {
      return { id: `order:${orderId}`, kind, orderId, approvedCaps: caps, by: ctx.by, auditId: audit.id };
    }
  }
  throw new OpError(409, `order ${orderId} changed meanwhile; nothing was changed, try again`);
}

/**
 * A held transfer is never paid by a release, with one exception: a uAsset transfer held for want of a burn
 * configuration, whose sender has configured a burn to that uAsset's chain since. Then it becomes the burn order the
 * watcher would have made (the configuration's destination and memo), in one atomic that replaces the held record
 * and its dedupe record (checked by version, so a refund or a second release racing it fails). The order confirms
 * (re-reading the transfer on chain) and pays out like any burn, under the controls.
 */
async function releaseTransfer(ctx: OpContext, id: HeldId & { kind: "transfer" }): Promise<ReleaseResult> {
  const key = heldKey(id.chain, id.txHash, id.index, id.revision);
  const seen = seenKey(id.chain, id.txHash, id.index, id.revision);
  const [held, seenEntry] = await Promise.all([ctx.kv.get<HeldTransfer>(key), ctx.kv.get<SeenTransfer>(seen)]);
  const shown = `transfer:${id.chain}:${id.txHash}:${id.index}${id.revision ? `:${id.revision}` : ""}`;
  if (held.value === null) throw new OpError(404, `no held record ${shown}`);
  const h = held.value;
  const refuse = (why: string) =>
    new OpError(
      409,
      `${shown} cannot be released: ${why}. Return it to its sender with \`held refund ${shown}\`; nothing was changed`,
    );
  if (h.asset === "native") throw refuse(`it is a native deposit held because ${h.reason}`);
  const native = nativeChainOfUAsset(h.asset);
  if (!native || !isEvmChain(h.chain)) throw refuse(h.reason);
  const config = await getBurnConfig(ctx.kv, h.from, native);
  if (!config) throw refuse(`its sender ${h.from} has no burn configuration for ${native}`);
  const pctx: PipelineContext = {
    kv: ctx.kv,
    chains: await ctx.chains(),
    settings: ctx.settings(),
    now: ctx.now,
    log: () => {},
  };
  const transfer = {
    txHash: h.txHash,
    index: h.index,
    from: h.from,
    to: h.to ?? "",
    amount: BigInt(h.amount),
    asset: h.asset as UAsset,
  };
  const record = await burnRecordOf(pctx, h.chain, h.blockNumber, transfer, id.revision);
  if (record.kind !== "order") throw refuse(record.kind === "held" ? record.held.reason : record.reason);
  const order = record.order;
  const at = ctx.now();
  const op = deleteHeldTransfer(ctx.kv.atomic().check(seenEntry), held as Deno.KvEntry<HeldTransfer>)
    .set(seen, { kind: "order", orderId: order.id } satisfies SeenTransfer);
  addOrderCreate(op, order);
  addReschedule(op, order.id, { key: dueAtKey(order.id), value: null, versionstamp: null }, at.getTime());
  op.enqueue({ kind: WAKE, orderId: order.id } satisfies WakeMessage);
  const after = { orderId: order.id, destinationWallet: order.destinationWallet, destinationChain: native };
  const audit = appendAudit(op, { by: ctx.by, action: "held.release", subject: shown, before: h, after }, at);
  if (!(await op.commit()).ok) throw new OpError(409, `${shown} changed meanwhile; nothing was changed, try again`);
  return { id: shown, kind: "transfer", orderId: order.id, approvedCaps: [], by: ctx.by, auditId: audit.id };
}

function releaseText(r: ReleaseResult): string[] {
  if (r.kind === "transfer") {
    return [`${r.id} released by ${r.by} (audit ${r.auditId}): it is burn order ${r.orderId}, paid as configured`];
  }
  const lines = [`order ${r.orderId} released by ${r.by} (audit ${r.auditId}); the pipeline steps it again`];
  if (r.kind === "cap") {
    lines.push(`approved over its ${r.approvedCaps.join(", ")} cap(s); it counts in the day's usage`);
  }
  return lines;
}

export const heldRelease = defineOp({
  name: "held release",
  summary: "Releases a held record: lifts an order hold (approving a cap hold), or makes a held transfer a burn " +
    "order once its sender has a burn configuration",
  scope: "operate",
  http: { method: "post", path: "/held/{id}/release" },
  input: z.object({ id: z.string().min(1).max(300).describe(HELD_ID_FORMAT) }),
  positionals: ["id"],
  output: ReleaseOut,
  run: async (ctx, { id }) => {
    const parsed = parseHeldId(id);
    if (!parsed) throw new OpError(400, `${id} is not a held record id: ${HELD_ID_FORMAT}`);
    return await releaseHeld(ctx, parsed);
  },
  text: releaseText,
});

export const orderRelease = defineOp({
  name: "order release",
  summary: "Lifts an order's hold (a reorg past finality, or a cap: approved); the order is due now",
  scope: "operate",
  http: { method: "post", path: "/orders/{id}/release" },
  input: z.object({ id: z.string().min(1).max(100).describe("The order id") }),
  positionals: ["id"],
  output: ReleaseOut,
  run: async (ctx, { id }) => await releaseHeld(ctx, { kind: "order", orderId: id }),
  text: releaseText,
});

export const HELD_OPS = [heldList, heldRelease, orderRelease];
