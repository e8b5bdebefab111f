/**
 * CHAIN_MODE decides which chains run and how (config/chain_mode.ts): sim refuses any live chain, devnet proves its
 * live chains are a local anvil (loopback URL and dev chain id), and a chain a process does not run is never
 * simulated in its place: what concerns it is held. Real anvil nodes, real KV files, the real server over HTTP.
 */
import assert from "node:assert/strict";
import { buildServices } from "../app.ts";
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { isLoopbackUrl, SOL_MAINNET_GENESIS_HASH } from "../config/chain_mode.ts";
import { Signer } from "../chains/signer.ts";
import { loadConfig } from "../config/env.ts";
import { loadSecrets } from "../config/secrets.ts";
import { listHeld } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { watchOnce } from "../actors/watcher.ts";
import type { PipelineContext } from "../actors/context.ts";
import { type Anvil, startAnvil } from "./support/anvil.ts";
import { evmChainEnv } from "./support/live_env.ts";
import { waitUntil } from "./support/chain_facts.ts";
import { depositAddress, FAST_PIPELINE, partner, sim } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer } from "./support/server.ts";

/** Builds the services as main.ts does; resolves with them (closing their KV) or rejects with why they refused. */
async function start(dir: string, env: Record<string, string>) {
  const config = loadConfig({ KV_PATH: `${dir}/kv.sqlite3`, ...env });
  const services = await buildServices(config, await loadSecrets(config, () => {}));
  services.kv.close();
  return services;
}

Deno.test("CHAIN_MODE=sim with BASE_RPC_URLS set is refused at start, naming the variable and the safe modes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chain-mode-sim-" });
  try {
    const env = await evmChainEnv(dir, "http://127.0.0.1:1");
    for (const mode of [{}, { CHAIN_MODE: "sim" }] as Record<string, string>[]) {
      // PIPELINE=off too: /sim would be served beside the live chain's configuration either way.
      for (const pipeline of ["off", "on"]) {
        await assert.rejects(() => start(dir, { ...env, ...mode, PIPELINE: pipeline }), (err: Error) => {
          assert.match(err.message, /CHAIN_MODE=sim refuses BASE_RPC_URLS/);
          assert.match(err.message, /simulated deposit would mint real uAssets/);
          assert.match(err.message, /CHAIN_MODE=live/);
          assert.match(err.message, /CHAIN_MODE=devnet/);
          return true;
        });
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CHAIN_MODE=live with DOGE_RPC_URLS but no live EVM chain is refused at start with why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chain-mode-live-doge-" });
  try {
    // Secrets as a live operator has them (generated here the sim way): the refusal is about chains, not files.
    const secrets = await loadSecrets(loadConfig({ KV_PATH: `${dir}/kv.sqlite3` }), () => {});
    for (const pipeline of ["off", "on"]) {
      const env = { CHAIN_MODE: "live", DOGE_RPC_URLS: "http://u:hunter2@127.0.0.1:1/", PIPELINE: pipeline };
      const config = loadConfig({ KV_PATH: `${dir}/kv.sqlite3`, ...env });
      await assert.rejects(() => buildServices(config, secrets), (err: Error) => {
        assert.match(err.message, /CHAIN_MODE=live needs at least one EVM chain configured/);
        assert.match(err.message, /DOGE_RPC_URLS alone cannot run/);
        assert.match(err.message, /minted as a uAsset on an EVM chain/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CHAIN_MODE=sim with DOGE_RPC_URLS or ZEC_RPC_URLS set is refused at start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chain-mode-sim-utxo-" });
  try {
    for (const variable of ["DOGE_RPC_URLS", "ZEC_RPC_URLS"]) {
      await assert.rejects(
        () => start(dir, { [variable]: "http://127.0.0.1:1" }),
        new RegExp(`CHAIN_MODE=sim refuses ${variable}: sim mode simulates every chain`),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loopback hosts are 127.0.0.0/8, localhost and [::1], nothing else", () => {
  for (const url of ["http://127.0.0.1:8545", "http://127.9.8.7", "http://localhost:1/x", "http://[::1]:8545"]) {
    assert.equal(isLoopbackUrl(url), true, url);
  }
  const outside = [
    "http://128.0.0.1",
    "http://10.0.0.1:8545",
    "http://127.0.0.1.nip.io",
    "https://base-rpc.example",
    "http://localhost.example.com",
    "http://[::2]",
    "not a url",
  ];
  for (const url of outside) assert.equal(isLoopbackUrl(url), false, url);
});

Deno.test("CHAIN_MODE=devnet runs only against a local anvil with the dev chain id", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "chain-mode-devnet-" });
  let mainnetId: Anvil | null = null;
  let dev: Anvil | null = null;
  try {
    await t.step("a URL that is not loopback is refused, before any node is asked", async () => {
      const env = await evmChainEnv(dir, "http://127.0.0.1:1,http://192.0.2.7:8545/key-in-path");
      await assert.rejects(() => start(dir, { ...env, CHAIN_MODE: "devnet", PIPELINE: "on" }), (err: Error) => {
        assert.match(err.message, /CHAIN_MODE=devnet/);
        assert.match(err.message, /loopback/);
        assert.match(err.message, /http:\/\/192\.0\.2\.7:8545/);
        assert.doesNotMatch(err.message, /key-in-path/, "the URL's path (a provider key) is never printed");
        return true;
      });
    });

    await t.step("a loopback node answering a production chain id (Base 8453) is refused", async () => {
      mainnetId = await startAnvil({ chainId: 8453 });
      const env = await evmChainEnv(dir, mainnetId.url);
      for (const pipeline of ["off", "on"]) {
        await assert.rejects(() => start(dir, { ...env, CHAIN_MODE: "devnet", PIPELINE: pipeline }), (err: Error) => {
          assert.match(err.message, /CHAIN_MODE=devnet/);
          assert.match(err.message, /31337/);
          assert.match(err.message, /8453/);
          assert.match(err.message, /BASE_RPC_URLS/);
          return true;
        });
      }
    });

    await t.step(
      "anvil 31337 on 127.0.0.1 is accepted: Base live, the rest simulated, /sim for those only",
      async () => {
        dev = await startAnvil({ chainId: 31337 });
        const server = await startTestServer({
          ...(await evmChainEnv(dir, dev.url)),
          ...FAST_PIPELINE,
          CHAIN_MODE: "devnet",
        });
        try {
          assert.deepEqual(server.services.chainPlan.live, ["base"]);
          assert.deepEqual(server.services.chainPlan.disabled, []);
          assert.ok(!server.services.simulatedChains.includes("base"));
          const mint = await call(server, "GET", "/config/mint");
          assert.equal(mint.body.data.sourceChains.length, NATIVE_CHAINS.length);
          assert.equal(mint.body.data.destinationChains.length, EVM_CHAINS.length);
          const { token } = await partner(server);
          const address = await depositAddress(server, token, "sol", "base");
          assert.ok(await sim(server, "deposits", { chain: "sol", address, amount: "1000000000" }));
          const faucet = await call(server, "POST", "/sim/faucet", {
            body: { chain: "base", address: randomWallet(), token: "uSOL", amount: "1" },
          });
          assert.equal(faucet.status, 400, "the live chain has no simulator");
          assert.match(faucet.body.message, /base is a live chain/);
        } finally {
          await server.close();
        }
      },
    );
  } finally {
    await (mainnetId as Anvil | null)?.stop();
    await (dev as Anvil | null)?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a native deposit whose destination EVM chain is disabled here is held, not minted nor dropped", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  // This process stands still; the watcher below runs by hand with base disabled, as a process without base would.
  await server.pipeline!.stop();
  try {
    const kv = server.services.kv;
    const running = server.services.pipeline!;
    const enabledChains: readonly ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS].filter((c) => c !== "base");
    const ctx: PipelineContext = {
      ...running,
      settings: { ...running.settings, enabledChains, isEnabled: (c) => enabledChains.includes(c) },
    };
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "sol", "base");
    const deposit = await sim(server, "deposits", { chain: "sol", address, amount: "2000000000" });
    await new SimLedger(kv, "sol").sealBlock();
    await waitUntil("the sol watcher past the deposit", async () => {
      const r = await watchOnce(ctx, "sol", "by-hand", 100);
      return r.scannedTo !== null && r.scannedTo >= deposit.blockNumber;
    });
    const held = (await listHeld(kv)).filter((h) => h.chain === "sol");
    assert.equal(held.length, 1, JSON.stringify(held));
    assert.equal(held[0].txHash, deposit.txHash);
    assert.equal(held[0].asset, "native");
    assert.equal(held[0].to, address);
    assert.equal(held[0].amount, "2000000000");
    assert.equal(held[0].reason, "destination chain base is disabled");
    assert.equal((await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders.length, 0);
  } finally {
    await server.close();
  }
});

/**
 * A local server speaking Solana JSON-RPC `getGenesisHash` only (no Solana node runs here), answering `genesis`.
 */
function solanaGenesisServer(genesis: string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    return Response.json(
      body.method === "getGenesisHash"
        ? { jsonrpc: "2.0", id: body.id, result: genesis }
        : { jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "Method not found" } },
    );
  });
  return { url: `http://127.0.0.1:${server.addr.port}/`, close: () => server.shutdown() };
}

Deno.test("CHAIN_MODE=devnet with SOL_RPC_URLS (local server speaking Solana getGenesisHash): mainnet refused, a test cluster live with its hot wallet printed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chain-mode-devnet-sol-" });
  const mainnet = solanaGenesisServer(SOL_MAINNET_GENESIS_HASH);
  const devnet = solanaGenesisServer("EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG");
  try {
    await assert.rejects(
      () => start(dir, { CHAIN_MODE: "devnet", PIPELINE: "off", SOL_RPC_URLS: mainnet.url }),
      /SOL_RPC_URLS http:\/\/127\.0\.0\.1:\d+ answers getGenesisHash "5eykt4[^"]+": that is mainnet/,
    );
    await assert.rejects(
      () => start(dir, { CHAIN_MODE: "sim", SUI_RPC_URLS: devnet.url }),
      /CHAIN_MODE=sim refuses SUI_RPC_URLS/,
    );
    const printed: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    let services;
    try {
      services = await start(dir, { CHAIN_MODE: "devnet", PIPELINE: "off", SOL_RPC_URLS: devnet.url });
    } finally {
      console.log = log;
    }
    assert.deepEqual(services.chainPlan.liveAccount, ["sol"]);
    assert.ok(!services.chainPlan.simulated.includes("sol"));
    const mnemonic = (await loadSecrets(services.config, () => {})).mnemonic;
    const hot = Signer.fromMnemonic(mnemonic).address("sol", 0, "hot");
    assert.ok(
      printed.some((l) => l === `sol hot wallet (payouts are sent from it; fund it): ${hot}`),
      printed.join("\n"),
    );
    assert.ok(!printed.some((l) => l.includes(mnemonic.split(" ").slice(0, 3).join(" "))), "no key material printed");
  } finally {
    await mainnet.close();
    await devnet.close();
    await Deno.remove(dir, { recursive: true });
  }
});
