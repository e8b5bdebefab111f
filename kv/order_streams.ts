/**
 * Open order event streams (`GET /orders/stream`, docs/streaming.md), counted across every server process sharing
 * the KV, per wallet and per partner (docs/partners.md "Limits per partner and per API key"). Each open stream holds a
 * slot its process renews while the stream runs and deletes when it ends; a crashed process's slots free themselves
 * once their `expiresAt` passes.
 *
 * Key layout:
 * - `["order_stream_slot", partnerId, slotId]` -> `StreamSlot` (with `expireIn`, which only drops it lazily: a slot
 *   counts while `expiresAt` is ahead, whatever KV still lists).
 * - `["order_stream_slots_version", partnerId]` -> a counter bumped by every slot taken and checked in that commit:
 *   two processes cannot both take the partner's last slot.
 */

export interface StreamSlot {
  wallet: string;
  /** Ms since the epoch; the holder renews before half of the time to live is gone. */
  expiresAt: number;
}

/** A crashed process's streams hold their slots at most this long. */
export const STREAM_SLOT_TTL_MS = 60_000;

const slotPrefix = (partnerId: string): Deno.KvKey => ["order_stream_slot", partnerId];
const slotsVersionKey = (partnerId: string): Deno.KvKey => ["order_stream_slots_version", partnerId];

export type TakeSlotResult =
  | { ok: true; slot: Deno.KvEntry<StreamSlot> }
  | { ok: false; limit: "wallet" | "partner" };

/** Takes a slot for a stream of `wallet` unless the wallet or its partner holds its limit of live slots. */
export async function takeStreamSlot(
  kv: Deno.Kv,
  partnerId: string,
  wallet: string,
  limits: { perWallet: number; perPartner: number },
  ttlMs: number,
  nowMs: number,
): Promise<TakeSlotResult> {
  for (;;) {
    const version = await kv.get<Deno.KvU64>(slotsVersionKey(partnerId));
    let partner = 0;
    let mine = 0;
    for await (const e of kv.list<StreamSlot>({ prefix: slotPrefix(partnerId) })) {
      if (e.value.expiresAt <= nowMs) continue;
      partner++;
      if (e.value.wallet === wallet) mine++;
    }
    if (mine >= limits.perWallet) return { ok: false, limit: "wallet" };
    if (partner >= limits.perPartner) return { ok: false, limit: "partner" };
    const key = [...slotPrefix(partnerId), crypto.randomUUID()];
    const value: StreamSlot = { wallet, expiresAt: nowMs + ttlMs };
    const res = await kv.atomic()
      .check(version)
      .sum(slotsVersionKey(partnerId), 1n)
      .set(key, value, { expireIn: ttlMs })
      .commit();
    if (res.ok) return { ok: true, slot: { key, value, versionstamp: res.versionstamp } };
  }
}

/**
 * The slot renewed for another `ttlMs`, or null when it was lost: its time ran out (another process may have counted
 * it free and taken its place) or the record changed. A stream without its slot ends; the client reconnects.
 */
export async function renewStreamSlot(
  kv: Deno.Kv,
  slot: Deno.KvEntry<StreamSlot>,
  ttlMs: number,
  nowMs: number,
): Promise<Deno.KvEntry<StreamSlot> | null> {
  if (slot.value.expiresAt <= nowMs) return null;
  const value: StreamSlot = { ...slot.value, expiresAt: nowMs + ttlMs };
  const res = await kv.atomic().check(slot).set(slot.key, value, { expireIn: ttlMs }).commit();
  return res.ok ? { key: slot.key, value, versionstamp: res.versionstamp } : null;
}

/** Frees the slot at once (the stream ended). */
export async function releaseStreamSlot(kv: Deno.Kv, slot: Deno.KvEntry<StreamSlot>): Promise<void> {
  await kv.delete(slot.key);
}
