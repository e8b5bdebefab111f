/**
 * The sweeper: moves minted deposits on the account chains (sol, xrp, sui) from their deposit addresses into the hot
 * wallet, which is what funds payouts. Like an order's intent, each sweep is recorded before it is broadcast
 * (kv/treasury.ts `recordSweep`, which locks the address: one open sweep per address), re-sent as the same bytes
 * while the chain does not know it, completed once final, and replaced by a new one only when proven dead.
 *
 * The commit that completes a mint writes a "sweep due" mark (`addSweepDueOf`); `sweepOnce`, one tick per chain under
 * a KV lease, works through the marks. A mark is cleared when a sweep of its deposit is final or when the address
 * holds nothing above its reserve (another deposit's sweep took it along, or the deposit was no more than the reserve).
 * Either way the address's balance record (kv/treasury.ts) says what it keeps, in the same commit: coins we control
 * that reconciliation counts (docs/reconciliation.md). A completed sweep records what the hot wallet received, as the
 * chain reports the transaction, and so the fee it paid.
 */
import { type Chains, TransientChainError } from "../chains/adapter.ts";
import { type AccountChain, chainFamily, NATIVE, type NativeChain, type UtxoChain } from "../chains/catalog.ts";
import { changeDustLimit } from "../chains/shared/utxo_fee.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import type { AuditEntry } from "../kv/audit.ts";
import { raiseAlert } from "../kv/alerts.ts";
import { InvalidRecordError, sentTxIn } from "../model/sent_tx.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { CHANGE_DERIVATION_INDEX } from "../chains/derivation.ts";
import {
  completeConsolidation,
  type Consolidation,
  consolidationDead,
  consolidationOrderId,
  openConsolidation,
  recordConsolidation,
} from "../kv/consolidations.ts";
import { payoutCoinOf } from "./treasury_steps.ts";
import { findDepositAddress } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { acquireLease } from "../kv/pipeline.ts";
import {
  addAccountBalance,
  addSweepDue,
  checkNoOpenSweep,
  completeSweep,
  listSweepsDue,
  openSweep,
  readSweep,
  recordSweep,
  spendableCoins,
  type Sweep,
  sweepDead,
  type SweepDue,
  sweepIdOf,
} from "../kv/treasury.ts";
import type { PipelineContext } from "./context.ts";
import { CONSOLIDATION_POLICY, SWEEP_POLICY } from "./follow_up.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { changePayer, hotPayerChecked } from "./hot_wallet_in_effect.ts";

/** Marks looked at per tick and chain; the rest wait for the next tick. */
export const SWEEPS_PER_TICK = 50;

/** Adds to the commit completing `order` the mark that its deposit is to be swept, for a mint from an account chain. */
export function addSweepDueOf(atomic: Deno.AtomicOperation, order: Order): void {
  if (order.type !== "mint") return;
  const source = chainFamily(order.sourceChain);
  if (source.family !== "account") return;
  const { txHash, index } = order.details.source;
  addSweepDue(atomic, source.chain, order.id, { txHash, index });
}

export type SweepStep =
  | "recorded" // a new sweep recorded and broadcast
  | "resent" // an open sweep the chain did not know, sent again (the same bytes)
  | "waiting" // an open sweep pending or not yet final, or a deposit that cannot be looked at now
  | "completed" // a sweep found final; its mark cleared
  | "dead" // a sweep proven dead; the next tick records a new one
  | "cleared" // nothing above the reserve left to sweep; the mark cleared
  | "held"; // a stored record failed its schema: nothing done, the mark kept, an invalid_record alert raised

/**
 * One sweeper tick on `chain`, under the lease `sweeper:<chain>` (one process sweeps a chain at a time). Returns what
 * happened to each mark looked at, or null when another process holds the lease or the chain's adapter cannot sweep
 * (no `hotWallet`, as on a disabled chain, or no reader `balance`: the marks wait for one that can).
 */
export async function sweepOnce(
  ctx: PipelineContext,
  chain: AccountChain,
  owner: string,
  leaseMs: number,
): Promise<SweepStep[] | null> {
  if (ctx.chains.payer(chain).hotWallet === null || !ctx.chains.reader(chain).balance) return null;
  // Read first, lease second: no mark (an idle chain) costs one read per tick and no commit.
  const marks = await listSweepsDue(ctx.kv, chain, SWEEPS_PER_TICK);
  if (marks.length === 0) return [];
  if (!(await acquireLease(ctx.kv, `sweeper:${chain}`, owner, leaseMs, ctx.now().getTime()))) return null;
  const steps: SweepStep[] = [];
  for (const entry of marks) {
    try {
      steps.push(await sweepDeposit(ctx, chain, entry));
    } catch (err) {
      if (err instanceof InvalidRecordError) {
        steps.push(await holdInvalidRecord(ctx, chain, err, `sweep of deposit ${entry.value.orderId}`));
        continue;
      }
      if (!(err instanceof TransientChainError)) {
        ctx.log(`sweep ${chain} ${entry.value.orderId}: failed; will retry`, err);
      }
      steps.push("waiting");
    }
  }
  return steps;
}

async function sweepDeposit(
  ctx: PipelineContext,
  chain: AccountChain,
  due: Deno.KvEntry<SweepDue>,
): Promise<SweepStep> {
  const reader = ctx.chains.reader(chain);
  const { source } = due.value;
  const deposit = (await reader.transfersOf(source.txHash))?.find((t) => t.index === source.index);
  if (!deposit) {
    ctx.log(`sweep ${chain} ${due.value.orderId}: minted deposit ${source.txHash}:${source.index} not on chain now`);
    return "waiting";
  }
  const address = deposit.to;
  const open = await openSweep(ctx.kv, chain, address);
  if (open) return await driveSweep(ctx, chain, open, due);

  const sweepId = sweepIdOf(due.value);
  const last = await readSweep(ctx.kv, chain, sweepId);
  if (last?.status === "completed") return await clearMark(ctx, due, "completed");
  if (last?.status === "dead") return await nextAttempt(ctx, due);

  const reserve = NATIVE[chain].reserve;
  const balance = await reader.balance!(address);
  const owner = await findDepositAddress(ctx.kv, chain, address);
  if (!owner) throw new Error(`${address} is not one of our deposit addresses on ${chain}`);
  // The sim charges no fee; a live adapter's prepareSweep takes its fee out of the amount it is asked to move.
  const amount = balance - reserve;
  if (amount <= 0n) {
    // Nothing to move, yet the address holds what it holds (a deposit of exactly the reserve: all of it): recorded.
    const kept = { chain, address, derivationIndex: owner.derivationIndex, balance, reserve };
    return await clearMark(ctx, due, "cleared", (atomic) => {
      checkNoOpenSweep(atomic, chain, address);
      addAccountBalance(atomic, kept);
    });
  }
  // Into the hot wallet in effect now (docs/operations.md "Rotating a hot wallet"), checked at the recording: a
  // rotation committed meanwhile refuses it (prepared again next tick, into the new wallet). A sweep recorded into a
  // wallet before its rotation is followed to its end as recorded, and the retired wallet's drain waits for it.
  const { payer, check } = await hotPayerChecked(ctx, chain);
  const from = { address, derivationIndex: owner.derivationIndex };
  const tx = await withSigningPurpose(
    { kind: "sweep", id: sweepId },
    () => payer.prepareSweep({ sweepId, from: address, derivationIndex: owner.derivationIndex, amount }),
  );
  const recorded = await recordSweep(ctx.kv, {
    sweepId,
    chain,
    from,
    to: payer.hotWallet!,
    amount,
    leave: reserve,
    tx,
    at: ctx.now(),
    checks: [check],
  });
  if (!recorded.ok) return "waiting"; // another process recorded one first: it is driven from its record
  ctx.faultPoint?.("sweep-after-record");
  await payer.broadcast(tx);
  return "recorded";
}

/**
 * An open sweep, followed by the one driver (actors/sent_tx.ts) under the sweep policy: completed once final, proven
 * dead, or sent again (the same bytes) while the chain does not know it.
 */
async function driveSweep(
  ctx: PipelineContext,
  chain: AccountChain,
  sweep: Sweep,
  due: Deno.KvEntry<SweepDue>,
): Promise<SweepStep> {
  const followed = await followSentTx(
    followDepsOf(ctx),
    sentTxIn(sweep),
    {
      required: ctx.settings.confirmations(chain),
      policy: SWEEP_POLICY,
      sender: ctx.chains.payer(chain),
      label: `sweep ${chain} ${sweep.sweepId}`,
      afterDeath: "the next sweep of the deposit is signed",
    },
  );
  const settling = (atomic: Deno.AtomicOperation) =>
    void addSentTxEffects(atomic, "effects" in followed ? followed.effects : []);
  switch (followed.kind) {
    case "dead": // proven dead, or failed on chain in a counted block
      await sweepDead(
        ctx.kv,
        chain,
        sweep.sweepId,
        { proof: followed.proof, detail: followed.detail, at: ctx.now() },
        settling,
      );
      return sweep.sweepId === sweepIdOf(due.value) ? await nextAttempt(ctx, due) : "dead";
    case "final": {
      const delivered = await deliveredBy(ctx, sweep);
      if (delivered === null) {
        // Final a moment ago, in no canonical block now: asked again next tick.
        ctx.log(`sweep ${chain} ${sweep.sweepId}: final, but the node has no transfers of ${sweep.txHash}; will retry`);
        return "waiting";
      }
      if (delivered > BigInt(sweep.amount)) {
        ctx.log(
          `sweep ${chain} ${sweep.sweepId}: delivered ${delivered}, more than the ${sweep.amount} recorded as leaving ` +
            `${sweep.from.address}; its fee is recorded as 0`,
        );
      }
      const final = { blockNumber: followed.blockNumber, at: ctx.now(), delivered };
      await completeSweep(ctx.kv, chain, sweep.sweepId, final, settling);
      return sweep.sweepId === sweepIdOf(due.value) ? await clearMark(ctx, due, "completed") : "completed";
    }
    case "failed": // not under SWEEP_POLICY (a failure kills the attempt)
      return "waiting";
    case "waiting":
      return followed.sent === "resent" ? "resent" : "waiting";
  }
}

/**
 * A stored treasury record (a sweep, a consolidation) failed its schema when read: like an invalid order
 * (order_actor.ts `holdInvalid`), it is not driven on a guess. Nothing is written to it or to its mark, nothing is
 * broadcast, and each look is logged and counted on one `invalid_record` alert naming the key and the bad fields,
 * until an operator repairs the record.
 */
export async function holdInvalidRecord(
  ctx: Pick<PipelineContext, "kv" | "log" | "now">,
  chain: NativeChain,
  invalid: InvalidRecordError,
  what: string,
): Promise<"held"> {
  ctx.log(`${what}: not stepped: ${invalid.message}`);
  await raiseAlert(ctx.kv, {
    kind: "invalid_record",
    subject: invalid.subject,
    chain,
    message: `${invalid.message}; the ${what} waits untouched until the stored record is repaired`,
    now: ctx.now(),
  });
  return "held";
}

async function clearMark(
  ctx: PipelineContext,
  due: Deno.KvEntry<SweepDue>,
  step: SweepStep,
  also?: (atomic: Deno.AtomicOperation) => void,
): Promise<SweepStep> {
  const atomic = ctx.kv.atomic().check(due).delete(due.key);
  also?.(atomic);
  // Refused when the mark or what `also` checks changed since read: the mark stays, and the next tick looks again.
  return (await atomic.commit()).ok ? step : "waiting";
}

/**
 * What the sweep's transaction delivered to the hot wallet, as the chain reports it (the native transfers to `to`:
 * XRPL `delivered_amount`, the Solana and Sui balance rise), or null when it is in no canonical block. The fee is what
 * left the address less this (kv/treasury.ts `sweepDelivery`), whatever the chain charged.
 */
export async function deliveredBy(
  ctx: Pick<PipelineContext, "chains">,
  sweep: Pick<Sweep, "chain" | "txHash" | "to">,
): Promise<bigint | null> {
  const transfers = await ctx.chains.reader(sweep.chain).transfersOf(sweep.txHash);
  if (transfers === null) return null;
  return transfers.filter((t) => t.asset === "native" && t.to === sweep.to).reduce((sum, t) => sum + t.amount, 0n);
}

/**
 * The deposit's last sweep is dead: the next tick signs a new one under a new id (checked, so two ticks never both
 * move it on). Also reached after a crash between recording the sweep dead and moving the mark on.
 */
async function nextAttempt(ctx: PipelineContext, due: Deno.KvEntry<SweepDue>): Promise<SweepStep> {
  const next: SweepDue = { ...due.value, deadSweeps: due.value.deadSweeps + 1 };
  await ctx.kv.atomic().check(due).set(due.key, next).commit();
  return "dead";
}

// ---------------------------------------------------------------- UTXO consolidations

/**
 * The treasury's periodic work on one native chain, under its own lease: sweeps of minted deposits on the account
 * chains, and the open consolidation of a UTXO chain followed to its end. Consolidations are driven here rather than
 * by the order actor's runtime because they are no order: like a sweep, a treasury transaction with its own
 * write-ahead record, one per chain, settled by the same lease-holding tick that would sweep.
 */
export async function treasuryTick(
  ctx: PipelineContext,
  chain: NativeChain,
  owner: string,
  leaseMs: number,
): Promise<unknown> {
  const family = chainFamily(chain);
  if (family.family === "account") return await sweepOnce(ctx, family.chain, owner, leaseMs);
  return await consolidationTick(ctx, family.chain, owner, leaseMs);
}

/** The open consolidation of a UTXO chain, followed one step under the lease `consolidation:<chain>`. */
async function consolidationTick(
  ctx: PipelineContext,
  chain: UtxoChain,
  owner: string,
  leaseMs: number,
): Promise<unknown> {
  // Read first, lease second: an idle treasury (no open consolidation) costs one read per tick and no commit.
  let open: Consolidation | null;
  try {
    open = await openConsolidation(ctx.kv, chain);
  } catch (err) {
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "open consolidation");
    throw err;
  }
  if (!open) return null;
  if (!(await acquireLease(ctx.kv, `consolidation:${chain}`, owner, leaseMs, ctx.now().getTime()))) return null;
  try {
    return await driveConsolidation(ctx.kv, ctx.chains, open, ctx.settings.confirmations(chain), ctx.now());
  } catch (err) {
    // Read again by its settle step and found failing its schema (changed since the read above): held the same way.
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "open consolidation");
    if (!(err instanceof TransientChainError)) ctx.log(`consolidation ${chain} ${open.id}: failed; will retry`, err);
    return "waiting";
  }
}

export type ConsolidationStep = "completed" | "dead" | "resent" | "waiting";

/**
 * Follows a recorded consolidation one step, by the one driver (actors/sent_tx.ts) under the consolidation policy:
 * counted final -> its inputs are spent and its output becomes a treasury coin (one atomic); proven dead (or failed,
 * final) -> its coins are released; unknown to the node -> the same bytes again; pending or not yet deep enough ->
 * wait.
 */
export async function driveConsolidation(
  kv: Deno.Kv,
  chains: Chains,
  c: Consolidation,
  required: number,
  now: Date,
): Promise<ConsolidationStep> {
  if (c.status !== "prepared") return c.status === "completed" ? "completed" : "dead";
  const { index, address, derivationIndex, amount } = c.output;
  const followed = await followSentTx({ kv, chains, now }, sentTxIn(c), {
    required,
    policy: CONSOLIDATION_POLICY,
    sender: chains.payer(c.chain),
    label: `consolidation ${c.chain} ${c.id}`,
    afterDeath: "its coins are released",
    // The merged output pays our change address: a treasury coin once final.
    own: [{ index, address, derivationIndex, amount: BigInt(amount) }],
  });
  switch (followed.kind) {
    case "dead": // proven dead, or failed on chain in a counted block: its coins are released
      await consolidationDead(kv, c, { proof: followed.proof, detail: followed.detail, at: now }, followed.effects);
      return "dead";
    case "final":
      await completeConsolidation(
        kv,
        c,
        { txHash: followed.txHash, blockNumber: followed.blockNumber, at: now },
        followed.effects,
      );
      return "completed";
    case "failed": // not under CONSOLIDATION_POLICY (a failure kills the attempt)
      return "waiting";
    case "waiting":
      return followed.sent === "resent" ? "resent" : "waiting";
  }
}

export interface ConsolidateOptions {
  maxInputs: number;
  minInputs: number;
  by: string;
  now: Date;
  /** The chain's fee rule, as the service applies it (`settings.utxoFee`: the configured doge rate). */
  fee: FeeFunction;
  /** Called between the record and the broadcast (tests simulate a crash there). */
  afterRecord?: () => void;
}

export type ConsolidateResult =
  /** A consolidation was already open: it was shown and driven one step (resent when the node did not know it). */
  | { kind: "open"; consolidation: Consolidation; step: ConsolidationStep }
  | { kind: "started"; consolidation: Consolidation; audit: AuditEntry; broadcast: "sent" | "failed" }
  /** Fewer than `minInputs` coins worth merging: nothing done. */
  | { kind: "nothing"; spendable: number; reason: string };

/**
 * `deno task admin utxo consolidate`: merges the smallest spendable coins (at most `maxInputs`, at least `minInputs`,
 * each worth more than the fee its input adds) into one output at the payer's change address, write-ahead and exactly
 * once. While a consolidation is open it is driven one step instead (resent if the node does not know it), never a
 * second one started.
 */
export async function consolidate(
  kv: Deno.Kv,
  chains: Chains,
  chain: UtxoChain,
  required: number,
  opts: ConsolidateOptions,
): Promise<ConsolidateResult> {
  const open = await openConsolidation(kv, chain);
  if (open) {
    return { kind: "open", consolidation: open, step: await driveConsolidation(kv, chains, open, required, opts.now) };
  }
  const payer = await changePayer({ kv, chains }, chain);
  const changeAddress = payer.changeAddress;
  if (!changeAddress) throw new Error(`the ${chain} payer has no change address: it cannot consolidate`);
  const fee = opts.fee;
  const spendable = (await spendableCoins(kv, chain)).sort((a, b) =>
    a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0
  );
  const chosen = [];
  for (const coin of spendable) {
    if (chosen.length >= opts.maxInputs) break;
    // A coin worth no more than the fee of its own input only makes the merged output smaller.
    if (coin.amount <= fee(chosen.length + 1, 1) - fee(chosen.length, 1)) continue;
    chosen.push(coin);
  }
  const total = chosen.reduce((sum, c) => sum + c.amount, 0n);
  const amount = total - fee(chosen.length, 1);
  if (chosen.length < opts.minInputs || amount < changeDustLimit(chain)) {
    return {
      kind: "nothing",
      spendable: spendable.length,
      reason: `${chosen.length} coin(s) worth merging, at least ${opts.minInputs} needed`,
    };
  }
  const id = crypto.randomUUID();
  const coins = chosen.map(payoutCoinOf);
  // Signed for the purpose `consolidation` (a separate signer process checks every output is ours:
  // actors/signer/purposes.ts); its record is written after it is signed.
  const tx = await withSigningPurpose({ kind: "consolidation", id }, () =>
    payer.preparePayout({
      orderId: consolidationOrderId(id),
      to: changeAddress,
      amount,
      memo: null,
      coins,
    }));
  const recorded = await recordConsolidation(kv, {
    id,
    chain,
    by: opts.by,
    coins,
    changeAddress,
    changeDerivationIndex: payer.changeIndex ?? CHANGE_DERIVATION_INDEX,
    amount,
    tx,
    at: opts.now,
  });
  if (!recorded.ok) {
    if (recorded.reason === "open") {
      const step = await driveConsolidation(kv, chains, recorded.open, required, opts.now);
      return { kind: "open", consolidation: recorded.open, step };
    }
    throw new TransientChainError(`${chain}: a chosen coin was locked meanwhile; nothing was recorded, try again`);
  }
  opts.afterRecord?.();
  try {
    await payer.broadcast(tx);
    return { ...recorded, kind: "started", broadcast: "sent" };
  } catch {
    // Recorded: the service (or the next run of the command) sends the same bytes again.
    return { ...recorded, kind: "started", broadcast: "failed" };
  }
}
