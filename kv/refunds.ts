/**
 * Refunds of held records (issue 14, docs/refunds.md): an operator returns what a held record holds to its sender
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
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS, type UAsset } from "../chains/catalog.ts";
import type { DeadIntent, Intent } from "../model/order.ts";
import type { HeldTransfer } from "./pipeline.ts";

export const REFUND_STATUSES = ["pending", "sending", "completed", "failed"] as const;
export type RefundStatus = typeof REFUND_STATUSES[number];

export interface Refund {
  id: string;
  /** The held record it resolved: `order:<orderId>` or `transfer:<chain>:<txHash>:<index>[:<revision>]`. */
  heldId: string;
  /** "native": a payout of the chain's coin (treasury or hot wallet); "uasset": a transfer from the transfer address. */
  kind: "native" | "uasset";
  chain: ChainSymbol;
  /** The native token symbol (SOL, DOGE, ...) or the uAsset symbol. */
  asset: string;
  to: string;
  /** Smallest units (native units, or wei for a uAsset), decimal. */
  amount: string;
  createdBy: string;
  createdAt: string;
  /**
   * pending: nothing recorded to send (yet, or again after a dead attempt); sending: `intent` recorded (maybe sent);
   * completed: `transactionHash` final on chain; failed: its transaction failed on chain (final), nothing more is sent.
   */
  status: RefundStatus;
  /** The transaction of the current attempt, recorded with its reservations before it is broadcast. */
  intent?: Intent;
  /** Attempts proven never to be mined, with their proofs (why another one was signed). */
  attempts: DeadIntent[];
  /** Why it waits (funds, a chain not run here, no uAsset sender), cleared when it moves. */
  waitingReason?: string;
  transactionHash?: string;
  /** The attempt that failed on chain, for a failed refund. */
  failedIntent?: Intent;
  updatedAt: string;
}

export const refundKey = (id: string): Deno.KvKey => ["refund", id];
export const refundDueKey = (id: string): Deno.KvKey => ["refund_due", id];

export function isFinalRefund(r: Refund): boolean {
  return r.status === "completed" || r.status === "failed";
}

export async function getRefund(kv: Deno.Kv, id: string): Promise<Deno.KvEntryMaybe<Refund>> {
  return await kv.get<Refund>(refundKey(id), { consistency: "strong" });
}

/** Every refund, oldest id first (ids start with the creation time). */
export async function listRefunds(kv: Deno.Kv): Promise<Refund[]> {
  const out: Refund[] = [];
  for await (const e of kv.list<Refund>({ prefix: ["refund"] })) out.push(e.value);
  return out;
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

export const REFUND_CHAINS = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;

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
