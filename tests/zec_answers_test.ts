/**
 * Malformed Zebra answers are named refusals (chains/utxo/answers.ts), on the Zebra-shaped RPC server
 * (tests/support/zebra_rpc_server.ts; no Zebra runs on this machine kind) that serves one on demand: the error names
 * the method and the field, and nothing moves: the watcher's cursor stays and no order is recorded. Served well again,
 * the same deposit is seen once.
 */
import assert from "node:assert/strict";
import type { ChainSymbol } from "../chains/catalog.ts";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { utxoReader } from "../chains/utxo/reader.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { zebraNode } from "../chains/utxo/zebra.ts";
import { type PipelineContext } from "../actors/context.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { depositAddress, FAST_PIPELINE, partner } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

/** Asserts `err` is the named refusal of `method` at a field matching `field`. */
function refused(method: string, field: string | RegExp, problem: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof MalformedAnswerError, `a MalformedAnswerError, not ${err}`);
    assert.equal(err.method, method);
    if (typeof field === "string") assert.equal(err.field, field);
    else assert.match(err.field, field);
    assert.match(err.problem, problem);
    assert.ok(err.message.startsWith(`zec ${method}: ${err.field} `), err.message);
    return true;
  };
}

type Json = Record<string, unknown>;

Deno.test("zec watcher on a Zebra-shaped RPC server: a malformed block is refused by name; the cursor stays, nothing is recorded, and the deposit is seen once when served well", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop(); // the zec watcher below runs by hand
  const running = server.services.pipeline!;
  const network = utxoNetwork("zec", running.settings.utxoNetwork("zec"));
  const zebra = ZebraShapedServer.start({ network, initialBlocks: 3 });
  try {
    const kv = server.services.kv;
    const node = zebraNode(utxoRpc({ chain: "zec", urls: [zebra.url] }), network);
    const reader = utxoReader(node, { chain: "zec", confirmations: 1 });
    const ctx: PipelineContext = {
      ...running,
      chains: { ...running.chains, reader: (c: ChainSymbol) => c === "zec" ? reader : running.chains.reader(c) },
    };
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "zec", "base");
    const start = await reader.tip();
    const cursor = { number: start.number, hash: start.hash } satisfies Cursor;
    await kv.set(cursorKey("zec"), cursor);
    const deposit = zebra.deposit(address, 150_000_000n);
    zebra.mine(1);
    const orders = async () => (await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;

    /** Serves `edit` of the deposit's transaction in getblock answers. */
    const tamperDeposit = (edit: (tx: Json) => void) =>
      zebra.tampered.set("getblock", (block) => {
        for (const tx of (block as { tx: Json[] }).tx) if (tx.txid === deposit.txid) edit(tx);
        return block;
      });
    const ourOutput = (tx: Json) => (tx.vout as Json[])[deposit.index];
    const outputField = new RegExp(`^tx\\[\\d+\\]\\.vout\\[${deposit.index}\\]`);

    const malformed: [string, (tx: Json) => void, string | RegExp, RegExp][] = [
      [
        "a valueZat as a decimal string",
        (tx) => ourOutput(tx).valueZat = "150000000",
        new RegExp(outputField.source + /\.valueZat$/.source),
        /is not a whole number of zatoshis \("150000000"\)/,
      ],
      [
        "a valueZat with a fraction",
        (tx) => ourOutput(tx).valueZat = 150000000.5,
        new RegExp(outputField.source + /\.valueZat$/.source),
        /is not a whole number of zatoshis/,
      ],
      [
        "an output without its script",
        (tx) => delete ourOutput(tx).scriptPubKey,
        new RegExp(outputField.source + /\.scriptPubKey$/.source),
        /is missing/,
      ],
      [
        "an input without its outpoint",
        (tx) => delete (tx.vin as Json[])[0].txid,
        /^tx\[\d+\]\.vin\[0\]\.txid$/,
        /is missing/,
      ],
      ["a transaction without its txid", (tx) => delete tx.txid, /^tx\[\d+\]\.txid$/, /is missing/],
    ];
    for (const [name, edit, field, problem] of malformed) {
      await t.step(name, async () => {
        tamperDeposit(edit);
        await assert.rejects(() => watchOnce(ctx, "zec", "by-hand", 60_000), refused("getblock", field, problem));
        assert.deepEqual((await kv.get<Cursor>(cursorKey("zec"))).value, cursor, "the cursor did not move");
        assert.deepEqual(await orders(), [], "nothing recorded");
      });
    }
    await t.step("getblockchaininfo without a tip", async () => {
      zebra.tampered.delete("getblock");
      zebra.tampered.set("getblockchaininfo", (info) => ({ ...(info as Json), blocks: "tip" }));
      await assert.rejects(
        () => watchOnce(ctx, "zec", "by-hand", 60_000),
        refused("getblockchaininfo", "blocks", /is not a whole number \("tip"\)/),
      );
      assert.deepEqual((await kv.get<Cursor>(cursorKey("zec"))).value, cursor);
      zebra.tampered.delete("getblockchaininfo");
    });
    await t.step("getrawtransaction: a negative output", async () => {
      zebra.tampered.set("getrawtransaction", (tx) => {
        ((tx as Json).vout as Json[])[deposit.index].valueZat = -1;
        return tx;
      });
      await assert.rejects(
        () => reader.transfersOf(deposit.txid),
        refused("getrawtransaction", `vout[${deposit.index}].valueZat`, /zatoshis \(-1\)/),
      );
      zebra.tampered.delete("getrawtransaction");
    });
    await t.step("served well again: recorded once", async () => {
      await watchOnce(ctx, "zec", "by-hand", 60_000);
      assert.deepEqual((await orders()).map((o) => [o.type, o.amount]), [["mint", "150000000"]]);
      await watchOnce(ctx, "zec", "by-hand", 60_000);
      assert.equal((await orders()).length, 1);
    });
  } finally {
    await server.close();
    await zebra.close();
  }
});
