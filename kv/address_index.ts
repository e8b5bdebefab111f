/**
 * Our deposit addresses of one native chain, in memory, so that a watcher matches a block's recipients without
 * reading KV (docs/benchmarks.md "Address matching"). One set per (KV handle, chain) per process, created on first use.
 *
 * Kept fresh by the allocation itself: `createMintWallet` advances the chain's counter and appends the address to a
 * log keyed by (chain, index) in one commit (kv/mint_wallets.ts). `refresh` reads the counter (one KV read) and, only
 * when it moved, lists the log entries between the index the set holds and the counter. Why the set cannot miss an
 * address that existed when `refresh` read the counter:
 * - the counter and the log entry of an index are written in the same commit, and indexes are taken in order, so a
 *   counter read as n means the entries of every index below n are committed and a later read finds them;
 * - if they are not all found anyway (a counter moved without its entries: a process running code from before the
 *   log, a restored or hand-edited file), the set is rebuilt from the reverse index, which holds every address, not
 *   patched with what was found;
 * - the watcher refreshes after it has read a range of blocks, not before: an address a deposit in those blocks was
 *   sent to was allocated before the deposit was made, so before the blocks were read, so before the counter was.
 * A full load also reads the counter first and the reverse index after, so it holds at least every index below the
 * counter it records.
 *
 * Memory: a `Map` from address to owner, not a bloom filter. It is exact (a bloom filter's false positives would each
 * cost a read, and a positive would still need the owner from KV), and it answers with the owner and destination
 * without any read, also on a match. `deno task bench:matching` measures about 25 MB per 100,000 sol addresses when
 * every address has an owner of its own (the most per address; owners and destinations repeated are held once), and
 * 1.2 s to load them; five chains at that size stay well within one server. A bloom filter in front of the reverse
 * index becomes worth it at millions of addresses per chain.
 */
import type { NativeChain } from "../chains/catalog.ts";
import { allocatedIndexCount, type DepositAddressOwner, eachDepositAddress, listAllocations } from "./mint_wallets.ts";

/** What a refresh did: "inconsistent" means the log missed entries the counter promised, and the set was rebuilt. */
export type RefreshResult = "loaded" | "unchanged" | "appended" | "inconsistent";

export class DepositAddressSet {
  #byAddress = new Map<string, DepositAddressOwner>();
  /** Strings repeated over many entries (owners, destination chains), held once. */
  readonly #strings = new Map<string, string>();
  /** Every index below this one is in the set; null before the first load. */
  #loadedBelow: number | null = null;
  /** Refreshes run one after the other, each reading the counter only once it starts. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Full loads done, the first one included. */
  loads = 0;

  constructor(private readonly kv: Deno.Kv, readonly chain: NativeChain) {}

  /** Brings the set up to every address allocated before this call: one KV read when nothing is new. */
  refresh(): Promise<RefreshResult> {
    const run = this.#queue.then(() => this.#refresh());
    this.#queue = run.catch(() => {});
    return run;
  }

  /** The owner of `address` if it is ours. Throws before the first refresh: an empty set would miss deposits. */
  get(address: string): DepositAddressOwner | undefined {
    if (this.#loadedBelow === null) throw new Error(`deposit addresses of ${this.chain} used before they were loaded`);
    return this.#byAddress.get(address);
  }

  /** Those of `addresses` that are ours, with their owners. No KV read. */
  match(addresses: Iterable<string>): Map<string, DepositAddressOwner> {
    const out = new Map<string, DepositAddressOwner>();
    for (const a of addresses) {
      const owner = this.get(a);
      if (owner) out.set(a, owner);
    }
    return out;
  }

  get size(): number {
    return this.#byAddress.size;
  }

  /** Every address in the set, read as iterated (a reader polling per address, chains/adapter.ts `AddressList`). */
  values(): Iterable<string> {
    if (this.#loadedBelow === null) throw new Error(`deposit addresses of ${this.chain} used before they were loaded`);
    return this.#byAddress.keys();
  }

  /** Every index below this one is in the set (null before the first load). */
  get loadedBelow(): number | null {
    return this.#loadedBelow;
  }

  async #refresh(): Promise<RefreshResult> {
    const allocated = await allocatedIndexCount(this.kv, this.chain);
    const have = this.#loadedBelow;
    if (have === null) {
      await this.#load(allocated);
      return "loaded";
    }
    if (allocated === have) return "unchanged";
    // A counter that went back is another database than the one loaded: start over.
    if (allocated < have) {
      await this.#load(allocated);
      return "inconsistent";
    }
    const fresh = await listAllocations(this.kv, this.chain, have, allocated);
    if (fresh.length !== allocated - have || fresh.some((a, i) => a.derivationIndex !== have + i)) {
      await this.#load(allocated);
      return "inconsistent";
    }
    for (const a of fresh) this.#add(a.address, a);
    this.#loadedBelow = allocated;
    return "appended";
  }

  /**
   * Rebuilds the set from the reverse index, read after the counter was read as `allocated`. The new map replaces the
   * old one only when complete, so a match during the load answers from the old one, never from half a set.
   */
  async #load(allocated: number) {
    const loaded = new Map<string, DepositAddressOwner>();
    for await (const [address, owner] of eachDepositAddress(this.kv, this.chain)) this.#add(address, owner, loaded);
    this.#byAddress = loaded;
    this.#loadedBelow = allocated;
    this.loads++;
  }

  #add(address: string, o: DepositAddressOwner, into = this.#byAddress) {
    into.set(address, {
      owner: this.#shared(o.owner),
      destinationChain: this.#shared(o.destinationChain) as DepositAddressOwner["destinationChain"],
      derivationIndex: o.derivationIndex,
    });
  }

  #shared(s: string): string {
    const held = this.#strings.get(s);
    if (held !== undefined) return held;
    this.#strings.set(s, s);
    return s;
  }
}

const sets = new WeakMap<Deno.Kv, Map<NativeChain, DepositAddressSet>>();

/** This process's set of `chain` over `kv`, created (not loaded) on first use. */
export function depositAddressSet(kv: Deno.Kv, chain: NativeChain): DepositAddressSet {
  let perChain = sets.get(kv);
  if (!perChain) sets.set(kv, perChain = new Map());
  let set = perChain.get(chain);
  if (!set) perChain.set(chain, set = new DepositAddressSet(kv, chain));
  return set;
}

/** Drops this process's sets over `kv`: the next use loads them again from KV. */
export function forgetDepositAddressSets(kv: Deno.Kv) {
  sets.delete(kv);
}
