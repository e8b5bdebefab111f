/**
 * What an XRP Ledger scan costs, reader alone (docs/scan-budget.md, "XRP Ledger"): the rippled-shaped server of
 * bench/scale/xrp.ts (mainnet-sized ledgers, generated when asked) in a process of its own serves BENCH_BLOCKS ledgers
 * with one deposit to our first xrp deposit address, and each reading run is a process of its own too, so its peak RSS
 * (sampled every 20 ms) is its own. Every run reads the ledgers in 200-ledger ranges, as the watcher's ticks do:
 * - `old`: the scan before bytes bounded it: one `ledger` call after another, every transaction copied by its schema,
 *   a transfer built for every payment and balance rise, the whole range held before it is returned;
 * - `schema`: the reader without `ours` (every transaction through its schema, every transfer built), ledgers in
 *   flight as the reader sizes them;
 * - `serial`: the reader as the watcher calls it (`ours`, `maxBytes`), one ledger at a time;
 * - `new`: the reader as the watcher calls it, up to `MAX_IN_FLIGHT` ledgers at once.
 * Prints per run: ledgers/s, bytes read, requests, largest answer, transfers built, RSS at start and peak. Figures only.
 * Run: deno run --allow-all --unstable-kv bench/xrp_scan.ts   (BENCH_BLOCKS=3000, BENCH_RUNS=old,schema,serial,new,
 *   BENCH_V8_FLAGS=--max-old-space-size=128)
 */
import { SCAN_BYTES_PER_TICK } from "../actors/watcher.ts";
import type { ObservedTransfer } from "../chains/adapter.ts";
import { ledgerAnswer, readAnswer, txEntry } from "../chains/xrp/answers.ts";
import { transfersOfEntry, xrpReader } from "../chains/xrp/reader.ts";
import { xrplRpc } from "../chains/xrp/rpc.ts";
import type { ByteMeter } from "../chains/shared/http_failover.ts";
import { scaleSigner, serveChain, type ServedLedger, withPeakRss } from "./support/scale.ts";
import { positiveIntEnv } from "./support/env.ts";

const ROLE = Deno.env.get("BENCH_ROLE") ?? "main";
const RUNS = (Deno.env.get("BENCH_RUNS") ?? "old,schema,serial,new").split(",").map((r) => r.trim());
const V8_FLAGS = Deno.env.get("BENCH_V8_FLAGS") ? [`--v8-flags=${Deno.env.get("BENCH_V8_FLAGS")}`] : [];
const RANGE = 200;

interface Figures {
  run: string;
  ledgers: number;
  ms: number;
  bytes: number;
  requests: number;
  largest: number;
  built: number;
  startRss: number;
  peakRss: number;
}

async function read(run: string, ledger: ServedLedger): Promise<Figures> {
  const ours = scaleSigner.address("xrp", 0);
  const isOurs = (a: string) => a === ours;
  const rpc = xrplRpc({ urls: [ledger.url] });
  const reader = xrpReader({ rpc, confirmations: 1, ...(run === "serial" ? { targetInFlightBytes: 1 } : {}) });
  const old = { bytes: 0, requests: 0, largest: 0, built: 0 };
  const t0 = performance.now();
  const [, peakRss, startRss] = await withPeakRss(async () => {
    for (let at = ledger.start; at < ledger.end;) {
      const to = Math.min(ledger.end, at + RANGE);
      if (run === "old") {
        const held: { number: number; transfers: ObservedTransfer[] }[] = [];
        for (let n = at + 1; n <= to; n++) {
          const meter: ByteMeter = { bytes: 0 };
          const r = await rpc.call("ledger", { ledger_index: n, transactions: true, expand: true }, meter);
          old.requests++;
          old.bytes += meter.bytes;
          old.largest = Math.max(old.largest, meter.bytes);
          const txs = readAnswer("ledger", ledgerAnswer, r).ledger.transactions!;
          const transfers = txs.flatMap((t, i) =>
            transfersOfEntry(txEntry("ledger", t, ["ledger", "transactions", i], true))
          );
          old.built += transfers.length;
          held.push({ number: n, transfers });
        }
        at = held.at(-1)!.number;
      } else {
        const blocks = await reader.scan(at + 1, to, {
          maxBytes: SCAN_BYTES_PER_TICK,
          ...(run === "schema" ? {} : { ours: isOurs }),
        });
        at = blocks.at(-1)!.number;
      }
    }
  });
  const s = run === "old"
    ? old
    : { ...reader.stats, largest: reader.stats.largestResponse, built: reader.stats.transfersBuilt };
  return {
    run,
    ledgers: ledger.end - ledger.start,
    ms: performance.now() - t0,
    bytes: s.bytes,
    requests: s.requests,
    largest: s.largest,
    built: s.built,
    startRss,
    peakRss,
  };
}

if (ROLE === "read") {
  const figures = await read(Deno.env.get("BENCH_RUN")!, JSON.parse(Deno.env.get("BENCH_LEDGER")!));
  console.log(JSON.stringify(figures));
  Deno.exit(0);
}

const blocks = positiveIntEnv("BENCH_BLOCKS", 3_000);
const [server, ledger] = await serveChain("xrp", blocks);
try {
  const mib = (n: number) => (n / 2 ** 20).toFixed(0);
  console.log(`${blocks} ledgers: ${ledger.shape}`);
  console.log(
    "| run | ledgers | ledgers/s | read MiB | requests | largest KiB | transfers built | RSS at start MiB | peak RSS MiB |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const run of RUNS) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--unstable-kv", ...V8_FLAGS, new URL(import.meta.url).pathname],
      env: { BENCH_ROLE: "read", BENCH_RUN: run, BENCH_LEDGER: JSON.stringify(ledger) },
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error(`${run}: the reading run failed`);
    const f: Figures = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    console.log(
      `| ${f.run} | ${f.ledgers} | ${(f.ledgers / (f.ms / 1000)).toFixed(0)} | ${mib(f.bytes)} | ${f.requests} | ` +
        `${(f.largest / 1024).toFixed(0)} | ${f.built.toLocaleString("en-US")} | ${mib(f.startRss)} | ${
          mib(f.peakRss)
        } |`,
    );
  }
} finally {
  server.kill("SIGTERM");
  await server.status;
}
