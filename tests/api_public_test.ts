/** Public endpoints and the envelope: config (spec 4.8, 4.9, 8), 404, 500, health. */
import assert from "node:assert/strict";
import { call, startTestServer } from "./support/server.ts";

// Straight from the spec: section 2.6 decimals, 2.6 chain ids, 8 minimum burn amounts.
const NATIVE_DECIMALS: Record<string, number> = { SOL: 9, XRP: 6, SUI: 9, DOGE: 8, ZEC: 8 };
const CHAIN_IDS: Record<string, number> = { base: 8453, arbitrum: 42161, katana: 747474, world: 480, unichain: 130 };
const MIN_BURN: Record<string, string> = {
  uSOL: "1000000000000000000",
  uXRP: "25000000000000000000",
  uSUI: "1000000000000000000",
  uDOGE: "100000000000000000",
  uZEC: "100000000000000000",
};
const NATIVE_SYMBOLS = ["sol", "xrp", "sui", "doge", "zec"];
const UASSETS = ["uSOL", "uXRP", "uSUI", "uDOGE", "uZEC"];

type Token = { name: string; symbol: string; decimals: number; minimumBurnAmount?: string };
type Chain = { name: string; symbol: string; type: string; chainId?: number; vm?: string; tokens: Token[] };

function checkNativeChains(chains: Chain[]) {
  assert.deepEqual(chains.map((c) => c.symbol), NATIVE_SYMBOLS);
  for (const c of chains) {
    assert.equal(c.type, "main");
    assert.equal(c.chainId, undefined);
    assert.equal(c.vm, undefined);
    assert.equal(c.tokens.length, 1);
    assert.equal(c.tokens[0].symbol, c.symbol.toUpperCase());
    assert.equal(c.tokens[0].decimals, NATIVE_DECIMALS[c.tokens[0].symbol]);
    assert.ok(c.name.length > 0);
  }
}

function checkEvmChains(chains: Chain[]) {
  assert.deepEqual(chains.map((c) => c.symbol), Object.keys(CHAIN_IDS));
  for (const c of chains) {
    assert.equal(c.type, "main");
    assert.equal(c.vm, "EVM");
    assert.equal(c.chainId, CHAIN_IDS[c.symbol]);
    assert.deepEqual(c.tokens.map((t) => t.symbol), UASSETS);
    assert.ok(c.tokens.every((t) => t.decimals === 18 && t.minimumBurnAmount === undefined && t.name.length > 0));
  }
}

Deno.test("public endpoints and the envelope", async (t) => {
  const server = await startTestServer();
  try {
    await t.step("GET /config/mint", async () => {
      const res = await call(server, "GET", "/config/mint");
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      assert.deepEqual(Object.keys(res.body.data), ["sourceChains", "destinationChains", "supportedTokens"]);
      checkNativeChains(res.body.data.sourceChains);
      checkEvmChains(res.body.data.destinationChains);
      assert.deepEqual(
        res.body.data.supportedTokens.map((t: Token) => [t.symbol, t.decimals, Object.keys(t).sort()]),
        Object.entries(NATIVE_DECIMALS).map(([s, d]) => [s, d, ["decimals", "name", "symbol"]]),
      );
    });
    await t.step("GET /config/burn", async () => {
      const res = await call(server, "GET", "/config/burn");
      assert.equal(res.status, 200);
      checkEvmChains(res.body.data.sourceChains);
      checkNativeChains(res.body.data.destinationChains);
      assert.deepEqual(
        res.body.data.supportedTokens.map((t: Token) => [t.symbol, t.decimals, t.minimumBurnAmount]),
        UASSETS.map((s) => [s, 18, MIN_BURN[s]]),
      );
    });
    await t.step("unknown routes answer a 404 envelope", async () => {
      for (const [method, path] of [["GET", "/nope"], ["POST", "/config/mint"], ["DELETE", "/auth/token"]]) {
        const res = await call(server, method, path);
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual(res.body, { success: false, message: "Not found" });
      }
    });
    await t.step("healthz", async () => {
      const res = await call(server, "GET", "/healthz");
      assert.deepEqual(res.body, { success: true, data: { status: "ok", chainMode: "sim" } });
    });
  } finally {
    await server.close();
  }
});

Deno.test("an unexpected error is a 500 envelope without internals", async () => {
  const server = await startTestServer();
  try {
    // Closing the KV under the running server makes its next read throw an error no handler expects.
    server.services.kv.close();
    const res = await call(server, "GET", "/healthz");
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { success: false, message: "Internal server error" });
  } finally {
    await server.close().catch(() => {});
  }
});
