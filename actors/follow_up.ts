/**
 * The one rule for following a transaction we signed and recorded before broadcast (docs: docs/architecture.md
 * invariant 2, "Write ahead of the chain", and the "proof of death" table): from the chain's answer about it, the
 * confirmations its chain requires and the purpose's policy, what happens next. Pure: no KV, no I/O, no clock. The
 * caller asks the chain (with the recorded bytes, so the reader can prove it dead), applies the outcome, and does its
 * purpose's own checks (a sweep's delivered amount, a reverted mint already minted by an earlier attempt, an alert on a
 * nonce used elsewhere).
 *
 * Where the five followers differed, and whether on purpose (the differences in the rule itself are the policy fields
 * below; the rest is the driver's, actors/sent_tx.ts, or the purpose's own check):
 *
 * | # | difference | order mint/payout | refund | on-chain burn | sweep | consolidation | on purpose? |
 * |---|---|---|---|---|---|---|---|
 * | 1 | a reverted inclusion is final when | `final !== false` (any depth) | same | `isCounted` | `isCounted` | `isCounted` | Not stated anywhere. They differ on a flag-finality chain only while a block flagged final has fewer than the required confirmations (EVM keeps a count besides its finality tag: chains/catalog.ts); on depth-finality chains (`final` undefined) orders and refunds take a revert at 0 confirmations as final, which only the simulated ledgers can produce (UTXO chains never include a failed transaction). Kept: `revertedCountsWhen` |
 * | 2 | a final failure (reverted inclusion, or `dead` with a `failed` proof) | the order fails (`txFailed`; operator may retry) | the refund fails (`refund_failed` alert) | the attempt is dead, a new one is signed | the sweep is dead, the next attempt signs a new one | the consolidation is dead, its coins released | Yes: an order or refund answers a user request and an operator decides; a burn, sweep or consolidation is the service's own housekeeping and simply tries again. `failure` |
 * | 3 | pending | nudge (when the sender can) | nudge | nudge | wait | wait | Partly: orders, refunds and burns pay or mint on a fee market (EVM) where a stuck transaction must be re-priced; sweeps and consolidations leave the hot wallet alone and are not urgent. `whilePending` |
 * | 4 | unknown to the node | nudge, else the same bytes | same | same | the same bytes, never a nudge | same bytes | Same reason as 3 (the sweep's account chains have no re-pricing nudge worth taking). `whenUnknown` |
 * | 5 | success, not yet counted | wait `max(1, required - confirmations)` blocks | same | wait (next tick) | wait (next tick) | wait (next tick) | Yes: only the scheduled followers (orders, refunds) choose when to look again; ticks look every tick. The rule returns the blocks left; tick-driven callers ignore it |
 * | 6 | a fee-bumped replacement mined (`included.txHash`) | final under the mined hash | same | same | the recorded hash is asked for its transfers | mined hash | Harmless: sweeps run on sol, xrp and sui, which never answer a replacement hash. The rule passes `minedHash` through |
 * | 7 | final success, then nothing on chain | - | - | - | `transfersOf` null: wait, asked again | - | Yes: the sweep records what was delivered (kv/treasury.ts `sweepDelivery`); the follower's own check |
 * | 8 | a recorded transaction with no bytes (`raw === ""`) | an adopted on-chain mint: never proven dead, only waited for | not asked dead | - | - | - | Yes: nothing of ours to send. The driver (actors/sent_tx.ts) passes no `OwnTx` and never acts on `resend`/`nudge` for it |
 * | 9 | a nonce used by someone else (`dead`, `conflict` on a nonce) | `nonce_used_elsewhere` alert | no alert | alert | no alert | no alert (coins, no nonce) | No: the refund's and the sweep's silence were oversights (an EVM uAsset refund can lose its nonce, an XRPL sweep its Sequence). The driver alerts for every purpose |
 * | 10 | a reverted mint on EVM | checks `mintedBy` and the token's admin refusal first, and takes an attempt signed by a rotated-out minter key as dead (re-signed with the current key) | - | - | - | - | Yes: the contract refuses a reused deposit id (docs/architecture.md invariant 2); the follower's own check |
 * | 11 | the operator's `settleStuckOrder` | acts only on `dead` with a non-`failed` proof, refuses every other answer | - | - | - | - | Yes: with the order policy that is exactly outcome `dead`; `failed` is left to the pipeline |
 * | 12 | no sender for the asset | - | waits with a reason (`noUAssetSenderReason`) | - | - | - | Yes: the follower's own precondition, before acting on `resend`/`nudge` |
 * | 13 | released on a final failure | coins (`addReleases`) | coins and the hot-wallet hold | - | - | coins | No difference in effect: the order's hold was released by a separate rule of its step. The driver's effects (model/sent_tx_effects.ts) release coins, Sequence lock and hold for every purpose |
 */
import type { DeathProof, TxStatus } from "../chains/adapter.ts";

/** How one purpose reads the chain's answers. Each field is a deliberate difference between purposes (table above). */
export interface FollowUpPolicy {
  /**
   * When a reverted (failed) inclusion is taken as final. `flagFinal`: as soon as the chain does not say its block is
   * not final (`final !== false`), at any depth: what orders and refunds do today. `counted`: only once it counts as a
   * success would (`isCounted`: deep enough and not unfinal), because a reorg could re-mine the same bytes with another
   * outcome: what burns, sweeps and consolidations do.
   */
  revertedCountsWhen: "flagFinal" | "counted";
  /**
   * What a final failure is. `fails`: the purpose itself fails (an order or refund answers a request; an operator
   * looks at it and may retry). `kills`: only this attempt is dead, with a `failed` proof; the service signs again or
   * releases what it held (its own housekeeping: burns, sweeps, consolidations).
   */
  failure: "fails" | "kills";
  /**
   * A transaction in the mempool. `nudge`: the sender may re-price it (EVM fee market: a payout or mint must not
   * stall behind a fee rise). `wait`: leave it; a sweep or consolidation is not urgent and moves no user's money.
   */
  whilePending: "nudge" | "wait";
  /**
   * A transaction the node does not know (never sent after a crash between record and broadcast, or dropped).
   * `nudge`: the sender's nudge, which re-sends its latest version (or a re-priced one where the fee rules allow), or
   * the same bytes when the sender has no nudge. `resend`: always the very same bytes.
   */
  whenUnknown: "nudge" | "resend";
}

/** Mints and payouts of orders (actors/order_actor.ts `decideSent`). */
export const ORDER_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "flagFinal",
  failure: "fails",
  whilePending: "nudge",
  whenUnknown: "nudge",
});

/** Refunds of bounced deposits (actors/refunds.ts `decideSent`): followed as a payout is. */
export const REFUND_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "flagFinal",
  failure: "fails",
  whilePending: "nudge",
  whenUnknown: "nudge",
});

/** Batches of on-chain uAsset burns (actors/onchain_burn.ts `driveBatch`): a dead attempt is signed again. */
export const BURN_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "counted",
  failure: "kills",
  whilePending: "nudge",
  whenUnknown: "nudge",
});

/** Sweeps of account-chain deposit addresses (actors/sweeper.ts `driveSweep`). */
export const SWEEP_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "counted",
  failure: "kills",
  whilePending: "wait",
  whenUnknown: "resend",
});

/** Consolidations of UTXO treasury coins (actors/sweeper.ts `driveConsolidation`). */
export const CONSOLIDATION_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "counted",
  failure: "kills",
  whilePending: "wait",
  whenUnknown: "resend",
});

/**
 * Cold sweeps of the hot surplus to the cold address (actors/cold_sweep.ts `driveColdSweep`): followed as a sweep or a
 * consolidation is, for the same reasons (rows 2-4): the service's own housekeeping, moving no user's money, not
 * urgent; a dead one is replaced by a new cold sweep decided afresh from the funds and the cold address then.
 */
export const COLD_SWEEP_POLICY: FollowUpPolicy = Object.freeze({
  revertedCountsWhen: "counted",
  failure: "kills",
  whilePending: "wait",
  whenUnknown: "resend",
});

/** The proof a failed inclusion carries, as the adapters' `dead` answers carry it. */
export type FailedProof = Extract<DeathProof, { kind: "failed" }>;

/** What to do next with a recorded transaction. */
export type FollowUp =
  /** Succeeded at the required depth. `minedHash`: the hash that was mined when it differs (a fee-bumped replacement). */
  | { kind: "final"; blockNumber: number; minedHash?: string }
  /** Failed on chain, finally, and the policy says the purpose fails with it. */
  | { kind: "failed"; proof: FailedProof; detail: string }
  /** Can never be mined: the proof as the adapter gave it (or a `failed` proof where the policy `kills`). */
  | { kind: "dead"; proof: DeathProof; detail: string }
  /** Nothing to do; look again in about `blocks` blocks. */
  | { kind: "wait"; blocks: number }
  /** Send the very same recorded bytes again. */
  | { kind: "resend" }
  /** The sender's nudge; a sender without one does `otherwise` instead. */
  | { kind: "nudge"; otherwise: "resend" | "wait" };

/** The one follow-up rule (see the module comment). */
export function followUp(status: TxStatus, required: number, policy: FollowUpPolicy): FollowUp {
  switch (status.state) {
    case "dead":
      if (status.proof.kind === "failed") return failure(status.proof, status.detail, policy);
      return { kind: "dead", proof: status.proof, detail: status.detail };
    case "included": {
      const counted = status.confirmations >= required && status.final !== false; // adapter.ts `isCounted`
      if (status.success) {
        if (!counted) return { kind: "wait", blocks: Math.max(1, required - status.confirmations) };
        return status.txHash === undefined
          ? { kind: "final", blockNumber: status.blockNumber }
          : { kind: "final", blockNumber: status.blockNumber, minedHash: status.txHash };
      }
      const isFinal = policy.revertedCountsWhen === "counted" ? counted : status.final !== false;
      if (!isFinal) return { kind: "wait", blocks: 1 };
      const proof: FailedProof = { kind: "failed", blockNumber: status.blockNumber, reason: status.reason ?? "failed" };
      return failure(proof, `failed on chain: ${proof.reason}`, policy);
    }
    case "pending":
      return policy.whilePending === "nudge" ? { kind: "nudge", otherwise: "wait" } : { kind: "wait", blocks: 1 };
    case "unknown":
      return policy.whenUnknown === "nudge" ? { kind: "nudge", otherwise: "resend" } : { kind: "resend" };
  }
}

function failure(proof: FailedProof, detail: string, policy: FollowUpPolicy): FollowUp {
  return policy.failure === "fails" ? { kind: "failed", proof, detail } : { kind: "dead", proof, detail };
}
