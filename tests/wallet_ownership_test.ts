/**
 * A wallet belongs to the partner that bound it (ISSUE item 2): another partner's key gets no token, a token whose
 * partner no longer owns the wallet is refused on every JWT route, and only the operator's `wallet move` (run here as
 * a separate process, as an operator would) gives a wallet to another partner, with an audit entry. Real HTTP.
 */
import assert from "node:assert/strict";
import { listAudit } from "../kv/audit.ts";
import { getUserWallet, setUserWalletStatus } from "../kv/user_wallets.ts";
import { runTask } from "./support/cli.ts";
import { outside } from "./support/pipeline.ts";
import { call, newApiKey, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";

const OTHER_PARTNER = { success: false, message: "Wallet belongs to another partner" };

function admin(server: TestServer, ...args: string[]) {
  return runTask("admin", { KV_PATH: server.kvPath }, args);
}

function requestToken(server: TestServer, path: "/auth/token" | "/auth/token/refresh", key: string, wallet: unknown) {
  return call(server, "POST", path, { headers: { "X-API-Key": key }, body: { walletAddress: wallet } });
}

/** The JWT routes that read or change a wallet's orders, burn configurations and deposit addresses. */
const JWT_ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: "GET", path: "/orders" },
  { method: "GET", path: "/burn/wallets" },
  {
    method: "PUT",
    path: "/burn/wallets",
    body: { destinationChain: "sol", destinationAddress: outside.depositAddress("sol", 7) },
  },
  { method: "POST", path: "/mint/wallets", body: { chain: "sol", destinationChain: "base" } },
];

async function expectRefusedEverywhere(server: TestServer, token: string) {
  for (const r of JWT_ROUTES) {
    const res = await call(server, r.method, r.path, { token, body: r.body });
    assert.equal(res.status, 403, `${r.method} ${r.path}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(res.body, OTHER_PARTNER, `${r.method} ${r.path}`);
  }
}

Deno.test("wallet ownership: partners cannot act for each other's wallets; admin wallet move (subprocess)", async (t) => {
  const server = await startTestServer();
  try {
    const kv = server.services.kv;
    const keyA = await newApiKey(server, "partner-a");
    const keyB = await newApiKey(server, "partner-b");
    const aliceOfA = randomWallet();
    const tokenA = await tokenFor(server, aliceOfA, keyA);

    await t.step("another partner's key gets 403 on /auth/token and /auth/token/refresh", async () => {
      for (const path of ["/auth/token", "/auth/token/refresh"] as const) {
        // Any spelling of the address is the same wallet.
        for (const spelling of [aliceOfA, aliceOfA.toLowerCase()]) {
          const res = await requestToken(server, path, keyB, spelling);
          assert.equal(res.status, 403, path);
          assert.deepEqual(res.body, OTHER_PARTNER, path);
        }
      }
      assert.equal((await getUserWallet(kv, aliceOfA))?.partnerId, "partner-a");
      assert.equal((await requestToken(server, "/auth/token/refresh", keyA, aliceOfA)).status, 200);
    });

    await t.step("a token issued before a move is refused on every JWT route; the new owner's works", async () => {
      const bobOfB = randomWallet();
      const tokenB = await tokenFor(server, bobOfB, keyB);
      const moved = await admin(server, "wallet", "move", bobOfB, "--to-partner", "partner-a", "--by", "ops-test");
      assert.equal(moved.code, 0, moved.stderr);
      await expectRefusedEverywhere(server, tokenB);
      // Nothing was created for the wallet by the refused requests.
      const tokenNowA = await tokenFor(server, bobOfB, keyA);
      const burns = await call(server, "GET", "/burn/wallets", { token: tokenNowA });
      assert.deepEqual(burns.body, { success: true, data: [] });
      const mints = await call(server, "GET", "/mint/wallets", { token: tokenNowA });
      assert.deepEqual(mints.body.data, []);
      assert.deepEqual((await requestToken(server, "/auth/token", keyB, bobOfB)).body, OTHER_PARTNER);
    });

    await t.step("admin wallet move: audit entry, old owner's tokens refused, new owner's key works", async () => {
      const before = (await listAudit(kv)).length;
      const res = await admin(server, "wallet", "move", aliceOfA, "--to-partner", "partner-b", "--by", "ops-alice");
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /moved from partner-a to partner-b by ops-alice/);
      const wallet = await getUserWallet(kv, aliceOfA);
      assert.equal(wallet?.partnerId, "partner-b");

      const entries = await listAudit(kv);
      assert.equal(entries.length, before + 1);
      const entry = entries.at(-1)!;
      assert.deepEqual(
        { by: entry.by, action: entry.action, subject: entry.subject, before: entry.before, after: entry.after },
        {
          by: "ops-alice",
          action: "wallet.move",
          subject: aliceOfA.toLowerCase(),
          before: { partnerId: "partner-a" },
          after: { partnerId: "partner-b" },
        },
      );
      assert.ok(Date.parse(entry.at) <= Date.now());
      const listed = await admin(server, "audit");
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`\\tops-alice\\twallet\\.move\\t${aliceOfA.toLowerCase()}\\t`));

      await expectRefusedEverywhere(server, tokenA);
      assert.deepEqual((await requestToken(server, "/auth/token", keyA, aliceOfA)).body, OTHER_PARTNER);
      const tokenB = await tokenFor(server, aliceOfA, keyB);
      assert.equal((await call(server, "GET", "/orders", { token: tokenB })).status, 200);
    });

    await t.step("admin wallet move without --by records the OS user", async () => {
      const res = await runTask("admin", { KV_PATH: server.kvPath, USER: "os-operator" }, [
        "wallet",
        "move",
        aliceOfA,
        "--to-partner",
        "partner-a",
      ]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal((await listAudit(kv)).at(-1)?.by, "os-operator");
    });

    await t.step("admin wallet move refuses bad input and writes nothing", async () => {
      const before = await listAudit(kv);
      for (
        const args of [
          ["wallet", "move", aliceOfA],
          ["wallet", "move", aliceOfA, "--to-partner", "bad partner!"],
          ["wallet", "move", "0x1234", "--to-partner", "partner-b"],
          ["wallet", "move", randomWallet(), "--to-partner", "partner-b"],
          ["wallet", "move", aliceOfA, "--to-partner", "partner-a"],
          ["audit", "extra"],
        ]
      ) {
        const res = await admin(server, ...args);
        assert.equal(res.code, 2, `${args.join(" ")}: ${res.stdout}`);
        assert.match(res.stderr, /^error: /);
      }
      assert.deepEqual(await listAudit(kv), before);
      assert.equal((await getUserWallet(kv, aliceOfA))?.partnerId, "partner-a");
    });

    await t.step("an address blocked before its first token is bound by the first token request, once", async () => {
      const blocked = randomWallet();
      await setUserWalletStatus(kv, blocked, "inactive", { createIfMissing: true });
      assert.equal((await getUserWallet(kv, blocked))?.partnerId, "");
      const keys = [keyA, keyB, keyA, keyB, keyA, keyB, keyA, keyB];
      const answers = await Promise.all(keys.map((k) => requestToken(server, "/auth/token", k, blocked)));
      const owner = (await getUserWallet(kv, blocked))!.partnerId;
      assert.ok(owner === "partner-a" || owner === "partner-b", owner);
      keys.forEach((k, i) => {
        const ownersKey = (k === keyA) === (owner === "partner-a");
        assert.equal(answers[i].status, 403);
        assert.equal(answers[i].body.message, ownersKey ? "Wallet is not active" : OTHER_PARTNER.message);
      });
      await setUserWalletStatus(kv, blocked, "active");
      const [ownerKey, otherKey] = owner === "partner-a" ? [keyA, keyB] : [keyB, keyA];
      assert.equal((await requestToken(server, "/auth/token", ownerKey, blocked)).status, 200);
      assert.deepEqual((await requestToken(server, "/auth/token", otherKey, blocked)).body, OTHER_PARTNER);
    });
  } finally {
    await server.close();
  }
});

Deno.test("no token for the zero address or the service's transfer address", async () => {
  const server = await startTestServer();
  try {
    const key = await newApiKey(server, "partner-a");
    const transfer = server.services.uAssetTransferAddress;
    const cases = [
      ["0x0000000000000000000000000000000000000000", "Must not be the zero address"],
      [transfer.toLowerCase(), "Must not be the service's uAsset transfer address"],
      ["0x" + transfer.slice(2).toUpperCase(), "Must not be the service's uAsset transfer address"],
    ];
    for (const [address, message] of cases) {
      for (const path of ["/auth/token", "/auth/token/refresh"] as const) {
        const res = await requestToken(server, path, key, address);
        assert.equal(res.status, 400, `${path} ${address}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, {
          success: false,
          message: "Validation error",
          error: { issues: [{ path: ["walletAddress"], message }] },
        });
      }
      assert.equal(await getUserWallet(server.services.kv, address), null, "nothing written");
    }
  } finally {
    await server.close();
  }
});
