/**
 * The SIGKILL chaos run (tests/support/chaos.ts; tests/crash_test.ts is the same without cold storage) with cold sweeps
 * on: every native chain has a hot band and a cold address, so the sims' geneses and the swept deposits go to cold
 * while deposits and burns are in flight and the server is killed and restarted. Afterwards: every cold sweep settled
 * and sent exactly once, mints and payouts exactly once, and reconciliation ok with the cold balances counted: every
 * coin accounted hot or cold. A shorter run than the crash test (fewer operations and kills) to stay fast;
 * `CHAOS_COLD=1 deno task bench:chaos` is the long version. CHAOS_SEED repeats a plan.
 */
import assert from "node:assert/strict";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { CHAOS_TEST_OPTIONS, formatChaos, runChaos } from "./support/chaos.ts";

const SEED = 20261127;

Deno.test("SIGKILL during deposits and burns with cold sweeps on (sim chains): surplus to cold exactly once, payouts complete, reconciliation ok with cold counted", async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? SEED);
  const result = await runChaos({
    ...CHAOS_TEST_OPTIONS,
    operations: 100,
    trafficKills: 4,
    drainKills: 2,
    coldSweeps: true,
    seed,
    log: Deno.env.get("TEST_LOG") ? console.log : undefined,
  });
  console.log(formatChaos(result));
  assert.deepEqual(result.problems, []);
  assert.ok(result.kills >= 4, `only ${result.kills} kills`);
  assert.ok(result.completedBurns > 0 && result.completedMints > 0);
  assert.equal(result.payoutsExactlyOnce, result.completedBurns);
  assert.equal(result.mintsExactlyOnce, result.completedMints);
  assert.equal(result.coldSweeps.open, 0);
  // The UTXO geneses are above every band from the start: each of those chains swept to cold at least once.
  for (const chain of ["doge", "zec"] as const) {
    assert.ok((result.coldSweeps.moved[chain] ?? 0n) > 0n, `${chain}: nothing went to cold`);
  }
  assert.ok(NATIVE_CHAINS.some((c) => (result.coldSweeps.moved[c] ?? 0n) > 0n));
  for (const a of result.reconciliation.assets) {
    assert.notEqual(a.supply.controlled.cold, null, `${a.asset}: cold read`);
  }
  assert.deepEqual(result.reconciliation.mismatches, []);
  assert.deepEqual(result.reconciliation.unknown, []);
  assert.equal(result.reconciliation.ok, true);
});
