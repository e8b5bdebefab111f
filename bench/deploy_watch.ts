/**
 * Can a Deno Deploy app watch Solana mainnet? (docs/scan-budget.md "Deploy mode"; docs/operations.md "Deploy on Deno
 * Deploy".)
 *
 * Three processes: the Solana-RPC-shaped server serving mainnet-sized slots (bench/scale/sol.ts: ~2,000 transactions,
 * ~2.9 MiB of `getBlock` JSON each, a deposit of ours hidden in the middle); and the whole service in deploy mode
 * (RUNTIME_MODE=deploy through the real configuration, cron only, no timer, no queue; sol live on that server with
 * CHAIN_MODE=devnet, every other chain simulated), whose cron jobs are run by hand back to back, as Deno.cron would run
 * them once a minute, every group of a minute at once. The ledger is all final from the start: a backlog, so each run
 * reads as much as its budget lets it. Prints per run: slots and MiB read, seconds, and the process's peak RSS (sampled
 * every 20 ms, and the kernel's high-water mark, VmHWM); then what a run reads against mainnet's 150 slots a minute.
 *
 * Run: deno task bench:deploy-watch
 *   BENCH_BLOCKS=600 (slots served), WATCH_BYTES_PER_RUN / CRON_RUN_MS (the service's budgets, as configured there),
 *   BENCH_V8_FLAGS=--max-old-space-size=... for the service process.
 */
import { buildServices, createApp, pipelineRuntime } from "../app.ts";
import { cronJobs } from "../actors/cron.ts";
import { listOrders } from "../kv/orders.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { countFetches, SCALE_MNEMONIC, type ServedLedger, withPeakRss } from "./support/scale.ts";
import { deployModeConfig } from "../tests/support/deploy.ts";
import { depositAddress, partner } from "../tests/support/pipeline.ts";
import type { TestServer } from "../tests/support/server.ts";

const MAINNET_SLOTS_PER_MINUTE = 150;
const mib = (n: number) => (n / 2 ** 20).toFixed(0);

function vmHwm(): number {
  const line = Deno.readTextFileSync("/proc/self/status").split("\n").find((l) => l.startsWith("VmHWM:"));
  return line ? Number(line.replace(/\D+/g, "")) * 1024 : 0;
}

interface RunFigures {
  run: number;
  slots: number;
  bytes: number;
  ms: number;
  peakRss: number;
  startRss: number;
}

async function deployService(ledger: ServedLedger) {
  const dir = await Deno.makeTempDir({ prefix: "bench-deploy-" });
  const env: Record<string, string> = {
    CHAIN_MODE: "devnet",
    SOL_RPC_URLS: ledger.url,
    SOL_START_BLOCK: String(ledger.start),
    MASTER_MNEMONIC: SCALE_MNEMONIC,
  };
  for (const name of ["WATCH_BYTES_PER_RUN", "CRON_RUN_MS"]) {
    const v = Deno.env.get(name);
    if (v) env[name] = v;
  }
  const config = await deployModeConfig(`${dir}/kv.sqlite3`, env);
  const services = await buildServices(config);
  const runtime = pipelineRuntime(services)!;
  runtime.startCronOnly();
  const app = createApp(services);
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const server: TestServer = {
    url: `http://127.0.0.1:${http.addr.port}`,
    services,
    app,
    pipeline: runtime,
    dir,
    kvPath: `${dir}/kv.sqlite3`,
    async close() {
      services.shutdown.abort();
      await runtime.stop();
      await http.shutdown();
      services.kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
  return { server, config, jobs: cronJobs(runtime).filter((j) => j.name !== "pipeline-housekeeping") };
}

async function deployRole(ledger: ServedLedger) {
  const { server, config, jobs } = await deployService(ledger);
  const kv = server.services.kv;
  const { wallet, token } = await partner(server);
  await depositAddress(server, token, "sol", "base");
  const wire = countFetches(new URL(ledger.url).origin);
  const runs: RunFigures[] = [];
  let at = ledger.start;
  for (let run = 1; at < ledger.end && run <= 50; run++) {
    const bytesBefore = wire.counts.bytes;
    const t0 = performance.now();
    const [, peak, startRss] = await withPeakRss(() => Promise.all(jobs.map((j) => j.handler())));
    const ms = performance.now() - t0;
    const cursor = (await kv.get<Cursor>(cursorKey("sol"))).value;
    const to = cursor ? Math.max(cursor.number, cursor.emptyThrough ?? 0) : at;
    const figures = { run, slots: to - at, bytes: wire.counts.bytes - bytesBefore, ms, peakRss: peak, startRss };
    runs.push(figures);
    console.error(
      `run ${run}: ${figures.slots} slots, ${mib(figures.bytes)} MiB in ${(ms / 1000).toFixed(1)} s, ` +
        `peak RSS ${mib(peak)} MiB`,
    );
    if (to === at) break;
    at = to;
  }
  wire.restore();
  const orders = (await listOrders(kv, wallet.toLowerCase(), { limit: 100, offset: 0 })).orders;
  const credited = orders.filter((o) => o.type === "mint" && o.amount === ledger.deposits.amount).length;
  const out = {
    runs,
    vmHwm: vmHwm(),
    credited,
    deposits: ledger.deposits.count,
    reached: at,
    end: ledger.end,
    bytesPerRun: config.watch.bytesPerRun,
    cronRunMs: config.watch.cronRunMs,
  };
  await server.close();
  console.log(JSON.stringify(out));
  Deno.exit(0);
}

async function main() {
  const solModule = new URL("./scale/sol.ts", import.meta.url).pathname;
  const serverProcess = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--unstable-kv", solModule],
    env: { BENCH_ROLE: "serve", BENCH_BLOCKS: Deno.env.get("BENCH_BLOCKS") ?? "600" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = serverProcess.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the Solana server process ended before it served");
    first += value;
  }
  reader.releaseLock();
  const ledger: ServedLedger = JSON.parse(first.split("\n")[0]);
  try {
    const flags = Deno.env.get("BENCH_V8_FLAGS") ? [`--v8-flags=${Deno.env.get("BENCH_V8_FLAGS")}`] : [];
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--unstable-kv", "--unstable-cron", ...flags, new URL(import.meta.url).pathname],
      env: { BENCH_ROLE: "deploy", BENCH_LEDGER: JSON.stringify(ledger) },
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error("the deploy-mode service failed");
    const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    console.log(
      `\n${ledger.end - ledger.start} mainnet-sized slots served; WATCH_BYTES_PER_RUN ${mib(r.bytesPerRun)} MiB, ` +
        `CRON_RUN_MS ${r.cronRunMs}${flags.length ? `, ${flags[0]}` : ""}\n`,
    );
    console.log("| run | slots | MiB read | seconds | slots/s | x mainnet's 150 slots a minute | peak RSS MiB |");
    console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const run of r.runs as RunFigures[]) {
      console.log(
        `| ${run.run} | ${run.slots} | ${mib(run.bytes)} | ${(run.ms / 1000).toFixed(1)} | ` +
          `${(run.slots / (run.ms / 1000)).toFixed(1)} | ${(run.slots / MAINNET_SLOTS_PER_MINUTE).toFixed(2)} | ` +
          `${mib(run.peakRss)} |`,
      );
    }
    console.log(
      `\nRSS at the first run's start ${mib(r.runs[0].startRss)} MiB; kernel high-water mark (VmHWM) ` +
        `${mib(r.vmHwm)} MiB; reached slot ${r.reached} of ${r.end}; deposits credited ${r.credited}/${r.deposits}`,
    );
  } finally {
    serverProcess.kill("SIGTERM");
    await serverProcess.status;
  }
}

if (Deno.env.get("BENCH_ROLE") === "deploy") await deployRole(JSON.parse(Deno.env.get("BENCH_LEDGER")!));
else await main();
