// The process's lifecycle, shared by the shutdown sequence (actors/shutdown.ts) and the probes that report it
// (routes/health.ts). It sits in actors/ because routes import actors, never the reverse (docs/architecture.md
// "Layout").
export type ReadinessState = "starting" | "ready" | "stopping";

/**
 * The process's lifecycle as /readyz reports it: starting -> ready -> stopping, never back. `stopping` is aborted when
 * shutdown begins: long-lived work (an SSE stream, a cron handler) listens to it to end early, since the HTTP server
 * waits for every open response before it closes.
 */
export class Readiness {
  #state: ReadinessState;
  readonly #stopping = new AbortController();
  constructor(state: ReadinessState = "starting") {
    this.#state = state;
  }
  get state(): ReadinessState {
    return this.#state;
  }
  /** Aborted once shutdown begins. */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }
  /** Services built and pipeline started: ready (unless already stopping). */
  markReady() {
    if (this.#state === "starting") this.#state = "ready";
  }
  markStopping() {
    this.#state = "stopping";
    this.#stopping.abort();
  }
}
