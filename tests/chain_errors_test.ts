/**
 * The root of chain errors (chains/errors.ts) and the shared JSON-RPC 2.0 batching (chains/shared/json_rpc.ts), on
 * local HTTP servers (Deno.serve) that answer as a node would, or as a node misbehaving would.
 */
import assert from "node:assert/strict";
import { ChainDisabledError, TransientChainError } from "../chains/adapter.ts";
import { ChainError, isTransient, walk } from "../chains/errors.ts";
import { httpFailover } from "../chains/shared/http_failover.ts";
import { jsonRpc } from "../chains/shared/json_rpc.ts";
import { formatError, redactedError } from "../chains/shared/redact.ts";
import { solReader } from "../chains/sol/reader.ts";
import { MAX_BATCH, solRpc, SolRpcError } from "../chains/sol/rpc.ts";
import { suiGraphql, SuiGraphqlError } from "../chains/sui/client.ts";
import { TransferAddressUnfundedError, UAssetBalanceShortError } from "../chains/uasset_errors.ts";
import { RpcError, utxoRpc } from "../chains/utxo/rpc.ts";
import { UnknownBranchIdError } from "../chains/utxo/zec_tx.ts";
import { xrplRpc, XrplRpcError } from "../chains/xrp/rpc.ts";

interface Entry {
  jsonrpc?: unknown;
  id: number;
  method: string;
  params?: unknown[];
}

/** A local JSON server: `answer` sees each request body and returns the JSON to send back. */
function serveJson(answer: (body: unknown) => unknown) {
  const bodies: unknown[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    bodies.push(body);
    return Response.json(answer(body));
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    bodies,
    close: () => server.shutdown(),
  };
}

/** Answers every entry of a batch with its method's name (or one reply for one request). */
const echo = (e: Entry) => ({ jsonrpc: "2.0", id: e.id, result: e.method });

/** A URL nothing listens on. */
function deadUrl(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}/`;
}

/** The dialect both tests below read with: errors as `RpcError`, lenient about a missing result. */
function client(url: string, maxBatch?: number, requireResult = false) {
  return jsonRpc(httpFailover({ variable: "TEST", urls: [url] }), {
    error: (method, code, message) => new RpcError(method, code, message, "doge"),
    requireResult,
    maxBatch,
  });
}

Deno.test("chain errors: one root that keeps its cause, its chain and whether it is transient", async (t) => {
  await t.step("cause, walk and isTransient", () => {
    const root = new Error("socket hang up");
    const transient = new TransientChainError("doge RPC getblock failed on every URL", { cause: root, chain: "doge" });
    assert.ok(transient instanceof ChainError && transient instanceof Error);
    assert.equal(transient.name, "TransientChainError");
    assert.equal(transient.message, "doge RPC getblock failed on every URL");
    assert.equal(transient.cause, root);
    assert.equal(transient.chain, "doge");
    assert.equal(transient.transient, true);
    assert.equal(transient.walk(), root, "walk with no test ends at the innermost cause");
    assert.equal(walk(transient, (e) => e === root), root);
    assert.equal(walk(transient, () => false), null);
    assert.equal(isTransient(transient), true);
    // A plain error that wraps a transient one is transient; a chain error that wraps one decides for itself.
    assert.equal(isTransient(new Error("step failed", { cause: transient })), true);
    assert.equal(isTransient(new ChainError("gave up", { cause: transient })), false);
    assert.equal(isTransient(new Error("no chain error in here", { cause: root })), false);
    assert.equal(isTransient("a string"), false);
    assert.equal(new ChainError("no cause given").cause, undefined);
    assert.ok(!("cause" in new ChainError("no cause given")), "no cause member at all when none was given");
    // A cause chain that loops ends.
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    assert.equal(walk(a, () => false), null);
    assert.equal(isTransient(a), false);
  });

  await t.step("every chain error class is a ChainError, with its fields and its exact message", () => {
    const cases: [ChainError, string, string, boolean][] = [
      [new ChainDisabledError("zec"), "ChainDisabledError", "chain zec is disabled in this process", false],
      [
        new SolRpcError("getBlock", -32007, "Slot 5 was skipped", { x: 1 }),
        "SolRpcError",
        "sol getBlock: Slot 5 was skipped (code -32007)",
        false,
      ],
      [
        new RpcError("getblockhash", -1, "Provided index is greater than the current tip", "zec"),
        "RpcError",
        "getblockhash: Provided index is greater than the current tip (code -1)",
        false,
      ],
      [
        new XrplRpcError("tx", "txnNotFound", { error_message: "Transaction not found." }),
        "XrplRpcError",
        "xrp RPC tx answered txnNotFound: Transaction not found.",
        false,
      ],
      [
        new SuiGraphqlError("Execute", ["a", "b"]),
        "SuiGraphqlError",
        "sui GraphQL Execute answered errors: a; b",
        false,
      ],
      [
        new UAssetBalanceShortError("base", "uSOL", 1n, 2n),
        "UAssetBalanceShortError",
        "base: the transfer address holds 1 wei of uSOL, less than the 2 wei needed",
        false,
      ],
      [
        new TransferAddressUnfundedError("base", "0xabc", 1n, 2n),
        "TransferAddressUnfundedError",
        "base: the transfer address 0xabc holds 1 wei of the native coin, less than the 2 wei its transaction may cost in gas; fund it",
        false,
      ],
      [new TransientChainError("later"), "TransientChainError", "later", true],
    ];
    for (const [err, name, message, transient] of cases) {
      assert.ok(err instanceof ChainError && err instanceof Error, name);
      assert.equal(err.name, name);
      assert.equal(err.message, message);
      assert.equal(err.transient, transient, name);
      assert.equal(isTransient(err), transient, name);
    }
    assert.equal(cases[0][0].chain, "zec");
    assert.equal(cases[1][0].chain, "sol");
    assert.equal(cases[2][0].chain, "zec");
    assert.equal(cases[3][0].chain, "xrp");
    assert.equal(cases[4][0].chain, "sui");
    assert.equal(cases[5][0].chain, "base");
    const sol = cases[1][0] as SolRpcError;
    assert.deepEqual([sol.method, sol.code, sol.data], ["getBlock", -32007, { x: 1 }]);
    const branch = new UnknownBranchIdError(0x12345678);
    assert.ok(branch instanceof ChainError && branch.chain === "zec" && !branch.transient);
    assert.match(branch.message, /consensus branch id 0x12345678/);
  });

  await t.step("a redacted copy keeps the class, the flag, the chain, and the original as its cause", () => {
    const original = new TransientChainError("sol RPC getSlot failed on https://rpc.example/v2/SECRETKEY", {
      chain: "sol",
    });
    const copy = redactedError(original);
    assert.notEqual(copy, original);
    assert.ok(copy instanceof TransientChainError && copy instanceof ChainError);
    assert.equal(copy.message, "sol RPC getSlot failed on https://rpc.example");
    assert.equal(copy.transient, true);
    assert.equal(copy.chain, "sol");
    assert.equal(copy.cause, original);
    assert.equal(isTransient(copy), true);
    assert.doesNotMatch(formatError(copy), /SECRETKEY/);
  });

  await t.step(
    "the clients raise their own classes: node answers are not transient, transport failures are",
    async () => {
      const server = serveJson((body) => {
        const b = body as Record<string, unknown>;
        if ("query" in b) return { errors: [{ message: "bad argument" }] };
        if (!("jsonrpc" in b)) return { result: { status: "error", error: "actNotFound" } };
        return { jsonrpc: "2.0", id: b.id, error: { code: -32601, message: "Method not found" } };
      });
      try {
        const errors = await Promise.all([
          solRpc({ urls: [server.url] }).call("getSlot").catch((e) => e),
          utxoRpc({ chain: "doge", urls: [server.url] }).call("getblockcount").catch((e) => e),
          xrplRpc({ urls: [server.url] }).call("account_info").catch((e) => e),
          suiGraphql({ urls: [server.url] }).request("query Probe { chainIdentifier }").catch((e) => e),
        ]);
        assert.ok(errors[0] instanceof SolRpcError && errors[0].chain === "sol", String(errors[0]));
        assert.ok(errors[1] instanceof RpcError && errors[1].chain === "doge", String(errors[1]));
        assert.equal(errors[1].message, "getblockcount: Method not found (code -32601)");
        assert.ok(errors[2] instanceof XrplRpcError && errors[2].code === "actNotFound", String(errors[2]));
        assert.ok(errors[3] instanceof SuiGraphqlError, String(errors[3]));
        for (const e of errors) assert.ok(e instanceof ChainError && !isTransient(e), String(e));
      } finally {
        await server.close();
      }
      const down = await solRpc({ urls: [deadUrl()], timeoutMs: 2_000 }).call("getSlot").catch((e) => e);
      assert.ok(down instanceof TransientChainError && isTransient(down), String(down));
    },
  );

  await t.step("rippled saying it is too busy is transient, its answer kept as the cause", async () => {
    const server = serveJson(() => ({
      result: { status: "error", error: "tooBusy", error_message: "The server is too busy" },
    }));
    try {
      const err = await xrplRpc({ urls: [server.url] }).call("ledger").catch((e) => e);
      assert.ok(err instanceof TransientChainError && isTransient(err), String(err));
      assert.equal(err.message, "xrp RPC ledger: the node answered tooBusy");
      assert.ok(err.cause instanceof XrplRpcError && err.cause.code === "tooBusy", String(err.cause));
      assert.equal(err.cause.message, "xrp RPC ledger answered tooBusy: The server is too busy");
    } finally {
      await server.close();
    }
  });

  await t.step("an error made from a node's answer keeps that answer as its cause", async () => {
    // Solana's -32004 "Block not available for slot": not stored by this node yet, so a later try may succeed.
    const server = serveJson((body) => {
      const b = body as Entry;
      return b.method === "getSlot"
        ? { jsonrpc: "2.0", id: b.id, result: 100 }
        : { jsonrpc: "2.0", id: b.id, error: { code: -32004, message: "Block not available for slot 100" } };
    });
    try {
      const err = await solReader(solRpc({ urls: [server.url] }), { confirmations: 0 }).tip().catch((e) => e);
      assert.ok(err instanceof TransientChainError && isTransient(err), String(err));
      assert.equal(err.chain, "sol");
      assert.ok(err.cause instanceof SolRpcError && err.cause.code === -32004, String(err.cause));
      assert.equal(walk(err, (e) => e instanceof SolRpcError), err.cause);
      assert.match(formatError(err), /caused by SolRpcError: sol getBlock: Block not available for slot 100/);
    } finally {
      await server.close();
    }
  });
});

Deno.test("shared JSON-RPC batching on a local server: ids, order, missing replies, one object, split", async (t) => {
  await t.step("replies are matched by id whatever their order; every entry says 2.0; ids never repeat", async () => {
    const server = serveJson((body) => Array.isArray(body) ? body.map(echo).reverse() : echo(body as Entry));
    try {
      const rpc = client(server.url);
      assert.deepEqual(
        await rpc.batch([{ method: "a" }, { method: "b", params: [1] }, { method: "c" }]),
        ["a", "b", "c"],
      );
      assert.equal(await rpc.call("d"), "d");
      await rpc.batch([{ method: "e" }]);
      const entries = server.bodies.flatMap((b) => Array.isArray(b) ? b : [b]) as Entry[];
      assert.deepEqual(entries.map((e) => e.jsonrpc), ["2.0", "2.0", "2.0", "2.0", "2.0"]);
      assert.deepEqual(entries.map((e) => e.id), [1, 2, 3, 4, 5]);
      assert.deepEqual(entries[1].params, [1]);
      assert.deepEqual(entries[0].params, [], "absent params are sent as []");
    } finally {
      await server.close();
    }
  });

  await t.step(
    "each entry is its result or its error, as a value; a call left unanswered is its own error",
    async () => {
      const server = serveJson((body) =>
        (body as Entry[]).flatMap((e): unknown[] =>
          e.method === "lost"
            ? []
            : e.method === "bad"
            ? [{ jsonrpc: "2.0", id: e.id, error: { code: -5, message: "No such transaction", data: "x" } }]
            : [echo(e)]
        )
      );
      try {
        const answers = await client(server.url).batch([{ method: "ok" }, { method: "bad" }, { method: "lost" }]);
        assert.equal(answers[0], "ok");
        assert.ok(answers[1] instanceof RpcError);
        assert.equal(answers[1].code, -5);
        assert.equal(answers[1].message, "bad: No such transaction (code -5)");
        assert.ok(answers[2] instanceof RpcError);
        assert.equal(answers[2].code, -32603);
        assert.equal(answers[2].message, "lost: no reply in the batch (code -32603)");
      } finally {
        await server.close();
      }
    },
  );

  await t.step(
    "a batch answered by one object is thrown: its own error, else 'batch answered by one object'",
    async () => {
      let refuse = true;
      const server = serveJson(() =>
        refuse
          ? { jsonrpc: "2.0", id: null, error: { code: -32600, message: "batches are not served here" } }
          : { jsonrpc: "2.0", id: 1, result: 7 }
      );
      try {
        const rpc = client(server.url);
        const refused = await rpc.batch([{ method: "a" }, { method: "b" }]).catch((e) => e);
        assert.ok(refused instanceof RpcError, String(refused));
        assert.equal(refused.message, "a: batches are not served here (code -32600)");
        refuse = false;
        const odd = await rpc.batch([{ method: "a" }, { method: "b" }]).catch((e) => e);
        assert.ok(odd instanceof RpcError, String(odd));
        assert.equal(odd.message, "a: batch answered by one object (code -32600)");
      } finally {
        await server.close();
      }
    },
  );

  await t.step("a reply with neither result nor error: an error where the dialect requires a result", async () => {
    const server = serveJson((body) => Array.isArray(body) ? body.map((e) => ({ id: e.id })) : { id: 1 });
    try {
      assert.deepEqual(await client(server.url, undefined, false).batch([{ method: "a" }]), [undefined]);
      const [strict] = await client(server.url, undefined, true).batch([{ method: "a" }]);
      assert.ok(strict instanceof RpcError);
      assert.equal(strict.message, "a: JSON-RPC reply without result (code -32603)");
    } finally {
      await server.close();
    }
  });

  await t.step("a batch longer than the maximum is sent as several requests, answered in order", async () => {
    const server = serveJson((body) => (body as Entry[]).map(echo));
    try {
      const methods = ["a", "b", "c", "d", "e"];
      assert.deepEqual(await client(server.url, 2).batch(methods.map((method) => ({ method }))), methods);
      assert.deepEqual(server.bodies.map((b) => (b as Entry[]).length), [2, 2, 1]);
      assert.deepEqual(await client(server.url, 2).batch([]), []);
      assert.equal(server.bodies.length, 3, "an empty batch sends nothing");
      // Solana's client splits at its own maximum.
      server.bodies.length = 0;
      const many = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ method: `m${i}` }));
      assert.deepEqual(await solRpc({ urls: [server.url] }).batch(many), many.map((c) => c.method));
      assert.deepEqual(server.bodies.map((b) => (b as Entry[]).length), [MAX_BATCH, 1]);
      // The Bitcoin-Core family's does not split.
      server.bodies.length = 0;
      await utxoRpc({ chain: "zec", urls: [server.url] }).batch(many);
      assert.deepEqual(server.bodies.map((b) => (b as Entry[]).length), [MAX_BATCH + 1]);
    } finally {
      await server.close();
    }
  });
});
