/**
 * Dashboard sessions (`/admin/ui`; docs/dashboard.md): an operator logs in with an operator key and gets a
 * random session id in a cookie. Only SHA-256 of the id is stored (kv/key_secrets.ts), with the key id it is bound to,
 * a CSRF token for the session's forms, and its expiry (SESSION_TTL_MS after login, never extended). Every request
 * re-reads the operator key: a key revoked or expired ends its sessions at once, and a scope taken away is gone on the
 * next request. Key layout lives here and nowhere else.
 */
import { timingSafeEqual } from "node:crypto";
import { hashSecret, newSecret } from "./key_secrets.ts";
import { getOperatorKey, isActive, type OperatorKeyRecord } from "./operator_keys.ts";

export const SESSION_TTL_MS = 8 * 3600_000;

export interface OperatorSession {
  keyId: string;
  /** The token every POST form of the session carries (random, per session). */
  csrf: string;
  createdAt: string;
  expiresAt: string;
  /** A one-time notice for the next page (the outcome of the last action), cleared when shown. */
  flash?: { ok: boolean; message: string };
}

const PREFIX = "operator_session";
const sessionKey = (idHash: string): Deno.KvKey => [PREFIX, idHash];

/** Session ids are 43 base64url characters (32 random bytes); anything else is not looked up. */
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Opens a session for `key`: returns the id for the cookie (never stored) and the session as stored. */
export async function createSession(
  kv: Deno.Kv,
  key: OperatorKeyRecord,
  now = new Date(),
): Promise<{ sessionId: string; session: OperatorSession }> {
  for (;;) {
    const sessionId = newSecret();
    const session: OperatorSession = {
      keyId: key.keyId,
      csrf: newSecret(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS).toISOString(),
    };
    const k = sessionKey(hashSecret(sessionId));
    // expireIn lets KV drop it some time after it ended; the check below decides, since expired keys linger.
    const res = await kv.atomic().check({ key: k, versionstamp: null }).set(k, session, { expireIn: SESSION_TTL_MS })
      .commit();
    if (res.ok) return { sessionId, session };
  }
}

export interface ActiveSession {
  entry: Deno.KvEntry<OperatorSession>;
  session: OperatorSession;
  /** The operator key as stored now: active, the one the session is bound to. */
  key: OperatorKeyRecord;
}

/** The live session of a cookie value with its operator key, or null (unknown, expired, key revoked or expired). */
export async function readSession(
  kv: Deno.Kv,
  sessionId: string | undefined,
  now = new Date(),
): Promise<ActiveSession | null> {
  if (!sessionId || !SESSION_ID_PATTERN.test(sessionId)) return null;
  const entry = await kv.get<OperatorSession>(sessionKey(hashSecret(sessionId)));
  const session = entry.value;
  if (!session || Date.parse(session.expiresAt) <= now.getTime()) return null;
  const key = await getOperatorKey(kv, session.keyId);
  if (!key || !isActive(key, now)) return null;
  return { entry: entry as Deno.KvEntry<OperatorSession>, session, key };
}

/** Whether `presented` is the session's CSRF token (constant time). */
export function csrfMatches(session: OperatorSession, presented: unknown): boolean {
  if (typeof presented !== "string") return false;
  const a = new TextEncoder().encode(hashSecret(presented));
  const b = new TextEncoder().encode(hashSecret(session.csrf));
  return timingSafeEqual(a, b);
}

/** Ends the session of a cookie value (logout); nothing when there is none. */
export async function deleteSession(kv: Deno.Kv, sessionId: string | undefined): Promise<void> {
  if (!sessionId || !SESSION_ID_PATTERN.test(sessionId)) return;
  await kv.delete(sessionKey(hashSecret(sessionId)));
}

/** Stores the notice the next page shows; a session changed or ended meanwhile is left alone. */
export async function setFlash(kv: Deno.Kv, s: ActiveSession, flash: OperatorSession["flash"]): Promise<void> {
  const ttl = Math.max(1, Date.parse(s.session.expiresAt) - Date.now());
  await kv.atomic().check(s.entry).set(s.entry.key, { ...s.session, flash }, { expireIn: ttl }).commit();
}

/** The notice to show now, removed from the session (only when there is one: a plain page view writes nothing). */
export async function takeFlash(kv: Deno.Kv, s: ActiveSession): Promise<OperatorSession["flash"] | undefined> {
  const flash = s.session.flash;
  if (!flash) return undefined;
  const { flash: _, ...rest } = s.session;
  const ttl = Math.max(1, Date.parse(s.session.expiresAt) - Date.now());
  await kv.atomic().check(s.entry).set(s.entry.key, rest, { expireIn: ttl }).commit();
  return flash;
}
