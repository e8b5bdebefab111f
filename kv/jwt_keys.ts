/**
 * The JWT signing keys every process on this KV has signed with (docs/operations.md "Rotating the JWT signing key").
 * Each process records the public half of its own key (`kid` = its RFC 7638 thumbprint, config/secrets.ts) when it
 * starts and, at most once per `SIGNING_RECORD_INTERVAL_MS`, when it signs; every process verifies tokens of every
 * recorded key that is not retired, so during a rolling restart tokens of the old and the new key work everywhere. An
 * operator retires a key (actors/ops/jwt_keys.ts) once no process signs with it: its tokens stop working at once,
 * everywhere. Only public keys are stored here: the private key never leaves the process that holds it.
 */
import type { JWK } from "jose";

export interface JwtKeyRecord {
  kid: string;
  /** The public JWK as the JWKS serves it (`kty`, `n`, `e`, `kid`, `alg`, `use`). */
  publicJwk: JWK & { kid: string };
  /** ISO time a process first recorded it (started with it). */
  firstSignedAt: string;
  /**
   * ISO time a process last recorded signing with it. A process refreshes this at most once per
   * `SIGNING_RECORD_INTERVAL_MS`, so a token may be signed up to that long after it: `mayHaveLiveTokens` adds it.
   */
  lastSignedAt: string;
  retiredAt: string | null;
  retiredBy: string | null;
}

export const jwtKeyKey = (kid: string): Deno.KvKey => ["jwt_key", kid];
const jwtKeyPrefix: Deno.KvKey = ["jwt_key"];

/** A token's lifetime (spec 5: one year), which decides how long a key's tokens may outlive its last signing. */
export const TOKEN_LIFETIME_SECONDS = 365 * 24 * 60 * 60;

/** How stale a key's `lastSignedAt` may be while its process signs with it (one write per interval, not per token). */
export const SIGNING_RECORD_INTERVAL_MS = 60_000;

/** The RFC 7638 SHA-256 thumbprint, base64url: what `kid` is (config/secrets.ts), so nothing else is a kid. */
export const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Thrown when a process would sign with a key an operator retired: it must be restarted with a new key. */
export class RetiredSigningKeyError extends Error {
  constructor(readonly record: JwtKeyRecord) {
    super(
      `the JWT signing key ${record.kid} was retired at ${record.retiredAt} by ${record.retiredBy}: configure a new ` +
        "key (JWT_PRIVATE_KEY_FILE, or JWT_PRIVATE_KEY in deploy mode) and restart; see docs/operations.md, Rotating the JWT signing key",
    );
    this.name = "RetiredSigningKeyError";
  }
}

/**
 * Records that this process signs with `publicJwk` from `now` on: creates the record, or moves its `lastSignedAt`
 * forward. Throws `RetiredSigningKeyError` if the key was retired: a retired key is never used again.
 */
export async function recordSigningKey(
  kv: Deno.Kv,
  publicJwk: JWK & { kid: string },
  now = new Date(),
): Promise<JwtKeyRecord> {
  const key = jwtKeyKey(publicJwk.kid);
  for (;;) {
    const entry = await kv.get<JwtKeyRecord>(key);
    const before = entry.value;
    if (before?.retiredAt) throw new RetiredSigningKeyError(before);
    const at = now.toISOString();
    const record: JwtKeyRecord = before
      ? { ...before, lastSignedAt: before.lastSignedAt > at ? before.lastSignedAt : at }
      : { kid: publicJwk.kid, publicJwk, firstSignedAt: at, lastSignedAt: at, retiredAt: null, retiredBy: null };
    if ((await kv.atomic().check(entry).set(key, record).commit()).ok) return record;
  }
}

/** Whether tokens signed by `record` may still be unexpired at `now` (so the JWKS must still publish it). */
export function mayHaveLiveTokens(record: JwtKeyRecord, now = Date.now()): boolean {
  return Date.parse(record.lastSignedAt) + SIGNING_RECORD_INTERVAL_MS + TOKEN_LIFETIME_SECONDS * 1000 > now;
}

/** A key whose tokens verify: recorded and not retired. */
export function isUsableJwtKey(record: JwtKeyRecord | null): record is JwtKeyRecord {
  return record !== null && record.retiredAt === null;
}

export async function listJwtKeys(kv: Deno.Kv): Promise<JwtKeyRecord[]> {
  const out: JwtKeyRecord[] = [];
  for await (const e of kv.list<JwtKeyRecord>({ prefix: jwtKeyPrefix })) out.push(e.value);
  return out;
}

export type RetireResult =
  | { ok: true; before: JwtKeyRecord; after: JwtKeyRecord }
  | { ok: false; reason: "unknown" | "retired"; record: JwtKeyRecord | null };

/** Retires `kid` in one commit with `audit`'s entry; refuses an unknown or already retired key, changing nothing. */
export async function retireJwtKey(
  kv: Deno.Kv,
  kid: string,
  by: string,
  now: Date,
  audit: (op: Deno.AtomicOperation, before: JwtKeyRecord, after: JwtKeyRecord) => void,
): Promise<RetireResult> {
  const key = jwtKeyKey(kid);
  for (;;) {
    const entry = await kv.get<JwtKeyRecord>(key);
    const before = entry.value;
    if (!before) return { ok: false, reason: "unknown", record: null };
    if (before.retiredAt) return { ok: false, reason: "retired", record: before };
    const after: JwtKeyRecord = { ...before, retiredAt: now.toISOString(), retiredBy: by };
    const op = kv.atomic().check(entry).set(key, after);
    audit(op, before, after);
    if ((await op.commit()).ok) return { ok: true, before, after };
  }
}
