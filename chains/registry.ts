/**
 * Which adapter serves each chain, as the chain plan (config/chain_mode.ts) says: a live EVM chain gets the viem
 * adapters, a simulated chain its embedded ledger, and a disabled chain an adapter whose every call throws
 * `ChainDisabledError`. There is no fallback: a chain that is not simulated is never served by a simulator.
 */
import { privateKeyToAccount } from "viem/accounts";
import { ChainDisabledError, type ChainReader, type Chains, type EvmMinter, type NativePayer } from "./adapter.ts";
import type { ChainSymbol, EvmChain } from "./catalog.ts";
import { type EvmChainAdapters, evmChainAdapters } from "./evm/index.ts";
import { simChains } from "./sim/adapters.ts";
import { type EvmConfig, readMinterKey } from "../config/evm.ts";
import type { ChainPlan } from "../config/chain_mode.ts";

export interface ChainSetup {
  chains: Chains;
  /** Chains served by an embedded simulated ledger (the sim block producer runs for these only). */
  simulated: ChainSymbol[];
}

export async function buildChains(
  kv: Deno.Kv,
  plan: ChainPlan,
  evm: EvmConfig,
  transferAddress: string,
  simOpts: { hotWalletGenesis?: bigint } = {},
): Promise<ChainSetup> {
  const sim = simChains(kv, { hotWalletGenesis: simOpts.hotWalletGenesis });
  const simulated = new Set(plan.simulated);
  const adapters = new Map<EvmChain, EvmChainAdapters>();
  if (plan.live.length > 0) {
    const account = privateKeyToAccount(await readMinterKey(evm.minterKeyFile!));
    for (const chain of plan.live) {
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
          chainId: plan.chainIdOverride,
        }),
      );
    }
  }
  const chains: Chains = {
    reader: (c) => adapters.get(c as EvmChain)?.reader ?? (simulated.has(c) ? sim.reader(c) : disabledReader(c)),
    minter: (c) => adapters.get(c)?.minter ?? (simulated.has(c) ? sim.minter(c) : disabledSender(c)),
    payer: (c) => (simulated.has(c) ? sim.payer(c) : disabledSender(c)),
  };
  return { chains, simulated: plan.simulated };
}

function disabledReader(chain: ChainSymbol): ChainReader {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return {
    chain,
    finality: { kind: "depth" },
    tip: refuse,
    blockHash: refuse,
    scan: refuse,
    txStatus: refuse,
    transfersOf: refuse,
  };
}

/** Serves as minter and payer: nothing is ever signed or sent for a disabled chain. */
function disabledSender(chain: ChainSymbol): EvmMinter & NativePayer {
  const refuse = () => Promise.reject(new ChainDisabledError(chain));
  return { chain, broadcast: refuse, nudge: refuse, prepareMint: refuse, mintedBy: refuse, preparePayout: refuse };
}
