/**
 * Partner API keys. A key is `<keyId>.<secret>`; only SHA-256(secret) is stored, and it is compared in
 * constant time. The secret has 256 bits of entropy, so a plain hash (no KDF) is enough.
 */
import { timingSafeEqual } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad, hex } from "@scure/base";

export interface ApiKeyRecord {
  keyId: string;
  partnerId: string;
  secretHash: string;
  createdAt: string;
  /** ISO time after which the key is refused; null = never. */
  expiresAt: string | null;
  revokedAt: string | null;
}

export type ApiKeyCheck =
  | { ok: true; key: ApiKeyRecord }
  | { ok: false; reason: "malformed" | "invalid" };

export const apiKeyKey = (keyId: string): Deno.KvKey => ["api_key", keyId];
const apiKeyPrefix: Deno.KvKey = ["api_key"];

/** keyId: `ak_` + 16 hex; secret: 43 base64url characters. */
const API_KEY_PATTERN = /^(ak_[0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;
export const PARTNER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function hashSecret(secret: string): string {
  return hex.encode(sha256(new TextEncoder().encode(secret)));
}

export async function createApiKey(
  kv: Deno.Kv,
  partnerId: string,
  opts: { expiresInDays?: number; now?: Date } = {},
): Promise<{ apiKey: string; record: ApiKeyRecord }> {
  if (!PARTNER_ID_PATTERN.test(partnerId)) throw new Error(`Invalid partner id: ${partnerId}`);
  const now = opts.now ?? new Date();
  for (;;) {
    const keyId = `ak_${hex.encode(crypto.getRandomValues(new Uint8Array(8)))}`;
    const secret = base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
    const record: ApiKeyRecord = {
      keyId,
      partnerId,
      secretHash: hashSecret(secret),
      createdAt: now.toISOString(),
      expiresAt: opts.expiresInDays === undefined
        ? null
        : new Date(now.getTime() + opts.expiresInDays * 86_400_000).toISOString(),
      revokedAt: null,
    };
    const res = await kv.atomic().check({ key: apiKeyKey(keyId), versionstamp: null }).set(apiKeyKey(keyId), record)
      .commit();
    if (res.ok) return { apiKey: `${keyId}.${secret}`, record };
  }
}

/** Verifies an `X-API-Key` header value. Unknown, revoked and expired keys are all just "invalid". */
export async function verifyApiKey(kv: Deno.Kv, header: string | undefined, now = new Date()): Promise<ApiKeyCheck> {
  const match = header === undefined ? null : API_KEY_PATTERN.exec(header.trim());
  if (!match) return { ok: false, reason: "malformed" };
  const [, keyId, secret] = match;
  const entry = await kv.get<ApiKeyRecord>(apiKeyKey(keyId));
  const presented = new TextEncoder().encode(hashSecret(secret));
  // Compare even when the key is unknown, so timing does not tell which key ids exist.
  const stored = new TextEncoder().encode(entry.value?.secretHash ?? "0".repeat(64));
  const same = timingSafeEqual(presented, stored);
  const key = entry.value;
  if (!key || !same || key.revokedAt !== null || isExpired(key, now)) return { ok: false, reason: "invalid" };
  return { ok: true, key };
}

/** True while the key can still issue tokens (tokens carry the key id and stop working when this turns false). */
export function isUsable(key: ApiKeyRecord | null, now = new Date()): boolean {
  return key !== null && key.revokedAt === null && !isExpired(key, now);
}

function isExpired(key: ApiKeyRecord, now: Date): boolean {
  return key.expiresAt !== null && Date.parse(key.expiresAt) <= now.getTime();
}

export async function revokeApiKey(kv: Deno.Kv, keyId: string, now = new Date()): Promise<ApiKeyRecord | null> {
  for (;;) {
    const entry = await kv.get<ApiKeyRecord>(apiKeyKey(keyId));
    if (!entry.value) return null;
    if (entry.value.revokedAt !== null) return entry.value;
    const next = { ...entry.value, revokedAt: now.toISOString() };
    const res = await kv.atomic().check(entry).set(apiKeyKey(keyId), next).commit();
    if (res.ok) return next;
  }
}

export async function listApiKeys(kv: Deno.Kv): Promise<ApiKeyRecord[]> {
  const out: ApiKeyRecord[] = [];
  for await (const e of kv.list<ApiKeyRecord>({ prefix: apiKeyPrefix })) out.push(e.value);
  return out;
}
