/**
 * The Sui reader (chains/sui/reader.ts) on a Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts: the schema
 * shipped in @mysten/sui executed over an in-memory chain; no Sui node runs here), with every trap: a failed
 * transaction naming our address, one transaction paying two of our addresses, the coin type in its short and long
 * forms, a non-SUI coin, checkpoints and transactions that need pagination, big amounts, and epoch expiry.
 */
import assert from "node:assert/strict";
import type { ObservedTransfer } from "../chains/adapter.ts";
import { Signer } from "../chains/signer.ts";
import { suiGraphql } from "../chains/sui/client.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { suiReader } from "../chains/sui/reader.ts";
import { startSuiGraphqlServer, type SuiGraphqlServer } from "./support/sui_graphql_server.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const ours = (i: number) => signer.address("sui", i);
const SUI = 1_000_000_000n;

async function withSui(fn: (server: SuiGraphqlServer, sui: ReturnType<typeof suiAdapters>) => Promise<void>) {
  const server = await startSuiGraphqlServer();
  try {
    await fn(server, suiAdapters({ urls: [server.url], signer, confirmations: 1 }));
  } finally {
    await server.close();
  }
}

const credits = (blocks: { transfers: ObservedTransfer[] }[]) => blocks.flatMap((b) => b.transfers);

Deno.test("sui reader on a Sui-GraphQL-shaped server: checkpoints are blocks, digests are hashes, final on inclusion", () =>
  withSui(async (server, { reader }) => {
    server.mine(3);
    const tip = await reader.tip();
    assert.equal(tip.number, server.tip);
    const blocks = await reader.scan(0, tip.number);
    assert.deepEqual(blocks.map((b) => b.number), [0, 1, 2, 3]);
    for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i].parentHash, blocks[i - 1].hash);
    assert.equal(await reader.blockHash(2), blocks[2].hash);
    assert.equal(await reader.blockHash(tip.number + 1), null, "above the tip");
    assert.deepEqual((await reader.scan(tip.number, tip.number + 5)).map((b) => b.number), [tip.number]);
    assert.deepEqual(reader.finality, { kind: "flag", flag: "checkpointed" });

    const digest = server.deposit(ours(1), 5n * SUI);
    assert.deepEqual(await reader.txStatus(digest), { state: "unknown" }, "not in a checkpoint yet");
    assert.equal(await reader.transfersOf(digest), null);
    server.mine(1);
    const status = await reader.txStatus(digest);
    assert.deepEqual(status, {
      state: "included",
      blockNumber: server.tip,
      confirmations: 1,
      success: true,
      final: true,
    });
    server.mine(2);
    assert.deepEqual(await reader.txStatus(digest), { ...status, confirmations: 3 });
  }));

Deno.test("sui reader on a Sui-GraphQL-shaped server: credits positive SUI changes of address owners, numbered by position", () =>
  withSui(async (server, { reader }) => {
    const from = server.tip + 1;
    const two = server.deposit([{ to: ours(1), amount: 2n * SUI }, { to: ours(2), amount: 3n * SUI }]);
    const short = server.deposit(ours(3), 7n * SUI, { coinType: "short" });
    const failed = server.failedTransfer(ours(4), 9n * SUI);
    const other = server.otherCoinTransfer(ours(5), 11n * SUI);
    // Above 2^53: amounts are BigInt strings, never JavaScript numbers.
    const huge = server.deposit(ours(6), 9_007_199_254_740_993n);
    server.mine(1);
    const seen = credits(await reader.scan(from, server.tip));
    const mine = (digest: string) => seen.filter((t) => t.txHash === digest);
    assert.deepEqual(mine(two).map((t) => [t.index, t.to, t.amount]), [
      [1, ours(1), 2n * SUI],
      [2, ours(2), 3n * SUI],
    ], "one transaction paying two of our addresses: two deposits, by balance change position");
    assert.ok(mine(two).every((t) => /^0x[0-9a-f]{64}$/.test(t.from) && t.asset === "native"));
    assert.deepEqual(mine(short).map((t) => t.amount), [7n * SUI], "the short coin type 0x2::sui::SUI is SUI");
    assert.deepEqual(mine(failed), [], "a failed transaction charges gas and credits no one");
    assert.deepEqual(mine(other), [], "a coin that is not SUI is not a SUI deposit");
    assert.deepEqual(mine(huge).map((t) => t.amount), [9_007_199_254_740_993n]);
    assert.ok(seen.every((t) => t.amount > 0n), "the senders' negative changes are not transfers");
    // transfersOf numbers them as the scan does; a failed transaction is included, unsuccessful, and credits nothing.
    assert.deepEqual(await reader.transfersOf(two), mine(two));
    assert.deepEqual(await reader.transfersOf(failed), []);
    const f = await reader.txStatus(failed);
    assert.ok(f.state === "included" && !f.success && f.final === true && /InsufficientCoinBalance/.test(f.reason!));
  }));

Deno.test("sui reader on a Sui-GraphQL-shaped server: pages through a checkpoint's transactions and a transaction's balance changes", () =>
  withSui(async (server, { reader }) => {
    const many = Array.from({ length: 60 }, (_, i) => ({ to: ours(100 + i), amount: SUI + BigInt(i) }));
    const wide = server.deposit(many);
    const digests = Array.from({ length: 120 }, (_, i) => server.deposit(ours(i % 7), SUI + BigInt(i)));
    server.mine(1);
    const calls = server.calls.length;
    const seen = credits(await reader.scan(server.tip, server.tip));
    assert.equal(seen.filter((t) => t.txHash === wide).length, 60, "61 balance changes: 50 with the scan, then 11");
    assert.deepEqual(seen.filter((t) => t.txHash === wide).map((t) => t.index), many.map((_, i) => i + 1));
    assert.deepEqual(new Set(seen.filter((t) => t.txHash !== wide).map((t) => t.txHash)), new Set(digests));
    const used = server.calls.slice(calls);
    assert.deepEqual(used.filter((c) => c === "SuiTransactionPages1").length, 2, "121 transactions: 3 pages");
    assert.deepEqual(used.filter((c) => c === "SuiBalanceChangePages1").length, 1);
    assert.deepEqual((await reader.transfersOf(wide))?.length, 60);
  }));

Deno.test("sui reader on a Sui-GraphQL-shaped server: a scan of many empty checkpoints asks for more per request, up to the service's page of 50", () =>
  withSui(async (server, { reader }) => {
    server.mine(299);
    const calls = server.calls.length;
    const blocks = await reader.scan(0, 299);
    assert.equal(blocks.length, 300);
    assert.deepEqual(blocks.map((b) => b.number), Array.from({ length: 300 }, (_, i) => i));
    // One checkpoint first (nothing known of their size), then doubling: 1, 2, 4, 8, 16, 32, then 50 at a time.
    assert.equal(server.calls.length - calls, 11);
  }));

Deno.test("sui reader on a Sui-GraphQL-shaped server: balance is the SUI total as bigint, 0 for an unknown address", () =>
  withSui(async (server, { reader }) => {
    server.deposit(ours(1), 2n * SUI);
    server.deposit(ours(1), 9_007_199_254_740_993n);
    server.mine(1);
    assert.equal(await reader.balance!(ours(1)), 2n * SUI + 9_007_199_254_740_993n);
    assert.equal(await reader.balance!(ours(2)), 0n);
  }));

Deno.test("sui reader on a Sui-GraphQL-shaped server: a byte budget ends a scan after the request that reaches it, at a checkpoint boundary, never empty", async () => {
  const server = await startSuiGraphqlServer({ mainnetCheckpoints: {} });
  try {
    server.mine(400);
    const reader = suiReader(suiGraphql({ urls: [server.url] }), { log: () => {} });
    // A budget of one byte: the first request (one checkpoint: nothing is known of their size yet) is still read.
    const first = await reader.scan(1, 400, { maxBytes: 1 });
    assert.deepEqual(first.map((b) => b.number), [1]);
    // Then requests of 2, 4, 8... checkpoints: a budget of 100 KB stops after the request that crossed it, whole.
    const before = reader.stats.bytes;
    const next = await reader.scan(2, 400, { maxBytes: 100_000 });
    const read = reader.stats.bytes - before;
    assert.ok(read >= 100_000 && next.length < 399, `${next.length} checkpoints in ${read} bytes`);
    assert.deepEqual(next.map((b) => b.number), Array.from({ length: next.length }, (_, i) => 2 + i));
    assert.ok([2, 6, 14, 30].includes(next.length), `whole requests only (${next.length})`);
    // Going on after the last one read covers the rest, each checkpoint once.
    const rest = await reader.scan(next.at(-1)!.number + 1, 400);
    assert.equal(first.length + next.length + rest.length, 400);
    assert.equal(rest.at(-1)!.number, 400);
  } finally {
    await server.close();
  }
});

Deno.test("sui reader on a Sui-GraphQL-shaped server: with `ours`, only our credits are built", async () => {
  const server = await startSuiGraphqlServer({ mainnetCheckpoints: {} });
  try {
    server.mine(20);
    const digest = server.deposit([{ to: ours(1), amount: 2n * SUI }, { to: ours(2), amount: 3n * SUI }]);
    server.mine(20);
    const reader = suiReader(suiGraphql({ urls: [server.url] }));
    const everything = credits(await reader.scan(1, server.tip));
    assert.ok(everything.length > 40 * 10, `${everything.length} SUI credits to anyone`);
    const built = reader.stats.transfersBuilt;
    const mine = new Set([ours(1)]);
    const seen = credits(await reader.scan(1, server.tip, { ours: (a) => mine.has(a) }));
    assert.deepEqual(seen.map((t) => [t.txHash, t.index, t.to, t.amount]), [[digest, 1, ours(1), 2n * SUI]]);
    assert.equal(reader.stats.transfersBuilt - built, 1);
  } finally {
    await server.close();
  }
});

Deno.test("sui reader on a Sui-GraphQL-shaped server: a node that serves no checkpoint of the range is behind, never an empty range", () =>
  withSui(async (server, { reader }) => {
    server.mine(2);
    // The watcher scans only up to the tip it read; a node answering nothing there lags (another URL, its indexer).
    await assert.rejects(() => reader.scan(server.tip + 1, server.tip + 10), /serves no checkpoint from \d+ yet/);
  }));
