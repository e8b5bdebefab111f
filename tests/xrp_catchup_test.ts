/**
 * The xrp watcher catching up on mainnet-sized ledgers, against a rippled-shaped server (tests/support/
 * rippled_rpc_server.ts; no rippled runs here) that generates each ledger's ~75 transactions of other people's
 * (tests/support/xrpl_mainnet_ledgers.ts: the mainnet mix, ~220 KB of JSON per ledger) when asked, so neither side
 * holds them. A day is about 24,700 ledgers: that runs in bench/scale/xrp.ts (`deno task bench:scale`); here 2,000
 * ledgers (about two hours of mainnet, ~8 s here) keep the test within its time. What the reading side keeps is
 * counted, not timed (docs/scan-budget.md): the bytes each tick reads, the largest answer, the transfers built (only
 * ours), the cursor stored after every step. Then providers that refuse big answers, rate-limit, or answer slowly:
 * the watcher still catches up, nothing twice.
 */
import assert from "node:assert/strict";
import { SCAN_BYTES_PER_TICK, watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import { isPlainLedgerTx, MAX_IN_FLIGHT, refusalOf } from "../chains/xrp/ledger_scan.ts";
import { BatchSizer } from "../chains/shared/batch_sizer.ts";
import { TransientChainError } from "../chains/adapter.ts";
import { XrplRpcError } from "../chains/xrp/rpc.ts";
import { txEntry } from "../chains/xrp/answers.ts";
import { entriesJson } from "./support/xrpl_mainnet_ledgers.ts";
import type { XrpReader } from "../chains/xrp/reader.ts";
import { type Cursor, cursorKey, scannedThrough } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { elsewhere, XRP, xrpOn, xrpWatcherByHand } from "./support/xrp_env.ts";
import { type RippledServer, type RippledServerOptions, startRippledServer } from "./support/rippled_rpc_server.ts";

const LEDGERS = 2_000;
const DEPOSITS = [30n * XRP, 45n * XRP, 60n * XRP];
/**
 * Growth of this process's RSS over the catch-up (earlier tests of the file share the process). It serves the ledgers
 * too, and V8 lets garbage grow its heap past what is held; this guards only against
 * the unbounded scan of before (every transfer of a 200-ledger tick built and held); the counts below are the precise
 * bounds.
 */
const RSS_CEILING = 1024 * 1024 * 1024;

/** The xrp watcher by hand on a server with `opts`. */
async function setUp(opts: RippledServerOptions, reader: { timeoutMs?: number; backoffMs?: number } = {}) {
  const server = startRippledServer({ mainnetLedgers: {}, ...opts });
  const h = await xrpWatcherByHand(server, reader);
  return { server, h };
}

/**
 * `ledgers` more validated ledgers on `server`, `deposits` to `address` spread among them (each in its own ledger), a
 * stranger's payment beside the first; the ledgers that hold them.
 */
function ledgersWithDeposits(server: RippledServer, address: string, ledgers: number, deposits: bigint[]) {
  const h = server.hooks;
  const end = h.validatedIndex + ledgers;
  const landed: number[] = [];
  deposits.forEach((amount, i) => {
    h.validateThrough(h.validatedIndex + Math.floor(ledgers / (deposits.length + 1)) - 1);
    const hash = h.fund(address, amount);
    if (i === 0) h.fund(elsewhere, 50n * XRP);
    h.closeLedgers(1);
    landed.push(h.ledgerOf(hash)!);
  });
  h.validateThrough(end);
  return landed;
}

interface Step {
  scannedTo: number;
  bytes: number;
  stored: number;
}

/** Ticks until the watcher reaches the validated ledger; each step's bytes and stored cursor, and the peak RSS. */
async function catchUp(ctx: PipelineContext, reader: XrpReader, server: RippledServer, maxTicks: number) {
  const steps: Step[] = [];
  const startRss = Deno.memoryUsage().rss;
  let rss = startRss;
  const sampler = setInterval(() => rss = Math.max(rss, Deno.memoryUsage().rss), 20);
  try {
    while (steps.length < maxTicks && (steps.at(-1)?.scannedTo ?? -1) < server.hooks.validatedIndex) {
      const before = reader.stats.bytes;
      // Batched cursor writes, as the runtime runs watchers: a step behind the tip must be stored anyway.
      const r = await watchOnce(ctx, "xrp", "by-hand", 60_000, { batchCursorMs: 60_000 });
      const stored = (await ctx.kv.get<Cursor>(cursorKey("xrp"))).value!;
      steps.push({ scannedTo: r.scannedTo!, bytes: reader.stats.bytes - before, stored: scannedThrough(stored) });
    }
  } finally {
    clearInterval(sampler);
  }
  return { steps, peakRss: rss, startRss };
}

async function mints(h: Awaited<ReturnType<typeof xrpWatcherByHand>>) {
  const orders = (await listOrders(h.kv, h.wallet.toLowerCase(), { limit: 100, offset: 0 })).orders;
  return orders.map((o) => [o.type, o.amount]).sort((a, b) => Number(BigInt(a[1]) - BigInt(b[1])));
}

const expected = (deposits: bigint[]) => deposits.map((d) => ["mint", d.toString()]);

Deno.test(`xrp watcher on a rippled-shaped server catches up on ${LEDGERS} mainnet-sized ledgers in bounded steps, memory bounded, each deposit credited once`, async () => {
  const { server, h } = await setUp({});
  try {
    const landed = ledgersWithDeposits(server, h.address, LEDGERS, DEPOSITS);
    assert.equal(server.hooks.validatedIndex - h.start, LEDGERS);

    const { steps, peakRss, startRss } = await catchUp(h.ctx, h.reader, server, 100);
    const stats = h.reader.stats;
    const last = steps.at(-1)!;
    assert.equal(last.scannedTo, server.hooks.validatedIndex, "caught up");
    assert.equal(stats.blocks, LEDGERS);
    const perLedger = stats.bytes / stats.blocks;
    assert.ok(perLedger > 150_000, `mainnet-sized ledgers were read (${perLedger.toFixed(0)} bytes each)`);
    // Bytes bounded per step: the budget plus at most the ledgers in flight when it was reached.
    for (const s of steps) {
      assert.ok(s.bytes <= SCAN_BYTES_PER_TICK + MAX_IN_FLIGHT * stats.largestResponse, `a step read ${s.bytes}`);
    }
    // Committed as it goes: after every step that ended behind the tip, the stored cursor is where it ended (a crash
    // reads one step again); the step that reached the tip is batched as usual, at most one step behind.
    const behind = steps.slice(0, -1);
    assert.ok(behind.length >= 5, `${steps.length} steps`);
    assert.deepEqual(behind.map((s) => s.stored), behind.map((s) => s.scannedTo));
    assert.ok(last.stored >= behind.at(-1)!.scannedTo);
    // One ledger per answer, never a whole tick's worth.
    assert.ok(stats.largestResponse < 1_000_000, `largest answer ${stats.largestResponse} bytes`);
    // Nothing that is not ours was built: ~75 transactions per ledger of strangers, a stranger's payment, our three.
    assert.equal(stats.transfersBuilt, DEPOSITS.length);
    assert.ok(
      peakRss - startRss < RSS_CEILING,
      `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB, from ${(startRss / 2 ** 20).toFixed(0)}`,
    );
    console.log(
      `${LEDGERS} ledgers, ${(stats.bytes / 2 ** 20).toFixed(0)} MiB in ${stats.requests} requests over ` +
        `${steps.length} steps; largest answer ${(stats.largestResponse / 1024).toFixed(0)} KiB; peak RSS of this ` +
        `process (server included) ${(peakRss / 2 ** 20).toFixed(0)} MiB`,
    );
    assert.deepEqual(await mints(h), expected(DEPOSITS));

    // A crash that lost the last steps: the deposits' ledgers read again record nothing new.
    const before = await h.reader.blockHash(landed[0] - 1);
    await h.kv.set(cursorKey("xrp"), { number: landed[0] - 1, hash: before as string } satisfies Cursor);
    await catchUp(h.ctx, h.reader, server, 100);
    assert.deepEqual(await mints(h), expected(DEPOSITS), "credited exactly once");
  } finally {
    await h.close();
    await server.close();
  }
});

Deno.test("xrp watcher on a rippled-shaped server: a provider refusing big answers (HTTP 413) has those ledgers read in parts, never stalled", async () => {
  // 40 transactions per ledger on average (24 to 56: ~70 to ~170 KB): the bigger ones are above the 120 KB cap.
  const { server, h } = await setUp({ mainnetLedgers: { transactions: 40 }, maxResponseBytes: 120_000 });
  try {
    ledgersWithDeposits(server, h.address, 40, DEPOSITS.slice(0, 2));
    const { steps } = await catchUp(h.ctx, h.reader, server, 20);
    assert.equal(steps.at(-1)!.scannedTo, server.hooks.validatedIndex, "caught up");
    assert.ok(h.reader.stats.fallbacks > 0 && server.served.refused > 0, "the provider refused some answers");
    assert.ok(
      h.logs.some((m) => /ledger \d+ in one answer failed .*HTTP 413.*one tx call per/.test(m)),
      h.logs.join("\n"),
    );
    assert.ok(h.reader.stats.largestResponse <= 120_000);
    assert.deepEqual(await mints(h), expected(DEPOSITS.slice(0, 2)));
  } finally {
    await h.close();
    await server.close();
  }
});

for (const answer of ["slowDown", "503"] as const) {
  Deno.test(`xrp watcher on a rippled-shaped server: a node over its client's usage limit (${answer === "503" ? "HTTP 503, as rippled's JSON-RPC" : "slowDown, as Clio"}) is waited out, never stalled`, async () => {
    // 12 requests, decaying over 300 ms: a catch-up asking as fast as it can is refused within its first step.
    const { server, h } = await setUp(
      { mainnetLedgers: { transactions: 20 }, rateLimit: { limit: 12, windowMs: 300, answer } },
      { backoffMs: 100 },
    );
    try {
      ledgersWithDeposits(server, h.address, 60, DEPOSITS.slice(0, 2));
      const { steps } = await catchUp(h.ctx, h.reader, server, 60);
      assert.equal(steps.at(-1)!.scannedTo, server.hooks.validatedIndex, "caught up");
      assert.ok(h.reader.stats.rateRefusals > 0 && server.served.refused > 0, "the node refused some requests");
      assert.ok(h.logs.some((m) => /refused by the provider's load limit .*one ledger at a time/.test(m)));
      assert.deepEqual(await mints(h), expected(DEPOSITS.slice(0, 2)));
    } finally {
      await h.close();
      await server.close();
    }
  });
}

Deno.test("xrp watcher on a rippled-shaped server: a slow provider (10 MB/s) is caught up with; one whose whole ledgers time out is read in parts", async (t) => {
  await t.step("10 MB/s", async () => {
    const { server, h } = await setUp({ bytesPerSecond: 10_000_000 });
    try {
      ledgersWithDeposits(server, h.address, 60, DEPOSITS.slice(0, 1));
      const { steps } = await catchUp(h.ctx, h.reader, server, 20);
      assert.equal(steps.at(-1)!.scannedTo, server.hooks.validatedIndex, "caught up");
      assert.deepEqual(await mints(h), expected(DEPOSITS.slice(0, 1)));
    } finally {
      await h.close();
      await server.close();
    }
  });
  await t.step("100 KB/s with a 1 s timeout", async () => {
    // ~40 transactions (~120 KB) per ledger take over a second whole; each transaction (~3 KB) takes 30 ms.
    const { server, h } = await setUp(
      { mainnetLedgers: { transactions: 40 }, bytesPerSecond: 100_000 },
      { timeoutMs: 1_000 },
    );
    try {
      ledgersWithDeposits(server, h.address, 3, DEPOSITS.slice(0, 1));
      const { steps } = await catchUp(h.ctx, h.reader, server, 10);
      assert.equal(steps.at(-1)!.scannedTo, server.hooks.validatedIndex, "caught up");
      assert.ok(h.reader.stats.fallbacks > 0, h.logs.join("\n"));
      assert.ok(h.logs.some((m) => /timed out|timeout/i.test(m)), h.logs.join("\n"));
      assert.deepEqual(await mints(h), expected(DEPOSITS.slice(0, 1)));
    } finally {
      await h.close();
      await server.close();
    }
  });
});

Deno.test("xrp reader on a rippled-shaped server: with `ours`, a stranger's malformed transaction still refuses the ledger by name (checked in place, then by its schema)", async () => {
  const server = startRippledServer({ mainnetLedgers: { transactions: 10 } });
  try {
    const h = server.hooks;
    const payment = h.fund(elsewhere, 50n * XRP);
    h.validateThrough(h.closedIndex + 1);
    const n = h.ledgerOf(payment)!;
    const { reader } = xrpOn(server);
    // Well formed: read whole, nothing of it built (the payment is a stranger's).
    const [block] = await reader.scan(n, n, { ours: () => false });
    assert.equal(block.number, n);
    assert.deepEqual(block.transfers, []);
    h.tamper("ledger", (r) => {
      const txs = (r.ledger as { transactions?: unknown[] }).transactions ?? [];
      for (const t of txs) {
        if (typeof t !== "object" || t === null) continue;
        const meta = (t as { meta: { AffectedNodes: { ModifiedNode?: { FinalFields: Record<string, unknown> } }[] } })
          .meta;
        const root = meta.AffectedNodes.find((a) => a.ModifiedNode)?.ModifiedNode;
        if (root) root.FinalFields.Balance = "1.5";
      }
    });
    await assert.rejects(
      reader.scan(n, n, { ours: () => false }),
      (err) =>
        err instanceof MalformedAnswerError &&
        /AffectedNodes\[0\]\.ModifiedNode\.FinalFields\.Balance/.test(err.message),
    );
  } finally {
    await server.close();
  }
});

Deno.test("xrp ledger check in place: every mainnet-shaped entry (API v1 and v2) passes it and its schema; what the schema refuses, it refuses too", () => {
  for (const version of [1, 2] as const) {
    const entries = JSON.parse(`[${entriesJson(90_000_000, 0, 200, version, "2026-11-27T00:00:00.000Z")}]`);
    entries.forEach((e: unknown, i: number) => {
      assert.ok(isPlainLedgerTx(e), `v${version} entry ${i} is read in place`);
      txEntry("ledger", e, ["ledger", "transactions", i], true);
    });
    // What the schema refuses (each a copy of a successful XRP Payment, changed one way) is refused in place too, so
    // it goes through the schema and is refused by name.
    const payment = entries.find((e: Record<string, unknown>) => {
      const tx = (version === 2 ? e.tx_json : e) as Record<string, unknown>;
      const meta = (version === 2 ? e.meta : e.metaData) as Record<string, unknown>;
      return tx.TransactionType === "Payment" && typeof meta.delivered_amount === "string";
    });
    // deno-lint-ignore no-explicit-any
    const edits: ((e: Record<string, any>) => void)[] = [
      (e) => delete (version === 2 ? e.tx_json : e).Destination,
      (e) => (version === 2 ? e.meta : e.metaData).delivered_amount = "12.5",
      (e) => delete (version === 2 ? e.meta : e.metaData).delivered_amount,
      (e) => (version === 2 ? e.meta : e.metaData).AffectedNodes[0].ModifiedNode.FinalFields.Balance = -5,
      (e) => (version === 2 ? e.meta : e.metaData).AffectedNodes[1].ModifiedNode.PreviousFields.Balance = "1e9",
      (e) => e.hash = "ABC",
      (e) => delete e[version === 2 ? "meta" : "metaData"],
      (e) => (version === 2 ? e.tx_json : e).Account = 7,
    ];
    for (const [i, edit] of edits.entries()) {
      const bad = structuredClone(payment);
      edit(bad);
      assert.equal(isPlainLedgerTx(bad), false, `v${version} edit ${i}`);
      assert.throws(() => txEntry("ledger", bad, [], true), MalformedAnswerError, `v${version} edit ${i}`);
    }
  }
});

Deno.test("xrp ledger window: as many ledgers in flight as fit the byte target (at most 4, growing by doubling), one after a rate refusal until 20 answers", () => {
  const w = new BatchSizer(1_000_000, MAX_IN_FLIGHT);
  assert.equal(w.size, 1, "nothing known yet: one");
  w.answered(1, 200_000);
  assert.equal(w.size, 2, "doubles");
  w.answered(1, 200_000);
  assert.equal(w.size, MAX_IN_FLIGHT, "capped");
  w.answered(1, 400_000);
  assert.equal(w.size, 2, "1 MB / 400 KB");
  w.answered(1, 3_000_000);
  assert.equal(w.size, 1, "a ledger above the target: alone");
  w.slowDown();
  for (let i = 0; i < 19; i++) w.answered(1, 1_000);
  assert.equal(w.size, 1, "still one at a time after 19 answers");
  w.answered(1, 1_000);
  w.answered(1, 1_000);
  assert.equal(w.size, 2, "the cap rises again after 20");
});

Deno.test("xrp refusals: load limits, answers too big and other failures told apart", () => {
  const transient = (message: string, cause?: unknown) => new TransientChainError(message, { chain: "xrp", cause });
  const node = (code: string) =>
    transient(`xrp RPC ledger: the node answered ${code}`, new XrplRpcError("ledger", code, {}));
  assert.equal(refusalOf(node("slowDown")), "rate");
  assert.equal(refusalOf(node("tooBusy")), "rate");
  assert.equal(refusalOf(node("noNetwork")), "other");
  assert.equal(refusalOf(transient("xrp RPC ledger failed on every URL: http://a: HTTP 503")), "rate");
  assert.equal(refusalOf(transient("xrp RPC ledger failed on every URL: http://a: HTTP 429")), "rate");
  assert.equal(refusalOf(transient("xrp RPC ledger failed on every URL: http://a: HTTP 413")), "size");
  assert.equal(
    refusalOf(
      transient("xrp RPC ledger failed on every URL: http://a: HTTP 200, answer cut short (aborted due to timeout)"),
    ),
    "size",
  );
  assert.equal(refusalOf(transient("xrp RPC ledger failed on every URL: http://a: connection refused")), "other");
  assert.equal(refusalOf(new XrplRpcError("ledger", "lgrNotFound", {})), "other");
  assert.equal(refusalOf(new MalformedAnswerError("xrp", "ledger", "ledger_hash", "is missing")), "other");
});
