/**
 * The operator audit log: one append-only entry per operator change, keyed by time then a random id so entries list
 * in the order they happened and two changes in the same millisecond never collide. An entry is written in the same
 * atomic as the change it describes: there is no change without its entry, and no entry for a change that failed.
 */
export interface AuditEntry {
  id: string;
  /** ISO time of the change. */
  at: string;
  /** Who made it: `--by`, else the operator's OS user. */
  by: string;
  /** What was done, e.g. `wallet.move`. */
  action: string;
  /** What it was done to, e.g. a wallet address. */
  subject: string;
  before: unknown;
  after: unknown;
}

const PREFIX = "audit";

/** Adds `entry` to `op`; the entry's key must not exist, so an entry is never overwritten. */
export function appendAudit(
  op: Deno.AtomicOperation,
  entry: Omit<AuditEntry, "id" | "at">,
  now = new Date(),
): AuditEntry {
  const full: AuditEntry = { id: crypto.randomUUID(), at: now.toISOString(), ...entry };
  const key = [PREFIX, full.at, full.id];
  op.check({ key, versionstamp: null }).set(key, full);
  return full;
}

/** Every entry, oldest first; with `newest`, only that many of the newest (read newest first, never the whole log). */
export async function listAudit(kv: Deno.Kv, newest?: number): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  const opts = newest === undefined ? {} : { reverse: true, limit: newest };
  for await (const e of kv.list<AuditEntry>({ prefix: [PREFIX] }, opts)) out.push(e.value);
  return newest === undefined ? out : out.reverse();
}

/** The operator running a command: the OS login name, as the environment gives it. */
export function osUser(): string {
  return Deno.env.get("USER") || Deno.env.get("LOGNAME") || "unknown";
}
