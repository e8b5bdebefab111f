/**
 * The sui watcher catching up on mainnet-sized checkpoints, against a Sui-GraphQL-shaped server (tests/support/
 * sui_graphql_server.ts; no Sui node runs here) that makes each checkpoint's transactions from its sequence number when
 * asked (tests/support/sui_mainnet_checkpoints.ts: ~30 transactions and ~75 balance changes per checkpoint, 15% of
 * checkpoints above a page of 50 transactions), and enforces the Sui GraphQL service's limits. What the reading side
 * keeps is counted, not timed (docs/scan-budget.md, "Sui"): the bytes each tick reads, the largest answer held at
 * once, the transfers built (only ours), the cursor stored after every step. 5,000 checkpoints here (about 21 minutes
 * of mainnet) keep the test near 10 s; bench/scale/sui.ts catches up on 20,000. Then providers that refuse a query over
 * a stricter limit, answer 413 above a size, or answer slowly enough that large answers time out: smaller requests,
 * no stall, no duplicate.
 */
import assert from "node:assert/strict";
import { SCAN_BYTES_PER_TICK, watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import { Signer } from "../chains/signer.ts";
import { suiGraphql } from "../chains/sui/client.ts";
import { type SuiReader, suiReader, TARGET_RESPONSE_BYTES } from "../chains/sui/reader.ts";
import { type Cursor, cursorKey, scannedThrough } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { depositAddress, FAST_PIPELINE, partner } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";
import {
  startSuiGraphqlServer,
  type SuiGraphqlServer,
  type SuiGraphqlServerOptions,
} from "./support/sui_graphql_server.ts";

const CHECKPOINTS = 5_000;
const SUI = 1_000_000_000n;
const DEPOSITS = [2n * SUI, 3n * SUI];
/**
 * How far the process's RSS may rise above where the catch-up started (which depends on what ran before in this
 * process). This process serves the checkpoints too (graphql-js building every answer), and V8 lets garbage grow its
 * heap past what is held (seen here: under 100 MiB), so this guards only against a scan that holds what it reads (the
 * 118 MiB of answers of this catch-up, parsed, are well above it); the counts below are the precise bounds.
 */
const RSS_GROWTH_CEILING = 512 * 1024 * 1024;
/** Not ours: keys of another mnemonic. */
const stranger = (i: number) =>
  Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow").address("sui", i);

/** The sui watcher by hand on `opts`' server, with a reader of its own whose counters the test reads. */
async function setUp(opts: SuiGraphqlServerOptions, timeoutMs?: number) {
  const sui = await startSuiGraphqlServer({ checkpointsPerEpoch: 10_000, ...opts });
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop();
  const logs: string[] = [];
  const reader = suiReader(suiGraphql({ urls: [sui.url], timeoutMs }), { log: (m) => logs.push(m) });
  const running = server.services.pipeline!;
  const ctx: PipelineContext = {
    ...running,
    chains: { ...running.chains, reader: (c: ChainSymbol) => c === "sui" ? reader : running.chains.reader(c) },
  };
  const { wallet, token } = await partner(server);
  const address = await depositAddress(server, token, "sui", "base");
  sui.mine(1);
  const start = await reader.tip();
  await server.services.kv.set(cursorKey("sui"), { number: start.number, hash: start.hash } satisfies Cursor);
  const orders = async () =>
    (await listOrders(server.services.kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
  const close = async () => {
    await server.close();
    await sui.close();
  };
  return { sui, server, reader, ctx, logs, address, start: start.number, orders, close };
}

/** `checkpoints` more on `sui`, our deposits at a third and two thirds, each beside a stranger's credit. */
function ledgerWithDeposits(sui: SuiGraphqlServer, address: string, checkpoints: number): string[] {
  const digests: string[] = [];
  const third = Math.floor(checkpoints / 3);
  sui.mine(third - 1);
  for (const amount of DEPOSITS) {
    digests.push(sui.deposit([{ to: address, amount }, { to: stranger(digests.length), amount: 5n * SUI }]));
    sui.mine(1);
    sui.mine(third - 1);
  }
  sui.mine(checkpoints - 3 * third + 1);
  return digests;
}

interface Step {
  scannedTo: number;
  bytes: number;
  stored: number;
  rss: number;
}

/** Ticks until the watcher reaches `sui`'s tip; each step's bytes, the stored cursor, the process's peak RSS. */
async function catchUp(ctx: PipelineContext, reader: SuiReader, sui: SuiGraphqlServer, maxTicks: number) {
  const steps: Step[] = [];
  const startRss = Deno.memoryUsage().rss;
  let rss = startRss;
  const sampler = setInterval(() => rss = Math.max(rss, Deno.memoryUsage().rss), 20);
  try {
    while (steps.length < maxTicks && (steps.at(-1)?.scannedTo ?? -1) < sui.tip) {
      const before = reader.stats.bytes;
      // Batched cursor writes, as the runtime runs watchers: a step behind the tip must be stored anyway.
      const r = await watchOnce(ctx, "sui", "by-hand", 60_000, { batchCursorMs: 60_000 });
      const stored = (await ctx.kv.get<Cursor>(cursorKey("sui"))).value!;
      steps.push({ scannedTo: r.scannedTo!, bytes: reader.stats.bytes - before, stored: scannedThrough(stored), rss });
      rss = Deno.memoryUsage().rss;
    }
  } finally {
    clearInterval(sampler);
  }
  return Object.assign(steps, { startRss });
}

Deno.test("sui watcher on a Sui-GraphQL-shaped server catches up on 5,000 mainnet-sized checkpoints in bounded steps, memory flat, each deposit credited once", async () => {
  const { sui, reader, ctx, address, start, orders, close, server } = await setUp({ mainnetCheckpoints: {} });
  try {
    const digests = ledgerWithDeposits(sui, address, CHECKPOINTS);
    assert.equal(sui.tip - start, CHECKPOINTS);

    const steps = await catchUp(ctx, reader, sui, 100);
    const last = steps.at(-1)!;
    assert.equal(last.scannedTo, sui.tip, "caught up");
    assert.equal(reader.stats.checkpoints, CHECKPOINTS);
    const perCheckpoint = reader.stats.bytes / reader.stats.checkpoints;
    assert.ok(perCheckpoint > 15_000, `mainnet-sized checkpoints were read (${perCheckpoint.toFixed(0)} bytes each)`);
    // Many checkpoints per request: the scan's page of 50, plus the further pages of the busy ones, batched.
    assert.ok(
      reader.stats.requests < CHECKPOINTS / 8,
      `${reader.stats.requests} requests for ${CHECKPOINTS} checkpoints`,
    );
    for (const s of steps) {
      assert.ok(s.bytes <= SCAN_BYTES_PER_TICK + 2 * TARGET_RESPONSE_BYTES, `a step read ${s.bytes} bytes`);
    }
    // Committed as it goes: after every step that ended behind the tip the stored cursor is where it ended (a crash
    // reads one step again); the step that reached the tip is batched as usual, at most one step behind.
    const behind = steps.slice(0, -1);
    assert.ok(behind.length >= CHECKPOINTS / 200 - 1, `${steps.length} steps`);
    assert.deepEqual(behind.map((s) => s.stored), behind.map((s) => s.scannedTo));
    assert.ok(reader.stats.largestResponse <= 2 * TARGET_RESPONSE_BYTES, `largest ${reader.stats.largestResponse}`);
    // Nothing that is not ours was built: ~22 SUI credits per checkpoint to strangers, two transfers to us.
    assert.equal(reader.stats.transfersBuilt, DEPOSITS.length);
    const peak = Math.max(...steps.map((s) => s.rss));
    assert.ok(peak - steps.startRss < RSS_GROWTH_CEILING, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);
    console.log(
      `${CHECKPOINTS} checkpoints, ${(reader.stats.bytes / 2 ** 20).toFixed(1)} MiB in ${reader.stats.requests} ` +
        `requests over ${steps.length} steps; largest answer ${(reader.stats.largestResponse / 2 ** 20).toFixed(2)} ` +
        `MiB; peak RSS of this process (server included) ${(peak / 2 ** 20).toFixed(0)} MiB (` +
        `${(steps.startRss / 2 ** 20).toFixed(0)} at the start; at each fifth of the way: ` +
        `${
          [1, 2, 3, 4, 5].map((f) => (steps[Math.floor(f * steps.length / 5) - 1].rss / 2 ** 20).toFixed(0)).join(", ")
        })`,
    );

    const credited = async () => (await orders()).map((o) => [o.type, o.amount]).sort();
    assert.deepEqual(await credited(), DEPOSITS.map((a) => ["mint", a.toString()]).sort());
    // A crash that lost the steps after the first deposit: its checkpoint read again records nothing new.
    const landed = sui.paymentsTo(address).find((p) => p.digest === digests[0])!.checkpoint;
    const before = await reader.blockHash(landed - 1);
    await server.services.kv.set(cursorKey("sui"), { number: landed - 1, hash: before as string } satisfies Cursor);
    const again = await watchOnce(ctx, "sui", "by-hand", 60_000);
    assert.ok(again.scannedTo! >= landed);
    assert.equal((await orders()).length, DEPOSITS.length, "credited exactly once");
  } finally {
    await close();
  }
});

/** Catches up on 300 mainnet-sized checkpoints from a provider shaped by `opts`; the deposits credited once. */
async function throughProvider(opts: SuiGraphqlServerOptions, timeoutMs?: number) {
  const env = await setUp({ mainnetCheckpoints: {}, ...opts }, timeoutMs);
  ledgerWithDeposits(env.sui, env.address, 300);
  const steps = await catchUp(env.ctx, env.reader, env.sui, 30);
  assert.equal(steps.at(-1)!.scannedTo, env.sui.tip, "caught up");
  assert.ok(env.reader.stats.fallbacks > 0, env.logs.join("\n"));
  assert.equal(env.reader.stats.checkpoints, 300, "each checkpoint read once: no request's half read twice");
  assert.deepEqual(
    (await env.orders()).map((o) => [o.type, o.amount]).sort(),
    DEPOSITS.map((a) => ["mint", a.toString()]).sort(),
  );
  return env;
}

Deno.test("sui watcher on a Sui-GraphQL-shaped server: a provider with a stricter output-node limit refuses large queries; smaller ones, never stalled", async () => {
  // The old sui-graphql-rpc's default: 100,000 output nodes, so at most 6 checkpoints per scan query.
  const env = await throughProvider({ limits: { maxOutputNodes: 100_000 } });
  try {
    assert.ok(env.sui.served.refused > 0);
    assert.ok(
      env.logs.some((m) =>
        /in one request failed \(.*estimated to produce over 100000 output nodes.*asking \d+ at a time/.test(m)
      ),
      env.logs.join("\n"),
    );
  } finally {
    await env.close();
  }
});

Deno.test("sui watcher on a Sui-GraphQL-shaped server: a provider answering 413 above 300 KB is read in smaller requests", async () => {
  const env = await throughProvider({ maxResponseBytes: 300_000 });
  try {
    assert.ok(env.sui.served.refused > 0);
    assert.ok(env.logs.some((m) => /failed \(.*HTTP 413.*\); asking \d+ at a time/.test(m)), env.logs.join("\n"));
    assert.ok(env.reader.stats.largestResponse <= 300_000);
  } finally {
    await env.close();
  }
});

Deno.test("sui watcher on a Sui-GraphQL-shaped server: a slow provider (10 MB/s) whose large answers time out is read in smaller requests", async () => {
  // ~70 transactions per checkpoint (~60 KB): 50 checkpoints take 0.3 s at 10 MB/s, past the 150 ms timeout; 12 do not.
  const env = await throughProvider(
    { mainnetCheckpoints: { medianTransactions: 50 }, bytesPerSecond: 10_000_000 },
    150,
  );
  try {
    assert.ok(env.logs.some((m) => /timed out|failed on every URL/i.test(m)), env.logs.join("\n"));
  } finally {
    await env.close();
  }
});
