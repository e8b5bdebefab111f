/**
 * The refund actor (docs/refunds.md): steps each due refund (kv/refunds.ts) exactly as the order actor steps a
 * payout. Write-ahead: a transaction is prepared, then recorded on the refund together with its reservations (coins,
 * nonce, hot-wallet hold) in one atomic checked against the refund version read, and only then broadcast. A later
 * step asks `txStatus` about the recorded transaction and re-sends the same bytes while the chain does not know it;
 * a new transaction is signed only after the chain proves the recorded one dead (kept in `attempts`). A crash
 * anywhere loses nothing (the record is there before anything is sent) and sends nothing twice (one recorded
 * transaction at a time, re-sent as the same bytes).
 */
import { type Chains, isCounted, type PreparedTx, TransientChainError } from "../chains/adapter.ts";
import { isEvmChain, type NativeChain, type UAsset } from "../chains/catalog.ts";
import { raiseAlert } from "../kv/alerts.ts";
import { addReservations } from "../kv/chain_state.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import type { Intent } from "../model/order.ts";
import { deadSentTx, InvalidRecordError, sentTxOf } from "../model/sent_tx.ts";
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import {
  getRefund,
  isFinalRefund,
  listDueRefunds,
  type Refund,
  refundDueKey,
  refundKey,
  validRefund,
} from "../kv/refunds.ts";
import { acquireLease } from "../kv/pipeline.ts";
import type { RecordedSource } from "./refund_create.ts";
import type { PipelineContext, PipelineSettings } from "./context.ts";
import { REFUND_POLICY } from "./follow_up.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { prepareFundedPayout } from "./payout_funding.ts";
import { withSigningPurpose } from "../chains/signing.ts";

export type RefundStepOutcome = "moved" | "waiting" | "done" | "conflict" | "missing";

/** Rechecked this rarely while only an operator (or another process's configuration) can unblock it. */
export const REFUND_BLOCKED_RECHECK_MS = 10 * 60_000;

/** The waiting reason of a uAsset refund on a chain whose transfer address this process cannot sign for. */
export function noUAssetSenderReason(chain: string): string {
  return `no uAsset sender for ${chain}: this process cannot sign for the transfer address there ` +
    "(its key is not ours, or the chain's sender is not built); the refund waits";
}

type Step =
  | { kind: "wait"; ms: number; reason?: string; alert?: "refund_waiting" }
  | { kind: "record"; prepared: PreparedTx; intent: Intent }
  | { kind: "update"; refund: Refund; effects?: SentTxEffect[]; nextMs: number | null; alert?: "refund_failed" };

/**
 * One step of refund `id`. Returns what happened; a lost race ("conflict") changed nothing and sent nothing.
 */
export function stepRefund(ctx: PipelineContext, id: string): Promise<RefundStepOutcome> {
  // Every signature asked for in this step is for this refund (chains/signing.ts).
  return withSigningPurpose({ kind: "refund", id }, () => stepRefundIn(ctx, id));
}

async function stepRefundIn(ctx: PipelineContext, id: string): Promise<RefundStepOutcome> {
  const due = await ctx.kv.get<number>(refundDueKey(id), { consistency: "strong" });
  let entry: Deno.KvEntryMaybe<Refund>;
  try {
    entry = await getRefund(ctx.kv, id);
  } catch (err) {
    if (!(err instanceof InvalidRecordError)) throw err;
    return await holdInvalidRefund(ctx, id, due, err);
  }
  if (entry.value === null) return "missing";
  const refund = entry.value;
  if (isFinalRefund(refund)) {
    if (due.value !== null) await ctx.kv.atomic().check(due).delete(due.key).commit();
    return "done";
  }
  if (due.value !== null && due.value > ctx.now().getTime()) return "waiting";
  let step: Step;
  try {
    step = await decide(ctx, refund);
  } catch (err) {
    const note = err instanceof Error ? err.message : String(err);
    if (!(err instanceof TransientChainError)) ctx.log(`refund ${id}: step failed unexpectedly; will look again`, err);
    step = { kind: "wait", ms: ctx.settings.retryBaseMs, reason: `last step failed: ${note}` };
  }
  const now = ctx.now();
  const at = now.toISOString();
  const atomic = ctx.kv.atomic().check(entry).check(due);
  if (step.kind === "wait") {
    const reason = step.reason;
    if (reason !== refund.waitingReason) {
      const next: Refund = { ...refund, updatedAt: at };
      if (reason) next.waitingReason = reason;
      else delete next.waitingReason;
      atomic.set(refundKey(id), validRefund(next));
    }
    atomic.set(refundDueKey(id), now.getTime() + step.ms);
    if (!(await atomic.commit()).ok) return "conflict";
    if (step.alert && reason && reason !== refund.waitingReason) {
      await raiseAlert(ctx.kv, {
        kind: step.alert,
        subject: id,
        chain: refund.chain,
        message: `refund ${id} of ${refund.heldId}: ${reason}`,
        now,
      });
    }
    return "waiting";
  }
  if (step.kind === "record") {
    const next: Refund = { ...refund, status: "sending", intent: step.intent, updatedAt: at };
    delete next.waitingReason;
    ctx.faultPoint?.("after-sign");
    atomic.set(refundKey(id), validRefund(next));
    addReservations(atomic, step.prepared);
    atomic.set(refundDueKey(id), now.getTime() + ctx.settings.blockMs(refund.chain));
    if (!(await atomic.commit()).ok) return "conflict";
    // Recorded first, sent second: a failure here is retried from the recorded intent by a later step.
    ctx.faultPoint?.("after-record");
    try {
      await senderOf(ctx, refund)?.broadcast(step.prepared);
      ctx.faultPoint?.("after-broadcast");
    } catch (err) {
      if (!(err instanceof TransientChainError)) ctx.log(`refund ${id}: broadcast failed; will retry`, err);
    }
    return "moved";
  }
  atomic.set(refundKey(id), validRefund({ ...step.refund, updatedAt: at }));
  if (step.nextMs === null) atomic.delete(refundDueKey(id));
  else atomic.set(refundDueKey(id), now.getTime() + step.nextMs);
  addSentTxEffects(atomic, step.effects ?? []);
  if (!(await atomic.commit()).ok) return "conflict";
  if (step.alert) {
    await raiseAlert(ctx.kv, {
      kind: step.alert,
      subject: id,
      chain: refund.chain,
      message: `refund ${id} of ${refund.heldId}: its transaction ${step.refund.failedIntent?.txHash} failed on ` +
        `chain; nothing more is sent for it (the refund record keeps the attempt)`,
      now,
    });
  }
  return "moved";
}

/** Rechecked this rarely: only an operator can repair a stored refund that fails its schema. */
export const INVALID_REFUND_RECHECK_MS = 10 * 60_000;

/**
 * A stored refund failing its schema is not stepped on a guess (like an invalid order, actors/order_actor.ts
 * `holdInvalid`): untouched, only its schedule moves, each look logged and counted on one `invalid_record` alert that
 * names the key and the bad fields, until an operator repairs it.
 */
async function holdInvalidRefund(
  ctx: PipelineContext,
  id: string,
  due: Deno.KvEntryMaybe<number>,
  invalid: InvalidRecordError,
): Promise<RefundStepOutcome> {
  const now = ctx.now();
  if (due.value !== null && due.value > now.getTime()) return "waiting";
  const moved = await ctx.kv.atomic().check(due).set(refundDueKey(id), now.getTime() + INVALID_REFUND_RECHECK_MS)
    .commit();
  if (!moved.ok) return "conflict";
  ctx.log(`refund ${id}: not stepped: ${invalid.message}`);
  await raiseAlert(ctx.kv, {
    kind: "invalid_record",
    subject: invalid.subject,
    chain: null,
    message: `${invalid.message}; the refund waits untouched until the stored record is repaired`,
    now,
  });
  return "waiting";
}

function senderOf(ctx: PipelineContext, refund: Refund) {
  if (refund.kind === "native") return ctx.chains.payer(refund.chain as NativeChain);
  if (!isEvmChain(refund.chain)) throw new Error(`refund ${refund.id}: uAsset refund on ${refund.chain}`);
  return ctx.chains.uAssetSender?.(refund.chain) ?? null;
}

async function decide(ctx: PipelineContext, refund: Refund): Promise<Step> {
  if (!ctx.settings.isEnabled(refund.chain)) {
    return {
      kind: "wait",
      ms: REFUND_BLOCKED_RECHECK_MS,
      reason: `chain ${refund.chain} is disabled in this process`,
      alert: "refund_waiting",
    };
  }
  if (refund.status === "pending") {
    return refund.kind === "native" ? await prepareNative(ctx, refund) : await prepareUAsset(ctx, refund);
  }
  return await decideSent(ctx, refund);
}

function recorded(ctx: PipelineContext, refund: Refund, prepared: PreparedTx): Step {
  return { kind: "record", prepared, intent: sentTxOf(refund.chain, prepared, ctx.now()) };
}

/** A native refund, funded exactly as a burn's payout: treasury coins (UTXO) or the hot wallet after its holds. */
async function prepareNative(ctx: PipelineContext, refund: Refund): Promise<Step> {
  const chain = refund.chain as NativeChain;
  const funded = await prepareFundedPayout(ctx, chain, {
    orderId: refund.id,
    to: refund.to,
    amount: BigInt(refund.amount),
    memo: null,
  });
  if (funded.kind === "below_reserve") {
    return { kind: "wait", ms: REFUND_BLOCKED_RECHECK_MS, reason: funded.detail, alert: "refund_waiting" };
  }
  if (funded.kind === "wait") return { kind: "wait", ms: ctx.settings.blockMs(chain), reason: funded.reason };
  const prepared = funded.prepared;
  return recorded(ctx, refund, prepared);
}

/** A uAsset refund: `transfer(to, amount)` from the transfer address, when this process can sign for it. */
async function prepareUAsset(ctx: PipelineContext, refund: Refund): Promise<Step> {
  const sender = senderOf(ctx, refund);
  if (!sender || !("prepareTransfer" in sender)) {
    return {
      kind: "wait",
      ms: REFUND_BLOCKED_RECHECK_MS,
      reason: noUAssetSenderReason(refund.chain),
      alert: "refund_waiting",
    };
  }
  const prepared = await sender.prepareTransfer({
    asset: refund.asset as UAsset,
    to: refund.to,
    amount: BigInt(refund.amount),
    refundId: refund.id,
  });
  return recorded(ctx, refund, prepared);
}

/**
 * The recorded transaction, followed by the one driver (actors/sent_tx.ts) under the refund policy: final, failed,
 * dead (re-sign), or not yet mined (the same bytes again, or nudged).
 */
async function decideSent(ctx: PipelineContext, refund: Refund): Promise<Step> {
  const intent = refund.intent!;
  const blockMs = ctx.settings.blockMs(intent.chain);
  const followed = await followSentTx(
    followDepsOf(ctx),
    intent,
    {
      required: ctx.settings.confirmations(intent.chain),
      policy: REFUND_POLICY,
      sender: senderOf(ctx, refund),
      label: `refund ${refund.id}`,
      afterDeath: "the refund signs a new transaction",
    },
  );
  switch (followed.kind) {
    case "dead": {
      const dead = deadSentTx(intent, { proof: followed.proof, detail: followed.detail, at: ctx.now() });
      const pending: Refund = { ...refund, status: "pending", attempts: [...refund.attempts, dead] };
      delete pending.intent;
      // The same releases as a dead payout's: its coins, its hot-wallet hold; coins a conflicting spend took leave.
      return { kind: "update", refund: pending, effects: followed.effects, nextMs: 0 };
    }
    case "failed": {
      const failed: Refund = { ...refund, status: "failed", failedIntent: intent };
      delete failed.intent;
      return { kind: "update", refund: failed, effects: followed.effects, nextMs: null, alert: "refund_failed" };
    }
    case "final": {
      const completed: Refund = { ...refund, status: "completed", transactionHash: followed.txHash };
      delete completed.waitingReason;
      return { kind: "update", refund: completed, effects: followed.effects, nextMs: null };
    }
    case "waiting":
      // It needed sending and nothing here can sign for it: it waits, saying why.
      if (followed.blocked) {
        return { kind: "wait", ms: REFUND_BLOCKED_RECHECK_MS, reason: noUAssetSenderReason(refund.chain) };
      }
      return { kind: "wait", ms: followed.blocks * blockMs };
  }
}

/**
 * The refund tick (actors/ticks.ts): steps due refunds under the `refunds` lease. Idle (nothing due): one range read,
 * no commit. Loops step one slice; cron runs keep going while refunds are due and the budget lasts.
 */
export async function refundsTick(
  ctx: PipelineContext,
  owner: string,
  leaseMs: number,
  drain: boolean,
  outOfBudget: () => boolean,
): Promise<number> {
  let stepped = 0;
  for (;;) {
    const due = await listDueRefunds(ctx.kv, ctx.now().getTime(), 20);
    if (due.length === 0) return stepped;
    if (!(await acquireLease(ctx.kv, "refunds", owner, leaseMs, ctx.now().getTime()))) return stepped;
    for (const id of due) {
      if (outOfBudget()) return stepped;
      await stepRefund(ctx, id);
      stepped++;
    }
    if (!drain || outOfBudget()) return stepped;
  }
}

/**
 * Whether the transfer a held record was made from is on chain now, counted final, with the recorded facts (index,
 * asset, amount, sender where the chain names one), paying us (`paysUs` of its recipient): null when it is, else why
 * not. A refund pays from our funds: a
 * transfer a reorg took away or re-executed with other facts is never refunded.
 */
export async function verifySourceOnChain(
  chains: Chains,
  settings: Pick<PipelineSettings, "confirmations">,
  source: RecordedSource,
  paysUs: (to: string) => Promise<boolean>,
): Promise<string | null> {
  const reader = chains.reader(source.chain);
  const status = await reader.txStatus(source.txHash);
  if (status.state !== "included" || !status.success) {
    return `its transfer ${source.txHash} on ${source.chain} is ${status.state}, not a successful transaction on chain`;
  }
  const required = settings.confirmations(source.chain);
  if (!isCounted(status, required)) {
    return `its transfer ${source.txHash} on ${source.chain} is not final yet (${status.confirmations} of ` +
      `${required} confirmations)`;
  }
  const transfers = await reader.transfersOf(source.txHash);
  const t = transfers?.find((t) => t.index === source.index);
  const sameFrom = !t || t.from === "" || t.from.toLowerCase() === source.from.toLowerCase();
  if (!t || t.asset !== source.asset || t.amount.toString() !== source.amount || !sameFrom) {
    return `its transfer ${source.txHash}:${source.index} on ${source.chain} no longer has the recorded facts ` +
      `(${source.amount} ${source.asset} from ${source.from})`;
  }
  // A transfer that did not reach us (a record made from a reorg's new facts, a stale record) is not ours to give back.
  if (!(await paysUs(t.to))) {
    return `its transfer ${source.txHash}:${source.index} on ${source.chain} paid ${t.to}: it did not pay us`;
  }
  return null;
}
