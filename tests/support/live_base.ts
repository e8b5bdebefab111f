/**
 * A live Base on anvil for the live-chain tests: anvil with the dev chain id (or Base's own for live-mode tests), the
 * five uAssets deployed from contracts/, the service's environment for it, and helpers to read balances and Minted
 * logs, fund a holder and send real transfers.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  keccak256,
  parseAbiItem,
  type PublicClient,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { UAsset } from "../../chains/catalog.ts";
import { uAssetsEnvValue } from "../../chains/evm/deploy.ts";
import { DEVNET_CHAIN_ID } from "../../config/chain_mode.ts";
import { UASSET_ABI } from "../../contracts/uasset.ts";
import { type Anvil, ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./anvil.ts";

export const deployer = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
export const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
/** A partner's wallet that holds uAssets and burns them with real transfers. */
export const holder = privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]);
const MINTED_LOG = parseAbiItem("event Minted(bytes32 indexed depositId, address indexed to, uint256 amount)");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LiveBase {
  anvil: Anvil;
  dir: string;
  minterKeyFile: string;
  uAssets: Record<UAsset, Address>;
  deployedAt: bigint;
  client: PublicClient;
  /** The service's environment for this chain; `over` wins. */
  env(over?: Record<string, string>): Record<string, string>;
  balanceOf(asset: UAsset, who: string): Promise<bigint>;
  minted(asset: UAsset, depositId: string): Promise<boolean>;
  mintedLogs(asset: UAsset, depositId: string): Promise<{ transactionHash: string }[]>;
  mine(blocks?: number): Promise<unknown>;
  /** `evm_mine` every `ms` until the returned stop is awaited, so confirmations accrue. */
  mineEvery(ms: number): () => Promise<void>;
  /** The deployer takes MINTER_ROLE too and mints `amount` of `asset` to `to` (test funding, not the service). */
  fund(asset: UAsset, to: Address, amount: bigint): Promise<void>;
  /** A real ERC-20 transfer by `holder`, mined by automine. */
  transfer(asset: UAsset, to: string, amount: bigint): Promise<Hex>;
  close(): Promise<void>;
}

/** Devnet's anvil (31337) by default; live-mode tests pass Base's own chain id. */
export async function liveBase(chainId = DEVNET_CHAIN_ID): Promise<LiveBase> {
  const anvil = await startAnvil({ chainId });
  const dir = await Deno.makeTempDir({ prefix: "evm-live-test-" });
  try {
    const minterKeyFile = `${dir}/minter.key`;
    await Deno.writeTextFile(minterKeyFile, `${ANVIL_PRIVATE_KEYS[1]}\n`, { mode: 0o600 });
    const { addresses: uAssets, deployedAtBlock } = await deployTestUAssets(anvil.url, minter.address, { chainId });
    const chain = defineChain({
      id: chainId,
      name: "anvil-base",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [anvil.url] } },
    });
    const client = createPublicClient({ chain, transport: http(anvil.url), cacheTime: 0 }) as PublicClient;
    const wallet = (account: typeof deployer) => createWalletClient({ account, chain, transport: http(anvil.url) });
    const waitMined = async (hash: Hex) => {
      const r = await client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
      assert.equal(r.status, "success", `test transaction ${hash} reverted`);
    };
    const funders = new Map<UAsset, Promise<void>>();
    return {
      anvil,
      dir,
      minterKeyFile,
      uAssets,
      deployedAt: deployedAtBlock,
      client,
      env: (over = {}) => ({
        CHAIN_MODE: chainId === DEVNET_CHAIN_ID ? "devnet" : "live",
        BASE_RPC_URLS: anvil.url,
        BASE_UASSETS: uAssetsEnvValue(uAssets),
        EVM_MINTER_KEY_FILE: minterKeyFile,
        BASE_CONFIRMATIONS: "2",
        BASE_BLOCK_MS: "50",
        BASE_START_BLOCK: String(deployedAtBlock),
        ...over,
      }),
      balanceOf: (asset, who) =>
        client.readContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "balanceOf",
          args: [who.toLowerCase() as Address],
        }),
      minted: (asset, depositId) =>
        client.readContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "minted",
          args: [depositId as Hex],
        }),
      mintedLogs: async (asset, depositId) =>
        (await client.getLogs({
          address: uAssets[asset],
          event: MINTED_LOG,
          args: { depositId: depositId as Hex },
          fromBlock: 0n,
          toBlock: "latest",
        })).filter((l) => !l.removed),
      mine: (blocks = 1) => anvilRpc(anvil.url, "anvil_mine", [toHex(blocks)]),
      mineEvery(ms) {
        let running = true;
        const loop = (async () => {
          while (running) {
            await anvilRpc(anvil.url, "evm_mine").catch(() => {});
            await sleep(ms);
          }
        })();
        return async () => {
          running = false;
          await loop;
        };
      },
      async fund(asset, to, amount) {
        // The admin makes itself a minter of this uAsset with an allowance far above any test's funding
        // (docs/live-chains.md "Minter allowance": the role alone mints nothing).
        let ready = funders.get(asset);
        if (!ready) {
          ready = (async () => {
            const role = await wallet(deployer).writeContract({
              address: uAssets[asset],
              abi: UASSET_ABI,
              functionName: "configureMinter",
              args: [deployer.address, 2n ** 200n],
            });
            await waitMined(role);
          })();
          funders.set(asset, ready);
        }
        await ready;
        const hash = await wallet(deployer).writeContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "mint",
          args: [to, amount, keccak256(toHex(`evm-live-test:fund:${to}:${amount}`))],
        });
        await waitMined(hash);
      },
      async transfer(asset, to, amount) {
        const hash = await wallet(holder).writeContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "transfer",
          args: [to as Address, amount],
        });
        await waitMined(hash);
        return hash;
      },
      async close() {
        await anvil.stop();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (err) {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
}
