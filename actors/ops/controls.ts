/**
 * Operator controls (docs/controls.md): pause and resume per chain and per uAsset, caps per order and per UTC day per
 * uAsset (kv/controls.ts; the order actor applies them, actors/controls.ts). Each change is one atomic, checked against
 * the controls read, with its audit entry. A resume then makes every order waiting on a pause due now.
 */
import { z } from "zod";
import { CHAIN_SYMBOLS, type ChainSymbol, type UAsset, UASSETS } from "../../chains/catalog.ts";
import { appendAudit } from "../../kv/audit.ts";
import {
  addControlsUpdate,
  type Cap,
  type Controls,
  getControls,
  getDayUsage,
  listPausedOrders,
  pausedOrderKey,
  utcDay,
} from "../../kv/controls.ts";
import { addReschedule, dueAtKey } from "../../kv/pipeline.ts";
import { getOrder } from "../../kv/orders.ts";
import { isTerminal } from "../transition.ts";
import { WAKE, type WakeMessage } from "../wake.ts";
import { defineOp, digits, type OpContext, OpError } from "./op.ts";

const chainParam = z.enum(CHAIN_SYMBOLS, { error: `Must be one of ${CHAIN_SYMBOLS.join(", ")}` })
  .describe("A chain symbol");
const assetParam = z.enum(UASSETS, { error: `Must be one of ${UASSETS.join(", ")}` }).describe("A uAsset symbol");
const reasonField = z.string().max(500, "Must be at most 500 characters").optional()
  .describe("Why, for the orders' held reason and the audit log");

const PauseOut = z.object({ by: z.string(), at: z.string(), reason: z.string() });
const CapOut = z.object({ perOrder: z.string().nullable(), perDay: z.string().nullable() });

export const controlsShow = defineOp({
  name: "controls",
  summary: "Paused chains and uAssets, caps per order and per UTC day, and today's usage of each per-day cap",
  scope: "read",
  http: { method: "get", path: "/controls" },
  input: z.object({}),
  output: z.object({
    pausedChains: z.array(PauseOut.extend({ chain: z.string() })),
    pausedAssets: z.array(PauseOut.extend({ asset: z.string() })),
    caps: z.array(CapOut.extend({ asset: z.string(), day: z.string(), usedToday: z.string().nullable() })),
    pausedOrders: z.number().int().describe("Orders waiting on a pause (made due when it is resumed)"),
  }),
  run: async (ctx) => {
    const { controls } = await getControls(ctx.kv);
    const day = utcDay(ctx.now());
    const caps = await Promise.all(
      UASSETS.filter((a) => controls.caps[a]).map(async (asset) => {
        const cap = controls.caps[asset]!;
        const usage = cap.perDay !== undefined ? (await getDayUsage(ctx.kv, asset, day)).value : null;
        return {
          asset,
          perOrder: cap.perOrder ?? null,
          perDay: cap.perDay ?? null,
          day,
          usedToday: cap.perDay !== undefined ? usage?.used ?? "0" : null,
        };
      }),
    );
    return {
      pausedChains: CHAIN_SYMBOLS.filter((c) => controls.pausedChains[c]).map((chain) => ({
        chain,
        ...controls.pausedChains[chain]!,
      })),
      pausedAssets: UASSETS.filter((a) => controls.pausedAssets[a]).map((asset) => ({
        asset,
        ...controls.pausedAssets[asset]!,
      })),
      caps,
      pausedOrders: (await listPausedOrders(ctx.kv)).length,
    };
  },
  text: (r) => [
    ...r.pausedChains.map((p) => `paused chain ${p.chain}\tby ${p.by} at ${p.at}\t${p.reason}`),
    ...r.pausedAssets.map((p) => `paused asset ${p.asset}\tby ${p.by} at ${p.at}\t${p.reason}`),
    ...r.caps.map((c) =>
      `cap ${c.asset}\tper order ${c.perOrder ?? "none"}\tper day ${c.perDay ?? "none"}` +
      (c.usedToday !== null ? `\tused ${c.usedToday} on ${c.day} (UTC)` : "")
    ),
    `${r.pausedChains.length} paused chain(s), ${r.pausedAssets.length} paused uAsset(s), ${r.caps.length} ` +
    `uAsset(s) with caps; ${r.pausedOrders} order(s) waiting on a pause`,
  ],
});

const ChangeOut = z.object({ auditId: z.string(), by: z.string(), at: z.string() });

type Target = { kind: "chain"; name: ChainSymbol } | { kind: "asset"; name: UAsset };

function pausesOf(controls: Controls, t: Target) {
  return (t.kind === "chain" ? controls.pausedChains : controls.pausedAssets) as Record<
    string,
    Controls["pausedChains"]["sol"]
  >;
}

/** Pauses or resumes one chain or uAsset: one atomic checked against the controls read, with its audit entry. */
async function setPause(ctx: OpContext, t: Target, pause: boolean, reason = "") {
  const { controls, entry } = await getControls(ctx.kv);
  const before = pausesOf(controls, t)[t.name];
  if (pause && before) {
    throw new OpError(
      409,
      `${t.kind} ${t.name} is already paused (by ${before.by} at ${before.at}${
        before.reason ? `: ${before.reason}` : ""
      }); nothing was changed`,
    );
  }
  if (!pause && !before) throw new OpError(409, `${t.kind} ${t.name} is not paused; nothing was changed`);
  const at = ctx.now();
  const after = pause ? { by: ctx.by, at: at.toISOString(), reason } : null;
  const next = structuredClone(controls);
  const pauses = pausesOf(next, t);
  if (after) pauses[t.name] = after;
  else delete pauses[t.name];
  const op = addControlsUpdate(ctx.kv.atomic(), entry, next);
  const action = `${t.kind}.${pause ? "pause" : "resume"}`;
  const audit = appendAudit(op, { by: ctx.by, action, subject: t.name, before: before ?? null, after }, at);
  if (!(await op.commit()).ok) throw new OpError(409, "the controls changed meanwhile; nothing was changed, try again");
  const due = pause ? 0 : await makePausedOrdersDue(ctx.kv, at.getTime());
  return { auditId: audit.id, by: ctx.by, at: at.toISOString(), due };
}

/**
 * Every order that waited on a pause is due now (each checked against its schedule read, retried on a race), and
 * its entry is removed: an order still paused by another control waits again and is listed again. Not in the
 * resume's atomic (there may be many): a crash in between leaves them to their short recheck.
 */
export async function makePausedOrdersDue(kv: Deno.Kv, nowMs: number): Promise<number> {
  let n = 0;
  for (const orderId of await listPausedOrders(kv)) {
    for (let attempt = 0; attempt < 10; attempt++) {
      const [order, due] = await Promise.all([getOrder(kv, orderId), kv.get<number>(dueAtKey(orderId))]);
      const op = kv.atomic().delete(pausedOrderKey(orderId));
      const live = order.versionstamp !== null && (order.invalid || !isTerminal(order.value)) && due.value !== null;
      if (live) {
        addReschedule(op, orderId, due, nowMs);
        op.enqueue({ kind: WAKE, orderId } satisfies WakeMessage);
      }
      if ((await op.commit()).ok) {
        if (live) n++;
        break;
      }
    }
  }
  return n;
}

const pauseOut = (field: "chain" | "asset") =>
  ChangeOut.extend({ [field]: z.string(), paused: z.boolean(), reason: z.string().nullable() });
const resumeOut = (field: "chain" | "asset") =>
  ChangeOut.extend({
    [field]: z.string(),
    paused: z.boolean(),
    ordersDue: z.number().int().describe("Orders that waited on a pause, due now"),
  });

export const chainPause = defineOp({
  name: "chain pause",
  summary: "Pauses a chain: its deposits and burns are still detected and confirmed, nothing is minted or paid",
  scope: "operate",
  http: { method: "post", path: "/chains/{chain}/pause" },
  input: z.object({ chain: chainParam, reason: reasonField }),
  positionals: ["chain"],
  output: pauseOut("chain"),
  run: async (ctx, { chain, reason }) => {
    const r = await setPause(ctx, { kind: "chain", name: chain }, true, reason?.trim() ?? "");
    return { chain, paused: true, reason: reason?.trim() ?? "", auditId: r.auditId, by: r.by, at: r.at };
  },
  text: (r) => [`chain ${r.chain} paused by ${r.by} (audit ${r.auditId}); no mint or payout is recorded until resumed`],
});

export const chainResume = defineOp({
  name: "chain resume",
  summary: "Resumes a paused chain; the orders that waited on it are due now",
  scope: "operate",
  http: { method: "post", path: "/chains/{chain}/resume" },
  input: z.object({ chain: chainParam }),
  positionals: ["chain"],
  output: resumeOut("chain"),
  run: async (ctx, { chain }) => {
    const r = await setPause(ctx, { kind: "chain", name: chain }, false);
    return { chain, paused: false, ordersDue: r.due, auditId: r.auditId, by: r.by, at: r.at };
  },
  text: (r) => [`chain ${r.chain} resumed by ${r.by} (audit ${r.auditId}); ${r.ordersDue} waiting order(s) due now`],
});

export const assetPause = defineOp({
  name: "asset pause",
  summary: "Pauses a uAsset: its deposits and burns are still detected and confirmed, nothing is minted or paid",
  scope: "operate",
  http: { method: "post", path: "/assets/{asset}/pause" },
  input: z.object({ asset: assetParam, reason: reasonField }),
  positionals: ["asset"],
  output: pauseOut("asset"),
  run: async (ctx, { asset, reason }) => {
    const r = await setPause(ctx, { kind: "asset", name: asset }, true, reason?.trim() ?? "");
    return { asset, paused: true, reason: reason?.trim() ?? "", auditId: r.auditId, by: r.by, at: r.at };
  },
  text: (r) => [`asset ${r.asset} paused by ${r.by} (audit ${r.auditId}); no mint or payout is recorded until resumed`],
});

export const assetResume = defineOp({
  name: "asset resume",
  summary: "Resumes a paused uAsset; the orders that waited on it are due now",
  scope: "operate",
  http: { method: "post", path: "/assets/{asset}/resume" },
  input: z.object({ asset: assetParam }),
  positionals: ["asset"],
  output: resumeOut("asset"),
  run: async (ctx, { asset }) => {
    const r = await setPause(ctx, { kind: "asset", name: asset }, false);
    return { asset, paused: false, ordersDue: r.due, auditId: r.auditId, by: r.by, at: r.at };
  },
  text: (r) => [`asset ${r.asset} resumed by ${r.by} (audit ${r.auditId}); ${r.ordersDue} waiting order(s) due now`],
});

export const capSet = defineOp({
  name: "cap set",
  summary: "Sets a uAsset's caps (native smallest units) per order and per UTC day; a cap not given is removed",
  scope: "operate",
  http: { method: "post", path: "/caps/{asset}" },
  input: z.object({
    asset: assetParam,
    perOrder: digits("Most one order may move, native smallest units; absent: no per-order cap").optional(),
    perDay: digits("Most all orders of the uAsset may move per UTC day, native smallest units; absent: no per-day cap")
      .optional(),
  }),
  positionals: ["asset"],
  output: ChangeOut.extend({ asset: z.string(), before: CapOut, after: CapOut }),
  run: async (ctx, { asset, perOrder, perDay }) => {
    const { controls, entry } = await getControls(ctx.kv);
    const before = controls.caps[asset] ?? null;
    const cap: Cap = {};
    if (perOrder !== undefined) cap.perOrder = BigInt(perOrder).toString();
    if (perDay !== undefined) cap.perDay = BigInt(perDay).toString();
    const after = cap.perOrder === undefined && cap.perDay === undefined ? null : cap;
    const next = structuredClone(controls);
    if (after) next.caps[asset] = after;
    else delete next.caps[asset];
    const at = ctx.now();
    const op = addControlsUpdate(ctx.kv.atomic(), entry, next);
    const audit = appendAudit(op, { by: ctx.by, action: "cap.set", subject: asset, before, after }, at);
    if (!(await op.commit()).ok) {
      throw new OpError(409, "the controls changed meanwhile; nothing was changed, try again");
    }
    const shown = (c: Cap | null) => ({ perOrder: c?.perOrder ?? null, perDay: c?.perDay ?? null });
    return { asset, before: shown(before), after: shown(after), auditId: audit.id, by: ctx.by, at: at.toISOString() };
  },
  text: (r) => [
    `caps of ${r.asset} set by ${r.by} (audit ${r.auditId}): per order ${r.after.perOrder ?? "none"}, per day ${
      r.after.perDay ?? "none"
    } (was ${r.before.perOrder ?? "none"}, ${r.before.perDay ?? "none"})`,
  ],
});

export const CONTROL_OPS = [controlsShow, chainPause, chainResume, assetPause, assetResume, capSet];
