/**
 * The pipeline's periodic work as named, bounded ticks: the block producer of a simulated chain, the watcher and the
 * treasury of each chain, the sweep of due orders, lease and stuck-work checks, and housekeeping. A tick does a
 * bounded amount of work and returns when done or out of its budget, leaving the rest for its next run.
 *
 * The same ticks run two ways: a long-running process runs each in its own `setTimeout` loop (actors/runtime.ts,
 * sub-second, `drain: false`: one slice per run), and `Deno.cron` runs them by group once a minute
 * (actors/cron.ts, `drain: true`: each keeps working until nothing is left or its budget is spent). A process that
 * lost every timer still finishes every order from the cron runs alone.
 *
 * Adding a tick is one entry in `pipelineTicks`: a name, its group (the cron job that runs it), the period of its
 * loop, and `run(budget)`. The `events` group is for the order-event sequencer and the webhook delivery worker
 * (docs/streaming.md, docs/webhooks.md). An idle tick must commit nothing: look first (a read), take a lease only when
 * there is work, and pass `timing.leaseMs` (short: there is work) to `acquireLease`; with `budget.drain` keep going
 * while work is left and `!outOfBudget(budget)`.
 */
import {
  chainFamily,
  type ChainSymbol,
  isAccountChain,
  isEvmChain,
  isNativeChain,
  type NativeChain,
} from "../chains/catalog.ts";
import { ConfirmationEvents } from "./confirmation_events.ts";
import { onchainBurnTick } from "./onchain_burn.ts";
import { acquireLease, listDue, pruneExpiredLeases } from "../kv/pipeline.ts";
import { listLeases } from "../kv/pipeline.ts";
import { openConsolidationKey } from "../kv/consolidations.ts";
import type { PipelineContext } from "./context.ts";
import { treasuryTick } from "./sweeper.ts";
import { hotBandCheck } from "./hot_band.ts";
import { chartSampleTicker, SAMPLE_MS } from "./charts.ts";
import { COLD_SWEEP_CHECK_MS, coldSweepTicker } from "./cold_sweep.ts";
import { openColdSweepKey } from "../kv/cold_sweeps.ts";
import { drainTick } from "./hot_wallet_rotation.ts";
import { scheduledReconcile } from "./reconcile_schedule.ts";
import { refundsTick } from "./refunds.ts";
import { watchOnce } from "./watcher.ts";
import type { WatcherLookRecorder } from "./watcher_looks.ts";
import type { WebhookDeliveryWorker } from "./webhook_delivery.ts";
import { type EventSink, hasOutboxEvents, sequenceOrderEvents } from "../kv/order_events.ts";

/** The cron jobs: each runs the ticks of its group (actors/cron.ts). */
export const TICK_GROUPS = ["blocks", "watch", "treasury", "orders", "events", "checks", "housekeeping"] as const;
export type TickGroup = typeof TICK_GROUPS[number];

export interface Budget {
  /** `performance.now()` after which the tick stops starting new work. */
  deadline: number;
  /** Cron: work until nothing is left or the deadline passes. Loops: one slice, the next run comes soon. */
  drain: boolean;
  /**
   * Bytes a watcher's run may read, for readers that count them (`WATCH_BYTES_PER_RUN`, config/watch_plan.ts); the
   * run stops after the step that reaches it. Infinity: no byte budget (the loops, whose steps are bounded already).
   */
  bytes: number;
}

export function budget(ms: number, drain: boolean, bytes = Infinity): Budget {
  return { deadline: performance.now() + ms, drain, bytes };
}

export function outOfBudget(b: Budget): boolean {
  return performance.now() >= b.deadline;
}

export interface Tick {
  /** "watch sol", "sim blocks base", "sweep due orders", ... (logs, and the runtime's one-at-a-time guard). */
  name: string;
  group: TickGroup;
  /** The period of its loop in a long-running process. */
  everyMs: number;
  run(budget: Budget): Promise<unknown>;
}

/** What the ticks need from the runtime that runs them (actors/runtime.ts `PipelineRuntime`). */
export interface TickHost {
  readonly ctx: PipelineContext;
  /** This process in leases. */
  readonly owner: string;
  readonly timing: TickTiming;
  /** Seals a block on a simulated chain (sim mode). */
  readonly produceBlock?: (chain: ChainSymbol) => Promise<unknown>;
  /** Simulated chains this process produces blocks for. */
  readonly blockChains: readonly ChainSymbol[];
  /** The chains whose watcher runs here (`WATCH_CHAINS`); unset, every enabled chain. */
  readonly watchChains?: readonly ChainSymbol[];
  /** Whether a simulated chain has transactions waiting for a block. */
  readonly hasPending?: (chain: ChainSymbol) => Promise<boolean>;
  /** What reacts to each sequenced order event (webhook deliveries; kv/order_events.ts). */
  readonly eventSinks: readonly EventSink[];
  /** The period of the order-event sequencer's loop. */
  readonly eventsMs: number;
  /** Webhook deliveries; null when this runtime attempts none. */
  readonly webhooks: WebhookDeliveryWorker | null;
  /**
   * ROLE=worker (docs/operations.md "Roles"): tops up each chain's pool of pre-derived deposit addresses for the api
   * processes, which hold no mnemonic (kv/mint_wallets.ts `refillDepositPool`); returns how many it wrote. Unset, no
   * pool tick.
   */
  readonly depositPool?: { chains: readonly NativeChain[]; refill(chain: NativeChain): Promise<number> };
  /** The watchers' looks, stored at most once per period (actors/watcher_looks.ts); unset, none are stored. */
  readonly looks?: WatcherLookRecorder;
  /** Steps the order soon (bounded concurrency, one step per order at a time). */
  wake(orderId: string): void;
  isInFlight(orderId: string): boolean;
  /** Resolves when no step runs or waits in this process, or at the deadline. */
  settle(deadline: number): Promise<void>;
}

export interface TickTiming {
  watchMs: number;
  sweepMs: number;
  blockMs: number;
  /** Leases while work waits: short, so another process takes over quickly after a crash. */
  leaseMs: number;
  /** Leases while nothing waits: long, so an idle holder renews rarely (kv/pipeline.ts `acquireLease`). */
  idleLeaseMs: number;
  /** Watchers store an unchanged-but-advanced cursor at most this often (actors/watcher.ts `WatchOptions`). */
  batchCursorMs: number;
  /** Orders due longer ago than this are reported by the checks tick. */
  stuckAfterMs: number;
  /** A watcher behind its threshold this long raises `watcher_lagging` (actors/watcher_lag.ts); unset, its default. */
  lagAlertMs?: number;
}

/** The tick list of a runtime. */
export function pipelineTicks(host: TickHost): Tick[] {
  const { ctx, timing } = host;
  const enabled = ctx.settings.enabledChains;
  const waiting = workWaiting(host);
  const leaseFor = async () => (await waiting()) ? timing.leaseMs : timing.idleLeaseMs;
  const ticks: Tick[] = [];
  if (host.produceBlock) {
    for (const chain of host.blockChains) {
      ticks.push({
        name: `sim blocks ${chain}`,
        group: "blocks",
        everyMs: timing.blockMs,
        run: () => simBlocksTick(host, chain, waiting),
      });
    }
  }
  // A disabled chain has no watcher: nothing reads it, and nothing is simulated in its place. A chain another process
  // watches (WATCH_CHAINS, config/watch_plan.ts) has none here either.
  for (const chain of enabled) {
    if (host.watchChains && !host.watchChains.includes(chain)) continue;
    ticks.push({
      name: `watch ${chain}`,
      group: "watch",
      everyMs: timing.watchMs,
      run: async (b) => {
        const r = await watchTick(host, chain, b, leaseFor);
        await host.looks?.flush(ctx.now().getTime());
        return r;
      },
    });
  }
  // Sweeps fund the hot wallet from minted deposits (account chains) and open consolidations of a UTXO treasury are
  // followed to their end, one process per chain under a lease.
  for (const chain of enabled) {
    if (!isNativeChain(chain)) continue;
    ticks.push({
      name: `treasury ${chain}`,
      group: "treasury",
      everyMs: timing.watchMs,
      run: () => treasuryTick(ctx, chain, host.owner, timing.leaseMs),
    });
  }
  // The surplus above a chain's hot band goes to its cold address (actors/cold_sweep.ts): an open cold sweep is
  // followed every run (also on a chain whose band was unset since: one read at rest); a new one is decided at most
  // once a minute (60 blocks' time with fast sim blocks), on a chain with a band.
  for (const chain of enabled) {
    if (!isNativeChain(chain)) continue;
    const checkMs = Math.min(COLD_SWEEP_CHECK_MS, 60 * timing.blockMs);
    ticks.push({
      name: `cold sweep ${chain}`,
      group: "treasury",
      everyMs: timing.watchMs,
      run: coldSweepTicker(ctx, chain, host.owner, timing.leaseMs, checkMs),
    });
  }
  // A retired hot wallet drained into the one in effect (docs/operations.md "Rotating a hot wallet"); idle: one read
  // per tick.
  for (const chain of enabled) {
    if (!isNativeChain(chain) || !isAccountChain(chain)) continue;
    ticks.push({
      name: `hot drain ${chain}`,
      group: "treasury",
      everyMs: timing.watchMs,
      run: () => drainTick(ctx, chain, host.owner, timing.leaseMs),
    });
  }
  // Redeemed uAssets burned from the transfer address, in batches (docs/onchain-burn.md).
  for (const chain of enabled) {
    if (!isEvmChain(chain) || !ctx.chains.uAssetSender) continue;
    ticks.push({
      name: `burn ${chain}`,
      group: "treasury",
      everyMs: timing.watchMs,
      run: (b) => onchainBurnTick(ctx, chain, host.owner, timing.leaseMs, () => b.drain && !outOfBudget(b)),
    });
  }
  ticks.push({
    name: "sweep due orders",
    group: "orders",
    everyMs: timing.sweepMs,
    run: (b) => sweepDueOrders(host, b),
  });
  ticks.push({
    name: "refunds",
    group: "orders",
    everyMs: timing.sweepMs,
    run: (b) => refundsTick(ctx, host.owner, timing.leaseMs, b.drain, () => outOfBudget(b)),
  });
  ticks.push({
    name: "sequence order events",
    group: "events",
    everyMs: host.eventsMs,
    run: (b) => sequenceEventsTick(host, b),
  });
  // A pending order's new count of confirmations as an event, when a watcher scanned a block (docs/streaming.md).
  const confirmations = new ConfirmationEvents(ctx.kv, ctx.settings);
  ticks.push({
    name: "confirmation events",
    group: "events",
    everyMs: timing.watchMs,
    run: () => confirmations.tick(),
  });
  const webhooks = host.webhooks;
  if (webhooks) {
    ticks.push({
      name: "webhook deliveries",
      group: "events",
      everyMs: webhooks.opts.pollMs,
      run: async (b) => {
        await webhooks.tick();
        // Cron: the attempts started are awaited within the run (an isolate may end after it), then due ones again.
        if (b.drain) await webhooks.settle(b.deadline);
      },
    });
  }
  ticks.push({ name: "lease and stuck checks", group: "checks", everyMs: 60_000, run: () => checks(host) });
  ticks.push({
    name: "reconcile",
    group: "checks",
    everyMs: 60_000,
    run: () => scheduledReconcile(ctx, host.owner),
  });
  // Each native chain's hot-wallet band (actors/hot_band.ts): reads only, a commit only when the alert changes.
  const banded = enabled.filter(isNativeChain).filter((c) => ctx.settings.hotBand(c) !== null);
  if (banded.length > 0) {
    ticks.push({ name: "hot band", group: "checks", everyMs: 60_000, run: () => hotBandCheck(ctx, banded) });
  }
  // The overview's chart samples (actors/charts.ts): a look every 10 min (600 blocks' time with fast sim blocks), a
  // commit only when a value moved (at rest none).
  const sampleMs = Math.min(SAMPLE_MS, 600 * timing.blockMs);
  ticks.push({
    name: "chart samples",
    group: "checks",
    everyMs: Math.min(60_000, sampleMs),
    run: chartSampleTicker(ctx, enabled, sampleMs),
  });
  const pool = host.depositPool;
  if (pool) {
    // Idle (every pool above its low-water mark) it reads two keys per chain and commits nothing.
    ticks.push({
      name: "deposit pool",
      group: "checks",
      everyMs: timing.sweepMs,
      run: async () => {
        for (const chain of pool.chains) {
          const added = await pool.refill(chain);
          if (added > 0) ctx.log(`deposit pool ${chain}: ${added} addresses pre-derived for the api processes`);
        }
      },
    });
  }
  ticks.push({
    name: "housekeeping",
    group: "housekeeping",
    everyMs: 600_000,
    run: () => pruneExpiredLeases(ctx.kv, ctx.now().getTime(), LEASE_RECORD_KEPT_MS),
  });
  return ticks;
}

/**
 * One run of a chain's watcher: a step, or in a cron run steps until it is caught up or its time or byte budget is
 * spent. Every step that ends behind the tip stores its cursor (actors/watcher.ts), so a run that stops at its budget
 * leaves nothing in memory that the next run, in whatever isolate, needs.
 */
async function watchTick(host: TickHost, chain: ChainSymbol, b: Budget, leaseFor: () => Promise<number>) {
  const { ctx, timing } = host;
  let before: number | null = null;
  let read = 0;
  for (;;) {
    const r = await watchOnce(ctx, chain, host.owner, await leaseFor(), {
      batchCursorMs: timing.batchCursorMs,
      maxBytes: b.bytes - read,
      lagAlertMs: timing.lagAlertMs,
      rideOnLease: host.looks ? () => host.looks!.rideAlong(ctx.now().getTime()) : undefined,
    });
    read += r.bytes ?? 0;
    // A step that read the tip is a look, whether or not it found blocks (null: another process holds the lease).
    if (r.scannedTo !== null && !r.halted) host.looks?.note(chain, ctx.now().getTime(), r.scannedTo, r.lag ?? 0);
    // Caught up, not ours or halted: the next run goes on. Cron runs go on while blocks are left.
    if (!b.drain || r.scannedTo === null || r.scannedTo === before) return r;
    const spent = read >= b.bytes ? "byte" : outOfBudget(b) ? "time" : null;
    if (spent) {
      if (r.lag) {
        ctx.log(
          `watch ${chain}: this run stopped at its ${spent} budget (${(read / 2 ** 20).toFixed(0)} MiB read), ` +
            `${r.lag} blocks behind the tip at ${r.scannedTo}; its cursor is stored and the next run goes on`,
        );
      }
      return r;
    }
    before = r.scannedTo;
  }
}

/**
 * Gives outbox events their per-owner seq (kv/order_events.ts), one process at a time under a lease (the sequencer is
 * also safe without it). Idle: one read of the outbox, no commit. Cron: goes on while events are left.
 */
async function sequenceEventsTick(host: TickHost, b: Budget): Promise<number> {
  const { ctx } = host;
  if (!(await hasOutboxEvents(ctx.kv))) return 0;
  const ttl = Math.max(5_000, host.eventsMs * 20, b.drain ? host.timing.leaseMs : 0);
  if (!(await acquireLease(ctx.kv, "order-events", host.owner, ttl, ctx.now().getTime()))) return 0;
  let sequenced = 0;
  for (;;) {
    const n = await sequenceOrderEvents(ctx.kv, host.eventSinks);
    sequenced += n;
    if (!b.drain || n === 0 || outOfBudget(b)) return sequenced;
  }
}

/** A lease record expired this long ago (its process died, its chain was disabled) is deleted by housekeeping. */
export const LEASE_RECORD_KEPT_MS = 24 * 3600_000;

/**
 * Steps every order whose time has come. Loops: wakes them and returns (the runtime steps them with bounded
 * concurrency; the queue and the next sweep do the rest). Cron: waits for those steps and sweeps again, since a step
 * often makes the next one due at once (pending -> processing -> minting), until none is due or the budget is spent.
 */
export async function sweepDueOrders(host: TickHost, b: Budget): Promise<number> {
  let woken = 0;
  for (;;) {
    const due = await listDue(host.ctx.kv, host.ctx.now().getTime(), 500);
    const fresh = due.filter(({ orderId }) => !host.isInFlight(orderId));
    for (const { orderId } of fresh) host.wake(orderId);
    woken += fresh.length;
    if (!b.drain || fresh.length === 0 || outOfBudget(b)) return woken;
    await host.settle(b.deadline);
  }
}

/**
 * A simulated chain's block, made lazily: only while a transaction waits on that chain for a block, or while the
 * pipeline waits for something (an order not ended, a sweep or consolidation open) whose confirmations need blocks.
 * An idle sim chain makes none, and costs no commit.
 */
async function simBlocksTick(host: TickHost, chain: ChainSymbol, waiting: () => Promise<boolean>) {
  const pending = host.hasPending ? await host.hasPending(chain) : true;
  if (!pending && !(await waiting())) return "idle";
  const ttl = Math.max(host.timing.blockMs * 5, 50);
  if (!(await acquireLease(host.ctx.kv, `sim-blocks:${chain}`, host.owner, ttl, host.ctx.now().getTime()))) {
    return "not ours";
  }
  return await host.produceBlock!(chain);
}

/**
 * Whether the pipeline waits for anything that needs blocks and short leases: an order not ended (the due index),
 * a deposit to sweep, an open consolidation, a transaction waiting for a sim block. Read-only, remembered for a
 * moment so many ticks share one look.
 */
function workWaiting(host: TickHost): () => Promise<boolean> {
  let cached: { at: number; value: Promise<boolean> } | null = null;
  const look = async () => {
    const kv = host.ctx.kv;
    const any = async (prefix: Deno.KvKey) => {
      for await (const _ of kv.list({ prefix }, { limit: 1 })) return true;
      return false;
    };
    if (await any(["pipeline_due"])) return true;
    for (const chain of host.ctx.settings.enabledChains) {
      const family = chainFamily(chain);
      if (family.family === "account" && (await any(["treasury_sweep_due", chain]))) return true;
      if (family.family === "utxo" && (await kv.get(openConsolidationKey(family.chain))).value !== null) return true;
      if (isNativeChain(chain) && (await kv.get(openColdSweepKey(chain))).value !== null) return true;
    }
    if (await any(["onchain_burn_open"])) return true; // a burn batch waits for its confirmations
    if (host.hasPending) {
      for (const chain of host.blockChains) if (await host.hasPending(chain)) return true;
    }
    return false;
  };
  return () => {
    // The pipeline's clock, not the wall clock: a test that moves it sees a fresh look.
    const now = host.ctx.now().getTime();
    const freshFor = Math.min(host.timing.sweepMs, 1000);
    if (!cached || now - cached.at > freshFor) cached = { at: now, value: look() };
    return cached.value;
  };
}

/**
 * Reports (logs, writes nothing) what an operator should look at: leases past their expiry whose holder has not come
 * back (a crashed process; another one takes the lease on its next tick), and orders due longer ago than
 * `stuckAfterMs` that no process has stepped.
 */
async function checks(host: TickHost) {
  const { ctx, timing } = host;
  const now = ctx.now().getTime();
  const stale = (await listLeases(ctx.kv)).filter(({ lease }) => lease.expiresAt < now - timing.leaseMs);
  const overdue = await listDue(ctx.kv, now - timing.stuckAfterMs, 100);
  if (overdue.length > 0) {
    ctx.log(
      `checks: ${overdue.length}${overdue.length === 100 ? "+" : ""} order(s) due for more than ` +
        `${Math.round(timing.stuckAfterMs / 60_000)} min and not stepped (oldest ${overdue[0].orderId}); ` +
        "is a pipeline process running?",
    );
  }
  return { staleLeases: stale.length, overdueOrders: overdue.length };
}
