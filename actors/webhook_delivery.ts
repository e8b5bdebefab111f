/**
 * The webhook delivery worker (docs/webhooks.md): a loop of the pipeline runtime that attempts due deliveries
 * (kv/webhooks.ts). Each attempt is claimed under a lease in KV (the delivery's due entry moves to the lease's end),
 * so two processes never send the same attempt at once and a process that dies mid-attempt leaves a delivery that
 * becomes due again when its lease ends: nothing is lost across restarts. Only the first unfinished delivery of an
 * (endpoint, order) pair is attempted; the others wait until it is delivered or finally failed. The worker has its own
 * concurrency limits (in all and per endpoint) and a timeout per request, and order actors never wait on it.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { type Log, redactUrls } from "../chains/shared/redact.ts";
import {
  DELIVERY_RETENTION_MS,
  type DeliveryAttempt,
  dueKey,
  dueOfEndpoint,
  getDelivery,
  getEndpoint,
  nextDueEndpoint,
  queueHead,
  queueKey,
  signingSecrets,
  type WebhookDelivery,
  withAttempt,
} from "../kv/webhooks.ts";

export interface WebhookDeliveryOptions {
  /** How often the due index is read. */
  pollMs: number;
  /** Requests in flight at once in this process. */
  concurrency: number;
  /**
   * Requests in flight at once to one endpoint, so one slow endpoint cannot take every slot; an endpoint whose last
   * attempt failed or took over `SLOW_MS` gets `SLOW_PER_ENDPOINT` until an attempt is quick and accepted again.
   */
  perEndpoint: number;
  /** Per request; no answer by then is a failed attempt. */
  timeoutMs: number;
  /** The first retry waits about this long, each next one twice as long (with jitter), up to `backoffMaxMs`. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A delivery still failing this long after its first attempt is finally failed. */
  giveUpMs: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookDeliveryOptions = {
  pollMs: 250,
  concurrency: 256,
  perEndpoint: 8,
  timeoutMs: 10_000,
  backoffBaseMs: 10_000,
  backoffMaxMs: 3600_000,
  giveUpMs: 24 * 3600_000,
};

const encoder = new TextEncoder();
/** Endpoints with due entries looked at by one scan, at most (the next scan goes on from there). */
const MAX_ENDPOINTS_PER_SCAN = 200;
/** An attempt slower than this (or failed) marks its endpoint slow: `SLOW_PER_ENDPOINT` requests at once to it. */
const SLOW_MS = 1000;
const SLOW_PER_ENDPOINT = 2;
const MAX_SLOW_REMEMBERED = 10_000;

/** `v1` of `Webhook-Signature`: hex HMAC-SHA256 keyed with the secret string over `${timestamp}.${rawBody}`. */
export function signPayload(secret: string, timestamp: number, rawBody: string): string {
  return bytesToHex(hmac(sha256, encoder.encode(secret), encoder.encode(`${timestamp}.${rawBody}`)));
}

/** The retry delay after `attempts` failed attempts: base * 2^(attempts-1), capped, times a jitter in [0.8, 1.2]. */
export function backoffMs(attempts: number, base: number, max: number, random: () => number = Math.random): number {
  const plain = Math.min(max, base * 2 ** Math.min(40, Math.max(0, attempts - 1)));
  return Math.max(1, Math.min(max, Math.round(plain * (0.8 + 0.4 * random()))));
}

export class WebhookDeliveryWorker {
  /** The worker's clock (ms), injectable so tests can pass 24 hours at once; order actors keep theirs. */
  now: () => number = Date.now;
  /** Counters for benchmarks and operators. */
  delivered = 0;
  failed = 0;
  attempts = 0;

  readonly #inFlight = new Set<string>();
  readonly #perEndpoint = new Map<string, number>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  #kicked = false;
  #scanning = false;
  /** Endpoints whose last attempt was slow or failed (see `SLOW_MS`). */
  readonly #slow = new Set<string>();
  /** The endpoint the last scan stopped at; the next one starts after it. */
  #cursor: string | null = null;
  #again = false;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly holder: string,
    readonly opts: WebhookDeliveryOptions,
    private readonly log: Log,
  ) {}

  /**
   * Starts attempts of due deliveries, up to the limits; returns without waiting for them. Calls that overlap one in
   * progress make it scan once more instead of scanning beside it.
   */
  async tick(): Promise<void> {
    if (this.#scanning) {
      this.#again = true;
      return;
    }
    this.#scanning = true;
    try {
      do {
        this.#again = false;
        await this.#scan();
      } while (this.#again && !this.#stop.signal.aborted);
    } finally {
      this.#scanning = false;
    }
  }

  /**
   * Visits the endpoints that have due entries, from where the last scan stopped and around (fairness when slots are
   * few), at most `MAX_ENDPOINTS_PER_SCAN` of them, and starts their due deliveries while slots are free.
   */
  async #scan(): Promise<void> {
    const start = this.#cursor;
    let cursor = start;
    let wrapped = false;
    for (let visited = 0; visited < MAX_ENDPOINTS_PER_SCAN; visited++) {
      if (this.#stop.signal.aborted || this.#inFlight.size >= this.opts.concurrency) break;
      const endpointId = await nextDueEndpoint(this.kv, cursor);
      if (endpointId === null) {
        if (wrapped || start === null) break;
        wrapped = true;
        cursor = null;
        visited--;
        continue;
      }
      if (wrapped && start !== null && endpointId > start) break; // around once
      cursor = endpointId;
      const limit = this.#limitOf(endpointId);
      if ((this.#perEndpoint.get(endpointId) ?? 0) >= limit) continue;
      const due = await dueOfEndpoint(this.kv, endpointId, this.now(), limit);
      for (const { deliveryId, dueAt } of due) {
        if (this.#inFlight.size >= this.opts.concurrency) break;
        if ((this.#perEndpoint.get(endpointId) ?? 0) >= limit) break;
        if (!this.#inFlight.has(deliveryId)) this.#start(endpointId, deliveryId, dueAt);
      }
    }
    this.#cursor = cursor;
  }

  #limitOf(endpointId: string): number {
    return this.#slow.has(endpointId) ? Math.min(SLOW_PER_ENDPOINT, this.opts.perEndpoint) : this.opts.perEndpoint;
  }

  #start(endpointId: string, deliveryId: string, dueAt: number) {
    this.#inFlight.add(deliveryId);
    this.#perEndpoint.set(endpointId, (this.#perEndpoint.get(endpointId) ?? 0) + 1);
    const task = this.#process(endpointId, deliveryId, dueAt)
      .catch((err) => this.log(`webhook delivery ${deliveryId}: attempt crashed; it will be retried`, err))
      .finally(() => {
        this.#inFlight.delete(deliveryId);
        const left = (this.#perEndpoint.get(endpointId) ?? 1) - 1;
        if (left > 0) this.#perEndpoint.set(endpointId, left);
        else this.#perEndpoint.delete(endpointId);
        this.#tasks.delete(task);
        this.#kick();
      });
    this.#tasks.add(task);
  }

  /** A freed slot looks for more work at once instead of at the next poll (bursts and ordered chains). */
  #kick() {
    if (this.#kicked || this.#stop.signal.aborted) return;
    this.#kicked = true;
    setTimeout(() => {
      this.#kicked = false;
      if (this.#stop.signal.aborted) return;
      const tick = this.tick().catch((err) => this.log("webhook deliveries: tick failed; retrying", err));
      this.#tasks.add(tick);
      tick.finally(() => this.#tasks.delete(tick));
    }, 0);
  }

  /**
   * Waits until no attempt runs here (kicked follow-ups included), or until `deadline` (a `performance.now()` time):
   * a cron run awaits the attempts it started, since a Deploy isolate may end once the handler returns.
   */
  async settle(deadline: number): Promise<void> {
    while (this.#tasks.size > 0 && !this.#stop.signal.aborted) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...this.#tasks]),
        new Promise((r) => (timer = setTimeout(r, left))),
      ]);
      clearTimeout(timer);
    }
  }

  /** Aborts requests in flight (their deliveries become due again when their leases end) and waits for the tasks. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.allSettled([...this.#tasks]);
  }

  async #process(endpointId: string, deliveryId: string, listedDueAt: number): Promise<void> {
    const kv = this.kv;
    const entry = await getDelivery(kv, endpointId, deliveryId);
    const d = entry.value;
    if (!d || d.state !== "pending" || d.dueAt !== listedDueAt) {
      // A stale due entry (the delivery moved on): drop it unless the delivery changed meanwhile.
      await kv.atomic().check(entry).delete(dueKey(endpointId, listedDueAt, deliveryId)).commit();
      return;
    }
    const now = this.now();
    if (d.dueAt > now) return;

    // Ordering: only the first unfinished delivery of this order to this endpoint is attempted.
    const [head] = await queueHead(kv, endpointId, d.orderId);
    if (head && head.value !== d.id) {
      const waiting: WebhookDelivery = { ...d, dueAt: null, lease: null };
      await kv.atomic().check(entry).check(head).set(entry.key, waiting).delete(dueKey(endpointId, d.dueAt, d.id))
        .commit();
      return;
    }

    const endpoint = await getEndpoint(kv, d.owner, endpointId);
    if (!endpoint) {
      await this.#finish(entry as Deno.KvEntry<WebhookDelivery>, { ...d, state: "failed" }, d.dueAt);
      return;
    }

    // Claim under a lease: the due entry moves to the lease's end, so a crash leaves the delivery due again then.
    const leaseUntil = now + this.opts.timeoutMs + 30_000;
    const claimed: WebhookDelivery = { ...d, dueAt: leaseUntil, lease: { holder: this.holder, until: leaseUntil } };
    const claim = await kv.atomic()
      .check(entry)
      .set(entry.key, claimed)
      .delete(dueKey(endpointId, d.dueAt, d.id))
      .set(dueKey(endpointId, leaseUntil, d.id), null)
      .commit();
    if (!claim.ok) return; // another worker has it

    const attempt = await this.#send(d, endpoint.url, signingSecrets(endpoint, now), now);
    this.attempts++;
    const after = this.now();
    let next = withAttempt(claimed, attempt);
    const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
    if (ok && attempt.latencyMs < SLOW_MS) this.#slow.delete(endpointId);
    else if (!this.#stop.signal.aborted) {
      if (this.#slow.size >= MAX_SLOW_REMEMBERED) this.#slow.clear();
      this.#slow.add(endpointId);
    }
    if (ok) {
      next = { ...next, state: "delivered" };
    } else if (after - Date.parse(next.firstAttemptAt!) >= this.opts.giveUpMs) {
      next = { ...next, state: "failed" };
    } else {
      const due = after + backoffMs(next.attemptCount, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
      next = { ...next, dueAt: due, lease: null };
    }
    const done = await this.#finish(
      { key: entry.key, value: claimed, versionstamp: claim.versionstamp },
      next,
      leaseUntil,
    );
    if (done && next.state === "delivered") this.delivered++;
    else if (done && next.state === "failed") this.failed++;
  }

  /**
   * Records `next` (pending with a new due time, or finished) in place of the claimed delivery. A finished delivery
   * leaves its order's queue and the next delivery of that order to this endpoint, if it waits, becomes due now.
   * False when the claim was lost (another worker took the delivery after the lease ended).
   */
  async #finish(claimed: Deno.KvEntry<WebhookDelivery>, next: WebhookDelivery, dueAt: number): Promise<boolean> {
    const kv = this.kv;
    for (let tries = 0; tries < 20; tries++) {
      const atomic = kv.atomic().check(claimed).delete(dueKey(next.endpointId, dueAt, next.id));
      if (next.state === "pending") {
        atomic.set(claimed.key, next).set(dueKey(next.endpointId, next.dueAt!, next.id), null);
      } else {
        const now = this.now();
        const final = { ...next, dueAt: null, lease: null, finishedAt: new Date(now).toISOString() };
        atomic.set(claimed.key, final, { expireIn: DELIVERY_RETENTION_MS }).delete(queueKey(next));
        const following = (await queueHead(kv, next.endpointId, next.orderId, 2)).find((e) => e.value !== next.id);
        if (following) {
          const n = await getDelivery(kv, next.endpointId, following.value);
          // Checked whatever its state: a delivery that starts waiting meanwhile makes this commit retry.
          atomic.check(n);
          if (n.value && n.value.state === "pending" && n.value.dueAt === null) {
            atomic.set(n.key, { ...n.value, dueAt: now }).set(dueKey(n.value.endpointId, now, n.value.id), null);
          }
        }
      }
      if ((await atomic.commit()).ok) return true;
      const current = await kv.get(claimed.key);
      if (current.versionstamp !== claimed.versionstamp) {
        this.log(`webhook delivery ${next.id}: lease lost before the attempt was recorded`);
        return false;
      }
    }
    throw new Error(`webhook delivery ${next.id}: could not record the attempt`);
  }

  async #send(d: WebhookDelivery, url: string, secrets: string[], nowMs: number): Promise<DeliveryAttempt> {
    const body = JSON.stringify(d.event);
    const t = Math.floor(nowMs / 1000);
    const signature = [`t=${t}`, ...secrets.map((s) => `v1=${signPayload(s, t, body)}`)].join(",");
    const at = new Date(nowMs).toISOString();
    const started = performance.now();
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "issuance-webhooks/1",
          "Webhook-Id": d.event.id,
          "Webhook-Delivery-Id": d.id,
          "Webhook-Timestamp": String(t),
          "Webhook-Signature": signature,
        },
        body,
        redirect: "manual",
        signal: AbortSignal.any([timeout, this.#stop.signal]),
      });
      await res.body?.cancel();
      return { at, status: res.status, error: null, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      const latencyMs = Math.round(performance.now() - started);
      const error = timeout.aborted
        ? `timeout after ${this.opts.timeoutMs} ms`
        : this.#stop.signal.aborted
        ? "aborted: the service stopped"
        : `request failed: ${redactUrls(err instanceof Error ? err.message : String(err))}`;
      return { at, status: null, error, latencyMs };
    }
  }
}
