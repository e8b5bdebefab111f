/** Burn configurations (spec 2.3, 4.4-4.6, 7) over real HTTP. */
import assert from "node:assert/strict";
import { NATIVE_CHAINS, type NativeChain } from "../chains/catalog.ts";
import { Deriver } from "../chains/derivation.ts";
import { listBurnConfigHistory } from "../kv/burn_configs.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

const FORMAT_MESSAGES: Record<NativeChain, string> = {
  sol: "Invalid Solana address format. Must be base58 encoded, 32-44 characters.",
  xrp: "Invalid XRP address format. Must be a classic address starting with r, 25-34 characters.",
  sui: "Invalid Sui address format. Must be 0x followed by 64 hexadecimal characters.",
  doge: "Invalid Dogecoin address format. Must start with D, A or 9 and be 34 characters.",
  zec: "Invalid Zcash address format. Must be a transparent address starting with t1, 35 characters.",
};

const INVALID: Record<NativeChain, string[]> = {
  sol: ["0OIl" + "1".repeat(40), "abc", "1".repeat(45)],
  xrp: ["XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi", "rShort", "xHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"],
  sui: ["0x" + "a".repeat(63), "a".repeat(66), "0x" + "z".repeat(64)],
  doge: ["LKcxvWBj9aeVx4U3QD8Eg2KoTqVzjmr7Bq", "D" + "1".repeat(34), "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"],
  zec: [
    "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9sly",
    "t3Vz22vK5z2LcKEdg16Yv4FFneEL1zg9ojd",
    "t1" + "a".repeat(34),
  ],
};

Deno.test("burn configurations", async (t) => {
  const server = await startTestServer();
  try {
    const alice = randomWallet();
    const bob = randomWallet();
    const aliceToken = await tokenFor(server, alice);
    const bobToken = await tokenFor(server, bob);
    // Real addresses of each chain, derived from an unrelated mnemonic: valid encodings, not ours.
    const other = Deriver.fromMnemonic(
      "legal winner thank year wave sausage worth useful legal winner thank yellow",
    );
    const valid = (chain: NativeChain, i = 0) => other.depositAddress(chain, i);
    const transferAddress = server.services.uAssetTransferAddress;
    assert.match(transferAddress, /^0x[0-9a-fA-F]{40}$/);

    await t.step("create one per destination chain; one shared transfer address", async () => {
      for (const chain of NATIVE_CHAINS) {
        const memo = chain === "xrp" ? "4294967295" : undefined;
        const res = await call(server, "POST", "/burn/wallets", {
          token: aliceToken,
          body: { destinationChain: chain, destinationAddress: valid(chain), memo },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        assert.deepEqual(res.body, {
          success: true,
          data: {
            uAssetTransferAddress: transferAddress,
            destinationChain: chain,
            destinationAddress: valid(chain),
            memo: memo ?? null,
          },
        });
      }
      const bobs = await call(server, "POST", "/burn/wallets", {
        token: bobToken,
        body: { destinationChain: "sol", destinationAddress: valid("sol", 1), memo: "ignored-elsewhere" },
      });
      assert.equal(bobs.status, 201);
      assert.equal(bobs.body.data.uAssetTransferAddress, transferAddress, "identical for all users");
      assert.equal(bobs.body.data.memo, "ignored-elsewhere", "memo is optional but kept for other chains");
    });

    await t.step("duplicate for a chain", async () => {
      const res = await call(server, "POST", "/burn/wallets", {
        token: aliceToken,
        body: { destinationChain: "sol", destinationAddress: valid("sol", 3) },
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { success: false, message: "Wallet already exists for this chain" });
    });

    await t.step("every chain's address format, with its own message", async () => {
      const fresh = await tokenFor(server, randomWallet());
      for (const chain of NATIVE_CHAINS) {
        for (const address of INVALID[chain]) {
          const res = await call(server, "POST", "/burn/wallets", {
            token: fresh,
            body: { destinationChain: chain, destinationAddress: address, memo: chain === "xrp" ? "1" : undefined },
          });
          assert.equal(res.status, 400, `${chain} ${address}`);
          assert.deepEqual(res.body, { success: false, message: FORMAT_MESSAGES[chain] });
        }
        // One flipped character breaks the checksum of a real address (sol and sui addresses carry none).
        if (chain === "xrp" || chain === "doge" || chain === "zec") {
          const good = valid(chain, 7);
          const last = good.at(-1)!;
          const typo = good.slice(0, -1) + (last === "2" ? "3" : "2");
          const res = await call(server, "POST", "/burn/wallets", {
            token: fresh,
            body: { destinationChain: chain, destinationAddress: typo, memo: chain === "xrp" ? "1" : undefined },
          });
          assert.equal(res.status, 400, `${chain} typo ${typo}`);
          assert.equal(res.body.message, FORMAT_MESSAGES[chain]);
        }
      }
      assert.deepEqual((await call(server, "GET", "/burn/wallets", { token: fresh })).body.data, []);
    });

    await t.step("XRP memo rules", async () => {
      const fresh = await tokenFor(server, randomWallet());
      const cases: [string | undefined, string][] = [
        [undefined, "Memo is required for XRP and TXRP chains"],
        ["", "Memo is required for XRP and TXRP chains"],
        ["12a", "Memo must be numeric for XRP and TXRP chains"],
        ["-1", "Memo must be numeric for XRP and TXRP chains"],
        ["1.5", "Memo must be numeric for XRP and TXRP chains"],
        ["4294967296", "Memo must not exceed maximum value (4294967295)"],
        ["99999999999", "Memo must not exceed maximum value (4294967295)"],
      ];
      for (const [memo, message] of cases) {
        const res = await call(server, "POST", "/burn/wallets", {
          token: fresh,
          body: { destinationChain: "xrp", destinationAddress: valid("xrp"), memo },
        });
        assert.equal(res.status, 400, String(memo));
        assert.deepEqual(res.body, { success: false, message });
      }
      const ok = await call(server, "POST", "/burn/wallets", {
        token: fresh,
        body: { destinationChain: "xrp", destinationAddress: valid("xrp"), memo: "0" },
      });
      assert.equal(ok.status, 201);
      assert.equal(ok.body.data.memo, "0");
    });

    await t.step("body validation", async () => {
      const fresh = await tokenFor(server, randomWallet());
      const missing = await call(server, "POST", "/burn/wallets", { token: fresh, body: { destinationChain: "sol" } });
      assert.deepEqual(missing.body, {
        success: false,
        message: "Validation error",
        error: { issues: [{ path: ["destinationAddress"], message: "Required" }] },
      });
      const unsupported = await call(server, "POST", "/burn/wallets", {
        token: fresh,
        body: { destinationChain: "btc", destinationAddress: valid("doge") },
      });
      assert.deepEqual(unsupported.body, { success: false, message: "Unsupported destination chain" });
      const numericMemo = await call(server, "POST", "/burn/wallets", {
        token: fresh,
        body: { destinationChain: "xrp", destinationAddress: valid("xrp"), memo: 123 },
      });
      assert.equal(numericMemo.status, 400);
      assert.equal(numericMemo.body.message, "Validation error");
      assert.deepEqual(numericMemo.body.error.issues[0].path, ["memo"]);
      const malformed = await call(server, "POST", "/burn/wallets", { token: fresh, rawBody: "[" });
      assert.deepEqual(malformed.body, { success: false, message: "Invalid request body" });
    });

    await t.step("PUT updates, validates the same way, 404s without a configuration, keeps history", async () => {
      const res = await call(server, "PUT", "/burn/wallets", {
        token: aliceToken,
        body: { destinationChain: "xrp", destinationAddress: valid("xrp", 5), memo: "77" },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, {
        uAssetTransferAddress: transferAddress,
        destinationChain: "xrp",
        destinationAddress: valid("xrp", 5),
        memo: "77",
      });
      const history = await listBurnConfigHistory(server.services.kv, alice.toLowerCase(), "xrp");
      assert.deepEqual(history.map((h) => [h.destinationAddress, h.memo]), [[valid("xrp"), "4294967295"]]);

      const badMemo = await call(server, "PUT", "/burn/wallets", {
        token: aliceToken,
        body: { destinationChain: "xrp", destinationAddress: valid("xrp", 6) },
      });
      assert.deepEqual(badMemo.body, { success: false, message: "Memo is required for XRP and TXRP chains" });
      const badAddress = await call(server, "PUT", "/burn/wallets", {
        token: aliceToken,
        body: { destinationChain: "doge", destinationAddress: "nope" },
      });
      assert.deepEqual(badAddress.body, { success: false, message: FORMAT_MESSAGES.doge });
      const none = await call(server, "PUT", "/burn/wallets", {
        token: bobToken,
        body: { destinationChain: "zec", destinationAddress: valid("zec") },
      });
      assert.equal(none.status, 404);
      assert.deepEqual(none.body, { success: false, message: "Burn configuration not found for this chain" });
      const xrp = (await call(server, "GET", "/burn/wallets", { token: aliceToken })).body.data.find((
        c: { destinationChain: string },
      ) => c.destinationChain === "xrp");
      assert.equal(xrp.destinationAddress, valid("xrp", 5), "failed updates changed nothing");
    });

    await t.step("GET lists the caller's configurations only", async () => {
      const a = await call(server, "GET", "/burn/wallets", { token: aliceToken });
      assert.equal(a.status, 200);
      assert.deepEqual(
        a.body.data.map((c: { destinationChain: string }) => c.destinationChain).sort(),
        [
          ...NATIVE_CHAINS,
        ].sort(),
      );
      const b = await call(server, "GET", "/burn/wallets", { token: bobToken });
      assert.deepEqual(b.body.data, [{
        uAssetTransferAddress: transferAddress,
        destinationChain: "sol",
        destinationAddress: valid("sol", 1),
        memo: "ignored-elsewhere",
      }]);
    });
  } finally {
    await server.close();
  }
});

Deno.test("BURN_TRANSFER_ADDRESS overrides the derived transfer address", async () => {
  const fixed = "0x1111111111111111111111111111111111111111";
  const server = await startTestServer({ BURN_TRANSFER_ADDRESS: fixed });
  try {
    const token = await tokenFor(server, randomWallet());
    const other = Deriver.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");
    const res = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sui", destinationAddress: other.depositAddress("sui", 0) },
    });
    assert.equal(res.body.data.uAssetTransferAddress, fixed);
  } finally {
    await server.close();
  }
});
