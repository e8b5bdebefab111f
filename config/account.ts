/**
 * Live account chains (sol, xrp, sui), configured per chain by environment like doge and zec (config/utxo.ts). A chain
 * is configured when `<CHAIN>_RPC_URLS` is set; which modes accept it is config/chain_mode.ts, which also asks each
 * node which network it serves. The variables (config/native.ts):
 *
 * - `SOL_RPC_URLS`: Solana JSON-RPC endpoints that serve `getBlock` history at `finalized`.
 * - `XRP_RPC_URLS`: rippled or Clio JSON-RPC endpoints (validated ledgers).
 * - `SUI_RPC_URLS`: Sui GraphQL endpoints (e.g. `https://graphql.mainnet.sui.io/graphql`); Sui's JSON-RPC is retired.
 * - `<CHAIN>_CONFIRMATIONS` (default 1: being in a finalized slot / validated ledger / certified checkpoint),
 *   `<CHAIN>_START_BLOCK` (a slot, ledger index or checkpoint, or `tip`), `<CHAIN>_RPC_TIMEOUT_MS`, `<CHAIN>_BLOCK_MS`,
 *   `<CHAIN>_CONFIRMATION_TIMEOUT_MS`.
 */
import type { AccountChain } from "../chains/catalog.ts";
import { type LiveNativeChain, liveNativeChainFromEnv } from "./native.ts";

/** The account chains in the catalog's order (chains/catalog.ts `AccountChain`). */
export const ACCOUNT_CHAINS = ["sol", "xrp", "sui"] as const satisfies readonly AccountChain[];

export type LiveAccountChain = LiveNativeChain<AccountChain>;

export interface AccountConfig {
  chains: Partial<Record<AccountChain, LiveAccountChain>>;
}

/** No live account chain: what a process without sol/xrp/sui configuration (or an old caller) gets. */
export const NO_LIVE_ACCOUNT: AccountConfig = Object.freeze({ chains: Object.freeze({}) });

export function loadAccountConfig(env: Record<string, string | undefined>): AccountConfig {
  const chains: Partial<Record<AccountChain, LiveAccountChain>> = {};
  for (const chain of ACCOUNT_CHAINS) {
    const live = liveNativeChainFromEnv(env, chain);
    if (live) chains[chain] = live;
  }
  return { chains };
}
