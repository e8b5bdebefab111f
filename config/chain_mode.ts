/**
 * Which chains run, and how, in each `CHAIN_MODE`. The one rule: a value-bearing chain never runs beside a simulated
 * one an outsider can drive, because a simulated deposit would mint real uAssets and real uAssets sent to us would be
 * "paid" in simulated coins.
 *
 * - `sim` (default, `deno task dev`): every chain simulated, `/sim` mounted. Any `<CHAIN>_RPC_URLS` is refused.
 * - `live`: only configured chains run; nothing is simulated and `/sim` is never mounted. A chain without a live
 *   adapter (every native chain today, an EVM chain without `<CHAIN>_RPC_URLS`) is disabled: absent from the config
 *   endpoints, refused by the partner routes, not watched; transfers that concern it are held.
 * - `devnet` (tests only): EVM chains with `<CHAIN>_RPC_URLS` are live, the rest simulated, `/sim` mounted for the
 *   simulated ones. It refuses to start unless every RPC URL is on a loopback host and every node answers anvil's dev
 *   chain id, so a real chain (a real chain id, a remote URL) can never run in it.
 */
import { type ChainSymbol, EVM_CHAINS, type EvmChain, NATIVE_CHAINS } from "../chains/catalog.ts";
import { assertChainId, evmClient } from "../chains/evm/client.ts";
import type { ChainMode } from "./env.ts";
import type { EvmConfig } from "./evm.ts";

/** anvil's default chain id: the only chain id devnet accepts, never a production chain's. */
export const DEVNET_CHAIN_ID = 31337;

export interface ChainPlan {
  mode: ChainMode;
  /** EVM chains served by their live adapters. */
  live: EvmChain[];
  /** Chains served by an embedded simulated ledger. */
  simulated: ChainSymbol[];
  /** Chains that run at all (live or simulated); every other chain is disabled. */
  enabled: ChainSymbol[];
  disabled: ChainSymbol[];
  /** Live EVM adapters sign and check for this chain id instead of the catalog's (devnet: anvil's). */
  chainIdOverride?: number;
}

const ALL: readonly ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];

/** Decides the plan from configuration alone, or throws why the process must not start. */
export function chainPlan(mode: ChainMode, evm: EvmConfig): ChainPlan {
  const configured = EVM_CHAINS.filter((c) => evm.chains[c]);
  const rpcVars = configured.map((c) => `${c.toUpperCase()}_RPC_URLS`);
  const plan = (live: EvmChain[], simulated: ChainSymbol[], chainIdOverride?: number): ChainPlan => {
    const enabled = ALL.filter((c) => (live as ChainSymbol[]).includes(c) || simulated.includes(c));
    return { mode, live, simulated, enabled, disabled: ALL.filter((c) => !enabled.includes(c)), chainIdOverride };
  };
  switch (mode) {
    case "sim":
      if (configured.length > 0) {
        throw new Error(
          `CHAIN_MODE=sim refuses ${rpcVars.join(", ")}: sim mode simulates every chain and serves /sim without ` +
            "authentication, so a simulated deposit would mint real uAssets on a live chain. Use CHAIN_MODE=live " +
            "for real chains (the chains without configuration are then disabled), or CHAIN_MODE=devnet for tests " +
            "against a local anvil.",
        );
      }
      return plan([], [...ALL]);
    case "live":
      if (configured.length === 0) {
        throw new Error(
          "CHAIN_MODE=live needs at least one EVM chain configured (<CHAIN>_RPC_URLS, e.g. BASE_RPC_URLS): " +
            "with none, every chain would be disabled and nothing could run",
        );
      }
      return plan(configured, []);
    case "devnet": {
      const remote = configured.flatMap((c) => evm.chains[c]!.rpcUrls.filter((u) => !isLoopbackUrl(u)));
      if (remote.length > 0) {
        throw new Error(
          `CHAIN_MODE=devnet is for tests against a local dev chain and refuses RPC URLs that are not on a loopback ` +
            `host (127.0.0.0/8, localhost, [::1]): ${remote.map(originOf).join(", ")}. Use CHAIN_MODE=live.`,
        );
      }
      return plan(configured, ALL.filter((c) => !(configured as ChainSymbol[]).includes(c)), DEVNET_CHAIN_ID);
    }
  }
}

/** True when the URL's host is a loopback address: 127.0.0.0/8, localhost, [::1]. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === "localhost" || host === "[::1]") return true;
  const octets = host.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255);
}

/**
 * Devnet's second proof: each node, asked alone (failover could hide a node of another chain behind the first),
 * answers anvil's dev chain id. A mainnet id (even on loopback, a fork or a tunnel) is refused.
 */
export async function proveDevnetNodes(plan: ChainPlan, evm: EvmConfig): Promise<void> {
  if (plan.mode !== "devnet") return;
  for (const chain of plan.live) {
    for (const url of evm.chains[chain]!.rpcUrls) {
      const client = evmClient({ chain, urls: [url], chainId: DEVNET_CHAIN_ID, timeoutMs: 5_000 });
      try {
        await assertChainId(client, DEVNET_CHAIN_ID, chain);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(
          `CHAIN_MODE=devnet runs only against a local dev chain answering chain id ${DEVNET_CHAIN_ID} (anvil); ` +
            `${chain.toUpperCase()}_RPC_URLS ${originOf(url)} does not: ${why}. Use CHAIN_MODE=live for real chains.`,
        );
      }
    }
  }
}

/** Providers put keys in the path or query: messages name the origin only. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "<url>";
  }
}
