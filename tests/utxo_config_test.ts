/**
 * Live doge and zec configuration (config/utxo.ts), the chain plan with UTXO chains and their networks
 * (config/chain_mode.ts), the proof that each node serves the expected chain, and what the service shows and accepts
 * once doge/zec run. Real parts: Debian's litecoind regtest node (the Bitcoin-Core family Dogecoin Core belongs to),
 * and local HTTP servers that imitate a node's `getblockchaininfo` (named so in each test).
 */
import assert from "node:assert/strict";
import { NATIVE, UTXO_CHAINS } from "../chains/catalog.ts";
import { destinationAddressError } from "../chains/addresses.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { chainPlan, proveChainNodes } from "../config/chain_mode.ts";
import { loadConfig } from "../config/env.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { settingsFromConfig } from "../actors/settings_from_config.ts";
import {
  configuredUtxoFee,
  DOGE_FEE_PER_KB_DEFAULT,
  loadUtxoConfig,
  NO_LIVE_UTXO,
  ZEC_EXPIRY_WINDOW_MAX,
  ZEC_EXPIRY_WINDOW_MIN,
} from "../config/utxo.ts";
import { buildChains } from "../config/registry.ts";
import { pipelineSettings } from "../actors/context.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, simBurnOrders, stepNow } from "./support/burns.ts";
import { PLACEHOLDER_UASSETS } from "./support/live_env.ts";
import { handPipeline } from "./support/watch.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { depositAddress, partner } from "./support/pipeline.ts";
import { call, startTestServer } from "./support/server.ts";

const SECRET = "s3cretPW";
const EVM_ENV = { BASE_RPC_URLS: "http://127.0.0.1:1", BASE_UASSETS: PLACEHOLDER_UASSETS, EVM_MINTER_KEY_FILE: "/x" };

/** Asserts `fn` throws a message matching every pattern and never containing the password. */
function refuses(fn: () => unknown, ...patterns: RegExp[]) {
  assert.throws(fn, (e: Error) => {
    for (const p of patterns) assert.match(e.message, p);
    assert.ok(!e.message.includes(SECRET), `the password leaked: ${e.message}`);
    return true;
  });
}

Deno.test("UTXO configuration: defaults, overrides, every bad value refused by name, no password in any message", async (t) => {
  await t.step("nothing set: no live UTXO chain, 0.01 DOGE/kB, a 40-block zec expiry window", () => {
    const c = loadUtxoConfig({});
    assert.deepEqual(c.chains, {});
    assert.equal(c.dogeFeePerKb, 1_000_000n);
    assert.equal(c.zecExpiryWindow, 40);
    assert.deepEqual(c, NO_LIVE_UTXO);
    assert.deepEqual(loadConfig({}).utxo, NO_LIVE_UTXO);
  });

  await t.step("<CHAIN>_RPC_URLS makes a chain configured, with the catalog's confirmations and the tip", () => {
    const c = loadUtxoConfig({
      DOGE_RPC_URLS: ` http://u:${SECRET}@127.0.0.1:22555/ , https://node.example/doge `,
      ZEC_RPC_URLS: "http://127.0.0.1:8232",
    });
    assert.deepEqual(c.chains.doge!.rpcUrls, [`http://u:${SECRET}@127.0.0.1:22555/`, "https://node.example/doge"]);
    assert.equal(c.chains.doge!.confirmations, 40);
    assert.equal(c.chains.zec!.confirmations, 24);
    for (const chain of UTXO_CHAINS) {
      assert.equal(c.chains[chain]!.startBlock, "tip");
      assert.equal(c.chains[chain]!.blockMs, NATIVE[chain].blockMs);
      assert.equal(c.chains[chain]!.rpcTimeoutMs, 15_000);
      assert.equal(c.chains[chain]!.confirmationTimeoutMs, undefined);
    }
  });

  await t.step("overrides are read exactly", () => {
    const c = loadUtxoConfig({
      DOGE_RPC_URLS: "http://127.0.0.1:1",
      DOGE_CONFIRMATIONS: "6",
      DOGE_START_BLOCK: "5000000",
      DOGE_RPC_TIMEOUT_MS: "2500",
      DOGE_BLOCK_MS: "50",
      DOGE_CONFIRMATION_TIMEOUT_MS: "20000",
      ZEC_RPC_URLS: "http://127.0.0.1:2",
      ZEC_START_BLOCK: "tip",
      DOGE_FEE_PER_KB: "100000",
      ZEC_EXPIRY_WINDOW: "4",
    });
    assert.deepEqual(c.chains.doge, {
      chain: "doge",
      rpcUrls: ["http://127.0.0.1:1"],
      confirmations: 6,
      startBlock: 5_000_000,
      rpcTimeoutMs: 2500,
      blockMs: 50,
      confirmationTimeoutMs: 20_000,
    });
    assert.equal(c.chains.zec!.startBlock, "tip");
    assert.equal(c.dogeFeePerKb, 100_000n);
    assert.equal(typeof c.dogeFeePerKb, "bigint");
    assert.equal(c.zecExpiryWindow, 4);
  });

  await t.step("bad RPC URLs are refused, naming the variable and the entry, never the password", () => {
    const url = (v: string) => () => loadUtxoConfig({ DOGE_RPC_URLS: v });
    refuses(url(`http//u:${SECRET}@127.0.0.1:1`), /DOGE_RPC_URLS entry 1 is not a URL/);
    refuses(url(`http://127.0.0.1:1,ftp://u:${SECRET}@127.0.0.1:2`), /DOGE_RPC_URLS entry 2 must be an http/);
    refuses(url(`http://127.0.0.1:1,,http://127.0.0.1:2`), /DOGE_RPC_URLS entry 2 is empty/);
    refuses(url(`http://:${SECRET}@127.0.0.1:1`), /DOGE_RPC_URLS entry 1 .*password but no user name/);
    refuses(() => loadUtxoConfig({ ZEC_RPC_URLS: `zebra:${SECRET}` }), /ZEC_RPC_URLS entry 1/);
    // The whole configuration refuses the same way (main.ts prints this message).
    refuses(() => loadConfig({ ZEC_RPC_URLS: `ws://u:${SECRET}@127.0.0.1:1` }), /ZEC_RPC_URLS/);
  });

  await t.step("confirmations, start block and timeouts: whole numbers in bounds, else refused by name", () => {
    const bad: [string, string, RegExp][] = [
      ["DOGE_CONFIRMATIONS", "0", /DOGE_CONFIRMATIONS must be from 1/],
      ["ZEC_CONFIRMATIONS", "0", /ZEC_CONFIRMATIONS must be from 1/],
      ["DOGE_CONFIRMATIONS", "-3", /DOGE_CONFIRMATIONS must be a whole number/],
      ["ZEC_CONFIRMATIONS", "2.5", /ZEC_CONFIRMATIONS must be a whole number/],
      ["DOGE_START_BLOCK", "latest", /DOGE_START_BLOCK must be a whole number .*"tip"/],
      ["ZEC_START_BLOCK", "-1", /ZEC_START_BLOCK/],
      ["DOGE_RPC_TIMEOUT_MS", "5s", /DOGE_RPC_TIMEOUT_MS must be a whole number of ms/],
      ["ZEC_RPC_TIMEOUT_MS", "0", /ZEC_RPC_TIMEOUT_MS must be from 100/],
      ["DOGE_BLOCK_MS", "fast", /DOGE_BLOCK_MS/],
      ["ZEC_CONFIRMATION_TIMEOUT_MS", "0", /ZEC_CONFIRMATION_TIMEOUT_MS/],
    ];
    for (const [name, value, pattern] of bad) {
      // Refused with and without URLs: a typo is found before the chain is switched on.
      refuses(() => loadUtxoConfig({ [name]: value }), pattern);
      refuses(() => loadUtxoConfig({ DOGE_RPC_URLS: `http://u:${SECRET}@127.0.0.1:1`, [name]: value }), pattern);
    }
  });

  await t.step("DOGE_FEE_PER_KB: from the 0.001 DOGE/kB minimum relay fee to 1 DOGE/kB, whole koinu", () => {
    assert.equal(loadUtxoConfig({ DOGE_FEE_PER_KB: "100000" }).dogeFeePerKb, 100_000n);
    assert.equal(loadUtxoConfig({ DOGE_FEE_PER_KB: "100000000" }).dogeFeePerKb, 100_000_000n);
    refuses(() => loadUtxoConfig({ DOGE_FEE_PER_KB: "99999" }), /below Dogecoin Core's minimum relay fee/);
    refuses(() => loadUtxoConfig({ DOGE_FEE_PER_KB: "100000001" }), /above the cap/);
    for (const bad of ["0", "0.01", "1e6", "-100000", "1,000,000", "0x100000"]) {
      refuses(() => loadUtxoConfig({ DOGE_FEE_PER_KB: bad }), /DOGE_FEE_PER_KB must be a whole number of koinu/);
    }
  });

  await t.step("ZEC_EXPIRY_WINDOW: at least 4 (nodes refuse expiring-soon), at most a day of blocks", () => {
    assert.equal(loadUtxoConfig({ ZEC_EXPIRY_WINDOW: String(ZEC_EXPIRY_WINDOW_MIN) }).zecExpiryWindow, 4);
    assert.equal(loadUtxoConfig({ ZEC_EXPIRY_WINDOW: String(ZEC_EXPIRY_WINDOW_MAX) }).zecExpiryWindow, 1152);
    refuses(() => loadUtxoConfig({ ZEC_EXPIRY_WINDOW: "3" }), /ZEC_EXPIRY_WINDOW must be from 4 to 1152/);
    refuses(() => loadUtxoConfig({ ZEC_EXPIRY_WINDOW: "1153" }), /ZEC_EXPIRY_WINDOW must be from 4 to 1152/);
    refuses(() => loadUtxoConfig({ ZEC_EXPIRY_WINDOW: "forty" }), /ZEC_EXPIRY_WINDOW must be a whole number/);
  });
});

Deno.test("the configured doge fee rate is applied or refused, never silently replaced by the default", () => {
  for (const chain of UTXO_CHAINS) {
    assert.equal(configuredUtxoFee(chain, NO_LIVE_UTXO)(3, 2), utxoFee(chain)(3, 2), chain);
  }
  // zec has no rate setting: ZIP-317 whatever DOGE_FEE_PER_KB says.
  assert.equal(configuredUtxoFee("zec", { dogeFeePerKb: 100_000n })(1, 2), utxoFee("zec")(1, 2));
  let fee;
  try {
    fee = configuredUtxoFee("doge", { dogeFeePerKb: DOGE_FEE_PER_KB_DEFAULT * 2n });
  } catch (err) {
    // Before utxoFee takes the rate (another branch): refused at start with the reason.
    assert.match((err as Error).message, /DOGE_FEE_PER_KB=2000000 cannot be applied/);
    return;
  }
  assert.ok(fee(1, 2) > utxoFee("doge")(1, 2), "twice the rate costs more than the default");
});

const utxo = (env: Record<string, string>) => loadUtxoConfig(env);
const evm = (env: Record<string, string>) => loadEvmConfig(env);

Deno.test("chain plan with doge and zec in each mode", async (t) => {
  await t.step("sim refuses DOGE_RPC_URLS and ZEC_RPC_URLS like EVM ones; networks mainnet", () => {
    for (const chain of UTXO_CHAINS) {
      const v = `${chain.toUpperCase()}_RPC_URLS`;
      refuses(
        () => chainPlan("sim", evm({}), utxo({ [v]: `http://u:${SECRET}@127.0.0.1:1` })),
        new RegExp(`CHAIN_MODE=sim refuses ${v}`),
        /simulated deposit would mint real uAssets/,
      );
    }
    const plan = chainPlan("sim", evm({}), utxo({}));
    assert.deepEqual(plan.liveUtxo, []);
    assert.deepEqual(plan.utxoNetworks, { doge: "mainnet", zec: "mainnet" });
    assert.ok(plan.simulated.includes("doge") && plan.simulated.includes("zec"));
  });

  await t.step("live: a native chain alone cannot run; it needs a live EVM chain", () => {
    refuses(
      () => chainPlan("live", evm({}), utxo({ DOGE_RPC_URLS: `http://u:${SECRET}@10.0.0.1:22555` })),
      /CHAIN_MODE=live needs at least one EVM chain/,
      /DOGE_RPC_URLS alone cannot run/,
    );
  });

  await t.step("live: configured doge runs on mainnet, unconfigured zec stays disabled", () => {
    const plan = chainPlan("live", evm(EVM_ENV), utxo({ DOGE_RPC_URLS: "https://doge.example" }));
    assert.deepEqual(plan.live, ["base"]);
    assert.deepEqual(plan.liveUtxo, ["doge"]);
    assert.deepEqual(plan.utxoNetworks, { doge: "mainnet", zec: "mainnet" });
    assert.ok(plan.enabled.includes("doge"));
    assert.ok(plan.disabled.includes("zec"));
    assert.deepEqual(plan.simulated, []);
  });

  await t.step("devnet: UTXO URLs must be loopback, named by origin only", () => {
    refuses(
      () => chainPlan("devnet", evm({}), utxo({ ZEC_RPC_URLS: `http://u:${SECRET}@192.0.2.7:8232/` })),
      /CHAIN_MODE=devnet/,
      /loopback/,
      /http:\/\/192\.0\.2\.7:8232/,
    );
  });

  await t.step("devnet: a loopback doge node is live on regtest, zec simulated on mainnet encodings", () => {
    const plan = chainPlan("devnet", evm({}), utxo({ DOGE_RPC_URLS: "http://u:p@127.0.0.1:1" }));
    assert.deepEqual(plan.liveUtxo, ["doge"]);
    assert.deepEqual(plan.utxoNetworks, { doge: "regtest", zec: "mainnet" });
    assert.ok(!plan.simulated.includes("doge"));
    assert.ok(plan.simulated.includes("zec"));
  });

  await t.step("the pipeline settings of a live UTXO chain come from its configuration", () => {
    const config = loadConfig({
      CHAIN_MODE: "devnet",
      DOGE_RPC_URLS: "http://127.0.0.1:1",
      DOGE_CONFIRMATIONS: "2",
      DOGE_START_BLOCK: "7",
      DOGE_BLOCK_MS: "25",
    });
    const plan = chainPlan(config.chainMode, config.evm, config.utxo);
    const s = settingsFromConfig(config, "0x" + "a".repeat(40), plan.enabled, plan);
    assert.equal(s.confirmations("doge"), 2);
    assert.equal(s.startBlock("doge"), 7);
    assert.equal(s.blockMs("doge"), 25);
    assert.equal(s.confirmationTimeoutMs("doge"), NATIVE.doge.confirmationTimeoutMinutes * 60_000);
    assert.equal(s.utxoNetwork("doge"), "regtest");
    assert.equal(s.utxoFee("doge")(2, 2), utxoFee("doge")(2, 2));
    // zec is simulated here: the sim's small depth, mainnet encodings, and no configured value leaks into it.
    assert.equal(s.confirmations("zec"), NATIVE.zec.simConfirmations);
    assert.equal(s.utxoNetwork("zec"), "mainnet");
    assert.equal(s.utxoNetwork("sol"), "mainnet");
    // Without the plan (operator commands): no UTXO chain is live.
    assert.equal(settingsFromConfig(config, "0x" + "a".repeat(40)).confirmations("doge"), NATIVE.doge.simConfirmations);
  });

  await t.step("a live UTXO chain without its configuration and signer is refused by the registry", async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      const plan = chainPlan("devnet", evm({}), utxo({ DOGE_RPC_URLS: "http://127.0.0.1:1" }));
      await assert.rejects(() => buildChains(kv, plan, evm({}), "0x" + "a".repeat(40)), /need their configuration/);
    } finally {
      kv.close();
    }
  });
});

/**
 * A local HTTP server imitating a node's JSON-RPC `getblockchaininfo` (Dogecoin Core and Zebra answer the same
 * `chain` field), answering `chain` as given. Basic auth is required when `password` is set.
 */
function fakeChainInfoNode(chain: string, password?: string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (password && req.headers.get("authorization") !== `Basic ${btoa(`u:${password}`)}`) {
      return new Response("", { status: 401 });
    }
    const body = await req.json();
    if (body.method !== "getblockchaininfo") {
      return Response.json({ result: null, error: { code: -32601, message: "Method not found" }, id: body.id });
    }
    return Response.json({ result: { chain, blocks: 1 }, error: null, id: body.id });
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

async function refusesAsync(fn: () => Promise<unknown>, ...patterns: RegExp[]) {
  await assert.rejects(fn, (e: Error) => {
    for (const p of patterns) assert.match(e.message, p);
    assert.ok(!e.message.includes(SECRET), `the password leaked: ${e.message}`);
    return true;
  });
}

async function prove(mode: "live" | "devnet", env: Record<string, string>) {
  const e = evm(mode === "live" ? EVM_ENV : {});
  const u = utxo(env);
  await proveChainNodes(chainPlan(mode, e, u), e, u);
}

Deno.test("node proofs (local servers imitating getblockchaininfo): each URL alone must answer its mode's chain", async (t) => {
  const main = fakeChainInfoNode("main", SECRET);
  const regtest = fakeChainInfoNode("regtest");
  const test = fakeChainInfoNode("test");
  const withAuth = main.origin.replace("http://", `http://u:${SECRET}@`);
  try {
    await t.step("devnet refuses a mainnet node on loopback, naming the variable and the origin", async () => {
      await refusesAsync(
        () => prove("devnet", { DOGE_RPC_URLS: withAuth }),
        /DOGE_RPC_URLS http:\/\/127\.0\.0\.1:\d+ answers getblockchaininfo chain "main", not "regtest"/,
        /CHAIN_MODE=devnet runs only against a local regtest node/,
      );
    });
    await t.step("devnet asks every URL: a regtest node first does not hide a mainnet one after it", async () => {
      await refusesAsync(
        () => prove("devnet", { ZEC_RPC_URLS: `${regtest.origin},${withAuth}` }),
        /ZEC_RPC_URLS .* answers getblockchaininfo chain "main"/,
      );
      await prove("devnet", { ZEC_RPC_URLS: `${regtest.origin},${regtest.origin}/` });
    });
    await t.step(
      'devnet: zec accepts Zebra\'s regtest answer "test"; doge does not (Dogecoin testnet is another encoding)',
      async () => {
        await prove("devnet", { ZEC_RPC_URLS: test.origin });
        await refusesAsync(() => prove("devnet", { DOGE_RPC_URLS: test.origin }), /chain "test", not "regtest"/);
      },
    );
    await t.step("live refuses a regtest or testnet node and accepts mainnet", async () => {
      await refusesAsync(
        () => prove("live", { DOGE_RPC_URLS: regtest.origin }),
        /answers getblockchaininfo chain "regtest", not "main"/,
        /CHAIN_MODE=live runs doge on mainnet only/,
      );
      await refusesAsync(() => prove("live", { ZEC_RPC_URLS: test.origin }), /chain "test", not "main"/);
      await prove("live", { DOGE_RPC_URLS: withAuth, ZEC_RPC_URLS: withAuth });
    });
    await t.step("a node that cannot be asked (down, wrong password) refuses the start, password unsaid", async () => {
      await refusesAsync(
        () => prove("live", { DOGE_RPC_URLS: main.origin.replace("http://", "http://u:wrong@") }),
        /CHAIN_MODE=live needs to know which chain DOGE_RPC_URLS http:\/\/127\.0\.0\.1:\d+ serves/,
        /HTTP 401/,
      );
      await refusesAsync(
        () => prove("devnet", { DOGE_RPC_URLS: `http://u:${SECRET}@127.0.0.1:1/` }),
        /getblockchaininfo failed/,
      );
    });
  } finally {
    await main.close();
    await regtest.close();
    await test.close();
  }
});

Deno.test("CHAIN_MODE=devnet with a real litecoind regtest node as doge: regtest addresses end to end over HTTP", async (t) => {
  if (!(await litecoindAvailable("devnet doge on litecoind regtest"))) return;
  const node = await startLitecoind({ fund: false });
  // Zebra on regtest answers "test" (its bip70_network_name), as this imitation does.
  const zebra = fakeChainInfoNode("test");
  try {
    // PIPELINE=off: the live UTXO adapters come from another branch; the plan, proofs, addresses and routes are here.
    const server = await startTestServer({
      CHAIN_MODE: "devnet",
      DOGE_RPC_URLS: node.url,
      ZEC_RPC_URLS: zebra.origin,
    });
    try {
      const plan = server.services.chainPlan;
      assert.deepEqual(plan.liveUtxo, ["doge", "zec"]);
      assert.deepEqual(plan.utxoNetworks, { doge: "regtest", zec: "regtest" });

      await t.step("GET /config/mint and /config/burn list doge and zec", async () => {
        const mint = await call(server, "GET", "/config/mint");
        const burn = await call(server, "GET", "/config/burn");
        for (const chain of UTXO_CHAINS) {
          assert.ok(mint.body.data.sourceChains.some((c: { symbol: string }) => c.symbol === chain), chain);
          assert.ok(burn.body.data.destinationChains.some((c: { symbol: string }) => c.symbol === chain), chain);
        }
      });

      const { token } = await partner(server);
      await t.step("doge deposit addresses are regtest P2PKH that litecoind validates; zec ones begin tm", async () => {
        const doge = await depositAddress(server, token, "doge", "base");
        assert.match(doge, /^[mn]/);
        const v = await node.call<{ isvalid: boolean; isscript: boolean }>("validateaddress", [doge]);
        assert.equal(v.isvalid, true, `litecoind regtest rejects ${doge}`);
        assert.equal(v.isscript, false);
        const zec = await depositAddress(server, token, "zec", "base");
        assert.match(zec, /^tm/);
      });

      await t.step(
        "burn destinations: regtest addresses accepted, mainnet ones refused with the spec's message",
        async () => {
          const legacy = await node.call<string>("getnewaddress", ["", "legacy"]);
          const ok = await call(server, "POST", "/burn/wallets", {
            token,
            body: { destinationChain: "doge", destinationAddress: legacy },
          });
          assert.equal(ok.status, 201, JSON.stringify(ok.body));
          const mainnet = await call(server, "PUT", "/burn/wallets", {
            token,
            body: { destinationChain: "doge", destinationAddress: "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC" },
          });
          assert.equal(mainnet.status, 400);
          assert.equal(mainnet.body.message, destinationAddressError("doge", "not an address"));
        },
      );
    } finally {
      await server.close();
    }
  } finally {
    await zebra.close();
    await node.stop();
  }
});

Deno.test("a real litecoind regtest node passes the devnet proof and is refused as a live (mainnet) doge node", async () => {
  if (!(await litecoindAvailable("devnet proof against litecoind regtest"))) return;
  const node = await startLitecoind({ fund: false });
  try {
    await prove("devnet", { DOGE_RPC_URLS: node.url });
    // The same real node is refused as a live (mainnet) doge node.
    await refusesAsync(() => prove("live", { DOGE_RPC_URLS: node.url }), /chain "regtest", not "main"/);
  } finally {
    await node.stop();
  }
});

Deno.test("a burn to doge is checked against the context's network before money leaves (order actor)", async () => {
  const p = await handPipeline();
  try {
    const owner = "0x" + "b1".repeat(20);
    const regtestAddress = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn";
    await ensureUserWallet(p.kv, owner, "test-partner");
    assert.ok((await createBurnConfig(p.kv, owner, "doge", regtestAddress, null)).ok);
    const { ids } = await simBurnOrders(p, "doge", owner, 2);
    const mainnetSettings = p.ctx.settings;
    const regtestSettings = pipelineSettings({
      blockMs: 20,
      confirmationTimeoutMs: 600_000,
      transferAddress: mainnetSettings.transferAddress,
      utxoNetworks: { doge: "regtest" },
    });
    const failure = async (id: string) => {
      for (let i = 0; i < 4; i++) await stepNow(p, id);
      const order = (await allOrders(p.kv)).find((o) => o.id === id)!;
      return order.status === "failed" ? String(order.errorMessage) : null;
    };
    // On mainnet (this sim pipeline's network) the stored regtest destination is refused...
    assert.equal(await failure(ids[0]), "Invalid destination address");
    // ...and on a regtest network it passes that check.
    p.ctx.settings = regtestSettings;
    assert.notEqual(await failure(ids[1]), "Invalid destination address");
  } finally {
    await p.close();
  }
});
