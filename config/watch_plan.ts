/**
 * Which chains this process watches, and what one cron run of the watchers may spend (docs/operations.md "Deploy on
 * Deno Deploy", docs/scan-budget.md "Deploy mode"):
 *
 * - `WATCH_CHAINS` (default `all`): the chains whose watcher this process runs, among those its chain plan enables;
 *   `SKIP_WATCH_CHAINS` takes chains out of it. Everything else (order actors, treasuries, webhooks) runs as before:
 *   leases make several processes on one KV safe (docs/architecture.md "Actors on Deno KV"), so a chain's watcher can
 * run in a
 *   long-running process while a Deno Deploy app on the same KV does the rest.
 * - `WATCH_BYTES_PER_RUN` (bytes, default `DEFAULT_WATCH_BYTES_PER_RUN`): what one cron run of one chain's watcher may
 *   read, for readers that count their bytes; the run stops at the first step that reaches it, its cursor stored.
 * - `CRON_RUN_MS` (default actors/cron.ts `CRON_BUDGET_MS`): the time budget of every cron run.
 * - `WATCHER_LAG_ALERT_MINUTES` (default 15, as docs/alerts.yml's IssuanceWatcherLagging): how long a watcher may stay
 *   behind its chain's threshold before the `watcher_lagging` alert is raised (actors/watcher_lag.ts).
 * - `WATCHER_UNWATCHED_SECONDS` (default 180, from 3 to 86400): a chain no process has looked at for longer is
 *   `unwatched` on the dashboard (actors/ops/overview.ts); each process stores its watchers' looks every third of it,
 *   at most once a minute (actors/watcher_looks.ts). Every process on one KV should use the same value.
 *
 * Deploy mode refuses at start to watch a live chain whose mainnet volume (chains/watch_volume.ts) a cron run cannot
 * read with `DEPLOY_HEADROOM`: a minute's volume must fit its per-run budget that many times over, so a backlog shrinks.
 */
import { CHAIN_SYMBOLS, type ChainSymbol } from "../chains/catalog.ts";
import { MAINNET_WATCH_BYTES_PER_MINUTE } from "../chains/watch_volume.ts";
import { wholeFromEnv } from "./native.ts";

export interface WatchConfig {
  /** The chains named by WATCH_CHAINS; null: every enabled chain. */
  chains: ChainSymbol[] | null;
  /** The chains named by SKIP_WATCH_CHAINS: never watched here, whatever WATCH_CHAINS says. */
  skip: ChainSymbol[];
  /** Bytes one cron run of one chain's watcher may read. */
  bytesPerRun: number;
  /** The time budget of a cron run, in ms. */
  cronRunMs: number;
  /** How long a watcher stays behind its threshold before it is alerted, in ms. */
  lagAlertMs: number;
  /** A chain no process looked at for longer than this is `unwatched`, in ms. */
  unwatchedAfterMs: number;
}

const MiB = 1024 * 1024;
/**
 * 256 MiB: a deploy-mode cron run reading it took 2 to 3.5 s on the development machine at a peak RSS of 292-335 MiB
 * (bench/deploy_watch.ts; docs/operations.md "What watches where"), far within the run's 45 s and a Deploy isolate's
 * 512 MB; a minute of every chain but Solana (chains/watch_volume.ts) is under 3% of it.
 */
export const DEFAULT_WATCH_BYTES_PER_RUN = 256 * MiB;
/** A minute of a chain's mainnet volume must fit a cron run's byte budget this many times. */
export const DEPLOY_HEADROOM = 2;
/** The cron period (actors/cron.ts `CRON_PERIOD_MS`, repeated here since config/ does not import actors/). */
const CRON_PERIOD_MS = 60_000;
export const DEFAULT_CRON_RUN_MS = 45_000;
/** Below the cron lease (actors/cron.ts `CRON_LEASE_MS`, 55 s), so a run ends before its lease does. */
const MAX_CRON_RUN_MS = 50_000;
export const DEFAULT_LAG_ALERT_MINUTES = 15;
/** Three records of a process at rest (one a minute): one lost write does not make a watched chain `unwatched`. */
export const DEFAULT_UNWATCHED_SECONDS = 180;
export const DEFAULT_UNWATCHED_AFTER_MS = DEFAULT_UNWATCHED_SECONDS * 1000;

type Env = Record<string, string | undefined>;

function chainList(env: Env, name: string): ChainSymbol[] | "all" | null {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return null;
  if (text === "all") return "all";
  if (text === "none") return [];
  const names = text.split(",").map((s) => s.trim());
  const unknown = names.filter((n) => !(CHAIN_SYMBOLS as readonly string[]).includes(n));
  if (unknown.length > 0 || names.includes("")) {
    throw new Error(
      `${name} must be "all", "none" or chain symbols separated by commas (${CHAIN_SYMBOLS.join(", ")}); ` +
        `unknown: ${unknown.map((u) => JSON.stringify(u)).join(", ") || "an empty entry"}`,
    );
  }
  return names as ChainSymbol[];
}

export function loadWatchConfig(env: Env): WatchConfig {
  const only = chainList(env, "WATCH_CHAINS");
  const skip = chainList(env, "SKIP_WATCH_CHAINS");
  if (skip === "all") throw new Error("SKIP_WATCH_CHAINS=all: use WATCH_CHAINS=none to watch no chain");
  return {
    chains: only === null || only === "all" ? null : only,
    skip: skip ?? [],
    bytesPerRun: wholeFromEnv(
      env,
      "WATCH_BYTES_PER_RUN",
      DEFAULT_WATCH_BYTES_PER_RUN,
      MiB,
      64 * 1024 * MiB,
      " of bytes",
    ),
    cronRunMs: wholeFromEnv(env, "CRON_RUN_MS", DEFAULT_CRON_RUN_MS, 1_000, MAX_CRON_RUN_MS, " of ms"),
    lagAlertMs: wholeFromEnv(env, "WATCHER_LAG_ALERT_MINUTES", DEFAULT_LAG_ALERT_MINUTES, 1, 24 * 60, " of minutes") *
      60_000,
    unwatchedAfterMs:
      wholeFromEnv(env, "WATCHER_UNWATCHED_SECONDS", DEFAULT_UNWATCHED_SECONDS, 3, 86_400, " of seconds") *
      1000,
  };
}

/** The chains this process watches: the enabled ones `watch` names (all of them by default), less those it skips. */
export function watchedChains(watch: WatchConfig, enabled: readonly ChainSymbol[]): ChainSymbol[] {
  return enabled.filter((c) => (watch.chains === null || watch.chains.includes(c)) && !watch.skip.includes(c));
}

const mib = (n: number) => `${Math.round(n / MiB)} MiB`;

/**
 * Refuses a start that could not keep up: a WATCH_CHAINS entry the chain plan does not run, or in deploy mode a live
 * (mainnet) chain whose minute of blocks a cron run cannot read `DEPLOY_HEADROOM` times within WATCH_BYTES_PER_RUN. The
 * message names the chain, the figures and what to do instead.
 */
export function checkWatchPlan(
  watch: WatchConfig,
  runtimeMode: "process" | "deploy",
  plan: {
    mode: string;
    enabled: readonly ChainSymbol[];
    live: readonly ChainSymbol[];
    /**
     * Live chains whose reader asks per deposit address rather than reading blocks (`SOL_DETECTION=addresses`): what
     * they read grows with our addresses, not with the chain (docs/scan-budget.md "Solana: polling addresses": about
     * 3.3 GiB a day, 2.3 MiB a minute, at 10,000 addresses), so a chain's block volume does not weigh on them.
     */
    polling?: readonly ChainSymbol[];
  },
): void {
  const notRun = (watch.chains ?? []).filter((c) => !plan.enabled.includes(c));
  if (notRun.length > 0) {
    throw new Error(
      `WATCH_CHAINS names ${notRun.join(", ")}, which this process does not run (enabled: ` +
        `${plan.enabled.join(", ") || "none"}): configure the chain here or take it out of WATCH_CHAINS`,
    );
  }
  if (runtimeMode !== "deploy" || plan.mode !== "live") return;
  const perRun = (chain: ChainSymbol) => MAINNET_WATCH_BYTES_PER_MINUTE[chain] * (CRON_PERIOD_MS / 60_000);
  const tooBig = watchedChains(watch, plan.live).filter((c) =>
    !plan.polling?.includes(c) && perRun(c) * DEPLOY_HEADROOM > watch.bytesPerRun
  );
  if (tooBig.length === 0) return;
  const figures = tooBig.map((c) => `${c} reads about ${mib(perRun(c))} a minute`).join(", ");
  const list = tooBig.join(",");
  throw new Error(
    `RUNTIME_MODE=deploy cannot keep up with ${tooBig.join(", ")} on mainnet: at mainnet's rate ${figures} ` +
      `(chains/watch_volume.ts), and a cron run (one a minute) reads at most WATCH_BYTES_PER_RUN=` +
      `${mib(watch.bytesPerRun)} per chain, which must hold ${DEPLOY_HEADROOM} minutes of it so a backlog shrinks. ` +
      `${
        tooBig.includes("sol")
          ? "Either find Solana deposits by polling each address (SOL_DETECTION=addresses, for a deployment of few deposit addresses: docs/scan-budget.md), or run"
          : "Run"
      } that watcher in a long-running process on the same KV instead: set SKIP_WATCH_CHAINS=${list} on Deno ` +
      `Deploy, and on a machine run \`deno task start\` with RUNTIME_MODE=process WATCH_CHAINS=${list}, the same ` +
      `configuration and KV_PATH set to the Deploy database's URL (with DENO_KV_ACCESS_TOKEN); ` +
      `docs/operations.md "Deploy on Deno Deploy"`,
  );
}
