/**
 * What watching costs (docs/scan-budget.md): for every native chain, its local protocol server serves mainnet-sized
 * blocks (the shapes and the mainnet rates are cited in each chain's module, bench/scale/<chain>.ts) in a process of
 * its own, and the whole service in another process catches up on them with the real watcher over HTTP
 * (bench/support/scale.ts). Prints per chain: blocks per second end to end and the ratio to mainnet's rate (goal: at
 * least 5x), peak RSS of the service during the catch-up (goal: at most 300 MB), and requests and bytes per block,
 * per day at mainnet's rate; and that every hidden deposit became exactly one order. Figures only.
 *
 * Run: deno task bench:scale   (BENCH_CHAINS=sol,xrp,sui,doge,zec; BENCH_BLOCKS=N overrides every chain's default
 *   count, e.g. BENCH_BLOCKS=500 for a quick look; the watching runs take `deno task start`'s V8 flags, or
 *   BENCH_V8_FLAGS=<flags>, or BENCH_V8_FLAGS=none for V8's defaults)
 */
import { measureChain, type ScaleFigures, startV8Flags } from "./support/scale.ts";

const CHAINS = (Deno.env.get("BENCH_CHAINS") ?? "sol,xrp,sui,doge,zec").split(",").map((c) => c.trim());
/** The watching runs' V8 flags: `deno task start`'s, so the figures are the service's as it runs; or BENCH_V8_FLAGS. */
const V8_FLAGS = await (async () => {
  const asked = Deno.env.get("BENCH_V8_FLAGS");
  if (asked === "none") return [];
  return asked ? [`--v8-flags=${asked}`] : await startV8Flags();
})();
const BLOCKS = Deno.env.get("BENCH_BLOCKS");
const DAY = 86_400;

const mib = (n: number) => (n / 2 ** 20).toFixed(0);
const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
const perDayBytes = (n: number) => n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : `${thousands(n / 2 ** 20)} MiB`;
const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

const results: ScaleFigures[] = [];
console.log(`watching runs' V8 flags: ${V8_FLAGS.join(" ") || "none (V8's defaults)"}`);
for (const chain of CHAINS) {
  results.push(
    await measureChain(chain, {
      v8Flags: V8_FLAGS,
      blocks: BLOCKS ? Number(BLOCKS) : undefined,
      served: (ledger) => console.log(`${chain}: ${ledger.end - ledger.start} blocks served, ${ledger.shape}`),
    }),
  );
}

console.log();
console.log(row([
  "chain",
  "blocks",
  "blocks/s",
  "mainnet blocks/s",
  "ratio",
  "peak RSS MiB",
  "RSS at start MiB",
  "requests/block",
  "KiB/block",
  "requests/day",
  "read/day",
  "deposits credited",
]));
console.log(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
for (const f of results) {
  const rate = f.blocks / (f.ms / 1000);
  const perDay = f.realBlocksPerSecond * DAY / f.blocks;
  console.log(row([
    f.chain,
    thousands(f.blocks),
    rate.toFixed(1),
    Number(f.realBlocksPerSecond.toPrecision(3)),
    `${(rate / f.realBlocksPerSecond).toFixed(1)}x`,
    mib(f.peakRss),
    mib(f.startRss),
    (f.requests / f.blocks).toFixed(2),
    (f.bytes / f.blocks / 1024).toFixed(1),
    thousands(f.requests * perDay),
    perDayBytes(f.bytes * perDay),
    `${f.credited}/${f.deposits}`,
  ]));
}
console.log();
for (const f of results) console.log(`${f.chain}: ${f.shape}; mainnet: ${f.source}`);
