/**
 * Webhooks (docs/webhooks.md): partners' endpoints, their signing secrets and the delivery records the fan-out writes
 * and the delivery worker (actors/webhook_delivery.ts) drives. docs/webhooks.md is the partner-facing description.
 *
 * Key layout:
 * - `["webhook_endpoint", owner, endpointId]` -> `WebhookEndpoint` (the secret included; never shown after creation).
 * - `["webhook_endpoints_version", owner]` -> a counter bumped by every registration and deletion: the fan-out checks
 *   it in the sequencer's atomic, so an event is never fanned out to a stale endpoint set.
 * - `["webhook_partner_endpoints", partnerId]` -> how many endpoints the partner's wallets have (KvU64), written in the
 *   commit that registers or deletes one: the per-partner limit reads one key, never the partner's wallets.
 * - `["webhook_delivery", endpointId, deliveryId]` -> `WebhookDelivery` (the delivery log; ids are UUIDv7, so the
 *   log lists in creation order). Finished deliveries expire after `DELIVERY_RETENTION_MS`.
 * - `["webhook_queue", endpointId, orderId, seq, sub]` -> deliveryId: the deliveries of one order to one endpoint not
 *   yet finished, in event order; only the first is ever attempted (ordering per order and endpoint).
 * - `["webhook_due", endpointId, dueAtMs, deliveryId]` -> null: when the delivery may next be attempted, per endpoint
 *   (so a slow endpoint's backlog never hides another endpoint's due deliveries from the worker's scan). A delivery
 *   waiting behind an earlier one of its order has `dueAt: null` and no due entry; the one before it puts it back.
 */
import { newOrderId } from "../model/order.ts";
import type { OrderEvent } from "./order_events.ts";

export const MAX_ENDPOINTS_PER_WALLET = 10;
/** Delivered and failed deliveries (and their log lines) are kept this long. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600_000;
/** After a rotation the previous secret keeps signing (a second `v1=`) this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600_000;
/** At most this many attempts are kept in a delivery's record (the newest). */
const MAX_ATTEMPTS_KEPT = 60;

export interface WebhookEndpoint {
  id: string;
  owner: string;
  /**
   * The partner whose token registered it, whose count it is in until deleted (even if an operator moves the wallet).
   * Absent on endpoints registered before partners were counted: they count for no one.
   */
  partnerId?: string;
  url: string;
  description: string | null;
  secret: string;
  /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
}

export type DeliveryState = "pending" | "delivered" | "failed";

export interface DeliveryAttempt {
  at: string;
  /** The HTTP status the endpoint answered; null when no answer came (`error` says why). */
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  owner: string;
  orderId: string;
  event: OrderEvent;
  /** A replay names the delivery it replays. */
  replayOf: string | null;
  /** Queue position within (endpoint, order): [event seq, replay sub-position]. */
  position: [number, number];
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  attemptCount: number;
  firstAttemptAt: string | null;
  /** When the next attempt may start (ms); null when waiting behind an earlier delivery of its order, or finished. */
  dueAt: number | null;
  /** Set while a worker holds the delivery (claim under a lease): no other may attempt it until `until`. */
  lease: { holder: string; until: number } | null;
  createdAt: string;
  finishedAt: string | null;
}

export const endpointKey = (owner: string, id: string): Deno.KvKey => ["webhook_endpoint", owner, id];
export const endpointsVersionKey = (owner: string): Deno.KvKey => ["webhook_endpoints_version", owner];
export const partnerEndpointsKey = (partnerId: string): Deno.KvKey => ["webhook_partner_endpoints", partnerId];
export const deliveryKey = (endpointId: string, id: string): Deno.KvKey => ["webhook_delivery", endpointId, id];
export const queueKey = (d: Pick<WebhookDelivery, "endpointId" | "orderId" | "position">): Deno.KvKey => [
  "webhook_queue",
  d.endpointId,
  d.orderId,
  d.position[0],
  d.position[1],
];
export const dueKey = (endpointId: string, dueAt: number, deliveryId: string): Deno.KvKey => [
  "webhook_due",
  endpointId,
  dueAt,
  deliveryId,
];

/** A new signing secret: `whsec_` and 32 random bytes in hex. The HMAC key is this whole string (UTF-8). */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return "whsec_" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The endpoint as the API shows it: everything but the secrets. */
export function toEndpointView(e: WebhookEndpoint, nowMs = Date.now()) {
  const rotating = e.previousSecretExpiresAt !== null && Date.parse(e.previousSecretExpiresAt) > nowMs;
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    createdAt: e.createdAt,
    previousSecretExpiresAt: rotating ? e.previousSecretExpiresAt : null,
  };
}

/** The delivery as the delivery log shows it. */
export function toDeliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    eventId: d.event.id,
    eventType: d.event.type,
    orderId: d.orderId,
    replayOf: d.replayOf,
    state: d.state,
    attemptCount: d.attemptCount,
    attempts: d.attempts,
    nextAttemptAt: d.state === "pending" && d.dueAt !== null ? new Date(d.lease?.until ?? d.dueAt).toISOString() : null,
    createdAt: d.createdAt,
    finishedAt: d.finishedAt,
  };
}

/** The secrets that sign now: the current one, and the previous one while its 24 hours run. */
export function signingSecrets(e: WebhookEndpoint, nowMs: number): string[] {
  const out = [e.secret];
  if (e.previousSecret && e.previousSecretExpiresAt && Date.parse(e.previousSecretExpiresAt) > nowMs) {
    out.push(e.previousSecret);
  }
  return out;
}

// ---- endpoints ----

export async function listEndpoints(kv: Deno.Kv, owner: string): Promise<WebhookEndpoint[]> {
  const out: WebhookEndpoint[] = [];
  for await (const e of kv.list<WebhookEndpoint>({ prefix: ["webhook_endpoint", owner] })) out.push(e.value);
  return out.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

export async function getEndpoint(kv: Deno.Kv, owner: string, id: string): Promise<WebhookEndpoint | null> {
  return (await kv.get<WebhookEndpoint>(endpointKey(owner, id))).value;
}

export type CreateEndpointResult =
  | { ok: true; endpoint: WebhookEndpoint }
  | { ok: false; limit: "wallet" | "partner" };

/**
 * Registers an endpoint of `owner` for `partner.id`, unless the owner has `MAX_ENDPOINTS_PER_WALLET` or the partner
 * `partner.max` (its count checked against the value read, so concurrent registrations never pass it).
 */
export async function createEndpoint(
  kv: Deno.Kv,
  owner: string,
  partner: { id: string; max: number },
  input: { url: string; description: string | null },
  now = new Date(),
): Promise<CreateEndpointResult> {
  for (;;) {
    const [version, count] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
      endpointsVersionKey(owner),
      partnerEndpointsKey(partner.id),
    ]);
    const existing = await listEndpoints(kv, owner);
    if (existing.length >= MAX_ENDPOINTS_PER_WALLET) return { ok: false, limit: "wallet" };
    const counted = count.value?.value ?? 0n;
    if (counted >= BigInt(partner.max)) return { ok: false, limit: "partner" };
    const endpoint: WebhookEndpoint = {
      id: crypto.randomUUID(),
      owner,
      partnerId: partner.id,
      url: input.url,
      description: input.description,
      secret: newSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: now.toISOString(),
    };
    const res = await kv.atomic()
      .check(version, count)
      .set(endpointKey(owner, endpoint.id), endpoint)
      .sum(endpointsVersionKey(owner), 1n)
      .set(partnerEndpointsKey(partner.id), new Deno.KvU64(counted + 1n))
      .commit();
    if (res.ok) return { ok: true, endpoint };
  }
}

/** Deletes the endpoint; its pending deliveries end as failed when the worker next looks at them. */
export async function deleteEndpoint(kv: Deno.Kv, owner: string, id: string): Promise<boolean> {
  const entry = await kv.get<WebhookEndpoint>(endpointKey(owner, id));
  if (!entry.value) return false;
  const op = kv.atomic().check(entry).delete(entry.key).sum(endpointsVersionKey(owner), 1n);
  // Its registration counted it (same commit), and this commit is checked against the endpoint: it is subtracted
  // exactly once, so the counter never goes below zero (a KvU64 decrement is a sum of 2^64 - 1).
  if (entry.value.partnerId) op.sum(partnerEndpointsKey(entry.value.partnerId), 2n ** 64n - 1n);
  const res = await op.commit();
  return res.ok || (await kv.get(entry.key)).value === null;
}

/** A new secret; the current one becomes the previous one and signs beside it for `PREVIOUS_SECRET_TTL_MS`. */
export async function rotateSecret(
  kv: Deno.Kv,
  owner: string,
  id: string,
  now = new Date(),
): Promise<WebhookEndpoint | null> {
  for (;;) {
    const entry = await kv.get<WebhookEndpoint>(endpointKey(owner, id));
    if (!entry.value) return null;
    const next: WebhookEndpoint = {
      ...entry.value,
      secret: newSecret(),
      previousSecret: entry.value.secret,
      previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS).toISOString(),
    };
    if ((await kv.atomic().check(entry).set(entry.key, next).commit()).ok) return next;
  }
}

// ---- deliveries ----

function newDelivery(
  endpointId: string,
  event: OrderEvent,
  position: [number, number],
  replayOf: string | null,
  nowMs: number,
): WebhookDelivery {
  return {
    id: newOrderId(nowMs),
    endpointId,
    owner: event.owner,
    orderId: event.order.id,
    event,
    replayOf,
    position,
    state: "pending",
    attempts: [],
    attemptCount: 0,
    firstAttemptAt: null,
    dueAt: nowMs,
    lease: null,
    createdAt: new Date(nowMs).toISOString(),
    finishedAt: null,
  };
}

/** Adds a new pending delivery to `atomic`: its record, its queue entry and its due entry (the worker checks order). */
function addDelivery(atomic: Deno.AtomicOperation, d: WebhookDelivery): Deno.AtomicOperation {
  // No check: the id is a new UUIDv7 (random bits), and the sequencer's atomic has room for 100 checks only.
  return atomic
    .set(deliveryKey(d.endpointId, d.id), d)
    .set(queueKey(d), d.id)
    .set(dueKey(d.endpointId, d.dueAt!, d.id), null);
}

/**
 * The webhook fan-out as an `EventSink` (kv/order_events.ts): in the sequencer's atomic, one delivery per endpoint of
 * the event's owner, with a check on the owner's endpoint-set version so a concurrent registration or deletion makes
 * the sequencer retry the batch.
 */
export function webhookSink(now: () => number = Date.now) {
  return {
    async prepare(kv: Deno.Kv, events: readonly OrderEvent[]) {
      const owners = [...new Set(events.map((e) => e.owner))];
      const sets = new Map<string, { version: string | null; endpoints: WebhookEndpoint[] }>();
      for (const owner of owners) {
        // The version first: an endpoint added after this read changes the version, and the commit's check fails.
        const version = await kv.get(endpointsVersionKey(owner));
        sets.set(owner, { version: version.versionstamp, endpoints: await listEndpoints(kv, owner) });
      }
      const checked = new WeakMap<Deno.AtomicOperation, Set<string>>();
      return (atomic: Deno.AtomicOperation, event: OrderEvent) => {
        const set = sets.get(event.owner);
        if (!set) throw new Error(`webhook fan-out: event ${event.id} of an owner not prepared`);
        const done = checked.get(atomic) ?? new Set<string>();
        checked.set(atomic, done);
        if (!done.has(event.owner)) {
          atomic.check({ key: endpointsVersionKey(event.owner), versionstamp: set.version });
          done.add(event.owner);
        }
        for (const endpoint of set.endpoints) {
          addDelivery(atomic, newDelivery(endpoint.id, event, [event.seq, 0], null, now()));
        }
      };
    },
  };
}

export async function getDelivery(
  kv: Deno.Kv,
  endpointId: string,
  id: string,
): Promise<Deno.KvEntryMaybe<WebhookDelivery>> {
  return await kv.get<WebhookDelivery>(deliveryKey(endpointId, id));
}

/** The endpoint's delivery log, newest first. */
export async function listDeliveries(kv: Deno.Kv, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
  const out: WebhookDelivery[] = [];
  const iter = kv.list<WebhookDelivery>({ prefix: ["webhook_delivery", endpointId] }, { reverse: true, limit });
  for await (const e of iter) out.push(e.value);
  return out;
}

/**
 * A new delivery of the event of delivery `id`, queued behind that order's unfinished deliveries to the endpoint
 * (so ordering per order still holds). Null when there is no such delivery.
 */
export async function replayDelivery(
  kv: Deno.Kv,
  endpointId: string,
  id: string,
  nowMs = Date.now(),
): Promise<WebhookDelivery | null> {
  const original = (await getDelivery(kv, endpointId, id)).value;
  if (!original) return null;
  for (;;) {
    const last = await lastQueued(kv, endpointId, original.orderId);
    const position: [number, number] = last
      ? [last.position[0], last.position[1] + 1]
      : [original.position[0], original.position[1] + 1];
    const d = newDelivery(endpointId, original.event, position, original.id, nowMs);
    const atomic = kv.atomic().check({ key: queueKey(d), versionstamp: null });
    if (last) atomic.check(last.entry);
    if ((await addDelivery(atomic, d).commit()).ok) return d;
  }
}

async function lastQueued(kv: Deno.Kv, endpointId: string, orderId: string) {
  for await (
    const e of kv.list<string>({ prefix: ["webhook_queue", endpointId, orderId] }, { reverse: true, limit: 1 })
  ) {
    return { entry: e, position: [e.key[3] as number, e.key[4] as number] as [number, number] };
  }
  return null;
}

/** The first unfinished delivery of (endpoint, order): the only one that may be attempted. */
export async function queueHead(
  kv: Deno.Kv,
  endpointId: string,
  orderId: string,
  limit = 1,
): Promise<Deno.KvEntry<string>[]> {
  const out: Deno.KvEntry<string>[] = [];
  for await (const e of kv.list<string>({ prefix: ["webhook_queue", endpointId, orderId] }, { limit })) out.push(e);
  return out;
}

/** The first endpoint after `after` (in key order; from the first when null) with a due entry, now or later. */
export async function nextDueEndpoint(kv: Deno.Kv, after: string | null): Promise<string | null> {
  // `after + "\0"` is the smallest id above `after`: every key of `after` sorts before it.
  const selector = after === null
    ? { prefix: ["webhook_due"] }
    : { prefix: ["webhook_due"], start: ["webhook_due", after + "\0"] };
  for await (const e of kv.list(selector, { limit: 1 })) return e.key[1] as string;
  return null;
}

/** The endpoint's deliveries due by `nowMs`, earliest first. */
export async function dueOfEndpoint(
  kv: Deno.Kv,
  endpointId: string,
  nowMs: number,
  limit: number,
): Promise<{ deliveryId: string; dueAt: number }[]> {
  const out = [];
  const selector = { start: ["webhook_due", endpointId], end: ["webhook_due", endpointId, nowMs + 1] };
  for await (const e of kv.list(selector, { limit })) {
    out.push({ deliveryId: e.key[3] as string, dueAt: e.key[2] as number });
  }
  return out;
}

/** Appends an attempt, keeping the newest `MAX_ATTEMPTS_KEPT`. */
export function withAttempt(d: WebhookDelivery, attempt: DeliveryAttempt): WebhookDelivery {
  const attempts = [...d.attempts, attempt].slice(-MAX_ATTEMPTS_KEPT);
  return { ...d, attempts, attemptCount: d.attemptCount + 1, firstAttemptAt: d.firstAttemptAt ?? attempt.at };
}
