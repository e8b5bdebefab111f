/**
 * Mint wallets (deposit addresses). Each (owner, chain, destinationChain) has its own address, derived from the
 * operator mnemonic at an index allocated atomically per chain and never reused. A reverse index from
 * (chain, address) to owner and destination lets watchers match a chain's outputs against our addresses.
 */
import type { EvmChain, NativeChain } from "../chains/catalog.ts";

export interface MintWallet {
  address: string;
  chain: NativeChain;
  destinationChain: EvmChain;
  owner: string;
  derivationIndex: number;
  createdAt: string;
}

/** What a watcher needs to know about one of our deposit addresses. */
export interface DepositAddressOwner {
  owner: string;
  destinationChain: EvmChain;
  derivationIndex: number;
}

const mintWalletKey = (owner: string, chain: NativeChain, dest: EvmChain): Deno.KvKey => [
  "mint_wallet",
  owner,
  chain,
  dest,
];
const mintWalletPrefix = (owner: string): Deno.KvKey => ["mint_wallet", owner];
const depositAddressKey = (chain: NativeChain, address: string): Deno.KvKey => ["deposit_address", chain, address];
const depositAddressPrefix = (chain: NativeChain): Deno.KvKey => ["deposit_address", chain];
const nextIndexKey = (chain: NativeChain): Deno.KvKey => ["derivation_next_index", chain];

export type CreateMintWalletResult = { ok: true; wallet: MintWallet } | { ok: false; reason: "duplicate" };

/**
 * Allocates the chain's next derivation index and stores the wallet, its reverse index and the new counter in one
 * commit. The counter is checked by versionstamp: two concurrent creations cannot get the same index, and a failed
 * commit consumes nothing.
 */
export async function createMintWallet(
  kv: Deno.Kv,
  owner: string,
  chain: NativeChain,
  destinationChain: EvmChain,
  deriveAddress: (chain: NativeChain, index: number) => string,
): Promise<CreateMintWalletResult> {
  const walletKey = mintWalletKey(owner, chain, destinationChain);
  for (;;) {
    const [existing, counter] = await kv.getMany<[MintWallet, Deno.KvU64]>([walletKey, nextIndexKey(chain)]);
    if (existing.value) return { ok: false, reason: "duplicate" };
    const index = Number(counter.value?.value ?? 0n);
    const address = deriveAddress(chain, index);
    const wallet: MintWallet = {
      address,
      chain,
      destinationChain,
      owner,
      derivationIndex: index,
      createdAt: new Date().toISOString(),
    };
    const reverse: DepositAddressOwner = { owner, destinationChain, derivationIndex: index };
    const res = await kv.atomic()
      .check(existing)
      .check(counter)
      .check({ key: depositAddressKey(chain, address), versionstamp: null })
      .set(nextIndexKey(chain), new Deno.KvU64(BigInt(index + 1)))
      .set(walletKey, wallet)
      .set(depositAddressKey(chain, address), reverse)
      .commit();
    if (res.ok) return { ok: true, wallet };
  }
}

export async function listMintWallets(kv: Deno.Kv, owner: string): Promise<MintWallet[]> {
  const out: MintWallet[] = [];
  for await (const e of kv.list<MintWallet>({ prefix: mintWalletPrefix(owner) })) out.push(e.value);
  return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.derivationIndex - b.derivationIndex);
}

export async function findDepositAddress(
  kv: Deno.Kv,
  chain: NativeChain,
  address: string,
): Promise<DepositAddressOwner | null> {
  return (await kv.get<DepositAddressOwner>(depositAddressKey(chain, address))).value;
}

/** Owners of those of `addresses` that are our deposit addresses on `chain` (one batched read per 10). */
export async function findDepositAddresses(
  kv: Deno.Kv,
  chain: NativeChain,
  addresses: string[],
): Promise<Map<string, DepositAddressOwner>> {
  const unique = [...new Set(addresses)];
  const out = new Map<string, DepositAddressOwner>();
  for (let i = 0; i < unique.length; i += 10) {
    const batch = unique.slice(i, i + 10);
    const entries = await kv.getMany<DepositAddressOwner[]>(batch.map((a) => depositAddressKey(chain, a)));
    entries.forEach((e, j) => e.value && out.set(batch[j], e.value));
  }
  return out;
}

/** Every deposit address of a chain with its owner, for a watcher's in-memory match set. */
export async function listDepositAddresses(
  kv: Deno.Kv,
  chain: NativeChain,
): Promise<Map<string, DepositAddressOwner>> {
  const out = new Map<string, DepositAddressOwner>();
  for await (const e of kv.list<DepositAddressOwner>({ prefix: depositAddressPrefix(chain) })) {
    out.set(e.key[2] as string, e.value);
  }
  return out;
}

/** The response shape of spec 2.2. */
export function toMintWalletView(w: MintWallet) {
  return { address: w.address, chain: w.chain, destinationChain: w.destinationChain };
}
