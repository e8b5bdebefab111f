/**
 * The crash run on live chains, short and seeded (tests/support/chaos_live.ts; `CHAOS_MODE=live deno task bench:chaos`
 * is the long version): the server as a child process in `CHAIN_MODE=devnet`, SIGKILLed while deposits and burns are
 * in flight, with base and arbitrum on anvil, doge on a real litecoind regtest node, and zec, sol, xrp and sui on
 * their local protocol servers (no Zebra, validator, rippled or Sui node runs here: docs/architecture.md), with sweeps
 * into the hot wallets and on-chain burns of redeemed uAssets running throughout. Afterwards, from the KV file and the
 * chains: one order (or held record) per transfer, every completed mint minted once and every completed burn paid once,
 * the sums per asset, every sweep and burn batch settled, and the operators' reconciliation ok.
 *
 * Needs litecoind: without it the test is skipped with a loud warning; under CI=true it fails instead
 * (tests/support/litecoind.ts). CHAOS_SEED replays another plan and other kill points (timing still varies).
 */
import assert from "node:assert/strict";
import { formatChaos } from "./support/chaos.ts";
import { LIVE_CHAOS_TEST_OPTIONS, LIVE_LEFT_OUT, runLiveChaos } from "./support/chaos_live.ts";
import { LITECOIND, litecoindAvailable } from "./support/litecoind.ts";

const RUN = litecoindAvailable("tests/crash_live_test.ts");
if (!RUN) {
  console.warn(`crash_live_test.ts SKIPPED: litecoind not found at ${LITECOIND} (apt-get install -y litecoind)`);
}

/** A seed whose plan has burns on every native chain and both EVM chains; CHAOS_SEED overrides it. */
const SEED = 20261127;

Deno.test({
  name: "SIGKILL during live deposits and burns (base and arbitrum on anvil, doge on litecoind regtest; " +
    "zec, sol, xrp and sui on local protocol servers, not real nodes): mints and payouts exactly once, " +
    "sweeps and burn batches settled, reconciliation ok",
  ignore: !RUN,
}, async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? SEED);
  const started = performance.now();
  for (const line of LIVE_LEFT_OUT) console.log(`left out: ${line}`);
  const result = await runLiveChaos({
    ...LIVE_CHAOS_TEST_OPTIONS,
    seed,
    log: Deno.env.get("TEST_LOG") ? console.log : undefined,
  });
  console.log(formatChaos(result));
  console.log(`crash live test: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  assert.ok(result.kills >= LIVE_CHAOS_TEST_OPTIONS.trafficKills, `only ${result.kills} kills`);
  assert.ok(result.completedMints > 0 && result.completedBurns > 0, "mints and burns completed");
  assert.ok(result.sweeps.completed > 0, "deposits were swept");
  assert.ok(result.burnBatches.burned > 0, "redeemed uAssets were burned on chain");
  assert.equal(result.mintsExactlyOnce, result.completedMints);
  assert.equal(result.payoutsExactlyOnce, result.completedBurns);
  assert.deepEqual(result.reconciliation.mismatches, []);
  assert.deepEqual(result.reconciliation.unknown, []);
  assert.equal(result.reconciliation.ok, true);
  assert.deepEqual(result.problems, []);
});
