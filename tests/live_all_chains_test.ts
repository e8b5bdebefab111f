/**
 * `CHAIN_MODE=live` with all ten chains configured starts, with PIPELINE=on: five anvils, each answering its EVM
 * chain's real chain id (chains/catalog.ts) with the five uAssets deployed, and five native nodes answering MAINNET
 * identity (config/chain_mode.ts `NODE_IDENTITY`, and `getblockchaininfo` chain "main" for doge and zec): sol, xrp and
 * sui on their local protocol servers told to answer mainnet (no validator, rippled or Sui node runs here), zec on the
 * Zebra-shaped server in mainnet, doge on a Bitcoin-Core-shaped server (litecoind regtest cannot claim "main").
 * `GET /config/mint` and `GET /config/burn` list every chain, the start log names no disabled chain, and the three
 * hot-wallet addresses are printed.
 */
import assert from "node:assert/strict";
import { EVM, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { uAssetsEnvValue } from "../chains/evm/deploy.ts";
import { Signer } from "../chains/signer.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { SOL_MAINNET_GENESIS_HASH, SUI_MAINNET_CHAIN_IDENTIFIER } from "../config/chain_mode.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { type Anvil, ANVIL_MNEMONIC, ANVIL_PRIVATE_KEYS, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { startBitcoinCoreServer } from "./support/bitcoin_core_server.ts";
import { type Json } from "./support/pipeline.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { call, startTestServer, type TestServer } from "./support/server.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";
import { privateKeyToAccount } from "viem/accounts";

const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);

/** Runs `fn` with console.log/warn/error captured into `lines` (and not printed). */
async function capturingConsole<T>(lines: string[], fn: () => Promise<T>): Promise<T> {
  const saved = { log: console.log, warn: console.warn, error: console.error };
  const keep = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  console.log = console.warn = console.error = keep;
  try {
    return await fn();
  } finally {
    Object.assign(console, saved);
  }
}

Deno.test("CHAIN_MODE=live starts with all ten chains: five anvils with real chain ids, five native nodes answering mainnet (local protocol servers, no real node)", async () => {
  const closers: (() => Promise<unknown>)[] = [];
  const dir = await Deno.makeTempDir({ prefix: "live-all-chains-" });
  let server: TestServer | null = null;
  try {
    const minterKeyFile = `${dir}/minter.key`;
    const jwt = `${dir}/jwt.pem`;
    const mnemonic = `${dir}/mnemonic.txt`;
    await Deno.writeTextFile(minterKeyFile, `${ANVIL_PRIVATE_KEYS[1]}\n`, { mode: 0o600 });
    await Deno.writeTextFile(jwt, await newPrivateKeyPem(), { mode: 0o600 });
    await Deno.writeTextFile(mnemonic, `${ANVIL_MNEMONIC}\n`, { mode: 0o600 });

    const anvils = await Promise.all(EVM_CHAINS.map(async (chain) => {
      const anvil: Anvil = await startAnvil({ chainId: EVM[chain].chainId });
      closers.push(() => anvil.stop());
      const { addresses, deployedAtBlock } = await deployTestUAssets(anvil.url, minter.address, {
        chain,
        chainId: EVM[chain].chainId,
      });
      return { chain, url: anvil.url, addresses, deployedAtBlock };
    }));
    const sol = startSolanaRpcServer({ genesisHash: SOL_MAINNET_GENESIS_HASH });
    closers.push(() => sol.close());
    const xrp = startRippledServer({ networkId: null });
    closers.push(() => xrp.close());
    const sui = await startSuiGraphqlServer({ chainIdentifier: SUI_MAINNET_CHAIN_IDENTIFIER });
    closers.push(() => sui.close());
    const zec = ZebraShapedServer.start({ network: utxoNetwork("zec", "mainnet") });
    closers.push(() => zec.close());
    const doge = startBitcoinCoreServer({ chain: "main" });
    closers.push(() => doge.close());

    const env: Record<string, string> = {
      CHAIN_MODE: "live",
      PIPELINE: "on",
      JWT_PRIVATE_KEY_FILE: jwt,
      MASTER_MNEMONIC_FILE: mnemonic,
      EVM_MINTER_KEY_FILE: minterKeyFile,
      SOL_RPC_URLS: sol.url,
      XRP_RPC_URLS: xrp.url,
      SUI_RPC_URLS: sui.url,
      DOGE_RPC_URLS: doge.url,
      ZEC_RPC_URLS: zec.url,
    };
    for (const a of anvils) {
      const prefix = a.chain.toUpperCase();
      env[`${prefix}_RPC_URLS`] = a.url;
      env[`${prefix}_UASSETS`] = uAssetsEnvValue(a.addresses);
      env[`${prefix}_START_BLOCK`] = String(a.deployedAtBlock);
    }
    const lines: string[] = [];
    server = await capturingConsole(lines, () => startTestServer(env));
    const log = lines.join("\n");

    assert.equal(server.services.chainPlan.mode, "live");
    assert.deepEqual(server.services.chainPlan.disabled, [], log);
    assert.deepEqual(server.services.chainPlan.simulated, []);
    assert.ok(server.pipeline, "PIPELINE=on runs the pipeline");
    assert.doesNotMatch(log, /disabled/i, "the start log names no disabled chain");
    assert.match(log, /CHAIN_MODE=live: .* live on mainnet/);
    const signer = Signer.fromMnemonic(ANVIL_MNEMONIC);
    for (const chain of ["sol", "xrp", "sui"] as const) {
      assert.ok(
        log.includes(`${chain} hot wallet (payouts are sent from it; fund it): ${signer.address(chain, 0, "hot")}`),
        log,
      );
    }

    const mint = (await call(server, "GET", "/config/mint")).body.data;
    const symbols = (list: Json[]) => list.map((c: Json) => c.symbol).sort();
    assert.deepEqual(symbols(mint.sourceChains), [...NATIVE_CHAINS].sort());
    assert.deepEqual(symbols(mint.destinationChains), [...EVM_CHAINS].sort());
    const burn = (await call(server, "GET", "/config/burn")).body.data;
    assert.deepEqual(symbols(burn.sourceChains), [...EVM_CHAINS].sort());
    assert.deepEqual(symbols(burn.destinationChains), [...NATIVE_CHAINS].sort());
    // Each native node was asked who it is (and answered mainnet, or the start above would have thrown).
    assert.ok(sol.calls.has("getGenesisHash"));
    assert.ok(xrp.hooks.calls.has("server_info"));
    assert.ok(sui.calls.includes("chainIdentifier"));
    assert.ok(doge.calls.includes("getblockchaininfo"));
    assert.deepEqual(doge.unknown, [], "the doge start asks only what a Bitcoin Core node answers here");
  } finally {
    await server?.close();
    for (const close of closers.reverse()) await close();
    await Deno.remove(dir, { recursive: true });
  }
});
