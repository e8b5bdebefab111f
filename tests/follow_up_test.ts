/**
 * The follow-up rule (actors/follow_up.ts), table-driven: every answer a chain can give about a recorded transaction
 * (included success or failure, `final` true, false or absent, below, at and above the required confirmations;
 * pending; unknown; dead with each proof kind) against every purpose's policy. The answers are enumerated, and each
 * must have a row with an outcome for every policy: a missing answer fails at run time, a missing policy at type check.
 */
import assert from "node:assert/strict";
import type { DeathProof, TxStatus } from "../chains/adapter.ts";
import {
  BURN_POLICY,
  CONSOLIDATION_POLICY,
  type FollowUp,
  followUp,
  type FollowUpPolicy,
  ORDER_POLICY,
  REFUND_POLICY,
  SWEEP_POLICY,
} from "../actors/follow_up.ts";

const REQUIRED = 3;

const POLICIES = {
  order: ORDER_POLICY,
  refund: REFUND_POLICY,
  burn: BURN_POLICY,
  sweep: SWEEP_POLICY,
  consolidation: CONSOLIDATION_POLICY,
} satisfies Record<string, FollowUpPolicy>;
type Purpose = keyof typeof POLICIES;

const PROOFS: Record<DeathProof["kind"], DeathProof> = {
  expired: { kind: "expired", expiry: { kind: "height", value: 100 }, reached: 101 },
  conflict: { kind: "conflict", consumed: { kind: "nonce", account: "0xabc", nonce: 7 }, spentBy: "0xother" },
  failed: { kind: "failed", blockNumber: 42, reason: "out of gas" },
};

/** Every answer, by a name the table uses. */
function answers(): Map<string, TxStatus> {
  const all = new Map<string, TxStatus>();
  for (const success of [true, false]) {
    for (const final of [true, false, undefined]) {
      for (
        const [depth, confirmations] of [["below", REQUIRED - 1], ["at", REQUIRED], ["above", REQUIRED + 1]] as const
      ) {
        const status: TxStatus = { state: "included", blockNumber: 10, confirmations, success };
        if (!success) status.reason = "reverted";
        if (final !== undefined) status.final = final;
        all.set(`${success ? "ok" : "reverted"} final=${final} ${depth}`, status);
      }
    }
  }
  all.set("pending", { state: "pending" });
  all.set("unknown", { state: "unknown" });
  for (const proof of Object.values(PROOFS)) {
    all.set(`dead ${proof.kind}`, { state: "dead", proof, detail: `proven ${proof.kind}` });
  }
  return all;
}

/** An outcome in one word: `wait:N` (blocks), `nudge/resend` (otherwise), `dead:failed` (proof kind). */
function brief(outcome: FollowUp): string {
  switch (outcome.kind) {
    case "wait":
      return `wait:${outcome.blocks}`;
    case "nudge":
      return `nudge/${outcome.otherwise}`;
    case "dead":
      return `dead:${outcome.proof.kind}`;
    default:
      return outcome.kind;
  }
}

type Row = Record<Purpose, string>;
const same = (o: string): Row => ({ order: o, refund: o, burn: o, sweep: o, consolidation: o });
/** Orders and refunds (`flagFinal`, `fails`) against burns, sweeps and consolidations (`counted`, `kills`). */
const split = (payout: string, housekeeping: string): Row => ({
  order: payout,
  refund: payout,
  burn: housekeeping,
  sweep: housekeeping,
  consolidation: housekeeping,
});

const EXPECTED: Record<string, Row> = {
  // Success: final only when counted (deep enough and not unfinal); otherwise wait for the blocks left (at least 1).
  "ok final=true below": same("wait:1"),
  "ok final=true at": same("final"),
  "ok final=true above": same("final"),
  "ok final=false below": same("wait:1"),
  "ok final=false at": same("wait:1"),
  "ok final=false above": same("wait:1"),
  "ok final=undefined below": same("wait:1"),
  "ok final=undefined at": same("final"),
  "ok final=undefined above": same("final"),
  // A revert: orders and refunds take it once `final !== false` at any depth and fail; the others once counted, and
  // only the attempt dies.
  "reverted final=true below": split("failed", "wait:1"),
  "reverted final=true at": split("failed", "dead:failed"),
  "reverted final=true above": split("failed", "dead:failed"),
  "reverted final=false below": same("wait:1"),
  "reverted final=false at": same("wait:1"),
  "reverted final=false above": same("wait:1"),
  "reverted final=undefined below": split("failed", "wait:1"),
  "reverted final=undefined at": split("failed", "dead:failed"),
  "reverted final=undefined above": split("failed", "dead:failed"),
  // Pending: orders, refunds and burns nudge (a sender without nudge waits); sweeps and consolidations wait.
  "pending": {
    order: "nudge/wait",
    refund: "nudge/wait",
    burn: "nudge/wait",
    sweep: "wait:1",
    consolidation: "wait:1",
  },
  // Unknown: nudge or else the same bytes; sweeps and consolidations always the same bytes.
  "unknown": {
    order: "nudge/resend",
    refund: "nudge/resend",
    burn: "nudge/resend",
    sweep: "resend",
    consolidation: "resend",
  },
  // Dead: the proof as given; a `failed` proof fails an order or refund.
  "dead expired": same("dead:expired"),
  "dead conflict": same("dead:conflict"),
  "dead failed": split("failed", "dead:failed"),
};

Deno.test("follow-up: every answer x policy pair has its outcome", () => {
  const all = answers();
  assert.equal(all.size, 23);
  const failures: string[] = [];
  for (const [name, status] of all) {
    const row = EXPECTED[name];
    if (!row) {
      failures.push(`${name}: no expectation`);
      continue;
    }
    for (const [purpose, policy] of Object.entries(POLICIES) as [Purpose, FollowUpPolicy][]) {
      const got = brief(followUp(status, REQUIRED, policy));
      if (got !== row[purpose]) failures.push(`${name} x ${purpose}: expected ${row[purpose]}, got ${got}`);
    }
  }
  for (const name of Object.keys(EXPECTED)) if (!all.has(name)) failures.push(`${name}: expected, never asked`);
  assert.deepEqual(failures, []);
});

Deno.test("follow-up: a dead answer's proof and detail pass through untouched", () => {
  for (const [purpose, policy] of Object.entries(POLICIES)) {
    for (const proof of Object.values(PROOFS)) {
      const outcome = followUp({ state: "dead", proof, detail: "as the adapter said" }, REQUIRED, policy);
      assert.ok(outcome.kind === "dead" || outcome.kind === "failed", purpose);
      assert.equal(outcome.proof, proof, `${purpose} ${proof.kind}`);
      assert.equal(outcome.detail, "as the adapter said");
    }
  }
});

Deno.test("follow-up: a final revert carries a failed proof from its block; a missing reason reads `failed`", () => {
  const reverted: TxStatus = { state: "included", blockNumber: 77, confirmations: 5, success: false, final: true };
  assert.deepEqual(followUp(reverted, REQUIRED, SWEEP_POLICY), {
    kind: "dead",
    proof: { kind: "failed", blockNumber: 77, reason: "failed" },
    detail: "failed on chain: failed",
  });
  assert.deepEqual(followUp({ ...reverted, reason: "paused" }, REQUIRED, ORDER_POLICY), {
    kind: "failed",
    proof: { kind: "failed", blockNumber: 77, reason: "paused" },
    detail: "failed on chain: paused",
  });
});

Deno.test("follow-up: final success names the mined hash only when it differs; waits count the blocks left", () => {
  const ok: TxStatus = { state: "included", blockNumber: 9, confirmations: 0, success: true, final: true };
  assert.deepEqual(followUp({ ...ok, confirmations: 3 }, REQUIRED, ORDER_POLICY), { kind: "final", blockNumber: 9 });
  assert.deepEqual(followUp({ ...ok, confirmations: 3, txHash: "0xbump" }, REQUIRED, BURN_POLICY), {
    kind: "final",
    blockNumber: 9,
    minedHash: "0xbump",
  });
  assert.deepEqual(followUp(ok, REQUIRED, REFUND_POLICY), { kind: "wait", blocks: 3 });
  assert.deepEqual(followUp(ok, 0, CONSOLIDATION_POLICY), { kind: "final", blockNumber: 9 });
});
