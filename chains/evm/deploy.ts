/**
 * Deploys the five uAssets to one EVM chain: the deployer becomes admin, the minter gets MINTER_ROLE. Used by
 * `deno task admin evm deploy --chain <symbol>` and by the live-EVM tests.
 */
import { createWalletClient, http, type LocalAccount, publicActions } from "viem";
import { UASSET_ABI, UASSET_BYTECODE } from "../../contracts/uasset.ts";
import { EVM, type EvmChain, NATIVE, NATIVE_CHAINS, type UAsset } from "../catalog.ts";

export async function deployUAssets(opts: {
  chain: EvmChain;
  rpcUrl: string;
  deployer: LocalAccount;
  minter: `0x${string}`;
  chainId?: number;
}): Promise<{ addresses: Record<UAsset, `0x${string}`>; deployedAtBlock: bigint }> {
  const chainId = opts.chainId ?? EVM[opts.chain].chainId;
  const client = createWalletClient({
    account: opts.deployer,
    chain: {
      id: chainId,
      name: EVM[opts.chain].name,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [opts.rpcUrl] } },
    },
    transport: http(opts.rpcUrl),
  }).extend(publicActions);
  const actual = await client.getChainId();
  if (actual !== chainId) throw new Error(`${opts.chain}: the node reports chain id ${actual}, expected ${chainId}`);
  const addresses = {} as Record<UAsset, `0x${string}`>;
  let deployedAtBlock = 0n;
  for (const native of NATIVE_CHAINS) {
    const u = NATIVE[native].uAsset;
    const hash = await client.deployContract({
      abi: UASSET_ABI,
      bytecode: UASSET_BYTECODE,
      args: [u.name, u.symbol, opts.deployer.address, opts.minter],
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`${u.symbol}: deployment failed`);
    addresses[u.symbol] = receipt.contractAddress;
    if (deployedAtBlock === 0n) deployedAtBlock = receipt.blockNumber;
  }
  return { addresses, deployedAtBlock };
}

/** The `<CHAIN>_UASSETS` value for these addresses. */
export function uAssetsEnvValue(addresses: Record<UAsset, string>): string {
  return NATIVE_CHAINS.map((c) => `${NATIVE[c].uAsset.symbol}=${addresses[NATIVE[c].uAsset.symbol]}`).join(",");
}
