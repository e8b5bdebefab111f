/**
 * RPC URLs carry provider API keys in their path and query, and viem quotes the URL in its errors (ISSUE item 8):
 * no logged error may contain them. The nodes here are local JSON-RPC servers (tests/support/mock_rpc.ts), not real
 * nodes: they answer `eth_chainId` correctly and fail everything else, either with HTTP 500 (transient) or with a
 * JSON-RPC error that is not transient (a pruned node's "missing trie node"), which reaches the log as viem raised it.
 */
import { newPrivateKeyPem } from "../config/secrets.ts";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { chainPlan } from "../config/chain_mode.ts";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { pipelineContext } from "../app.ts";
import { PipelineRuntime } from "../actors/runtime.ts";
import type { Chains } from "../chains/adapter.ts";
import { EVM, type EvmChain } from "../chains/catalog.ts";
import { formatError } from "../chains/shared/redact.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { loadConfig } from "../config/env.ts";
import { onError } from "../routes/errors.ts";
import { runTask, tryStartService } from "./support/cli.ts";
import { type Answer, MOCK_RPC_SECRETS, mockNode, readerOn } from "./support/mock_rpc.ts";
import { BaseError } from "viem";
import { evmClient, isTransientRpcError } from "../chains/evm/client.ts";
import { solRpc } from "../chains/sol/rpc.ts";
import { suiGraphql } from "../chains/sui/client.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { xrplRpc } from "../chains/xrp/rpc.ts";

const MINTER_KEY = "0x" + "ab".repeat(32);
const UASSETS_ENV = "uSOL=0x0000000000000000000000000000000000000001,uXRP=0x0000000000000000000000000000000000000002," +
  "uSUI=0x0000000000000000000000000000000000000003,uDOGE=0x0000000000000000000000000000000000000004," +
  "uZEC=0x0000000000000000000000000000000000000005";

const HTTP_500: Answer = { status: 500, error: { code: -32603, message: "internal error" } };
const MISSING_TRIE_NODE: Answer = { error: { code: -32000, message: "missing trie node" } };

/** A node of `chain` that knows its chain id and fails everything else with `failure`. */
function failingNode(chain: EvmChain, failure: Answer) {
  const chainId = `0x${EVM[chain].chainId.toString(16)}`;
  return mockNode((method) => (method === "eth_chainId" ? { result: chainId } : failure));
}

function assertNoSecrets(output: string) {
  for (const secret of MOCK_RPC_SECRETS) assert.ok(!output.includes(secret), `${secret} leaked:\n${output}`);
}

/** Replaces console output for the duration of `run`, returning everything printed. */
async function capturingConsole(run: (printed: () => string) => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const saved = { log: console.log, error: console.error, warn: console.warn };
  const capture = (...args: unknown[]) => void lines.push(args.map((a) => Deno.inspect(a)).join(" "));
  Object.assign(console, { log: capture, error: capture, warn: capture });
  try {
    await run(() => lines.join("\n"));
  } finally {
    Object.assign(console, saved);
  }
  return lines.join("\n");
}

async function waitUntil(what: string, done: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("pipeline log: watcher failures on live EVM RPC never print the URL's key (local JSON-RPC nodes)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "redaction-" });
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  const transient = failingNode("base", HTTP_500);
  const permanent = failingNode("arbitrum", MISSING_TRIE_NODE);
  try {
    const sim = simChains(kv);
    const readers = {
      base: readerOn(transient.url, 2_000, 1_000, "base"),
      arbitrum: readerOn(permanent.url, 2_000, 1_000, "arbitrum"),
    } as Record<string, ReturnType<typeof readerOn>>;
    const chains: Chains = { reader: (c) => readers[c] ?? sim.reader(c), minter: sim.minter, payer: sim.payer };
    const config = loadConfig({ KV_PATH: `${dir}/kv.sqlite3` });
    // The service's own pipeline context, log included.
    const ctx = pipelineContext(
      config,
      kv,
      "0x00000000000000000000000000000000000000aa",
      { chains, simulated: [] },
      chainPlan("sim", config.evm),
    );
    const output = await capturingConsole(async (printed) => {
      const runtime = new PipelineRuntime(ctx, { id: "t", sweepMs: 50, watchMs: 20, concurrency: 1, useQueue: false });
      runtime.start();
      try {
        await waitUntil(
          "both watchers to log a failed tick",
          () => /watch base: tick failed/.test(printed()) && /watch arbitrum: tick failed/.test(printed()),
        );
      } finally {
        await runtime.stop();
      }
    });
    assertNoSecrets(output);
    assert.ok(output.includes(permanent.origin), `the failing node is still named by its origin:\n${output}`);
    assert.match(output, /missing trie node/);
  } finally {
    kv.close();
    await transient.close();
    await permanent.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("formatError and onError: message, causes and stack, redacted (local JSON-RPC node)", async () => {
  const node = failingNode("base", MISSING_TRIE_NODE);
  try {
    const viemError = await readerOn(node.url).tip().then(() => null, (e) => e);
    assert.ok(viemError instanceof Error);
    // The client lets out a redacted copy; viem's original, which quotes the URL, is among its causes.
    const quoting = (e: unknown) => e instanceof Error && e.message.includes(MOCK_RPC_SECRETS[0]);
    assert.ok(viemError instanceof BaseError && viemError.walk(quoting), "viem quotes the URL: this test can fail");
    const wrapped = new Error("scan failed", { cause: viemError });
    const text = formatError(wrapped);
    assertNoSecrets(text);
    assert.match(text, /^Error: scan failed\n\s+at /);
    assert.match(text, /\ncaused by .*missing trie node/s);
    assert.ok(text.includes(`URL: ${node.origin}`), text);

    let status = 0;
    const output = await capturingConsole(async () => {
      const app = new Hono();
      app.onError(onError());
      app.get("/boom", () => {
        throw wrapped;
      });
      status = (await app.request("/boom")).status;
    });
    assertNoSecrets(output);
    assert.equal(status, 500);
    assert.match(output, /unhandled error on GET \/boom/);
  } finally {
    await node.close();
  }
});

Deno.test("a refused start and a failed admin command print no URL key (child processes, local JSON-RPC node)", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "redaction-" });
  // A node that answers nothing, not even its chain id, with a non-transient error: the raw viem error is thrown.
  const node = mockNode(() => MISSING_TRIE_NODE);
  try {
    const keyFile = `${dir}/minter.key`;
    await Deno.writeTextFile(keyFile, MINTER_KEY, { mode: 0o600 });

    await t.step("main.ts refusing to start over an RPC failure", async () => {
      // Live mode, so that the start reaches the node (sim mode refuses RPC URLs before any call).
      const jwtFile = `${dir}/jwt.pem`;
      const mnemonicFile = `${dir}/mnemonic.txt`;
      await Deno.writeTextFile(jwtFile, await newPrivateKeyPem(), { mode: 0o600 });
      await Deno.writeTextFile(mnemonicFile, generateMnemonic(wordlist), { mode: 0o600 });
      const res = await tryStartService({
        KV_PATH: `${dir}/kv.sqlite3`,
        PIPELINE: "on",
        CHAIN_MODE: "live",
        JWT_PRIVATE_KEY_FILE: jwtFile,
        MASTER_MNEMONIC_FILE: mnemonicFile,
        BASE_RPC_URLS: node.url,
        BASE_UASSETS: UASSETS_ENV,
        EVM_MINTER_KEY_FILE: keyFile,
      });
      assertNoSecrets(res.output);
      assert.equal(res.started, false, res.output);
      assert.equal(res.code, 1);
      assert.match(res.output, /refusing to start: /);
      assert.match(res.output, /missing trie node/, "the refusal came from the node's answer");
    });

    await t.step("admin evm deploy failing on the RPC", async () => {
      const adminKeyFile = `${dir}/admin.key`;
      await Deno.writeTextFile(adminKeyFile, "0x" + "cd".repeat(32), { mode: 0o600 });
      const res = await runTask("admin", {
        KV_PATH: `${dir}/kv.sqlite3`,
        EVM_MINTER_KEY_FILE: keyFile,
        EVM_ADMIN_KEY_FILE: adminKeyFile,
      }, [
        "evm",
        "deploy",
        "--chain",
        "base",
        "--supply-cap",
        "1000",
        "--minter-allowance",
        "10",
        "--rpc-url",
        node.url,
      ]);
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assertNoSecrets(res.stdout + res.stderr);
      assert.match(res.stdout + res.stderr, /missing trie node/, "the failure came from the node's answer");
    });
  } finally {
    await node.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * One call of each chain family's RPC client over `url`: what its reader and payer send first. The EVM client is
 * viem's over our transports (chains/evm/client.ts); the native ones share chains/shared/http_failover.ts.
 */
const CLIENTS: Record<string, { call: (url: string) => Promise<unknown>; refusal: unknown }> = {
  // A provider refusing its key as JSON-RPC 2.0 does: an error object with a code outside the spec's range.
  evm: {
    call: (url) => evmClient({ chain: "base", urls: [url], timeoutMs: 2_000 }).getBlockNumber({ cacheTime: 0 }),
    refusal: { jsonrpc: "2.0", id: 1, error: { code: -32099, message: "invalid api key" } },
  },
  sol: {
    call: (url) => solRpc({ urls: [url], timeoutMs: 2_000 }).call("getSlot"),
    refusal: { jsonrpc: "2.0", id: 1, error: { code: -32099, message: "invalid api key" } },
  },
  // Dogecoin Core 1.14 (src/httprpc.cpp JSONErrorReply): a JSON-RPC 1.0 error with HTTP 500.
  doge: {
    call: (url) => utxoRpc({ chain: "doge", urls: [url], timeoutMs: 2_000 }).call("getblockcount"),
    refusal: { result: null, error: { code: -32099, message: "invalid api key" }, id: 1 },
  },
  // rippled 2.x: an error answer is `result.status` "error" with the code's token and message (ErrorCodes.cpp,
  // rpcFORBIDDEN "forbidden", "Bad credentials.").
  xrp: {
    call: (url) => xrplRpc({ urls: [url], timeoutMs: 2_000 }).call("ledger_current"),
    refusal: { result: { status: "error", error: "forbidden", error_message: "Bad credentials." } },
  },
  // A GraphQL server refusing the request: `errors` and no `data` (a request error, as the GraphQL spec names it).
  sui: {
    call: (url) => suiGraphql({ urls: [url], timeoutMs: 2_000 }).request("query Tip { checkpoint { sequenceNumber } }"),
    refusal: { errors: [{ message: "invalid api key" }] },
  },
};

/**
 * A local server standing in for a provider at a keyed URL: answers `body` with `status` to every request, with the
 * request's `id` where the answer has one (JSON-RPC echoes it).
 */
function keyedServer(status: number, body: unknown) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const sent = await req.json().catch(() => null);
    const answer = body && typeof body === "object" && "id" in body ? { ...body, id: sent?.id ?? null } : body;
    return Response.json(answer, { status });
  });
  const [pathKey, queryKey] = MOCK_RPC_SECRETS;
  return {
    url: `http://127.0.0.1:${server.addr.port}/v2/${pathKey}?apikey=${queryKey}`,
    close: () => server.shutdown(),
  };
}

Deno.test("RPC clients of every chain family: a failure leaves them without the URL's key, the original kept as cause (local servers standing in for providers)", async (t) => {
  // A port nothing listens on: the connection is refused.
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = (closed.addr as Deno.NetAddr).port;
  closed.close();
  for (const [family, client] of Object.entries(CLIENTS)) {
    const cases: [string, () => { url: string; close: () => Promise<void> }][] = [
      ["the node refuses the key", () => keyedServer(family === "doge" ? 500 : 200, client.refusal)],
      ["a gateway answers 401", () => keyedServer(401, { error: "invalid api key" })],
      ["nothing listens", () => ({
        url: `http://127.0.0.1:${closedPort}/v2/${MOCK_RPC_SECRETS[0]}?apikey=${MOCK_RPC_SECRETS[1]}`,
        close: () => Promise.resolve(),
      })],
    ];
    for (const [what, start] of cases) {
      await t.step(`${family}: ${what}`, async () => {
        const node = start();
        try {
          const err = await client.call(node.url).then(() => null, (e) => e);
          assert.ok(err instanceof Error, `${family} failed`);
          // Whatever a caller may keep of it: the message, its string, its own fields serialized.
          assertNoSecrets(`${err.message}\n${String(err)}\n${JSON.stringify(err)}\n${err.stack}\n${formatError(err)}`);
          if (family === "evm") {
            // viem's own error, URL and all, is still there for code that walks the causes.
            assert.ok(err instanceof BaseError);
            const original = err.walk((e) => e instanceof Error && e.message.includes(MOCK_RPC_SECRETS[0]));
            assert.ok(original, "the original error is kept as a cause");
            assert.equal(isTransientRpcError(err), isTransientRpcError(original), "read as transient as before");
          }
        } finally {
          await node.close();
        }
      });
    }
  }
});
