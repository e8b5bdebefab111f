/**
 * KV records of the order pipeline besides the orders themselves: the permanent dedupe record of every detected
 * transfer, the due index the sweep reads, held transfers (uAssets sent with no burn configuration), watcher cursors
 * and leases. Key layout lives here and nowhere else.
 */
import type { ChainSymbol, UAsset } from "../chains/catalog.ts";

// ---- detected transfers: (chain, txHash, index) is seen once, for ever (DESIGN.md invariant 1) ----

export type SeenTransfer = { kind: "order"; orderId: string } | { kind: "held" };

export const seenKey = (chain: ChainSymbol, txHash: string, index: number): Deno.KvKey => [
  "transfer_seen",
  chain,
  txHash,
  index,
];

// ---- the due index: when the sweep should look at an order next ----

const duePrefix: Deno.KvKey = ["pipeline_due"];
export const dueKey = (dueAtMs: number, orderId: string): Deno.KvKey => ["pipeline_due", dueAtMs, orderId];

/** Order ids whose due time has come, oldest first. */
export async function listDue(
  kv: Deno.Kv,
  nowMs: number,
  limit: number,
): Promise<{ orderId: string; dueAt: number }[]> {
  const out: { orderId: string; dueAt: number }[] = [];
  for await (
    const e of kv.list<string>({ prefix: duePrefix, end: [...duePrefix, nowMs + 1] }, { limit, batchSize: limit })
  ) {
    out.push({ orderId: e.key[2] as string, dueAt: e.key[1] as number });
  }
  return out;
}

export async function countDue(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: duePrefix })) n++;
  return n;
}

// ---- held transfers (spec 4.4: never paid automatically) ----

export interface HeldTransfer {
  chain: ChainSymbol;
  txHash: string;
  index: number;
  from: string;
  /** A uAsset sent to the transfer address, or "native": a deposit held because its destination chain is disabled. */
  asset: UAsset | "native";
  /** The deposit address, for a held native deposit. */
  to?: string;
  amount: string;
  blockNumber: number;
  detectedAt: string;
  reason: string;
}

export const heldKey = (chain: ChainSymbol, txHash: string, index: number): Deno.KvKey => [
  "held_transfer",
  chain,
  txHash,
  index,
];

export async function listHeld(kv: Deno.Kv): Promise<HeldTransfer[]> {
  const out: HeldTransfer[] = [];
  for await (const e of kv.list<HeldTransfer>({ prefix: ["held_transfer"] })) out.push(e.value);
  return out;
}

// ---- watcher cursors ----

export interface Cursor {
  number: number;
  hash: string;
}

export const cursorKey = (chain: ChainSymbol): Deno.KvKey => ["watch_cursor", chain];

// ---- leases: one holder per job across processes sharing a KV ----

export interface Lease {
  owner: string;
  expiresAt: number;
}

const leaseKey = (job: string): Deno.KvKey => ["lease", job];

/**
 * Takes or renews the lease on `job` for `ttlMs`. Returns the lease entry (to check in later commits, so a holder
 * that lost its lease cannot write) or null when another live holder has it. `expireIn` is not used: expired keys
 * stay visible for a while, so expiry is decided by `expiresAt`.
 */
export async function acquireLease(
  kv: Deno.Kv,
  job: string,
  owner: string,
  ttlMs: number,
  nowMs = Date.now(),
): Promise<Deno.KvEntry<Lease> | null> {
  const key = leaseKey(job);
  const current = await kv.get<Lease>(key);
  if (current.value && current.value.owner !== owner && current.value.expiresAt > nowMs) return null;
  // Ours with more than half its time left: no write (an idle pipeline would otherwise commit on every tick).
  if (current.value?.owner === owner && current.value.expiresAt - nowMs > ttlMs / 2) {
    return current as Deno.KvEntry<Lease>;
  }
  const lease: Lease = { owner, expiresAt: nowMs + ttlMs };
  const res = await kv.atomic().check(current).set(key, lease).commit();
  if (!res.ok) return null;
  return { key, value: lease, versionstamp: res.versionstamp };
}

// ---- per-order schedule pointer: which due key is the order's, so a reschedule can move it ----

export const dueAtKey = (orderId: string): Deno.KvKey => ["pipeline_due_at", orderId];

/** Moves an order's due entry (from `previous`, if any) to `nextAtMs`, or removes it when `nextAtMs` is null. */
export function addReschedule(
  atomic: Deno.AtomicOperation,
  orderId: string,
  previous: Deno.KvEntryMaybe<number>,
  nextAtMs: number | null,
): Deno.AtomicOperation {
  atomic.check(previous);
  if (previous.value !== null) atomic.delete(dueKey(previous.value, orderId));
  if (nextAtMs === null) return atomic.delete(dueAtKey(orderId));
  return atomic.set(dueKey(nextAtMs, orderId), orderId).set(dueAtKey(orderId), nextAtMs);
}
