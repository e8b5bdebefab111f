/**
 * Graceful shutdown on SIGTERM and SIGINT, bounded in time.
 *
 * On the first signal: /readyz answers 503 (and `Readiness.stopping` aborts), the HTTP server stops accepting
 * connections and lets the requests in flight finish (responses still open after half the bound, such as event
 * streams, are cut), the pipeline runtime stops scheduling and lets the actor steps
 * and ticks in flight finish, then the flushes run (work batched in memory: cursors), the KV closes and the process
 * exits 0. If that takes longer than the bound, the process logs what it was still waiting for and exits 1: the work
 * in flight is abandoned exactly as a crash abandons it (every step is safe to interrupt, leases expire and the next
 * process resumes it). Signals received while shutting down change nothing.
 *
 * A signal that arrives while the service is still starting is remembered: shutdown begins as soon as `attach` hands
 * over the parts, and the bound counts from the signal.
 */
import type { Readiness } from "./readiness.ts";

/** Below Docker's and Kubernetes' default grace of 10 s before SIGKILL. */
export const SHUTDOWN_TIMEOUT_MS = 8_000;

export interface ShutdownParts {
  readiness: Readiness;
  /** The HTTP server (`Deno.serve`). */
  server: { shutdown(): Promise<void> };
  /** The pipeline runtime, null with PIPELINE=off. */
  runtime: { stop(): Promise<void> } | null;
  kv: Deno.Kv;
  /** Run in order once nothing runs any more, before the KV closes (e.g. batched cursor writes). */
  flush?: { name: string; run: () => Promise<unknown> }[];
}

export interface ShutdownOptions {
  timeoutMs?: number;
  log?: (line: string) => void;
  /** How long open HTTP responses may delay the rest of the shutdown; half the bound unless given. */
  httpGraceMs?: number;
  /** Ends the process; injectable for tests of this module. */
  exit?: (code: number) => void;
}

export class Shutdown {
  #parts: ShutdownParts | null = null;
  #signal: Deno.Signal | null = null;
  #began = 0;
  #done: Promise<number> | null = null;
  /** What the shutdown still waits for, named in the log line when the bound is exceeded. */
  #waiting: string[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #timeoutMs: number;
  readonly #httpGraceMs: number;
  readonly #log: (line: string) => void;
  readonly #exit: (code: number) => void;
  readonly #listeners: [Deno.Signal, () => void][] = [];

  constructor(opts: ShutdownOptions = {}) {
    this.#timeoutMs = opts.timeoutMs ?? SHUTDOWN_TIMEOUT_MS;
    this.#httpGraceMs = opts.httpGraceMs ?? this.#timeoutMs / 2;
    this.#log = opts.log ?? ((line) => console.error(line));
    this.#exit = opts.exit ?? ((code) => Deno.exit(code));
  }

  /** Listens for the signals (SIGTERM and SIGINT by default); call first thing, before the service starts. */
  listen(signals: Deno.Signal[] = ["SIGTERM", "SIGINT"]): this {
    for (const signal of signals) {
      const handler = () => this.signal(signal);
      try {
        Deno.addSignalListener(signal, handler);
        this.#listeners.push([signal, handler]);
      } catch { /* a signal this OS does not have (SIGTERM on Windows) */ }
    }
    return this;
  }

  /** Hands over what to stop; a signal received while starting begins the shutdown now. */
  attach(parts: ShutdownParts) {
    this.#parts = parts;
    if (this.#signal !== null) this.#begin();
  }

  /** Resolves with the exit code once a shutdown has run (for tests); null when none has begun. */
  get done(): Promise<number> | null {
    return this.#done;
  }

  /** What a received signal does (called by the listeners; tests call it directly). */
  signal(signal: Deno.Signal) {
    // Already shutting down: the bound ends it anyway. (`deno run --watch` passes one Ctrl-C on twice.)
    if (this.#signal !== null) return;
    this.#signal = signal;
    this.#began = performance.now();
    this.#log(`shutdown: ${signal} received; finishing in-flight work (at most ${this.#timeoutMs} ms)`);
    const timer = setTimeout(() => {
      this.#log(
        `shutdown: not done after ${this.#timeoutMs} ms (still waiting for: ${
          this.#waiting.join(", ") || "the service to finish starting"
        }); ` +
          "exiting 1, in-flight work abandoned (leases expire and the next process resumes it)",
      );
      this.#end(1);
    }, this.#timeoutMs);
    // The bound applies whatever happens; the timer must not keep an otherwise finished process alive.
    Deno.unrefTimer(timer);
    this.#timer = timer;
    if (this.#parts) this.#begin();
  }

  #begin() {
    if (this.#done) return;
    this.#done = this.#run(this.#parts!).then((code) => {
      this.#end(code);
      return code;
    });
  }

  #end(code: number) {
    clearTimeout(this.#timer);
    for (const [signal, handler] of this.#listeners.splice(0)) {
      try {
        Deno.removeSignalListener(signal, handler);
      } catch { /* gone */ }
    }
    this.#exit(code);
  }

  async #run(parts: ShutdownParts): Promise<number> {
    parts.readiness.markStopping();
    const track = async (name: string, work: () => Promise<unknown>) => {
      this.#waiting.push(name);
      try {
        await work();
      } catch (err) {
        this.#log(`shutdown: ${name} failed: ${err instanceof Error ? err.message : err}`);
        return false;
      } finally {
        this.#waiting = this.#waiting.filter((w) => w !== name);
      }
      return true;
    };
    // No new connections and no new steps; what is in flight finishes. Both need the KV, which closes last.
    const http = track("HTTP requests in flight", () => parts.server.shutdown());
    const runtime = parts.runtime ? track("actor steps and ticks in flight", () => parts.runtime!.stop()) : true;
    // The server waits for every open response, and a long-lived one (an event stream whose handler does not end it
    // on `readiness.stopping`) never ends: past the grace it is cut, as a crash would cut it, and clients reconnect.
    let grace: ReturnType<typeof setTimeout> | undefined;
    const httpDone = await Promise.race([
      http,
      new Promise<"open">((resolve) => (grace = setTimeout(() => resolve("open"), this.#httpGraceMs))),
    ]);
    clearTimeout(grace);
    if (httpDone === "open") {
      this.#log(`shutdown: HTTP responses still open after ${this.#httpGraceMs} ms (streams); closing without them`);
    }
    const runtimeDone = await runtime;
    let ok = httpDone !== false && runtimeDone;
    for (const f of parts.flush ?? []) ok = (await track(f.name, f.run)) && ok;
    ok = (await track("closing the KV", () => Promise.resolve(parts.kv.close()))) && ok;
    const ms = Math.round(performance.now() - this.#began);
    this.#log(`shutdown: ${ok ? "clean" : "done with errors"} after ${ms} ms; exiting ${ok ? 0 : 1}`);
    return ok ? 0 : 1;
  }
}
