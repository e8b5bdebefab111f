/**
 * Finding Solana deposits by polling each address (chains/sol/poll.ts) against a Solana-RPC-shaped server
 * (tests/support/solana_rpc_server.ts, answering `getSignaturesForAddress` and `getTransaction` as Agave's rpc/src/rpc.rs
 * does; no validator runs here): the server's answers and errors, the same transfers (and so the same deposit ids) as
 * the block scanner finds, failed transactions never credited, skipped slots at a range's end, and the watcher
 * crediting a deposit once whichever mode it runs in, switching modes included.
 */
import assert from "node:assert/strict";
import type { AddressList, ChainReader, ObservedTransfer, ScannedBlock } from "../chains/adapter.ts";
import { solReader } from "../chains/sol/reader.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { POLL_TRANSACTION_OPTIONS } from "../chains/sol/poll.ts";
import { solRpc, SolRpcError } from "../chains/sol/rpc.ts";
import { depositIdOf, watchOnce } from "../actors/watcher.ts";
import { listOrders } from "../kv/orders.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { ours, signer, solWatcherByHand, stranger } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { solDetectionFromEnv } from "../config/account.ts";

const SOL = 1_000_000_000n;
const POLL = { mode: "addresses", maxAddresses: 1000, pollEveryMs: 10_000 } as const;

function listOf(addresses: string[]): AddressList {
  return { size: addresses.length, values: () => addresses };
}

const identity = (t: ObservedTransfer) => ({
  txHash: t.txHash,
  index: t.index,
  from: t.from,
  to: t.to,
  amount: t.amount,
});
const transfersOf = (blocks: ScannedBlock[]) => blocks.flatMap((b) => b.transfers.map(identity));
const byId = (a: { txHash: string; index: number }, b: { txHash: string; index: number }) =>
  a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : a.index - b.index;

Deno.test("getSignaturesForAddress and getTransaction on a Solana-RPC-shaped server answer and refuse as Agave does", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 1 });
  const rpc = solRpc({ urls: [sol.url] });
  const call = (method: string, params: unknown[]) => rpc.call(method, params).catch((e) => e);
  try {
    const a = ours(1);
    const sigs = [1, 2, 3].map((n) =>
      sol.inject({ payer: stranger(9), credits: [{ to: a, lamports: BigInt(n) * SOL }] })
    );
    sol.produce(1);
    const failed = sol.inject({ payer: stranger(9), credits: [{ to: a, lamports: SOL }], err: { Custom: 1 } });
    const v0 = sol.inject({ payer: stranger(9), credits: [{ to: a, lamports: SOL, source: "lookupTable" }] });
    sol.produce(1);
    sol.produce(2);
    sol.finalize();

    const all = await call("getSignaturesForAddress", [a, { commitment: "finalized" }]) as { signature: string }[];
    assert.deepEqual(all.map((e) => e.signature), [v0, failed, ...sigs.toReversed()], "newest first");
    const entry = (all as Record<string, unknown>[])[1];
    assert.deepEqual(Object.keys(entry).sort(), [
      "blockTime",
      "confirmationStatus",
      "err",
      "memo",
      "signature",
      "slot",
    ]);
    assert.deepEqual(entry.err, { Custom: 1 }, "a failed transaction is listed with its err");
    assert.equal(entry.confirmationStatus, "finalized");
    const page = await call("getSignaturesForAddress", [a, { limit: 2, before: all[1].signature }]) as typeof all;
    assert.deepEqual(page.map((e) => e.signature), [sigs[2], sigs[1]], "before: strictly older, limit kept");
    const until = await call("getSignaturesForAddress", [a, { until: sigs[1] }]) as typeof all;
    assert.deepEqual(until.map((e) => e.signature), [v0, failed, sigs[2]], "until: stops before it");
    const unknownBefore = "1".repeat(64);
    assert.deepEqual(await call("getSignaturesForAddress", [a, { before: unknownBefore }]), []);

    const refusals: [unknown[], number, RegExp][] = [
      [[a, { limit: 1001 }], -32602, /Invalid limit; max 1000/],
      [[a, { limit: 0 }], -32602, /Invalid limit; max 1000/],
      [[a, { commitment: "processed" }], -32602, /does not support commitment below `confirmed`/],
      [["not-a-key", {}], -32602, /Invalid param/],
      [[a, { until: "abc" }], -32602, /Invalid param: WrongSize/],
      [[a, { minContextSlot: sol.slot + 10 }], -32016, /Minimum context slot has not been reached/],
    ];
    for (const [params, code, message] of refusals) {
      const err = await call("getSignaturesForAddress", params);
      assert.ok(err instanceof SolRpcError, `${JSON.stringify(params)} refused`);
      assert.equal(err.code, code);
      assert.match(err.message, message);
    }

    const noVersion = await call("getTransaction", [v0, { commitment: "finalized", encoding: "json" }]);
    assert.ok(noVersion instanceof SolRpcError && noVersion.code === -32015, "a v0 transaction needs the parameter");
    assert.match(noVersion.message, /"maxSupportedTransactionVersion": 0/);
    const tx = await call("getTransaction", [v0, POLL_TRANSACTION_OPTIONS]) as {
      version: number;
      transaction: { message: { accountKeys: string[]; header: { numRequiredSignatures: number } } };
      meta: { loadedAddresses: { writable: string[]; readonly: string[] }; postBalances: number[] };
    };
    assert.equal(tx.version, 0);
    assert.ok(tx.transaction.message.accountKeys.every((k) => typeof k === "string"), "json: keys as strings");
    assert.deepEqual(tx.meta.loadedAddresses, { writable: [a], readonly: [] }, "lookup-table keys in the meta");
    assert.equal(tx.transaction.message.accountKeys.length + 1, tx.meta.postBalances.length);
    const legacy = await call("getTransaction", [sigs[0], { commitment: "finalized" }]) as Record<string, unknown>;
    assert.equal("version" in legacy, false, "no version without maxSupportedTransactionVersion");
    const processed = await call("getTransaction", [sigs[0], { commitment: "processed" }]);
    assert.ok(processed instanceof SolRpcError && processed.code === -32602);
  } finally {
    await sol.close();
  }
});

Deno.test("sol polling scan on a Solana-RPC-shaped server finds what the block scan finds: same signature, index, amount, sender", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const mine = [ours(1), ours(2), ours(3), ours(4)];
    const blocks = solAdapters({ urls: [sol.url], signer, confirmations: 1 }).reader;
    const polling = solAdapters({ urls: [sol.url], signer, confirmations: 1, detection: POLL }).reader;
    sol.produce(1);
    const from = sol.slot + 1;
    // The traps: several recipients (two of them ours), a v0 transaction paying through a lookup table, a transfer
    // inside another program, a failed transaction, and a payment to a stranger.
    sol.inject({ payer: stranger(1), credits: [{ to: mine[0], lamports: 2n * SOL }] });
    sol.inject({
      payer: stranger(2),
      credits: [{ to: stranger(5), lamports: SOL }, { to: mine[1], lamports: 3n * SOL }, { to: mine[2], lamports: 7n }],
    });
    sol.produce(1);
    sol.inject({ payer: stranger(3), credits: [{ to: mine[3], lamports: 5n * SOL, source: "lookupTable" }] });
    sol.inject({ payer: stranger(3), credits: [{ to: mine[0], lamports: 11n }], viaProgram: stranger(7) });
    const failed = sol.inject({ payer: stranger(4), credits: [{ to: mine[1], lamports: SOL }], err: { Custom: 1 } });
    sol.inject({ payer: stranger(4), credits: [{ to: stranger(6), lamports: SOL }] });
    sol.produce(3);
    sol.finalize();
    const to = sol.slot;
    const set = new Set(mine);
    const opts = { ours: (a: string) => set.has(a), addresses: listOf(mine) };

    const scanned = transfersOf(await blocks.scan(from, to, { ours: opts.ours })).sort(byId);
    const polled = await polling.scan(from, to, opts);
    assert.equal(scanned.length, 5, "five credits of ours in the block scan");
    assert.deepEqual(transfersOf(polled).sort(byId), scanned, "the same transfers, field by field");
    const ids = (list: ReturnType<typeof transfersOf>) => list.map((t) => depositIdOf("sol", t.txHash, t.index)).sort();
    assert.deepEqual(
      ids(transfersOf(polled)),
      ids(scanned),
      "so the same deposit ids: switching modes credits nothing twice",
    );
    assert.ok(!transfersOf(polled).some((t) => t.txHash === failed), "a failed transaction is never credited");
    assert.equal(polled.at(-1)!.number, to, "the range's last block ends the answer");
    assert.equal(polled.at(-1)!.hash, await blocks.blockHash(to));
    for (const b of polled) {
      const header = (await blocks.scan(b.number, b.number)).at(-1)!;
      assert.deepEqual([b.hash, b.parentHash], [header.hash, header.parentHash], `block ${b.number}'s hashes are real`);
    }
    assert.ok(polling.deferScan!(to + 1, to + 1, mine.length), "a poll just done: the next short range waits");
    assert.ok(!polling.deferScan!(to + 1, to + 100, mine.length), "a watcher far behind never waits");
    assert.ok(!blocks.deferScan!(to + 1, to + 1, mine.length), "the block reader never waits");

    // Again, with each address's newest signature remembered: an idle address is asked only what is newer (`until`).
    sol.produce(2);
    sol.finalize();
    const calls = sol.calls.get("getTransaction") ?? 0;
    const quiet = await polling.scan(to + 1, sol.slot, opts);
    assert.deepEqual(transfersOf(quiet), []);
    assert.deepEqual(quiet.map((b) => b.number), [sol.slot], "nothing of ours: only the range's last block");
    assert.equal(sol.calls.get("getTransaction") ?? 0, calls, "no transaction fetched");
  } finally {
    await sol.close();
  }
});

Deno.test("sol polling scan on a Solana-RPC-shaped server: a range ending in skipped slots ends at its last block; a range with none is empty", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const polling = solAdapters({ urls: [sol.url], signer, confirmations: 1, detection: POLL }).reader;
    const mine = [ours(1)];
    const opts = { ours: (a: string) => a === mine[0], addresses: listOf(mine) };
    sol.produce(1);
    const from = sol.slot + 1;
    sol.inject({ payer: stranger(1), credits: [{ to: mine[0], lamports: SOL }] });
    sol.produce(1);
    const last = sol.slot;
    sol.skip(5);
    sol.produce(1);
    sol.finalize();
    const blocks = await polling.scan(from, last + 5, opts);
    assert.deepEqual(blocks.map((b) => [b.number, b.transfers.length]), [[last, 1]], "the deposit's block is the last");
    assert.deepEqual(
      await polling.scan(last + 1, last + 5, opts),
      [],
      "no block at all in the range: empty, as proven",
    );
  } finally {
    await sol.close();
  }
});

Deno.test("sol watcher polling addresses on a Solana-RPC-shaped server credits a deposit once, and once across a switch of modes", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  const h = await solWatcherByHand(sol);
  try {
    const { kv, ctx, wallet, address, cursor } = h;
    const polling = solReader(solRpc({ urls: [sol.url] }), { confirmations: 1, detection: POLL });
    const blocks = h.live.reader;
    let reader: ChainReader = polling;
    const pctx = {
      ...ctx,
      chains: { ...ctx.chains, reader: (c: string) => c === "sol" ? reader : ctx.chains.reader(c as "sol") },
    };
    sol.inject({ payer: stranger(3), credits: [{ to: address, lamports: 2n * SOL }] });
    sol.inject({ payer: stranger(3), credits: [{ to: address, lamports: 3n * SOL }], err: { Custom: 1 } });
    sol.produce(3);
    sol.finalize();
    const first = await watchOnce(pctx, "sol", "by-hand", 60_000);
    assert.equal(first.scannedTo, sol.finalizedSlot);
    assert.equal(first.recorded, 1, "the successful deposit, not the failed one");
    assert.ok(polling.poll.signatureCalls > 0 && polling.stats.requests === 0, "found by polling, no block read");
    // Once more over the same range in each mode, as after a crash before the cursor was stored: nothing new.
    for (const r of [polling, blocks]) {
      reader = r;
      await kv.set(cursorKey("sol"), cursor);
      const again = await watchOnce(pctx, "sol", "by-hand", 60_000);
      assert.equal(again.recorded, 0, "seen before: its dedupe key is permanent");
    }
    const orders = (await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.deepEqual(orders.map((o) => [o.type, o.amount]), [["mint", "2000000000"]]);
  } finally {
    await h.close();
    await sol.close();
  }
});

Deno.test("SOL_DETECTION and its numbers are read and refused with a sentence naming them", () => {
  assert.deepEqual(solDetectionFromEnv({}), { mode: "blocks", maxAddresses: 500, pollEveryMs: 10_000 });
  assert.deepEqual(
    solDetectionFromEnv({ SOL_DETECTION: "auto", SOL_POLL_MAX_ADDRESSES: "500", SOL_POLL_INTERVAL_MS: "5000" }),
    { mode: "auto", maxAddresses: 500, pollEveryMs: 5000 },
  );
  assert.throws(
    () => solDetectionFromEnv({ SOL_DETECTION: "poll" }),
    /SOL_DETECTION must be one of blocks, addresses, auto/,
  );
  assert.throws(() => solDetectionFromEnv({ SOL_POLL_INTERVAL_MS: "10" }), /SOL_POLL_INTERVAL_MS must be from 400/);
});

Deno.test("sol polling scan on a Solana-RPC-shaped server behind a provider capping batches falls back to smaller requests, with a log", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0, maxBatch: 10 });
  try {
    const logs: string[] = [];
    const polling = solReader(solRpc({ urls: [sol.url] }), {
      confirmations: 1,
      detection: POLL,
      log: (m) => logs.push(m),
    });
    const mine = Array.from({ length: 60 }, (_, i) => ours(i));
    const set = new Set(mine);
    sol.produce(1);
    const from = sol.slot + 1;
    const sig = sol.inject({ payer: stranger(1), credits: [{ to: mine[42], lamports: SOL }] });
    sol.produce(2);
    sol.finalize();
    const blocks = await polling.scan(from, sol.slot, { ours: (a) => set.has(a), addresses: listOf(mine) });
    assert.deepEqual(transfersOf(blocks).map((t) => [t.txHash, t.amount]), [[sig, SOL]]);
    assert.ok(
      logs.some((m) => /a poll of 50 calls in one request failed .*asking 25 at a time/.test(m)),
      logs.join("\n"),
    );
    assert.ok(polling.poll.fallbacks >= 3, "halved until the provider answered");
  } finally {
    await sol.close();
  }
});

Deno.test("sol watcher polling addresses on a Solana-RPC-shaped server waits between polls at the tip, never when behind", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  const h = await solWatcherByHand(sol);
  try {
    let now = 1_000_000;
    const polling = solReader(solRpc({ urls: [sol.url] }), { confirmations: 1, detection: POLL, now: () => now });
    const pctx = {
      ...h.ctx,
      chains: { ...h.ctx.chains, reader: (c: "sol") => c === "sol" ? polling : h.ctx.chains.reader(c) },
    };
    sol.produce(1);
    sol.finalize();
    const first = await watchOnce(pctx, "sol", "by-hand", 60_000);
    assert.equal(first.scannedTo, sol.finalizedSlot, "the first poll runs at once");
    sol.inject({ payer: stranger(3), credits: [{ to: h.address, lamports: SOL }] });
    sol.produce(1);
    sol.finalize();
    now += POLL.pollEveryMs - 1;
    const waited = await watchOnce(pctx, "sol", "by-hand", 60_000);
    assert.deepEqual(
      [waited.scannedTo, waited.recorded, waited.lag],
      [first.scannedTo, 0, 1],
      "polled just now: waits",
    );
    now += 1;
    const polled = await watchOnce(pctx, "sol", "by-hand", 60_000);
    assert.deepEqual([polled.scannedTo, polled.recorded], [sol.finalizedSlot, 1], "the interval passed: polls");
    sol.produce(30); // more than a poll interval's slots: behind, so no waiting
    sol.finalize();
    const behind = await watchOnce(pctx, "sol", "by-hand", 60_000);
    assert.equal(behind.scannedTo, sol.finalizedSlot, "a watcher behind polls at once");
  } finally {
    await h.close();
    await sol.close();
  }
});
