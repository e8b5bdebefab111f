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
 * - `SOL_DETECTION`: `blocks` (default: read every finalized block), `addresses` (poll each deposit address with
 *   `getSignaturesForAddress`) or `auto` (poll while there are at most `SOL_POLL_MAX_ADDRESSES` of them, default
 *   500; read blocks above). `SOL_POLL_INTERVAL_MS` (default 10,000): at the tip, a poll at most this often.
 *   chains/sol/poll.ts; the figures behind the defaults are in docs/scan-budget.md ("Solana: polling addresses").
 */
import type { Detection } from "../chains/adapter.ts";
import type { AccountChain } from "../chains/catalog.ts";
import { DETECTION_DEFAULT } from "../chains/sol/poll.ts";
import { type LiveNativeChain, liveNativeChainFromEnv, wholeFromEnv } from "./native.ts";

/** The account chains in the catalog's order (chains/catalog.ts `AccountChain`). */
export const ACCOUNT_CHAINS = ["sol", "xrp", "sui"] as const satisfies readonly AccountChain[];

export type LiveAccountChain = LiveNativeChain<AccountChain>;

export interface AccountConfig {
  chains: Partial<Record<AccountChain, LiveAccountChain>>;
  /** How the sol reader finds deposits (`SOL_DETECTION` and its two numbers). */
  solDetection: Detection;
}

/** No live account chain: what a process without sol/xrp/sui configuration (or an old caller) gets. */
export const NO_LIVE_ACCOUNT: AccountConfig = Object.freeze({
  chains: Object.freeze({}),
  solDetection: Object.freeze({ ...DETECTION_DEFAULT }),
});

const DETECTION_MODES = ["blocks", "addresses", "auto"] as const;

/** `SOL_DETECTION`, `SOL_POLL_MAX_ADDRESSES`, `SOL_POLL_INTERVAL_MS`, each refused with a sentence naming it. */
export function solDetectionFromEnv(env: Record<string, string | undefined>): Detection {
  const text = env.SOL_DETECTION?.trim() || DETECTION_DEFAULT.mode;
  const mode = DETECTION_MODES.find((m) => m === text);
  if (!mode) {
    throw new Error(`SOL_DETECTION must be one of ${DETECTION_MODES.join(", ")} (got ${JSON.stringify(text)})`);
  }
  return {
    mode,
    maxAddresses: wholeFromEnv(env, "SOL_POLL_MAX_ADDRESSES", DETECTION_DEFAULT.maxAddresses, 0, 10_000_000),
    pollEveryMs: wholeFromEnv(env, "SOL_POLL_INTERVAL_MS", DETECTION_DEFAULT.pollEveryMs, 400, 3_600_000, " of ms"),
  };
}

export function loadAccountConfig(env: Record<string, string | undefined>): AccountConfig {
  const chains: Partial<Record<AccountChain, LiveAccountChain>> = {};
  for (const chain of ACCOUNT_CHAINS) {
    const live = liveNativeChainFromEnv(env, chain);
    if (live) chains[chain] = live;
  }
  return { chains, solDetection: solDetectionFromEnv(env) };
}
