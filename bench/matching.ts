/**
 * Address matching in bulk (docs/benchmarks.md "Address matching"): a busy block's recipients against our deposit
 * addresses, in one process over one real KV file. 100,000 deposit addresses on sol (written in batches through
 * `addMintWallet`, the records `createMintWallet` writes), then blocks of 3,000 transfers, 1% of them to our addresses,
 * matched two ways:
 * - reverse index: `findDepositAddresses`, one KV `getMany` per 10 distinct recipients (the watcher before);
 * - in-memory set: `DepositAddressSet.match` (kv/address_index.ts), plus the one counter read its refresh costs per
 *   watcher tick, counted here as if every tick held a single block (the worst case).
 * Prints KV reads, ms per block and blocks per second for each, and the set's load time and memory. Figures only.
 * Run: deno task bench:matching   (BENCH_ADDRESSES=100000, BENCH_TRANSFERS=3000, BENCH_OURS_PERCENT=1)
 */
import { base58 } from "@scure/base";
import type { ObservedTransfer, ScannedBlock } from "../chains/adapter.ts";
import { EVM_CHAINS } from "../chains/catalog.ts";
import { DepositAddressSet } from "../kv/address_index.ts";
import {
  addMintWallet,
  createMintWallet,
  findDepositAddresses,
  type MintWallet,
  setAllocatedIndexCount,
} from "../kv/mint_wallets.ts";
import { openKv } from "../kv/open.ts";
import { countReads, type ReadCounter } from "../tests/support/kv_reads.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const ADDRESSES = num("BENCH_ADDRESSES", 100_000);
const TRANSFERS = num("BENCH_TRANSFERS", 3_000);
const OURS_PERCENT = num("BENCH_OURS_PERCENT", 1);
/** Wallets per commit while seeding: three records each, under KV's 1,000 mutations per atomic. */
const SEED_BATCH = 300;
const CHAIN = "sol";
const OLD_BLOCKS = 20;
const NEW_BLOCKS = 2_000;

/** A random 32-byte key in base58: what a Solana address looks like, and as long. */
const solAddress = () => base58.encode(crypto.getRandomValues(new Uint8Array(32)));
const evmAddress = () =>
  "0x" + Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, "0")).join("");

function gc() {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect) { for (let i = 0; i < 3; i++) collect(); }
}
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Matches `count` blocks (cycling over `blocks`) after a warm-up: reads, time and matches per block. */
async function run(
  name: string,
  count: number,
  blocks: ScannedBlock[],
  reads: ReadCounter,
  match: (b: ScannedBlock) => Promise<Map<string, unknown>>,
) {
  for (const b of blocks.slice(0, 3)) await match(b);
  reads.reset();
  let matched = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) matched += (await match(blocks[i % blocks.length])).size;
  const ms = performance.now() - started;
  return {
    name,
    readsPerBlock: reads.reads.length / count,
    msPerBlock: ms / count,
    perSecond: (count * 1000) / ms,
    matchedPerBlock: matched / count,
  };
}

const dir = await Deno.makeTempDir({ prefix: "bench-matching-" });
const kv = await openKv(`${dir}/kv.sqlite3`);
try {
  // ---- seed: every address its own owner (the most memory per address), destinations spread over the EVM chains ----
  const ours: string[] = [];
  let started = performance.now();
  for (let from = 0; from < ADDRESSES; from += SEED_BATCH) {
    const atomic = kv.atomic();
    const to = Math.min(ADDRESSES, from + SEED_BATCH);
    for (let index = from; index < to; index++) {
      const wallet: MintWallet = {
        address: solAddress(),
        chain: CHAIN,
        destinationChain: EVM_CHAINS[index % EVM_CHAINS.length],
        owner: evmAddress(),
        derivationIndex: index,
        createdAt: new Date().toISOString(),
      };
      addMintWallet(atomic, wallet);
      ours.push(wallet.address);
    }
    const res = await setAllocatedIndexCount(atomic, CHAIN, to).commit();
    if (!res.ok) throw new Error("seeding commit failed");
  }
  console.log(
    `seeded ${ADDRESSES.toLocaleString()} ${CHAIN} deposit addresses in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );

  // ---- blocks: TRANSFERS transfers each, OURS_PERCENT of them to our addresses ----
  const oursPerBlock = Math.round((TRANSFERS * OURS_PERCENT) / 100);
  const block = (n: number): ScannedBlock => {
    const transfers: ObservedTransfer[] = [];
    for (let i = 0; i < TRANSFERS; i++) {
      const to = i < oursPerBlock ? ours[Math.floor(Math.random() * ours.length)] : solAddress();
      transfers.push({ txHash: `tx-${n}-${i}`, index: 0, from: solAddress(), to, amount: 10n ** 7n, asset: "native" });
    }
    return { number: n, hash: `h${n}`, parentHash: `h${n - 1}`, transfers };
  };
  const blocks = Array.from({ length: 50 }, (_, n) => block(n + 1));
  const reads = countReads(kv);

  // ---- the set: load time and memory ----
  gc();
  const heapBefore = Deno.memoryUsage().heapUsed;
  const set = new DepositAddressSet(kv, CHAIN);
  started = performance.now();
  await set.refresh();
  const loadMs = performance.now() - started;
  gc();
  const heapAfter = Deno.memoryUsage().heapUsed;
  const loadReads = reads.reads.length;
  const loaded = set.size;

  // ---- one allocation by the real createMintWallet, then the refresh that picks it up ----
  await createMintWallet(kv, evmAddress(), CHAIN, "base", () => solAddress());
  reads.reset();
  started = performance.now();
  const refreshed = await set.refresh();
  const appendMs = performance.now() - started;
  const appendReads = reads.reads.length;

  // ---- the two paths ----
  const old = await run(
    "reverse index (getMany per 10)",
    OLD_BLOCKS,
    blocks,
    reads,
    (b) => findDepositAddresses(kv, CHAIN, b.transfers.map((t) => t.to)),
  );
  const inMemory = await run(
    "in-memory set",
    NEW_BLOCKS,
    blocks,
    reads,
    (b) => Promise.resolve(set.match(b.transfers.map((t) => t.to))),
  );
  const perTick = await run("in-memory set + refresh per block", NEW_BLOCKS, blocks, reads, async (b) => {
    await set.refresh();
    return set.match(b.transfers.map((t) => t.to));
  });

  console.log(`block: ${TRANSFERS.toLocaleString()} transfers, ${oursPerBlock} to our addresses`);
  const heap = heapAfter - heapBefore;
  const gcNote = (globalThis as { gc?: unknown }).gc ? "" : "; run with --v8-flags=--expose-gc for a steady figure";
  console.log(`set load: ${loadMs.toFixed(0)} ms, ${loaded.toLocaleString()} addresses`);
  console.log(`  ${loadReads} KV reads (the counter, then one listing of the reverse index)`);
  console.log(`  heap +${mb(heap)} MB (${(heap / loaded).toFixed(0)} bytes per address${gcNote})`);
  console.log(
    `refresh after one allocation by another caller: ${refreshed}, ${appendReads} KV reads, ${appendMs.toFixed(2)} ms`,
  );
  console.log("");
  console.log("| path | KV reads per block | ms per block | blocks per second | matches per block |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const r of [old, inMemory, perTick]) {
    console.log(
      `| ${r.name} | ${r.readsPerBlock.toFixed(0)} | ${r.msPerBlock.toFixed(3)} | ${r.perSecond.toFixed(0)} | ${
        r.matchedPerBlock.toFixed(0)
      } |`,
    );
  }
} finally {
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
