/**
 * Deploy mode's configuration: detected from Deno Deploy's DENO_DEPLOYMENT_ID or set with RUNTIME_MODE; the KV is
 * the platform's (empty path) unless KV_PATH says otherwise; secrets come from the environment only, and a missing one
 * refuses the start, naming it, without writing anything; the KV handle adds no queue message.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../config/env.ts";
import { minterKeyOf } from "../config/evm.ts";
import { PLACEHOLDER_UASSETS } from "./support/live_env.ts";
import { loadSecrets, newPrivateKeyPem } from "../config/secrets.ts";
import { openKv } from "../kv/open.ts";
import { TEST_MNEMONIC } from "./support/deploy.ts";

const MNEMONIC = TEST_MNEMONIC;

Deno.test("deploy mode: detected from DENO_DEPLOYMENT_ID, RUNTIME_MODE wins, the platform's KV by default", () => {
  assert.equal(loadConfig({}).runtimeMode, "process");
  assert.equal(loadConfig({}).kvPath, "./data/kv.sqlite3");
  const deployed = loadConfig({ DENO_DEPLOYMENT_ID: "abc123" });
  assert.equal(deployed.runtimeMode, "deploy");
  assert.equal(deployed.kvPath, "", "Deno.openKv() with no path: the platform's KV");
  assert.equal(deployed.simConfirmationTimeoutMs, 30 * 60_000);
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc123", RUNTIME_MODE: "process" }).runtimeMode, "process");
  assert.equal(loadConfig({ RUNTIME_MODE: "deploy", KV_PATH: "/tmp/x.sqlite3" }).kvPath, "/tmp/x.sqlite3");
  assert.throws(() => loadConfig({ RUNTIME_MODE: "lambda" }), /RUNTIME_MODE/);
});

Deno.test("deploy mode: secrets from the environment only; a missing one is named and nothing is written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "deploy-secrets-" });
  try {
    const base = { RUNTIME_MODE: "deploy", KV_PATH: `${dir}/kv.sqlite3` };
    await assert.rejects(
      () => loadSecrets(loadConfig(base)),
      new Error(
        "RUNTIME_MODE=deploy needs JWT_PRIVATE_KEY and MASTER_MNEMONIC in the environment (the PEM text and the " +
          "mnemonic themselves, not files): nothing is generated or written in deploy mode; refusing to start without them",
      ),
    );
    const pem = await newPrivateKeyPem();
    await assert.rejects(() => loadSecrets(loadConfig({ ...base, JWT_PRIVATE_KEY: pem })), /needs MASTER_MNEMONIC in/);
    await assert.rejects(
      () => loadSecrets(loadConfig({ ...base, JWT_PRIVATE_KEY: pem, MASTER_MNEMONIC: "not a mnemonic" })),
      /MASTER_MNEMONIC is not a valid BIP39/,
    );
    // A PEM kept on one line with literal \n, as environment variables often hold it.
    const oneLine = pem.replaceAll("\n", "\\n");
    const secrets = await loadSecrets(loadConfig({ ...base, JWT_PRIVATE_KEY: oneLine, MASTER_MNEMONIC: MNEMONIC }));
    assert.equal(secrets.mnemonic, MNEMONIC);
    assert.equal(secrets.jwt.publicJwk.alg, "RS256");
    // *_FILE variables are not read in deploy mode, and nothing was generated.
    const files = [];
    for await (const e of Deno.readDir(dir)) files.push(e.name);
    assert.deepEqual(files, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deploy mode's KV handle: a commit that rings a doorbell commits without enqueuing anything", async () => {
  const dir = await Deno.makeTempDir({ prefix: "deploy-kv-" });
  const kv = await openKv(`${dir}/kv.sqlite3`, { queues: false });
  try {
    const res = await kv.atomic().set(["x"], 1).enqueue({ kind: "wake", orderId: "o1" }).commit();
    assert.ok(res.ok);
    assert.equal((await kv.get(["x"])).value, 1);
    // Nothing was queued: a listener started now receives nothing before a message sent after it.
    let got: unknown[] = [];
    const listening = kv.listenQueue((m) => {
      got = [...got, m];
    });
    const plain = await Deno.openKv(`${dir}/kv.sqlite3`);
    await plain.enqueue("marker");
    while (got.length === 0) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got, ["marker"]);
    plain.close();
    kv.close();
    await listening;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deploy mode: the minter key of live EVM chains comes from EVM_MINTER_KEY, which nothing else reads", async () => {
  const evm = { BASE_RPC_URLS: "http://127.0.0.1:1", BASE_UASSETS: PLACEHOLDER_UASSETS };
  const key = "0x" + "ab".repeat(32);
  assert.throws(
    () => loadConfig({ RUNTIME_MODE: "deploy", ...evm, EVM_MINTER_KEY_FILE: "/run/secrets/minter" }),
    new Error("RUNTIME_MODE=deploy needs EVM_MINTER_KEY when live EVM chains are configured (base)"),
  );
  const deployed = loadConfig({ RUNTIME_MODE: "deploy", ...evm, EVM_MINTER_KEY: key.slice(2) });
  assert.equal(deployed.evm.minterKeyFile, undefined, "no file is read in deploy mode");
  assert.equal(await minterKeyOf(deployed.evm), key);
  assert.throws(
    () => loadConfig({ RUNTIME_MODE: "deploy", ...evm, EVM_MINTER_KEY: "0x1234" }),
    new Error("EVM_MINTER_KEY does not hold a 32-byte hex key"),
  );
  // A long-running process reads keys from 0600 files only; a key in its environment is refused, not used.
  assert.throws(
    () => loadConfig({ ...evm, EVM_MINTER_KEY_FILE: "/x", EVM_MINTER_KEY: key }),
    new Error("EVM_MINTER_KEY is read in deploy mode only; give the key in a file named by EVM_MINTER_KEY_FILE"),
  );
});
