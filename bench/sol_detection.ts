/**
 * Solana: reading every block against polling each deposit address (chains/sol/poll.ts, docs/scan-budget.md "Solana:
 * polling addresses"), at 100, 10,000 and 100,000 addresses (BENCH_ADDRESSES), in requests, JSON-RPC calls and bytes
 * per day at mainnet's rate, measured on the wire against the Solana-RPC-shaped server (tests/support/solana_rpc_server.ts,
 * Agave's answers; no validator runs here), in this process (bench/support/scale.ts `countFetches`: every request and
 * the bytes of every answer; the request bodies counted beside it).
 *
 * The ledger: mainnet-sized slots (`mainnetBlocks`: ~2,000 transactions of other people's, ~3 MB per `getBlock` in
 * `accounts` mode; docs/scan-budget.md). Our addresses: random keys, most idle; one in a hundred has an old deposit in
 * its history (an idle address with history answers its newest signature until the poller remembers it).
 * Activity: BENCH_DEPOSIT_RATE deposits per address per day (default 0.05: one address in twenty receives one on a
 * given day), each followed by its sweep out of the address (a second signature the poller fetches).
 *
 * Measured per mode:
 * - blocks: the reader's scan of BENCH_SLOTS mainnet-sized slots as the watcher calls it; per day = per slot x 216,000
 *   (a slot every 400 ms: chains/catalog.ts `NATIVE.sol.blockMs`);
 * - addresses: a first poll (nothing remembered), then BENCH_POLLS idle polls of one poll interval's slots each
 *   (SOL_POLL_INTERVAL_MS at 400 ms a slot: 25 slots at 10 s), then one poll over BENCH_DEPOSITS deposits and their
 *   sweeps; per day = idle poll x polls a day + (deposit poll - idle poll) / deposits x deposits a day.
 * Both modes also read the tip and check the cursor's block every watcher tick: the same in both, left out.
 * Run: deno task bench:sol-detection   (BENCH_ADDRESSES=100,10000,100000 BENCH_SLOTS=20 BENCH_POLLS=3
 *   BENCH_DEPOSITS=20 BENCH_DEPOSIT_RATE=0.05 SOL_POLL_INTERVAL_MS=10000)
 */
import type { Detection } from "../chains/adapter.ts";
import { NATIVE } from "../chains/catalog.ts";
import { POLL_EVERY_MS_DEFAULT } from "../chains/sol/poll.ts";
import { solReader } from "../chains/sol/reader.ts";
import { solRpc } from "../chains/sol/rpc.ts";
import { SCAN_BYTES_PER_TICK } from "../actors/watcher.ts";
import { type SolanaRpcServer, startSolanaRpcServer } from "../tests/support/solana_rpc_server.ts";
import { syntheticKey } from "../tests/support/solana_mainnet_blocks.ts";
import { countFetches } from "./support/scale.ts";
import { positiveIntEnv, positiveNumberEnv } from "./support/env.ts";

const COUNTS = (Deno.env.get("BENCH_ADDRESSES") ?? "100,10000,100000").split(",").map((s) => {
  const n = Number(s.trim());
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error("BENCH_ADDRESSES must be positive integers, comma-separated");
  return n;
});
const SLOTS = positiveIntEnv("BENCH_SLOTS", 20);
const POLLS = positiveIntEnv("BENCH_POLLS", 3);
const DEPOSITS = positiveIntEnv("BENCH_DEPOSITS", 20);
const DEPOSIT_RATE = positiveNumberEnv("BENCH_DEPOSIT_RATE", 0.05);
const POLL_EVERY_MS = positiveIntEnv("SOL_POLL_INTERVAL_MS", POLL_EVERY_MS_DEFAULT);
const SLOTS_PER_DAY = 86_400_000 / NATIVE.sol.blockMs;
const POLLS_PER_DAY = 86_400_000 / POLL_EVERY_MS;
const SLOTS_PER_POLL = Math.ceil(POLL_EVERY_MS / NATIVE.sol.blockMs);
const HISTORY_SHARE = 100; // one address in this many has an old deposit
const POLLING: Detection = { mode: "addresses", maxAddresses: 0, pollEveryMs: POLL_EVERY_MS };

/** A deterministic key of this bench's own (never anyone's, never among the blocks' filler keys). */
const keyOf = (seed: number) => syntheticKey(seed, 0x7f4a7c15);

interface Cost {
  requests: number;
  calls: number;
  /** Answer bytes. */
  bytes: number;
  /** Request body bytes. */
  sent: number;
  ms: number;
}

const sentBytes = { bytes: 0 };
{
  const original = globalThis.fetch;
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const body = init?.body;
    if (typeof body === "string") sentBytes.bytes += new TextEncoder().encode(body).length;
    else if (body instanceof Uint8Array) sentBytes.bytes += body.byteLength;
    return original(input, init);
  };
}

async function measure(server: SolanaRpcServer, fn: () => Promise<unknown>): Promise<Cost> {
  const wire = countFetches(new URL(server.url).origin);
  const calls0 = [...server.calls.values()].reduce((s, n) => s + n, 0);
  const sent0 = sentBytes.bytes;
  const t0 = performance.now();
  try {
    await fn();
  } finally {
    wire.restore();
  }
  return {
    requests: wire.counts.requests,
    calls: [...server.calls.values()].reduce((s, n) => s + n, 0) - calls0,
    bytes: wire.counts.bytes,
    sent: sentBytes.bytes - sent0,
    ms: performance.now() - t0,
  };
}

const scale = (c: Cost, k: number): Cost => ({
  requests: c.requests * k,
  calls: c.calls * k,
  bytes: c.bytes * k,
  sent: c.sent * k,
  ms: c.ms * k,
});
const plus = (a: Cost, b: Cost): Cost => ({
  requests: a.requests + b.requests,
  calls: a.calls + b.calls,
  bytes: a.bytes + b.bytes,
  sent: a.sent + b.sent,
  ms: a.ms + b.ms,
});
const minus = (a: Cost, b: Cost): Cost => plus(a, scale(b, -1));

/** Blocks mode: per slot, over SLOTS mainnet-sized slots (the same whatever the number of addresses). */
async function blocksPerSlot(): Promise<Cost> {
  const server = startSolanaRpcServer({ finalityLag: 0, mainnetBlocks: {} });
  try {
    server.produce(1);
    server.finalize();
    const from = server.finalizedSlot + 1;
    server.produce(SLOTS);
    server.finalize();
    const reader = solReader(solRpc({ urls: [server.url] }), { confirmations: 1 });
    const ours = new Set([keyOf(1)]);
    const cost = await measure(server, async () => {
      for (let at = from; at <= server.finalizedSlot;) {
        const blocks = await reader.scan(at, server.finalizedSlot, {
          ours: (a) => ours.has(a),
          maxBytes: SCAN_BYTES_PER_TICK,
        });
        at = blocks.at(-1)!.number + 1;
      }
    });
    return scale(cost, 1 / SLOTS);
  } finally {
    await server.close();
  }
}

interface PollFigures {
  addresses: number;
  first: Cost;
  idle: Cost;
  perDeposit: Cost;
  credited: number;
}

/** Addresses mode at `n` addresses (see the module comment). */
async function polling(n: number): Promise<PollFigures> {
  const server = startSolanaRpcServer({ finalityLag: 0, mainnetBlocks: {} });
  try {
    const addresses = Array.from({ length: n }, (_, i) => keyOf(i + 10));
    const set = new Set(addresses);
    const list = { size: n, values: () => addresses };
    const opts = { ours: (a: string) => set.has(a), addresses: list };
    const payer = keyOf(1);
    for (let i = 0; i < n; i += HISTORY_SHARE) {
      server.inject({ payer, credits: [{ to: addresses[i], lamports: 1_000_000_000n }] });
    }
    server.produce(2);
    server.finalize();
    const reader = solReader(solRpc({ urls: [server.url] }), { confirmations: 1, detection: POLLING });
    let from = server.finalizedSlot + 1;
    const next = async (produce: () => void) => {
      produce();
      server.finalize();
      const to = server.finalizedSlot;
      const blocks = await reader.scan(from, to, opts);
      from = to + 1;
      return blocks.flatMap((b) => b.transfers).length;
    };
    const first = await measure(server, () => next(() => server.produce(SLOTS_PER_POLL)));
    let idle: Cost | null = null;
    for (let p = 0; p < POLLS; p++) {
      const c = await measure(server, () => next(() => server.produce(SLOTS_PER_POLL)));
      idle = idle ? plus(idle, c) : c;
    }
    idle = scale(idle!, 1 / POLLS);
    let credited = 0;
    const withDeposits = await measure(server, async () => {
      credited = await next(() => {
        const step = Math.max(1, Math.floor(n / DEPOSITS));
        for (let d = 0; d < DEPOSITS; d++) {
          const to = addresses[(d * step + 1) % n];
          server.inject({ payer, credits: [{ to, lamports: 2_000_000_000n + BigInt(d) }] });
        }
        server.produce(1);
        for (let d = 0; d < DEPOSITS; d++) {
          const from = addresses[(d * step + 1) % n];
          server.inject({ payer: from, credits: [{ to: keyOf(2), lamports: 1_000_000_000n }] }); // the sweep
        }
        server.produce(SLOTS_PER_POLL - 1);
      });
    });
    if (credited !== DEPOSITS) throw new Error(`${n} addresses: ${credited} deposits credited, ${DEPOSITS} made`);
    return { addresses: n, first, idle, perDeposit: scale(minus(withDeposits, idle), 1 / DEPOSITS), credited };
  } finally {
    await server.close();
  }
}

const mib = (b: number) => b / 1024 / 1024;
const gib = (b: number) => b / 1024 / 1024 / 1024;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
const perDay = (b: number) => gib(b) >= 1 ? `${fmt(gib(b), 1)} GiB` : `${fmt(mib(b), 1)} MiB`;

const block = await blocksPerSlot();
const blocksDay = scale(block, SLOTS_PER_DAY);
console.log(
  `Solana detection, at mainnet's rate (${SLOTS_PER_DAY.toLocaleString("en-US")} slots a day), a poll every ` +
    `${POLL_EVERY_MS} ms (${fmt(POLLS_PER_DAY)} polls a day, ${SLOTS_PER_POLL} slots each), ${DEPOSIT_RATE} deposits ` +
    `per address per day, each swept.`,
);
console.log(
  `blocks, measured over ${SLOTS} mainnet-sized slots: ${fmt(block.requests, 2)} requests, ${fmt(block.calls, 2)} ` +
    `calls, ${fmt(mib(block.bytes), 2)} MiB read per slot (${fmt(block.ms, 0)} ms per slot here)`,
);
console.log("");
console.log(
  "| addresses | mode | requests/day | calls/day | read/day | sent/day | one idle poll | per deposit (read) |",
);
console.log("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
const rows: { n: number; poll: Cost }[] = [];
for (const n of COUNTS) {
  const p = await polling(n);
  const day = plus(scale(p.idle, POLLS_PER_DAY), scale(p.perDeposit, n * DEPOSIT_RATE));
  rows.push({ n, poll: day });
  console.log(
    `| ${fmt(n)} | blocks | ${fmt(blocksDay.requests)} | ${fmt(blocksDay.calls)} | ${perDay(blocksDay.bytes)} | ` +
      `${perDay(blocksDay.sent)} | | |`,
  );
  console.log(
    `| ${fmt(n)} | addresses | ${fmt(day.requests)} | ${fmt(day.calls)} | ${perDay(day.bytes)} | ${
      perDay(day.sent)
    } | ` +
      `${fmt(p.idle.requests, 1)} requests, ${fmt(p.idle.bytes / 1024, 1)} KiB, ${fmt(p.idle.ms)} ms (first: ` +
      `${fmt(p.first.bytes / 1024, 1)} KiB, ${fmt(p.first.ms)} ms) | ${fmt(p.perDeposit.bytes)} B, ` +
      `${fmt(p.perDeposit.calls, 1)} calls |`,
  );
}
// Where polling stops being cheaper, per unit (linear in the addresses between the measured points).
const idleRequestsPerAddress = rows.at(-1)!.poll.requests / rows.at(-1)!.n;
const idleCallsPerAddress = rows.at(-1)!.poll.calls / rows.at(-1)!.n;
const bytesPerAddress = rows.at(-1)!.poll.bytes / rows.at(-1)!.n;
console.log("");
console.log(
  `Polling costs as much as reading blocks at about ${fmt(blocksDay.requests / idleRequestsPerAddress)} addresses ` +
    `in requests, ${fmt(blocksDay.calls / idleCallsPerAddress)} in JSON-RPC calls, ` +
    `${fmt(blocksDay.bytes / bytesPerAddress)} in bytes read (at this poll interval).`,
);
