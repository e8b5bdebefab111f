/**
 * Graceful shutdown under load: the real server (main.ts) as a child process, sent SIGTERM again and again while
 * deposits and burns are in flight on every simulated chain, restarted on the same KV file each time. Every SIGTERM
 * must end the process by itself with exit code 0 (the process enforces its own time bound and exits 1 past it, so no
 * timing is asserted here). Afterwards the same checks as the SIGKILL test (tests/support/chaos.ts `verify`): every
 * transfer has exactly one order, every completed mint minted once, every completed burn paid once, sums per asset
 * exact. A graceful stop also answers every request it took: no request whose answer was lost happened anyway.
 */
import assert from "node:assert/strict";
import {
  type ChaosOptions,
  countOrders,
  drain,
  errorsLogged,
  fund,
  Http,
  plan,
  seededRandom,
  sendWithInterruptions,
  serverEnv,
  ServerProcess,
  settleBurns,
  setUp,
  verify,
} from "./support/chaos.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";

const OPTIONS: Omit<ChaosOptions, "seed"> = {
  operations: 90,
  trafficKills: 4,
  drainKills: 1,
  wallets: 4,
  concurrency: 6,
  paceMs: 20,
  blockMs: 50,
  sweepMs: 100,
  rpcErrorRate: 0,
  drainTimeoutMs: 30_000,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("SIGTERM under load, 5 restarts: each exit is clean (code 0), nothing lost or duplicated", async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`graceful shutdown test seed ${seed}`);
  const options: ChaosOptions = { ...OPTIONS, seed };
  const random = seededRandom(seed);
  const dir = await Deno.makeTempDir({ prefix: "issuance-sigterm-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const client = Deno.createHttpClient({});
  const server = new ServerProcess(dir, serverEnv(kvPath, options), client);
  const http = new Http(server, client);
  const problems: string[] = [];
  const exits: string[] = [];
  const inFlightAtSignals: string[] = [];
  const terminate = async (what: string) => {
    const status = await server.terminateAndRestart();
    exits.push(`${what}: code ${status?.code} signal ${status?.signal}`);
    if (status?.code !== 0) problems.push(`SIGTERM ${exits.length} (${what}) exited with code ${status?.code}`);
  };
  try {
    await server.start();
    const { wallets, transferAddress } = await setUp(http, kvPath, random, options.wallets);
    const ops = plan(random, wallets, options.operations);
    await fund(http, ops);

    // Traffic, with SIGTERMs at seeded points of progress: requests are in flight and orders are moving.
    const outcomes = await sendWithInterruptions(http, server, ops, options, random, {
      count: options.trafficKills,
      spread: [0.3, 0.5],
      maxDelayMs: 100,
      interrupt: async (inFlight) => {
        inFlightAtSignals.push(`${inFlight} requests`);
        await terminate("while sending");
      },
    });
    // One more while the pipeline works through what was sent (confirmations, mints, payouts).
    await sleep(100);
    inFlightAtSignals.push(`${(await countOrders(http, wallets)).open} open orders`);
    await terminate("while draining");

    const expectedAtLeast = ops.filter((op, i) => outcomes[i].state === "accepted" && op.expect !== "held").length;
    await drain(http, server, wallets, expectedAtLeast, options, problems);
    // The checks below include sweeps and on-chain burns: let the server finish them before the last SIGTERM.
    await settleBurns(kvPath, options, problems);
    const last = await server.stop();
    exits.push(`final stop: code ${last?.code} signal ${last?.signal}`);
    if (last?.code !== 0) problems.push(`the final SIGTERM exited with code ${last?.code}`);

    const result = await verify(kvPath, ops, outcomes, transferAddress, problems);
    console.log(
      `SIGTERMs at ${inFlightAtSignals.join(", ")}; exits: ${exits.join("; ")}\n` +
        `deposits ${JSON.stringify(result.requests.deposits)}, burns ${JSON.stringify(result.requests.burns)}; ` +
        `mints exactly once ${result.mintsExactlyOnce}/${result.completedMints}, ` +
        `payouts exactly once ${result.payoutsExactlyOnce}/${result.completedBurns}`,
    );
    // A graceful stop finishes the requests it took: an unanswered request never happened.
    for (const [kind, r] of Object.entries(result.requests)) {
      if (r.lostLanded > 0) problems.push(`${r.lostLanded} ${kind} whose answer was lost happened anyway`);
    }
    // Nothing the shutdown interrupted shows up as a crash in the logs (a step or tick failing on a closed KV).
    problems.push(...(await errorsLogged(server.logs)).map((line) => `server logged: ${line}`));
    problems.push(...server.unexpectedExits);
    for (const log of server.logs.filter((l) => l.endsWith(".err.log"))) {
      const text = await Deno.readTextFile(log);
      if (!/shutdown: clean after \d+ ms; exiting 0/.test(text)) problems.push(`${log}: no clean shutdown line`);
    }
    assert.equal(exits.length, 6);
    assert.ok(result.completedMints > 0 && result.completedBurns > 0, "no mint or burn completed");
    assert.deepEqual(problems, []);
  } finally {
    await server.stop().catch(() => {});
    client.close();
    if (problems.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else console.log(`kept ${dir} (KV file and server logs)`);
  }
});

Deno.test("runtime stop: ticks in flight finish, then its leases are released for the next process", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const kv = server.services.kv;
    const leases = async () => {
      const out: string[] = [];
      for await (const e of kv.list<{ owner: string }>({ prefix: ["lease"] })) out.push(String(e.key[1]));
      return out.sort();
    };
    // Every enabled chain's watcher takes its lease on its first tick.
    while ((await leases()).filter((l) => l.startsWith("watch:")).length < 10) await sleep(20);
    await server.pipeline!.stop();
    assert.deepEqual(await leases(), []);
  } finally {
    await server.close();
  }
});
