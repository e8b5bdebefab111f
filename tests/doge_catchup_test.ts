/**
 * The doge watcher catching up on a day of mainnet-sized blocks, against a Dogecoin-Core-shaped server
 * (tests/support/bitcoin_core_server.ts with `mainnetBlocks`; no Dogecoin Core runs here) that generates each
 * merge-mined block (~40 transactions, ~17 KB, read raw: chains/utxo/raw_block.ts) from its height when asked, so
 * neither side holds the day. Counted, not timed (docs/scan-budget.md): the bytes each step reads, the largest answer
 * held at once, the cursor stored after every step, the deposits credited exactly once (a crash that loses the last
 * step records nothing new), peak RSS under a ceiling. Then providers that cap batches and answer sizes, or answer at
 * 10 MB/s with a short timeout: smaller requests, no stall, no duplicate. The whole day runs here (~10-20 s on the
 * 2-core machine); bench/scale/doge.ts measures its rate and memory in a process of its own.
 */
import assert from "node:assert/strict";
import { bitcoinCoreNode } from "../chains/utxo/bitcoin_core.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { utxoReader } from "../chains/utxo/reader.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { watchOnce } from "../actors/watcher.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { type BitcoinCoreServerOptions, startBitcoinCoreServer } from "./support/bitcoin_core_server.ts";
import { assertBoundedCatchUp, catchUp, utxoWatcherByHand } from "./support/utxo_catchup.ts";

/** A mainnet height of late 2025. */
const FIRST = 5_900_000;
const DAY = 1_440;
const DEPOSITS = [1_230_000_000n, 4_560_000_000n];

async function setUp(opts: Omit<BitcoinCoreServerOptions, "mainnetBlocks">, count: number, timeoutMs?: number) {
  const h = await utxoWatcherByHand("doge");
  const deposits = [
    { height: FIRST + Math.floor(count / 3), address: h.address, amount: DEPOSITS[0] },
    { height: FIRST + Math.floor((2 * count) / 3), address: h.address, amount: DEPOSITS[1] },
  ];
  const core = startBitcoinCoreServer({
    ...opts,
    network: h.network,
    mainnetBlocks: { first: FIRST, count, deposits },
  });
  const node = bitcoinCoreNode(utxoRpc({ chain: "doge", urls: [core.url], timeoutMs }), h.network);
  await h.useNode(node, { number: FIRST, hash: core.chain.hashAt(FIRST)! });
  return { h, core, deposits, tip: core.chain.last };
}

const credited = DEPOSITS.map((a) => ["mint", a.toString()]).sort();

Deno.test("doge watcher on a Dogecoin-Core-shaped server catches up on a day of mainnet-sized blocks in bounded steps, memory bounded, each deposit credited once", async () => {
  const { h, core, deposits, tip } = await setUp({}, DAY + 1);
  try {
    const { steps, startRss } = await catchUp(h, "doge", tip, 100);
    const last = steps.at(-1)!;
    const stats = h.reader.stats;
    assert.equal(last.scannedTo, tip, "caught up");
    assert.equal(stats.blocks, DAY);
    const perBlock = stats.bytes / stats.blocks;
    assert.ok(perBlock > 20_000, `mainnet-sized blocks were read (${perBlock.toFixed(0)} bytes each)`);
    // Two requests per block request (hashes, then blocks), so a day is a few dozen requests, never one per block.
    assert.ok(core.served.requests <= 2 * stats.requests + 4 * steps.length, `${core.served.requests} requests`);
    // Every payment output is a transfer (a reorg may still replace these blocks: none is dropped by `ours`).
    assert.ok(stats.transfersBuilt > 50 * DAY, `${stats.transfersBuilt} transfers`);
    assertBoundedCatchUp(steps, startRss, stats, core.served, 6);
    assert.deepEqual((await h.orders()).sort(), credited);

    // A crash that lost the step holding the second deposit: its block read again records nothing new.
    const at = deposits[1].height - 1;
    await h.ctx.kv.set(cursorKey("doge"), { number: at, hash: core.chain.hashAt(at)! });
    const again = await watchOnce(h.ctx, "doge", "by-hand", 60_000);
    assert.ok(again.scannedTo! > deposits[1].height);
    assert.deepEqual((await h.orders()).sort(), credited, "credited exactly once");
  } finally {
    await h.close();
    await core.close();
  }
});

Deno.test("doge watcher on a Dogecoin-Core-shaped server: a provider capping batches and answer sizes is read in smaller requests, never stalled", async () => {
  // ~35 KB of hex per block: a 4-block answer is above the 120 KB cap, a 5-call batch above the count cap.
  const { h, core, tip } = await setUp({ maxBatch: 4, maxResponseBytes: 120_000 }, 120);
  try {
    const { steps } = await catchUp(h, "doge", tip, 30);
    assert.equal(steps.at(-1)!.scannedTo, tip, "caught up");
    assert.ok(h.reader.stats.fallbacks > 0, "the provider refused some requests");
    assert.ok(core.served.refused > 0);
    assert.ok(h.logs.some((m) => /doge: blocks \d+\.\.\d+ in one request failed .*asking \d+ at a time/.test(m)));
    assert.ok(h.reader.stats.largestResponse <= 120_000 * 2);
    assert.deepEqual((await h.orders()).sort(), credited);
  } finally {
    await h.close();
    await core.close();
  }
});

Deno.test("doge watcher on a Dogecoin-Core-shaped server: a 10 MB/s provider whose large answers time out is read in smaller requests", async () => {
  // 10 MB/s with a 120 ms timeout: a 50-block answer (~1.7 MB, ~170 ms) times out, one of 16 (~0.55 MB) does not.
  const { h, core, tip } = await setUp({ bytesPerSecond: 10_000_000 }, 200, 120);
  try {
    const { steps, failures } = await catchUp(h, "doge", tip, 60, 20);
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

Deno.test("doge reader on a Dogecoin-Core-shaped server: a scan stops at its byte budget after a whole request, never before one block", async () => {
  const core = startBitcoinCoreServer({ mainnetBlocks: { first: FIRST, count: 201 } });
  try {
    const network = utxoNetwork("doge", "mainnet");
    const fresh = () =>
      utxoReader(bitcoinCoreNode(utxoRpc({ chain: "doge", urls: [core.url] }), network), {
        chain: "doge",
        confirmations: 1,
      });
    // A budget of one byte: the first request (one block: nothing is known of their size yet) and no other.
    const one = fresh();
    const first = await one.scan(FIRST + 1, FIRST + 200, { maxBytes: 1 });
    assert.deepEqual(first.map((b) => b.number), [FIRST + 1]);
    // 300 KB: requests of 1, 2, 4, 8 blocks (~35 KB each) reach it; the scan ends with the request that did.
    const some = fresh();
    const blocks = await some.scan(FIRST + 1, FIRST + 200, { maxBytes: 300_000 });
    assert.ok(some.stats.bytes >= 300_000, `${some.stats.bytes} bytes`);
    assert.ok(blocks.length > 1 && blocks.length < 200, `${blocks.length} blocks`);
    assert.deepEqual(blocks.map((b) => b.number), blocks.map((_, i) => FIRST + 1 + i), "in order, from the start");
    const lastRequest = some.stats.bytes - 300_000;
    assert.ok(lastRequest < some.stats.largestResponse, "stopped after the request that reached the budget");
    // Without a budget: the whole range.
    assert.equal((await fresh().scan(FIRST + 1, FIRST + 200)).length, 200);
  } finally {
    await core.close();
  }
});

Deno.test("doge watcher on a Dogecoin-Core-shaped server: a full work queue (503 Work queue depth exceeded) fails the tick with a clear error and is waited out, the cursor kept, nothing recorded twice", async () => {
  const { h, core, tip } = await setUp({}, 60);
  try {
    core.busy = 16; // Dogecoin Core's default -rpcworkqueue, all taken by other clients
    await assert.rejects(
      () => watchOnce(h.ctx, "doge", "by-hand", 60_000),
      /doge RPC .* failed on every URL: .*HTTP 503/,
    );
    // The tick's first read (the tip) is refused: the watcher's error names the node's answer; the runtime logs it
    // and ticks again.
    assert.equal((await h.ctx.kv.get<{ number: number }>(cursorKey("doge"))).value!.number, FIRST, "cursor kept");
    core.busy = 0;
    const { steps } = await catchUp(h, "doge", tip, 10);
    assert.equal(steps.at(-1)!.scannedTo, tip, "caught up once the queue drained");
    assert.deepEqual((await h.orders()).sort(), credited);
  } finally {
    await h.close();
    await core.close();
  }
});
