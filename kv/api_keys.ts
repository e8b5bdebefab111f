/**
 * Partner API keys. A key is `<keyId>.<secret>`; only SHA-256(secret) is stored, and it is compared in
 * constant time. The secret has 256 bits of entropy, so a plain hash (no KDF) is enough.
 */
import { hashSecret, newKeyId, newSecret, secretMatches, splitKey } from "./key_secrets.ts";

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

/** The keys we issue: keyId `ak_` + 16 hex; secret 43 base64url characters. */
const KEY_ID_PATTERN = /^ak_[0-9a-f]{16}$/;
export const PARTNER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export async function createApiKey(
  kv: Deno.Kv,
  partnerId: string,
  opts: {
    expiresInDays?: number;
    now?: Date;
    /** Adds the operator's audit entry to the commit that creates the key (kv/audit.ts). */
    audit?: (op: Deno.AtomicOperation, record: ApiKeyRecord) => void;
  } = {},
): Promise<{ apiKey: string; record: ApiKeyRecord }> {
  if (!PARTNER_ID_PATTERN.test(partnerId)) throw new Error(`Invalid partner id: ${partnerId}`);
  const now = opts.now ?? new Date();
  for (;;) {
    const keyId = newKeyId("ak_");
    const secret = newSecret();
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
    const op = kv.atomic().check({ key: apiKeyKey(keyId), versionstamp: null }).set(apiKeyKey(keyId), record);
    opts.audit?.(op, record);
    if ((await op.commit()).ok) return { apiKey: `${keyId}.${secret}`, record };
  }
}

/**
 * Splits an `X-API-Key` value into `<keyId>.<secret>` (spec 5): exactly two non-empty parts around one dot, or null
 * (the header is then "malformed", 401). Nothing else about the shape is checked here: a value of the right shape that
 * is not one of our keys is "invalid" (403), whatever the lengths or characters of its parts.
 */
export function splitApiKey(header: string | undefined): { keyId: string; secret: string } | null {
  return splitKey(header);
}

/**
 * Verifies an `X-API-Key` header value. Absent or not `<keyId>.<secret>` is "malformed"; every other value that is not
 * an active key of ours (unknown id, a secret that differs in any way or length, revoked, expired) is "invalid".
 * The secret's hash is compared in constant time against the stored hash, or against a dummy when the id is unknown,
 * so timing does not tell which key ids exist. The secret is never logged nor kept.
 */
export async function verifyApiKey(kv: Deno.Kv, header: string | undefined, now = new Date()): Promise<ApiKeyCheck> {
  const parts = splitApiKey(header);
  if (!parts) return { ok: false, reason: "malformed" };
  const { keyId, secret } = parts;
  // Only ids of our own format are looked up (an id of another shape cannot exist, and KV keys have a size limit).
  const key = KEY_ID_PATTERN.test(keyId) ? (await kv.get<ApiKeyRecord>(apiKeyKey(keyId))).value : null;
  const same = secretMatches(secret, key?.secretHash ?? null);
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

/** Revokes a key (a key revoked already is returned as it is); `audit` joins the commit that revokes it. */
export async function revokeApiKey(
  kv: Deno.Kv,
  keyId: string,
  now = new Date(),
  audit?: (op: Deno.AtomicOperation, before: ApiKeyRecord, after: ApiKeyRecord) => void,
): Promise<ApiKeyRecord | null> {
  for (;;) {
    const entry = await kv.get<ApiKeyRecord>(apiKeyKey(keyId));
    if (!entry.value) return null;
    if (entry.value.revokedAt !== null) return entry.value;
    const next = { ...entry.value, revokedAt: now.toISOString() };
    const op = kv.atomic().check(entry).set(apiKeyKey(keyId), next);
    audit?.(op, entry.value, next);
    if ((await op.commit()).ok) return next;
  }
}

export async function listApiKeys(kv: Deno.Kv): Promise<ApiKeyRecord[]> {
  const out: ApiKeyRecord[] = [];
  for await (const e of kv.list<ApiKeyRecord>({ prefix: apiKeyPrefix })) out.push(e.value);
  return out;
}
