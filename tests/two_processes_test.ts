/**
 * Two server processes on ONE KV file at the same time (tests/support/chaos.ts runs them): partners' deposits and
 * burns go to both alternately, on every native chain and every EVM chain, a few below the minimum, so order steps,
 * watchers and block producers of both race on the same records, and SQLite's lock is contended by two writers.
 * Halfway through the drain the server holding most leases is SIGKILLed and the other finishes alone: it must take
 * over every watcher and block producer. Then the verifier checks from the KV file that every transfer has exactly
 * one order (or held record), every completed mint minted once, every completed burn paid once, the sums per asset
 * match and nothing is left unfinished. CHAOS_SEED repeats a run's plan (timing still varies).
 */
import assert from "node:assert/strict";
import { EVM_CHAINS, type EvmChain, NATIVE_CHAINS, type NativeChain } from "../chains/catalog.ts";
import { openKv } from "../kv/open.ts";
import { listOrderIdsByStatus } from "../kv/orders.ts";
import type { Lease } from "../kv/pipeline.ts";
import {
  type ChaosOptions,
  type ChaosResult,
  countOrders,
  drain,
  errorsLogged,
  formatChaos,
  fund,
  Http,
  type Outcome,
  plan,
  seededRandom,
  send,
  serverEnv,
  ServerProcess,
  settleBurns,
  setUp,
  verify,
} from "./support/chaos.ts";

const OPTIONS: Omit<ChaosOptions, "seed"> = {
  operations: 400,
  trafficKills: 0,
  drainKills: 1,
  wallets: 6,
  concurrency: 10,
  paceMs: 10,
  blockMs: 50,
  sweepMs: 100,
  rpcErrorRate: 0,
  drainTimeoutMs: 30_000,
};
const OPEN = ["pending", "processing", "minting", "burning"] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function openOrders(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for (const status of OPEN) n += (await listOrderIdsByStatus(kv, status)).length;
  return n;
}

/**
 * Lease jobs ("watch:sol", "sim-blocks:base", ...) per owning process id; expired ones left out unless asked for.
 * A holder renews a lease on its next tick once half of it has run, so on a loaded machine a lease its holder still
 * works under can be past `expiresAt` for a moment: who owns it is what shows a takeover.
 */
async function leasesByPid(kv: Deno.Kv, opts: { includeExpired?: boolean } = {}): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for await (const e of kv.list<Lease>({ prefix: ["lease"] })) {
    if (!opts.includeExpired && e.value.expiresAt <= Date.now()) continue;
    const pid = Number(e.value.owner.split("-")[0]);
    out.set(pid, [...(out.get(pid) ?? []), String(e.key[1])]);
  }
  return out;
}

Deno.test("two servers on one KV file, one SIGKILLed mid-drain: one order per transfer, mints and payouts once", async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`two-process test seed ${seed}`);
  const options: ChaosOptions = { ...OPTIONS, seed };
  const began = performance.now();
  const random = seededRandom(seed);
  const dir = await Deno.makeTempDir({ prefix: "issuance-two-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const client = Deno.createHttpClient({});
  const env = serverEnv(kvPath, options);
  const servers = [new ServerProcess(dir, env, client, "a"), new ServerProcess(dir, env, client, "b")];
  const https = servers.map((s) => new Http(s, client));
  const problems: string[] = [];
  let kv: Deno.Kv | null = null;
  let passed = false;
  try {
    // Started together: both generate the sim secrets at once, and must end up with the same ones.
    await Promise.all(servers.map((s) => s.start()));
    const pids = servers.map((s) => s.pid!);
    const { wallets, transferAddress } = await setUp(https, kvPath, random, options.wallets);
    const ops = plan(random, wallets, options.operations);
    await fund(https[1], ops);
    kv = await openKv(kvPath);

    // Traffic: operation i goes to server i % 2, from several senders at once; nobody is killed.
    const outcomes: Outcome[] = new Array(ops.length);
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= ops.length) return;
        outcomes[i] = await send(https[i % 2], ops[i]);
        await sleep(random() * 2 * options.paceMs);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const leasesBefore = await leasesByPid(kv);

    // Halfway through the drain: once half the orders open now have ended, kill the server holding most leases.
    const openAtEnd = await openOrders(kv);
    let openAtKill = openAtEnd;
    const halfwayBy = Date.now() + options.drainTimeoutMs / 2;
    while (openAtKill > Math.ceil(openAtEnd / 2) && Date.now() < halfwayBy) {
      await sleep(10);
      openAtKill = await openOrders(kv);
    }
    const held = await leasesByPid(kv);
    const [a, b] = pids.map((pid) => held.get(pid)?.length ?? 0);
    const v = a === b ? seed % 2 : a > b ? 0 : 1;
    const [victim, survivor] = [servers[v], servers[1 - v]];
    const victimLeases = held.get(pids[v]) ?? [];
    await victim.kill();
    const killedAt = Date.now();

    const expectedAtLeast = ops.filter((op, i) => outcomes[i].state === "accepted" && op.expect !== "held").length;
    await drain(https[1 - v], survivor, wallets, expectedAtLeast, options, problems);
    // The checks below include sweeps and on-chain burns: let the survivor finish them.
    await settleBurns(kvPath, options, problems);
    const aloneSeconds = (Date.now() - killedAt) / 1000;
    const open = await countOrders(https[1 - v], wallets);
    if (open.open > 0) problems.push(`${open.open} orders still open after the drain`);
    // The survivor took over every job the dead process held, and holds every job now.
    const after = await leasesByPid(kv, { includeExpired: true });
    const jobs = after.get(pids[1 - v]) ?? [];
    for (const chain of [...NATIVE_CHAINS, ...EVM_CHAINS]) {
      for (const job of [`watch:${chain}`, `sim-blocks:${chain}`]) {
        if (!jobs.includes(job)) problems.push(`after the kill, the survivor does not hold the lease ${job}`);
      }
    }
    kv.close();
    kv = null;
    await survivor.stop();
    await victim.stop();

    const verified = await verify(kvPath, ops, outcomes, transferAddress, problems);
    const logs = [...servers[0].logs, ...servers[1].logs];
    const result: ChaosResult = {
      ...verified,
      errorsLogged: await errorsLogged(logs),
      options,
      dir,
      seconds: (performance.now() - began) / 1000,
      kills: 1,
      trafficKills: 0,
      drainKills: 1,
      requestsAtKills: [],
      ordersAtKills: [openAtKill],
      starts: servers[0].starts + servers[1].starts,
      unexpectedExits: [...servers[0].unexpectedExits, ...servers[1].unexpectedExits],
      problems,
    };
    problems.push(...result.unexpectedExits);

    // What was sent, per server, and where.
    const perServer = servers.map((_, s) =>
      ops.filter((_, i) => i % 2 === s && outcomes[i].state === "accepted").length
    );
    const deposited = new Set<NativeChain>();
    const burnedOn = new Set<EvmChain>();
    let belowMinimum = 0;
    ops.forEach((op, i) => {
      if (outcomes[i].state !== "accepted") return;
      if (op.kind === "deposit") deposited.add(op.chain);
      else burnedOn.add(op.evm);
      if (op.expect === "failed") belowMinimum++;
    });
    const split = pids.map((pid) => `${leasesBefore.get(pid)?.length ?? 0}`).join("/");
    console.log(
      `two servers on one KV file: requests accepted by a/b ${perServer.join("/")}; leases held by a/b after ` +
        `sending ${split}; ${openAtEnd} orders open when sending ended, ${openAtKill} when server ` +
        `${v === 0 ? "a" : "b"} (holding ${victimLeases.length} leases) was SIGKILLed; the survivor drained ` +
        `alone for ${aloneSeconds.toFixed(1)} s (1.5 s of it quiet); deposits on ${[...deposited].join(", ")}; ` +
        `burns on ${[...burnedOn].join(", ")}; ${belowMinimum} below-minimum requests accepted`,
    );
    console.log(formatChaos(result));

    assert.ok(perServer.every((n) => n > 0), "both servers took requests");
    assert.equal(deposited.size, NATIVE_CHAINS.length, "deposits on every native chain");
    assert.ok(burnedOn.size >= 3, `burns on ${burnedOn.size} EVM chains only`);
    assert.ok(belowMinimum > 0, "no below-minimum request");
    assert.ok(openAtKill > 0, "the kill came after every order had ended");
    // Nobody was killed while sending: every request was answered.
    assert.equal(result.requests.deposits.lost + result.requests.burns.lost, 0, "requests without an answer");
    assert.ok(result.transfers >= OPTIONS.operations * 0.9, `only ${result.transfers} transfers landed`);
    assert.deepEqual(result.errorsLogged, []);
    assert.deepEqual(problems, []);
    passed = true;
  } finally {
    kv?.close();
    await Promise.all(servers.map((s) => s.stop().catch(() => {})));
    client.close();
    if (passed) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else console.log(`kept ${dir} (KV file and server logs)`);
  }
});
