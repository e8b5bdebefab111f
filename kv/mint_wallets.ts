/**
 * Mint wallets (deposit addresses). Each (owner, chain, destinationChain) has its own address, derived from the
 * operator mnemonic at an index allocated atomically per chain and never reused. A reverse index from
 * (chain, address) to owner and destination says whose a deposit is; an append-only log by (chain, index), written in
 * the commit that allocates the index, lets a watcher's in-memory set (kv/address_index.ts) load only what is new.
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
const allocationKey = (chain: NativeChain, index: number): Deno.KvKey => ["deposit_address_by_index", chain, index];

/** One allocation in the append-only log by (chain, index): the reverse index's entry with its address. */
export interface AllocatedDepositAddress extends DepositAddressOwner {
  address: string;
}

export type CreateMintWalletResult = { ok: true; wallet: MintWallet } | { ok: false; reason: "duplicate" };

/**
 * Allocates the chain's next derivation index and stores the wallet, its reverse index, its entry in the log by index
 * and the new counter in one commit. The counter is checked by versionstamp: two concurrent creations cannot get the
 * same index, and a failed commit consumes nothing. Whoever reads the counter as n therefore finds the log entries of
 * every index below n: the match sets of kv/address_index.ts rely on it.
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
    const atomic = kv.atomic()
      .check(existing)
      .check(counter)
      .check({ key: depositAddressKey(chain, address), versionstamp: null })
      .check({ key: allocationKey(chain, index), versionstamp: null });
    const res = await setAllocatedIndexCount(addMintWallet(atomic, wallet), chain, index + 1).commit();
    if (res.ok) return { ok: true, wallet };
  }
}

/**
 * Adds the records of an allocated wallet to `atomic`: the wallet, its reverse index and its log entry. The caller
 * checks that they are new and sets the chain's counter past the index in the same commit (`createMintWallet`; the
 * matching bench writes many at once).
 */
export function addMintWallet(atomic: Deno.AtomicOperation, wallet: MintWallet): Deno.AtomicOperation {
  const { address, chain, destinationChain, owner, derivationIndex } = wallet;
  const reverse: DepositAddressOwner = { owner, destinationChain, derivationIndex };
  const allocation: AllocatedDepositAddress = { address, ...reverse };
  return atomic
    .set(mintWalletKey(owner, chain, destinationChain), wallet)
    .set(depositAddressKey(chain, address), reverse)
    .set(allocationKey(chain, derivationIndex), allocation);
}

/** Adds the chain's allocation counter to `atomic`: `count` indexes are taken. */
export function setAllocatedIndexCount(atomic: Deno.AtomicOperation, chain: NativeChain, count: number) {
  return atomic.set(nextIndexKey(chain), new Deno.KvU64(BigInt(count)));
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

/**
 * Owners of those of `addresses` that are our deposit addresses on `chain` (one batched read per 10). Watchers match
 * in memory instead (kv/address_index.ts); this is the baseline `deno task bench:matching` compares with.
 */
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

/** Every deposit address of a chain with its owner. */
export async function listDepositAddresses(
  kv: Deno.Kv,
  chain: NativeChain,
): Promise<Map<string, DepositAddressOwner>> {
  const out = new Map<string, DepositAddressOwner>();
  for await (const [address, owner] of eachDepositAddress(kv, chain)) out.set(address, owner);
  return out;
}

/**
 * The reverse index of a chain, one entry at a time: complete, also for addresses allocated before the log by index
 * existed.
 */
export async function* eachDepositAddress(
  kv: Deno.Kv,
  chain: NativeChain,
): AsyncGenerator<[string, DepositAddressOwner]> {
  for await (const e of kv.list<DepositAddressOwner>({ prefix: depositAddressPrefix(chain) })) {
    yield [e.key[2] as string, e.value];
  }
}

/** How many derivation indexes of `chain` were allocated: one KV read. */
export async function allocatedIndexCount(kv: Deno.Kv, chain: NativeChain): Promise<number> {
  return Number((await kv.get<Deno.KvU64>(nextIndexKey(chain))).value?.value ?? 0n);
}

/** The log entries of the indexes `from` (inclusive) to `to` (exclusive), in index order. */
export async function listAllocations(
  kv: Deno.Kv,
  chain: NativeChain,
  from: number,
  to: number,
): Promise<AllocatedDepositAddress[]> {
  const out: AllocatedDepositAddress[] = [];
  const range = { start: allocationKey(chain, from), end: allocationKey(chain, to) };
  for await (const e of kv.list<AllocatedDepositAddress>(range)) out.push(e.value);
  return out;
}

/** The response shape of spec 2.2. */
export function toMintWalletView(w: MintWallet) {
  return { address: w.address, chain: w.chain, destinationChain: w.destinationChain };
}
