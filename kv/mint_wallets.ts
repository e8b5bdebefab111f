/**
 * Mint wallets (deposit addresses). Each (owner, chain, destinationChain) has its own address, derived from the
 * operator mnemonic at an index allocated atomically per chain and never reused. A reverse index from
 * (chain, address) to owner and destination says whose a deposit is; an append-only log by (chain, index), written in
 * the commit that allocates the index, lets a watcher's in-memory set (kv/address_index.ts) load only what is new.
 *
 * The deposit pool (docs/operations.md "Roles"): a process without the mnemonic (ROLE=api) cannot derive, since sol and
 * sui keys are ed25519 and have no public derivation. The worker therefore writes the addresses of the next indexes
 * ahead of time, one pool entry per (chain, index) from the allocation counter on; an allocation takes the entry at
 * exactly the counter's index, so indexes are still handed out in order and the log by index keeps its rule below.
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
const poolKey = (chain: NativeChain, index: number): Deno.KvKey => ["deposit_pool", chain, index];
/** One past the highest index the pool was filled to. */
const poolEndKey = (chain: NativeChain): Deno.KvKey => ["deposit_pool_end", chain];

/** A pre-derived deposit address, not yet allocated (written by the worker, taken by `createMintWallet`). */
export interface PoolEntry {
  address: string;
  derivationIndex: number;
}

/** One allocation in the append-only log by (chain, index): the reverse index's entry with its address. */
export interface AllocatedDepositAddress extends DepositAddressOwner {
  address: string;
}

export type CreateMintWalletResult =
  | { ok: true; wallet: MintWallet }
  | { ok: false; reason: "duplicate" }
  /** No pool entry at the next index and nothing to derive with (ROLE=api): nothing was written. */
  | { ok: false; reason: "pool_empty" };

/**
 * Where a new wallet's address comes from: a function deriving it (a process holding the mnemonic), and/or the pool.
 * With both, a pool entry at the index is taken when there is one, else the address is derived.
 */
export interface AddressSource {
  derive: ((chain: NativeChain, index: number) => string) | null;
  pool: boolean;
}

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
  source: ((chain: NativeChain, index: number) => string) | AddressSource,
): Promise<CreateMintWalletResult> {
  const { derive, pool } = typeof source === "function" ? { derive: source, pool: false } : source;
  const walletKey = mintWalletKey(owner, chain, destinationChain);
  for (;;) {
    const [existing, counter] = await kv.getMany<[MintWallet, Deno.KvU64]>([walletKey, nextIndexKey(chain)]);
    if (existing.value) return { ok: false, reason: "duplicate" };
    const index = Number(counter.value?.value ?? 0n);
    const entry = pool ? await kv.get<PoolEntry>(poolKey(chain, index)) : null;
    if (!entry?.value && !derive) {
      // The entry may be missing only because another process took this index since the counter was read: empty
      // only if the counter still stands where it was.
      if ((await kv.get(nextIndexKey(chain))).versionstamp !== counter.versionstamp) continue;
      return { ok: false, reason: "pool_empty" };
    }
    const address = entry?.value ? entry.value.address : derive!(chain, index);
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
    // The pool entry is consumed in the same commit: two api processes reading the same counter cannot both commit.
    if (entry?.value) atomic.check(entry).delete(entry.key);
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

/** Pre-derived addresses waiting in `chain`'s pool: one read of the counter and the pool's end. */
export async function depositPoolSize(kv: Deno.Kv, chain: NativeChain): Promise<number> {
  const [counter, end] = await kv.getMany<[Deno.KvU64, number]>([nextIndexKey(chain), poolEndKey(chain)]);
  return Math.max(0, (end.value ?? 0) - Number(counter.value?.value ?? 0n));
}

/**
 * Tops up `chain`'s pool: when fewer than `lowWater` addresses wait, derives `refill` more after the last one (or
 * from the allocation counter, whichever is higher) and writes them with the pool's new end in one commit, checked by
 * versionstamp so two workers never write different entries for one index. Idle (enough waiting) it reads and commits
 * nothing. Returns how many entries it wrote.
 */
export async function refillDepositPool(
  kv: Deno.Kv,
  chain: NativeChain,
  derive: (chain: NativeChain, index: number) => string,
  sizes: { lowWater: number; refill: number },
): Promise<number> {
  for (;;) {
    const [counter, end] = await kv.getMany<[Deno.KvU64, number]>([nextIndexKey(chain), poolEndKey(chain)]);
    const next = Number(counter.value?.value ?? 0n);
    const from = Math.max(next, end.value ?? 0);
    if (from - next >= sizes.lowWater) return 0;
    const to = from + sizes.refill;
    const atomic = kv.atomic().check(end).set(poolEndKey(chain), to);
    for (let index = from; index < to; index++) {
      atomic.set(poolKey(chain, index), { address: derive(chain, index), derivationIndex: index } satisfies PoolEntry);
    }
    if ((await atomic.commit()).ok) return to - from;
  }
}

/** The response shape of spec 2.2. */
export function toMintWalletView(w: MintWallet) {
  return { address: w.address, chain: w.chain, destinationChain: w.destinationChain };
}
