/**
 * Operator credentials for the admin API, `/metrics` and the dashboard (docs/admin-api.md): separate from partner API
 * keys (another prefix, another KV prefix, never accepted where a partner key is), scoped, hashed like partner keys
 * (kv/key_secrets.ts), created and revoked only by the CLI (`deno task admin operator-key ...`), each with its audit
 * entry. The key's `name` is who the audit log says acted.
 */
import { appendAudit } from "./audit.ts";
import { hashSecret, newKeyId, newSecret, secretMatches, splitKey } from "./key_secrets.ts";

/**
 * What a key may do; an operation needs exactly one (actors/ops/op.ts):
 * - `read`: every report and list (orders, treasury, reconciliation, audit, alerts);
 * - `operate`: actions on money and the pipeline (pause, caps, held records, order cancel/retry/release, utxo);
 * - `keys`: partner API keys and wallets (create, revoke, move);
 * - `metrics`: `GET /metrics` only, for a Prometheus scraper.
 */
export const OPERATOR_SCOPES = ["read", "operate", "keys", "metrics"] as const;
export type OperatorScope = typeof OPERATOR_SCOPES[number];

export interface OperatorKeyRecord {
  keyId: string;
  /** Who uses it (a person or a system): what the audit log records as `by`. */
  name: string;
  scopes: OperatorScope[];
  secretHash: string;
  createdAt: string;
  createdBy: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export type OperatorKeyCheck =
  | { ok: true; key: OperatorKeyRecord }
  | { ok: false; reason: "malformed" | "invalid" };

const PREFIX = "operator_key";
export const operatorKeyKey = (keyId: string): Deno.KvKey => [PREFIX, keyId];

/** Operator key ids: `op_` + 16 hex. */
const KEY_ID_PATTERN = /^op_[0-9a-f]{16}$/;
export const OPERATOR_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/** `by` of the audit entries an operator key's actions write. */
export function operatorActor(key: Pick<OperatorKeyRecord, "name" | "keyId">): string {
  return `${key.name} (${key.keyId})`;
}

export async function createOperatorKey(
  kv: Deno.Kv,
  opts: { name: string; scopes: OperatorScope[]; by: string; expiresInDays?: number; now?: Date },
): Promise<{ operatorKey: string; record: OperatorKeyRecord }> {
  if (!OPERATOR_NAME_PATTERN.test(opts.name)) throw new Error(`Invalid operator name: ${opts.name}`);
  if (opts.scopes.length === 0) throw new Error("an operator key needs at least one scope");
  const now = opts.now ?? new Date();
  for (;;) {
    const keyId = newKeyId("op_");
    const secret = newSecret();
    const record: OperatorKeyRecord = {
      keyId,
      name: opts.name,
      scopes: [...new Set(opts.scopes)],
      secretHash: hashSecret(secret),
      createdAt: now.toISOString(),
      createdBy: opts.by,
      expiresAt: opts.expiresInDays === undefined
        ? null
        : new Date(now.getTime() + opts.expiresInDays * 86_400_000).toISOString(),
      revokedAt: null,
    };
    const op = kv.atomic().check({ key: operatorKeyKey(keyId), versionstamp: null }).set(operatorKeyKey(keyId), record);
    const { secretHash: _, ...shown } = record;
    appendAudit(op, { by: opts.by, action: "operator-key.create", subject: keyId, before: null, after: shown }, now);
    if ((await op.commit()).ok) return { operatorKey: `${keyId}.${secret}`, record };
  }
}

/** Verifies `<keyId>.<secret>`: unknown, wrong secret, revoked or expired are all "invalid", in constant time. */
export async function verifyOperatorKey(
  kv: Deno.Kv,
  value: string | undefined,
  now = new Date(),
): Promise<OperatorKeyCheck> {
  const parts = splitKey(value);
  if (!parts) return { ok: false, reason: "malformed" };
  const key = KEY_ID_PATTERN.test(parts.keyId)
    ? (await kv.get<OperatorKeyRecord>(operatorKeyKey(parts.keyId))).value
    : null;
  const same = secretMatches(parts.secret, key?.secretHash ?? null);
  if (!key || !same || !isActive(key, now)) return { ok: false, reason: "invalid" };
  return { ok: true, key };
}

export function isActive(key: OperatorKeyRecord, now = new Date()): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now.getTime());
}

export async function getOperatorKey(kv: Deno.Kv, keyId: string): Promise<OperatorKeyRecord | null> {
  return KEY_ID_PATTERN.test(keyId) ? (await kv.get<OperatorKeyRecord>(operatorKeyKey(keyId))).value : null;
}

export async function revokeOperatorKey(
  kv: Deno.Kv,
  keyId: string,
  by: string,
  now = new Date(),
): Promise<OperatorKeyRecord | null> {
  if (!KEY_ID_PATTERN.test(keyId)) return null;
  for (;;) {
    const entry = await kv.get<OperatorKeyRecord>(operatorKeyKey(keyId));
    if (!entry.value) return null;
    if (entry.value.revokedAt !== null) return entry.value;
    const next = { ...entry.value, revokedAt: now.toISOString() };
    const op = kv.atomic().check(entry).set(entry.key, next);
    appendAudit(op, {
      by,
      action: "operator-key.revoke",
      subject: keyId,
      before: { revokedAt: null },
      after: { revokedAt: next.revokedAt },
    }, now);
    if ((await op.commit()).ok) return next;
  }
}

export async function listOperatorKeys(kv: Deno.Kv): Promise<OperatorKeyRecord[]> {
  const out: OperatorKeyRecord[] = [];
  for await (const e of kv.list<OperatorKeyRecord>({ prefix: [PREFIX] })) out.push(e.value);
  return out;
}
