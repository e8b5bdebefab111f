/** `deno task admin` as an operator runs it: a separate process on the KV of a running server. */
import assert from "node:assert/strict";
import { runTask } from "./support/cli.ts";
import { call, randomWallet, startTestServer } from "./support/server.ts";

function admin(kvPath: string, ...args: string[]) {
  return runTask("admin", { KV_PATH: kvPath }, args);
}

Deno.test("admin CLI against a running server", async (t) => {
  const server = await startTestServer();
  try {
    const wallet = randomWallet();
    let apiKey = "";
    let keyId = "";

    await t.step("api-key create prints the key alone on the last line; it works at once", async () => {
      const res = await admin(server.kvPath, "api-key", "create", "--partner", "acme", "--expires-in-days", "30");
      assert.equal(res.code, 0, res.stderr);
      const lines = res.stdout.trim().split("\n");
      apiKey = lines.at(-1)!;
      assert.match(apiKey, /^ak_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
      keyId = apiKey.split(".")[0];
      assert.ok(!lines.slice(0, -1).join("\n").includes(apiKey.split(".")[1]), "secret printed once");
      const token = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet },
      });
      assert.equal(token.status, 200);
      const stored = JSON.stringify(await server.services.kv.get(["api_key", keyId]));
      assert.ok(!stored.includes(apiKey.split(".")[1]), "only a hash of the secret is stored");
    });

    await t.step("api-key list shows the key without its secret", async () => {
      const res = await admin(server.kvPath, "api-key", "list");
      assert.equal(res.code, 0);
      assert.match(res.stdout, new RegExp(`${keyId}\\tpartner=acme\\t.*active until`));
      assert.ok(!res.stdout.includes(apiKey.split(".")[1]));
    });

    await t.step("wallet deactivate and activate take effect on the running server", async () => {
      const { body } = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet },
      });
      const off = await admin(server.kvPath, "wallet", "deactivate", wallet);
      assert.equal(off.code, 0, off.stderr);
      const refused = await call(server, "GET", "/orders", { token: body.token });
      assert.deepEqual(refused.body, { success: false, message: "Wallet is not active" });
      assert.equal((await admin(server.kvPath, "wallet", "activate", wallet)).code, 0);
      assert.equal((await call(server, "GET", "/orders", { token: body.token })).status, 200);
    });

    await t.step("api-key revoke stops token issuance", async () => {
      const res = await admin(server.kvPath, "api-key", "revoke", keyId);
      assert.equal(res.code, 0, res.stderr);
      const token = await call(server, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: wallet },
      });
      assert.equal(token.status, 403);
      assert.equal(token.body.message, "Invalid API key");
      assert.match((await admin(server.kvPath, "api-key", "list")).stdout, /revoked/);
    });

    await t.step("usage errors exit 2 and change nothing", async () => {
      for (
        const args of [
          ["api-key", "create"],
          ["api-key", "create", "--partner", "bad partner!"],
          ["api-key", "create", "--partner", "x", "--expires-in-days", "-3"],
          ["api-key", "revoke", "ak_0000000000000000"],
          ["wallet", "activate", "0x1234"],
          ["wallet", "activate", randomWallet()],
          ["nonsense"],
        ]
      ) {
        const res = await admin(server.kvPath, ...args);
        assert.equal(res.code, 2, args.join(" "));
        assert.ok(res.stderr.length > 0);
      }
      const list = await admin(server.kvPath, "api-key", "list");
      assert.equal(list.stdout.trim().split("\n").length, 1);
    });
  } finally {
    await server.close();
  }
});
