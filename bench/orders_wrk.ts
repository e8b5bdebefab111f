/**
 * GET /orders throughput measured with wrk (Debian package `wrk`): one wallet holding 10,000 orders in a temporary
 * KV, the real app (JWT gate, KV reads, page cache, confirmations) against a bare Hono app in the same process that
 * answers the same body bytes from memory. Same wrk threads, connections and duration for both; the ratio is the
 * figure to compare across machines (docs/benchmarks.md "Order reads with wrk": at least 0.5). Bare and service runs
 * alternate, ROUNDS times each, and the best run of each side is compared, so a burst of other work on the machine
 * during one run does not decide it. Run: deno task bench:orders   (WRK_THREADS, WRK_CONNECTIONS, WRK_SECONDS,
 * WRK_ROUNDS to change the load)
 */
import { Hono } from "hono";
import { call, newApiKey, randomWallet, startTestServer, tokenFor } from "../tests/support/server.ts";
import { seedOrders } from "./support/seed_orders.ts";

const THREADS = Number(Deno.env.get("WRK_THREADS") ?? 1);
const CONNECTIONS = Number(Deno.env.get("WRK_CONNECTIONS") ?? 32);
const SECONDS = Number(Deno.env.get("WRK_SECONDS") ?? 5);
const ROUNDS = Number(Deno.env.get("WRK_ROUNDS") ?? 3);
const ORDERS = 10_000;

interface WrkResult {
  rps: number;
  avg: string;
  p50: string;
  p99: string;
  errors: number;
}

/** Runs wrk against `url` and reads its summary (`--latency` for the percentiles). */
async function wrk(url: string, headers: Record<string, string>): Promise<WrkResult> {
  const args = ["-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${SECONDS}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  let out;
  try {
    out = await new Deno.Command("wrk", { args: [...args, url], stdout: "piped", stderr: "piped" }).output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw new Error("wrk is not installed: apt-get install -y wrk");
    throw err;
  }
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const avg = /Latency\s+(\S+)/.exec(text);
  const p50 = /\s50%\s+(\S+)/.exec(text);
  const p99 = /\s99%\s+(\S+)/.exec(text);
  if (!rps || !avg || !p50 || !p99) throw new Error(`unexpected wrk output:\n${text}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  const socket = /Socket errors:.*?(\d+).*?(\d+).*?(\d+).*?(\d+)/.exec(text);
  const errors = Number(non2xx?.[1] ?? 0) + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { rps: Number(rps[1]), avg: avg[1], p50: p50[1], p99: p99[1], errors };
}

const server = await startTestServer();
// The bare app answers the body bytes the service answered for the same request, from memory.
let bareBody = new Uint8Array();
const bare = new Hono();
bare.get("/orders", (c) => c.body(bareBody, 200, { "content-type": "application/json" }));
const bareServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, bare.fetch);
const bareUrl = `http://127.0.0.1:${bareServer.addr.port}`;

try {
  const wallet = randomWallet();
  const token = await tokenFor(server, wallet, await newApiKey(server, "bench"));
  const seedStart = performance.now();
  await seedOrders(server.services.kv, wallet, ORDERS);
  const seeded = await call(server, "GET", "/orders?limit=1", { token });
  console.log(
    `seeded ${seeded.body.data.pagination.total} orders for one wallet in ` +
      `${((performance.now() - seedStart) / 1000).toFixed(1)} s; wrk ${THREADS} thread(s), ${CONNECTIONS} ` +
      `connections, ${SECONDS} s per run, best of ${ROUNDS} alternating runs per side`,
  );
  const auth = { Authorization: `Bearer ${token}` };
  const fmt = (r: WrkResult) =>
    `${r.rps.toFixed(0).padStart(7)} req/s  latency avg ${r.avg.padStart(8)}  p50 ${r.p50.padStart(8)}  ` +
    `p99 ${r.p99.padStart(8)}${r.errors ? `  (${r.errors} errors)` : ""}`;
  const ratios: number[] = [];
  for (
    const [name, path] of [
      ["GET /orders (first page of 20; a third of the orders pending)", "/orders"],
      ["GET /orders?type=burn&status=pending&limit=50", "/orders?type=burn&status=pending&limit=50"],
    ]
  ) {
    const res = await fetch(`${server.url}${path}`, { headers: auth });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    bareBody = new Uint8Array(await res.arrayBuffer());
    const bares: WrkResult[] = [];
    const services: WrkResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bares.push(await wrk(`${bareUrl}${path}`, auth));
      services.push(await wrk(`${server.url}${path}`, auth));
    }
    const best = (runs: WrkResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
    const [b, r] = [best(bares), best(services)];
    const all = (runs: WrkResult[]) => runs.map((x) => x.rps.toFixed(0)).join(", ");
    ratios.push(r.rps / b.rps);
    console.log(`\n${name} (${bareBody.length} bytes)`);
    console.log(`  service    ${fmt(r)}`);
    console.log(`  bare Hono  ${fmt(b)}`);
    console.log(
      `  ratio      ${(r.rps / b.rps).toFixed(2)} of bare Hono (runs: service ${all(services)}; bare ${all(bares)})`,
    );
  }
  console.log(`\nload average during the run: ${Deno.loadavg().map((x) => x.toFixed(1)).join(" ")} (1, 5, 15 min)`);
  console.log(`lowest ratio ${Math.min(...ratios).toFixed(2)} (target >= 0.5)`);
} finally {
  await bareServer.shutdown();
  await server.close();
}
