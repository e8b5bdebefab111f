/**
 * The goal of docs/scan-budget.md for the whole service: a catch-up on mainnet-sized blocks stays under 300 MB of
 * RSS. Here it is measured as bench/scale.ts measures it (bench/support/scale.ts `measureChain`): each native chain's
 * local protocol server (Solana-RPC-, rippled-, Sui-GraphQL-, Dogecoin-Core- and Zebra-shaped, no node runs here) serves
 * mainnet-sized blocks in a process of its own, and the whole service (HTTP, KV, every chain's adapters) catches up on
 * them in another, run with `deno task start`'s V8 flags, its RSS sampled every 20 ms. Shorter than the bench's runs
 * (a day of Dogecoin and Zcash, an hour of XRP ledgers, a few minutes of Solana slots and Sui checkpoints; the bench
 * does a day or 10,000+), long enough for the heap to reach its steady size. The peak is guarded, not timed.
 */
import assert from "node:assert/strict";
import { measureChain, startV8Flags } from "../bench/support/scale.ts";

/** The goal (300 MB, docs/scan-budget.md); the runs here peak at about 190-230 MiB. */
const RSS_CEILING = 300 * 1000 * 1000;

const RUNS: { chain: string; blocks: number }[] = [
  { chain: "sol", blocks: 300 },
  { chain: "xrp", blocks: 1_000 },
  { chain: "sui", blocks: 2_000 },
  { chain: "doge", blocks: 1_440 },
  { chain: "zec", blocks: 1_152 },
];

Deno.test("the whole service catches up on mainnet-sized blocks of every native chain (local protocol servers, a process each) under 300 MB of RSS, each hidden deposit credited once", async (t) => {
  const v8Flags = await startV8Flags();
  for (const { chain, blocks } of RUNS) {
    await t.step(`${chain}: ${blocks} blocks`, async () => {
      const f = await measureChain(chain, { v8Flags, blocks });
      assert.ok(f.blocks >= blocks - 1, `${f.blocks} blocks caught up`);
      assert.equal(f.credited, f.deposits, `${f.credited} of ${f.deposits} deposits credited`);
      assert.ok(
        f.peakRss < RSS_CEILING,
        `${chain}: peak RSS ${(f.peakRss / 2 ** 20).toFixed(0)} MiB (from ${(f.startRss / 2 ** 20).toFixed(0)})`,
      );
      console.log(
        `${chain}: ${f.blocks} blocks, peak RSS ${(f.peakRss / 2 ** 20).toFixed(0)} MiB from ` +
          `${(f.startRss / 2 ** 20).toFixed(0)}, ${(f.bytes / f.blocks / 1024).toFixed(0)} KiB and ` +
          `${(f.requests / f.blocks).toFixed(2)} requests per block`,
      );
    });
  }
});
