/**
 * The burn tick of one EVM chain (docs/onchain-burn.md): burns from the transfer address the uAssets that completed
 * burn orders redeemed, many orders per transaction, write-ahead and exactly once (kv/onchain_burns.ts).
 *
 * A step, under the lease `onchain-burn:<chain>`, either follows the chain's open batch (broadcast again or nudged
 * while not mined, marked burned once final, its attempt marked dead once the chain proves it can never be mined, a
 * new attempt of the same batch signed after that), or, when none is open, records a new batch of the due records of
 * one uAsset and broadcasts it. A crash anywhere loses nothing: before the recording commit nothing was sent, and
 * after it the batch is followed from its record (the same bytes re-sent). An idle chain costs reads and no commit.
 */
import { type PreparedTx, TransientChainError, type UAssetSender } from "../chains/adapter.ts";
import type { EvmChain, UAsset } from "../chains/catalog.ts";
import { TransferAddressUnfundedError, UAssetBalanceShortError } from "../chains/uasset_errors.ts";
import { raiseAlert } from "../kv/alerts.ts";
import {
  type BurnBatch,
  type BurnDue,
  leaveOutBurnDue,
  markBurnAttemptDead,
  markBurned,
  MAX_ORDERS_PER_BATCH,
  nextBurnsDue,
  openBurnBatch,
  OpenBurnBatchMissingError,
  recordBurnAttempt,
  recordBurnBatch,
} from "../kv/onchain_burns.ts";
import { getOrder } from "../kv/orders.ts";
import { newOrderId } from "../model/order.ts";
import { InvalidRecordError, sentTxIn } from "../model/sent_tx.ts";
import { BURN_POLICY } from "./follow_up.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { acquireLease } from "../kv/pipeline.ts";
import type { PipelineContext } from "./context.ts";
import { withSigningPurpose } from "../chains/signing.ts";

export type BurnStep =
  | "idle" // nothing due, no open batch
  | "recorded" // a new batch recorded and broadcast
  | "waiting" // the open batch's transaction is pending or not yet final (sent again or nudged)
  | "burned" // the open batch's transaction is final: burned
  | "dead" // its attempt proven dead; the next step signs a new attempt
  | "resigned" // a new attempt of the open batch recorded and broadcast
  | "short" // the transfer address holds less than the batch, or too little gas: nothing sent, alerted
  | "held" // every due record's transfer is gone from the chain (a reorg after completion): left out, alerted
  | "conflict" // another process moved first
  | "invalid" // the open batch has no record, or one failing its schema: alerted (invalid_record), nothing done
  | "not ours"; // another process holds the lease, or this process cannot sign for the transfer address

/** One step on `chain`. `leaseMs`: how long the lease is held while there is work. */
export async function onchainBurnStep(
  ctx: PipelineContext,
  chain: EvmChain,
  owner: string,
  leaseMs: number,
): Promise<BurnStep> {
  const sender = ctx.chains.uAssetSender?.(chain);
  if (!sender) return "not ours";
  // Read first, lease second: an idle chain costs these reads and no commit.
  let open: Deno.KvEntry<BurnBatch> | null;
  try {
    open = await openBurnBatch(ctx.kv, chain);
  } catch (err) {
    if (err instanceof InvalidRecordError) {
      // The open batch's record fails its schema: like an invalid order (order_actor.ts holdInvalid), not followed
      // on a guess and no batch started past it. Untouched, each look logged and counted on one alert naming the key
      // and the bad fields, until an operator repairs the record.
      ctx.log(`burn ${chain}: open batch not stepped: ${err.message}`);
      await raiseAlert(ctx.kv, {
        kind: "invalid_record",
        subject: err.subject,
        chain,
        message: `${err.message}; burns on ${chain} wait untouched until the stored record is repaired`,
        now: ctx.now(),
      });
      return "invalid";
    }
    if (!(err instanceof OpenBurnBatchMissingError)) throw err;
    // Never written by this code (a damaged or hand-edited store): no batch is started past it, since its orders and
    // its transaction (maybe on chain) are unknown. An operator restores the record or removes the pointer.
    await raiseAlert(ctx.kv, {
      kind: "invalid_record",
      subject: `onchain_burn_open:${chain}`,
      chain,
      message: `${err.message}: burns on ${chain} are stopped until an operator restores the batch record or, ` +
        `once its transaction is known not to be on chain, removes the pointer`,
      now: ctx.now(),
    });
    return "invalid";
  }
  const due = open ? [] : await nextBurnsDue(ctx.kv, chain);
  if (!open && due.length === 0) return "idle";
  if (!(await acquireLease(ctx.kv, `onchain-burn:${chain}`, owner, leaseMs, ctx.now().getTime()))) return "not ours";
  try {
    return open ? await driveBatch(ctx, sender, open) : await startBatch(ctx, sender, chain, due);
  } catch (err) {
    if (!(err instanceof TransientChainError)) ctx.log(`burn ${chain}: step failed; will retry`, err);
    return "waiting";
  }
}

/** Steps until nothing moves (cron runs with `drain`), or one step (loops). */
export async function onchainBurnTick(
  ctx: PipelineContext,
  chain: EvmChain,
  owner: string,
  leaseMs: number,
  drain: () => boolean,
): Promise<BurnStep[]> {
  const steps: BurnStep[] = [];
  for (;;) {
    const step = await onchainBurnStep(ctx, chain, owner, leaseMs);
    steps.push(step);
    if (!["recorded", "burned", "dead", "resigned"].includes(step) || !drain()) return steps;
  }
}

/** Most due records one step reads back from the chain before it gives up until the next tick. */
export const MAX_DUE_CHECKED_PER_STEP = 4 * MAX_ORDERS_PER_BATCH;

/**
 * Records and sends one batch. A uAsset that cannot be batched (the transfer address is short of it) is passed for the
 * next uAsset with records due, and records left out (their transfer is gone) are moved out of the due records, so
 * neither blocks the rest; at most MAX_DUE_CHECKED_PER_STEP records are read back per step.
 */
async function startBatch(
  ctx: PipelineContext,
  sender: UAssetSender,
  chain: EvmChain,
  first: Deno.KvEntry<BurnDue>[],
): Promise<BurnStep> {
  let all = first;
  let result: BurnStep = "held";
  let passed: UAsset | undefined; // the last uAsset found short: the next read starts after it
  for (let checked = 0; all.length > 0 && checked < MAX_DUE_CHECKED_PER_STEP; checked += all.length) {
    const asset: UAsset = all[0].value.asset;
    const due = await stillOnChain(ctx, all);
    if (due.length > 0) {
      const step = await recordAndSend(ctx, sender, due);
      if (step === "unfunded") return "short"; // no gas: no other uAsset can be burned either
      if (step !== "short") return step;
      result = "short";
      passed = asset;
    }
    // Left-out records were moved away: the same uAsset's next records; a short uAsset: the next uAsset's.
    all = await nextBurnsDue(ctx.kv, chain, MAX_ORDERS_PER_BATCH, passed);
  }
  return result;
}

async function recordAndSend(
  ctx: PipelineContext,
  sender: UAssetSender,
  due: Deno.KvEntry<BurnDue>[],
): Promise<BurnStep | "unfunded"> {
  const { chain, asset } = due[0].value;
  const total = due.reduce((sum, d) => sum + BigInt(d.value.amountWei), 0n);
  const id = newOrderId(ctx.now().getTime());
  const tx = await prepare(ctx, sender, { chain, asset, totalWei: total.toString(), id });
  if (typeof tx === "string") return tx;
  const recorded = await recordBurnBatch(ctx.kv, { id, due, tx, at: ctx.now() });
  if (!recorded.ok) return "conflict"; // never sent: another process recorded first, or the records moved
  ctx.log(`burn ${chain}: batch ${id} of ${due.length} order(s), ${total} wei of ${asset}, as ${tx.txHash}`);
  await send(ctx, sender, tx, id);
  return "recorded";
}

/**
 * The due records whose order's transfer to the transfer address is still on chain as recorded. A completed burn
 * whose transfer a reorg took away (after its payout was final) has no uAssets at the transfer address: burning its
 * amount would burn uAssets owed to others (held transfers, failed burns). Such a record is left out and stays for an
 * operator, alerted; so is one whose order is missing or not a burn from this chain.
 */
async function stillOnChain(ctx: PipelineContext, due: Deno.KvEntry<BurnDue>[]): Promise<Deno.KvEntry<BurnDue>[]> {
  const kept: Deno.KvEntry<BurnDue>[] = [];
  for (const d of due) {
    const { chain, asset, orderId } = d.value;
    const entry = await getOrder(ctx.kv, orderId);
    const order = entry.versionstamp !== null && !entry.invalid ? entry.value : null;
    let why: string | null = null;
    if (!order || order.type !== "burn" || order.status !== "completed" || order.sourceChain !== chain) {
      why = `its order is ${order ? `${order.type} ${order.status} from ${order.sourceChain}` : "missing or invalid"}`;
    } else {
      const src = order.details.source;
      const transfers = await ctx.chains.reader(chain).transfersOf(src.txHash);
      const there = (transfers ?? []).some((t) =>
        t.index === src.index && t.asset === asset && t.amount.toString() === d.value.amountWei &&
        t.to.toLowerCase() === ctx.settings.transferAddress.toLowerCase() &&
        t.from.toLowerCase() === order.sourceWallet.toLowerCase()
      );
      if (!there) why = `its transfer ${src.txHash}:${src.index} is not on ${chain} as recorded (a reorg took it)`;
    }
    if (why === null) {
      kept.push(d);
      continue;
    }
    ctx.log(`burn ${chain}: order ${orderId} (${d.value.amountWei} wei of ${asset}) is not burned: ${why}`);
    // Out of the due records (checked unchanged), so it never holds up the records behind it.
    await leaveOutBurnDue(ctx.kv, d, why, ctx.now());
    await raiseAlert(ctx.kv, {
      kind: "burn_source_missing",
      subject: orderId,
      chain,
      message: `completed burn order ${orderId} (${d.value.amountWei} wei of ${asset}) is not burned on chain: ` +
        `${why}; burning it would burn uAssets owed to others. Its due record is left out of batches ` +
        `(onchain_burn_left_out) and waits for an operator`,
      now: ctx.now(),
    });
  }
  return kept;
}

/**
 * Prepares the burn of a batch's total, or "short"/"unfunded" (alerted, nothing signed) when the transfer address
 * holds less of the uAsset or too little gas: the
 * due records or the open batch stay as they are until an operator looks.
 */
async function prepare(
  ctx: PipelineContext,
  sender: UAssetSender,
  batch: Pick<BurnBatch, "chain" | "asset" | "totalWei" | "id">,
): Promise<PreparedTx | "short" | "unfunded"> {
  try {
    // The signer process checks the burn against this batch's record (chains/signing.ts).
    return await withSigningPurpose(
      { kind: "burn_batch", id: batch.id },
      () => sender.prepareBurn({ asset: batch.asset, amount: BigInt(batch.totalWei), batchId: batch.id }),
    );
  } catch (err) {
    if (err instanceof TransferAddressUnfundedError) {
      await raiseAlert(ctx.kv, {
        kind: "transfer_address_unfunded",
        subject: `${batch.chain}:${err.address.toLowerCase()}`,
        chain: batch.chain,
        message: `${err.message}: burn batch ${batch.id} (${batch.totalWei} wei of ${batch.asset}) waits`,
        now: ctx.now(),
      });
      return "unfunded";
    }
    if (!(err instanceof UAssetBalanceShortError)) throw err;
    await raiseAlert(ctx.kv, {
      kind: "burn_balance_short",
      subject: `${batch.chain}:${batch.asset}`,
      chain: batch.chain,
      message: `${err.message}: burn batch ${batch.id} (${batch.totalWei} wei) is not sent; its orders wait`,
      now: ctx.now(),
    });
    return "short";
  }
}

/** Recorded first, sent second: a failure here is retried from the record by a later step. */
async function send(ctx: PipelineContext, sender: UAssetSender, tx: PreparedTx, batchId: string) {
  ctx.faultPoint?.("burn-after-record");
  try {
    await sender.broadcast(tx);
  } catch (err) {
    if (!(err instanceof TransientChainError)) ctx.log(`burn batch ${batchId}: broadcast failed; will retry`, err);
  }
}

/** The open batch: its dead attempt replaced by a new one, or its live attempt followed by the one driver. */
function driveBatch(
  ctx: PipelineContext,
  sender: UAssetSender,
  entry: Deno.KvEntry<BurnBatch>,
): Promise<BurnStep> {
  // A fee-bumped replacement is signed for this batch too.
  return withSigningPurpose({ kind: "burn_batch", id: entry.value.id }, () => driveBatchIn(ctx, sender, entry));
}

async function driveBatchIn(
  ctx: PipelineContext,
  sender: UAssetSender,
  entry: Deno.KvEntry<BurnBatch>,
): Promise<BurnStep> {
  const batch = entry.value;
  const { chain } = batch;
  const attempt = batch.attempts[batch.attempts.length - 1];
  if (attempt.proof) {
    const tx = await prepare(ctx, sender, batch);
    if (typeof tx === "string") return "short";
    if (!(await recordBurnAttempt(ctx.kv, entry, tx, ctx.now()))) return "conflict";
    ctx.log(`burn ${chain}: batch ${batch.id} attempt ${batch.attempts.length + 1} as ${tx.txHash}`);
    await send(ctx, sender, tx, batch.id);
    return "resigned";
  }
  const followed = await followSentTx(
    followDepsOf(ctx),
    sentTxIn(attempt),
    {
      required: ctx.settings.confirmations(chain),
      policy: BURN_POLICY,
      sender,
      label: `burn batch ${batch.id}`,
      afterDeath: "a new attempt of the batch is signed",
    },
  );
  switch (followed.kind) {
    case "final": {
      const final = { txHash: followed.txHash, blockNumber: followed.blockNumber, at: ctx.now() };
      if (!(await markBurned(ctx.kv, entry, final, followed.effects))) return "conflict";
      ctx.log(`burn ${chain}: batch ${batch.id} burned ${batch.totalWei} wei of ${batch.asset} in ${final.txHash}`);
      return "burned";
    }
    case "dead": {
      const dead = { proof: followed.proof, detail: followed.detail, at: ctx.now() };
      return (await markBurnAttemptDead(ctx.kv, entry, dead, followed.effects)) ? "dead" : "conflict";
    }
    case "failed": // not under BURN_POLICY (a failure kills the attempt: a new one is signed)
    case "waiting": // pending or not yet final: sent again or nudged
      return "waiting";
  }
}
