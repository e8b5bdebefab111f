/**
 * Which adapter serves each chain: a live EVM chain (configured by `<CHAIN>_RPC_URLS`) gets the viem adapters, every
 * other chain its embedded simulated ledger. Live mode refuses to start while any chain would be simulated.
 */
import { privateKeyToAccount } from "viem/accounts";
import type { Chains } from "./adapter.ts";
import { type ChainSymbol, EVM_CHAINS, type EvmChain, isEvmChain, NATIVE_CHAINS } from "./catalog.ts";
import { type EvmChainAdapters, evmChainAdapters } from "./evm/index.ts";
import { simChains } from "./sim/adapters.ts";
import { type EvmConfig, readMinterKey } from "../config/evm.ts";
import type { ChainMode } from "../config/env.ts";

export interface ChainSetup {
  chains: Chains;
  /** Chains served by an embedded simulated ledger (the sim block producer runs for these only). */
  simulated: ChainSymbol[];
}

export async function buildChains(
  kv: Deno.Kv,
  mode: ChainMode,
  evm: EvmConfig,
  transferAddress: string,
): Promise<ChainSetup> {
  const liveEvm = EVM_CHAINS.filter((c) => evm.chains[c]);
  const simulated = [...NATIVE_CHAINS, ...EVM_CHAINS.filter((c) => !evm.chains[c])] as ChainSymbol[];
  if (mode === "live" && simulated.length > 0) {
    throw new Error(
      `CHAIN_MODE=live refuses simulated chains; no live adapter is configured for ${simulated.join(", ")}` +
        " (EVM chains need <CHAIN>_RPC_URLS; native chains have no live adapter yet)",
    );
  }
  const sim = simChains(kv);
  const adapters = new Map<EvmChain, EvmChainAdapters>();
  if (liveEvm.length > 0) {
    const account = privateKeyToAccount(await readMinterKey(evm.minterKeyFile!));
    for (const chain of liveEvm) {
      const c = evm.chains[chain]!;
      adapters.set(
        chain,
        await evmChainAdapters({
          chain,
          kv,
          urls: c.rpcUrls,
          account,
          uAssets: c.uAssets,
          transferAddress: transferAddress as `0x${string}`,
          minter: { replaceAfterMs: evm.feeBumpAfterMs, maxFeePerGasCap: c.maxFeePerGasWei },
        }),
      );
    }
  }
  const chains: Chains = {
    reader: (c) => (isEvmChain(c) && adapters.get(c)?.reader) || sim.reader(c),
    minter: (c) => adapters.get(c)?.minter ?? sim.minter(c),
    payer: (c) => sim.payer(c),
  };
  return { chains, simulated };
}
