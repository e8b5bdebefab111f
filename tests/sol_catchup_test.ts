/**
 * The sol watcher catching up on mainnet-sized blocks, against a Solana-RPC-shaped server (tests/support/
 * solana_rpc_server.ts; no validator runs here) that generates each block's ~2,000 transactions (a third votes,
 * `transactionDetails: "accounts"`, ~3 MB of JSON) when asked, so neither side holds the 500 blocks. What the reading
 * side keeps is counted, not timed (docs/scan-budget.md): the bytes each tick reads, the largest answer it held at
 * once, the transfers it built (only ours), and the cursor stored after every step of the catch-up. Then providers
 * that cap batches and answer sizes, or answer slowly enough that large answers time out: smaller requests, no stall.
 */
import assert from "node:assert/strict";
import { SCAN_BYTES_PER_TICK, watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import { type SolReader, solReader, TARGET_RESPONSE_BYTES } from "../chains/sol/reader.ts";
import { solRpc } from "../chains/sol/rpc.ts";
import { type Cursor, cursorKey, scannedThrough } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { solWatcherByHand, stranger } from "./support/sol_env.ts";
import {
  type SolanaRpcServer,
  type SolanaRpcServerOptions,
  startSolanaRpcServer,
} from "./support/solana_rpc_server.ts";

const SLOTS = 500;
const DEPOSIT = 2_000_000_000n;
/**
 * This process serves the blocks too, and V8 lets garbage grow its heap well past what is held (0.8 to 1 GB seen here
 * for server and watcher together: docs/scan-budget.md), so this guards only against the unbounded batches of before (a
 * 200-block tick of 3 MB blocks: 2.5-3.1 GB for the reader alone, bench/sol_catchup.ts); the counts below are the
 * precise bounds.
 */
const RSS_CEILING = 2 * 1024 * 1024 * 1024;

/** The sol watcher by hand on `opts`' server, with a reader of its own whose counters the test reads. */
async function setUp(opts: SolanaRpcServerOptions, timeoutMs?: number) {
  const sol = startSolanaRpcServer({ finalityLag: 0, ...opts });
  const h = await solWatcherByHand(sol);
  const logs: string[] = [];
  const reader = solReader(solRpc({ urls: [sol.url], timeoutMs }), { confirmations: 1, log: (m) => logs.push(m) });
  const ctx: PipelineContext = {
    ...h.ctx,
    chains: { ...h.ctx.chains, reader: (c: ChainSymbol) => c === "sol" ? reader : h.ctx.chains.reader(c) },
  };
  return { sol, h, reader, ctx, logs };
}

/** `slots` more blocks on `sol`, our deposit in the middle one, a stranger's credit beside it; all finalized. */
function ledgerWithDeposit(sol: SolanaRpcServer, address: string, slots: number) {
  sol.produce(slots / 2 - 1);
  const signature = sol.inject({
    payer: stranger(3),
    credits: [{ to: address, lamports: DEPOSIT }, { to: stranger(4), lamports: 5_000_000n }],
  });
  sol.produce(slots / 2 + 1);
  sol.finalize();
  return sol.landedAt(signature)!;
}

interface Step {
  scannedTo: number;
  bytes: number;
  stored: number;
  rss: number;
}

/** Ticks until the watcher reaches `sol`'s finalized slot; each step's bytes, the stored cursor, the process's RSS. */
async function catchUp(ctx: PipelineContext, reader: SolReader, sol: SolanaRpcServer, maxTicks: number) {
  const steps: Step[] = [];
  let rss = Deno.memoryUsage().rss;
  const sampler = setInterval(() => rss = Math.max(rss, Deno.memoryUsage().rss), 20);
  try {
    while (steps.length < maxTicks && (steps.at(-1)?.scannedTo ?? -1) < sol.finalizedSlot) {
      const before = reader.stats.bytes;
      // Batched cursor writes, as the runtime runs watchers: a step behind the tip must be stored anyway.
      const r = await watchOnce(ctx, "sol", "by-hand", 60_000, { batchCursorMs: 60_000 });
      const stored = (await ctx.kv.get<Cursor>(cursorKey("sol"))).value!;
      steps.push({ scannedTo: r.scannedTo!, bytes: reader.stats.bytes - before, stored: scannedThrough(stored), rss });
    }
  } finally {
    clearInterval(sampler);
  }
  return steps;
}

Deno.test("sol watcher on a Solana-RPC-shaped server: 500 mainnet-sized slots caught up in bounded steps, memory bounded, the deposit credited once", async () => {
  const { sol, h, reader, ctx } = await setUp({ mainnetBlocks: {} });
  try {
    const start = h.cursor.number;
    const landed = ledgerWithDeposit(sol, h.address, SLOTS);
    assert.equal(sol.finalizedSlot - start, SLOTS);

    const steps = await catchUp(ctx, reader, sol, 200);
    const last = steps.at(-1)!;
    assert.equal(last.scannedTo, sol.finalizedSlot, "caught up");
    const perBlock = reader.stats.bytes / reader.stats.blocks;
    assert.ok(perBlock > 2_500_000, `mainnet-sized blocks were read (${perBlock.toFixed(0)} bytes each)`);
    assert.equal(reader.stats.blocks, SLOTS);
    // Bytes bounded per step: the budget plus at most the one request that crossed it.
    for (const s of steps) {
      assert.ok(s.bytes <= SCAN_BYTES_PER_TICK + 2 * TARGET_RESPONSE_BYTES, `a step read ${s.bytes} bytes`);
    }
    // Committed as it goes: after every step that ended behind the tip, the stored cursor is where it ended (a crash
    // reads one step again); the step that reached the tip is batched as usual, at most one step behind.
    const behind = steps.slice(0, -1);
    assert.deepEqual(behind.map((s) => s.stored), behind.map((s) => s.scannedTo));
    assert.ok(last.stored >= (behind.at(-1)?.scannedTo ?? start));
    // What the reader held at once: one answer of a few blocks, never a 50-block batch.
    assert.ok(
      reader.stats.largestResponse <= 2 * TARGET_RESPONSE_BYTES,
      `largest answer ${reader.stats.largestResponse} bytes`,
    );
    assert.ok(reader.stats.requests >= SLOTS / 4, `${reader.stats.requests} getBlock requests for ${SLOTS} blocks`);
    // Nothing that is not ours was built: ~1,200 credits per block to strangers, one transfer to us.
    assert.equal(reader.stats.transfersBuilt, 1);
    const peak = Math.max(...steps.map((s) => s.rss));
    assert.ok(peak < RSS_CEILING, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);
    console.log(
      `${SLOTS} slots, ${(reader.stats.bytes / 2 ** 20).toFixed(0)} MiB in ${reader.stats.requests} getBlock ` +
        `requests over ${steps.length} steps; largest answer ${(reader.stats.largestResponse / 2 ** 20).toFixed(1)} ` +
        `MiB; peak RSS of this process (server included) ${(peak / 2 ** 20).toFixed(0)} MiB`,
    );

    const orders = async () => (await listOrders(h.kv, h.wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.deepEqual((await orders()).map((o) => [o.type, o.amount]), [["mint", DEPOSIT.toString()]]);
    // A crash that lost the last step: the deposit's block read again records nothing new.
    const before = await reader.blockHash(landed - 1);
    await h.kv.set(cursorKey("sol"), { number: landed - 1, hash: before as string } satisfies Cursor);
    const again = await watchOnce(ctx, "sol", "by-hand", 60_000);
    assert.ok(again.scannedTo! >= landed);
    assert.equal((await orders()).length, 1, "credited exactly once");
  } finally {
    await h.close();
    await sol.close();
  }
});

Deno.test("sol watcher on a Solana-RPC-shaped server: a provider capping batches and answer sizes is read in smaller requests, never stalled", async () => {
  // 60 transactions per block (~90 KB): a 4-block answer is above the 300 KB cap, a 5-call batch above the count cap.
  const { sol, h, reader, ctx, logs } = await setUp({
    mainnetBlocks: { transactions: 60 },
    maxBatch: 4,
    maxResponseBytes: 300_000,
  });
  try {
    ledgerWithDeposit(sol, h.address, 60);
    const steps = await catchUp(ctx, reader, sol, 30);
    assert.equal(steps.at(-1)!.scannedTo, sol.finalizedSlot, "caught up");
    assert.ok(reader.stats.fallbacks > 0, "the provider refused some requests");
    assert.ok(sol.served.refused > 0);
    assert.ok(logs.some((m) => /in one request failed .*asking \d+ at a time/.test(m)), logs.join("\n"));
    assert.ok(reader.stats.largestResponse <= 300_000);
    const orders = (await listOrders(h.kv, h.wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.deepEqual(orders.map((o) => [o.type, o.amount]), [["mint", DEPOSIT.toString()]]);
  } finally {
    await h.close();
    await sol.close();
  }
});

Deno.test("sol watcher on a Solana-RPC-shaped server: a slow provider whose large answers time out is read in smaller requests", async () => {
  // ~85 KB blocks at 1 MB/s with a 1 s timeout: a request for 16 blocks times out, one for 8 does not.
  const { sol, h, reader, ctx, logs } = await setUp(
    { mainnetBlocks: { transactions: 60 }, bytesPerSecond: 1_000_000 },
    1_000,
  );
  try {
    ledgerWithDeposit(sol, h.address, 60);
    const steps = await catchUp(ctx, reader, sol, 30);
    assert.equal(steps.at(-1)!.scannedTo, sol.finalizedSlot, "caught up");
    assert.ok(reader.stats.fallbacks > 0, logs.join("\n"));
    assert.ok(logs.some((m) => /timed out|failed on every URL/i.test(m)), logs.join("\n"));
    const orders = (await listOrders(h.kv, h.wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.deepEqual(orders.map((o) => [o.type, o.amount]), [["mint", DEPOSIT.toString()]]);
  } finally {
    await h.close();
    await sol.close();
  }
});
