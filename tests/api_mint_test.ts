/** Deposit addresses (spec 2.2, 4.2, 4.3, 7) over real HTTP. */
import assert from "node:assert/strict";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { Deriver } from "../chains/derivation.ts";
import { findDepositAddress } from "../kv/mint_wallets.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

const FORMATS: Record<string, RegExp> = {
  sol: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/,
  sui: /^0x[a-f0-9]{64}$/,
  doge: /^D[1-9A-HJ-NP-Za-km-z]{33}$/,
  zec: /^t1[1-9A-HJ-NP-Za-km-z]{33}$/,
  xrp: /^r[1-9A-HJ-NP-Za-km-z]{24,33}$/,
};

Deno.test("mint wallets", async (t) => {
  const server = await startTestServer();
  try {
    const alice = randomWallet();
    const bob = randomWallet();
    const aliceToken = await tokenFor(server, alice);
    const bobToken = await tokenFor(server, bob);
    const mnemonic = await Deno.readTextFile(`${server.dir}/master-mnemonic.txt`);
    const deriver = Deriver.fromMnemonic(mnemonic.trim());

    await t.step("one address per (chain, destinationChain), in each chain's format, from the mnemonic", async () => {
      const seen = new Set<string>();
      for (const chain of NATIVE_CHAINS) {
        for (const destinationChain of ["base", "arbitrum"]) {
          const res = await call(server, "POST", "/mint/wallets", {
            token: aliceToken,
            body: { chain, destinationChain },
          });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          assert.equal(res.body.success, true);
          assert.deepEqual(Object.keys(res.body.data).sort(), ["address", "chain", "destinationChain"]);
          assert.equal(res.body.data.chain, chain);
          assert.equal(res.body.data.destinationChain, destinationChain);
          assert.match(res.body.data.address, FORMATS[chain]);
          assert.ok(!seen.has(res.body.data.address), "every pair has its own address");
          seen.add(res.body.data.address);
          const owner = await findDepositAddress(server.services.kv, chain, res.body.data.address);
          assert.equal(owner?.owner, alice.toLowerCase());
          assert.equal(owner?.destinationChain, destinationChain);
          assert.equal(deriver.depositAddress(chain, owner!.derivationIndex), res.body.data.address);
        }
      }
    });

    await t.step("indexes are allocated in order and never reused, across callers", async () => {
      const bobXrp = await call(server, "POST", "/mint/wallets", {
        token: bobToken,
        body: { chain: "xrp", destinationChain: "base" },
      });
      assert.equal(bobXrp.status, 201);
      // alice took xrp indexes 0 and 1; bob's is 2.
      assert.equal(bobXrp.body.data.address, deriver.depositAddress("xrp", 2));
      const aliceXrp = await call(server, "GET", "/mint/wallets", { token: aliceToken });
      const xrpAddresses = aliceXrp.body.data.filter((w: { chain: string }) => w.chain === "xrp").map((
        w: { address: string },
      ) => w.address);
      assert.ok(!xrpAddresses.includes(bobXrp.body.data.address), "an XRP address is unique to its caller");
    });

    await t.step("concurrent creations get distinct indexes", async () => {
      const callers = await Promise.all(Array.from({ length: 8 }, () => tokenFor(server, randomWallet())));
      const results = await Promise.all(
        callers.map((token) =>
          call(server, "POST", "/mint/wallets", { token, body: { chain: "sol", destinationChain: "katana" } })
        ),
      );
      const addresses = results.map((r) => r.body.data.address);
      assert.equal(new Set(addresses).size, 8);
      const expected = new Set(Array.from({ length: 8 }, (_, i) => deriver.depositAddress("sol", 2 + i)));
      assert.deepEqual(new Set(addresses), expected);
    });

    await t.step("duplicate pair", async () => {
      const res = await call(server, "POST", "/mint/wallets", {
        token: aliceToken,
        body: { chain: "sol", destinationChain: "base" },
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        success: false,
        message: "A wallet already exists for this chain and destination combination",
      });
    });

    await t.step("unsupported chains and validation errors change nothing", async () => {
      const before = (await call(server, "GET", "/mint/wallets", { token: aliceToken })).body.data;
      const cases: [unknown, string][] = [
        [{ chain: "btc", destinationChain: "base" }, "Unsupported source chain"],
        [{ chain: "base", destinationChain: "base" }, "Unsupported source chain"],
        [{ chain: "sol", destinationChain: "ethereum" }, "Unsupported destination chain"],
        [{ chain: "sol", destinationChain: "sol" }, "Unsupported destination chain"],
      ];
      for (const [body, message] of cases) {
        const res = await call(server, "POST", "/mint/wallets", { token: aliceToken, body });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { success: false, message });
      }
      const missing = await call(server, "POST", "/mint/wallets", { token: aliceToken, body: { chain: "sol" } });
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body, {
        success: false,
        message: "Validation error",
        error: { issues: [{ path: ["destinationChain"], message: "Required" }] },
      });
      const both = await call(server, "POST", "/mint/wallets", { token: aliceToken, body: {} });
      assert.deepEqual(both.body.error.issues.map((i: { path: string[] }) => i.path[0]).sort(), [
        "chain",
        "destinationChain",
      ]);
      const wrongType = await call(server, "POST", "/mint/wallets", {
        token: aliceToken,
        body: { chain: 5, destinationChain: "base" },
      });
      assert.equal(wrongType.body.message, "Validation error");
      const malformed = await call(server, "POST", "/mint/wallets", { token: aliceToken, rawBody: "{" });
      assert.deepEqual(malformed.body, { success: false, message: "Invalid request body" });
      const after = (await call(server, "GET", "/mint/wallets", { token: aliceToken })).body.data;
      assert.deepEqual(after, before);
    });

    await t.step("each wallet lists only its own addresses", async () => {
      const a = await call(server, "GET", "/mint/wallets", { token: aliceToken });
      const b = await call(server, "GET", "/mint/wallets", { token: bobToken });
      assert.equal(a.status, 200);
      assert.equal(a.body.data.length, NATIVE_CHAINS.length * 2);
      assert.deepEqual(b.body.data.map((w: { chain: string }) => w.chain), ["xrp"]);
      const aliceSet = new Set(a.body.data.map((w: { address: string }) => w.address));
      assert.ok(b.body.data.every((w: { address: string }) => !aliceSet.has(w.address)));
      assert.ok(EVM_CHAINS.includes(b.body.data[0].destinationChain));
    });
  } finally {
    await server.close();
  }
});
