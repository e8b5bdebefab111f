/**
 * Seeds many allocated deposit addresses in KV fast, as `createMintWallet` writes them (wallet, reverse index,
 * allocation, the chain's counter), for the watcher benches: the first `real` addresses are ours (derived, so the chain
 * can pay them), the rest random addresses of the chain's format that nothing ever pays.
 */
import { EVM_CHAINS, type NativeChain } from "../../chains/catalog.ts";
import { addMintWallet, type MintWallet, setAllocatedIndexCount } from "../../kv/mint_wallets.ts";

/** Wallets per commit: three records each, under KV's 1,000 mutations per atomic. */
const SEED_BATCH = 300;

export const randomBytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));
export const randomEvmAddress = () =>
  "0x" + Array.from(randomBytes(20), (b) => b.toString(16).padStart(2, "0")).join("");

/** Writes `count` allocated addresses of `chain`; returns the milliseconds it took. */
export async function seedDepositAddresses(kv: Deno.Kv, opts: {
  chain: NativeChain;
  count: number;
  /** How many of the first indexes get `ours(index)`; the others `random()`. */
  real: number;
  ours: (index: number) => string;
  random: () => string;
}): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < opts.count; from += SEED_BATCH) {
    const atomic = kv.atomic();
    const to = Math.min(opts.count, from + SEED_BATCH);
    for (let index = from; index < to; index++) {
      const wallet: MintWallet = {
        address: index < opts.real ? opts.ours(index) : opts.random(),
        chain: opts.chain,
        destinationChain: EVM_CHAINS[index % EVM_CHAINS.length],
        owner: randomEvmAddress(),
        derivationIndex: index,
        createdAt: new Date().toISOString(),
      };
      addMintWallet(atomic, wallet);
    }
    if (!(await setAllocatedIndexCount(atomic, opts.chain, to).commit()).ok) {
      throw new Error(`seeding ${opts.chain} deposit addresses failed at index ${from}`);
    }
  }
  return performance.now() - started;
}
