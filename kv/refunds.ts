/**
 * Refunds of held records (docs/refunds.md): an operator returns what a held record holds to its sender
 * instead of releasing it into the pipeline. A refund is an outgoing transaction like any payout: created in ONE
 * atomic with the removal of the held record (or the cancellation of the held order) and its audit entry
 * (actors/refund_create.ts), then stepped by actors/refunds.ts, which records each transaction with what it consumes
 * before sending it. This module only keys, writes and reads them.
 *
 * Keys:
 * - `["refund", id]`: the refund record;
 * - `["refund_due", id]`: when the refund actor should look at it next (ms), present while it is not final. The
 *   actor's tick lists these; none means an idle tick reads one empty range and commits nothing.
 */
import { parseHeldId } from "./held_ids.ts";
import { z } from "zod";
import { type ChainSymbol, type UAsset } from "../chains/catalog.ts";
import type { Intent } from "../model/order.ts";
import { type Refund, REFUND_CHAINS, REFUND_STATUSES, RefundRecordSchema } from "../model/refund.ts";
import { type InvalidRecordError, parseRecord, validRecord } from "../model/sent_tx.ts";
import type { HeldTransfer } from "./pipeline.ts";

// The stored record's schema and type live in model/refund.ts: checked on every write and read here.
export { type Refund, REFUND_CHAINS, REFUND_STATUSES, type RefundStatus } from "../model/refund.ts";

export const refundKey = (id: string): Deno.KvKey => ["refund", id];
export const refundDueKey = (id: string): Deno.KvKey => ["refund_due", id];

export function isFinalRefund(r: Refund): boolean {
  return r.status === "completed" || r.status === "failed";
}

/** How a refund record is named in errors and alerts: its key. */
export function refundSubject(id: string): string {
  return refundKey(id).join("/");
}

/**
 * The stored refund, checked against its schema (versionstamp null when there is none). Throws InvalidRecordError,
 * naming the key and the bad fields, for a stored record that fails it: never handed out as a Refund to act on.
 */
export async function getRefund(kv: Deno.Kv, id: string): Promise<Deno.KvEntryMaybe<Refund>> {
  const entry = await kv.get<unknown>(refundKey(id), { consistency: "strong" });
  if (entry.versionstamp === null) return { key: entry.key, value: null, versionstamp: null };
  const parsed = parseRecord(RefundRecordSchema, refundSubject(id), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { key: entry.key, value: parsed.value, versionstamp: entry.versionstamp };
}

/** `next`, about to be written, checked: refused naming the field before the commit, and nothing is written. */
export function validRefund(next: Refund): Refund {
  return validRecord(RefundRecordSchema, refundSubject(next.id), next);
}

/**
 * Every refund, oldest id first (ids start with the creation time), each checked: the valid ones, and the stored ones
 * that fail their schema (for the reader to report, never to count on a guess).
 */
export async function listRefunds(kv: Deno.Kv): Promise<{ refunds: Refund[]; invalid: InvalidRecordError[] }> {
  const refunds: Refund[] = [], invalid: InvalidRecordError[] = [];
  for await (const e of kv.list<unknown>({ prefix: ["refund"] })) {
    const parsed = parseRecord(RefundRecordSchema, e.key.map(String).join("/"), e.value);
    if (parsed.ok) refunds.push(parsed.value);
    else invalid.push(parsed.error);
  }
  return { refunds, invalid };
}

/** Refund ids due at `nowMs` or before (at most `limit`). */
export async function listDueRefunds(kv: Deno.Kv, nowMs: number, limit = 100): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list<number>({ prefix: ["refund_due"] }, { limit: 1000 })) {
    if (e.value <= nowMs) out.push(String(e.key[1]));
    if (out.length >= limit) break;
  }
  return out;
}

/** The JSON shape of a refund, for operations' output schemas. */
export const RefundSchema = z.object({
  id: z.string(),
  heldId: z.string(),
  kind: z.enum(["native", "uasset"]),
  chain: z.enum(REFUND_CHAINS),
  asset: z.string(),
  to: z.string(),
  amount: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  status: z.enum(REFUND_STATUSES),
  intent: z.object({ chain: z.string(), txHash: z.string(), preparedAt: z.string() }).optional(),
  attempts: z.array(z.object({ txHash: z.string(), detail: z.string(), deadAt: z.string() })),
  waitingReason: z.string().optional(),
  transactionHash: z.string().optional(),
  failedIntent: z.object({ chain: z.string(), txHash: z.string(), preparedAt: z.string() }).optional(),
  updatedAt: z.string(),
});
export type RefundView = z.infer<typeof RefundSchema>;

/** A refund as operators see it: no raw transaction bytes. */
export function refundView(r: Refund): RefundView {
  const brief = (i: Intent) => ({ chain: i.chain, txHash: i.txHash, preparedAt: i.preparedAt });
  return {
    id: r.id,
    heldId: r.heldId,
    kind: r.kind,
    chain: r.chain as RefundView["chain"],
    asset: r.asset,
    to: r.to,
    amount: r.amount,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
    status: r.status,
    ...(r.intent ? { intent: brief(r.intent) } : {}),
    attempts: r.attempts.map((a) => ({ txHash: a.txHash, detail: a.detail, deadAt: a.deadAt })),
    ...(r.waitingReason ? { waitingReason: r.waitingReason } : {}),
    ...(r.transactionHash ? { transactionHash: r.transactionHash } : {}),
    ...(r.failedIntent ? { failedIntent: brief(r.failedIntent) } : {}),
    updatedAt: r.updatedAt,
  };
}

// ---- reconciliation (actors/reconciliation.ts gatherFacts) ----

/**
 * What uAsset refunds mean to the transfer address's books:
 * - `held`: a refund of a held transfer removed its held record, yet the uAssets were received all the same: each
 *   counts as a held record (of any status: until sent they are there, once sent `refundedWei` says where they went);
 * - `left`, per (chain, asset): `refundedWei` sent back by final refunds, `leavingWei` by recorded, not yet final ones
 *   (on chain already, or not yet). A refund of a held burn order needs no `held` entry: the cancelled order counts.
 */
export function refundBooks(refunds: readonly Refund[]): {
  held: HeldTransfer[];
  left: { chain: ChainSymbol; asset: string; refundedWei: bigint; leavingWei: bigint }[];
} {
  const held: HeldTransfer[] = [];
  const left = new Map<string, { chain: ChainSymbol; asset: string; refundedWei: bigint; leavingWei: bigint }>();
  for (const r of refunds) {
    if (r.kind !== "uasset") continue;
    const ref = parseHeldId(r.heldId);
    if (ref?.kind === "transfer") {
      held.push({
        chain: ref.chain,
        txHash: ref.txHash,
        index: ref.index,
        from: r.to,
        asset: r.asset as UAsset,
        amount: r.amount,
        blockNumber: 0,
        detectedAt: r.createdAt,
        reason: `refunded by ${r.id} (${r.status})`,
        ...(ref.revision > 0 ? { revision: ref.revision } : {}),
      });
    }
    const k = `${r.chain}:${r.asset}`;
    const e = left.get(k) ?? { chain: r.chain, asset: r.asset, refundedWei: 0n, leavingWei: 0n };
    if (r.status === "completed") e.refundedWei += BigInt(r.amount);
    if (r.status === "sending") e.leavingWei += BigInt(r.amount);
    left.set(k, e);
  }
  return { held, left: [...left.values()] };
}
