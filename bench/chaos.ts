/**
 * The long crash run: the server as a child process, SIGKILLed many times while deposits and burns are in flight,
 * then every transfer, order, mint and payout checked from the KV file (tests/support/chaos.ts), and the operators'
 * reconciliation run over it. Prints the figures and the reconciliation report;
 * exits 1 if any check failed. Run: deno task bench:chaos
 * Environment: CHAOS_SEED, CHAOS_OPS (600), CHAOS_KILLS (while sending, 15), CHAOS_DRAIN_KILLS (3), CHAOS_WALLETS (10),
 * CHAOS_CONCURRENCY (8), CHAOS_PACE_MS (30), CHAOS_BLOCK_MS (50), CHAOS_SWEEP_MS (100), CHAOS_RPC_ERROR_RATE (0.02),
 * CHAOS_DRAIN_TIMEOUT_MS (180000), CHAOS_KEEP=1 to keep the KV file and server logs.
 */
import { formatChaos, runChaos } from "../tests/support/chaos.ts";
import { reportText } from "../actors/ops/reconcile.ts";

const num = (name: string, fallback: number) => {
  const v = Deno.env.get(name);
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

const result = await runChaos({
  seed: num("CHAOS_SEED", Math.floor(Math.random() * 2 ** 31)),
  operations: num("CHAOS_OPS", 600),
  trafficKills: num("CHAOS_KILLS", 15),
  drainKills: num("CHAOS_DRAIN_KILLS", 3),
  wallets: Math.max(1, num("CHAOS_WALLETS", 10)),
  concurrency: Math.max(1, num("CHAOS_CONCURRENCY", 8)),
  paceMs: num("CHAOS_PACE_MS", 30),
  blockMs: Math.max(10, num("CHAOS_BLOCK_MS", 50)),
  sweepMs: Math.max(10, num("CHAOS_SWEEP_MS", 100)),
  rpcErrorRate: Math.min(1, num("CHAOS_RPC_ERROR_RATE", 0.02)),
  drainTimeoutMs: num("CHAOS_DRAIN_TIMEOUT_MS", 180_000),
  keepDir: Deno.env.get("CHAOS_KEEP") === "1",
  log: console.log,
});
console.log(formatChaos(result));
console.log(`\nreconciliation report after the run (deno task admin reconcile on its KV file):`);
console.log(reportText(result.reconciliation).join("\n"));
if (result.problems.length > 0) Deno.exit(1);
