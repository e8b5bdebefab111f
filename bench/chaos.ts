/**
 * The long crash run: the server as a child process, SIGKILLed many times while deposits and burns are in flight,
 * then every transfer, order, mint and payout checked from the KV file (tests/support/chaos.ts), and the operators'
 * reconciliation run over it. Prints the figures and the reconciliation report;
 * exits 1 if any check failed. Run: deno task bench:chaos
 *
 * CHAOS_MODE picks the chains:
 * - `sim` (the default): every chain simulated (`CHAIN_MODE=sim`), with injected RPC errors.
 * - `live`: tests/support/chaos_live.ts. The server in `CHAIN_MODE=devnet` with base and arbitrum on anvil, doge on
 *   a litecoind regtest node (Debian's litecoind: `apt-get install -y litecoind`; the run refuses to start without
 *   it), zec, sol, xrp and sui on their local protocol servers (Zebra-, Solana-RPC-, rippled- and Sui-GraphQL-shaped
 *   servers in this process: no such node runs here), sweeps into the hot wallets and on-chain burns of redeemed
 *   uAssets running throughout; katana, world and unichain are left out (simulated, untouched), which it prints.
 *   Deposits come from outsiders on the chains whether the server is up or not; burns are partners' real uAsset
 *   transfers of what the service minted to them. No RPC errors are injected (CHAOS_RPC_ERROR_RATE is ignored).
 *
 * Environment (defaults sim / live): CHAOS_SEED, CHAOS_OPS (600 / 400), CHAOS_KILLS (while sending, 15 / 50),
 * CHAOS_DRAIN_KILLS (3 / 5), CHAOS_WALLETS (10 / 6), CHAOS_CONCURRENCY (8 / 4), CHAOS_PACE_MS (30 / 300),
 * CHAOS_BLOCK_MS (50), CHAOS_SWEEP_MS (100), CHAOS_RPC_ERROR_RATE (0.02 / -), CHAOS_DRAIN_TIMEOUT_MS (180000 /
 * 300000), CHAOS_KEEP=1 to keep the KV file and server logs, CHAOS_COLD=1 (sim) to run with cold sweeps on (a hot band
 * and a cold address on every native chain: tests/support/chaos.ts `coldBand`).
 */
import { formatChaos, runChaos } from "../tests/support/chaos.ts";
import { runLiveChaos } from "../tests/support/chaos_live.ts";
import { LITECOIND } from "../tests/support/litecoind.ts";
import { reportText } from "../actors/ops/reconcile.ts";

const mode = Deno.env.get("CHAOS_MODE") ?? "sim";
if (mode !== "sim" && mode !== "live") throw new Error(`CHAOS_MODE must be sim or live, not ${mode}`);
const live = mode === "live";

const num = (name: string, fallback: number) => {
  const v = Deno.env.get(name);
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

if (live) {
  try {
    Deno.statSync(LITECOIND);
  } catch {
    console.error(`CHAOS_MODE=live needs litecoind at ${LITECOIND} for doge (apt-get install -y litecoind)`);
    Deno.exit(1);
  }
}

const options = {
  seed: num("CHAOS_SEED", Math.floor(Math.random() * 2 ** 31)),
  operations: num("CHAOS_OPS", live ? 400 : 600),
  trafficKills: num("CHAOS_KILLS", live ? 50 : 15),
  drainKills: num("CHAOS_DRAIN_KILLS", live ? 5 : 3),
  wallets: Math.max(1, num("CHAOS_WALLETS", live ? 6 : 10)),
  concurrency: Math.max(1, num("CHAOS_CONCURRENCY", live ? 4 : 8)),
  paceMs: num("CHAOS_PACE_MS", live ? 300 : 30),
  blockMs: Math.max(10, num("CHAOS_BLOCK_MS", 50)),
  sweepMs: Math.max(10, num("CHAOS_SWEEP_MS", 100)),
  rpcErrorRate: live ? 0 : Math.min(1, num("CHAOS_RPC_ERROR_RATE", 0.02)),
  drainTimeoutMs: num("CHAOS_DRAIN_TIMEOUT_MS", live ? 300_000 : 180_000),
  keepDir: Deno.env.get("CHAOS_KEEP") === "1",
  coldSweeps: Deno.env.get("CHAOS_COLD") === "1",
  log: console.log,
};
const result = live ? await runLiveChaos(options) : await runChaos(options);
console.log(formatChaos(result));
console.log(`\nreconciliation report after the run (deno task admin reconcile on its KV file):`);
console.log(reportText(result.reconciliation).join("\n"));
if (result.problems.length > 0) Deno.exit(1);
