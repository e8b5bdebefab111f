/**
 * One step of an order's actor: read the order, look at the chain, decide an event with the pure `transition`,
 * and commit the new order together with its next schedule and doorbell in one atomic, checked against the version
 * that was read. Side effects that move value happen only after the commit that records them (write-ahead): a
 * prepared transaction is stored with the move to minting/burning, then broadcast; a later step re-broadcasts the
 * same bytes or reads their status. Two steps of the same order racing (a duplicate doorbell, two processes) cost a
 * wasted read at most: the loser's commit fails its check and nothing it prepared was ever sent.
 */
import {
  type ChainSender,
  type DeathProof,
  isCounted,
  type MintRequest,
  type ObservedTransfer,
  type PayoutRequest,
  type PreparedTx,
  TransientChainError,
} from "../chains/adapter.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import {
  chainFamily,
  type ChainSymbol,
  isEvmChain,
  NATIVE,
  type NativeChain,
  nativeToWei,
  weiToNative,
} from "../chains/catalog.ts";
import { addOrderUpdate, getOrder } from "../kv/orders.ts";
import {
  type BurnOrder,
  type InvalidOrderError,
  type MintOrder,
  type Order,
  type SourceTransfer,
  withDetails,
} from "../model/order.ts";
import { sentTxOf } from "../model/sent_tx.ts";
import { deadEffects, type SentTxEffect } from "../model/sent_tx_effects.ts";
import { addReschedule, dueAtKey, type OrderHold, orderHoldKey } from "../kv/pipeline.ts";
import { getControls, getDayUsage, pausedOrderKey, usageKey, utcDay } from "../kv/controls.ts";
import { controlDecision, usageNeeded } from "./controls.ts";
import { addAlert, raiseAlert, readAlert } from "../kv/alerts.ts";
import { addReservations } from "../kv/chain_state.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { getUserWallet } from "../kv/user_wallets.ts";
import { type PayoutObservation, payoutObservationKey } from "../kv/treasury.ts";
import { destinationAddressError } from "../chains/addresses.ts";
import type { PipelineContext } from "./context.ts";
import { addTransferRecord, burnRecordOf, type TransferRecord } from "./watcher.ts";
import { addSweepDueOf } from "./sweeper.ts";
import { prepareFundedPayout } from "./payout_funding.ts";
import { addBurnDueOf } from "../kv/onchain_burns.ts";
import type { OrderErrorKind } from "../messages.ts";
import { depositCoinEffect } from "./treasury_steps.ts";
import { type Intent, intentOf, isTerminal, type OrderEvent, transition } from "./transition.ts";
import { type FailedProof, ORDER_POLICY } from "./follow_up.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { checkMinterAllowance } from "./minter_allowance.ts";
import { redactUrls } from "../chains/shared/redact.ts";
import { WAKE, type WakeMessage } from "./wake.ts";

export type { SourceTransfer };

export type Decision =
  | {
    kind: "event";
    event: OrderEvent;
    /** A second event applied right after the first, in the same commit. */
    then?: OrderEvent;
    /** More writes for the same commit, as data (records the order's step creates, coins it spends or frees). */
    effects?: OrderEffect[];
    broadcast?: PreparedTx;
    chain?: Intent["chain"];
    /** Kept on the order the event makes (a failure's record of why it waited), instead of being cleared. */
    heldReason?: string;
  }
  /** `heldReason`: why the order waits for something outside it (stored on the order, cleared when it moves). */
  | {
    kind: "wait";
    ms: number;
    heldReason?: string;
    /** Writes for the waiting commit (what was seen of a recorded payout). */
    effects?: OrderEffect[];
  };

/**
 * A write an order's step adds to its commit, as data: a sent transaction's settling (model/sent_tx_effects.ts), what
 * was seen of a recorded UTXO payout, or the record of a burn's source transfer re-read after a reorg.
 */
export type OrderEffect =
  | SentTxEffect
  | { kind: "observePayout"; orderId: string; seen: PayoutObservation }
  | {
    kind: "recordTransfer";
    chain: ChainSymbol;
    transfer: ObservedTransfer;
    record: TransferRecord;
    revision: number;
  };

/** The one place an order step's effects become operations of its commit. */
function addOrderEffects(ctx: PipelineContext, atomic: Deno.AtomicOperation, effects: readonly OrderEffect[]): void {
  for (const e of effects) {
    if (e.kind === "observePayout") atomic.set(payoutObservationKey(e.orderId), e.seen);
    else if (e.kind === "recordTransfer") addTransferRecord(ctx, atomic, e.chain, e.transfer, e.record, e.revision);
    else addSentTxEffects(atomic, [e]);
  }
}

export type StepOutcome = "moved" | "waiting" | "done" | "conflict" | "missing";

export function stepOrder(ctx: PipelineContext, orderId: string): Promise<StepOutcome> {
  // Every signature asked for in this step (a mint, a payout, a fee bump) is for this order (chains/signing.ts).
  return withSigningPurpose({ kind: "order", id: orderId }, () => stepOrderIn(ctx, orderId));
}

async function stepOrderIn(ctx: PipelineContext, orderId: string): Promise<StepOutcome> {
  const [entry, due, hold, controls] = await Promise.all([
    getOrder(ctx.kv, orderId),
    ctx.kv.get<number>(dueAtKey(orderId), { consistency: "strong" }),
    ctx.kv.get<OrderHold>(orderHoldKey(orderId)),
    getControls(ctx.kv),
  ]);
  if (entry.versionstamp === null) return "missing";
  // A doorbell that rings before the order's due time (a stale or duplicate delivery, the sweep and the queue both
  // waking it) does nothing: stepping anyway would retry a transient error without its backoff.
  const early = due.value !== null && due.value > ctx.now().getTime();
  if (entry.invalid) return early ? "waiting" : await holdInvalid(ctx, orderId, entry, due, entry.invalid);
  const order = entry.value;
  if (isTerminal(order)) {
    if (due.value !== null) await addReschedule(ctx.kv.atomic(), orderId, due, null).commit();
    return "done";
  }
  if (early) return "waiting";
  if (hold.value !== null) return await waitForOperator(ctx, entry, due, hold.value);
  const disabled = disabledChainOf(ctx, order);
  if (disabled !== null) return await holdForDisabledChain(ctx, entry, due, disabled);
  const controlled = await applyControls(ctx, entry, due, hold, controls);
  if (typeof controlled === "string") return controlled;
  let decision: Decision;
  try {
    decision = await decide(ctx, order);
  } catch (err) {
    const transient = err instanceof TransientChainError;
    if (!transient) ctx.log(`order ${orderId}: step failed unexpectedly; will look again`, err);
    return await waitWithBackoff(ctx, entry, due, err);
  }
  if (decision.kind === "wait") {
    const waiting = withoutErrorStreak(entry.value);
    const reason = decision.heldReason;
    const held = reason && waiting.details.heldReason !== reason
      ? withDetails(waiting, { heldReason: reason })
      : waiting;
    if (held !== waiting) ctx.log(`order ${orderId}: held, ${reason}`);
    const ok = await commitWait(
      ctx,
      entry,
      due,
      decision.ms,
      held,
      (a) => addOrderEffects(ctx, a, decision.effects ?? []),
    );
    return ok ? "waiting" : "conflict";
  }
  const now = ctx.now();
  let result = transition(order, decision.event, now);
  if (result.ok && decision.then) result = transition(result.order, decision.then, now);
  if (!result.ok) {
    ctx.log(`order ${orderId}: ${result.error}`);
    return "conflict";
  }
  // A failure keeps the reason it waited for (a deposit that left the chain says so); any other move clears it.
  const stepped = withoutErrorStreak(result.order);
  const next = decision.heldReason
    ? withDetails(stepped, { heldReason: decision.heldReason })
    : withoutHeldReason(stepped);
  const nextAt = isTerminal(next)
    ? null
    : now.getTime() + (decision.broadcast ? ctx.settings.blockMs(decision.chain!) : 0);
  if (decision.broadcast) ctx.faultPoint?.("after-sign");
  // Checked absent: an operator hold set since it was read (a reorg past finality) stops this step.
  const atomic = ctx.kv.atomic().check(hold);
  // Recording a mint or payout: checked against the controls read (a pause committed since stops it) and counted.
  if (decision.event.type === "intentRecorded" && controlled) addControlsCheck(atomic, controlled);
  addOrderUpdate(atomic, entry, next);
  addReschedule(atomic, orderId, due, nextAt);
  if (decision.broadcast) addReservations(atomic, decision.broadcast);
  addOrderEffects(ctx, atomic, decision.effects ?? []);
  if (next.status === "completed" && order.status !== "completed") addSweepDueOf(atomic, next);
  if (next.status === "completed" && order.status !== "completed") addBurnDueOf(atomic, next, now);
  // Settled (final, failed or dead: its hot-wallet hold went with the driver's effects): nothing left to observe.
  if (order.status === "burning" && next.status !== "burning") atomic.delete(payoutObservationKey(order.id));
  if (nextAt !== null) atomic.enqueue({ kind: WAKE, orderId } satisfies WakeMessage, { delay: nextAt - now.getTime() });
  if (!(await atomic.commit()).ok) return "conflict";
  if (decision.broadcast) {
    // Recorded first, sent second. A failure here is retried from the recorded intent by a later step.
    ctx.faultPoint?.("after-record");
    try {
      await sendPrepared(ctx, decision.chain!, decision.broadcast);
      ctx.faultPoint?.("after-broadcast");
    } catch (err) {
      if (!(err instanceof TransientChainError)) ctx.log(`order ${orderId}: broadcast failed; will retry`, err);
    }
  }
  ctx.onOrderMoved?.(order, next, now);
  return "moved";
}

async function sendPrepared(ctx: PipelineContext, chain: Intent["chain"], tx: PreparedTx) {
  if (tx.raw === "") return; // an adopted on-chain mint: nothing of ours to send
  const sender = isEvmChain(chain) ? ctx.chains.minter(chain) : ctx.chains.payer(chain);
  await sender.broadcast(tx);
}

async function decide(ctx: PipelineContext, order: Order): Promise<Decision> {
  switch (order.status) {
    case "pending":
      return await decidePending(ctx, order);
    case "processing":
      return order.type === "mint" ? await decideMint(ctx, order) : await decideBurn(ctx, order);
    case "minting":
    case "burning":
      return await decideSent(ctx, order);
    default:
      throw new Error(`no step for status ${order.status}`);
  }
}

async function decidePending(ctx: PipelineContext, order: Order): Promise<Decision> {
  const source = order.details.source;
  const required = ctx.settings.confirmations(source.chain);
  const status = await ctx.chains.reader(source.chain).txStatus(source.txHash);
  if (status.state === "included" && status.success && isCounted(status, required)) {
    if (order.type === "burn") {
      const changed = await sourceChange(ctx, order, source, status.blockNumber);
      if (changed) return changed;
    }
    // A UTXO deposit's output enters the treasury in the commit that confirms it.
    const coin = order.type === "mint" ? await depositCoinEffect(ctx, order, status.blockNumber) : null;
    return { kind: "event", event: { type: "confirmed" }, ...(coin ? { effects: [coin] } : {}) };
  }
  // The watcher recorded it from a block: not in one now means a reorg took it out of the canonical chain. It never
  // counts unless a block includes it again; the order says so while it waits, and when it times out.
  const leftChain = status.state === "unknown" || status.state === "pending" ? leftChainReason(source) : undefined;
  if (ctx.now().getTime() >= Date.parse(order.details.confirmBy)) {
    return { kind: "event", event: { type: "confirmationTimeout" }, ...(leftChain ? { heldReason: leftChain } : {}) };
  }
  const have = status.state === "included" && status.success ? status.confirmations : 0;
  const ms = Math.max(1, required - have) * ctx.settings.blockMs(source.chain);
  return { kind: "wait", ms, ...(leftChain ? { heldReason: leftChain } : {}) };
}

/** Why a deposit seen in a block does not confirm: it left the canonical chain. */
export function leftChainReason(source: SourceTransfer): string {
  return `reorg: transaction ${source.txHash} was seen in block ${source.blockNumber} and left the canonical chain; ` +
    "it is not counted unless a block includes it again";
}

/** Rechecked this rarely: only an operator lifts a hold. */
export const OPERATOR_HOLD_RECHECK_MS = 10 * 60_000;

/**
 * An order held for an operator (a reorg past finality touched it before it moved value): not stepped, its reason
 * recorded on the order once, looked at again after a long wait or when the operator's release rings its doorbell.
 */
async function waitForOperator(
  ctx: PipelineContext,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  hold: OrderHold,
): Promise<StepOutcome> {
  const order = entry.value;
  const held = order.details.heldReason === hold.reason ? order : withDetails(order, { heldReason: hold.reason });
  return (await commitWait(ctx, entry, due, OPERATOR_HOLD_RECHECK_MS, held)) ? "waiting" : "conflict";
}

/**
 * A reorg can re-execute a burn's transaction with other logs (same hash, other amount, sender or recipient): re-read
 * its transfers where it is now and match the order's facts. On a difference the order fails (confirmed, then
 * rejected, in one commit) with old and new facts recorded, and the new facts become a new transfer in that commit,
 * exactly as the watcher records one, under the next revision of the dedupe key: the watcher's rescan skipped them,
 * its key (chain, txHash, index) being taken. New facts that are dust are the watcher's to count (dust has no key);
 * new facts that no longer pay the transfer address are recorded on the failed order only.
 */
async function sourceChange(
  ctx: PipelineContext,
  order: BurnOrder,
  source: SourceTransfer,
  blockNumber: number,
): Promise<Decision | null> {
  const transfers = await ctx.chains.reader(source.chain).transfersOf(source.txHash);
  // Not in a canonical block any more since txStatus answered: the next look decides.
  if (transfers === null) throw new TransientChainError(`${source.chain}: ${source.txHash} left the chain mid-check`);
  const current = transfers.find((t) => t.index === source.index && t.asset !== "native");
  const same = current !== undefined && current.asset === order.token &&
    current.from.toLowerCase() === order.sourceWallet &&
    current.to.toLowerCase() === ctx.settings.transferAddress && current.amount.toString() === order.amount;
  if (same) return null;
  const revision = (source.revision ?? 0) + 1;
  // Only a transfer that still reaches the transfer address is a burn (the watcher's own filter): a record made from
  // one paying elsewhere would fail its own re-check and make the next revision, one more at every step.
  const reachesUs = current !== undefined && current.to.toLowerCase() === ctx.settings.transferAddress;
  const record = current && reachesUs && isEvmChain(source.chain)
    ? await burnRecordOf(ctx, source.chain, blockNumber, current, revision)
    : null;
  const facts = (t: { from: string; to: string; amount: string | bigint; asset: string }) => ({
    from: t.from,
    to: t.to,
    amount: t.amount.toString(),
    asset: t.asset,
  });
  const change = {
    old: facts({
      from: order.sourceWallet,
      to: ctx.settings.transferAddress,
      amount: order.amount,
      asset: order.token,
    }),
    new: current ? { ...facts(current), blockNumber, revision } : null,
    newRecord: record?.kind === "order" ? { orderId: record.order.id } : record?.kind ?? null,
  };
  ctx.log(`order ${order.id}: source transfer changed by a reorg: ${JSON.stringify(change)}`);
  return {
    kind: "event",
    event: { type: "confirmed" },
    then: { type: "rejected", kind: "source_changed", details: { sourceChange: change } },
    effects: current && record && record.kind !== "dust"
      ? [{ kind: "recordTransfer", chain: source.chain, transfer: current, record, revision }]
      : [],
  };
}

async function walletActive(ctx: PipelineContext, owner: string): Promise<boolean> {
  return (await getUserWallet(ctx.kv, owner))?.status === "active";
}

async function decideMint(ctx: PipelineContext, order: MintOrder): Promise<Decision> {
  const native = order.sourceChain as NativeChain;
  const evm = order.destinationChain;
  if (!isEvmChain(evm)) throw new Error(`mint order ${order.id} has a non-EVM destination ${evm}`);
  const amount = BigInt(order.amount);
  if (amount < NATIVE[native].minimumDeposit) return rejected("insufficient_deposit");
  if (!(await walletActive(ctx, order.owner))) return rejected("wallet_inactive");
  const minter = ctx.chains.minter(evm);
  const req = mintRequestOf(order);
  // Never sign a mint for a deposit the contract already minted (a previous attempt that landed).
  const already = await minter.mintedBy(req.depositId);
  const prepared = already !== null ? { txHash: already, raw: "" } : await minter.prepareMint(req);
  if (already === null) await checkMinterAllowance(ctx, evm, minter, req.asset, req.amountWei);
  return recordIntent(ctx, evm, prepared);
}

/**
 * What a burn order's payout sends: the whole wei amount in native units (the remainder too small to pay is recorded),
 * to the destination and memo of the order. The one rule: the payout step asks for it, and the signer process
 * (actors/signer/purposes.ts) checks a payout's bytes against it.
 */
export function payoutRequestOf(order: BurnOrder): { request: PayoutRequest; remainderWei: bigint } {
  const native = order.destinationChain as NativeChain;
  const { native: amount, remainderWei } = weiToNative(native, BigInt(order.amount));
  return {
    request: { orderId: order.id, to: order.destinationWallet, amount, memo: order.details.memo },
    remainderWei,
  };
}

/** What a mint order's mint calls: the one rule for the mint step and the signer process (actors/signer/purposes.ts). */
export function mintRequestOf(order: Order): MintRequest {
  const native = order.sourceChain as NativeChain;
  return {
    depositId: order.details.depositId,
    to: order.owner,
    asset: NATIVE[native].uAsset.symbol,
    amountWei: nativeToWei(native, BigInt(order.amount)),
  };
}

async function decideBurn(ctx: PipelineContext, order: BurnOrder): Promise<Decision> {
  const native = order.destinationChain as NativeChain;
  const amount = BigInt(order.amount);
  if (amount < NATIVE[native].uAsset.minimumBurnAmount) return rejected("below_minimum_burn");
  // Checked when the configuration was saved; checked again before money leaves, against whatever is stored now.
  if (destinationAddressError(native, order.destinationWallet, ctx.settings.utxoNetwork(native)) !== null) {
    return rejected("invalid_destination");
  }
  if (!(await walletActive(ctx, order.owner))) return rejected("wallet_inactive");
  const { request, remainderWei } = payoutRequestOf(order);
  const nativeAmount = request.amount;
  const funded = await prepareFundedPayout(ctx, native, request);
  if (funded.kind === "below_reserve") return rejected("invalid_destination");
  // Never a failure: the payout waits, its reason on the order, until sweeps or coins fund it.
  if (funded.kind === "wait") return { kind: "wait", ms: ctx.settings.blockMs(native), heldReason: funded.reason };
  const prepared = funded.prepared;
  return recordIntent(ctx, native, prepared, {
    nativeAmount: nativeAmount.toString(),
    remainderWei: remainderWei.toString(),
  });
}

function recordIntent(
  ctx: PipelineContext,
  chain: Intent["chain"],
  prepared: PreparedTx,
  extra?: { nativeAmount: string; remainderWei: string },
): Decision {
  const intent = sentTxOf(chain, prepared, ctx.now());
  return { kind: "event", event: { type: "intentRecorded", intent, extra }, broadcast: prepared, chain };
}

/** What the order does once a recorded transaction of its own is dead (said in the nonce alert). */
const ORDER_AFTER_DEATH = "the order goes back to processing to sign a new transaction";

/** The sender of an order's outgoing transaction: the minter for a mint, the payer for a payout. */
function senderFor(ctx: PipelineContext, chain: Intent["chain"]): ChainSender {
  return isEvmChain(chain) ? ctx.chains.minter(chain) : ctx.chains.payer(chain);
}

/** The recorded transaction, followed by the one driver (actors/sent_tx.ts) under the order policy. */
async function decideSent(ctx: PipelineContext, order: Order): Promise<Decision> {
  const intent = intentOf(order)!;
  const followed = await followSentTx(followDepsOf(ctx), intent, {
    required: ctx.settings.confirmations(intent.chain),
    policy: ORDER_POLICY,
    sender: senderFor(ctx, intent.chain),
    label: `order ${order.id}`,
    afterDeath: ORDER_AFTER_DEATH,
  });
  switch (followed.kind) {
    case "final":
      // A final UTXO payout spends its coins and returns its change to the treasury in the completing commit.
      return { kind: "event", event: { type: "txConfirmed", txHash: followed.txHash }, effects: followed.effects };
    case "failed":
      return await decideFailed(ctx, order, intent, followed);
    case "dead":
      return deadDecision(intent, followed.proof, followed.detail);
    case "waiting": {
      const s = followed.status;
      const ms = followed.blocks * ctx.settings.blockMs(intent.chain);
      const confirmations = s.state === "included" && s.success ? s.confirmations : undefined;
      return { kind: "wait", ms, ...observed(order, intent, ctx.now(), s.state, confirmations) };
    }
  }
}

/**
 * A UTXO payout not yet counted: what was seen of it, kept for `deno task admin treasury` (stuck payouts with their
 * age and last status, read from KV alone).
 */
function observed(
  order: Order,
  intent: Intent,
  now: Date,
  state: PayoutObservation["state"],
  confirmations?: number,
): { effects?: OrderEffect[] } {
  if (order.type !== "burn" || chainFamily(intent.chain).family !== "utxo") return {};
  const seen: PayoutObservation = { state, at: now.toISOString() };
  if (confirmations !== undefined) seen.confirmations = confirmations;
  return { effects: [{ kind: "observePayout", orderId: order.id, seen }] };
}

/** The recorded transaction failed on chain, finally: the order fails (an operator may retry it). */
async function decideFailed(
  ctx: PipelineContext,
  order: Order,
  intent: Intent,
  failed: { proof: FailedProof; detail: string; effects: SentTxEffect[] },
): Promise<Decision> {
  const released = failed.effects;
  if (order.type === "mint" && isEvmChain(intent.chain)) {
    // A reverted mint whose deposit id is minted anyway (an earlier transaction landed): that one is the mint.
    const minter = ctx.chains.minter(intent.chain);
    const minted = await minter.mintedBy(order.details.depositId);
    if (minted !== null) return { kind: "event", event: { type: "txConfirmed", txHash: minted } };
    // Signed by a minter key this service no longer signs with: the admin rotated it out (removeMinter,
    // docs/live-chains.md "Rotating the minter key") while the mint was in flight, and the revert is that key's lost
    // role, not the order's. The attempt is dead (its failed inclusion is the proof, kept on the order); the next step
    // asks the contract again (a deposit id is minted at most once) and signs with the current key.
    const signedBy = intent.consumes?.kind === "nonce" ? intent.consumes.account : null;
    if (signedBy !== null && minter.account !== undefined && signedBy.toLowerCase() !== minter.account.toLowerCase()) {
      return deadDecision(
        intent,
        failed.proof,
        `${failed.detail}; signed by ${signedBy}, a minter key this service no longer signs with (rotated to ` +
          `${minter.account}): signed again with the current key`,
      );
    }
    // Reverted because the admin paused the token or its cap is reached: not the order's fault. It waits, with the
    // reason on the order, until the admin lifts it; then the dead attempt fails as any other, and may be retried.
    const refusal = await minter.adminRefusal?.(mintRequestOf(order));
    if (refusal) throw new TransientChainError(`${refusal} (attempt ${intent.txHash} reverted)`);
    return { kind: "event", event: { type: "txFailed", kind: "minting_error" }, effects: released };
  }
  // A failed transaction spent no coins (UTXO chains never include one; the sim's failure fault can): free them.
  return { kind: "event", event: { type: "txFailed", kind: "payout_failed" }, effects: released };
}

/**
 * The recorded transaction can never be mined: the order goes back to processing with the proof kept, and what the
 * transaction held (its coins, its hot-wallet hold) is released in that same commit, and coins another final
 * transaction spent leave the treasury; the next step signs a new one. Also the operator's decision once the chain
 * proves a stuck transaction dead (actors/operator.ts).
 */
export function deadDecision(
  intent: Intent,
  proof: DeathProof,
  detail: string,
): Decision & { kind: "event"; effects: SentTxEffect[] } {
  return { kind: "event", event: { type: "txDead", proof, detail }, effects: deadEffects(intent, proof) };
}

/** An order waiting on a pause looks again this often; a resume makes it due at once. */
export const PAUSE_RECHECK_MS = 15_000;

/**
 * The operator controls (actors/controls.ts) on a step that would record a mint or payout: a pause makes the order
 * wait (reason on the order, listed for the resume), a cap holds it for an operator with an alert; both commits are
 * checked against the controls read. Otherwise the writes the recording commit adds: the same check, and the order
 * counted in its uAsset's day usage (checked by version: two orders cannot both squeeze under a per-day cap).
 */
async function applyControls(
  ctx: PipelineContext,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  hold: Deno.KvEntryMaybe<OrderHold>,
  read: Awaited<ReturnType<typeof getControls>>,
): Promise<StepOutcome | ControlsCheck | null> {
  const order = entry.value;
  const asset = usageNeeded(order, read.controls);
  const now = ctx.now();
  const day = utcDay(now);
  const usage = asset ? await getDayUsage(ctx.kv, asset, day) : null;
  const used = usage ? BigInt(usage.value?.used ?? "0") : null;
  const decision = controlDecision(order, read.controls, used);
  if (decision.kind === "free") return null;
  if (decision.kind === "go") {
    if (!decision.count || !usage || used === null) return { controls: read.entry };
    const { asset: counted, amount } = decision.count;
    return {
      controls: read.entry,
      usage: {
        entry: usage,
        key: usageKey(counted, day),
        value: { asset: counted, day, used: (used + amount).toString() },
      },
    };
  }
  const reason = decision.reason;
  const first = order.details.heldReason !== reason;
  const held = first ? withDetails(order, { heldReason: reason }) : order;
  if (decision.kind === "paused") {
    const ok = await commitWait(ctx, entry, due, PAUSE_RECHECK_MS, held, (atomic) => {
      atomic.check(read.entry).set(pausedOrderKey(order.id), { reason, at: now.toISOString() });
    });
    if (ok && first) ctx.log(`order ${order.id}: held, ${reason}`);
    return ok ? "waiting" : "conflict";
  }
  const record: OrderHold = {
    kind: "cap",
    caps: decision.caps,
    reason,
    at: now.toISOString(),
    alert: { kind: "cap_exceeded", subject: order.id },
  };
  // The hold and its alert in one commit: a crash never leaves a held order no alert speaks of.
  const alert = await readAlert(ctx.kv, "cap_exceeded", order.id);
  const ok = await commitWait(ctx, entry, due, OPERATOR_HOLD_RECHECK_MS, held, (atomic) => {
    atomic.check(read.entry, hold).set(orderHoldKey(order.id), record);
    addAlert(atomic, alert, { kind: "cap_exceeded", subject: order.id, chain: null, message: reason, now });
  });
  if (!ok) return "conflict";
  ctx.log(`order ${order.id}: ${reason}`);
  return "waiting";
}

/**
 * What the commit recording a mint or payout adds for the operator controls, as data: the controls read, checked
 * unchanged (a pause committed since stops it), and the uAsset's day usage counted, checked by version (two orders
 * cannot both squeeze under a per-day cap).
 */
interface ControlsCheck {
  controls: Deno.KvEntryMaybe<unknown>;
  usage?: { entry: Deno.KvEntryMaybe<unknown>; key: Deno.KvKey; value: { asset: string; day: string; used: string } };
}

function addControlsCheck(atomic: Deno.AtomicOperation, c: ControlsCheck): void {
  atomic.check(c.controls);
  if (c.usage) atomic.check(c.usage.entry).set(c.usage.key, c.usage.value);
}

/** Rechecked this rarely: a process's enabled chains are fixed, only a process started with the chain can move it. */
export const DISABLED_CHAIN_RECHECK_MS = 10 * 60_000;

/** The first chain the order needs that this process does not run, or null. */
function disabledChainOf(ctx: PipelineContext, order: Order): ChainSymbol | null {
  for (const chain of [order.sourceChain, order.destinationChain]) if (!ctx.settings.isEnabled(chain)) return chain;
  return null;
}

/**
 * An order whose chain is disabled here (an operator restarted with fewer chains) is neither failed nor stepped: no
 * adapter is touched, the reason is recorded on the order once, an operator alert is raised, and it is looked at again
 * after a long wait, when a process that runs the chain may have taken it.
 */
async function holdForDisabledChain(
  ctx: PipelineContext,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  chain: ChainSymbol,
): Promise<StepOutcome> {
  const order = entry.value;
  const reason = `chain ${chain} is disabled in this process`;
  const first = order.details.heldReason !== reason;
  const held = first ? withDetails(order, { heldReason: reason }) : order;
  if (!(await commitWait(ctx, entry, due, DISABLED_CHAIN_RECHECK_MS, held))) return "conflict";
  if (first) {
    ctx.log(`order ${order.id}: held, ${reason}`);
    await raiseAlert(ctx.kv, {
      kind: "chain_disabled",
      subject: chain,
      chain,
      message: `orders wait for ${chain}, which this process does not run; start a process with it configured`,
      now: ctx.now(),
    });
  }
  return "waiting";
}

/** Rechecked this rarely: only an operator can repair a stored order that fails the schema. */
export const INVALID_RECORD_RECHECK_MS = 10 * 60_000;

/**
 * A stored order that fails the schema is not stepped on a guess, and does not crash the worker in a loop: it waits
 * (untouched, only its schedule moves), each look is logged and counted on an `invalid_record` alert that names the
 * bad fields, until an operator repairs it.
 */
async function holdInvalid(
  ctx: PipelineContext,
  orderId: string,
  entry: { key: Deno.KvKey; versionstamp: string },
  due: Deno.KvEntryMaybe<number>,
  invalid: InvalidOrderError,
): Promise<StepOutcome> {
  const atomic = scheduleWait(ctx, entry, orderId, due, INVALID_RECORD_RECHECK_MS);
  if (!(await atomic.commit()).ok) return "conflict";
  ctx.log(`order ${orderId}: not stepped: ${invalid.message}`);
  await raiseAlert(ctx.kv, {
    kind: "invalid_record",
    subject: orderId,
    chain: null,
    message: `${invalid.message}; the order waits untouched until the stored record is repaired`,
    now: ctx.now(),
  });
  return "waiting";
}

function withoutHeldReason(order: Order): Order {
  return order.details.heldReason === undefined ? order : withDetails(order, { heldReason: undefined });
}

function rejected(kind: OrderErrorKind): Decision {
  return { kind: "event", event: { type: "rejected", kind } };
}

async function waitWithBackoff(
  ctx: PipelineContext,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  err: unknown,
): Promise<StepOutcome> {
  const attempts = (entry.value.details.transientErrors ?? 0) + 1;
  const ms = Math.min(ctx.settings.retryMaxMs, ctx.settings.retryBaseMs * 2 ** Math.min(attempts - 1, 16));
  // Redacted: an error that is not ours (viem's) may quote an RPC URL whole, with the provider's key in it; the note
  // is stored on the order and may go into an alert.
  const note = redactUrls(err instanceof Error ? err.message : String(err));
  if (attempts === PERSISTENT_ERRORS_ALERT_AFTER) {
    const id = entry.value.id;
    ctx.log(`order ${id}: ${attempts} errors in a row, the last: ${note}`);
    await raiseAlert(ctx.kv, {
      kind: "persistent_errors",
      subject: id,
      chain: null,
      message: `order ${id} (${entry.value.status}): ${attempts} errors in a row; the last: ${note}`,
      now: ctx.now(),
    });
  }
  const counted = withDetails(entry.value, { transientErrors: attempts, lastTransientError: note });
  return (await commitWait(ctx, entry, due, ms, counted)) ? "waiting" : "conflict";
}

/** Consecutive failed steps of one order after which an operator is alerted (the order keeps retrying). */
export const PERSISTENT_ERRORS_ALERT_AFTER = 20;

/**
 * A step that worked ends an error streak: the next streak counts from zero. The last error stays on the order as a
 * record of why it waited (a paused uAsset, an RPC outage), for the operator reading it later.
 */
function withoutErrorStreak(order: Order): Order {
  return order.details.transientErrors === undefined ? order : withDetails(order, { transientErrors: undefined });
}

/**
 * Schedules the next look at an order that is waiting. A plain wait touches only the schedule (no order rewrite, no
 * listing churn); `updated`, when it differs from the order read, is stored in the same commit (an error count, a
 * held reason, the end of an error streak).
 */
async function commitWait(
  ctx: PipelineContext,
  entry: Deno.KvEntry<Order>,
  due: Deno.KvEntryMaybe<number>,
  ms: number,
  updated: Order = entry.value,
  effects?: (atomic: Deno.AtomicOperation) => void,
): Promise<boolean> {
  const atomic = scheduleWait(ctx, entry, entry.value.id, due, ms);
  if (updated !== entry.value) addOrderUpdate(atomic, entry, updated);
  effects?.(atomic);
  return (await atomic.commit()).ok;
}

/** An atomic, checked against the order version read, that moves the order's next look `ms` ahead. */
function scheduleWait(
  ctx: PipelineContext,
  entry: { key: Deno.KvKey; versionstamp: string },
  orderId: string,
  due: Deno.KvEntryMaybe<number>,
  ms: number,
): Deno.AtomicOperation {
  const atomic = ctx.kv.atomic().check(entry);
  addReschedule(atomic, orderId, due, ctx.now().getTime() + ms);
  return atomic.enqueue({ kind: WAKE, orderId } satisfies WakeMessage, { delay: ms });
}
