/**
 * The sol reader on a Solana-RPC-shaped server (tests/support/solana_rpc_server.ts; no validator runs here): credits
 * by balance change at `finalized`, never a failed transaction, lookup-table accounts of v0 transactions, one
 * transaction paying two of our addresses, a transfer made inside another program, skipped slots.
 */
import assert from "node:assert/strict";
import { SKIPPED } from "../chains/adapter.ts";
import { transfersIn } from "../chains/sol/reader.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { ours, solOn, stranger } from "./support/sol_env.ts";

Deno.test("sol reader on a Solana-RPC-shaped server: every trap of a finalized block, credited by balance change", async () => {
  const server = startSolanaRpcServer({ finalityLag: 2 });
  try {
    const { reader } = solOn(server);
    const from = server.slot + 1;
    const failed = server.inject({
      payer: stranger(1),
      credits: [{ to: ours(0), lamports: 7_000_000n }],
      err: {
        InstructionError: [0, { Custom: 1 }],
      },
    });
    const viaTable = server.inject({
      payer: stranger(2),
      credits: [{ to: stranger(3), lamports: 1n }, { to: ours(1), lamports: 20_000_000n, source: "lookupTable" }],
      version: 0,
    });
    const twoOfOurs = server.inject({
      payer: stranger(4),
      credits: [{ to: ours(2), lamports: 30_000_000n }, { to: ours(3), lamports: 40_000_000n }],
    });
    const insideProgram = server.inject({
      payer: stranger(5),
      credits: [{ to: ours(4), lamports: 50_000_000n }],
      viaProgram: "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4",
    });
    server.produce(1);
    const included = await reader.txStatus(twoOfOurs);
    assert.ok(included.state === "included" && included.final === false, "confirmed, not finalized yet");
    await assert.rejects(
      () => reader.scan(from, server.slot),
      (err: Error) => err.name === "TransientChainError",
      "scan sees only finalized blocks: a range the node has not finalized is not proven empty",
    );
    assert.equal(await reader.transfersOf(twoOfOurs), null, "not final: in no block the reader answers for");
    server.produce(2);
    const tip = await reader.tip();
    assert.equal(tip.number, server.finalizedSlot);
    const blocks = await reader.scan(from, tip.number);
    const mine = new Set([0, 1, 2, 3, 4].map(ours));
    const credited = blocks.flatMap((b) => b.transfers).filter((t) => mine.has(t.to));
    assert.deepEqual(
      credited.map((t) => [t.txHash, t.to, t.amount, t.from]),
      [
        [viaTable, ours(1), 20_000_000n, stranger(2)],
        [twoOfOurs, ours(2), 30_000_000n, stranger(4)],
        [twoOfOurs, ours(3), 40_000_000n, stranger(4)],
        [insideProgram, ours(4), 50_000_000n, stranger(5)],
      ],
    );
    assert.ok(!credited.some((t) => t.txHash === failed), "a failed transaction is never credited");
    const pair = credited.filter((t) => t.txHash === twoOfOurs);
    assert.notEqual(pair[0].index, pair[1].index, "two deposits: (signature, account index) differ");
    const lookup = credited.find((t) => t.txHash === viaTable)!;
    assert.equal(lookup.index, 3, "a lookup-table account is numbered after the static keys");
    // transfersOf numbers them as scan does.
    assert.deepEqual(
      (await reader.transfersOf(twoOfOurs))?.filter((t) => mine.has(t.to)),
      pair,
    );
    assert.deepEqual(await reader.transfersOf(failed), []);
    const failedStatus = await reader.txStatus(failed);
    assert.ok(failedStatus.state === "included" && !failedStatus.success && failedStatus.final === true);
    assert.match(failedStatus.reason!, /InstructionError/);
    assert.equal(await reader.balance!(ours(2)), 30_000_000n);
    assert.equal(await reader.balance!(ours(9)), 0n);
  } finally {
    await server.close();
  }
});

Deno.test("sol reader on a Solana-RPC-shaped server: skipped slots are SKIPPED, the scan goes past them, above the finalized tip is null", async () => {
  const server = startSolanaRpcServer({ finalityLag: 1 });
  try {
    const { reader } = solOn(server);
    const before = server.slot;
    server.skip(2);
    const sig = server.inject({ payer: stranger(1), credits: [{ to: ours(0), lamports: 15_000_000n }] });
    server.produce(1);
    server.finalize();
    const tip = await reader.tip();
    assert.equal(tip.number, before + 3);
    assert.equal(await reader.blockHash(before + 1), SKIPPED);
    assert.equal(await reader.blockHash(before + 2), SKIPPED);
    assert.equal(await reader.blockHash(tip.number), tip.hash);
    assert.equal(await reader.blockHash(tip.number + 1), null);
    const blocks = await reader.scan(before, tip.number);
    assert.deepEqual(blocks.map((b) => b.number), [before, tip.number]);
    assert.equal(blocks[1].parentHash, blocks[0].hash, "the parent of the block after the gap is the block before it");
    assert.deepEqual(blocks[1].transfers.filter((t) => t.to === ours(0)).map((t) => [t.txHash, t.amount]), [[
      sig,
      15_000_000n,
    ]]);
    server.produce(3);
    assert.equal(await reader.blockHash(server.slot), null, "a block above the finalized tip is not answered");
  } finally {
    await server.close();
  }
});

Deno.test("sol reader on a Solana-RPC-shaped server: a scan of many blocks is batched", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const methods: string[] = [];
    const { reader } = solOn(server, ({ method }) => methods.push(method));
    const from = server.slot + 1;
    server.produce(20);
    const requestsBefore = [...server.calls.values()].reduce((a, b) => a + b, 0);
    const blocks = await reader.scan(from, server.slot);
    assert.equal(blocks.length, 20);
    assert.equal(methods.filter((m) => m === "getBlock").length, 20);
    assert.equal([...server.calls.values()].reduce((a, b) => a + b, 0) - requestsBefore, 21);
  } finally {
    await server.close();
  }
});

Deno.test("sol reader: a failed transaction is never credited, whatever balances a node reports for it", () => {
  const keys = [
    { pubkey: stranger(1), signer: true, writable: true, source: "transaction" as const },
    { pubkey: ours(0), signer: false, writable: true, source: "transaction" as const },
  ];
  const tx = (err: unknown) => ({
    transaction: { signatures: ["sig1"], accountKeys: keys },
    meta: { err, fee: 5000, preBalances: [10_000_000_000, 0], postBalances: ["9999995000", 1_000_000] },
  });
  assert.deepEqual(transfersIn(tx({ InstructionError: [0, { Custom: 1 }] })), []);
  assert.deepEqual(transfersIn(tx(null)).map((t) => [t.to, t.amount, t.from, t.index]), [[
    ours(0),
    1_000_000n,
    stranger(1),
    1,
  ]]);
  assert.throws(
    () => transfersIn({ ...tx(null), transaction: { signatures: ["sig1"], accountKeys: [] } }),
    /no account keys/,
  );
});
