/**
 * The pure order state machine (spec section 3 plus the moves actors/transition.ts documents): every allowed move
 * with its effects, and the refused ones. Expected messages are the spec's literal strings, not the module's table.
 */
import assert from "node:assert/strict";
import { type Intent, type OrderEvent, transition } from "../actors/transition.ts";
import type { DeathProof } from "../chains/adapter.ts";
import { newOrderId, type Order, ORDER_STATUSES, OrderSchema, type OrderStatus } from "../kv/orders.ts";

const X_PROOF: DeathProof = { kind: "failed", blockNumber: 1, reason: "x" };

const OWNER = "0x" + "ab".repeat(20);
const T0 = "2030-01-01T00:00:00.000Z";
const NOW = new Date("2030-01-01T00:05:00.000Z");

function order(type: "mint" | "burn", status: OrderStatus, patch: Partial<Order> = {}): Order {
  const id = newOrderId();
  const base: Order = type === "mint"
    ? {
      id,
      type,
      status,
      sourceChain: "sol",
      destinationChain: "base",
      token: "SOL",
      amount: "50000000",
      sourceWallet: "SimSender1111111111111111111111111111111111",
      destinationWallet: OWNER,
      workflowId: `order-actor-${id}`,
      transactionHash: null,
      errorMessage: null,
      createdAt: T0,
      updatedAt: null,
      owner: OWNER,
      details: { depositId: "0x" + "11".repeat(32), confirmBy: T0 },
    }
    : {
      id,
      type,
      status,
      sourceChain: "arbitrum",
      destinationChain: "xrp",
      token: "uXRP",
      amount: "50000000000000000000",
      sourceWallet: OWNER,
      destinationWallet: "rDestination111111111111111111111",
      workflowId: `order-actor-${id}`,
      transactionHash: null,
      errorMessage: null,
      createdAt: T0,
      updatedAt: null,
      owner: OWNER,
      details: { memo: "42", confirmBy: T0 },
    };
  return { ...base, ...patch };
}

const intent = (chain: Intent["chain"], n = 1): Intent => ({
  chain,
  txHash: "0x" + n.toString(16).padStart(64, "0"),
  raw: `{"n":${n}}`,
  preparedAt: T0,
});

function withIntent(o: Order, i: Intent): Order {
  return { ...o, details: { ...o.details, intent: i } };
}

function moved(o: Order, e: OrderEvent): Order {
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
  });

  await t.step("processing -> failed on rejected, carrying the message given", () => {
    for (
      const [type, message] of [
        ["mint", "Insufficient deposit amount"],
        ["mint", "Wallet address inactive"],
        ["burn", "Amount below minimum burn"],
      ] as const
    ) {
      const next = moved(order(type, "processing"), { type: "rejected", message });
      assert.equal(next.status, "failed");
      assert.equal(next.errorMessage, message);
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
      extra: { nativeAmount: "50", remainderWei: "7" },
    });
    assert.equal(b.status, "burning");
    assert.deepEqual(b.details.intent, intent("xrp"));
    assert.equal(b.details.nativeAmount, "50");
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
    const next = moved(o, { type: "txFailed", message: "Minting contract error" });
    assert.equal(next.status, "failed");
    assert.equal(next.errorMessage, "Minting contract error");
    assert.equal(next.transactionHash, i.txHash);
    assert.equal("intent" in next.details, false);
    assert.deepEqual(next.details.failedIntents, [earlier, i]);

    const b = moved(withIntent(order("burn", "burning"), intent("xrp", 3)), {
      type: "txFailed",
      message: "Transaction failed on destination chain",
    });
    assert.equal(b.status, "failed");
    assert.equal(b.errorMessage, "Transaction failed on destination chain");
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
      proof: { kind: "expired", expiry: { kind: "height", value: 9 }, reached: 10 },
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

  await t.step("failed -> pending|processing on retry for retryable causes; counters and fields reset", () => {
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

Deno.test("transition: refused moves", async (t) => {
  await t.step("confirmed and confirmationTimeout only from pending", () => {
    for (const s of STATUSES_BUT("pending")) {
      refused(order("mint", s), { type: "confirmed" });
      refused(order("burn", s), { type: "confirmationTimeout" });
    }
  });

  await t.step("rejected only from processing", () => {
    for (const s of STATUSES_BUT("processing")) {
      refused(order("mint", s), { type: "rejected", message: "Insufficient deposit amount" });
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
      refused(withIntent(order("mint", s), intent("base")), { type: "txFailed", message: "Minting contract error" });
    }
    refused(order("mint", "minting"), { type: "txConfirmed", txHash: intent("base").txHash });
    refused(order("burn", "burning"), { type: "txFailed", message: "x" });
  });

  await t.step("txDead only from minting|burning with an intent", () => {
    for (const s of STATUSES_BUT("minting", "burning")) {
      refused(withIntent(order("mint", s), intent("base")), { type: "txDead", proof: X_PROOF, detail: "x" });
    }
    refused(order("mint", "minting"), { type: "txDead", proof: X_PROOF, detail: "x" });
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
      { type: "rejected", message: "x" },
      { type: "intentRecorded", intent: i },
      { type: "txConfirmed", txHash: i.txHash },
      { type: "txFailed", message: "x" },
      { type: "txDead", proof: X_PROOF, detail: "x" },
      { type: "cancel", reason: "x" },
      { type: "retry", confirmBy: T0 },
    ];
    for (const s of ["completed", "cancelled"] as const) {
      for (const e of events) refused(withIntent(order("mint", s), i), e);
    }
  });
});
