/**
 * The catalog as the one source of per-chain rules: every native chain has a finality rule, a reorg depth, an expiry
 * rule for our payouts, a memo rule and a reserve, with the chain facts of docs/architecture.md written out here; and
 * the pipeline's settings take a live chain's finality and timeout from the catalog, a simulated chain's small depth.
 */
import assert from "node:assert/strict";
import { pipelineSettings } from "../actors/context.ts";
import {
  EVM,
  EVM_CHAINS,
  MEMO_MAX_LENGTH,
  memoProblem,
  NATIVE,
  NATIVE_CHAINS,
  REORG_WINDOW_BLOCKS,
} from "../chains/catalog.ts";

Deno.test("catalog: every native chain has a finality rule, a reorg depth, an expiry rule, a memo rule and a reserve", () => {
  const rules = Object.fromEntries(NATIVE_CHAINS.map((c) => {
    const { finality, reorgDepth, expiry, memo, reserve } = NATIVE[c];
    return [c, { finality, reorgDepth, expiry, memo, reserve }];
  }));
  assert.deepEqual(rules, {
    sol: {
      finality: { kind: "flag", name: "finalized" },
      reorgDepth: 32,
      expiry: { kind: "height", unit: "block", window: 150, field: "lastValidBlockHeight" },
      memo: { kind: "text", required: false, maxLength: 256 },
      reserve: 890_880n,
    },
    xrp: {
      finality: { kind: "flag", name: "validated" },
      reorgDepth: 1,
      expiry: { kind: "height", unit: "ledger", window: 20, field: "LastLedgerSequence" },
      memo: { kind: "destinationTag", required: true, max: 4294967295n },
      reserve: 1_000_000n,
    },
    sui: {
      finality: { kind: "flag", name: "checkpointed" },
      reorgDepth: 0,
      expiry: { kind: "height", unit: "epoch", window: 1, field: "expiration" },
      memo: { kind: "text", required: false, maxLength: 256 },
      reserve: 0n,
    },
    doge: {
      finality: { kind: "depth", confirmations: 40 },
      reorgDepth: 40,
      expiry: { kind: "none" },
      memo: { kind: "text", required: false, maxLength: 256 },
      reserve: 0n,
    },
    zec: {
      finality: { kind: "depth", confirmations: 24 },
      reorgDepth: 24,
      expiry: { kind: "height", unit: "block", window: 40, field: "nExpiryHeight" },
      memo: { kind: "text", required: false, maxLength: 256 },
      reserve: 0n,
    },
  });
  for (const c of EVM_CHAINS) assert.deepEqual(EVM[c].expiry, { kind: "none" }, c);
});

Deno.test("catalog: the watcher's reorg window covers every chain's reorg depth and finality depth", () => {
  for (const c of NATIVE_CHAINS) {
    const f = NATIVE[c].finality;
    assert.ok(REORG_WINDOW_BLOCKS > NATIVE[c].reorgDepth, c);
    if (f.kind === "depth") assert.ok(REORG_WINDOW_BLOCKS > f.confirmations, c);
  }
  for (const c of EVM_CHAINS) assert.ok(REORG_WINDOW_BLOCKS > Math.max(EVM[c].reorgDepth, EVM[c].confirmations), c);
});

Deno.test("catalog: memo rules, xrp's destination tag and the other chains' optional text", () => {
  assert.equal(MEMO_MAX_LENGTH, 256);
  const xrp = (memo: string | undefined) => memoProblem("xrp", memo);
  assert.deepEqual(xrp(undefined), { problem: "required" });
  assert.deepEqual(xrp(""), { problem: "required" });
  assert.deepEqual(xrp("1e3"), { problem: "notNumeric" });
  assert.deepEqual(xrp("4294967296"), { problem: "tooLarge", max: 4294967295n });
  assert.deepEqual(xrp("00000000001"), { problem: "tooLarge", max: 4294967295n }, "more than 10 digits");
  assert.equal(xrp("0"), null);
  assert.equal(xrp("4294967295"), null);
  for (const c of ["sol", "sui", "doge", "zec"] as const) {
    assert.equal(memoProblem(c, undefined), null, c);
    assert.equal(memoProblem(c, "any text at all"), null, c);
    assert.equal(memoProblem(c, "x".repeat(256)), null, c);
    assert.deepEqual(memoProblem(c, "x".repeat(257)), { problem: "tooLong", maxLength: 256 }, c);
  }
});

Deno.test("pipeline settings: a live chain's finality, block time and timeout are the catalog's; sim keeps its own", () => {
  const settings = pipelineSettings({
    blockMs: 20,
    confirmationTimeoutMs: 5_000,
    transferAddress: "0x" + "00".repeat(20),
    live: { doge: {}, sol: {}, zec: { confirmations: 30, confirmationTimeoutMs: 1_000 }, base: {} },
  });
  // Live depth chains: the catalog's depth and production timeout.
  assert.deepEqual(settings.finality("doge"), { kind: "depth", confirmations: 40 });
  assert.equal(settings.confirmations("doge"), 40);
  assert.equal(settings.confirmationTimeoutMs("doge"), 360 * 60_000);
  assert.equal(settings.blockMs("doge"), NATIVE.doge.blockMs);
  assert.equal(settings.startBlock("doge"), "tip");
  // A configured override wins.
  assert.equal(settings.confirmations("zec"), 30);
  assert.equal(settings.confirmationTimeoutMs("zec"), 1_000);
  // Live flag chains: the flag, and one confirmation (the adapter's `final` carries the flag).
  assert.deepEqual(settings.finality("sol"), { kind: "flag", name: "finalized" });
  assert.equal(settings.confirmations("sol"), 1);
  assert.equal(settings.confirmationTimeoutMs("sol"), 30 * 60_000);
  // Live EVM: the catalog's depth (its reader adds the finality tag).
  assert.equal(settings.confirmations("base"), EVM.base.confirmations);
  // Simulated chains: the catalog's small sim depth, the sim clock.
  assert.deepEqual(settings.finality("xrp"), { kind: "depth", confirmations: NATIVE.xrp.simConfirmations });
  assert.equal(settings.confirmations("sui"), NATIVE.sui.simConfirmations);
  assert.equal(settings.confirmations("arbitrum"), EVM.arbitrum.simConfirmations);
  assert.equal(settings.confirmationTimeoutMs("xrp"), 5_000);
  assert.equal(settings.blockMs("xrp"), 20);
  assert.equal(settings.startBlock("xrp"), 0);
});
