/**
 * Runs the pipeline in one process: the order actors (woken by the KV queue doorbell and by a periodic sweep of the
 * due index), one watcher per enabled chain under a lease, and the block producers of simulated chains. KV state is
 * the truth; the queue only makes things fast. Without `kv.listenQueue` (KV Connect, Deploy) the sweep alone drives
 * everything.
 *
 * The periodic work is the tick list of actors/ticks.ts. `start()` (a long-running process) runs each tick in its own
 * `setTimeout` loop; `startCronOnly()` (Deno Deploy, the cron-only test) starts no timer and no queue listener, and
 * `runGroup` runs a group's ticks for one cron invocation (actors/cron.ts). A tick never runs twice at once in one
 * process: a cron run finding its loop's run in flight waits for that run instead.
 */
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import type { PipelineContext } from "./context.ts";
import { stepOrder } from "./order_actor.ts";
import { WAKE, type WakeMessage } from "./wake.ts";
import { flushWatchCursors } from "./watcher.ts";
import { releaseLeases } from "../kv/pipeline.ts";
import { lookRecordMs, WatcherLookRecorder } from "./watcher_looks.ts";
import { DEFAULT_UNWATCHED_AFTER_MS } from "../config/watch_plan.ts";
import { type WebhookDeliveryOptions, WebhookDeliveryWorker } from "./webhook_delivery.ts";
import type { EventSink } from "../kv/order_events.ts";
import {
  type Budget,
  budget,
  pipelineTicks,
  type Tick,
  type TickGroup,
  type TickHost,
  type TickTiming,
} from "./ticks.ts";

export const ALL_CHAINS: ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];

export interface RuntimeOptions {
  /** Identifies this process in leases. */
  id: string;
  sweepMs: number;
  watchMs: number;
  /** Steps running at once in this process. */
  concurrency: number;
  /** Sim mode: seals a block on `chain`; called every `blockMs` under a lease, so one process produces blocks. */
  produceBlock?: (chain: ChainSymbol) => Promise<unknown>;
  /** Sim mode: whether `chain` has transactions waiting for a block (the producer is lazy without them). */
  hasPending?: (chain: ChainSymbol) => Promise<boolean>;
  /** The chains `produceBlock` runs for (the simulated ones). */
  blockChains?: ChainSymbol[];
  blockMs?: number;
  useQueue: boolean;
  /** Webhook deliveries (actors/webhook_delivery.ts): a tick of their own; unset, none are attempted. */
  webhooks?: WebhookDeliveryOptions;
  /** What reacts to each order event in the sequencer's atomic (kv/order_events.ts): webhook deliveries. */
  eventSinks?: EventSink[];
  /** How often the order event sequencer looks at the outbox (idle: one read, no commit); default 50 ms. */
  eventsMs?: number;
  /** Leases while work waits (default 10 x watchMs). */
  leaseMs?: number;
  /** Leases while nothing waits (default 120 s: an idle holder renews once a minute). */
  idleLeaseMs?: number;
  /** A watcher with nothing recorded stores its cursor at most this often (default 60 s). */
  batchCursorMs?: number;
  /** The chains whose watcher this process runs (config/watch_plan.ts `WATCH_CHAINS`); unset, every enabled one. */
  watchChains?: readonly ChainSymbol[];
  /** The time budget of a cron run (`CRON_RUN_MS`); unset, actors/cron.ts `CRON_BUDGET_MS`. */
  cronRunMs?: number;
  /** Bytes one cron run of one chain's watcher may read (`WATCH_BYTES_PER_RUN`); unset, no byte budget. */
  watchBytesPerRun?: number;
  /** How long a watcher stays behind its threshold before `watcher_lagging` is raised (actors/watcher_lag.ts). */
  lagAlertMs?: number;
  /**
   * After how long without a look a chain is `unwatched` (WATCHER_UNWATCHED_SECONDS, config/watch_plan.ts): the
   * watchers' looks are stored every third of it, at most once a minute (actors/watcher_looks.ts); unset, 180 s.
   */
  unwatchedAfterMs?: number;
  /** ROLE=worker: the deposit pool's refill (actors/ticks.ts `TickHost.depositPool`). */
  depositPool?: TickHost["depositPool"];
}

/** The idle lease: renewed when half is left, so once a minute per chain. */
export const IDLE_LEASE_MS = 120_000;
/** How often an advanced cursor with nothing recorded is stored at most. */
export const BATCH_CURSOR_MS = 60_000;

export class PipelineRuntime {
  #running = false;
  /** Started by `startCronOnly`: nothing in memory outlives a cron run (a Deploy isolate may end after it). */
  #cronOnly = false;
  readonly #inFlight = new Map<string, boolean>(); // orderId -> woken again while running
  readonly #waiting: string[] = [];
  #active = 0;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #ticks = new Set<Promise<void>>();
  readonly #tickRuns = new Map<string, Promise<unknown>>();
  /** The budgets of the tick runs in flight: `stop()` spends them, so a cron run's drain ends at once. */
  readonly #budgets = new Set<Budget>();
  readonly #idleWaiters = new Set<() => void>();
  /** Steps completed by this process, for benchmarks and operators. */
  steps = 0;
  /** The periodic work (actors/ticks.ts), run by the loops of `start()` or by cron through `runGroup`. */
  readonly ticks: Tick[];
  /** The webhook delivery worker (its clock is injectable for tests); null without `opts.webhooks`. */
  readonly webhooks: WebhookDeliveryWorker | null;
  /** The watchers' looks (actors/watcher_looks.ts), read by the dashboard's health. */
  readonly looks: WatcherLookRecorder;

  constructor(private readonly ctx: PipelineContext, private readonly opts: RuntimeOptions) {
    this.webhooks = opts.webhooks ? new WebhookDeliveryWorker(ctx.kv, opts.id, opts.webhooks, ctx.log) : null;
    this.looks = new WatcherLookRecorder(
      ctx.kv,
      opts.id,
      lookRecordMs(opts.unwatchedAfterMs ?? DEFAULT_UNWATCHED_AFTER_MS),
      ctx.log,
    );
    const timing: TickTiming = {
      watchMs: opts.watchMs,
      sweepMs: opts.sweepMs,
      blockMs: opts.blockMs ?? 1000,
      leaseMs: opts.leaseMs ?? opts.watchMs * 10,
      // Two minutes (renewed once a minute), shorter with fast sim blocks (tests): 120 blocks' time.
      idleLeaseMs: opts.idleLeaseMs ??
        Math.max(Math.min(IDLE_LEASE_MS, 120 * (opts.blockMs ?? 1000)), opts.leaseMs ?? opts.watchMs * 10),
      // At most a minute, and at most 100 blocks of a fast sim chain: what a crash makes a watcher rescan.
      batchCursorMs: opts.batchCursorMs ?? Math.min(BATCH_CURSOR_MS, 100 * (opts.blockMs ?? 1000)),
      stuckAfterMs: 15 * 60_000,
      lagAlertMs: opts.lagAlertMs,
    };
    const host: TickHost = {
      ctx,
      owner: opts.id,
      timing,
      produceBlock: opts.produceBlock,
      hasPending: opts.hasPending,
      eventSinks: opts.eventSinks ?? [],
      eventsMs: opts.eventsMs ?? 50,
      webhooks: this.webhooks,
      blockChains: opts.blockChains ?? ALL_CHAINS,
      watchChains: opts.watchChains,
      depositPool: opts.depositPool,
      looks: this.looks,
      wake: (orderId) => this.wake(orderId),
      isInFlight: (orderId) => this.#inFlight.has(orderId),
      settle: (deadline) => this.#settle(deadline),
    };
    this.ticks = pipelineTicks(host);
  }

  /** A long-running process: every tick in its own loop, and the queue doorbell when the KV has one. */
  start() {
    if (this.#running) return;
    this.#running = true;
    if (this.opts.useQueue) {
      // The handler only rings the doorbell and returns: long work never runs inside a queue delivery.
      this.ctx.kv.listenQueue((msg: unknown) => {
        const m = msg as WakeMessage;
        if (m?.kind === WAKE && typeof m.orderId === "string") this.wake(m.orderId);
      }).catch((err) => this.#running && this.ctx.log("queue listener stopped", err));
    }
    for (const tick of this.ticks) {
      this.#loop(tick.name, tick.everyMs, () => this.#runTick(tick, tick.everyMs, false));
    }
  }

  /** Deno Deploy and the cron-only test: no timer, no queue listener; cron runs the ticks through `runGroup`. */
  startCronOnly() {
    this.#running = true;
    this.#cronOnly = true;
    this.looks.onlyWhenForced = true;
  }

  /** The time budget of this process's cron runs (`CRON_RUN_MS`), when configured. */
  get cronRunMs(): number | undefined {
    return this.opts.cronRunMs;
  }

  /**
   * One cron invocation of a group: its ticks at once, each draining its work until done or `budgetMs` is spent (a
   * watcher also until it has read `watchBytesPerRun`). Errors are logged per tick; the next invocation retries.
   */
  async runGroup(group: TickGroup, budgetMs: number): Promise<void> {
    if (!this.#running) return;
    const bytes = group === "watch" ? this.opts.watchBytesPerRun : undefined;
    await Promise.all(
      this.ticks.filter((t) => t.group === group).map(async (tick) => {
        try {
          await this.#runTick(tick, budgetMs, true, bytes);
        } catch (err) {
          if (this.#running) this.ctx.log(`${tick.name}: cron tick failed; the next one retries`, err);
        }
      }),
    );
    // Cron alone: the next run may be in a fresh isolate, so cursors kept in memory (batched) are stored now, or a
    // quiet chain's stored cursor would never move and every run would rescan from it.
    if (group === "watch" && this.#cronOnly && this.#running) {
      await flushWatchCursors(this.ctx, this.opts.id).catch((err) =>
        this.ctx.log("storing watcher cursors failed", err)
      );
      // Once a run (a minute): the next run's isolate does not remember when this one stored its looks.
      await this.looks.flush(this.ctx.now().getTime(), true);
    }
  }

  /** Runs `tick` unless it runs already in this process, in which case that run is awaited. */
  #runTick(tick: Tick, budgetMs: number, drain: boolean, bytes?: number): Promise<unknown> {
    const running = this.#tickRuns.get(tick.name);
    if (running) return running;
    const b = budget(budgetMs, drain, bytes);
    this.#budgets.add(b);
    const run = tick.run(b).finally(() => {
      this.#tickRuns.delete(tick.name);
      this.#budgets.delete(b);
    });
    this.#tickRuns.set(tick.name, run);
    return run;
  }

  /** Resolves when no step runs or waits here, or at `deadline` (a `performance.now()` time). */
  #settle(deadline: number): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - performance.now()));
      this.#idleWaiters.add(done);
    });
  }

  async stop() {
    this.#running = false;
    // Draining cron runs stop starting new work (`outOfBudget`), instead of going on for the rest of their budget.
    for (const b of this.#budgets) b.deadline = 0;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const orderId of this.#waiting.splice(0)) this.#inFlight.delete(orderId);
    await Promise.allSettled([...this.#ticks, ...this.#tickRuns.values()]);
    await this.webhooks?.stop();
    while (this.#active > 0) await new Promise((r) => setTimeout(r, 10));
    // Cursors scanned to but kept in memory (batched) are stored while this process still holds their leases.
    await flushWatchCursors(this.ctx, this.opts.id).catch((err) => this.ctx.log("storing watcher cursors failed", err));
    // Another process takes this one's chains on its next tick rather than when the leases expire.
    await releaseLeases(this.ctx.kv, this.opts.id).catch((err) => this.ctx.log("releasing leases failed", err));
  }

  /** Steps the order soon; a wake during its step makes it step once more afterwards. */
  wake(orderId: string) {
    if (!this.#running) return;
    if (this.#inFlight.has(orderId)) {
      this.#inFlight.set(orderId, true);
      return;
    }
    this.#inFlight.set(orderId, false);
    if (this.#active >= this.opts.concurrency) this.#waiting.push(orderId);
    else this.#run(orderId);
  }

  #run(orderId: string) {
    this.#active++;
    (async () => {
      try {
        for (;;) {
          await stepOrder(this.ctx, orderId);
          this.steps++;
          if (!this.#running || !this.#inFlight.get(orderId)) break;
          this.#inFlight.set(orderId, false);
        }
      } catch (err) {
        this.ctx.log(`order ${orderId}: step crashed; the sweep will retry it`, err);
      } finally {
        this.#inFlight.delete(orderId);
        this.#active--;
        const next = this.#waiting.shift();
        if (next !== undefined && this.#running) this.#run(next);
        else if (next !== undefined) this.#inFlight.delete(next);
        if (this.#active === 0) { for (const done of [...this.#idleWaiters]) done(); }
      }
    })();
  }

  #loop(name: string, everyMs: number, work: () => Promise<unknown>) {
    const tick = async () => {
      try {
        await work();
      } catch (err) {
        if (this.#running) this.ctx.log(`${name}: tick failed; retrying`, err);
      }
    };
    const schedule = (delay: number) => {
      const t = setTimeout(() => {
        this.#timers.delete(t);
        if (!this.#running) return;
        const p = tick().finally(() => {
          this.#ticks.delete(p);
          if (this.#running) schedule(everyMs);
        });
        this.#ticks.add(p);
      }, delay);
      this.#timers.add(t);
    };
    schedule(0);
  }
}
