/**
 * The watchers' looks, kept in memory and stored at most once per `recordMs` per process in one commit for all its
 * chains (kv/watcher_looks.ts). This is the dashboard's "is anybody watching" signal at rest: an idle watcher takes
 * no lease and commits nothing (actors/watcher.ts `WatchOptions`), so the lease alone cannot say it. KV cost: one
 * commit per `recordMs` per process (60 s by default: bench/idle.ts's goal of at most one commit per minute per
 * process at rest), none while no watcher looked since the last one.
 *
 * When a watcher renews its lease anyway (a live chain making blocks renews once a minute), the looks ride on that
 * commit (`rideAlong`), and while they do a record of their own waits half a period longer than usual, so it does not
 * race the next renewal: such a process also commits once a minute, not twice. The record is then at most 1.5 periods
 * old, still within the unwatched time with one write lost.
 *
 * `recordMs` is a third of the time after which a chain nobody looked at is `unwatched` (WATCHER_UNWATCHED_SECONDS,
 * config/watch_plan.ts), at most 60 s: a healthy process's record is never older than that time at a reader, even
 * with one write lost.
 */
import type { ChainSymbol } from "../chains/catalog.ts";
import { addWatcherLooks, type ChainLook, type WatcherLooks, writeWatcherLooks } from "../kv/watcher_looks.ts";

/** The longest period between two records of one process. */
export const MAX_LOOK_RECORD_MS = 60_000;

export function lookRecordMs(unwatchedAfterMs: number): number {
  return Math.min(MAX_LOOK_RECORD_MS, Math.max(1_000, Math.floor(unwatchedAfterMs / 3)));
}

export class WatcherLookRecorder {
  readonly #looks = new Map<ChainSymbol, ChainLook>();
  /** Chains looked at and in no record yet: stored at the next tick, so a process that starts is watched at once. */
  readonly #unwritten = new Set<ChainSymbol>();
  #fresh = false;
  #writtenAt = -Infinity;
  /** When the looks last rode on another commit. */
  #rodeAt = -Infinity;
  #writing: Promise<void> | null = null;
  /**
   * Cron alone (actors/runtime.ts `startCronOnly`): the ticks of a run do not store the looks, the run does once at its
   * end (`flush(now, true)`), so a run with every chain's look costs one commit, not one per chain that finished first.
   */
  onlyWhenForced = false;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly owner: string,
    private readonly recordMs: number,
    private readonly log: (msg: string, err?: unknown) => void,
  ) {}

  /** A watcher step of `chain` that read the tip (it held the lease, or found nothing new without it). */
  note(chain: ChainSymbol, nowMs: number, scannedTo: number, lag: number) {
    if (!this.#looks.has(chain)) this.#unwritten.add(chain);
    this.#looks.set(chain, { at: new Date(nowMs).toISOString(), scannedTo, lag });
    this.#fresh = true;
  }

  /**
   * The looks to add to a commit the caller makes anyway, when something was looked at since the last record; call
   * `committed` once that commit succeeded. Undefined when there is nothing new (or in cron runs, which store at
   * their end).
   */
  rideAlong(nowMs: number): { add(op: Deno.AtomicOperation): void; committed(): void } | undefined {
    if (this.onlyWhenForced || this.#writing || !this.#fresh) return undefined;
    const record = this.#record(nowMs);
    const including = [...this.#unwritten];
    return {
      add: (op) => addWatcherLooks(op, record),
      committed: () => {
        this.#writtenAt = nowMs;
        this.#rodeAt = nowMs;
        this.#fresh = false;
        for (const chain of including) this.#unwritten.delete(chain);
      },
    };
  }

  #record(nowMs: number): WatcherLooks {
    return { owner: this.owner, at: new Date(nowMs).toISOString(), chains: Object.fromEntries(this.#looks) };
  }

  /**
   * Stores the looks when something was looked at since the last record and that record is `recordMs` old, a chain is
   * in none yet, or `force`.
   */
  async flush(nowMs: number, force = false): Promise<void> {
    if (this.onlyWhenForced && !force) return;
    if (this.#writing) return await this.#writing;
    // While the looks ride on lease renewals, a record of their own waits for a renewal that did not come.
    const period = nowMs - this.#rodeAt <= this.recordMs * 1.5 ? this.recordMs * 1.5 : this.recordMs;
    if (!this.#fresh || (!force && this.#unwritten.size === 0 && nowMs - this.#writtenAt < period)) return;
    this.#fresh = false;
    const including = [...this.#unwritten];
    this.#unwritten.clear();
    this.#writing = writeWatcherLooks(this.kv, this.#record(nowMs))
      .then(() => {
        this.#writtenAt = nowMs;
      })
      .catch((err) => {
        this.#fresh = true;
        for (const chain of including) this.#unwritten.add(chain);
        this.log("storing the watchers' looks failed; the next tick retries", err);
      })
      .finally(() => {
        this.#writing = null;
      });
    await this.#writing;
  }
}
