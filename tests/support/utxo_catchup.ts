/**
 * The doge and zec watchers by hand on their protocol-shaped servers (tests/doge_catchup_test.ts,
 * tests/zec_catchup_test.ts): the whole service (a test server: HTTP, KV; its pipeline stopped) whose watcher for the
 * chain is driven tick after tick with the live UTXO reader, from the served chain's first block to its tip. What the
 * reading side keeps is counted, not timed (docs/scan-budget.md): the bytes each tick reads, the largest answer held
 * at once, the cursor stored after every step, and the process's RSS.
 */
import assert from "node:assert/strict";
import { SCAN_BYTES_PER_TICK, watchOnce } from "../../actors/watcher.ts";
import type { PipelineContext } from "../../actors/context.ts";
import type { ChainSymbol } from "../../chains/catalog.ts";
import { type UtxoNetwork, utxoNetwork } from "../../chains/utxo/network.ts";
import type { UtxoNode } from "../../chains/utxo/node.ts";
import { type UtxoReader, utxoReader, type UtxoScanStats } from "../../chains/utxo/reader.ts";
import { UTXO_TARGET_RESPONSE_BYTES } from "../../chains/utxo/scan_sizer.ts";
import { listOrders } from "../../kv/orders.ts";
import { type Cursor, cursorKey, scannedThrough } from "../../kv/pipeline.ts";
import { depositAddress, FAST_PIPELINE, partner } from "./pipeline.ts";
import { startTestServer, type TestServer } from "./server.ts";

export interface UtxoWatcherByHand {
  server: TestServer;
  network: UtxoNetwork;
  /** Our first deposit address on the chain (a partner's, minting on base). */
  address: string;
  wallet: string;
  /** The watcher's context with `reader` as the chain's reader (set by `useNode`). */
  ctx: PipelineContext;
  reader: UtxoReader;
  logs: string[];
  /** The live reader over `node`, as the watcher's reader of `chain`; the cursor set at `start`. */
  useNode(node: UtxoNode, start: { number: number; hash: string }, opts?: { confirmations?: number }): Promise<void>;
  /** The partner's orders: [type, amount] of each. */
  orders(): Promise<[string, string][]>;
  close(): Promise<void>;
}

export async function utxoWatcherByHand(chain: "doge" | "zec"): Promise<UtxoWatcherByHand> {
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop(); // the watcher below runs by hand
  const running = server.services.pipeline!;
  const network = utxoNetwork(chain, running.settings.utxoNetwork(chain));
  const { wallet, token } = await partner(server);
  const address = await depositAddress(server, token, chain, "base");
  const logs: string[] = [];
  const h: UtxoWatcherByHand = {
    server,
    network,
    address,
    wallet,
    ctx: running,
    reader: null as unknown as UtxoReader,
    logs,
    async useNode(node, start, opts = {}) {
      const reader = utxoReader(node, { chain, confirmations: opts.confirmations ?? 1, log: (m) => logs.push(m) });
      h.reader = reader;
      h.ctx = {
        ...running,
        chains: { ...running.chains, reader: (c: ChainSymbol) => c === chain ? reader : running.chains.reader(c) },
      };
      await running.kv.set(cursorKey(chain), { number: start.number, hash: start.hash } satisfies Cursor);
    },
    async orders() {
      const list = (await listOrders(running.kv, wallet.toLowerCase(), { limit: 100, offset: 0 })).orders;
      return list.map((o) => [o.type, o.amount]);
    },
    close: () => server.close(),
  };
  return h;
}

export interface Step {
  scannedTo: number;
  bytes: number;
  stored: number;
  rss: number;
}

/**
 * Ticks until the watcher reaches `tip`; each step's bytes, the stored cursor and the process's peak RSS so far (and
 * its RSS at the start: a test file's earlier tests share the process, so only the growth is this catch-up's). A
 * tick that throws (a block a provider failed on its own) is retried as the runtime would, at most `maxFailures`
 * times in all; the failures are returned.
 */
export async function catchUp(
  h: UtxoWatcherByHand,
  chain: "doge" | "zec",
  tip: number,
  maxTicks: number,
  maxFailures = 0,
): Promise<{ steps: Step[]; failures: string[]; startRss: number }> {
  const steps: Step[] = [];
  const failures: string[] = [];
  const startRss = Deno.memoryUsage().rss;
  let rss = startRss;
  const sampler = setInterval(() => rss = Math.max(rss, Deno.memoryUsage().rss), 20);
  try {
    while (steps.length < maxTicks && (steps.at(-1)?.scannedTo ?? -1) < tip) {
      const before = h.reader.stats.bytes;
      let r;
      try {
        // Batched cursor writes, as the runtime runs watchers: a step behind the tip must be stored anyway.
        r = await watchOnce(h.ctx, chain, "by-hand", 60_000, { batchCursorMs: 60_000 });
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
        if (failures.length > maxFailures) throw err;
        continue;
      }
      const stored = (await h.ctx.kv.get<Cursor>(cursorKey(chain))).value!;
      steps.push({
        scannedTo: r.scannedTo!,
        bytes: h.reader.stats.bytes - before,
        stored: scannedThrough(stored),
        rss,
      });
    }
  } finally {
    clearInterval(sampler);
  }
  return { steps, failures, startRss };
}

/**
 * Growth of the process's RSS a day's catch-up may add (earlier tests of a file share the process). It serves the
 * blocks too, so this guards only against holding the day (or a 200-block tick of whole transactions); the counts of
 * `assertBoundedCatchUp` are the precise bounds, and bench/scale/<chain>.ts measures the service alone.
 */
export const RSS_GROWTH_CEILING = 1024 * 1024 * 1024;

/**
 * What a UTXO catch-up holds, whatever the chain: each step read at most the tick's byte budget and two answers more,
 * the cursor was stored after every step that ended behind the tip (a crash reads one step again), at least
 * `minSteps` such steps, no answer above two targets, and the RSS grew less than `RSS_GROWTH_CEILING`. Prints the
 * figures; returns nothing the caller needs to check again.
 */
export function assertBoundedCatchUp(
  steps: Step[],
  startRss: number,
  stats: UtxoScanStats,
  served: { requests: number },
  minSteps: number,
): void {
  for (const s of steps) {
    assert.ok(s.bytes <= SCAN_BYTES_PER_TICK + 2 * UTXO_TARGET_RESPONSE_BYTES, `a step read ${s.bytes} bytes`);
  }
  const behind = steps.slice(0, -1);
  assert.ok(behind.length >= minSteps, `${steps.length} steps`);
  assert.deepEqual(behind.map((s) => s.stored), behind.map((s) => s.scannedTo));
  assert.ok(stats.largestResponse <= 2 * UTXO_TARGET_RESPONSE_BYTES, `largest answer ${stats.largestResponse}`);
  const peak = Math.max(...steps.map((s) => s.rss));
  assert.ok(
    peak - startRss < RSS_GROWTH_CEILING,
    `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB, from ${(startRss / 2 ** 20).toFixed(0)}`,
  );
  console.log(
    `${stats.blocks} blocks, ${(stats.bytes / 2 ** 20).toFixed(1)} MiB in ${stats.requests} block requests ` +
      `(${served.requests} HTTP) over ${steps.length} steps; largest answer ` +
      `${(stats.largestResponse / 2 ** 20).toFixed(2)} MiB; peak RSS of this process (server included) ` +
      `${(peak / 2 ** 20).toFixed(0)} MiB`,
  );
}
