/**
 * API throughput: GET /orders for one wallet holding 10,000 orders, and POST /auth/token, each beside a bare Hono
 * route served by this same process in the same run (the ratio is what to compare across machines).
 * Run: deno task bench   (BENCH_SECONDS, BENCH_CONCURRENCY to change the load)
 */
import { Hono } from "hono";
import { call, newApiKey, randomWallet, startTestServer, tokenFor } from "../tests/support/server.ts";
import { seedOrders } from "./support/seed_orders.ts";

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 32);
const ORDERS = 10_000;

interface Result {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

async function load(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Result> {
  const spec = JSON.stringify({ url, method, headers, body, concurrency: CONCURRENCY, seconds: SECONDS });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", new URL("./load.ts", import.meta.url).pathname, spec],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) throw new Error("load generator failed");
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const server = await startTestServer();
const bare = new Hono();
// The bare route answers the same body as the real request it is compared with, from memory: the ratio then
// isolates what auth and storage cost, not the JSON size. "/bare-kv" adds one KV read of three keys, the least any
// route that checks wallet status per request can do: the floor for GET /orders on this machine.
let barePage: unknown = null;
bare.get("/bare", (c) => c.json(barePage));
bare.get("/bare-kv", async (c) => {
  await server.services.kv.getMany([["bench", 1], ["bench", 2], ["bench", 3]]);
  return c.json(barePage);
});
bare.post("/bare", async (c) => c.json({ token: "x", echo: await c.req.json() }));
const bareServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, bare.fetch);
const bareUrl = `http://127.0.0.1:${bareServer.addr.port}/bare`;

try {
  const wallet = randomWallet();
  const apiKey = await newApiKey(server, "bench");
  const token = await tokenFor(server, wallet, apiKey);
  const seedStart = performance.now();
  await seedOrders(server.services.kv, wallet, ORDERS);
  const seeded = await call(server, "GET", "/orders?limit=1", { token });
  console.log(
    `seeded ${seeded.body.data.pagination.total} orders in ${((performance.now() - seedStart) / 1000).toFixed(1)} s; ` +
      `load: ${CONCURRENCY} connections for ${SECONDS} s per run, generator in its own process`,
  );

  const auth = { Authorization: `Bearer ${token}` };
  const tokenBody = JSON.stringify({ walletAddress: wallet });
  const json = { "Content-Type": "application/json" };
  const fmt = (r: Result) =>
    `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms` +
    (r.errors ? `  (${r.errors} errors)` : "");
  const report = (name: string, r: Result, b: Result, floor?: Result) => {
    console.log(`\n${name}`);
    console.log(`  service          ${fmt(r)}`);
    console.log(`  bare Hono        ${fmt(b)}`);
    if (floor) console.log(`  bare + 1 KV read ${fmt(floor)}  (${(floor.rps / b.rps).toFixed(2)} of bare)`);
    console.log(`  ratio            ${(r.rps / b.rps).toFixed(2)} of the bare route's throughput`);
  };
  for (
    const [name, path] of [
      ["GET /orders (10,000 orders, first page of 20)", "/orders"],
      ["GET /orders?type=mint&status=completed&limit=100", "/orders?type=mint&status=completed&limit=100"],
      ["GET /orders?offset=9000 (a deep page costs O(offset))", "/orders?offset=9000"],
    ]
  ) {
    barePage = (await call(server, "GET", path, { token })).body;
    const b = await load(bareUrl, "GET", {});
    const floor = await load(`${bareUrl}-kv`, "GET", {});
    const r = await load(`${server.url}${path}`, "GET", auth);
    report(name, r, b, floor);
  }
  const bt = await load(bareUrl, "POST", json, tokenBody);
  const rt = await load(`${server.url}/auth/token`, "POST", { ...json, "X-API-Key": apiKey }, tokenBody);
  report("POST /auth/token (API key check, RS256 signing)", rt, bt);
} finally {
  await bareServer.shutdown();
  await server.close();
}
