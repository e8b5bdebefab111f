/** The Idempotency-Key header on every POST (docs/idempotency.md), over real HTTP on the real server and KV. */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { claimIdempotencyKey, IDEMPOTENCY_TTL_MS, IN_FLIGHT_LEASE_MS } from "../kv/idempotency.ts";
import { openKv } from "../kv/open.ts";
import { apiError, onError } from "../routes/errors.ts";
import { documentIdempotency, idempotency } from "../routes/idempotency.ts";
import { authRoutes } from "../routes/auth.ts";
import { API_ERRORS } from "../messages.ts";
import { newApiKey, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";

const MALFORMED = "Idempotency-Key must be 1 to 255 printable ASCII characters";
const REUSED = "This Idempotency-Key was already used with a different request (method, path or body); use a new key";
const IN_FLIGHT = "A request with this Idempotency-Key is still in progress; retry once it has completed";

interface Reply {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
  replayed: string | null;
  contentType: string | null;
}

async function post(
  url: string,
  path: string,
  opts: { key?: string; token?: string; apiKey?: string; body?: unknown } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (opts.key !== undefined) headers["Idempotency-Key"] = opts.key;
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["X-API-Key"] = opts.apiKey;
  const res = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(opts.body ?? {}) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch { /* text */ }
  return {
    status: res.status,
    body,
    text,
    replayed: res.headers.get("Idempotent-Replayed"),
    contentType: res.headers.get("Content-Type"),
  };
}

/** A POST written byte by byte on a TCP socket, for header bytes `fetch` refuses to send. */
async function rawPost(server: TestServer, path: string, token: string, key: Uint8Array, body: string) {
  const { port } = new URL(server.url);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  const enc = new TextEncoder();
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${enc.encode(body).length}\r\nIdempotency-Key: `;
  const parts = [enc.encode(head), key, enc.encode(`\r\n\r\n${body}`)];
  for (const part of parts) await conn.write(part);
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  conn.close();
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

async function listMint(server: TestServer, token: string) {
  const res = await fetch(`${server.url}/mint/wallets`, { headers: { Authorization: `Bearer ${token}` } });
  return (await res.json()).data as unknown[];
}

Deno.test("Idempotency-Key on the service's POST routes", async (t) => {
  const server = await startTestServer();
  try {
    const apiKey = await newApiKey(server, "acme");
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet, apiKey);
    const url = server.url;

    await t.step("same key, same request: the first response again, with Idempotent-Replayed: true", async () => {
      const body = { chain: "sol", destinationChain: "base" };
      const first = await post(url, "/mint/wallets", { key: "mint-1", token, body });
      assert.equal(first.status, 201, first.text);
      assert.equal(first.replayed, null);
      const again = await post(url, "/mint/wallets", { key: "mint-1", token, body });
      assert.equal(again.status, 201);
      assert.equal(again.replayed, "true");
      assert.equal(again.text, first.text, "byte-identical body");
      assert.equal(again.contentType, first.contentType);
      assert.equal((await listMint(server, token)).length, 1, "created once");
    });

    await t.step("another token of the same wallet meets the same key (scope: the wallet)", async () => {
      const refreshed = await tokenFor(server, wallet, await newApiKey(server, "acme"));
      assert.notEqual(refreshed, token);
      const again = await post(url, "/mint/wallets", {
        key: "mint-1",
        token: refreshed,
        body: { chain: "sol", destinationChain: "base" },
      });
      assert.equal(again.status, 201);
      assert.equal(again.replayed, "true");
    });

    await t.step("same key, different body or path: 422", async () => {
      const otherBody = await post(url, "/mint/wallets", {
        key: "mint-1",
        token,
        body: { chain: "xrp", destinationChain: "base" },
      });
      assert.equal(otherBody.status, 422);
      assert.deepEqual(otherBody.body, { success: false, message: REUSED });
      const otherPath = await post(url, "/burn/wallets", {
        key: "mint-1",
        token,
        body: { chain: "sol", destinationChain: "base" },
      });
      assert.equal(otherPath.status, 422);
      assert.deepEqual(otherPath.body, { success: false, message: REUSED });
      assert.equal((await listMint(server, token)).length, 1, "nothing created");
    });

    await t.step("another partner's wallet with the same key gets its own response", async () => {
      const bobToken = await tokenFor(server, randomWallet(), await newApiKey(server, "bob-corp"));
      const bob = await post(url, "/mint/wallets", {
        key: "mint-1",
        token: bobToken,
        body: { chain: "sol", destinationChain: "base" },
      });
      assert.equal(bob.status, 201);
      assert.equal(bob.replayed, null);
      const alice = (await listMint(server, token))[0] as { address: string };
      assert.notEqual(bob.body.data.address, alice.address);
    });

    await t.step("malformed keys: 400, nothing done", async () => {
      const body = { chain: "sui", destinationChain: "base" };
      for (const key of ["", "a".repeat(256), "tab\there"]) {
        const res = await post(url, "/mint/wallets", { key, token, body });
        assert.equal(res.status, 400, JSON.stringify(key));
        assert.deepEqual(res.body, { success: false, message: MALFORMED });
      }
      // A Latin-1 byte, which fetch will not send, written on the socket as a client could (a DEL byte never reaches
      // the app: the HTTP server itself answers an empty 400).
      for (const key of [[0x63, 0x61, 0x66, 0xe9]]) {
        const res = await rawPost(server, "/mint/wallets", token, new Uint8Array(key), JSON.stringify(body));
        assert.match(res, /^HTTP\/1\.1 400 /, JSON.stringify(key));
        assert.ok(res.includes(JSON.stringify({ success: false, message: MALFORMED })), res);
      }
      assert.equal((await listMint(server, token)).length, 1);
      const longest = await post(url, "/mint/wallets", {
        key: "~ !".repeat(85),
        token,
        body: { chain: "sui", destinationChain: "base" },
      });
      assert.equal(longest.status, 201, "255 printable characters, spaces included, are a key");
    });

    await t.step("4xx answers are kept and replayed too; a new key is a new attempt", async () => {
      const body = { destinationChain: "sol", destinationAddress: "not-an-address" };
      const first = await post(url, "/burn/wallets", { key: "burn-bad", token, body });
      assert.equal(first.status, 400);
      const again = await post(url, "/burn/wallets", { key: "burn-bad", token, body });
      assert.equal(again.status, 400);
      assert.equal(again.replayed, "true");
      assert.deepEqual(again.body, first.body);
    });

    await t.step("credentials are checked before the key: a refused request keeps nothing", async () => {
      const body = { chain: "doge", destinationChain: "base" };
      const refused = await post(url, "/mint/wallets", { key: "gate-first", token: "not-a-jwt", body });
      assert.equal(refused.status, 401);
      const ok = await post(url, "/mint/wallets", { key: "gate-first", token, body });
      assert.equal(ok.status, 201);
      assert.equal(ok.replayed, null);
    });

    await t.step("no key: every request runs", async () => {
      const body = { chain: "zec", destinationChain: "base" };
      assert.equal((await post(url, "/mint/wallets", { token, body })).status, 201);
      const dup = await post(url, "/mint/wallets", { token, body });
      assert.equal(dup.status, 400);
      assert.equal(dup.replayed, null);
    });

    await t.step("concurrent requests with one key: one runs, the others get 409 or its response", async () => {
      const body = { chain: "xrp", destinationChain: "arbitrum" };
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => post(url, "/mint/wallets", { key: "race", token, body })),
      );
      const fresh = replies.filter((r) => r.status === 201 && r.replayed === null);
      assert.equal(fresh.length, 1, JSON.stringify(replies.map((r) => [r.status, r.replayed])));
      for (const r of replies) {
        if (r.status === 409) assert.deepEqual(r.body, { success: false, message: IN_FLIGHT });
        else assert.equal(r.text, fresh[0].text);
      }
      const xrp = (await listMint(server, token)).filter((w) => (w as { chain: string }).chain === "xrp");
      assert.equal(xrp.length, 1);
    });

    await t.step("token endpoints: scoped by API key id; the stored JWT is sealed", async () => {
      const w = randomWallet();
      const first = await post(url, "/auth/token", { key: "tok-1", apiKey, body: { walletAddress: w } });
      assert.equal(first.status, 200);
      const again = await post(url, "/auth/token", { key: "tok-1", apiKey, body: { walletAddress: w } });
      assert.equal(again.status, 200);
      assert.equal(again.replayed, "true");
      assert.equal(again.body.token, first.body.token);
      const refresh = await post(url, "/auth/token/refresh", { key: "tok-1", apiKey, body: { walletAddress: w } });
      assert.equal(refresh.status, 422, "another path under the same key");
      const otherKey = await newApiKey(server, "acme");
      const other = await post(url, "/auth/token", { key: "tok-1", apiKey: otherKey, body: { walletAddress: w } });
      assert.equal(other.status, 200);
      assert.equal(other.replayed, null, "another key id is another scope");
      assert.notEqual(other.body.token, first.body.token);
      const stored: string[] = [];
      for await (const e of server.services.kv.list({ prefix: ["idempotency"] })) stored.push(JSON.stringify(e));
      assert.ok(stored.length > 0);
      const payload = first.body.token.split(".")[1];
      assert.ok(stored.every((s) => !s.includes(payload)), "no JWT readable in KV");
      const [keyId, secret] = apiKey.split(".");
      const wrong = await post(url, "/auth/token", {
        key: "tok-1",
        apiKey: `${keyId}.${secret.slice(1)}`,
        body: { walletAddress: w },
      });
      assert.equal(wrong.status, 403, "the API key is checked before any replay");
    });

    await t.step("/sim POSTs (no credentials) are scoped by path: one deposit per key", async () => {
      const address = (await post(url, "/mint/wallets", {
        token,
        body: { chain: "sol", destinationChain: "arbitrum" },
      })).body.data.address;
      const body = { chain: "sol", address, amount: "500000000" };
      const first = await post(url, "/sim/deposits", { key: "dep-1", body });
      assert.equal(first.status, 201, first.text);
      const again = await post(url, "/sim/deposits", { key: "dep-1", body });
      assert.equal(again.replayed, "true");
      assert.equal(again.body.data.txHash, first.body.data.txHash);
      const faucet = await post(url, "/sim/faucet", {
        key: "dep-1",
        body: { chain: "base", address: wallet, token: "uSOL", amount: "1" },
      });
      assert.equal(faucet.status, 201, "another path is another scope");
      const balance = await fetch(`${url}/sim/balances?chain=sol&address=${address}`).then((r) => r.json());
      assert.equal(balance.data.balance, "500000000", "deposited once");
    });
  } finally {
    await server.close();
  }
});

Deno.test("Idempotency-Key: in flight is 409, 5xx is not kept, records expire after 24 hours", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "idempotency-test-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  let release = () => {};
  let calls = 0;
  let failNext = false;
  const app = new Hono();
  app.onError(onError(() => {}));
  app.use("*", idempotency(kv, () => {}));
  app.post("/slow", async (c) => {
    calls++;
    await new Promise<void>((r) => (release = r));
    return c.json({ success: true, data: { n: calls } }, 201);
  });
  app.post("/flaky", (c) => {
    calls++;
    if (failNext) {
      failNext = false;
      throw apiError(API_ERRORS.internal);
    }
    return c.json({ success: true, data: { n: calls } }, 201);
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    await t.step("a request still in flight with the key: 409; afterwards the replay", async () => {
      const first = post(url, "/slow", { key: "k1", body: { a: 1 } });
      while (calls === 0) await new Promise((r) => setTimeout(r, 5));
      const during = await post(url, "/slow", { key: "k1", body: { a: 1 } });
      assert.equal(during.status, 409);
      assert.deepEqual(during.body, { success: false, message: IN_FLIGHT });
      const otherBody = await post(url, "/slow", { key: "k1", body: { a: 2 } });
      assert.equal(otherBody.status, 422, "another request under a held key is a reuse");
      release();
      assert.equal((await first).status, 201);
      const after = await post(url, "/slow", { key: "k1", body: { a: 1 } });
      assert.equal(after.replayed, "true");
      assert.equal(after.body.data.n, 1);
      assert.equal(calls, 1);
    });

    await t.step("a 5xx answer is not kept: the retry with the same key runs again", async () => {
      calls = 0;
      failNext = true;
      const failed = await post(url, "/flaky", { key: "k2", body: {} });
      assert.equal(failed.status, 500);
      const retry = await post(url, "/flaky", { key: "k2", body: {} });
      assert.equal(retry.status, 201);
      assert.equal(retry.replayed, null);
      assert.equal(calls, 2);
      const replay = await post(url, "/flaky", { key: "k2", body: {} });
      assert.equal(replay.replayed, "true");
      assert.equal(calls, 2);
    });

    await t.step("a kept response is replayed for 24 hours, an abandoned lock for its lease only", async () => {
      const now = Date.now();
      const done = await claimIdempotencyKey(kv, "path:/flaky", "k2", "x", now);
      assert.equal(done.kind, "mismatch", "still there");
      const later = await claimIdempotencyKey(kv, "path:/flaky", "k2", "x", now + IDEMPOTENCY_TTL_MS + 1000);
      assert.equal(later.kind, "claimed", "expired after 24 hours");
      const held = await claimIdempotencyKey(kv, "s", "lock", "f", now);
      assert.equal(held.kind, "claimed");
      assert.equal((await claimIdempotencyKey(kv, "s", "lock", "f", now + 1000)).kind, "in_flight");
      assert.equal((await claimIdempotencyKey(kv, "s", "lock", "f", now + IN_FLIGHT_LEASE_MS + 1)).kind, "claimed");
    });
  } finally {
    await server.shutdown();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("documentIdempotency adds the header and the 409 and 422 answers to every POST of a document", async () => {
  const server = await startTestServer();
  try {
    const router = authRoutes(server.services.kv, server.services.tokens!, server.services.uAssetTransferAddress);
    const doc = documentIdempotency(
      router.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } }),
    );
    for (const path of ["/token", "/token/refresh"]) {
      // deno-lint-ignore no-explicit-any
      const post = (doc.paths as any)[path].post;
      // deno-lint-ignore no-explicit-any
      assert.deepEqual(post.parameters.filter((p: any) => p.name === "Idempotency-Key").length, 1, path);
      assert.ok(post.responses["409"] && post.responses["422"], path);
      assert.equal(post.responses["200"].description, "A JWT bound to `walletAddress` (not enveloped)");
    }
    // deno-lint-ignore no-explicit-any
    assert.equal((doc.paths as any)["/.well-known/jwks.json"].get.parameters, undefined, "GET untouched");
    const bare = documentIdempotency({ paths: { "/x": { post: { responses: {} } } } });
    // deno-lint-ignore no-explicit-any
    const x = (bare.paths as any)["/x"].post;
    assert.deepEqual(Object.keys(x.responses).sort(), ["409", "422"]);
    assert.equal(x.responses["409"].description, IN_FLIGHT);
    assert.equal(x.responses["422"].description, REUSED);
  } finally {
    await server.close();
  }
});

Deno.test("Idempotency-Key: a POST to an unknown path, which no credential gate verified, stores nothing", async () => {
  const server = await startTestServer();
  try {
    const stored = async () => {
      let n = 0;
      for await (const _ of server.services.kv.list({ prefix: ["idempotency"] })) n++;
      return n;
    };
    for (
      const [path, headers] of [
        ["/no-such-route", {}],
        ["/no-such-route", { Authorization: "Bearer not-a-token" }],
        ["/no-such-route", { "X-API-Key": "nokey.nosecret" }],
        ["/simulate", {}],
      ] as const
    ) {
      for (const key of ["k-1", "k-2"]) {
        const res = await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/json", "Idempotency-Key": key },
          body: JSON.stringify({ pad: "x".repeat(1000) }),
        });
        assert.equal(res.status, 404, path);
        assert.equal(res.headers.get("Idempotent-Replayed"), null);
        assert.deepEqual(await res.json(), { success: false, message: API_ERRORS.notFound.message });
      }
    }
    assert.equal(await stored(), 0, "anyone could otherwise fill the store with records, unauthenticated");
  } finally {
    await server.close();
  }
});
