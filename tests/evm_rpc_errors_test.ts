/**
 * How the EVM adapter classifies RPC failures, against a local HTTP server that answers JSON-RPC the way providers
 * fail (HTTP 5xx and 429, JSON-RPC rate limits, reverts, unknown methods, slow answers, oversized log queries).
 * No real node is involved here; tests/evm_adapter_test.ts runs the adapter on anvil.
 */
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { redactUrls } from "../chains/shared/redact.ts";
import { type Answer, MOCK_RPC_SECRETS, mockNode, readerOn } from "./support/mock_rpc.ts";

const header = (n: number) => ({
  number: `0x${n.toString(16)}`,
  hash: `0x${n.toString(16).padStart(64, "0")}`,
  parentHash: `0x${(n - 1).toString(16).padStart(64, "0")}`,
});

Deno.test("EVM RPC failures: which are transient (local JSON-RPC mock server, not a real node)", async (t) => {
  const cases: { name: string; answer: Answer; transient: boolean }[] = [
    { name: "HTTP 503", answer: { status: 503, error: { code: -32000, message: "upstream down" } }, transient: true },
    { name: "HTTP 502 with no JSON-RPC error", answer: { status: 502, result: null }, transient: true },
    { name: "HTTP 429", answer: { status: 429, error: { code: 429, message: "Too Many Requests" } }, transient: true },
    {
      name: "JSON-RPC -32005 limit exceeded",
      answer: { error: { code: -32005, message: "limit exceeded" } },
      transient: true,
    },
    {
      name: "JSON-RPC -32000 header not found",
      answer: { error: { code: -32000, message: "header not found" } },
      transient: true,
    },
    {
      name: "JSON-RPC execution reverted",
      answer: { error: { code: 3, message: "execution reverted" } },
      transient: false,
    },
    {
      name: "JSON-RPC method not found",
      answer: { error: { code: -32601, message: "method not found" } },
      transient: false,
    },
    {
      name: "JSON-RPC invalid params",
      answer: { error: { code: -32602, message: "invalid argument" } },
      transient: false,
    },
    { name: "no answer within the timeout", answer: { delayMs: 400, result: header(1) }, transient: true },
  ];
  for (const c of cases) {
    await t.step(`${c.name}: ${c.transient ? "TransientChainError" : "a plain error"}`, async () => {
      const node = mockNode(() => c.answer);
      try {
        const err = await readerOn(node.url, 200).blockHash(1).then(() => null, (e) => e);
        assert.ok(err instanceof Error, "the call fails");
        assert.equal(err instanceof TransientChainError, c.transient, String(err));
        if (err instanceof TransientChainError) {
          for (const secret of MOCK_RPC_SECRETS) {
            assert.ok(!err.message.includes(secret), "no provider key in messages");
          }
        }
      } finally {
        await node.close();
      }
    });
  }

  await t.step("a log query the provider finds too large is split until it fits", async () => {
    let biggest = 0;
    const node = mockNode((method, params) => {
      if (method === "eth_getBlockByNumber") {
        return { result: header(params[0] === "latest" ? 1_000 : Number(params[0])) };
      }
      const { fromBlock, toBlock } = params[0] as { fromBlock: string; toBlock: string };
      const span = Number(toBlock) - Number(fromBlock) + 1;
      if (span > 100) return { error: { code: -32005, message: "query returned more than 10000 results" } };
      biggest = Math.max(biggest, span);
      return { result: [] };
    });
    try {
      const blocks = await readerOn(node.url, 2_000, 1_000).scan(1, 1_000);
      // No log anywhere: only the range's end and the checkpoint headers below it (64, 32, ..., 1 blocks down).
      assert.deepEqual(blocks.map((b) => b.number), [936, 968, 984, 992, 996, 998, 999, 1_000]);
      assert.ok(biggest <= 100 && biggest > 50, `largest accepted span ${biggest}`);
    } finally {
      await node.close();
    }
  });

  await t.step(
    "a log query that times out is asked once smaller; a second timeout in a row is the node's",
    async () => {
      const spans: number[] = [];
      let slowAbove = 100; // spans above this never answer in time
      const node = mockNode((method, params) => {
        if (method === "eth_getBlockByNumber") {
          return { result: header(params[0] === "latest" ? 1_000 : Number(params[0])) };
        }
        const { fromBlock, toBlock } = params[0] as { fromBlock: string; toBlock: string };
        const span = Number(toBlock) - Number(fromBlock) + 1;
        spans.push(span);
        return span > slowAbove ? { delayMs: 400, result: [] } : { result: [] };
      });
      try {
        // A span too heavy to answer in time: 1,000 blocks time out, 500 answer.
        slowAbove = 500;
        const blocks = await readerOn(node.url, 200, 1_000).scan(1, 1_000);
        assert.equal(blocks.at(-1)?.number, 1_000);
        assert.deepEqual(spans.slice(0, 2), [1_000, 500]);
        // A node that hangs whatever the span: two timeouts, then the scan fails, not ten halvings of timeouts.
        spans.length = 0;
        slowAbove = 0;
        const err = await readerOn(node.url, 200, 1_000).scan(1, 1_000).then(() => null, (e) => e);
        assert.ok(err instanceof TransientChainError, String(err));
        assert.deepEqual(spans, [1_000, 500]);
      } finally {
        await node.close();
      }
    },
  );

  await t.step("URLs in messages keep their origin only", () => {
    assert.equal(
      redactUrls("error sending request for url (https://base.example.org/v2/KEY?x=1): refused"),
      "error sending request for url (https://base.example.org): refused",
    );
  });
});
