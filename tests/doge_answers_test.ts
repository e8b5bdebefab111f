/**
 * Malformed Dogecoin Core answers are named refusals (chains/utxo/answers.ts), on the Bitcoin-Core-shaped RPC server
 * (tests/support/bitcoin_core_server.ts; Dogecoin Core does not run here, and litecoind cannot be made to misbehave)
 * that serves one on demand: the error names the method and the field, and the watcher's cursor stays. Served well
 * again, the watcher goes on.
 */
import assert from "node:assert/strict";
import type { ChainSymbol } from "../chains/catalog.ts";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { bitcoinCoreNode } from "../chains/utxo/bitcoin_core.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { utxoReader } from "../chains/utxo/reader.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { type PipelineContext } from "../actors/context.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey, scannedThrough } from "../kv/pipeline.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";
import { startBitcoinCoreServer } from "./support/bitcoin_core_server.ts";
import { bytesToHex } from "@noble/hashes/utils.js";

/** Asserts `err` is the named refusal of `method` at `field`. */
function refused(method: string, field: string, problem: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof MalformedAnswerError, `a MalformedAnswerError, not ${err}`);
    assert.equal(err.method, method);
    assert.equal(err.field, field);
    assert.match(err.problem, problem);
    assert.ok(err.message.startsWith(`doge ${method}: ${field} `), err.message);
    return true;
  };
}

type Json = Record<string, unknown>;

Deno.test("doge watcher on a Bitcoin-Core-shaped RPC server: a malformed block or tip is refused by name and the cursor stays; served well, the watcher goes on", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop(); // the doge watcher below runs by hand
  const running = server.services.pipeline!;
  const network = utxoNetwork("doge", running.settings.utxoNetwork("doge"));
  const core = startBitcoinCoreServer({ chain: "main", blocks: 5 });
  try {
    const kv = server.services.kv;
    const node = bitcoinCoreNode(utxoRpc({ chain: "doge", urls: [core.url] }), network);
    const reader = utxoReader(node, { chain: "doge", confirmations: 1 });
    const ctx: PipelineContext = {
      ...running,
      chains: { ...running.chains, reader: (c: ChainSymbol) => c === "doge" ? reader : running.chains.reader(c) },
    };
    const two = await node.blockHash(2);
    const cursor = { number: 2, hash: two! } satisfies Cursor;
    await kv.set(cursorKey("doge"), cursor);
    // getblock(hash, false): the block's hex (chains/utxo/raw_block.ts reads it).
    const onBlock = (height: number, edit: (hex: string) => string) =>
      core.tampered.set(
        "getblock",
        (hex, params) => params[0] === core.chain.hashAt(height) ? edit(hex as string) : hex,
      );

    const malformed: [string, () => void, string, string, RegExp][] = [
      [
        "a block that is not hex",
        () => onBlock(3, (hex) => "zz" + hex.slice(2)),
        "getblock",
        "the answer",
        /is not hex/,
      ],
      [
        "a block as a number",
        () => onBlock(4, () => 42 as unknown as string),
        "getblock",
        "the answer",
        /is not a string/,
      ],
      [
        "a block hash in capitals",
        () => core.tampered.set("getblockhash", (h) => String(h).toUpperCase()),
        "getblockhash",
        "the answer",
        /is not a 256-bit hash in lowercase hex/,
      ],
      [
        "a tip that is not a number",
        () => core.tampered.set("getblockchaininfo", (i) => ({ ...(i as Json), blocks: "four" })),
        "getblockchaininfo",
        "blocks",
        /is not a whole number \("four"\)/,
      ],
    ];
    for (const [name, tamper, method, field, problem] of malformed) {
      await t.step(name, async () => {
        core.tampered.clear();
        tamper();
        await assert.rejects(() => watchOnce(ctx, "doge", "by-hand", 60_000), refused(method, field, problem));
        assert.deepEqual((await kv.get<Cursor>(cursorKey("doge"))).value, cursor, "the cursor did not move");
      });
    }
    await t.step("a block whose bytes are another block's, or cut short: refused naming the block", async () => {
      core.tampered.clear();
      onBlock(3, () => bytesToHex(core.chain.blockBytes(4)));
      await assert.rejects(() => watchOnce(ctx, "doge", "by-hand", 60_000), /block 3 \(.*\): the node's bytes hash to/);
      onBlock(3, (hex) => hex.slice(0, -20));
      await assert.rejects(
        () => watchOnce(ctx, "doge", "by-hand", 60_000),
        /block 3 \(.*\): (ends after|no transaction)/,
      );
      assert.deepEqual((await kv.get<Cursor>(cursorKey("doge"))).value, cursor, "the cursor did not move");
    });
    await t.step("served well again: the watcher goes on", async () => {
      core.tampered.clear();
      const r = await watchOnce(ctx, "doge", "by-hand", 60_000);
      assert.equal(r.scannedTo, 4);
      const stored = (await kv.get<Cursor>(cursorKey("doge"))).value!;
      assert.equal(scannedThrough(stored), 4);
    });
  } finally {
    await server.close();
    await core.close();
  }
});
