/**
 * Hot-wallet rotation on the account chains (sol, xrp, sui; docs/operations.md "Rotating a hot wallet"): the hot wallet
 * moves to a fresh derivation index, and the old one is drained into it.
 *
 * - `rotateHotWallet` commits, in one atomic: the new index in effect and the old wallet retired (kv/hot_wallets.ts),
 *   a bump of the hot-wallet epoch (so a payout checked against the old wallet before this commit is refused and
 *   checked again against the new one: kv/hot_wallet.ts), the audit entry and the `hot_wallet_rotation` alert. From
 *   then on new payouts and sweeps use the new wallet (actors/hot_wallet_in_effect.ts); transactions recorded from or
 *   into the old one are followed as recorded, re-sent as the same bytes, and once proven dead their purpose signs its
 *   next attempt from (or into) the wallet in effect.
 * - `drainTick` drains the retired wallet once nothing recorded is still open against it (no hot-wallet hold of its
 *   index: no payout or refund from it; no open sweep into it): everything above the chain's reserve moves to the new
 *   wallet in one transaction, a purpose of the one sent-transaction driver (docs/sent-transactions.md) modelled on the
 *   sweeper's `driveSweep`: recorded with its reservations before broadcast, re-sent as the same bytes, replaced only
 *   once proven dead, verified before recording (chains/verify.ts: from the old wallet, to the new one).
 *
 * Reserves (docs/architecture.md "Chain facts"): xrp keeps its 1 XRP base reserve (the account is never deleted); sol
 * keeps the rent-exempt minimum, so the old account stays open and the drain needs no special closing rule; sui has
 * none (its gas coin moves whole, less the gas charged).
 */
import { withSigningPurpose } from "../chains/signing.ts";
import { TransientChainError } from "../chains/adapter.ts";
import { formatError } from "../chains/shared/redact.ts";
import { type AccountChain, NATIVE, type UtxoChain } from "../chains/catalog.ts";
import { addAlert, raiseAlert, readAlert } from "../kv/alerts.ts";
import { appendAudit } from "../kv/audit.ts";
import { addReservations } from "../kv/chain_state.ts";
import { bumpHotWalletEpoch, readHotWalletHolds } from "../kv/hot_wallet.ts";
import {
  addChangeAddressState,
  addHotWalletState,
  type HotWalletStateEntry,
  readChangeAddressState,
  readHotWalletState,
} from "../kv/hot_wallets.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import { acquireLease } from "../kv/pipeline.ts";
import { listOpenSweeps } from "../kv/treasury.ts";
import {
  type ChangeAddressState,
  type DrainAttempt,
  type HotWalletState,
  MAX_KEPT_DEAD_DRAINS,
  nextRotationIndex,
  type RetiredHotWallet,
} from "../model/hot_wallet.ts";
import { deadSentTx, InvalidRecordError, sentTxIn, sentTxOf } from "../model/sent_tx.ts";
import type { PipelineContext } from "./context.ts";
import { SWEEP_POLICY } from "./follow_up.ts";
import { payerAtChangeIndex, payerAtHotIndex } from "./hot_wallet_in_effect.ts";
import { followDepsOf, followSentTx } from "./sent_tx.ts";
import { deliveredBy, holdInvalidRecord } from "./sweeper.ts";

/** A rotation refused: nothing was written. */
export class RotationRefused extends Error {
  constructor(readonly status: 404 | 409, message: string) {
    super(message);
    this.name = "RotationRefused";
  }
}

export interface Rotated<C extends AccountChain | UtxoChain = AccountChain> {
  chain: C;
  from: { index: number; address: string };
  to: { index: number; address: string };
  auditId: string;
}

/**
 * Rotates `chain`'s hot wallet to the next unused index. Refused (RotationRefused, nothing written) when the payer
 * cannot sign for another index (a disabled chain) or a retired wallet is still draining: one drain at a time keeps
 * "everything above the reserve" well defined.
 */
export async function rotateHotWallet(
  ctx: Pick<PipelineContext, "kv" | "chains" | "log">,
  chain: AccountChain,
  by: string,
  now: Date,
): Promise<Rotated> {
  const read = await readHotWalletState(ctx.kv, chain);
  const draining = read.state?.retired.find((r) => r.status === "draining");
  if (draining) {
    throw new RotationRefused(
      409,
      `the ${chain} hot wallet ${draining.address} (index ${draining.index}) retired at ${draining.retiredAt} is ` +
        `still draining into ${draining.into.address}: rotate again once it is drained (deno task admin hot show)`,
    );
  }
  const base = ctx.chains.payer(chain);
  if (base.hotWallet === null || !base.atHotIndex) {
    throw new RotationRefused(409, `the ${chain} payer of this process cannot sign for another hot wallet index`);
  }
  const fromIndex = read.state?.current.index ?? 0;
  const toIndex = nextRotationIndex(read.state);
  const fromAddress = payerAtHotIndex(ctx.chains, chain, fromIndex).hotWallet!;
  const toAddress = payerAtHotIndex(ctx.chains, chain, toIndex).hotWallet!;
  const retired: RetiredHotWallet = {
    index: fromIndex,
    address: fromAddress,
    into: { index: toIndex, address: toAddress },
    retiredAt: now.toISOString(),
    by,
    status: "draining",
    deadAttempts: [],
  };
  const next: HotWalletState = {
    chain,
    current: { index: toIndex, address: toAddress, since: now.toISOString(), by },
    retired: [...(read.state?.retired ?? []), retired],
  };
  const holds = await readHotWalletHolds(ctx.kv, chain, fromIndex);
  const op = bumpHotWalletEpoch(addHotWalletState(ctx.kv.atomic(), read, next), chain, holds.epoch, holds.epochValue);
  return await commitRotation(ctx, op, {
    chain,
    what: "hot wallet",
    action: "hot.rotate",
    from: { index: fromIndex, address: fromAddress },
    to: { index: toIndex, address: toAddress },
    by,
    now,
    after: `${holds.count} payout(s) recorded from the old wallet finish from it, then the rest above its reserve is ` +
      "drained into the new one",
    changedMeanwhile: "look and try again",
  });
}

/**
 * Commits a rotation's record change (`op`) with its audit entry and the `hot_wallet_rotation` alert, raised at once
 * like a cold address change, all in one atomic; refused (409, nothing written) when the record changed since read.
 */
async function commitRotation<C extends AccountChain | UtxoChain>(
  ctx: Pick<PipelineContext, "kv" | "log">,
  op: Deno.AtomicOperation,
  r: {
    chain: C;
    what: "hot wallet" | "change address";
    action: "hot.rotate" | "change.rotate";
    from: Rotated["from"];
    to: Rotated["to"];
    by: string;
    now: Date;
    /** What happens to the old one, in the alert. */
    after: string;
    /** What to do when the commit finds the record changed, in the refusal. */
    changedMeanwhile: string;
  },
): Promise<Rotated<C>> {
  const { chain, from, to, by, now } = r;
  const alert = await readAlert(ctx.kv, "hot_wallet_rotation", chain);
  const audit = appendAudit(op, { by, action: r.action, subject: chain, before: from, after: to }, now);
  addAlert(op, alert, {
    kind: "hot_wallet_rotation",
    subject: chain,
    chain,
    message: `${by} rotated the ${chain} ${r.what} from ${from.address} (index ${from.index}) to ${to.address} ` +
      `(index ${to.index}); ${r.after}. If no operator meant this, revoke the operator key used`,
    now,
  });
  if (!(await op.commit()).ok) {
    throw new RotationRefused(
      409,
      `the ${chain} ${r.what} changed meanwhile; nothing was recorded, ${r.changedMeanwhile}`,
    );
  }
  ctx.log(`${r.what} ${chain}: rotated from index ${from.index} (${from.address}) to ${to.index} (${to.address})`);
  return { chain, from, to, auditId: audit.id };
}

/**
 * Rotates UTXO chain `chain`'s change address to the next unused index of the change branch: from this commit on, new
 * payouts and consolidations send their change there (actors/hot_wallet_in_effect.ts `changePayer`). Nothing is
 * drained: coins at the old address stay treasury coins, each signed by the key its `derivationIndex` names. The new
 * index, the audit entry and the `hot_wallet_rotation` alert commit together. Refused (RotationRefused, nothing
 * written) when the payer cannot sign for another index.
 */
export async function rotateChangeAddress(
  ctx: Pick<PipelineContext, "kv" | "chains" | "log">,
  chain: UtxoChain,
  by: string,
  now: Date,
): Promise<Rotated<UtxoChain>> {
  const read = await readChangeAddressState(ctx.kv, chain);
  const base = ctx.chains.payer(chain);
  if (base.changeAddress === null || !base.atChangeIndex) {
    throw new RotationRefused(409, `the ${chain} payer of this process cannot sign for another change index`);
  }
  const fromIndex = read.state?.current.index ?? 0;
  const toIndex = nextRotationIndex(read.state);
  const fromAddress = payerAtChangeIndex(ctx.chains, chain, fromIndex).changeAddress!;
  const toAddress = payerAtChangeIndex(ctx.chains, chain, toIndex).changeAddress!;
  const next: ChangeAddressState = {
    chain,
    current: { index: toIndex, address: toAddress, since: now.toISOString(), by },
    retired: [
      ...(read.state?.retired ?? []),
      { index: fromIndex, address: fromAddress, retiredAt: now.toISOString(), by },
    ],
  };
  return await commitRotation(ctx, addChangeAddressState(ctx.kv.atomic(), read, next), {
    chain,
    what: "change address",
    action: "change.rotate",
    from: { index: fromIndex, address: fromAddress },
    to: { index: toIndex, address: toAddress },
    by,
    now,
    after: "coins at the old address stay spendable treasury coins",
    changedMeanwhile: "try again",
  });
}

export type DrainStep =
  | "idle" // no retired wallet is draining
  | "waiting" // something recorded against the old wallet is still open, or the drain is not final yet
  | "recorded" // a drain recorded and broadcast
  | "resent" // the open drain, unknown to the chain, sent again (the same bytes)
  | "dead" // the open drain proven dead; the next tick signs another
  | "drained" // final (or nothing above the reserve to move): the retired wallet is done
  | "held"; // the stored record failed its schema: nothing done, an invalid_record alert raised

/** One drain step on `chain`, under the lease `hot-drain:<chain>` (null when another process holds it). */
export async function drainTick(
  ctx: PipelineContext,
  chain: AccountChain,
  owner: string,
  leaseMs: number,
): Promise<DrainStep | null> {
  let read: HotWalletStateEntry;
  try {
    read = await readHotWalletState(ctx.kv, chain);
  } catch (err) {
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "hot wallet drain");
    throw err;
  }
  // Read first, lease second: a chain never rotated (or fully drained) costs one read per tick and no commit.
  const retired = read.state?.retired.find((r) => r.status === "draining");
  if (!read.state || !retired) return "idle";
  if (!(await acquireLease(ctx.kv, `hot-drain:${chain}`, owner, leaseMs, ctx.now().getTime()))) return null;
  try {
    if (retired.attempt) return await driveDrain(ctx, read, retired, retired.attempt);
    return await startDrain(ctx, read, retired);
  } catch (err) {
    if (err instanceof InvalidRecordError) return await holdInvalidRecord(ctx, chain, err, "hot wallet drain");
    if (!(err instanceof TransientChainError)) {
      ctx.log(`hot wallet drain ${chain}: failed (${formatError(err).split("\n")[0]}); will retry`, err);
    }
    return "waiting";
  }
}

/** The state with the retired wallet at `index` replaced by `next`. */
function withRetired(state: HotWalletState, next: RetiredHotWallet): HotWalletState {
  return { ...state, retired: state.retired.map((r) => r.index === next.index ? next : r) };
}

async function commitState(
  ctx: PipelineContext,
  read: HotWalletStateEntry,
  next: HotWalletState,
  also?: (op: Deno.AtomicOperation) => void,
): Promise<boolean> {
  const op = addHotWalletState(ctx.kv.atomic(), read, next);
  also?.(op);
  return (await op.commit()).ok;
}

async function tell(ctx: PipelineContext, chain: AccountChain, message: string): Promise<void> {
  ctx.log(`hot wallet drain ${chain}: ${message}`);
  await raiseAlert(ctx.kv, { kind: "hot_wallet_rotation", subject: chain, chain, message, now: ctx.now() });
}

/** No open drain: waits for what is recorded against the old wallet, then records one and broadcasts it. */
async function startDrain(
  ctx: PipelineContext,
  read: HotWalletStateEntry,
  retired: RetiredHotWallet,
): Promise<DrainStep> {
  const state = read.state!;
  const chain = state.chain;
  const holds = await readHotWalletHolds(ctx.kv, chain, retired.index);
  if (holds.count > 0) {
    ctx.log(`hot wallet drain ${chain}: ${holds.count} payout(s) recorded from ${retired.address} still open; waits`);
    return "waiting";
  }
  const sweepsIn = (await listOpenSweeps(ctx.kv, chain)).filter((s) => s.to === retired.address);
  if (sweepsIn.length > 0) {
    ctx.log(`hot wallet drain ${chain}: ${sweepsIn.length} sweep(s) into ${retired.address} still open; waits`);
    return "waiting";
  }
  const reader = ctx.chains.reader(chain);
  if (!reader.balance) return "waiting";
  const reserve = NATIVE[chain].reserve;
  const balance = await reader.balance(retired.address);
  const amount = balance - reserve;
  if (amount <= 0n) {
    const done: RetiredHotWallet = {
      ...retired,
      status: "drained",
      drainedAt: ctx.now().toISOString(),
      drainTxHash: null,
    };
    if (!(await commitState(ctx, read, withRetired(state, done)))) return "waiting";
    await tell(ctx, chain, `${retired.address} holds ${balance}, nothing above its ${reserve} reserve: drained`);
    return "drained";
  }
  const payer = payerAtHotIndex(ctx.chains, chain, retired.into.index);
  // Named for logs, alerts and the verify check; exactly once is the record's versionstamp check, not the name.
  const drainId = `drain-${retired.index}-${crypto.randomUUID().slice(0, 8)}`;
  // Signed for the purpose `drain` (a separate signer process checks it: actors/signer/purposes.ts).
  const tx = await withSigningPurpose({ kind: "drain", id: drainId }, () =>
    payer.prepareSweep({
      sweepId: drainId,
      from: retired.address,
      derivationIndex: retired.index,
      branch: "hot",
      amount,
    }));
  const attempt: DrainAttempt = {
    ...sentTxOf(chain, tx, ctx.now()),
    chain,
    drainId,
    amount: amount.toString(),
    leave: reserve.toString(),
  };
  // Write-ahead: the attempt and its reservations (an XRPL Sequence lock, Sui coin locks) in one commit, checked
  // against the record as read: a second process preparing the same drain fails here and broadcasts nothing.
  if (!(await commitState(ctx, read, withRetired(state, { ...retired, attempt }), (op) => addReservations(op, tx)))) {
    return "waiting";
  }
  ctx.faultPoint?.("drain-after-record");
  await tell(ctx, chain, `drain ${drainId} of ${amount} from ${retired.address} to ${retired.into.address} recorded`);
  await payer.broadcast(tx);
  return "recorded";
}

/** The open drain, followed by the one driver under the sweep policy (a failure on chain kills the attempt). */
async function driveDrain(
  ctx: PipelineContext,
  read: HotWalletStateEntry,
  retired: RetiredHotWallet,
  attempt: DrainAttempt,
): Promise<DrainStep> {
  const state = read.state!;
  const chain = state.chain;
  const followed = await followSentTx(followDepsOf(ctx), sentTxIn(attempt), {
    required: ctx.settings.confirmations(chain),
    policy: SWEEP_POLICY,
    // The same bytes again: whichever payer sends them, they are the recorded transaction signed by the old key.
    sender: ctx.chains.payer(chain),
    label: `hot wallet drain ${chain} ${attempt.drainId}`,
    afterDeath: "the next drain is signed",
  });
  const settling = (op: Deno.AtomicOperation) =>
    void addSentTxEffects(op, "effects" in followed ? followed.effects : []);
  switch (followed.kind) {
    case "dead": {
      const dead = { ...attempt, ...deadSentTx(attempt, { ...followed, at: ctx.now() }), chain };
      const { attempt: _dead, ...rest } = retired;
      const next: RetiredHotWallet = {
        ...rest,
        deadAttempts: [...retired.deadAttempts, dead].slice(-MAX_KEPT_DEAD_DRAINS),
      };
      if (!(await commitState(ctx, read, withRetired(state, next), settling))) return "waiting";
      await tell(ctx, chain, `drain ${attempt.drainId} is dead (${followed.detail}); the next one is signed`);
      return "dead";
    }
    case "final": {
      const delivered = await deliveredBy(ctx, { chain, txHash: followed.txHash, to: retired.into.address });
      if (delivered === null) return "waiting";
      const { attempt: _open, ...rest } = retired;
      const done: RetiredHotWallet = {
        ...rest,
        status: "drained",
        drainedAt: ctx.now().toISOString(),
        drainTxHash: followed.txHash,
        blockNumber: followed.blockNumber,
        delivered: delivered.toString(),
        drainAmount: attempt.amount,
      };
      if (!(await commitState(ctx, read, withRetired(state, done), settling))) return "waiting";
      await tell(ctx, chain, `drain ${attempt.drainId} final: ${retired.into.address} received ${delivered}`);
      return "drained";
    }
    case "failed":
      return "waiting";
    case "waiting":
      return followed.sent === "resent" ? "resent" : "waiting";
  }
}
