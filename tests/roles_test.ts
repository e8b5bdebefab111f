/**
 * The api and worker roles on one KV file (docs/operations.md "Roles"): the api process is given no mnemonic and no EVM
 * key and builds nothing that derives or signs; it hands out deposit addresses from the pool the worker pre-derives,
 * and the worker mints what is deposited to them. Two api processes racing for addresses never hand out one twice; an
 * empty pool answers 503 and raises the operator alert, writing no wallet; ROLE=api with a mnemonic refuses to start.
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { buildServices, pipelineRuntime } from "../app.ts";
import { NATIVE } from "../chains/catalog.ts";
import { Deriver } from "../chains/derivation.ts";
import { Signer } from "../chains/signer.ts";
import { JWT_KEY_VARIABLES, KEY_MATERIAL_VARIABLES, loadConfig } from "../config/env.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { getAlert } from "../kv/alerts.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { createOperatorKey } from "../kv/operator_keys.ts";
import { createMintWallet, depositPoolSize, listMintWallets, refillDepositPool } from "../kv/mint_wallets.ts";
import { openKv } from "../kv/open.ts";
import { publishTransferAddress } from "../kv/public_config.ts";
import { ChildServer } from "./support/child_server.ts";
import { type Json, terminal } from "./support/pipeline.ts";
import { randomWallet, TEST_BASE_URL } from "./support/server.ts";

const TRANSFER = "0x" + "7e".repeat(20);

/** A KV folder with a JWT key file and, apart from it, the worker's mnemonic file; an API key on the KV. */
async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "issuance-roles-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const jwtFile = `${dir}/jwt.pem`;
  await Deno.mkdir(`${dir}/worker-secrets`);
  const mnemonicFile = `${dir}/worker-secrets/mnemonic.txt`;
  const mnemonic = generateMnemonic(wordlist, 256);
  await Deno.writeTextFile(jwtFile, await newPrivateKeyPem(), { mode: 0o600 });
  await Deno.writeTextFile(mnemonicFile, mnemonic + "\n", { mode: 0o600 });
  const kv = await openKv(kvPath);
  const apiKey = (await createApiKey(kv, "roles-partner")).apiKey;
  const common = { KV_PATH: kvPath, BASE_URL: TEST_BASE_URL, CHAIN_MODE: "sim" };
  const apiEnv = { ...common, ROLE: "api", JWT_PRIVATE_KEY_FILE: jwtFile };
  return { dir, kv, kvPath, apiKey, mnemonic, mnemonicFile, jwtFile, common, apiEnv };
}

async function until<T>(what: string, probe: () => Promise<T | null>, servers: ChildServer[]): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  const logs = await Promise.all(servers.map((s) => s.errTail()));
  throw new Error(`${what}: not after 20 s; server logs: ${logs.join("\n---\n")}`);
}

Deno.test("api and worker on one KV: the api hands out a pooled address, the worker mints a deposit to it", async () => {
  const t = await setup();
  const servers: ChildServer[] = [];
  try {
    const worker = await ChildServer.start(t.dir, {
      ...t.common,
      ROLE: "worker",
      MASTER_MNEMONIC_FILE: t.mnemonicFile,
      SIM_BLOCK_MS: "50",
      SWEEP_MS: "50",
      DEPOSIT_POOL_LOW_WATER: "3",
      DEPOSIT_POOL_REFILL: "5",
    });
    servers.push(worker);
    await until("the worker's sol pool", async () => (await depositPoolSize(t.kv, "sol")) >= 3 || null, servers);
    // The worker signs no token: it was given no JWT key and generated none.
    await assert.rejects(Deno.stat(`${t.dir}/jwt-private-key.pem`), Deno.errors.NotFound);
    // Operators see it on the worker's /metrics (nothing is taken yet, so it cannot have shrunk).
    const operator = (await createOperatorKey(t.kv, { name: "roles-ops", scopes: ["metrics"], by: "test" }))
      .operatorKey;
    const scraped = await worker.call("GET", "/metrics", { token: operator });
    assert.equal(scraped.status, 200);
    const pooled = /^issuance_deposit_pool_available\{chain="sol"\} (\d+)$/m.exec(String(scraped.body));
    assert.ok(pooled && Number(pooled[1]) >= 3, String(scraped.body).slice(0, 200));

    // Exactly what the api process is given: no mnemonic, no EVM key, not even inherited from this process.
    assert.deepEqual(KEY_MATERIAL_VARIABLES.filter((name) => name in t.apiEnv), []);
    const api = await ChildServer.start(t.dir, t.apiEnv, undefined, true);
    servers.push(api);
    // It generated none either (sim mode generates missing secrets into the KV folder).
    await assert.rejects(Deno.stat(`${t.dir}/master-mnemonic.txt`), Deno.errors.NotFound);

    const wallet = randomWallet();
    const token = await api.token(t.apiKey, wallet);
    const created = await api.call("POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // The address of the first index, as the worker's mnemonic derives it: pooled, not invented.
    const expected = Deriver.fromMnemonic(t.mnemonic).depositAddress("sol", 0);
    assert.deepEqual(created.body.data, { address: expected, chain: "sol", destinationChain: "base" });
    const [stored] = await listMintWallets(t.kv, wallet.toLowerCase());
    assert.equal(stored.derivationIndex, 0);

    // The worker serves probes and metrics only: partner routes are the api's.
    assert.equal((await worker.call("GET", "/healthz")).status, 200);
    assert.equal((await worker.call("GET", "/mint/wallets", { token })).status, 404);
    assert.equal((await worker.call("POST", "/auth/token", { body: { walletAddress: wallet } })).status, 404);

    const amount = 2n * NATIVE.sol.minimumDeposit;
    const sent = await api.call("POST", "/sim/deposits", {
      body: { chain: "sol", address: expected, amount: amount.toString() },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const orders: Json[] = await until("the minted deposit", async () => {
      const list = await api.orders(token);
      return list.length === 1 && list.every(terminal) ? list : null;
    }, servers);
    assert.deepEqual(orders.map((o) => [o.type, o.status, o.amount, o.destinationWallet]), [
      ["mint", "completed", amount.toString(), wallet.toLowerCase()],
    ]);
  } finally {
    for (const s of servers) await s.stop();
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("two api processes racing for a pool of 12 hand out 12 distinct addresses, then 503 and an alert", async () => {
  const t = await setup();
  const servers: ChildServer[] = [];
  try {
    // The pool as a worker leaves it (this process stands in for the worker: it holds the mnemonic, the apis do not).
    const deriver = Deriver.fromMnemonic(t.mnemonic);
    const derive = (c: "sol" | "sui" | "xrp" | "doge" | "zec", i: number) => deriver.depositAddress(c, i);
    assert.equal(await refillDepositPool(t.kv, "sui", derive, { lowWater: 1, refill: 12 }), 12);
    await publishTransferAddress(t.kv, TRANSFER);
    const apis = [
      await ChildServer.start(t.dir, t.apiEnv, undefined, true),
      await ChildServer.start(t.dir, t.apiEnv, undefined, true),
    ];
    servers.push(...apis);
    const partners = await Promise.all(Array.from({ length: 16 }, async (_, i) => {
      const wallet = randomWallet();
      return { wallet, api: apis[i % 2], token: await apis[i % 2].token(t.apiKey, wallet) };
    }));
    const answers = await Promise.all(
      partners.map((p) =>
        p.api.call("POST", "/mint/wallets", { token: p.token, body: { chain: "sui", destinationChain: "world" } })
      ),
    );
    const ok = answers.filter((a) => a.status === 201).map((a) => a.body.data.address as string);
    const refused = answers.filter((a) => a.status !== 201);
    assert.equal(ok.length, 12, JSON.stringify(answers.map((a) => a.status)));
    assert.deepEqual(
      ok.toSorted(),
      Array.from({ length: 12 }, (_, i) => deriver.depositAddress("sui", i)).toSorted(),
      "every pooled address once, none twice",
    );
    for (const r of refused) {
      assert.deepEqual([r.status, r.body], [503, {
        success: false,
        message: "Deposit addresses are temporarily unavailable; retry later",
      }]);
    }
    // The four refused partners have no wallet; the alert counts each refusal.
    const walletsOf = await Promise.all(partners.map((p) => listMintWallets(t.kv, p.wallet.toLowerCase())));
    assert.equal(walletsOf.filter((w) => w.length === 0).length, 4);
    const alert = await getAlert(t.kv, "deposit_pool_empty", "sui");
    assert.equal(alert?.count, 4);
    assert.equal(await depositPoolSize(t.kv, "sui"), 0);
  } finally {
    for (const s of servers) await s.stop();
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("ROLE=api with a mnemonic or an EVM key refuses to start, ROLE=worker with the JWT key too", async () => {
  const t = await setup();
  try {
    await assert.rejects(
      ChildServer.start(t.dir, { ...t.apiEnv, MASTER_MNEMONIC_FILE: t.mnemonicFile }, undefined, true),
      /refusing to start: .*ROLE=api must not hold key material, but MASTER_MNEMONIC_FILE is set/,
    );
    for (const name of KEY_MATERIAL_VARIABLES) {
      assert.throws(
        () => loadConfig({ ...t.apiEnv, [name]: "x" }),
        new RegExp(`ROLE=api must not hold key material, but ${name} is set`),
      );
    }
    for (const name of JWT_KEY_VARIABLES) {
      assert.throws(
        () => loadConfig({ ...t.common, ROLE: "worker", [name]: "x" }),
        new RegExp(`ROLE=worker signs no tokens and must not hold the JWT key, but ${name} is set`),
      );
    }
    // Without a worker having published the transfer address, the api says what to start first.
    await assert.rejects(
      buildServices(loadConfig(t.apiEnv)),
      /ROLE=api: no uAsset transfer address is published on this KV yet: start a worker/,
    );
  } finally {
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("what ROLE=api builds holds no Deriver, no Signer and no pipeline", async () => {
  const t = await setup();
  try {
    await publishTransferAddress(t.kv, TRANSFER);
    const services = await buildServices(loadConfig(t.apiEnv));
    try {
      assert.equal(services.deriver, null);
      assert.equal(services.pipeline, null);
      assert.equal(services.uAssetTransferAddress, TRANSFER);
      const found: string[] = [];
      const seen = new Set<unknown>();
      const walk = (v: unknown, path: string, depth: number) => {
        if (v === null || typeof v !== "object" || seen.has(v) || depth > 6) return;
        seen.add(v);
        if (v instanceof Deriver || v instanceof Signer) found.push(path);
        for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`, depth + 1);
      };
      walk(services, "services", 0);
      assert.deepEqual(found, []);
      await assert.rejects(Deno.stat(`${t.dir}/master-mnemonic.txt`), Deno.errors.NotFound);
    } finally {
      services.kv.close();
    }
  } finally {
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("the pool refills below its low-water mark only, from the allocation counter on, and idles without a commit", async () => {
  const t = await setup();
  try {
    const deriver = Deriver.fromMnemonic(t.mnemonic);
    const derive = (c: "sol" | "sui" | "xrp" | "doge" | "zec", i: number) => deriver.depositAddress(c, i);
    const sizes = { lowWater: 2, refill: 3 };
    assert.equal(await refillDepositPool(t.kv, "doge", derive, sizes), 3);
    // Three wait, the mark is two: nothing is written (the pool's end keeps its versionstamp).
    const before = await t.kv.get(["deposit_pool_end", "doge"]);
    assert.equal(await refillDepositPool(t.kv, "doge", derive, sizes), 0);
    assert.equal((await t.kv.get(["deposit_pool_end", "doge"])).versionstamp, before.versionstamp);
    // Two taken from the pool alone (one left, below the mark): the next refill appends indexes 3 to 5.
    for (const dest of ["base", "world"] as const) {
      const made = await createMintWallet(t.kv, "0x" + "ab".repeat(20), "doge", dest, { derive: null, pool: true });
      assert.deepEqual(made.ok && [made.wallet.derivationIndex, made.wallet.address], [
        dest === "base" ? 0 : 1,
        deriver.depositAddress("doge", dest === "base" ? 0 : 1),
      ]);
    }
    assert.equal(await depositPoolSize(t.kv, "doge"), 1);
    assert.equal(await refillDepositPool(t.kv, "doge", derive, sizes), 3);
    assert.equal(await depositPoolSize(t.kv, "doge"), 4);
    const pooled = [];
    for await (
      const e of t.kv.list<{ address: string; derivationIndex: number }>({ prefix: ["deposit_pool", "doge"] })
    ) {
      pooled.push([e.value.derivationIndex, e.value.address]);
    }
    assert.deepEqual(pooled, [2, 3, 4, 5].map((i) => [i, deriver.depositAddress("doge", i)]));
  } finally {
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("the worker's runtime has the deposit pool tick (cron group checks) and fills every native chain; ROLE=all has none", async () => {
  const t = await setup();
  try {
    const env = {
      ...t.common,
      MASTER_MNEMONIC_FILE: t.mnemonicFile,
      DEPOSIT_POOL_LOW_WATER: "2",
      DEPOSIT_POOL_REFILL: "4",
    };
    const worker = await buildServices(loadConfig({ ...env, ROLE: "worker" }));
    try {
      assert.equal(worker.tokens, null, "the worker holds no JWT key");
      worker.pipeline!.log = () => {};
      const runtime = pipelineRuntime(worker)!;
      const tick = runtime.ticks.find((k) => k.name === "deposit pool");
      assert.equal(tick?.group, "checks");
      // One cron run of the group, as Deno Deploy would run it.
      runtime.startCronOnly();
      await runtime.runGroup("checks", 5_000);
      await runtime.stop();
      const deriver = Deriver.fromMnemonic(t.mnemonic);
      for (const chain of ["sol", "xrp", "sui", "doge", "zec"] as const) {
        assert.equal(await depositPoolSize(t.kv, chain), 4, chain);
        const first = await t.kv.get<{ address: string }>(["deposit_pool", chain, 0]);
        assert.equal(first.value?.address, deriver.depositAddress(chain, 0), chain);
      }
    } finally {
      worker.kv.close();
    }
    const all = await buildServices(loadConfig({ ...env, JWT_PRIVATE_KEY_FILE: t.jwtFile }));
    try {
      all.pipeline!.log = () => {};
      assert.equal(pipelineRuntime(all)!.ticks.some((k) => k.name === "deposit pool"), false);
    } finally {
      all.kv.close();
    }
  } finally {
    t.kv.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});
