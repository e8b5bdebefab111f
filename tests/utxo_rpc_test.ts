/**
 * The UTXO JSON-RPC client (chains/utxo/rpc.ts) against litecoind regtest (Bitcoin Core family, standing in for
 * Dogecoin Core) and against local Deno.serve servers standing in for bad nodes (down, wrong answers, rate limits):
 * failover, credentials, batches, exact decimal numbers, URLs redacted in errors.
 */
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { RpcError, utxoRpc } from "../chains/utxo/rpc.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { DOGE_REGTEST, dogeOnLitecoind } from "./support/doge_regtest.ts";

const RUN = litecoindAvailable("tests/utxo_rpc_test.ts");
const NAME = "on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core)";

/** A port nothing listens on. */
function deadUrl(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://user:dead-secret@127.0.0.1:${port}/`;
}

/** A local server answering every request with `respond`; closed after `fn`. */
async function withServer(
  respond: (body: unknown) => Response,
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    return respond(await req.json());
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/`);
  } finally {
    await server.shutdown();
  }
}

Deno.test({ name: `UTXO RPC client ${NAME}`, ignore: !RUN }, async (t) => {
  const node = await startLitecoind();
  try {
    await t.step("fails over from a dead URL to the node, and says which URLs it tried", async () => {
      const seen: string[] = [];
      const dead = deadUrl();
      const rpc = utxoRpc({ chain: "doge", urls: [dead, node.url], onRpc: (i) => seen.push(i.url) });
      assert.equal(await rpc.call<number>("getblockcount"), 101);
      assert.equal(seen.length, 2);
      assert.equal(seen[0], new URL(dead).origin);
      assert.ok(seen.every((u) => !u.includes("secret") && !u.includes(new URL(node.url).password)));
    });

    await t.step("a wrong password is a transient failure that names the credentials, never the password", async () => {
      const wrong = new URL(node.url);
      wrong.password = "not-the-password";
      const rpc = utxoRpc({ chain: "doge", urls: [wrong.toString()] });
      const err = await rpc.call("getblockcount").then(() => null, (e) => e);
      assert.ok(err instanceof TransientChainError, String(err));
      assert.match(err.message, /wrong RPC credentials/);
      assert.ok(!err.message.includes("not-the-password"));
    });

    await t.step("a node's own error is an RpcError with its code, never failed over to the next URL", async () => {
      const seen: string[] = [];
      const rpc = utxoRpc({ chain: "doge", urls: [node.url, deadUrl()], onRpc: (i) => seen.push(i.url) });
      const err = await rpc.call("getblockhash", [10_000]).then(() => null, (e) => e);
      assert.ok(err instanceof RpcError);
      assert.equal(err.code, -8);
      assert.equal(seen.length, 1);
    });

    await t.step("a batch answers each call in order, errors in place, in one HTTP request", async () => {
      const rpc = utxoRpc({ chain: "doge", urls: [node.url] });
      const [zero, missing, count] = await rpc.batch<unknown>([
        { method: "getblockhash", params: [0] },
        { method: "getblockhash", params: [10_000] },
        { method: "getblockcount" },
      ]);
      assert.equal(zero, await rpc.call("getblockhash", [0]));
      assert.ok(missing instanceof RpcError && missing.code === -8);
      assert.equal(count, 101);
      assert.deepEqual(await rpc.batch([]), []);
    });

    await t.step("amounts arrive as their exact decimal text, never as floats", async () => {
      const doge = dogeOnLitecoind(node);
      const txid = await node.send(doge.address(0), 10_000_000_1n); // 1.00000001
      const tx = await doge.rpc.call<{ vout: { value: unknown; scriptPubKey: { addresses?: string[] } }[] }>(
        "getrawtransaction",
        [txid, true],
      );
      const ours = tx.vout.find((v) => v.scriptPubKey.addresses?.[0] === doge.address(0))!;
      assert.equal(ours.value, "1.00000001");
      assert.equal(DOGE_REGTEST.name, "regtest");
    });
  } finally {
    await node.stop();
  }
});

Deno.test("UTXO RPC client on local servers standing in for bad nodes: failover on 5xx pages and 429, exact numbers, redaction", async () => {
  await withServer(
    (body) =>
      Response.json({
        result: { a: 0.1, b: 1e-8, c: 21000000000000000000, d: 7 },
        error: null,
        id: (body as { id: number }).id,
      }),
    async (good) => {
      await withServer(() => new Response("<html>bad gateway</html>", { status: 502 }), async (proxy) => {
        await withServer(() => new Response("slow down", { status: 429 }), async (limited) => {
          const seen: string[] = [];
          const rpc = utxoRpc({ chain: "doge", urls: [proxy, limited, good], onRpc: (i) => seen.push(i.url) });
          const r = await rpc.call<Record<string, unknown>>("anything");
          assert.deepEqual(r, { a: "0.1", b: "1e-8", c: "21000000000000000000", d: 7 });
          assert.equal(seen.length, 3);
        });
      });
    },
  );
  // Every URL failing: a transient error that names the origins and never the credentials.
  const urls = [deadUrl(), deadUrl().replace("dead-secret", "other-secret")];
  const err = await utxoRpc({ chain: "doge", urls, timeoutMs: 2_000 }).call("getblockcount").then(() => null, (e) => e);
  assert.ok(err instanceof TransientChainError);
  assert.ok(!/secret/.test(err.message), err.message);
  for (const u of urls) assert.ok(err.message.includes(new URL(u).origin), err.message);
  // A bad URL in the configuration is refused at start, redacted.
  assert.throws(
    () => utxoRpc({ chain: "doge", urls: ["ftp://u:pw-secret@host/"] }),
    (e: Error) => !e.message.includes("pw-secret"),
  );
  assert.throws(() => utxoRpc({ chain: "doge", urls: [] }), /no RPC URL/);
});
