/**
 * The server as a child process, SIGKILLed at random moments while deposits and burns are in flight on every chain,
 * restarted on the same KV file: afterwards every transfer has exactly one order, every completed mint minted once,
 * every completed burn paid once, the sums per asset match, and the operators' reconciliation finds no mismatch. `deno task bench:chaos` runs a longer version.
 * CHAOS_SEED repeats a run's plan and kill points (timing still varies).
 */
import assert from "node:assert/strict";
import { CHAOS_TEST_OPTIONS, formatChaos, runChaos } from "./support/chaos.ts";

Deno.test("SIGKILL during deposits and burns: exactly one order per transfer, mints and payouts once, sums match", async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`crash test seed ${seed}`);
  const result = await runChaos({
    ...CHAOS_TEST_OPTIONS,
    seed,
    log: Deno.env.get("TEST_LOG") ? console.log : undefined,
  });
  console.log(formatChaos(result));
  assert.ok(result.kills >= 5, `only ${result.kills} kills`);
  assert.ok(result.transfers >= CHAOS_TEST_OPTIONS.operations * 0.7, `only ${result.transfers} transfers landed`);
  assert.deepEqual(result.reconciliation.mismatches, []);
  assert.deepEqual(result.reconciliation.unknown, []);
  assert.equal(result.reconciliation.ok, true);
  assert.deepEqual(result.problems, []);
});
