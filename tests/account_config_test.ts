/**
 * Live sol, xrp and sui configuration (config/account.ts over config/native.ts), the chain plan with account chains in
 * each mode (config/chain_mode.ts), the proof that each node serves the expected network, asked of local HTTP servers
 * that speak each protocol's identity question (Solana JSON-RPC `getGenesisHash`, rippled JSON-RPC `server_info`, Sui
 * GraphQL `{ chainIdentifier }`; named so in each test), and the registry calling each chain's factory with the
 * configured options.
 */
import assert from "node:assert/strict";
import { NATIVE } from "../chains/catalog.ts";
import type { AccountAdapterOptions } from "../chains/adapter.ts";
import {
  chainPlan,
  proveChainNodes,
  SOL_MAINNET_GENESIS_HASH,
  SUI_MAINNET_CHAIN_IDENTIFIER,
} from "../config/chain_mode.ts";
import { ACCOUNT_CHAINS, loadAccountConfig, NO_LIVE_ACCOUNT } from "../config/account.ts";
import { loadConfig } from "../config/env.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { settingsFromConfig } from "../actors/settings_from_config.ts";
import { NO_LIVE_UTXO } from "../config/utxo.ts";
import { buildChains, liveSigner } from "../config/registry.ts";
import { Signer } from "../chains/signer.ts";
import { PLACEHOLDER_UASSETS } from "./support/live_env.ts";

const SECRET = "s3cretPW";
const EVM_ENV = { BASE_RPC_URLS: "http://127.0.0.1:1", BASE_UASSETS: PLACEHOLDER_UASSETS, EVM_MINTER_KEY_FILE: "/x" };
const MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const evm = (env: Record<string, string>) => loadEvmConfig(env);
const account = (env: Record<string, string>) => loadAccountConfig(env);

function refuses(fn: () => unknown, ...patterns: RegExp[]) {
  assert.throws(fn, (e: Error) => {
    for (const p of patterns) assert.match(e.message, p);
    assert.ok(!e.message.includes(SECRET), `the password leaked: ${e.message}`);
    return true;
  });
}

async function refusesAsync(fn: () => Promise<unknown>, ...patterns: RegExp[]) {
  await assert.rejects(fn, (e: Error) => {
    for (const p of patterns) assert.match(e.message, p);
    assert.ok(!e.message.includes(SECRET), `the password leaked: ${e.message}`);
    return true;
  });
}

Deno.test("account chain configuration: defaults, overrides, every bad value refused by name, no password in any message", async (t) => {
  await t.step("nothing set: no live sol, xrp or sui", () => {
    assert.deepEqual(loadAccountConfig({}), NO_LIVE_ACCOUNT);
    assert.deepEqual(loadConfig({}).account.chains, {});
  });

  await t.step("<CHAIN>_RPC_URLS makes each chain configured, with confirmations 1 on its flag and the tip", () => {
    const c = account({
      SOL_RPC_URLS: ` https://u:${SECRET}@sol.example/rpc , http://127.0.0.1:8899 `,
      XRP_RPC_URLS: "http://127.0.0.1:5005",
      SUI_RPC_URLS: "https://graphql.mainnet.sui.io/graphql",
    });
    assert.deepEqual(c.chains.sol, {
      chain: "sol",
      rpcUrls: [`https://u:${SECRET}@sol.example/rpc`, "http://127.0.0.1:8899"],
      confirmations: 1,
      startBlock: "tip",
      rpcTimeoutMs: 15_000,
      blockMs: NATIVE.sol.blockMs,
    });
    assert.equal(c.chains.xrp!.blockMs, NATIVE.xrp.blockMs);
    assert.deepEqual(c.chains.sui!.rpcUrls, ["https://graphql.mainnet.sui.io/graphql"]);
  });

  await t.step("overrides: confirmations, start slot / ledger / checkpoint, timeouts, block time", () => {
    const c = account({
      SOL_RPC_URLS: "http://127.0.0.1:1",
      SOL_CONFIRMATIONS: "3",
      SOL_START_BLOCK: "312000000",
      SOL_RPC_TIMEOUT_MS: "2500",
      SOL_BLOCK_MS: "450",
      SOL_CONFIRMATION_TIMEOUT_MS: "60000",
      XRP_RPC_URLS: "http://127.0.0.1:2",
      XRP_START_BLOCK: "tip",
      SUI_RPC_URLS: "http://127.0.0.1:3",
      SUI_START_BLOCK: "150000000",
    });
    assert.deepEqual(c.chains.sol, {
      chain: "sol",
      rpcUrls: ["http://127.0.0.1:1"],
      confirmations: 3,
      startBlock: 312_000_000,
      rpcTimeoutMs: 2500,
      blockMs: 450,
      confirmationTimeoutMs: 60_000,
    });
    assert.equal(c.chains.xrp!.startBlock, "tip");
    assert.equal(c.chains.sui!.startBlock, 150_000_000);
  });

  await t.step("every bad value is refused with a sentence naming its variable, even before URLs are set", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SOL_RPC_URLS: "ftp://sol.example" }, /SOL_RPC_URLS entry 1 must be an http or https URL, not ftp/],
      [{ XRP_RPC_URLS: "not a url" }, /XRP_RPC_URLS entry 1 is not a URL/],
      [{ SUI_RPC_URLS: "https://a.example/graphql,,https://b.example" }, /SUI_RPC_URLS entry 2 is empty/],
      [
        { SOL_RPC_URLS: `http://:${SECRET}@sol.example` },
        /SOL_RPC_URLS entry 1 \(http:\/\/sol\.example\) has a password but no user name/,
      ],
      [{ SOL_CONFIRMATIONS: "0" }, /SOL_CONFIRMATIONS must be from 1 to 100000 \(got 0\)/],
      [{ XRP_CONFIRMATIONS: "two" }, /XRP_CONFIRMATIONS must be a whole number/],
      [{ SOL_START_BLOCK: "latest" }, /SOL_START_BLOCK must be a whole number \(a slot\) or "tip"/],
      [{ XRP_START_BLOCK: "-5" }, /XRP_START_BLOCK must be a whole number \(a ledger index\) or "tip"/],
      [{ SUI_START_BLOCK: "1e9" }, /SUI_START_BLOCK must be a whole number \(a checkpoint sequence number\) or "tip"/],
      [{ SUI_RPC_TIMEOUT_MS: "5s" }, /SUI_RPC_TIMEOUT_MS must be a whole number of ms/],
      [{ SOL_RPC_TIMEOUT_MS: "10" }, /SOL_RPC_TIMEOUT_MS must be from 100 to 600000 of ms/],
      [{ XRP_BLOCK_MS: "4.5" }, /XRP_BLOCK_MS must be a whole number of ms/],
      [{ SUI_CONFIRMATION_TIMEOUT_MS: "0" }, /SUI_CONFIRMATION_TIMEOUT_MS must be from 1 to/],
    ];
    for (const [env, pattern] of cases) {
      refuses(() => account(env), pattern);
      // The same refusal at start, through the whole configuration.
      refuses(() => loadConfig(env), pattern);
    }
  });

  await t.step("a URL's password never appears in a message, only its origin", () => {
    refuses(
      () => account({ XRP_RPC_URLS: `https://u:${SECRET}@xrp.example/${SECRET},mailto:${SECRET}@x` }),
      /XRP_RPC_URLS entry 2 must be an http or https URL, not mailto/,
    );
  });
});

Deno.test("chain plan with sol, xrp and sui in each mode", async (t) => {
  await t.step("sim refuses SOL_RPC_URLS, XRP_RPC_URLS and SUI_RPC_URLS like every other chain's", () => {
    for (const chain of ACCOUNT_CHAINS) {
      const v = `${chain.toUpperCase()}_RPC_URLS`;
      refuses(
        () => chainPlan("sim", evm({}), NO_LIVE_UTXO, account({ [v]: `http://u:${SECRET}@127.0.0.1:1` })),
        new RegExp(`CHAIN_MODE=sim refuses ${v}`),
        /simulated deposit would mint real uAssets/,
      );
    }
    const plan = chainPlan("sim", evm({}), NO_LIVE_UTXO, account({}));
    assert.deepEqual(plan.liveAccount, []);
    for (const c of ACCOUNT_CHAINS) assert.ok(plan.simulated.includes(c));
  });

  await t.step("live: account chains alone cannot run; they need a live EVM chain", () => {
    refuses(
      () => chainPlan("live", evm({}), NO_LIVE_UTXO, account({ SOL_RPC_URLS: "https://sol.example" })),
      /CHAIN_MODE=live needs at least one EVM chain/,
      /SOL_RPC_URLS alone cannot run/,
    );
  });

  await t.step("live: configured sol and sui run, unconfigured xrp is disabled, nothing simulated", () => {
    const plan = chainPlan(
      "live",
      evm(EVM_ENV),
      NO_LIVE_UTXO,
      account({ SOL_RPC_URLS: "https://sol.example", SUI_RPC_URLS: "https://sui.example/graphql" }),
    );
    assert.deepEqual(plan.liveAccount, ["sol", "sui"]);
    assert.ok(plan.enabled.includes("sol") && plan.enabled.includes("sui"));
    assert.ok(plan.disabled.includes("xrp"));
    assert.deepEqual(plan.simulated, []);
  });

  await t.step("devnet: account chains' URLs must be loopback, named by origin only", () => {
    for (const chain of ACCOUNT_CHAINS) {
      refuses(
        () =>
          chainPlan(
            "devnet",
            evm({}),
            NO_LIVE_UTXO,
            account({ [`${chain.toUpperCase()}_RPC_URLS`]: `http://u:${SECRET}@192.0.2.7:8899/${SECRET}` }),
          ),
        /CHAIN_MODE=devnet/,
        /loopback/,
        /http:\/\/192\.0\.2\.7:8899/,
      );
    }
  });

  await t.step("devnet: a loopback xrp node is live, sol and sui simulated", () => {
    const plan = chainPlan("devnet", evm({}), NO_LIVE_UTXO, account({ XRP_RPC_URLS: "http://127.0.0.1:5005" }));
    assert.deepEqual(plan.liveAccount, ["xrp"]);
    assert.ok(!plan.simulated.includes("xrp"));
    assert.ok(plan.simulated.includes("sol") && plan.simulated.includes("sui"));
  });

  await t.step("the pipeline settings of a live account chain come from its configuration", () => {
    const config = loadConfig({
      CHAIN_MODE: "devnet",
      SOL_RPC_URLS: "http://127.0.0.1:1",
      SOL_CONFIRMATIONS: "3",
      SOL_START_BLOCK: "77",
      SOL_BLOCK_MS: "25",
      SOL_CONFIRMATION_TIMEOUT_MS: "9000",
    });
    const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
    const s = settingsFromConfig(config, "0x" + "a".repeat(40), plan.enabled, plan);
    assert.deepEqual(s.finality("sol"), NATIVE.sol.finality, "a flag chain keeps its flag");
    assert.equal(s.confirmations("sol"), 3, "and needs the configured confirmations on top of it");
    assert.equal(s.startBlock("sol"), 77);
    assert.equal(s.blockMs("sol"), 25);
    assert.equal(s.confirmationTimeoutMs("sol"), 9000);
    // xrp is simulated here: the sim's small depth.
    assert.equal(s.confirmations("xrp"), NATIVE.xrp.simConfirmations);
    // A live flag chain without an override: one confirmation (being final), the catalog's timeout.
    const plain = loadConfig({ CHAIN_MODE: "devnet", SUI_RPC_URLS: "http://127.0.0.1:1" });
    const p2 = chainPlan(plain.chainMode, plain.evm, plain.utxo, plain.account);
    const s2 = settingsFromConfig(plain, "0x" + "a".repeat(40), p2.enabled, p2);
    assert.equal(s2.confirmations("sui"), 1);
    assert.equal(s2.confirmationTimeoutMs("sui"), NATIVE.sui.confirmationTimeoutMinutes * 60_000);
    assert.equal(s2.startBlock("sui"), "tip");
  });
});

/**
 * A local HTTP server speaking one chain's identity question: Solana JSON-RPC 2.0 `getGenesisHash`, rippled
 * JSON-RPC `server_info` (its `info.network_id`, left out when `networkId` is undefined, as mainnet rippled may), or
 * Sui GraphQL `{ chainIdentifier }`. Anything else gets the protocol's error. Basic auth when `password` is set.
 */
function identityServer(
  kind: "solana-jsonrpc" | "rippled-jsonrpc" | "sui-graphql",
  answer: { genesis?: string; networkId?: number; chainIdentifier?: string },
  password?: string,
) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (password && req.headers.get("authorization") !== `Basic ${btoa(`u:${password}`)}`) {
      return new Response("", { status: 401 });
    }
    const body = await req.json();
    switch (kind) {
      case "solana-jsonrpc":
        if (body.jsonrpc !== "2.0" || body.method !== "getGenesisHash") {
          return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "Method not found" } });
        }
        return Response.json({ jsonrpc: "2.0", id: body.id, result: answer.genesis });
      case "rippled-jsonrpc": {
        if (body.method !== "server_info") {
          return Response.json({ result: { error: "unknownCmd", status: "error", request: body } });
        }
        const info: Record<string, unknown> = {
          build_version: "2.4.0",
          complete_ledgers: "32570-99000000",
          validated_ledger: { seq: 99000000 },
        };
        if (answer.networkId !== undefined) info.network_id = answer.networkId;
        return Response.json({ result: { info, status: "success" } });
      }
      case "sui-graphql":
        if (typeof body.query !== "string" || !/\{\s*chainIdentifier\s*\}/.test(body.query)) {
          return Response.json({ errors: [{ message: "unknown query" }] });
        }
        return Response.json({ data: { chainIdentifier: answer.chainIdentifier } });
    }
  });
  const origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    url: password ? origin.replace("http://", `http://u:${password}@`) + "/" : origin + "/",
    close: () => server.shutdown(),
  };
}

async function prove(mode: "live" | "devnet", env: Record<string, string>) {
  const e = evm(mode === "live" ? EVM_ENV : {});
  const a = account(env);
  const plan = chainPlan(mode, e, NO_LIVE_UTXO, a);
  // Live EVM nodes prove their chain id when their adapters are built; here only the native proofs are asked.
  await proveChainNodes({ ...plan, live: mode === "live" ? [] : plan.live }, e, NO_LIVE_UTXO, a);
}

Deno.test("node proofs (local servers speaking Solana getGenesisHash, rippled server_info, Sui GraphQL chainIdentifier): each URL alone", async (t) => {
  const solMain = identityServer("solana-jsonrpc", { genesis: SOL_MAINNET_GENESIS_HASH }, SECRET);
  const solDev = identityServer("solana-jsonrpc", { genesis: "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG" });
  const xrpMain = identityServer("rippled-jsonrpc", { networkId: 0 });
  const xrpMainNoId = identityServer("rippled-jsonrpc", {});
  const xrpTest = identityServer("rippled-jsonrpc", { networkId: 1 });
  const suiMain = identityServer("sui-graphql", { chainIdentifier: SUI_MAINNET_CHAIN_IDENTIFIER });
  const suiTest = identityServer("sui-graphql", { chainIdentifier: "4c78adac" });
  const wrong = identityServer("sui-graphql", { chainIdentifier: "4c78adac" }); // a GraphQL server on SOL_RPC_URLS
  try {
    await t.step("live accepts mainnet's answer from each (xrp: network_id 0 or none)", async () => {
      await prove("live", {
        SOL_RPC_URLS: solMain.url,
        XRP_RPC_URLS: `${xrpMain.url},${xrpMainNoId.url}`,
        SUI_RPC_URLS: suiMain.url,
      });
    });

    await t.step("live refuses a devnet/testnet identity, naming the variable, the origin and the answer", async () => {
      await refusesAsync(
        () => prove("live", { SOL_RPC_URLS: `${solMain.url},${solDev.url}` }),
        new RegExp(`SOL_RPC_URLS ${solDev.origin} answers getGenesisHash "EtWTRABZ[^"]+", not genesis hash`),
        /CHAIN_MODE=live runs sol on mainnet only/,
      );
      await refusesAsync(
        () => prove("live", { XRP_RPC_URLS: xrpTest.url }),
        new RegExp(`XRP_RPC_URLS ${xrpTest.origin} answers server_info network_id 1, not network_id 0 or none`),
      );
      await refusesAsync(
        () => prove("live", { SUI_RPC_URLS: suiTest.url }),
        new RegExp(`SUI_RPC_URLS ${suiTest.origin} answers chainIdentifier "4c78adac", not chainIdentifier 35834a8a`),
      );
    });

    await t.step("devnet refuses mainnet's identity on loopback and accepts a test network's", async () => {
      await refusesAsync(
        () => prove("devnet", { SOL_RPC_URLS: solMain.url }),
        new RegExp(
          `SOL_RPC_URLS ${solMain.origin} answers getGenesisHash "${SOL_MAINNET_GENESIS_HASH}": that is mainnet`,
        ),
        /CHAIN_MODE=devnet runs only against a local test node/,
      );
      await refusesAsync(
        () => prove("devnet", { XRP_RPC_URLS: xrpMainNoId.url }),
        new RegExp(`XRP_RPC_URLS ${xrpMainNoId.origin} answers server_info network_id "absent": that is mainnet`),
      );
      await refusesAsync(
        () => prove("devnet", { XRP_RPC_URLS: xrpMain.url }),
        /answers server_info network_id 0: that is mainnet/,
      );
      await refusesAsync(
        () => prove("devnet", { SUI_RPC_URLS: `${suiTest.url},${suiMain.url}` }),
        new RegExp(`SUI_RPC_URLS ${suiMain.origin} answers chainIdentifier "35834a8a": that is mainnet`),
      );
      await prove("devnet", { SOL_RPC_URLS: solDev.url, XRP_RPC_URLS: xrpTest.url, SUI_RPC_URLS: suiTest.url });
    });

    await t.step("a node of another protocol, or none, is refused with what it answered", async () => {
      await refusesAsync(
        () => prove("devnet", { SOL_RPC_URLS: wrong.url }),
        new RegExp(`SOL_RPC_URLS ${wrong.origin} does not answer getGenesisHash as a sol node would`),
      );
      await refusesAsync(
        () => prove("live", { XRP_RPC_URLS: `http://u:${SECRET}@127.0.0.1:9/` }),
        /CHAIN_MODE=live needs to know which network XRP_RPC_URLS http:\/\/127\.0\.0\.1:9 serves, and server_info network_id failed/,
      );
      // Wrong credentials: the node answered nothing usable; the password never shows.
      await refusesAsync(
        () => prove("live", { SOL_RPC_URLS: solMain.url.replace(SECRET, "wrong" + SECRET) }),
        /SOL_RPC_URLS http:\/\/127\.0\.0\.1:\d+ serves, and getGenesisHash failed/,
      );
    });
  } finally {
    for (const s of [solMain, solDev, xrpMain, xrpMainNoId, xrpTest, suiMain, suiTest, wrong]) await s.close();
  }
});

Deno.test("registry: each live account chain's factory is called with its URLs, timeout, the signer and confirmations", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const config = loadConfig({
      CHAIN_MODE: "devnet",
      SOL_RPC_URLS: "http://127.0.0.1:8899,http://127.0.0.1:8900",
      SOL_RPC_TIMEOUT_MS: "2500",
      SOL_CONFIRMATIONS: "4",
      SUI_RPC_URLS: "http://127.0.0.1:9000/graphql",
    });
    const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
    const settings = settingsFromConfig(config, "0x" + "a".repeat(40), plan.enabled, plan);
    const signer = liveSigner(plan, MNEMONIC)!;
    assert.ok(signer instanceof Signer);
    assert.equal(liveSigner({ ...plan, liveAccount: [], liveUtxo: [] }, MNEMONIC), undefined, "no live chain, no key");

    // Without a seam, the real factories build the live adapters (no node is asked until they are used).
    const real = (await buildChains(kv, plan, config.evm, "0x" + "a".repeat(40), {
      account: { config: config.account, signer, settings },
    })).chains;
    assert.equal(real.payer("sol").hotWallet, signer.address("sol", 0, "hot"));
    assert.equal(real.payer("sui").hotWallet, signer.address("sui", 0, "hot"));
    assert.deepEqual(real.reader("sol").finality, { kind: "flag", flag: "finalized" });

    const calls: [string, AccountAdapterOptions][] = [];
    const fake = (chain: "sol" | "sui") => (opts: AccountAdapterOptions) => {
      calls.push([chain, opts]);
      const reader = { chain, marker: `${chain}-reader` } as never;
      const payer = { chain, family: "account", hotWallet: opts.signer.address(chain, 0, "hot") } as never;
      return { reader, payer };
    };
    const { chains } = await buildChains(kv, plan, config.evm, "0x" + "a".repeat(40), {
      account: { config: config.account, signer, settings, factories: { sol: fake("sol"), sui: fake("sui") } },
    });
    assert.deepEqual(calls.map(([c]) => c), ["sol", "sui"]);
    const [[, sol], [, sui]] = calls;
    assert.deepEqual(sol.urls, ["http://127.0.0.1:8899", "http://127.0.0.1:8900"]);
    assert.equal(sol.timeoutMs, 2500);
    assert.equal(sol.confirmations, 4);
    assert.equal(sol.signer, signer);
    assert.deepEqual(sol.detection, config.account.solDetection, "SOL_DETECTION reaches the sol reader");
    assert.equal(sui.detection, undefined, "only sol polls addresses");
    assert.deepEqual(sui.urls, ["http://127.0.0.1:9000/graphql"]);
    assert.equal(sui.timeoutMs, 15_000);
    assert.equal(sui.confirmations, 1);
    // The registry serves what the factories built; xrp (not configured) stays simulated in devnet.
    assert.equal((chains.reader("sol") as unknown as { marker: string }).marker, "sol-reader");
    assert.equal(chains.payer("sui").hotWallet, signer.address("sui", 0, "hot"));
    assert.equal(
      chains.payer("xrp").hotWallet,
      (await import("../chains/sim/adapters.ts")).defaultSimOperatorAddress("xrp"),
    );

    // A live account chain without its configuration and signer is refused.
    await assert.rejects(() => buildChains(kv, plan, config.evm, "0x" + "a".repeat(40)), /need their configuration/);
  } finally {
    kv.close();
  }
});
