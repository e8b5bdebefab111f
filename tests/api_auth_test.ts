/** Token endpoints, the JWKS, and every way a bearer token can be refused (spec 4.1, 5), over real HTTP. */
import assert from "node:assert/strict";
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportSPKI,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from "jose";
import { createApiKey, revokeApiKey } from "../kv/api_keys.ts";
import { getUserWallet, setUserWalletStatus } from "../kv/user_wallets.ts";
import { call, newApiKey, randomWallet, startTestServer, TEST_BASE_URL, tokenFor } from "./support/server.ts";

const ISSUER = `${TEST_BASE_URL}/auth`;
const NS = TEST_BASE_URL;

Deno.test("POST /auth/token and /auth/token/refresh", async (t) => {
  const server = await startTestServer();
  try {
    const wallet = randomWallet();
    const apiKey = await newApiKey(server, "acme");

    await t.step("API key header: absent or malformed is 401, unknown or wrong is 403", async () => {
      const missing = await call(server, "POST", "/auth/token", { body: { walletAddress: wallet } });
      assert.equal(missing.status, 401);
      assert.deepEqual(missing.body, { success: false, message: "Missing or malformed X-API-Key" });
      for (const bad of ["nodot", `${apiKey}.extra`, ""]) {
        const res = await call(server, "POST", "/auth/token", {
          headers: { "X-API-Key": bad },
          body: { walletAddress: wallet },
        });
        assert.equal(res.status, 401, bad);
        assert.equal(res.body.message, "Missing or malformed X-API-Key");
      }
      const [keyId, secret] = apiKey.split(".");
      const flipped = secret[0] === "A" ? "B" + secret.slice(1) : "A" + secret.slice(1);
      for (const wrong of [`${keyId}.${flipped}`, `ak_0000000000000000.${secret}`, "ak_zz.secret"]) {
        const res = await call(server, "POST", "/auth/token", {
          headers: { "X-API-Key": wrong },
          body: { walletAddress: wallet },
        });
        assert.equal(res.status, 403);
        assert.deepEqual(res.body, { success: false, message: "Invalid API key" });
      }
    });

    await t.step("revoked and expired keys are refused with 403", async () => {
      const revoked = await createApiKey(server.services.kv, "acme");
      await revokeApiKey(server.services.kv, revoked.record.keyId);
      const expired = await createApiKey(server.services.kv, "acme", {
        expiresInDays: 1,
        now: new Date(Date.now() - 2 * 86_400_000),
      });
      for (const key of [revoked.apiKey, expired.apiKey]) {
        const res = await call(server, "POST", "/auth/token", {
          headers: { "X-API-Key": key },
          body: { walletAddress: wallet },
        });
        assert.equal(res.status, 403);
        assert.equal(res.body.message, "Invalid API key");
      }
    });

    await t.step("walletAddress must be a 20-byte hex EVM address", async () => {
      const missing = await call(server, "POST", "/auth/token", { headers: { "X-API-Key": apiKey }, body: {} });
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body, {
        success: false,
        message: "Validation error",
        error: { issues: [{ path: ["walletAddress"], message: "Required" }] },
      });
      for (const bad of ["0x123", "0x" + "g".repeat(40), "0x" + "a".repeat(41), "a".repeat(40), 42]) {
        const res = await call(server, "POST", "/auth/token", {
          headers: { "X-API-Key": apiKey },
          body: { walletAddress: bad },
        });
        assert.equal(res.status, 400, String(bad));
        assert.equal(res.body.message, "Validation error");
        assert.deepEqual(res.body.error.issues.map((i: { path: string[] }) => i.path), [["walletAddress"]]);
      }
      const malformed = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        rawBody: "{not json",
      });
      assert.equal(malformed.status, 400);
      assert.deepEqual(malformed.body, { success: false, message: "Invalid request body" });
      assert.equal(await getUserWallet(server.services.kv, wallet), null, "a refused request creates no wallet");
    });

    await t.step("a token carries the spec's claims and verifies against the published JWKS", async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["expiresAt", "token"], "not enveloped");
      const jwks = await call(server, "GET", "/auth/.well-known/jwks.json");
      assert.equal(jwks.status, 200);
      assert.equal(jwks.body.keys.length, 1);
      assert.equal(jwks.body.keys[0].d, undefined, "no private part in the JWKS");
      const { payload, protectedHeader } = await jwtVerify(res.body.token, createLocalJWKSet(jwks.body), {
        issuer: ISSUER,
        audience: TEST_BASE_URL,
        algorithms: ["RS256"],
      });
      assert.equal(protectedHeader.kid, jwks.body.keys[0].kid);
      assert.equal(payload.sub, wallet.toLowerCase());
      assert.ok(payload.iat! >= before && payload.iat! <= before + 5);
      assert.equal(payload.exp, payload.iat! + 365 * 24 * 3600);
      assert.equal(res.body.expiresAt, payload.exp);
      assert.deepEqual(payload.verified_credentials, [{ address: wallet.toLowerCase() }]);
      assert.equal(payload.azp, "acme");
      assert.equal(payload[`${NS}/partner_id`], "acme");
      assert.equal(payload[`${NS}/type`], "B2B");
      const record = await getUserWallet(server.services.kv, wallet);
      assert.equal(record?.status, "active");
      assert.equal(record?.address, wallet.toLowerCase());
    });

    await t.step("refresh issues a new working token for the same wallet", async () => {
      const res = await call(server, "POST", "/auth/token/refresh", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet.toLowerCase() },
      });
      assert.equal(res.status, 200);
      assert.equal(decodeJwt(res.body.token).sub, wallet.toLowerCase());
      const list = await call(server, "GET", "/mint/wallets", { token: res.body.token });
      assert.equal(list.status, 200);
      const noKey = await call(server, "POST", "/auth/token/refresh", { body: { walletAddress: wallet } });
      assert.equal(noKey.status, 401);
    });
  } finally {
    await server.close();
  }
});

Deno.test("an API key binds at most API_KEY_MAX_NEW_WALLETS_PER_DAY new wallets per UTC day; one more is 429 and binds nothing", async () => {
  const server = await startTestServer({ API_KEY_MAX_NEW_WALLETS_PER_DAY: "3" });
  try {
    const kv = server.services.kv;
    const LIMIT = {
      success: false,
      message: "An API key may bind at most 3 new wallets per UTC day; try again after 00:00 UTC",
    };
    const key = await newApiKey(server, "daily");
    const ask = (path: string, walletAddress: string, apiKey = key) =>
      call(server, "POST", path, { headers: { "X-API-Key": apiKey }, body: { walletAddress } });
    const [w1, w2, w3, w4] = [randomWallet(), randomWallet(), randomWallet(), randomWallet()];
    // Both token endpoints bind, and count.
    assert.equal((await ask("/auth/token", w1)).status, 200);
    assert.equal((await ask("/auth/token/refresh", w2)).status, 200);
    assert.equal((await ask("/auth/token", w3)).status, 200);
    for (const path of ["/auth/token", "/auth/token/refresh"]) {
      const res = await ask(path, w4);
      assert.equal(res.status, 429, `${path}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, LIMIT, path);
    }
    assert.equal(await getUserWallet(kv, w4), null, "the refused wallet is not bound");
    // A wallet an operator blocked before any token is unbound: binding it counts, and a refusal leaves it unbound.
    const blocked = randomWallet();
    await setUserWalletStatus(kv, blocked, "inactive", { createIfMissing: true });
    assert.deepEqual((await ask("/auth/token", blocked)).body, LIMIT);
    assert.equal((await getUserWallet(kv, blocked))?.partnerId, "");
    // Tokens for wallets the key already bound are not new bindings.
    for (const w of [w1, w2, w3]) assert.equal((await ask("/auth/token/refresh", w)).status, 200);
    // The cap is per key: another key of the same partner binds the wallet.
    const second = await newApiKey(server, "daily");
    assert.equal((await ask("/auth/token", w4, second)).status, 200);
    assert.equal((await getUserWallet(kv, w4))?.partnerId, "daily");

    // Concurrent requests of one key for new wallets: exactly the cap is bound.
    const third = await newApiKey(server, "daily");
    const wallets = Array.from({ length: 8 }, () => randomWallet());
    const answers = await Promise.all(wallets.map((w) => ask("/auth/token", w, third)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 429, 429, 429, 429, 429]);
    const bound = await Promise.all(wallets.map((w) => getUserWallet(kv, w)));
    assert.equal(bound.filter((w) => w !== null).length, 3);
  } finally {
    await server.close();
  }
});

Deno.test("bearer token checks on partner endpoints", async (t) => {
  const server = await startTestServer();
  const keys = server.services.tokens!.keys;
  try {
    const wallet = randomWallet().toLowerCase();
    const apiKey = await newApiKey(server, "acme");
    const good = await tokenFor(server, wallet, apiKey);
    const goodClaims = decodeJwt(good);
    const now = Math.floor(Date.now() / 1000);

    const sign = (claims: Record<string, unknown>, key: CryptoKey = keys.privateKey, alg = "RS256") =>
      new SignJWT({ ...goodClaims, ...claims }).setProtectedHeader({ alg, kid: keys.publicJwk.kid }).sign(key);
    const expectRefusal = async (token: string | undefined, status: number, message: string, header?: string) => {
      for (const path of ["/mint/wallets", "/burn/wallets", "/orders"]) {
        const res = await call(server, "GET", path, {
          token,
          headers: header === undefined ? {} : { Authorization: header },
        });
        assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, { success: false, message });
      }
    };

    await t.step("the real token is accepted", async () => {
      const res = await call(server, "GET", "/orders", { token: good });
      assert.equal(res.status, 200);
    });
    await t.step("no Authorization header", () => expectRefusal(undefined, 401, "Missing authorization header"));
    await t.step("unparseable tokens and schemes", async () => {
      await expectRefusal(undefined, 401, "Invalid or expired token", "Bearer not-a-jwt");
      await expectRefusal(undefined, 401, "Invalid or expired token", `Basic ${good}`);
      await expectRefusal(undefined, 401, "Invalid or expired token", "Bearer a.b.c");
    });
    await t.step("forged with a different RSA key", async () => {
      const other = await generateKeyPair("RS256");
      await expectRefusal(await sign({}, other.privateKey), 403, "Invalid token signature");
    });
    await t.step("alg none", async () => {
      const b64 = (o: unknown) => btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
      const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64(goodClaims)}.`;
      assert.equal(decodeProtectedHeader(unsigned).alg, "none");
      await expectRefusal(unsigned, 403, "Invalid token signature");
    });
    await t.step("HS256 signed with the public key as the HMAC secret", async () => {
      const pem = await exportSPKI(keys.publicKey);
      const secret = new TextEncoder().encode(pem);
      await expectRefusal(await sign({}, secret as unknown as CryptoKey, "HS256"), 403, "Invalid token signature");
    });
    await t.step("tampered payload keeps the old signature", async () => {
      const [h, , s] = good.split(".");
      const other = randomWallet().toLowerCase();
      const body = btoa(JSON.stringify({ ...goodClaims, sub: other, verified_credentials: [{ address: other }] }))
        .replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
      await expectRefusal(`${h}.${body}.${s}`, 403, "Invalid token signature");
    });
    await t.step("expired", async () => {
      await expectRefusal(await sign({ iat: now - 400 * 86400, exp: now - 10 }), 401, "Token expired");
    });
    await t.step("wrong issuer and wrong audience", async () => {
      await expectRefusal(await sign({ iss: "https://evil.test/auth" }), 403, "Invalid token signature");
      await expectRefusal(await sign({ aud: "https://other.test" }), 403, "Invalid token signature");
    });
    await t.step("sub not among verified_credentials", async () => {
      await expectRefusal(
        await sign({ verified_credentials: [{ address: randomWallet().toLowerCase() }] }),
        403,
        "Invalid token signature",
      );
      await expectRefusal(await sign({ verified_credentials: [] }), 403, "Invalid token signature");
    });
    await t.step("inactive wallet: its tokens and new tokens are refused until reactivated", async () => {
      await setUserWalletStatus(server.services.kv, wallet, "inactive");
      await expectRefusal(good, 403, "Wallet is not active");
      const fresh = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet },
      });
      assert.equal(fresh.status, 403);
      assert.deepEqual(fresh.body, { success: false, message: "Wallet is not active" });
      await setUserWalletStatus(server.services.kv, wallet, "active");
      assert.equal((await call(server, "GET", "/orders", { token: good })).status, 200);
    });
    await t.step("a signed token for a wallet that never got one is refused", async () => {
      const stranger = randomWallet().toLowerCase();
      const token = await sign({ sub: stranger, verified_credentials: [{ address: stranger }] });
      await expectRefusal(token, 403, "Wallet is not active");
    });
    await t.step("revoking the issuing API key ends its tokens", async () => {
      const keyId = apiKey.split(".")[0];
      await revokeApiKey(server.services.kv, keyId);
      await expectRefusal(good, 401, "Invalid or expired token");
    });
  } finally {
    await server.close();
  }
});
