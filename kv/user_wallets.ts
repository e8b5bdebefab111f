/**
 * User wallet records (spec 2.7): one per EVM wallet, created active by the first token issued for it.
 * Addresses are stored lowercase, the same form as the JWT `sub`. A wallet belongs to the partner whose key issued
 * its first token; only an operator (`wallet move`, audited) gives it to another partner.
 */
import { appendAudit, type AuditEntry } from "./audit.ts";

export type WalletStatus = "active" | "inactive";

export interface UserWallet {
  address: string;
  status: WalletStatus;
  /**
   * The partner that owns the wallet: whose key issued its first token, or the one an operator moved it to. Empty
   * while unbound (an operator deactivated the address before any token); the next token request binds it.
   */
  partnerId: string;
  createdAt: string;
  updatedAt: string;
}

export const userWalletKey = (address: string): Deno.KvKey => ["user_wallet", address.toLowerCase()];

export async function getUserWallet(kv: Deno.Kv, address: string): Promise<UserWallet | null> {
  return (await kv.get<UserWallet>(userWalletKey(address))).value;
}

/**
 * Returns the wallet's record, creating it (active, owned by `partnerId`) if this is its first token, or binding it
 * to `partnerId` if it has no owner yet. An owned wallet is returned unchanged: the caller compares its owner.
 */
export async function ensureUserWallet(kv: Deno.Kv, address: string, partnerId: string): Promise<UserWallet> {
  const bound = await bindWallet(kv, address, partnerId, null);
  if (!bound.ok) throw new Error("unreachable: a binding without a quota is never refused");
  return bound.wallet;
}

/** Counts the wallets an API key bound on one UTC day (`YYYY-MM-DD`); kept two days, only today's is read. */
export const walletBindingsKey = (keyId: string, day: string): Deno.KvKey => ["wallet_bindings", keyId, day];
const BINDINGS_KEPT_MS = 2 * 86_400_000;

export type BindResult = { ok: true; wallet: UserWallet } | { ok: false; reason: "daily_limit" };

/**
 * `ensureUserWallet` for a token request made with API key `keyId`: a wallet it binds (a new one, or one with no owner
 * yet) counts against the key's `maxPerDay` new wallets of the current UTC day, in the same commit as the binding,
 * checked against the count read, so concurrent requests never bind more. Past the cap nothing is written. A wallet
 * already owned (by anyone) is returned unchanged and counts nothing.
 */
export function bindUserWallet(
  kv: Deno.Kv,
  address: string,
  by: { partnerId: string; keyId: string },
  maxPerDay: number,
  now = new Date(),
): Promise<BindResult> {
  return bindWallet(kv, address, by.partnerId, { keyId: by.keyId, maxPerDay, now });
}

async function bindWallet(
  kv: Deno.Kv,
  address: string,
  partnerId: string,
  quota: { keyId: string; maxPerDay: number; now: Date } | null,
): Promise<BindResult> {
  const key = userWalletKey(address);
  const countKey = quota && walletBindingsKey(quota.keyId, quota.now.toISOString().slice(0, 10));
  for (;;) {
    const keys: Deno.KvKey[] = countKey ? [key, countKey] : [key];
    const [entry, count] = await kv.getMany(keys) as [
      Deno.KvEntryMaybe<UserWallet>,
      Deno.KvEntryMaybe<Deno.KvU64> | undefined,
    ];
    if (entry.value?.partnerId) return { ok: true, wallet: entry.value };
    const now = (quota?.now ?? new Date()).toISOString();
    const wallet: UserWallet = entry.value ? { ...entry.value, partnerId, updatedAt: now } : {
      address: address.toLowerCase(),
      status: "active",
      partnerId,
      createdAt: now,
      updatedAt: now,
    };
    // Checked against the version read: two partners racing for an unowned wallet cannot both bind it.
    const op = kv.atomic().check(entry).set(key, wallet);
    if (quota && countKey && count) {
      const bound = count.value?.value ?? 0n;
      if (bound >= BigInt(quota.maxPerDay)) return { ok: false, reason: "daily_limit" };
      op.check(count).set(countKey, new Deno.KvU64(bound + 1n), { expireIn: BINDINGS_KEPT_MS });
    }
    if ((await op.commit()).ok) return { ok: true, wallet };
  }
}

export type MoveResult =
  | { ok: true; wallet: UserWallet; audit: AuditEntry }
  | { ok: false; error: string };

/**
 * Gives a wallet to another partner, with its audit entry in the same atomic. Tokens issued to the previous owner
 * stop working at once: every JWT route compares the token's partner with the record's.
 */
export async function moveUserWallet(
  kv: Deno.Kv,
  address: string,
  toPartner: string,
  by: string,
  now = new Date(),
): Promise<MoveResult> {
  const key = userWalletKey(address);
  for (;;) {
    const entry = await kv.get<UserWallet>(key);
    if (!entry.value) return { ok: false, error: `no wallet ${address.toLowerCase()}: it never had a token` };
    const before = entry.value.partnerId;
    if (before === toPartner) {
      return { ok: false, error: `wallet ${entry.value.address} already belongs to ${toPartner}` };
    }
    const wallet: UserWallet = { ...entry.value, partnerId: toPartner, updatedAt: now.toISOString() };
    const op = kv.atomic().check(entry).set(key, wallet);
    const audit = appendAudit(op, {
      by,
      action: "wallet.move",
      subject: wallet.address,
      before: { partnerId: before },
      after: { partnerId: toPartner },
    }, now);
    if ((await op.commit()).ok) return { ok: true, wallet, audit };
  }
}

/**
 * Sets a wallet's status. A wallet that never had a token is created with that status when `createIfMissing`
 * (an operator may block an address before its first token); otherwise null is returned.
 */
export async function setUserWalletStatus(
  kv: Deno.Kv,
  address: string,
  status: WalletStatus,
  opts: {
    createIfMissing?: boolean;
    partnerId?: string;
    /** Adds the operator's audit entry to the commit that sets the status (kv/audit.ts). */
    audit?: (op: Deno.AtomicOperation, before: UserWallet | null, after: UserWallet) => void;
  } = {},
): Promise<UserWallet | null> {
  const key = userWalletKey(address);
  for (;;) {
    const entry = await kv.get<UserWallet>(key);
    const now = new Date().toISOString();
    if (!entry.value && !opts.createIfMissing) return null;
    const next: UserWallet = entry.value
      ? { ...entry.value, status, updatedAt: now }
      : { address: address.toLowerCase(), status, partnerId: opts.partnerId ?? "", createdAt: now, updatedAt: now };
    const op = kv.atomic().check(entry).set(key, next);
    opts.audit?.(op, entry.value, next);
    if ((await op.commit()).ok) return next;
  }
}
