/** Operator configuration and secrets: defaults, live-mode refusals, sim-mode generation. */
import assert from "node:assert/strict";
import { authMountPath, loadConfig } from "../config/env.ts";
import { loadSecrets, newPrivateKeyPem } from "../config/secrets.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { EVM, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";

Deno.test("configuration defaults and overrides", async (t) => {
  await t.step("defaults make a dev server with nothing set", () => {
    const c = loadConfig({});
    assert.equal(c.port, 8000);
    assert.equal(c.kvPath, "./data/kv.sqlite3");
    assert.equal(c.dataDir, "./data");
    assert.equal(c.baseUrl, "http://localhost:8000");
    assert.equal(c.authUrl, "http://localhost:8000/auth");
    assert.equal(c.chainMode, "sim");
    assert.equal(authMountPath(c), "/auth");
    assert.deepEqual(c.utxo.chains, {}, "no live doge or zec unless DOGE_RPC_URLS / ZEC_RPC_URLS are set");
  });
  await t.step("BASE_URL follows PORT; AUTH_URL follows BASE_URL; empty means unset", () => {
    const c = loadConfig({ PORT: "9100", CHAIN_MODE: "", AUTH_URL: "" });
    assert.equal(c.baseUrl, "http://localhost:9100");
    assert.equal(c.authUrl, "http://localhost:9100/auth");
    const d = loadConfig({ BASE_URL: "https://api.example.com/", AUTH_URL: "https://auth.example.com" });
    assert.equal(d.baseUrl, "https://api.example.com");
    assert.equal(authMountPath(d), "/");
  });
  await t.step("bad values are refused, each named", () => {
    assert.throws(() => loadConfig({ CHAIN_MODE: "prod", PORT: "eighty" }), (e: Error) => {
      assert.match(e.message, /CHAIN_MODE/);
      assert.match(e.message, /PORT/);
      return true;
    });
    assert.throws(() => loadConfig({ BURN_TRANSFER_ADDRESS: "0x12" }), /BURN_TRANSFER_ADDRESS/);
    assert.throws(() => loadConfig({ DOGE_FEE_PER_KB: "1" }), /DOGE_FEE_PER_KB/);
    assert.throws(() => loadConfig({ ZEC_EXPIRY_WINDOW: "2" }), /ZEC_EXPIRY_WINDOW/);
  });
  await t.step(
    "SIM_HOT_WALLET_GENESIS: unset keeps the ledger's default; a whole number of units; else refused",
    () => {
      assert.equal(loadConfig({}).simHotWalletGenesis, undefined);
      assert.equal(loadConfig({ SIM_HOT_WALLET_GENESIS: "0" }).simHotWalletGenesis, 0n);
      assert.equal(loadConfig({ SIM_HOT_WALLET_GENESIS: "25000000" }).simHotWalletGenesis, 25_000_000n);
      for (const bad of ["-1", "1.5", "01", "1e6", "lots"]) {
        assert.throws(() => loadConfig({ SIM_HOT_WALLET_GENESIS: bad }), /SIM_HOT_WALLET_GENESIS/, bad);
      }
    },
  );
});

Deno.test("secrets", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await t.step("live mode refuses to start without key and mnemonic, naming what is missing", async () => {
      const c = loadConfig({ CHAIN_MODE: "live", KV_PATH: `${dir}/live/kv.sqlite3` });
      await assert.rejects(loadSecrets(c, () => {}), /JWT_PRIVATE_KEY_FILE and MASTER_MNEMONIC_FILE/);
      const keyFile = `${dir}/key.pem`;
      await Deno.writeTextFile(keyFile, await newPrivateKeyPem(), { mode: 0o600 });
      await assert.rejects(
        loadSecrets(loadConfig({ CHAIN_MODE: "live", JWT_PRIVATE_KEY_FILE: keyFile }), () => {}),
        (e: Error) => e.message.includes("MASTER_MNEMONIC_FILE") && !e.message.includes("JWT_PRIVATE_KEY_FILE"),
      );
      await assert.rejects(
        loadSecrets(
          loadConfig({ CHAIN_MODE: "live", JWT_PRIVATE_KEY_FILE: keyFile, MASTER_MNEMONIC_FILE: `${dir}/nope` }),
          () => {},
        ),
        /MASTER_MNEMONIC_FILE names .*nope, which does not exist/,
      );
      await assert.rejects(Deno.stat(`${dir}/live`), Deno.errors.NotFound, "live mode generated nothing");
    });
    await t.step("live mode with both files starts; a bad mnemonic is refused without echoing it", async () => {
      const keyFile = `${dir}/key.pem`;
      const words = `${dir}/words.txt`;
      await Deno.writeTextFile(words, "legal winner thank year wave sausage worth useful legal winner thank yellow\n", {
        mode: 0o600,
      });
      const s = await loadSecrets(
        loadConfig({ CHAIN_MODE: "live", JWT_PRIVATE_KEY_FILE: keyFile, MASTER_MNEMONIC_FILE: words }),
        () => {},
      );
      assert.equal(s.mnemonic.split(" ").length, 12);
      assert.equal(s.jwt.publicJwk.alg, "RS256");
      await Deno.writeTextFile(words, "legal winner thank year wave sausage worth useful legal winner thank thank\n");
      await assert.rejects(
        loadSecrets(loadConfig({ CHAIN_MODE: "live", JWT_PRIVATE_KEY_FILE: keyFile, MASTER_MNEMONIC_FILE: words })),
        (e: Error) => !e.message.includes("sausage"),
      );
    });
    await t.step("sim mode generates missing secrets once, with a warning, and reuses them", async () => {
      const c = loadConfig({ KV_PATH: `${dir}/sim/kv.sqlite3` });
      const warnings: string[] = [];
      const first = await loadSecrets(c, (m) => warnings.push(m));
      assert.equal(warnings.length, 2);
      assert.ok(warnings.every((w) => w.startsWith("sim mode: generated")));
      assert.ok(warnings.every((w) => !w.includes(first.mnemonic)), "the warning never shows the secret");
      const mode = (await Deno.stat(`${dir}/sim/master-mnemonic.txt`)).mode! & 0o777;
      assert.equal(mode, 0o600);
      const second = await loadSecrets(c, (m) => warnings.push(m));
      assert.equal(warnings.length, 2, "no second generation");
      assert.equal(second.mnemonic, first.mnemonic);
      assert.equal(second.jwt.publicJwk.kid, first.jwt.publicJwk.kid);
      assert.equal(first.mnemonic.split(" ").length, 24);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("live EVM fee cap: the catalog's by default, <CHAIN>_MAX_FEE_PER_GAS_WEI overrides it, bad values refused", () => {
  const base = {
    BASE_RPC_URLS: "http://127.0.0.1:8545",
    BASE_UASSETS: NATIVE_CHAINS.map((c, i) => `${NATIVE[c].uAsset.symbol}=0x${String(i + 1).repeat(40)}`).join(","),
    EVM_MINTER_KEY_FILE: "/nonexistent/minter.key",
  };
  assert.equal(loadEvmConfig(base).chains.base!.maxFeePerGasWei, EVM.base.maxFeePerGasWei);
  // Above 2^53 wei per gas is still exact: read as bigint.
  const big = "123456789012345678901";
  assert.equal(loadEvmConfig({ ...base, BASE_MAX_FEE_PER_GAS_WEI: big }).chains.base!.maxFeePerGasWei, BigInt(big));
  for (const bad of ["0", "-1", "1.5", "10gwei", "1e9", "1".repeat(31)]) {
    assert.throws(
      () => loadEvmConfig({ ...base, BASE_MAX_FEE_PER_GAS_WEI: bad }),
      /BASE_MAX_FEE_PER_GAS_WEI must be a positive whole number of wei/,
      bad,
    );
  }
});
