/**
 * The pure order state machine (spec section 3 plus the moves actors/transition.ts documents): every allowed move
 * with its effects, and the refused ones. Expected messages are the spec's literal strings, not the module's table.
 */
import assert from "node:assert/strict";
import { type Intent, type OrderEvent, transition } from "../actors/transition.ts";
import type { DeathProof } from "../chains/adapter.ts";
import {
  type DetailsPatch,
  newOrderId,
  type Order,
  ORDER_STATUSES,
  type OrderFieldsPatch,
  OrderSchema,
  type OrderStatus,
} from "../model/order.ts";
import { inStatus } from "./support/orders.ts";

const X_PROOF: DeathProof = { kind: "failed", blockNumber: 1, reason: "x" };

const OWNER = "0x" + "ab".repeat(20);
const T0 = "2030-01-01T00:00:00.000Z";
const NOW = new Date("2030-01-01T00:05:00.000Z");

type Patch = OrderFieldsPatch & { details?: DetailsPatch };

/**
 * An order in `status` with what that step has when the pipeline puts it there (tests/support/orders.ts inStatus),
 * and `patch` on top. A status its type never has (a mint "burning") is set as is: refusal tests use those too.
 */
function order(type: "mint" | "burn", status: OrderStatus, patch: Patch = {}): Order {
  const id = newOrderId();
  const common = {
    id,
    status: "pending" as const,
    transactionHash: null,
    errorMessage: null,
    workflowId: `order-actor-${id}`,
    createdAt: T0,
    updatedAt: null,
    owner: OWNER,
  };
  const details = { depositId: "0x" + "11".repeat(32), confirmBy: T0 };
  const pending: Order = type === "mint"
    ? {
      ...common,
      type,
      sourceChain: "sol",
      destinationChain: "base",
      token: "SOL",
      amount: "50000000",
      sourceWallet: "SimSender1111111111111111111111111111111111",
      destinationWallet: OWNER,
      details: { ...details, source: { chain: "sol", txHash: "SimTx1", index: 0, blockNumber: 7 } },
    }
    : {
      ...common,
      type,
      sourceChain: "arbitrum",
      destinationChain: "xrp",
      token: "uXRP",
      amount: "50000000000000000007",
      sourceWallet: OWNER,
      destinationWallet: "rDestination111111111111111111111",
      details: {
        ...details,
        source: { chain: "arbitrum", txHash: "0x" + "22".repeat(32), index: 3, blockNumber: 70 },
        memo: "42",
      },
    };
  const own = status !== (type === "mint" ? "burning" : "minting");
  const o = inStatus(pending, own ? status : "pending");
  const { details: more = {}, ...fields } = patch;
  return o.type === "mint"
    ? { ...o, status, ...fields, details: { ...o.details, ...more } }
    : { ...o, status, ...fields, details: { ...o.details, ...more } };
}

/** A sending order that lost its intent: never stored (the schema refuses it), refused by transition too. */
const NO_INTENT: Patch = { details: { intent: undefined } };

const intent = (chain: Intent["chain"], n = 1): Intent => ({
  chain,
  txHash: "0x" + n.toString(16).padStart(64, "0"),
  raw: `{"n":${n}}`,
  preparedAt: T0,
});

function withIntent(o: Order, i: Intent): Order {
  return o.type === "mint"
    ? { ...o, details: { ...o.details, intent: i } }
    : { ...o, details: { ...o.details, intent: i } };
}

function moved(o: Order, e: OrderEvent): Order {
  OrderSchema.parse(o); // every allowed move starts from an order as the store holds it
  const before = structuredClone(o);
  const res = transition(o, e, NOW);
  assert.ok(res.ok, `${e.type} from ${o.status} should be allowed: ${!res.ok && res.error}`);
  assert.deepEqual(o, before, "transition never mutates its input");
  assert.equal(res.order.updatedAt, NOW.toISOString());
  OrderSchema.parse(res.order); // every result can be stored
  return res.order;
}

function refused(o: Order, e: OrderEvent) {
  const res = transition(o, e, NOW);
  assert.equal(res.ok, false, `${e.type} from ${o.status} must be refused`);
  if (!res.ok) assert.match(res.error, new RegExp(`${e.type}.*${o.status}`));
}

/** The spec's failure messages (spec section 3), retryable or not. */
const ERROR_CAUSES = [
  "Blockchain confirmation timeout",
  "Wallet address inactive",
  "Minting contract error",
  "Transaction failed on destination chain",
  "Insufficient deposit amount",
];

const STATUSES_BUT = (...allowed: OrderStatus[]) => ORDER_STATUSES.filter((s) => !allowed.includes(s));

Deno.test("transition: allowed moves", async (t) => {
  await t.step("pending -> processing on confirmed, for mint and burn", () => {
    for (const type of ["mint", "burn"] as const) {
      const next = moved(order(type, "pending"), { type: "confirmed" });
      assert.equal(next.status, "processing");
      assert.equal(next.details.confirmedAt, NOW.toISOString());
      assert.equal(next.errorMessage, null);
    }
  });

  await t.step("pending -> failed on confirmationTimeout with the spec's message", () => {
    const next = moved(order("mint", "pending"), { type: "confirmationTimeout" });
    assert.equal(next.status, "failed");
    assert.equal(next.errorMessage, "Blockchain confirmation timeout");
    assert.equal(next.errorKind, "confirmation_timeout");
  });

  await t.step("processing -> failed on rejected, with the message of the kind given", () => {
    for (
      const [type, kind, message] of [
        ["mint", "insufficient_deposit", "Insufficient deposit amount"],
        ["mint", "wallet_inactive", "Wallet address inactive"],
        ["burn", "below_minimum_burn", "Amount below minimum burn"],
        ["burn", "invalid_destination", "Invalid destination address"],
        ["burn", "source_changed", "Source transfer changed by a chain reorganization"],
      ] as const
    ) {
      const next = moved(order(type, "processing"), { type: "rejected", kind });
      assert.equal(next.status, "failed");
      assert.equal(next.errorMessage, message);
      assert.equal(next.errorKind, kind);
      assert.equal(next.transactionHash, null);
    }
  });

  await t.step("processing -> minting (mint) / burning (burn) on intentRecorded, intent and extra stored", () => {
    const m = moved(order("mint", "processing"), { type: "intentRecorded", intent: intent("base") });
    assert.equal(m.status, "minting");
    assert.deepEqual(m.details.intent, intent("base"));
    assert.equal(m.transactionHash, null, "no hash shown before the mint finished");
    const b = moved(order("burn", "processing"), {
      type: "intentRecorded",
      intent: intent("xrp"),
      extra: { nativeAmount: "50000000", remainderWei: "7" },
    });
    assert.equal(b.status, "burning");
    assert.deepEqual(b.details.intent, intent("xrp"));
    assert.ok(b.type === "burn");
    assert.equal(b.details.nativeAmount, "50000000");
    assert.equal(b.details.remainderWei, "7");
    assert.equal(b.details.memo, "42", "earlier details kept");
  });

  await t.step("minting|burning -> completed on txConfirmed, transactionHash set", () => {
    for (const [type, status, chain] of [["mint", "minting", "base"], ["burn", "burning", "xrp"]] as const) {
      const i = intent(chain, 9);
      const next = moved(withIntent(order(type, status), i), { type: "txConfirmed", txHash: i.txHash });
      assert.equal(next.status, "completed");
      assert.equal(next.transactionHash, "0x" + "9".padStart(64, "0"));
      assert.equal(next.errorMessage, null);
    }
  });

  await t.step("minting|burning -> failed on txFailed: hash kept, intent moved to failedIntents", () => {
    const earlier = intent("base", 1);
    const i = intent("base", 2);
    const o = withIntent(order("mint", "minting", { details: { failedIntents: [earlier] } }), i);
    const next = moved(o, { type: "txFailed", kind: "minting_error" });
    assert.equal(next.status, "failed");
    assert.equal(next.errorMessage, "Minting contract error");
    assert.equal(next.errorKind, "minting_error");
    assert.equal(next.transactionHash, i.txHash);
    assert.equal("intent" in next.details, false);
    assert.deepEqual(next.details.failedIntents, [earlier, i]);

    const b = moved(withIntent(order("burn", "burning"), intent("xrp", 3)), {
      type: "txFailed",
      kind: "payout_failed",
    });
    assert.equal(b.status, "failed");
    assert.equal(b.errorMessage, "Transaction failed on destination chain");
    assert.equal(b.errorKind, "payout_failed");
    assert.deepEqual(b.details.failedIntents, [intent("xrp", 3)]);
  });

  await t.step("minting|burning -> processing on txDead: intent moved to deadIntents with its proof", () => {
    const proof: DeathProof = {
      kind: "conflict",
      consumed: { kind: "nonce", account: "0xabc", nonce: 7 },
      spentBy: null,
    };
    const detail = "base: nonce 7 of 0xabc is used at the safe block and none of our 1 version(s) has a receipt";
    const earlier = {
      ...intent("base", 1),
      proof: { kind: "expired", expiry: { kind: "height", value: 9 }, reached: 10 } satisfies DeathProof,
      detail: "earlier",
      deadAt: T0,
    };
    const i = intent("base", 2);
    const o = withIntent(
      order("mint", "minting", { details: { ...order("mint", "minting").details, deadIntents: [earlier] } }),
      i,
    );
    const next = moved(o, { type: "txDead", proof, detail });
    assert.equal(next.status, "processing");
    assert.equal("intent" in next.details, false, "the next step signs a new transaction");
    assert.deepEqual(next.details.deadIntents, [earlier, { ...i, proof, detail, deadAt: NOW.toISOString() }]);
    assert.equal(next.transactionHash, null);
    assert.equal(next.errorMessage, null);
    assert.equal(next.details.depositId, o.details.depositId, "the deposit id (the contract's guard) is kept");
    // The next attempt records its own intent, and a proven-dead one does not stop an operator's cancel.
    assert.equal(moved(next, { type: "intentRecorded", intent: intent("base", 3) }).status, "minting");
    assert.equal(moved(next, { type: "cancel", reason: "operator" }).status, "cancelled");

    const b = moved(withIntent(order("burn", "burning"), intent("xrp", 4)), { type: "txDead", proof, detail });
    assert.equal(b.status, "processing");
    assert.deepEqual(b.details.deadIntents, [{ ...intent("xrp", 4), proof, detail, deadAt: NOW.toISOString() }]);
  });

  await t.step("pending|processing -> cancelled while no intent is recorded", () => {
    for (const status of ["pending", "processing"] as const) {
      const next = moved(order("mint", status), { type: "cancel", reason: "operator" });
      assert.equal(next.status, "cancelled");
      assert.equal(next.details.cancelReason, "operator");
    }
    // A proven-dead attempt (failed, then retried) does not block a cancel.
    const retried = order("mint", "processing", { details: { failedIntents: [intent("base")] } });
    assert.equal(moved(retried, { type: "cancel", reason: "x" }).status, "cancelled");
  });

  await t.step("failed (stored before kinds: message only) -> pending|processing on retry for retryable causes", () => {
    const cases = [
      ["mint", "Blockchain confirmation timeout", "pending"],
      ["mint", "Wallet address inactive", "processing"],
      ["mint", "Minting contract error", "processing"],
      ["burn", "Transaction failed on destination chain", "processing"],
      ["burn", "Wallet address inactive", "processing"],
    ] as const;
    const confirmBy = "2030-01-01T01:00:00.000Z";
    for (const [type, message, back] of cases) {
      const o = order(type, "failed", {
        errorMessage: message,
        transactionHash: "0x" + "ee".repeat(32),
        details: { ...order(type, "failed").details, retries: 2 },
      });
      const next = moved(o, { type: "retry", confirmBy });
      assert.equal(next.status, back, message);
      assert.equal(next.errorMessage, null);
      assert.equal(next.transactionHash, null);
      assert.equal(next.details.retries, 3);
      assert.equal(next.details.confirmBy, back === "pending" ? confirmBy : T0, "only a re-wait gets a new deadline");
    }
  });
});

Deno.test("transition: an operator's retry follows the failure's kind, never its text", async (t) => {
  const failedBy = (type: "mint" | "burn", event: OrderEvent) => {
    const from = event.type === "confirmationTimeout"
      ? order(type, "pending")
      : event.type === "rejected"
      ? order(type, "processing")
      : withIntent(order(type, type === "mint" ? "minting" : "burning"), intent(type === "mint" ? "base" : "xrp"));
    return moved(from, event);
  };
  const retryable = [
    ["mint", { type: "confirmationTimeout" }, "pending"],
    ["mint", { type: "rejected", kind: "wallet_inactive" }, "processing"],
    ["mint", { type: "txFailed", kind: "minting_error" }, "processing"],
    ["burn", { type: "txFailed", kind: "payout_failed" }, "processing"],
  ] as const;
  const final = [
    ["mint", { type: "rejected", kind: "insufficient_deposit" }],
    ["burn", { type: "rejected", kind: "below_minimum_burn" }],
    ["burn", { type: "rejected", kind: "invalid_destination" }],
    ["burn", { type: "rejected", kind: "source_changed" }],
  ] as const;

  await t.step("a retryable kind retries even when its stored text was reworded, and the retry clears the kind", () => {
    for (const [type, event, back] of retryable) {
      const failed = failedBy(type, event);
      const reworded = { ...failed, errorMessage: `reworded: ${failed.errorMessage}` };
      const next = moved(reworded, { type: "retry", confirmBy: T0 });
      assert.equal(next.status, back, `${event.type} ${failed.errorKind}`);
      assert.equal(next.errorMessage, null);
      assert.equal(next.errorKind, null);
    }
  });

  await t.step("a final kind is refused even when its text reads like a retryable one", () => {
    for (const [type, event] of final) {
      const failed = failedBy(type, event);
      refused({ ...failed, errorMessage: "Minting contract error" }, { type: "retry", confirmBy: T0 });
    }
  });
});

Deno.test("transition: refused moves", async (t) => {
  await t.step("confirmed and confirmationTimeout only from pending", () => {
    for (const s of STATUSES_BUT("pending")) {
      refused(order("mint", s), { type: "confirmed" });
      refused(order("burn", s), { type: "confirmationTimeout" });
    }
  });

  await t.step("rejected only from processing", () => {
    for (const s of STATUSES_BUT("processing")) {
      refused(order("mint", s), { type: "rejected", kind: "insufficient_deposit" });
    }
  });

  await t.step("intentRecorded only from processing and only once", () => {
    for (const s of STATUSES_BUT("processing")) {
      refused(order("burn", s), { type: "intentRecorded", intent: intent("xrp") });
    }
    refused(withIntent(order("mint", "processing"), intent("base", 1)), {
      type: "intentRecorded",
      intent: intent("base", 2),
    });
  });

  await t.step("txConfirmed and txFailed only from minting|burning with an intent", () => {
    for (const s of STATUSES_BUT("minting", "burning")) {
      refused(withIntent(order("mint", s), intent("base")), { type: "txConfirmed", txHash: intent("base").txHash });
      refused(withIntent(order("mint", s), intent("base")), { type: "txFailed", kind: "minting_error" });
    }
    refused(order("mint", "minting", NO_INTENT), { type: "txConfirmed", txHash: intent("base").txHash });
    refused(order("burn", "burning", NO_INTENT), { type: "txFailed", kind: "payout_failed" });
  });

  await t.step("txDead only from minting|burning with an intent", () => {
    for (const s of STATUSES_BUT("minting", "burning")) {
      refused(withIntent(order("mint", s), intent("base")), { type: "txDead", proof: X_PROOF, detail: "x" });
    }
    refused(order("mint", "minting", NO_INTENT), { type: "txDead", proof: X_PROOF, detail: "x" });
  });

  await t.step("a minting order with a live intent cannot be cancelled, and the refusal says until when", () => {
    const i = intent("base");
    refused(withIntent(order("mint", "minting"), i), { type: "cancel", reason: "x" });
    const res = transition(withIntent(order("mint", "minting"), i), { type: "cancel", reason: "x" }, NOW);
    assert.ok(!res.ok && res.error.includes(i.txHash) && /proven dead/.test(res.error));
  });

  await t.step("cancel refused once a transaction is recorded, and from terminal states", () => {
    refused(withIntent(order("mint", "processing"), intent("base")), { type: "cancel", reason: "x" });
    for (const s of STATUSES_BUT("pending", "processing")) {
      refused(order("mint", s), { type: "cancel", reason: "x" });
    }
  });

  await t.step("retry refused for causes that cannot pass, and from any status but failed", () => {
    for (const message of ["Insufficient deposit amount", "Amount below minimum burn", "something else"]) {
      refused(order("mint", "failed", { errorMessage: message }), { type: "retry", confirmBy: T0 });
    }
    refused(order("mint", "failed", { errorMessage: null }), { type: "retry", confirmBy: T0 });
    for (const s of STATUSES_BUT("failed")) {
      refused(order("mint", s, { errorMessage: "Minting contract error" }), { type: "retry", confirmBy: T0 });
    }
  });

  await t.step("a completed or cancelled order accepts no event at all", () => {
    const i = intent("base");
    const events: OrderEvent[] = [
      { type: "confirmed" },
      { type: "confirmationTimeout" },
      { type: "rejected", kind: "insufficient_deposit" },
      { type: "intentRecorded", intent: i },
      { type: "txConfirmed", txHash: i.txHash },
      { type: "txFailed", kind: "payout_failed" },
      { type: "txDead", proof: X_PROOF, detail: "x" },
      { type: "cancel", reason: "x" },
      { type: "retry", confirmBy: T0 },
    ];
    for (const s of ["completed", "cancelled"] as const) {
      for (const e of events) refused(withIntent(order("mint", s), i), e);
    }
  });
});

Deno.test("transition: every result from every valid order, in every status, under every event passes the schema", () => {
  const proof: DeathProof = {
    kind: "conflict",
    consumed: { kind: "nonce", account: "0x" + "11".repeat(20), nonce: 5 },
    spentBy: null,
  };
  const detail = "nonce used at the safe block";
  const dead = { ...intent("base", 5), proof, detail, deadAt: T0 };
  /** What orders accumulate on the way: earlier attempts, retries, error bookkeeping, a held reason, a reorg. */
  const histories: Patch[] = [
    {},
    { details: { failedIntents: [intent("base", 4)], retries: 1 } },
    { details: { deadIntents: [dead], confirmedAt: T0 } },
    { details: { transientErrors: 3, lastTransientError: "rpc down", heldReason: "chain base is disabled" } },
  ];
  const sourceChange = {
    old: { from: OWNER, to: "0x" + "cc".repeat(20), amount: "5", asset: "uXRP" },
    new: null,
    newRecord: null,
  };
  const eventsFor = (o: Order): OrderEvent[] => [
    { type: "confirmed" },
    { type: "confirmationTimeout" },
    { type: "rejected", kind: "insufficient_deposit" },
    ...(o.type === "burn"
      ? [{ type: "rejected", kind: "source_changed", details: { sourceChange } }]
      : []) satisfies OrderEvent[],
    o.type === "mint"
      ? { type: "intentRecorded", intent: intent("base", 6) }
      : { type: "intentRecorded", intent: intent("xrp", 6), extra: { nativeAmount: "50000000", remainderWei: "7" } },
    { type: "txConfirmed", txHash: intent(o.destinationChain === "base" ? "base" : "xrp", 7).txHash },
    { type: "txFailed", kind: "minting_error" },
    { type: "txDead", proof, detail },
    { type: "cancel", reason: "operator" },
    { type: "retry", confirmBy: T0 },
  ];
  let moves = 0;
  for (const type of ["mint", "burn"] as const) {
    const own = ORDER_STATUSES.filter((s) => s !== (type === "mint" ? "burning" : "minting"));
    for (const status of own) {
      for (const errorMessage of status === "failed" ? ERROR_CAUSES : [undefined]) {
        for (const history of histories) {
          const start = order(type, status, { ...history, ...(errorMessage ? { errorMessage } : {}) });
          const stored = OrderSchema.safeParse(start);
          assert.ok(stored.success, `the table's ${type} ${status} order is valid: ${stored.error?.message}`);
          // Chains of moves too: what a result allows next must also stay valid.
          const queue: [Order, number][] = [[start, 0]];
          while (queue.length > 0) {
            const [o, depth] = queue.shift()!;
            for (const e of eventsFor(o)) {
              const res = transition(o, e, NOW);
              if (!res.ok) {
                assert.doesNotMatch(res.error, /is invalid/, `${type} ${o.status} ${e.type}: refused by the schema`);
                continue;
              }
              moves++;
              const parsed = OrderSchema.safeParse(res.order);
              assert.ok(parsed.success, `${type} ${o.status} --${e.type}--> ${res.order.status}: ${parsed.error}`);
              if (depth < 3) queue.push([res.order, depth + 1]);
            }
          }
        }
      }
    }
  }
  assert.ok(moves > 500, `${moves} moves checked`);
});
