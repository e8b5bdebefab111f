/**
 * The shared UTXO reader's proofs (chains/utxo/reader.ts) over an in-memory chain implementing `UtxoNode`: the
 * bounds of the conflicting-spend search (how many blocks it reads) and the expiry proof, which litecoind cannot show
 * (a Bitcoin-Core-family transaction has no expiry height). The same paths against a real node are in
 * tests/utxo_doge_regtest_test.ts.
 */
import assert from "node:assert/strict";
import type { Outpoint, OwnTx } from "../chains/adapter.ts";
import { Transaction } from "bitcoinjs-lib";
import { txidBytes } from "../chains/utxo/doge_tx.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import type { UtxoBlockView, UtxoNode, UtxoTxView } from "../chains/utxo/node.ts";
import { CONFLICT_SEARCH_BLOCKS, utxoReader } from "../chains/utxo/reader.ts";

const txid = (n: number) => n.toString(16).padStart(64, "0");

/** A chain of `height + 1` blocks, block n holding the given transactions; counts the blocks read. */
function chainOf(height: number, txsAt: Record<number, UtxoTxView[]>, chain: "doge" | "zec" = "doge") {
  const blocks: UtxoBlockView[] = Array.from({ length: height + 1 }, (_, n) => ({
    number: n,
    hash: `h${n}`,
    parentHash: `h${n - 1}`,
    txs: txsAt[n] ?? [],
  }));
  const spent = new Set<string>();
  for (const b of blocks) for (const tx of b.txs) for (const i of tx.inputs) spent.add(`${i.txHash}:${i.index}`);
  let read = 0;
  const node: UtxoNode = {
    network: utxoNetwork(chain, "regtest"),
    tip: () => Promise.resolve({ number: height, hash: `h${height}` }),
    blockHash: (n) => Promise.resolve(blocks[n]?.hash ?? null),
    blocks(from, to) {
      const out = blocks.slice(from, Math.min(to, height) + 1);
      read += out.length;
      return Promise.resolve(out);
    },
    findTx(id) {
      for (const b of blocks) {
        const tx = b.txs.find((t) => t.txid === id);
        if (tx) {
          return Promise.resolve({
            where: "block",
            height: b.number,
            blockHash: b.hash,
            confirmations: height - b.number + 1,
            tx,
          });
        }
      }
      return Promise.resolve({ where: "nowhere" });
    },
    send: () => Promise.resolve(),
    isUnspent: (o: Outpoint) => Promise.resolve(!spent.has(`${o.txHash}:${o.index}`)),
  };
  return { node, reads: () => read };
}

const coinTx = (n: number): UtxoTxView => ({
  txid: txid(n),
  coinbase: false,
  inputs: [{ txHash: txid(9_000 + n), index: 0 }],
  outputs: [{ index: 0, address: "x", amount: 5n }],
});
const spenderOf = (n: number, coin: number): UtxoTxView => ({
  txid: txid(n),
  coinbase: false,
  inputs: [{ txHash: txid(coin), index: 0 }],
  outputs: [{ index: 0, address: "y", amount: 4n }],
});
/** Unsigned bytes spending `coin`:0 (the reader decodes them to tell its own payout from a conflict). */
function rawSpending(coin: number): string {
  const tx = new Transaction();
  tx.addInput(txidBytes(txid(coin)), 0);
  tx.addOutput(Uint8Array.of(0x76, 0xa9, 0x14, ...new Uint8Array(20), 0x88, 0xac), 3n);
  return tx.toHex();
}
const ownSpending = (coin: number, since?: number): OwnTx => ({
  raw: rawSpending(coin),
  consumes: {
    kind: "outpoints",
    outpoints: [{ txHash: txid(coin), index: 0 }],
    ...(since !== undefined ? { since } : {}),
  },
});

Deno.test("UTXO reader (in-memory node): the conflicting spend is found newest first and proven only when buried", async () => {
  const { node, reads } = chainOf(1_000, { 900: [coinTx(1)], 990: [spenderOf(2, 1)] });
  const reader = utxoReader(node, { chain: "doge", confirmations: 11 });
  const status = await reader.txStatus(txid(3), ownSpending(1, 900));
  assert.equal(status.state, "dead");
  assert.deepEqual(status.state === "dead" && status.proof, {
    kind: "conflict",
    // The inputs the conflicting transaction took (here the only one), not where our coins start (`since`).
    consumed: { kind: "outpoints", outpoints: (ownSpending(1, 900).consumes as { outpoints: Outpoint[] }).outpoints },
    spentBy: txid(2),
  });
  assert.ok(reads() <= 20, `found in the first step from the tip (${reads()} blocks read)`);
  const shallow = utxoReader(node, { chain: "doge", confirmations: 12 });
  assert.deepEqual(await shallow.txStatus(txid(3), ownSpending(1, 900)), { state: "unknown" }, "11 deep, 12 needed");
});

Deno.test("UTXO reader (in-memory node): the spend search never goes below the coin's block nor past its bound", async () => {
  // Spent (by a transaction the search cannot see: below the coin's block, which cannot happen on a real chain).
  const low = chainOf(1_000, { 900: [coinTx(1)], 100: [spenderOf(2, 1)] });
  assert.deepEqual(await utxoReader(low.node, { chain: "doge", confirmations: 3 }).txStatus(txid(3), ownSpending(1)), {
    state: "unknown",
  });
  assert.ok(low.reads() <= 101, `from the tip down to the coin's block 900 only (${low.reads()} blocks read)`);
  // A coin older than the bound, spent below it: at most CONFLICT_SEARCH_BLOCKS read, and nothing proven.
  const tip = CONFLICT_SEARCH_BLOCKS + 500;
  const old = chainOf(tip, { 10: [coinTx(1)], 20: [spenderOf(2, 1)] });
  assert.deepEqual(
    await utxoReader(old.node, { chain: "doge", confirmations: 3 }).txStatus(txid(3), ownSpending(1, 10)),
    {
      state: "unknown",
    },
  );
  assert.equal(old.reads(), CONFLICT_SEARCH_BLOCKS);
  // The coin's own transaction left the chain: nothing can spend it, nothing is searched.
  const gone = chainOf(1_000, { 990: [spenderOf(2, 1)] });
  assert.deepEqual(await utxoReader(gone.node, { chain: "doge", confirmations: 3 }).txStatus(txid(3), ownSpending(1)), {
    state: "unknown",
  });
  assert.equal(gone.reads(), 0);
});

Deno.test("UTXO reader (in-memory node): expired once the final height passes the expiry, not before", async () => {
  const { node } = chainOf(150, {}, "zec");
  const own: OwnTx = { raw: "00", expiry: { kind: "height", value: 140 } };
  // final height = tip - confirmations + 1
  assert.deepEqual(await utxoReader(node, { chain: "zec", confirmations: 11 }).txStatus(txid(5), own), {
    state: "unknown",
  });
  const dead = await utxoReader(node, { chain: "zec", confirmations: 10 }).txStatus(txid(5), own);
  assert.equal(dead.state, "dead");
  assert.deepEqual(dead.state === "dead" && dead.proof, { kind: "expired", expiry: own.expiry, reached: 141 });
  assert.deepEqual(await utxoReader(node, { chain: "zec", confirmations: 10 }).txStatus(txid(5)), { state: "unknown" });
  assert.throws(() => utxoReader(node, { chain: "zec", confirmations: 0 }), /positive integer/);
});
