/**
 * The one driver of a transaction we signed and recorded before broadcast (model/sent_tx.ts), for every purpose: an
 * order's mint or payout, a refund, a sweep, a consolidation, an on-chain burn batch. One step asks the chain about
 * the recorded transaction (with its bytes, so the reader can prove it dead), applies the one follow-up rule
 * (actors/follow_up.ts) under the purpose's policy, re-sends the same bytes or nudges, and returns what happened with
 * its KV effects as plain data (model/sent_tx_effects.ts). The caller commits those effects with its own record's
 * change in one atomic (kv/sent_tx_effects.ts); it supplies only how to prepare a new attempt and what its record
 * becomes when the transaction settles.
 *
 * What the driver does the same for every purpose, where the five followers once differed (the table in
 * actors/follow_up.ts):
 * - a nonce or XRPL Sequence used by another transaction raises `nonce_used_elsewhere` whatever the purpose: a refund
 *   or a sweep losing its sequence points at a leaked or shared key as surely as a payout does (row 9);
 * - a final failure or a death releases what the transaction held, coins and hot-wallet hold alike (row 13);
 * - a recorded transaction without bytes (an adopted on-chain mint) is only ever looked at (row 8).
 */
import type { Chains, ChainSender, DeathProof, TxStatus } from "../chains/adapter.ts";
import { ReplacementMismatchError } from "../chains/effects.ts";
import { raiseAlert } from "../kv/alerts.ts";
import type { SentTx } from "../model/sent_tx.ts";
import {
  changeOutputsOf,
  deadEffects,
  failedEffects,
  finalEffects,
  type OwnOutput,
  type SentTxEffect,
} from "../model/sent_tx_effects.ts";
import { type FailedProof, type FollowUp, followUp, type FollowUpPolicy } from "./follow_up.ts";
import type { PipelineContext } from "./context.ts";

export interface FollowOptions {
  /** Confirmations its chain requires here. */
  required: number;
  policy: FollowUpPolicy;
  /**
   * Who re-sends and nudges it; null when this process cannot sign for it (a uAsset refund without the transfer
   * address's key): the transaction is then only looked at, and a step that would send says so (`blocked`).
   */
  sender: ChainSender | null;
  /** Who it is for, in logs and alerts: `order <id>`, `refund <id>`, `sweep sol <id>`, ... */
  label: string;
  /** What the purpose does once this one is dead, said in the alert on a nonce used elsewhere. */
  afterDeath: string;
  /** The outputs of it that pay us back (default: its change), which become treasury coins once it is final. */
  own?: OwnOutput[];
}

export interface FollowDeps {
  kv: Deno.Kv;
  chains: Chains;
  now: Date;
  log?: (msg: string) => void;
}

/** What a pipeline step hands the driver: its store, its chains, the step's time and its log. */
export function followDepsOf(ctx: Pick<PipelineContext, "kv" | "chains" | "now" | "log">): FollowDeps {
  return { kv: ctx.kv, chains: ctx.chains, now: ctx.now(), log: (m) => ctx.log(m) };
}

/** An answer about a transaction that is not dead: the only ones a waiting step has. */
export type LiveStatus = Exclude<TxStatus, { state: "dead" }>;

/** One step's outcome, with the writes it implies for the store (committed by the caller with its own record). */
export type Followed =
  /** Final as `txHash` (the recorded hash, or the fee-bumped replacement that was mined). */
  | { kind: "final"; txHash: string; blockNumber: number; effects: SentTxEffect[] }
  /** Failed on chain, finally, and the purpose fails with it (its policy `fails`). */
  | { kind: "failed"; proof: FailedProof; detail: string; effects: SentTxEffect[] }
  /** Can never be mined: the purpose signs again or gives up what it held. */
  | { kind: "dead"; proof: DeathProof; detail: string; effects: SentTxEffect[] }
  /**
   * Not settled: look again in about `blocks` blocks. `sent`: what this step sent (the same bytes, or the sender's
   * nudge). `blocked`: it needed sending and no sender could.
   */
  | {
    kind: "waiting";
    blocks: number;
    status: LiveStatus;
    sent: "resent" | "nudged" | null;
    blocked?: true;
  };

/** Asks the chain about `tx` and applies the rule; sends nothing (an operator's look, a read-only report). */
export async function lookAtSentTx(
  chains: Chains,
  tx: SentTx,
  required: number,
  policy: FollowUpPolicy,
): Promise<{ status: TxStatus; next: FollowUp }> {
  // The recorded transaction (bytes, expiry, what it consumes) lets the reader prove it dead; an adopted mint has none.
  const ours = tx.raw ? { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes } : undefined;
  const status = await chains.reader(tx.chain).txStatus(tx.txHash, ours);
  return { status, next: followUp(status, required, policy) };
}

/** One step of following `tx` (see the module comment). */
export async function followSentTx(deps: FollowDeps, tx: SentTx, opts: FollowOptions): Promise<Followed> {
  const { status, next } = await lookAtSentTx(deps.chains, tx, opts.required, opts.policy);
  switch (next.kind) {
    case "final": {
      const txHash = next.minedHash ?? tx.txHash;
      const effects = finalEffects(tx, txHash, next.blockNumber, opts.own ?? changeOutputsOf(tx));
      return { kind: "final", txHash, blockNumber: next.blockNumber, effects };
    }
    case "failed":
      return { kind: "failed", proof: next.proof, detail: next.detail, effects: failedEffects(tx) };
    case "dead":
      await alertOnNonceConflict(deps, tx, next.proof, next.detail, opts);
      deps.log?.(`${opts.label}: transaction ${tx.txHash} is dead (${next.proof.kind}): ${next.detail}`);
      return { kind: "dead", proof: next.proof, detail: next.detail, effects: deadEffects(tx, next.proof) };
    case "wait":
      return { kind: "waiting", blocks: next.blocks, status: live(status), sent: null };
    case "resend":
    case "nudge":
      return await send(deps, tx, next, live(status), opts);
  }
}

/** The rule answers `dead` or `failed` for every dead status: a step that waits or sends never holds one. */
function live(status: TxStatus): LiveStatus {
  if (status.state === "dead") throw new Error(`a dead transaction cannot wait: ${status.detail}`);
  return status;
}

async function send(
  deps: FollowDeps,
  tx: SentTx,
  next: Extract<FollowUp, { kind: "resend" | "nudge" }>,
  status: LiveStatus,
  opts: FollowOptions,
): Promise<Followed> {
  const waiting = { kind: "waiting", blocks: 1, status } as const;
  if (tx.raw === "") return { ...waiting, sent: null }; // an adopted on-chain mint: nothing of ours to send
  const sender = opts.sender;
  if (!sender) return { ...waiting, sent: null, blocked: true };
  const prepared = { txHash: tx.txHash, raw: tx.raw };
  if (next.kind === "nudge" && sender.nudge) {
    // Pending, or unknown to the node: never sent (a crash after recording), or dropped, e.g. because the network's
    // fee rose above it. The sender re-sends its latest version, or a re-priced one where the fee rules allow.
    try {
      await sender.nudge(prepared, deps.now.getTime() - Date.parse(tx.preparedAt));
    } catch (err) {
      // A replacement that would do something else than re-price ours was refused before it was recorded or sent
      // (chains/effects.ts): the recorded versions stay what they were, and an operator is told at once.
      if (err instanceof ReplacementMismatchError) await alertOnReplacement(deps, err);
      throw err;
    }
    return { ...waiting, sent: "nudged" };
  }
  if (next.kind === "resend" || next.otherwise === "resend") {
    await sender.broadcast(prepared); // the very same transaction again
    return { ...waiting, sent: "resent" };
  }
  return { ...waiting, sent: null };
}

async function alertOnReplacement(deps: FollowDeps, err: ReplacementMismatchError): Promise<void> {
  await raiseAlert(deps.kv, {
    kind: "transaction_mismatch",
    subject: `${err.chain}:${err.originalHash}`,
    chain: err.chain ?? null,
    message: err.message,
    now: deps.now,
  });
}

/**
 * Someone else used our nonce or XRPL Sequence: an operator's concern (a leaked or shared key), whatever the purpose.
 * An expiry is the network's weather and a spent coin a race among our own transactions: only logged.
 */
async function alertOnNonceConflict(
  deps: FollowDeps,
  tx: SentTx,
  proof: DeathProof,
  detail: string,
  opts: FollowOptions,
): Promise<void> {
  if (proof.kind !== "conflict" || proof.consumed.kind !== "nonce") return;
  await raiseAlert(deps.kv, {
    kind: "nonce_used_elsewhere",
    subject: tx.txHash,
    chain: tx.chain,
    message: `${opts.label}: ${detail}; ${opts.afterDeath}`,
    now: deps.now,
  });
}
