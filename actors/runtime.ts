/**
 * Runs the pipeline in one process: the order actors (woken by the KV queue doorbell and by a periodic sweep of the
 * due index), one watcher per enabled chain under a lease, and the block producers of simulated chains. KV state is
 * the truth; the queue only makes things fast. Without `kv.listenQueue` (KV Connect, Deploy) the sweep alone drives
 * everything.
 */
import { type ChainSymbol, EVM_CHAINS, isNativeChain, NATIVE_CHAINS } from "../chains/catalog.ts";
import { acquireLease } from "../kv/pipeline.ts";
import { listDue } from "../kv/pipeline.ts";
import type { PipelineContext } from "./context.ts";
import { stepOrder, WAKE, type WakeMessage } from "./order_actor.ts";
import { watchOnce } from "./watcher.ts";
import { treasuryTick } from "./sweeper.ts";
import { type WebhookDeliveryOptions, WebhookDeliveryWorker } from "./webhook_delivery.ts";
import { type EventSink, hasOutboxEvents, sequenceOrderEvents } from "../kv/order_events.ts";

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
  /** The chains `produceBlock` runs for (the simulated ones). */
  blockChains?: ChainSymbol[];
  blockMs?: number;
  useQueue: boolean;
  /** Webhook deliveries (actors/webhook_delivery.ts): a worker loop of its own; unset, none are attempted. */
  webhooks?: WebhookDeliveryOptions;
  /** What reacts to each order event in the sequencer's atomic (kv/order_events.ts): webhook deliveries. */
  eventSinks?: EventSink[];
  /** How often the order event sequencer looks at the outbox (idle: one read); default 50 ms. */
  eventsMs?: number;
}

export class PipelineRuntime {
  #running = false;
  readonly #inFlight = new Map<string, boolean>(); // orderId -> woken again while running
  readonly #waiting: string[] = [];
  #active = 0;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #ticks = new Set<Promise<void>>();
  /** Steps completed by this process, for benchmarks and operators. */
  steps = 0;
  /** The webhook delivery worker (its clock is injectable for tests); null without `opts.webhooks`. */
  readonly webhooks: WebhookDeliveryWorker | null;

  constructor(private readonly ctx: PipelineContext, private readonly opts: RuntimeOptions) {
    this.webhooks = opts.webhooks ? new WebhookDeliveryWorker(ctx.kv, opts.id, opts.webhooks, ctx.log) : null;
  }

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
    this.#loop("sweep", this.opts.sweepMs, () => this.#sweep());
    // A disabled chain has no watcher: nothing reads it, and nothing is simulated in its place.
    for (const chain of this.ctx.settings.enabledChains) {
      this.#loop(
        `watch ${chain}`,
        this.opts.watchMs,
        () => watchOnce(this.ctx, chain, this.opts.id, this.opts.watchMs * 10),
      );
    }
    // Sweeps fund the hot wallet from minted deposits (account chains) and open consolidations of a UTXO treasury are
    // followed to their end, one process per chain under a lease.
    for (const chain of this.ctx.settings.enabledChains) {
      if (!isNativeChain(chain)) continue;
      this.#loop(
        `treasury ${chain}`,
        this.opts.watchMs,
        () => treasuryTick(this.ctx, chain, this.opts.id, this.opts.watchMs * 10),
      );
    }
    const webhooks = this.webhooks;
    if (webhooks) this.#loop("webhooks", webhooks.opts.pollMs, () => webhooks.tick());
    // Order events get their per-owner seq from one process at a time (the sequencer is also safe without it).
    const eventsMs = this.opts.eventsMs ?? 50;
    this.#loop("order events", eventsMs, async () => {
      if (!(await hasOutboxEvents(this.ctx.kv))) return;
      if (!(await acquireLease(this.ctx.kv, "order-events", this.opts.id, Math.max(5_000, eventsMs * 20)))) return;
      await sequenceOrderEvents(this.ctx.kv, this.opts.eventSinks ?? []);
    });
    if (this.opts.produceBlock) {
      const produce = this.opts.produceBlock;
      const blockMs = this.opts.blockMs ?? 1000;
      for (const chain of this.opts.blockChains ?? ALL_CHAINS) {
        this.#loop(`blocks ${chain}`, blockMs, async () => {
          if (await acquireLease(this.ctx.kv, `sim-blocks:${chain}`, this.opts.id, blockMs * 5)) await produce(chain);
        });
      }
    }
  }

  // ---- the stop path (graceful shutdown, actors/shutdown.ts) ----

  /**
   * Stops scheduling and waits for the work in flight: no timer fires again, queued wakes are dropped (the sweep finds
   * their orders again after a restart), ticks and steps already running finish. Then the leases this process holds
   * are released, so the next process takes the watchers and block producers over at once instead of after expiry.
   */
  async stop() {
    this.#running = false;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const orderId of this.#waiting.splice(0)) this.#inFlight.delete(orderId);
    await Promise.allSettled([...this.#ticks]);
    await this.webhooks?.stop();
    while (this.#active > 0) await new Promise((r) => setTimeout(r, 10));
    await this.#releaseLeases().catch((err) => this.ctx.log("stop: leases not released; they expire", err));
  }

  /** Deletes the leases owned by this process (each only if unchanged since read: never a successor's). */
  async #releaseLeases() {
    for await (const e of this.ctx.kv.list<{ owner?: string }>({ prefix: ["lease"] })) {
      if (e.value?.owner === this.opts.id) await this.ctx.kv.atomic().check(e).delete(e.key).commit();
    }
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
      }
    })();
  }

  async #sweep() {
    const due = await listDue(this.ctx.kv, this.ctx.now().getTime(), 500);
    for (const { orderId } of due) if (!this.#inFlight.has(orderId)) this.wake(orderId);
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
