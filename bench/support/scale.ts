/**
 * What bench/scale.ts needs from each chain, and the one catch-up it runs for all of them (docs/scan-budget.md).
 *
 * A chain's module (bench/scale/<chain>.ts) supplies a `ScaleChain`: how to serve mainnet-sized blocks on its local
 * protocol server (with deposits to our first deposit addresses hidden in them) and how to build its live reader. The
 * harness runs three processes per chain: the server (`BENCH_ROLE=serve`, its first stdout line a `ServedLedger`),
 * then the watching run (`BENCH_ROLE=watch`): the whole service (a test server: HTTP, KV, services; its pipeline
 * stopped) whose watcher for that chain is driven tick after tick with the live reader, from the ledger's start to its
 * end, as a draining cron run or a long-running process calls it. Requests and answer bytes are counted on the wire
 * (by a counting front in the server's process, `countingFront`), the RSS sampled every 20 ms, the deposits' orders counted at the end.
 */
import { watchOnce } from "../../actors/watcher.ts";
import type { PipelineContext } from "../../actors/context.ts";
import type { ChainReader } from "../../chains/adapter.ts";
import type { ChainSymbol, NativeChain } from "../../chains/catalog.ts";
import { Signer } from "../../chains/signer.ts";
import { listOrders } from "../../kv/orders.ts";
import { type Cursor, cursorKey } from "../../kv/pipeline.ts";
import { depositAddress, FAST_PIPELINE, partner } from "../../tests/support/pipeline.ts";
import { startTestServer } from "../../tests/support/server.ts";

/** Test-only mnemonic (public): the watching run's master mnemonic, so the server knows our deposit addresses. */
export const SCALE_MNEMONIC = "test test test test test test test test test test test junk";
export const scaleSigner = Signer.fromMnemonic(SCALE_MNEMONIC);

/** What a chain's server process prints first: where it serves and what it holds. */
export interface ServedLedger {
  url: string;
  /** The block before the first one to scan (the watcher's cursor starts here). */
  start: number;
  /** The last block the watcher must reach (final on the server). */
  end: number;
  /** Deposits to our deposit address index 0, each of `amount` base units (a decimal string). */
  deposits: { count: number; amount: string };
  /** Free text: the block shape served (transactions per block, bytes per block). */
  shape: string;
}

export interface ScaleChain {
  chain: NativeChain;
  /** Mainnet blocks (slots, ledgers, checkpoints) per second, and where that figure comes from. */
  realBlocksPerSecond: number;
  source: string;
  /** Blocks to catch up on by default (a day where a day fits this machine; BENCH_BLOCKS overrides). */
  defaultBlocks: number;
  /** Starts the server with `blocks` mainnet-sized blocks after `start`, deposits to `ours` hidden among them. */
  serve(blocks: number, ours: string): Promise<ServedLedger>;
  /** The live reader on `url`, as the service builds it. */
  reader(url: string): ChainReader;
}

export interface ScaleFigures {
  chain: NativeChain;
  blocks: number;
  ms: number;
  realBlocksPerSecond: number;
  requests: number;
  bytes: number;
  startRss: number;
  peakRss: number;
  ticks: number;
  deposits: number;
  credited: number;
  shape: string;
  source: string;
}

/** The process's RSS before `fn` and its peak while `fn` runs, sampled every 20 ms. */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<[T, number, number]> {
  const start = Deno.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 20);
  try {
    const out = await fn();
    return [out, Math.max(peak, Deno.memoryUsage().rss), start];
  } finally {
    clearInterval(timer);
  }
}

/**
 * Counts every `fetch` to `origin` in this process and the bytes of its answers as the caller reads them, for benches
 * that count calls and bytes but not memory: the counting stream changes how an answer is held (see `countingFront`).
 * Returns the counters and a function that puts `fetch` back.
 */
export function countFetches(origin: string) {
  const counts = { requests: 0, bytes: 0 };
  const original = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const res = await original(input, init);
    if (!url.startsWith(origin) || !res.body) return res;
    counts.requests++;
    return new Response(res.body.pipeThrough(byteCounter(counts)), res);
  };
  return { counts, restore: () => globalThis.fetch = original };
}

/** A pass-through stream adding each chunk's length to `counts.bytes`. */
function byteCounter(counts: { bytes: number }) {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, ctl) {
      counts.bytes += chunk.byteLength;
      ctl.enqueue(chunk);
    },
  });
}

/** Where a counting front answers its counts (bench only; never a path of any chain's protocol). */
const COUNTS_PATH = "/__bench_counts";

/**
 * A front in the server's process that passes every request to `target` and counts requests and answer bytes as they
 * flow: counting in the watching process would change what it holds (a JavaScript stream in place of the runtime's
 * own body reading cost it about 90 MiB of peak RSS on Solana's 6 MiB answers). `GET /__bench_counts` answers the
 * counts so far.
 */
export function countingFront(target: string): { url: string } {
  const counts = { requests: 0, bytes: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === COUNTS_PATH) return Response.json(counts);
    counts.requests++;
    const res = await fetch(new URL(url.pathname + url.search, target), {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
    return new Response(res.body?.pipeThrough(byteCounter(counts)), res);
  });
  return { url: `http://127.0.0.1:${server.addr.port}` };
}

async function countsOf(url: string): Promise<{ requests: number; bytes: number }> {
  const res = await fetch(new URL(COUNTS_PATH, url));
  return await res.json();
}

/** The watching run: the whole service, its `spec.chain` watcher driven from `ledger.start` to `ledger.end`. */
export async function watchCatchUp(spec: ScaleChain, ledger: ServedLedger): Promise<ScaleFigures> {
  const mnemonicFile = await Deno.makeTempFile({ prefix: "bench-scale-mnemonic-" });
  await Deno.writeTextFile(mnemonicFile, SCALE_MNEMONIC, { mode: 0o600 });
  await Deno.chmod(mnemonicFile, 0o600);
  const server = await startTestServer({ ...FAST_PIPELINE, MASTER_MNEMONIC_FILE: mnemonicFile });
  await server.pipeline!.stop();
  const chain = spec.chain;
  try {
    const running = server.services.pipeline!;
    const reader = spec.reader(ledger.url);
    const ctx: PipelineContext = {
      ...running,
      chains: { ...running.chains, reader: (c: ChainSymbol) => c === chain ? reader : running.chains.reader(c) },
    };
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, chain, "base");
    const expected = scaleSigner.address(chain, 0);
    if (address !== expected) throw new Error(`the first ${chain} deposit address is ${address}, not ${expected}`);
    const hash = await reader.blockHash(ledger.start);
    if (typeof hash !== "string") throw new Error(`${chain}: no block at the ledger's start ${ledger.start}`);
    await ctx.kv.set(cursorKey(chain), { number: ledger.start, hash } satisfies Cursor);
    const before = await countsOf(ledger.url);
    let ticks = 0;
    const t0 = performance.now();
    const [, peakRss, startRss] = await withPeakRss(async () => {
      for (let at = ledger.start; at < ledger.end; ticks++) {
        const r = await watchOnce(ctx, chain, "bench", 60_000, { batchCursorMs: 60_000 });
        if (r.scannedTo === null || r.scannedTo <= at) throw new Error(`${chain}: the watcher did not move from ${at}`);
        at = r.scannedTo;
      }
    });
    const ms = performance.now() - t0;
    const wire = await countsOf(ledger.url);
    const orders = (await listOrders(ctx.kv, wallet.toLowerCase(), { limit: 1000, offset: 0 })).orders;
    return {
      chain,
      blocks: ledger.end - ledger.start,
      ms,
      realBlocksPerSecond: spec.realBlocksPerSecond,
      requests: wire.requests - before.requests,
      bytes: wire.bytes - before.bytes,
      startRss,
      peakRss,
      ticks,
      deposits: ledger.deposits.count,
      credited: orders.filter((o) => o.type === "mint" && o.amount === ledger.deposits.amount).length,
      shape: ledger.shape,
      source: spec.source,
    };
  } finally {
    await server.close();
    await Deno.remove(mnemonicFile);
  }
}

/**
 * The entry of a chain's module: `BENCH_ROLE=serve` serves and prints its `ServedLedger`, then waits to be killed;
 * `BENCH_ROLE=watch` catches up on `BENCH_LEDGER` and prints its `ScaleFigures` as its last line.
 */
export async function scaleMain(spec: ScaleChain): Promise<void> {
  const role = Deno.env.get("BENCH_ROLE");
  if (role === "serve") {
    const blocks = Number(Deno.env.get("BENCH_BLOCKS") ?? spec.defaultBlocks);
    if (!Number.isSafeInteger(blocks) || blocks <= 0) throw new Error("BENCH_BLOCKS must be a positive integer");
    const ledger = await spec.serve(blocks, scaleSigner.address(spec.chain, 0));
    console.log(JSON.stringify({ ...ledger, url: countingFront(ledger.url).url }));
    await new Promise(() => {}); // served until killed
  } else if (role === "watch") {
    const figures = await watchCatchUp(spec, JSON.parse(Deno.env.get("BENCH_LEDGER")!));
    console.log(JSON.stringify(figures, (_k, v) => typeof v === "bigint" ? v.toString() : v));
    Deno.exit(0);
  } else {
    throw new Error(`run through bench/scale.ts (BENCH_ROLE is ${role ?? "unset"})`);
  }
}

/** The V8 flags `deno task start` runs the service with (deno.json), as `--v8-flags=...` arguments. */
export async function startV8Flags(): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  return (tasks.start as string).split(/\s+/).filter((w) => w.startsWith("--v8-flags="));
}

const moduleOf = (chain: string) => new URL(`../scale/${chain}.ts`, import.meta.url).pathname;

/**
 * The chain's module (bench/scale/<chain>.ts) serving `blocks` (its default when unset) in a process of its own, and
 * the ledger it printed first. The caller kills the process.
 */
export async function serveChain(chain: string, blocks?: number): Promise<[Deno.ChildProcess, ServedLedger]> {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--unstable-kv", moduleOf(chain)],
    env: { BENCH_ROLE: "serve", ...(blocks ? { BENCH_BLOCKS: String(blocks) } : {}) },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const lines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`${chain}: the server process ended before it served`);
      first += value;
    }
    lines.releaseLock();
    return [server, JSON.parse(first.split("\n")[0])];
  } catch (err) {
    server.kill("SIGTERM");
    await server.status;
    throw err;
  }
}

/**
 * One chain measured: its module serves `blocks` (its default when unset) in a process of its own (`serveChain`), and
 * the whole service catches up on them in another, run with `v8Flags`.
 */
export async function measureChain(
  chain: string,
  opts: { v8Flags: string[]; blocks?: number; served?: (ledger: ServedLedger) => void },
): Promise<ScaleFigures> {
  const [server, ledger] = await serveChain(chain, opts.blocks);
  try {
    opts.served?.(ledger);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--unstable-kv", "--unstable-cron", ...opts.v8Flags, moduleOf(chain)],
      env: { BENCH_ROLE: "watch", BENCH_LEDGER: JSON.stringify(ledger) },
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error(`${chain}: the watching run failed`);
    return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
  } finally {
    server.kill("SIGTERM");
    await server.status;
  }
}
