/**
 * Idempotency-Key records (docs/idempotency.md). One record per (scope, key): while the first request runs it is a
 * lock (`in_flight`, a short lease), then the response it got (`done`, kept 24 hours). The scope is the caller's
 * credential, so two partners never see each other's keys. The fingerprint (method, path, body hash) tells a retry
 * of the same request from a reuse of the key for another one.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "@scure/base";

/** How long a completed response is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a request may hold its key before the lock is considered abandoned (a crashed process). */
export const IN_FLIGHT_LEASE_MS = 60 * 1000;

export type IdempotencyRecord =
  | { state: "in_flight"; fingerprint: string; lockId: string; expiresAt: number }
  | {
    state: "done";
    fingerprint: string;
    status: number;
    contentType: string | null;
    /** The response body, sealed (AES-GCM) when the request carried a sealing secret; see `sealKeyFrom`. */
    body: Uint8Array;
    sealed: boolean;
    createdAt: number;
    expiresAt: number;
  };

export const idempotencyKey = (scope: string, key: string): Deno.KvKey => ["idempotency", scope, key];

/** SHA-256 over the method, the path and the body's SHA-256: what makes two requests "the same request". */
export function requestFingerprint(method: string, path: string, body: Uint8Array): string {
  const bodyHash = hex.encode(sha256(body));
  return hex.encode(sha256(new TextEncoder().encode(`${method.toUpperCase()}\n${path}\n${bodyHash}`)));
}

export type Claim =
  | { kind: "claimed"; lockId: string }
  | { kind: "replay"; record: Extract<IdempotencyRecord, { state: "done" }> }
  | { kind: "mismatch" }
  | { kind: "in_flight" };

const live = (r: IdempotencyRecord | null, now: number) => (r !== null && r.expiresAt > now ? r : null);

/**
 * Takes the key for a new request, or says why not: the stored response of the same request (replay), another
 * request under this key (mismatch), or the same key still held by a request in progress. Atomic: of two concurrent
 * first requests, exactly one claims the key, even across processes.
 */
export async function claimIdempotencyKey(
  kv: Deno.Kv,
  scope: string,
  key: string,
  fingerprint: string,
  now = Date.now(),
): Promise<Claim> {
  const k = idempotencyKey(scope, key);
  for (;;) {
    const entry = await kv.get<IdempotencyRecord>(k);
    const record = live(entry.value, now);
    if (record) {
      if (record.fingerprint !== fingerprint) return { kind: "mismatch" };
      return record.state === "done" ? { kind: "replay", record } : { kind: "in_flight" };
    }
    const lockId = crypto.randomUUID();
    const lock: IdempotencyRecord = { state: "in_flight", fingerprint, lockId, expiresAt: now + IN_FLIGHT_LEASE_MS };
    const res = await kv.atomic().check(entry).set(k, lock, { expireIn: IN_FLIGHT_LEASE_MS }).commit();
    if (res.ok) return { kind: "claimed", lockId };
  }
}

/** Stores the response of the request holding `lockId` (nothing happens if its lease was lost meanwhile). */
export async function completeIdempotencyKey(
  kv: Deno.Kv,
  scope: string,
  key: string,
  lockId: string,
  response: { fingerprint: string; status: number; contentType: string | null; body: Uint8Array; sealed: boolean },
  now = Date.now(),
): Promise<boolean> {
  const k = idempotencyKey(scope, key);
  const entry = await kv.get<IdempotencyRecord>(k);
  if (entry.value?.state !== "in_flight" || entry.value.lockId !== lockId) return false;
  const done: IdempotencyRecord = { state: "done", ...response, createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS };
  const res = await kv.atomic().check(entry).set(k, done, { expireIn: IDEMPOTENCY_TTL_MS }).commit();
  return res.ok;
}

/** Frees the key held by `lockId`, so the request can be retried with it (a 5xx, or a response too large to keep). */
export async function releaseIdempotencyKey(kv: Deno.Kv, scope: string, key: string, lockId: string): Promise<void> {
  const k = idempotencyKey(scope, key);
  const entry = await kv.get<IdempotencyRecord>(k);
  if (entry.value?.state !== "in_flight" || entry.value.lockId !== lockId) return;
  await kv.atomic().check(entry).delete(k).commit();
}

/**
 * AES-GCM key for sealing a stored response with a secret the caller presents on every retry and that we never store
 * (the API key of a token request: its response is a JWT, which must not sit readable in KV).
 */
export async function sealKeyFrom(secret: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: new TextEncoder().encode("idempotency-seal-v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** 12-byte IV followed by the AES-GCM ciphertext and tag. */
export async function seal(key: CryptoKey, plain: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, plain));
  const out = new Uint8Array(12 + ct.length);
  out.set(iv);
  out.set(ct, 12);
  return out;
}

/** The plain body, or null when `key` is not the one it was sealed with. */
export async function unseal(key: CryptoKey, sealed: Uint8Array): Promise<Uint8Array | null> {
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv: sealed.slice(0, 12) }, key, sealed.slice(12)),
    );
  } catch {
    return null;
  }
}
