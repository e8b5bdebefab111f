/** The environment of a configured (live or devnet) EVM chain, for tests about configuration rather than contracts. */
import type { EvmChain, UAsset } from "../../chains/catalog.ts";
import { uAssetsEnvValue } from "../../chains/evm/deploy.ts";
import { ANVIL_PRIVATE_KEYS } from "./anvil.ts";

/** Placeholder contract addresses 0x..01 to 0x..05: valid configuration, never called by these tests. */
export const PLACEHOLDER_UASSETS = uAssetsEnvValue(
  Object.fromEntries(
    ["uSOL", "uXRP", "uSUI", "uDOGE", "uZEC"].map((u, i) => [u, `0x${String(i + 1).padStart(40, "0")}`]),
  ) as Record<UAsset, string>,
);

/** `<CHAIN>_RPC_URLS`, `<CHAIN>_UASSETS` and a minter key file (anvil's dev key) written into `dir`. */
export async function evmChainEnv(
  dir: string,
  urls: string,
  chain: EvmChain = "base",
): Promise<Record<string, string>> {
  const keyFile = `${dir}/minter.key`;
  await Deno.writeTextFile(keyFile, ANVIL_PRIVATE_KEYS[1], { mode: 0o600 });
  const prefix = chain.toUpperCase();
  return { [`${prefix}_RPC_URLS`]: urls, [`${prefix}_UASSETS`]: PLACEHOLDER_UASSETS, EVM_MINTER_KEY_FILE: keyFile };
}
