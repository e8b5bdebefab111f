/**
 * The zec watcher catching up on a day of mainnet-sized blocks, against a Zebra-shaped server
 * (tests/support/zebra_rpc_server.ts with `mainnetBlocks`; no Zebra runs here) that generates each block (~12
 * transactions, transparent and shielded-only, ~165 KB of `getblock` verbosity 2 JSON) from its height when asked, so
 * neither side holds the day. Counted, not timed (docs/scan-budget.md): the bytes each step reads, the largest answer
 * held at once, the cursor stored after every step, the deposits credited exactly once (a crash that loses the last
 * step records nothing new), peak RSS under a ceiling. Then providers that cap batches and answer sizes, or answer at
 * 10 MB/s with a short timeout, and Zebra's own answer cap (jsonrpsee's `max_response_body_size`): smaller requests,
 * no stall, no duplicate. The whole day runs here (~10-20 s on the 2-core machine); bench/scale/zec.ts measures its
 * rate and memory in a process of its own.
 */
import assert from "node:assert/strict";
import { zebraNode } from "../chains/utxo/zebra.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { watchOnce } from "../actors/watcher.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { type ZebraServerOptions, ZebraShapedServer } from "./support/zebra_rpc_server.ts";
import { assertBoundedCatchUp, catchUp, utxoWatcherByHand } from "./support/utxo_catchup.ts";

/** A mainnet height of late 2025. */
const FIRST = 3_100_000;
const DAY = 1_152;
const DEPOSITS = [1_230_000_000n, 4_560_000_000n];

type Options = Omit<ZebraServerOptions, "mainnetBlocks" | "network">;

async function setUp(opts: Options, count: number, timeoutMs?: number) {
  const h = await utxoWatcherByHand("zec");
  const deposits = [
    { height: FIRST + Math.floor(count / 3), address: h.address, amount: DEPOSITS[0] },
    { height: FIRST + Math.floor((2 * count) / 3), address: h.address, amount: DEPOSITS[1] },
  ];
  const core = ZebraShapedServer.start({
    ...opts,
    network: h.network,
    mainnetBlocks: { first: FIRST, count, deposits },
  });
  const node = zebraNode(utxoRpc({ chain: "zec", urls: [core.url], timeoutMs }), h.network);
  await h.useNode(node, { number: FIRST, hash: core.mainnet!.hashAt(FIRST)! });
  return { h, core, deposits, tip: core.mainnet!.last };
}

const credited = DEPOSITS.map((a) => ["mint", a.toString()]).sort();

Deno.test("zec watcher on a Zebra-shaped server catches up on a day of mainnet-sized blocks in bounded steps, memory bounded, each deposit credited once", async () => {
  const { h, core, deposits, tip } = await setUp({}, DAY + 1);
  try {
    const { steps, startRss } = await catchUp(h, "zec", tip, 100);
    const last = steps.at(-1)!;
    const stats = h.reader.stats;
    assert.equal(last.scannedTo, tip, "caught up");
    assert.equal(stats.blocks, DAY);
    const perBlock = stats.bytes / stats.blocks;
    assert.ok(perBlock > 100_000, `mainnet-sized blocks were read (${perBlock.toFixed(0)} bytes each)`);
    // One request per block request (getblock by height), so a day is a few dozen requests, never one per block.
    assert.ok(core.served.requests <= stats.requests + 4 * steps.length, `${core.served.requests} requests`);
    // Every payment output is a transfer (a reorg may still replace these blocks: none is dropped by `ours`).
    assert.ok(stats.transfersBuilt > 8 * DAY, `${stats.transfersBuilt} transfers`);
    assertBoundedCatchUp(steps, startRss, stats, core.served, 5);
    assert.deepEqual((await h.orders()).sort(), credited);

    // A crash that lost the step holding the second deposit: its block read again records nothing new.
    const at = deposits[1].height - 1;
    await h.ctx.kv.set(cursorKey("zec"), { number: at, hash: core.mainnet!.hashAt(at)! });
    const again = await watchOnce(h.ctx, "zec", "by-hand", 60_000);
    assert.ok(again.scannedTo! > deposits[1].height);
    assert.deepEqual((await h.orders()).sort(), credited, "credited exactly once");
  } finally {
    await h.close();
    await core.close();
  }
});

Deno.test("zec watcher on a Zebra-shaped server: a provider capping batches and answer sizes is read in smaller requests, never stalled", async () => {
  // ~165 KB per block: a 4-block answer is above the 600 KB cap, a 5-call batch above the count cap.
  const { h, core, tip } = await setUp({ limits: { maxBatch: 4, maxResponseBytes: 600_000 } }, 120);
  try {
    const { steps } = await catchUp(h, "zec", tip, 30);
    assert.equal(steps.at(-1)!.scannedTo, tip, "caught up");
    assert.ok(h.reader.stats.fallbacks > 0, "the provider refused some requests");
    assert.ok(core.served.refused > 0);
    assert.ok(h.logs.some((m) => /zec: blocks \d+\.\.\d+ in one request failed .*asking \d+ at a time/.test(m)));
    assert.ok(h.reader.stats.largestResponse <= 600_000);
    assert.deepEqual((await h.orders()).sort(), credited);
  } finally {
    await h.close();
    await core.close();
  }
});

Deno.test("zec watcher on a Zebra-shaped server: a 10 MB/s provider whose large answers time out is read in smaller requests", async () => {
  // 10 MB/s with a 100 ms timeout: an 8-block answer (~1.3 MB, ~130 ms) times out, one of 4 (~0.65 MB) does not.
  const { h, core, tip } = await setUp({ limits: { bytesPerSecond: 10_000_000 } }, 200, 100);
  try {
    const { steps, failures } = await catchUp(h, "zec", tip, 60, 20);
    assert.equal(steps.at(-1)!.scannedTo, tip, "caught up");
    assert.ok(h.reader.stats.fallbacks > 0, h.logs.join("\n"));
    assert.ok(h.logs.some((m) => /timed out|failed on every URL/i.test(m)), h.logs.join("\n"));
    assert.ok(failures.length <= 20);
    assert.deepEqual((await h.orders()).sort(), credited);
  } finally {
    await h.close();
    await core.close();
  }
});

Deno.test("zec watcher on a Zebra-shaped server: answers above Zebra's own size cap (jsonrpsee's max_response_body_size) are asked again smaller", async () => {
  // A 1 MB cap: a batch of 8 blocks (~1.3 MB) is answered with one -32011 object; 4 blocks fit.
  const { h, core, tip } = await setUp({ maxResponseBodySize: 1_000_000 }, 100);
  try {
    const { steps } = await catchUp(h, "zec", tip, 30);
    assert.equal(steps.at(-1)!.scannedTo, tip, "caught up");
    assert.ok(h.logs.some((m) => /The batch response was too large/.test(m)), h.logs.join("\n"));
    assert.ok(h.reader.stats.largestResponse <= 1_000_000);
    assert.equal(core.served.refused, 0, "refused by the node itself, not a provider");
    assert.deepEqual((await h.orders()).sort(), credited);
  } finally {
    await h.close();
    await core.close();
  }
});
