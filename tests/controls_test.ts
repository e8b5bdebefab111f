/** The controls' pure decision (actors/controls.ts) and the held record ids (actors/ops/held.ts). */
import assert from "node:assert/strict";
import { controlDecision, nativeAmountOf, uAssetOf, usageNeeded } from "../actors/controls.ts";
import { parseHeldId } from "../actors/ops/held.ts";
import { type Controls, NO_CONTROLS } from "../kv/controls.ts";
import { type Order, withDetails } from "../model/order.ts";
import { inStatus, makeOrder } from "./support/orders.ts";

const OWNER = "0x" + "ab".repeat(20);
const pause = { by: "alice", at: "2026-11-25T00:00:00.000Z", reason: "rpc incident" };

/** A sol -> base mint of `amount` lamports, processing, nothing recorded. */
function mint(amount = 5_000_000_000n): Order {
  return { ...makeOrder(OWNER, "mint", "processing", 0), amount: amount.toString() };
}

/** A base -> sol burn of `lamports` (in wei on the order), processing. */
function burn(lamports = 5_000_000_000n): Order {
  return { ...makeOrder(OWNER, "burn", "processing", 0), amount: (lamports * 10n ** 9n + 7n).toString() };
}

function controls(patch: Partial<Controls>): Controls {
  return { ...structuredClone(NO_CONTROLS), ...patch };
}

Deno.test("controlDecision: only a processing order with nothing recorded is controlled", () => {
  const all = controls({
    pausedChains: { sol: pause },
    pausedAssets: { uSOL: pause },
    caps: { uSOL: { perOrder: "0" } },
  });
  for (const status of ["pending", "minting", "completed", "failed"] as const) {
    const o = inStatus(mint(), status);
    assert.deepEqual(controlDecision(o, all, null), { kind: "free" }, status);
    assert.equal(usageNeeded(o, all), null);
  }
  assert.deepEqual(controlDecision(mint(), NO_CONTROLS, null), { kind: "go", count: null });
});

Deno.test("controlDecision: a paused source chain, destination chain or uAsset makes it wait, with every reason", () => {
  assert.deepEqual(controlDecision(mint(), controls({ pausedChains: { sol: pause } }), null), {
    kind: "paused",
    reason: "paused by operator: chain sol (rpc incident)",
  });
  assert.deepEqual(
    controlDecision(mint(), controls({ pausedChains: { base: { ...pause, reason: "" } } }), null),
    { kind: "paused", reason: "paused by operator: chain base" },
  );
  assert.deepEqual(controlDecision(burn(), controls({ pausedAssets: { uSOL: pause } }), null), {
    kind: "paused",
    reason: "paused by operator: asset uSOL (rpc incident)",
  });
  const both = controlDecision(burn(), controls({ pausedChains: { sol: pause }, pausedAssets: { uSOL: pause } }), null);
  assert.equal(
    both.kind === "paused" && both.reason,
    "paused by operator: chain sol (rpc incident); asset uSOL (rpc incident)",
  );
  // Other chains and uAssets do not touch it; a pause wins over caps (nothing is counted while paused).
  assert.deepEqual(
    controlDecision(mint(), controls({ pausedChains: { xrp: pause }, pausedAssets: { uXRP: pause } }), null),
    { kind: "go", count: null },
  );
  assert.equal(
    controlDecision(mint(), controls({ pausedChains: { sol: pause }, caps: { uSOL: { perDay: "1" } } }), 0n).kind,
    "paused",
  );
});

Deno.test("controlDecision: per-order cap in native units, burns converted from wei (remainder ignored)", () => {
  assert.equal(uAssetOf(burn()), "uSOL");
  assert.equal(nativeAmountOf(burn(10n)), 10n);
  const capped = controls({ caps: { uSOL: { perOrder: "5000000000" } } });
  assert.deepEqual(controlDecision(mint(5_000_000_000n), capped, null), { kind: "go", count: null }, "at the cap");
  assert.deepEqual(controlDecision(burn(5_000_000_000n), capped, null), { kind: "go", count: null });
  const over = controlDecision(mint(5_000_000_001n), capped, null);
  assert.equal(over.kind, "cap");
  assert.deepEqual(over.kind === "cap" && over.caps, ["perOrder"]);
  assert.match(
    over.kind === "cap" ? over.reason : "",
    /uSOL order of 5000000001 .*above the per-order cap of 5000000000/,
  );
  assert.equal(controlDecision(burn(5_000_000_001n), capped, null).kind, "cap");
  // Another uAsset's cap does not apply.
  assert.equal(controlDecision(mint(10n ** 15n), controls({ caps: { uXRP: { perOrder: "1" } } }), null).kind, "go");
});

Deno.test("controlDecision: per-day cap counts today's usage and asks for it; the order is counted when it goes", () => {
  const capped = controls({ caps: { uSOL: { perDay: "10" } } });
  const o = mint(4n);
  assert.equal(usageNeeded(o, capped), "uSOL");
  assert.equal(usageNeeded(o, controls({ caps: { uSOL: { perOrder: "10" } } })), null, "no per-day cap: no read");
  assert.throws(() => controlDecision(o, capped, null), /usage of uSOL was not read/);
  assert.deepEqual(controlDecision(o, capped, 6n), { kind: "go", count: { asset: "uSOL", amount: 4n } }, "6+4 = cap");
  const over = controlDecision(o, capped, 7n);
  assert.deepEqual(over.kind === "cap" && over.caps, ["perDay"]);
  assert.match(over.kind === "cap" ? over.reason : "", /today's total would be 11, above the per-day cap of 10/);
  const both = controlDecision(mint(20n), controls({ caps: { uSOL: { perOrder: "15", perDay: "10" } } }), 0n);
  assert.deepEqual(both.kind === "cap" && both.caps, ["perOrder", "perDay"]);
});

Deno.test("controlDecision: an approval lifts only the caps it was given over, and an approved order still counts", () => {
  const caps = controls({ caps: { uSOL: { perOrder: "1", perDay: "10" } } });
  const approved = (o: Order, c: ("perOrder" | "perDay")[]) =>
    withDetails(o, { capApprovals: [{ caps: c, by: "alice", at: "2026-11-25T00:00:00.000Z" }] });
  const overOrder = approved(mint(5n), ["perOrder"]);
  assert.deepEqual(controlDecision(overOrder, caps, 0n), { kind: "go", count: { asset: "uSOL", amount: 5n } });
  const overDay = controlDecision(overOrder, caps, 6n);
  assert.deepEqual(overDay.kind === "cap" && overDay.caps, ["perDay"], "not approved over the per-day cap");
  assert.deepEqual(controlDecision(approved(mint(5n), ["perOrder", "perDay"]), caps, 9n), {
    kind: "go",
    count: { asset: "uSOL", amount: 5n },
  });
});

Deno.test("controlDecision: a re-signed order (dead or failed attempt before) is neither capped nor counted again", () => {
  const caps = controls({ caps: { uSOL: { perOrder: "1", perDay: "1" } } });
  const sent = inStatus(mint(5n), "minting");
  const intent = sent.details.intent!;
  const dead = withDetails(mint(5n), {
    deadIntents: [{
      ...intent,
      proof: { kind: "expired", expiry: { kind: "height", value: 10 }, reached: 11 },
      detail: "expired",
      deadAt: intent.preparedAt,
    }],
  });
  assert.equal(usageNeeded(dead, caps), null);
  assert.deepEqual(controlDecision(dead, caps, null), { kind: "go", count: null });
  assert.equal(controlDecision(dead, controls({ ...caps, pausedChains: { sol: pause } }), null).kind, "paused");
});

Deno.test("parseHeldId: order and transfer ids, anything else refused", () => {
  const id = "0193a5b2-7c1d-7e3f-8a9b-0123456789ab";
  assert.deepEqual(parseHeldId(`order:${id}`), { kind: "order", orderId: id });
  assert.deepEqual(parseHeldId("transfer:base:0xabc:3"), {
    kind: "transfer",
    chain: "base",
    txHash: "0xabc",
    index: 3,
    revision: 0,
  });
  assert.equal(parseHeldId("transfer:base:0xabc:3:2")?.kind, "transfer");
  for (
    const bad of [
      "",
      "order:",
      "order:x",
      `orders:${id}`,
      "transfer:eth:0xabc:3",
      "transfer:base:0xabc",
      "transfer:base:0x/:1",
    ]
  ) {
    assert.equal(parseHeldId(bad), null, bad);
  }
});
