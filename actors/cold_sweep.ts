/**
 * The cold sweep (docs/operations.md "Cold addresses", docs/sent-transactions.md): when what a native chain holds hot,
 * after the payouts waiting for funds, is above its band's ceiling (config/hot_band.ts), the surplus down to the band's
 * target goes to the cold address in effect (kv/cold_addresses.ts), in one transaction of ours, write-ahead and exactly
 * once.
 *
 * - What is hot and what waits: `readHotFunds` (actors/hot_band.ts), the same numbers the `hot_wallet_refill` alert
 *   reads. Waiting payouts reduce the surplus: `hot - waiting` is compared with the ceiling and brought to the target,
 *   so nothing a waiting payout needs is ever swept to cold (the refill alert would otherwise ask it back at once).
 * - How it pays: a payout-shaped transaction prepared by the one payout rule (actors/payout_funding.ts): on an account
 *   chain from the hot wallet, holding its amount and fee in kv/hot_wallet.ts like any payout, so payouts and cold
 *   sweeps never spend the same funds twice (the chain's reserve is never counted as hot); on a UTXO chain from
 *   treasury coins chosen by the payouts' coin selection and locked in the recording commit, change back to our
 *   change address. Its fee comes out of what stays hot (it ends at the target less the fee).
 * - Verified before recorded: the payer's bytes are decoded and compared with the request (chains/verify.ts,
 *   docs/verify-before-record.md): the destination is the cold address read from KV in this step, the amount the
 *   surplus. The recording commit checks the cold address record's versionstamp as read, so a change racing the sweep
 *   fails the commit and nothing is sent.
 * - No cold address in effect, or a change of it waiting for its delay: nothing is swept (a sweep to an address about
 *   to be replaced would be one the operators may be cancelling), and `cold_sweep_blocked` says so.
 * - Followed by the one driver (actors/sent_tx.ts) under COLD_SWEEP_POLICY: re-sent as the same bytes, completed once
 *   final (its change a treasury coin, its hold released; the outputs paying cold recorded for reconciliation), or
 *   proven dead (what it held released), after which the next tick decides afresh.
 *
 * KV cost at rest (actors/runtime.ts, the idle-cost rule): reads only; the decision is taken at most once per
 * COLD_SWEEP_CHECK_MS per process while nothing is open, and a commit happens only to record a sweep, settle one, or
 * change the alert.
 */
import { TransientChainError } from "../chains/adapter.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { NATIVE, type NativeChain } from "../chains/catalog.ts";
import { formatError } from "../chains/shared/redact.ts";
import { addAlert, clearAlert, readAlert } from "../kv/alerts.ts";
import { coldAddressAt, readColdAddress } from "../kv/cold_addresses.ts";
import { type ColdSweep, coldSweepDead, completeColdSweep, openColdSweep, recordColdSweep } from "../kv/cold_sweeps.ts";
import { acquireLease } from "../kv/pipeline.ts";
import { coldSweepOrderId } from "../model/cold_sweep.ts";
import { InvalidRecordError, sentTxIn } from "../model/sent_tx.ts";
import type { PipelineContext } from "./context.ts";
import { COLD_SWEEP_POLICY } from "./follow_up.ts";
import { readHotFunds } from "./hot_band.ts";
import { prepareFundedPayout } from "./payout_funding.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { holdInvalidRecord } from "./sweeper.ts";

/** While no cold sweep is open, how often one process looks at the surplus (a balance read on account chains). */
export const COLD_SWEEP_CHECK_MS = 60_000;

/**
 * The memo a cold sweep carries: none, except where the chain's payouts always carry a destination tag (xrp): tag 0,
 * the conventional "no particular tag" (a cold account requiring a tag accepts it; the cold address record names no
 * tag of its own).
 */
export function coldSweepMemo(chain: NativeChain): string | null {
  const rule = NATIVE[chain].memo;
  return rule.kind === "destinationTag" && rule.required ? "0" : null;
}

/** The surplus to move: `hot - waiting - target` when `hot - waiting` is above the ceiling, else null. */
export function coldSurplus(band: { target: bigint; ceiling: bigint }, hot: bigint, waiting: bigint): bigint | null {
  const free = hot - waiting;
  return free > band.ceiling ? free - band.target : null;
}

export type ColdSweepStep =
  | "idle" // no band, within it, or not looked at this time
  | "blocked" // above the ceiling with no cold address to sweep to (alert raised)
  | "waiting" // nothing could be done now (funds held by payouts, a transient chain error, another process)
  | "raced" // the cold address record changed between the read and the recording commit: nothing recorded
  | "recorded" // a new cold sweep recorded and broadcast
  | "resent" // an open one the chain did not know, sent again (the same bytes)
  | "completed" // the open one final
  | "dead" // the open one proven dead; the next look decides again
  | "held"; // the stored record fails its schema: untouched, invalid_record raised

/**
 * One cold-sweep step for `chain` under the lease `cold-sweep:<chain>`: drives the open cold sweep, or, when none is
 * open and `decide` is true, records a new one if the surplus calls for it.
 */
export async function coldSweepOnce(
  ctx: PipelineContext,
  chain: NativeChain,
  owner: string,
  leaseMs: number,
  decide = true,
): Promise<ColdSweepStep> {
  const band = ctx.settings.hotBand(chain);
  let open: ColdSweep | null;
  try {
    open = await openColdSweep(ctx.kv, chain);
  } catch (err) {
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "open cold sweep");
    throw err;
  }
  if (!open && (!band || !decide)) return "idle";
  try {
    if (open) {
      if (!(await acquireLease(ctx.kv, `cold-sweep:${chain}`, owner, leaseMs, ctx.now().getTime()))) return "waiting";
      return await driveColdSweep(ctx, open);
    }
    return await decideColdSweep(ctx, chain, band!, owner, leaseMs);
  } catch (err) {
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "open cold sweep");
    if (!(err instanceof TransientChainError)) ctx.log(`cold sweep ${chain}: failed; will retry`, err);
    return "waiting";
  }
}

async function decideColdSweep(
  ctx: PipelineContext,
  chain: NativeChain,
  band: { floor: bigint; target: bigint; ceiling: bigint },
  owner: string,
  leaseMs: number,
): Promise<ColdSweepStep> {
  let funds;
  try {
    funds = await readHotFunds(ctx.kv, ctx.chains, chain);
  } catch (err) {
    ctx.log(`cold sweep ${chain}: what is hot could not be read: ${formatError(err).split("\n")[0]}`);
    return "waiting";
  }
  const amount = coldSurplus(band, funds.hot, funds.waiting);
  if (amount === null) {
    await clearBlocked(ctx, chain);
    return "idle";
  }
  // The cold address record as read now: its versionstamp is checked by the recording commit.
  const coldEntry = await readColdAddress(ctx.kv, chain);
  const cold = coldAddressAt(coldEntry.value, ctx.now());
  const unit = `smallest units of ${NATIVE[chain].token.symbol}`;
  const above = `${chain} hot funds ${funds.hot} (${unit}; ${funds.waiting} needed by waiting payouts) are above the ` +
    `band's ceiling ${band.ceiling}: ${amount} should go to cold`;
  if (!cold.current) {
    return await blocked(
      ctx,
      chain,
      `surplus above ceiling, no cold address: ${above}, and no cold address is in ` +
        `effect (deno task admin cold set ${chain} <address>)`,
    );
  }
  if (cold.pending) {
    return await blocked(
      ctx,
      chain,
      `surplus above ceiling, cold address changing: ${above}; nothing is swept while the change to ` +
        `${cold.pending.address} waits for ${cold.pending.effectiveAt} (deno task admin cold show)`,
    );
  }
  if (!(await acquireLease(ctx.kv, `cold-sweep:${chain}`, owner, leaseMs, ctx.now().getTime()))) return "waiting";
  const destination = cold.current.address;
  const id = crypto.randomUUID();
  // Signed for the purpose `cold_sweep` (a separate signer process checks it: actors/signer/purposes.ts).
  const funded = await withSigningPurpose({ kind: "cold_sweep", id }, () =>
    prepareFundedPayout(ctx, chain, {
      orderId: coldSweepOrderId(id),
      to: destination,
      amount,
      memo: coldSweepMemo(chain),
    }));
  if (funded.kind === "below_reserve") {
    return await blocked(ctx, chain, `${above}, but the cold address cannot receive it: ${funded.detail}`);
  }
  if (funded.kind === "wait") {
    ctx.log(`cold sweep ${chain}: ${amount} waits: ${funded.reason}`);
    return "waiting";
  }
  const recorded = await recordColdSweep(ctx.kv, {
    id,
    chain,
    destination,
    amount,
    hot: funds.hot - funds.waiting,
    ceiling: band.ceiling,
    target: band.target,
    tx: funded.prepared,
    coldVersionstamp: coldEntry.versionstamp,
    at: ctx.now(),
  });
  if (!recorded.ok) {
    ctx.log(`cold sweep ${chain}: nothing recorded (${recorded.reason}); the next look decides again`);
    return recorded.reason === "cold_address_changed" ? "raced" : "waiting";
  }
  await clearBlocked(ctx, chain);
  ctx.log(`cold sweep ${chain} ${id}: ${amount} to ${destination} recorded as ${funded.prepared.txHash}`);
  ctx.faultPoint?.("cold-sweep-after-record");
  try {
    await ctx.chains.payer(chain).broadcast(funded.prepared);
  } catch (err) {
    // Recorded: the next step sends the same bytes again.
    ctx.log(`cold sweep ${chain} ${id}: broadcast failed; the same bytes go again next step`, err);
  }
  return "recorded";
}

/**
 * The open cold sweep, one step of the one driver: final -> completed with the outputs that paid the cold address (as
 * the chain reports the mined transaction) and its effects; dead -> what it held released; else waits or re-sends.
 */
export async function driveColdSweep(ctx: PipelineContext, sweep: ColdSweep): Promise<ColdSweepStep> {
  const chain = sweep.chain as NativeChain;
  const followed = await followSentTx(followDepsOf(ctx), sentTxIn(sweep), {
    required: ctx.settings.confirmations(chain),
    policy: COLD_SWEEP_POLICY,
    sender: ctx.chains.payer(chain),
    label: `cold sweep ${chain} ${sweep.id}`,
    afterDeath: "the next cold sweep is decided afresh",
  });
  switch (followed.kind) {
    case "dead":
      await coldSweepDead(ctx.kv, sweep, { proof: followed.proof, detail: followed.detail, at: ctx.now() }, [
        ...followed.effects,
      ]);
      return "dead";
    case "final": {
      const transfers = await ctx.chains.reader(chain).transfersOf(followed.txHash);
      if (transfers === null) {
        ctx.log(`cold sweep ${chain} ${sweep.id}: final, but the node has no transfers of ${followed.txHash}; retry`);
        return "waiting";
      }
      const coldOutputs = transfers
        .filter((t) => t.asset === "native" && t.to === sweep.destination)
        .map((t) => ({ txHash: followed.txHash, index: t.index, amount: t.amount.toString() }));
      const final = { blockNumber: followed.blockNumber, coldOutputs, at: ctx.now() };
      await completeColdSweep(ctx.kv, sweep, final, followed.effects);
      ctx.log(`cold sweep ${chain} ${sweep.id}: ${sweep.amount} to ${sweep.destination} final (${followed.txHash})`);
      return "completed";
    }
    case "failed": // not under COLD_SWEEP_POLICY (a failure kills the attempt)
      return "waiting";
    case "waiting":
      return followed.sent === "resent" ? "resent" : "waiting";
  }
}

/** Raises or updates `cold_sweep_blocked` (subject: the chain); commits only when its message changes. */
async function blocked(ctx: PipelineContext, chain: NativeChain, message: string): Promise<"blocked"> {
  const alert = await readAlert(ctx.kv, "cold_sweep_blocked", chain);
  if (alert.value?.message === message) return "blocked";
  const op = ctx.kv.atomic();
  addAlert(op, alert, { kind: "cold_sweep_blocked", subject: chain, chain, message, now: ctx.now() });
  if ((await op.commit()).ok) ctx.log(`cold sweep ${chain}: ${message}`);
  return "blocked";
}

async function clearBlocked(ctx: PipelineContext, chain: NativeChain): Promise<void> {
  const alert = await readAlert(ctx.kv, "cold_sweep_blocked", chain);
  if (alert.value && (await clearAlert(ctx.kv, "cold_sweep_blocked", chain))) {
    ctx.log(`cold sweep ${chain}: cold_sweep_blocked cleared`);
  }
}

/**
 * The tick of a chain's cold sweep (actors/ticks.ts): drives an open one on every run; decides a new one at most
 * once per `checkMs` in this process (the first run decides).
 */
export function coldSweepTicker(
  ctx: PipelineContext,
  chain: NativeChain,
  owner: string,
  leaseMs: number,
  checkMs = COLD_SWEEP_CHECK_MS,
): () => Promise<ColdSweepStep> {
  let lastDecision = -Infinity;
  return async () => {
    const now = ctx.now().getTime();
    const decide = now - lastDecision >= checkMs;
    if (decide) lastDecision = now;
    const step = await coldSweepOnce(ctx, chain, owner, leaseMs, decide);
    // A sweep just settled: the surplus left (more deposits meanwhile) is looked at on the next run.
    if (step === "completed" || step === "dead") lastDecision = -Infinity;
    return step;
  };
}
