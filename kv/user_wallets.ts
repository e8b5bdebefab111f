/**
 * User wallet records (spec 2.7): one per EVM wallet, created active by the first token issued for it.
 * Addresses are stored lowercase, the same form as the JWT `sub`.
 */
export type WalletStatus = "active" | "inactive";

export interface UserWallet {
  address: string;
  status: WalletStatus;
  /** Partner whose key issued the wallet's first token. */
  partnerId: string;
  createdAt: string;
  updatedAt: string;
}

export const userWalletKey = (address: string): Deno.KvKey => ["user_wallet", address.toLowerCase()];

export async function getUserWallet(kv: Deno.Kv, address: string): Promise<UserWallet | null> {
  return (await kv.get<UserWallet>(userWalletKey(address))).value;
}

/** Returns the wallet's record, creating it (active) if this is its first token. */
export async function ensureUserWallet(kv: Deno.Kv, address: string, partnerId: string): Promise<UserWallet> {
  const key = userWalletKey(address);
  for (;;) {
    const entry = await kv.get<UserWallet>(key);
    if (entry.value) return entry.value;
    const now = new Date().toISOString();
    const wallet: UserWallet = {
      address: address.toLowerCase(),
      status: "active",
      partnerId,
      createdAt: now,
      updatedAt: now,
    };
    const res = await kv.atomic().check({ key, versionstamp: null }).set(key, wallet).commit();
    if (res.ok) return wallet;
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
  opts: { createIfMissing?: boolean; partnerId?: string } = {},
): Promise<UserWallet | null> {
  const key = userWalletKey(address);
  for (;;) {
    const entry = await kv.get<UserWallet>(key);
    const now = new Date().toISOString();
    if (!entry.value && !opts.createIfMissing) return null;
    const next: UserWallet = entry.value
      ? { ...entry.value, status, updatedAt: now }
      : { address: address.toLowerCase(), status, partnerId: opts.partnerId ?? "", createdAt: now, updatedAt: now };
    const res = await kv.atomic().check(entry).set(key, next).commit();
    if (res.ok) return next;
  }
}
