/**
 * A Solana watcher catching up on mainnet-sized blocks (docs/scan-budget.md): a Solana-RPC-shaped server
 * (tests/support/solana_rpc_server.ts, no validator runs here) in a process of its own serves BENCH_SLOTS finalized
 * slots of ~2,000 transactions each (a third votes, `transactionDetails: "accounts"`, ~3 MB of JSON), generated when
 * asked, with one deposit to our first sol deposit address in the middle. Each reading run is a process of its own
 * too, so its peak RSS (Deno.memoryUsage().rss sampled every 20 ms) is its own:
 * - `old`: the scan as it was before bytes bounded it, over BENCH_BASELINE_SLOTS slots: getBlocks, then every block of
 *   a 200-slot range in 50-call batches with all answers held, a transfer built for every credited account;
 * - `new`: the reader's scan as the watcher calls it (a byte budget per tick, adaptive batches, only our credits
 *   built), the same slots;
 * - `watch`: the real watcher (actors/watcher.ts, one `watchOnce` after another as a cron run drains) over all
 *   BENCH_SLOTS slots, KV and cursor commits included, on a test server's stopped pipeline; it checks that the deposit
 *   became exactly one mint order.
 * Prints per run: slots/s, bytes read, getBlock requests, largest answer, transfers built, peak RSS; and `new` against
 * `old` on the same slots. Figures only.
 * Run: deno task bench:sol-catchup   (BENCH_SLOTS=10000, BENCH_BASELINE_SLOTS=200, BENCH_TARGET_RESPONSE_BYTES=8388608,
 *   BENCH_V8_FLAGS=--max-old-space-size=160)
 */
import { SCAN_BYTES_PER_TICK, watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import { scanBlockAnswer, slotsAnswer, solAnswer } from "../chains/sol/answers.ts";
import { creditsOf, SCAN_BLOCK_OPTIONS, solReader, TARGET_RESPONSE_BYTES } from "../chains/sol/reader.ts";
import { solRpc } from "../chains/sol/rpc.ts";
import { Signer } from "../chains/signer.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { depositAddress, FAST_PIPELINE, partner } from "../tests/support/pipeline.ts";
import { startTestServer } from "../tests/support/server.ts";
import { startSolanaRpcServer } from "../tests/support/solana_rpc_server.ts";
import { positiveIntEnv } from "./support/env.ts";
import { withPeakRss } from "./support/scale.ts";

const ROLE = Deno.env.get("BENCH_ROLE") ?? "main";
const SLOTS = positiveIntEnv("BENCH_SLOTS", 10_000);
const BASELINE_SLOTS = positiveIntEnv("BENCH_BASELINE_SLOTS", 200);
/** Bytes one getBlock request should bring back (chains/sol/reader.ts `TARGET_RESPONSE_BYTES` unless set). */
const TARGET = positiveIntEnv("BENCH_TARGET_RESPONSE_BYTES", TARGET_RESPONSE_BYTES);
/** V8 flags for the reading runs, e.g. `--max-old-space-size=160` (docs/scan-budget.md). */
const V8_FLAGS = Deno.env.get("BENCH_V8_FLAGS") ? [`--v8-flags=${Deno.env.get("BENCH_V8_FLAGS")}`] : [];
const DEPOSIT = 2_000_000_000n;
/** Test-only mnemonic (public): the watch run's master mnemonic, so our first sol deposit address is its index 0. */
const TEST_MNEMONIC = "test test test test test test test test test test test junk";
const signer = Signer.fromMnemonic(TEST_MNEMONIC);
const other = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");

/** What the server process says on its first line. */
interface Ledger {
  url: string;
  /** The slot before the first to scan (a block). */
  start: number;
  landed: number;
  finalized: number;
}

interface Figures {
  role: string;
  slots: number;
  ms: number;
  bytes: number;
  requests: number;
  largestResponse: number;
  transfersBuilt: number;
  /** RSS when the run started (modules loaded, server or reader built), and its peak during the run. */
  startRss: number;
  peakRss: number;
  steps?: number;
  orders?: number;
}

async function serve() {
  const sol = startSolanaRpcServer({ finalityLag: 0, mainnetBlocks: {} });
  sol.produce(1);
  sol.finalize();
  const start = sol.finalizedSlot;
  const half = Math.floor(SLOTS / 2);
  sol.produce(half - 1);
  const signature = sol.inject({
    payer: other.address("sol", 3),
    credits: [{ to: signer.address("sol", 0), lamports: DEPOSIT }, { to: other.address("sol", 4), lamports: 5_000n }],
  });
  sol.produce(SLOTS - half + 1);
  sol.finalize();
  const ledger: Ledger = { url: sol.url, start, landed: sol.landedAt(signature)!, finalized: sol.finalizedSlot };
  console.log(JSON.stringify(ledger));
  await new Promise(() => {}); // served until killed
}

/** The scan before bytes bounded it (its code as it was), over `slots` slots after `ledger.start`. */
async function oldScan(ledger: Ledger, slots: number): Promise<Figures> {
  const rpc = solRpc({ urls: [ledger.url], timeoutMs: 600_000 });
  const meter = { bytes: 0 };
  let requests = 0;
  let largest = 0;
  let built = 0;
  const t0 = performance.now();
  const [, peakRss, startRss] = await withPeakRss(async () => {
    for (let from = ledger.start + 1; from <= ledger.start + slots; from += 200) {
      const to = Math.min(ledger.start + slots, from + 199);
      const listed = solAnswer(
        "getBlocks",
        slotsAnswer,
        await rpc.call("getBlocks", [from, to, { commitment: "finalized" }]),
      );
      const before = meter.bytes;
      const answers = await rpc.batch(
        listed.map((slot) => ({ method: "getBlock", params: [slot, SCAN_BLOCK_OPTIONS] })),
        meter,
      );
      requests += Math.ceil(listed.length / 50);
      largest = Math.max(largest, (meter.bytes - before) / Math.ceil(listed.length / 50));
      const blocks = answers.map((a) => solAnswer("getBlock", scanBlockAnswer, a)!.transactions.flatMap(creditsOf));
      built += blocks.reduce((n, b) => n + b.length, 0);
    }
  });
  return {
    role: "old",
    slots,
    ms: performance.now() - t0,
    bytes: meter.bytes,
    requests,
    largestResponse: largest,
    transfersBuilt: built,
    startRss,
    peakRss,
  };
}

/** The reader's scan as the watcher calls it, over `slots` slots after `ledger.start`. */
async function newScan(ledger: Ledger, slots: number): Promise<Figures> {
  const reader = solReader(solRpc({ urls: [ledger.url] }), { confirmations: 1, targetResponseBytes: TARGET });
  const ours = new Set([signer.address("sol", 0)]);
  const end = ledger.start + slots;
  const t0 = performance.now();
  let steps = 0;
  const [, peakRss, startRss] = await withPeakRss(async () => {
    for (let from = ledger.start + 1; from <= end; steps++) {
      const to = Math.min(end, from + 199);
      const blocks = await reader.scan(from, to, { ours: (a) => ours.has(a), maxBytes: SCAN_BYTES_PER_TICK });
      from = (blocks.at(-1)?.number ?? to) + 1;
    }
  });
  const s = reader.stats;
  return {
    role: "new",
    slots,
    ms: performance.now() - t0,
    bytes: s.bytes,
    requests: s.requests,
    largestResponse: s.largestResponse,
    transfersBuilt: s.transfersBuilt,
    startRss,
    peakRss,
    steps,
  };
}

/** The real watcher from `ledger.start` to the finalized slot, as a draining cron run calls it. */
async function watch(ledger: Ledger): Promise<Figures> {
  // The test mnemonic as the master mnemonic, so that the server process knew our first deposit address.
  const mnemonicFile = await Deno.makeTempFile({ prefix: "bench-sol-catchup-mnemonic-" });
  await Deno.writeTextFile(mnemonicFile, TEST_MNEMONIC, { mode: 0o600 });
  await Deno.chmod(mnemonicFile, 0o600);
  const server = await startTestServer({ ...FAST_PIPELINE, MASTER_MNEMONIC_FILE: mnemonicFile });
  await server.pipeline!.stop();
  try {
    const running = server.services.pipeline!;
    const reader = solReader(solRpc({ urls: [ledger.url] }), { confirmations: 1, targetResponseBytes: TARGET });
    const ctx: PipelineContext = {
      ...running,
      chains: { ...running.chains, reader: (c: ChainSymbol) => c === "sol" ? reader : running.chains.reader(c) },
    };
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "sol", "base");
    if (address !== signer.address("sol", 0)) throw new Error(`the first sol deposit address is ${address}`);
    const hash = await reader.blockHash(ledger.start);
    await ctx.kv.set(cursorKey("sol"), { number: ledger.start, hash: hash as string } satisfies Cursor);
    let steps = 0;
    const t0 = performance.now();
    const [, peakRss, startRss] = await withPeakRss(async () => {
      for (let at = ledger.start; at < ledger.finalized; steps++) {
        const r = await watchOnce(ctx, "sol", "bench", 60_000, { batchCursorMs: 60_000 });
        if (r.scannedTo === null || r.scannedTo <= at) throw new Error(`the watcher did not move from ${at}`);
        at = r.scannedTo;
      }
    });
    const ms = performance.now() - t0;
    const orders = (await listOrders(ctx.kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    const s = reader.stats;
    return {
      role: "watch",
      slots: ledger.finalized - ledger.start,
      ms,
      bytes: s.bytes,
      requests: s.requests,
      largestResponse: s.largestResponse,
      transfersBuilt: s.transfersBuilt,
      startRss,
      peakRss,
      steps,
      orders: orders.filter((o) => o.amount === DEPOSIT.toString()).length,
    };
  } finally {
    await server.close();
    await Deno.remove(mnemonicFile);
  }
}

/** This file again with `role`, its one JSON line of figures parsed. */
async function run(role: string, env: Record<string, string>): Promise<Figures> {
  const out = await new Deno.Command(Deno.execPath(), {
    // The old scan holds ~150 MB answers and every transfer: it would die under a small heap, so it runs without.
    args: [
      "run",
      "--allow-all",
      "--unstable-kv",
      "--unstable-cron",
      ...(role === "old" ? [] : V8_FLAGS),
      new URL(import.meta.url).pathname,
    ],
    env: { ...env, BENCH_ROLE: role },
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`the ${role} run failed`);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return JSON.parse(lines.at(-1)!);
}

async function main() {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--unstable-kv", new URL(import.meta.url).pathname],
    env: { BENCH_ROLE: "serve", BENCH_SLOTS: String(SLOTS) },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the server process ended before it served");
      first += value;
    }
    const ledger: Ledger = JSON.parse(first.split("\n")[0]);
    const env = { BENCH_LEDGER: JSON.stringify(ledger), BENCH_SLOTS: String(SLOTS) };
    console.log(
      `Solana-RPC-shaped server (separate process): ${ledger.finalized - ledger.start} finalized slots of ~2,000 ` +
        `transactions (a third votes, accounts mode), one deposit to us at slot ${ledger.landed}\n`,
    );
    const runs: Figures[] = [];
    const baseline = Math.min(BASELINE_SLOTS, ledger.finalized - ledger.start);
    for (const role of ["old", "new"]) runs.push(await run(role, { ...env, BENCH_BASELINE_SLOTS: String(baseline) }));
    runs.push(await run("watch", env));
    const mib = (n: number) => (n / 2 ** 20).toFixed(0);
    const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
    console.log(
      row([
        "run",
        "slots",
        "slots/s",
        "MiB read",
        "getBlock requests",
        "largest answer MiB",
        "transfers built",
        "RSS at start MiB",
        "peak RSS MiB",
        "steps",
      ]),
    );
    console.log(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
    for (const f of runs) {
      console.log(row([
        f.role,
        f.slots,
        (f.slots / (f.ms / 1000)).toFixed(1),
        mib(f.bytes),
        f.requests,
        (f.largestResponse / 2 ** 20).toFixed(1),
        f.transfersBuilt,
        mib(f.startRss),
        mib(f.peakRss),
        f.steps ?? "",
      ]));
    }
    const [old, fresh, watched] = runs;
    console.log(
      `\nnew vs old on ${baseline} slots: peak RSS ${(fresh.peakRss / old.peakRss).toFixed(2)}x, largest answer ` +
        `${(fresh.largestResponse / old.largestResponse).toFixed(3)}x, transfers built ${fresh.transfersBuilt} vs ` +
        `${old.transfersBuilt}, speed ${((fresh.slots / fresh.ms) / (old.slots / old.ms)).toFixed(2)}x`,
    );
    console.log(
      `watcher: ${watched.slots} slots at ${(watched.slots / (watched.ms / 1000)).toFixed(1)} slots/s ` +
        `(${((watched.slots / (watched.ms / 1000)) / 2.5).toFixed(1)}x mainnet's 2.5 slots/s), ` +
        `${watched.orders} mint order for the deposit (exactly one expected)`,
    );
  } finally {
    server.kill("SIGTERM");
    await server.status;
  }
}

if (ROLE === "serve") await serve();
else if (ROLE === "main") await main();
else {
  const ledger: Ledger = JSON.parse(Deno.env.get("BENCH_LEDGER")!);
  const figures = ROLE === "old"
    ? await oldScan(ledger, BASELINE_SLOTS)
    : ROLE === "new"
    ? await newScan(ledger, BASELINE_SLOTS)
    : await watch(ledger);
  console.log(JSON.stringify(figures));
  Deno.exit(0);
}
