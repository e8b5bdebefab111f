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
    const onBlock = (height: number, edit: (block: Json) => void) =>
      core.tampered.set("getblock", (block) => {
        if ((block as Json).height === height) edit(block as Json);
        return block;
      });

    const malformed: [string, () => void, string, string, RegExp][] = [
      ["a block without its txids", () => onBlock(3, (b) => delete b.tx), "getblock", "tx", /is missing/],
      [
        "a txid that is not a hash",
        () => onBlock(3, (b) => b.tx = ["not a txid"]),
        "getblock",
        "tx[0]",
        /is not a 256-bit hash/,
      ],
      [
        "confirmations as a fraction",
        () => onBlock(4, (b) => b.confirmations = 1.5),
        "getblock",
        "confirmations",
        /is not a whole number of confirmations/,
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
