/**
 * Where a person looks a transaction up: `<CHAIN>_EXPLORER_TX_URL`, a URL template with `{hash}` where the
 * transaction hash goes (`SOL_EXPLORER_TX_URL=https://solscan.io/tx/{hash}`), per chain. Unset, a live chain links to
 * its mainnet explorer (`DEFAULT_EXPLORER_TX_URLS`) and a simulated chain to nothing (no explorer knows its hashes).
 * Checked at start: an http(s) URL with `{hash}` exactly once, else the process refuses to start with the variable's
 * name. The order page and `order show` (actors/ops/order_detail.ts) build their links from it.
 */
import { CHAIN_SYMBOLS, type ChainSymbol } from "../chains/catalog.ts";

/** Mainnet explorers, one per chain (docs/dashboard.md "Order detail" lists them). */
export const DEFAULT_EXPLORER_TX_URLS: Readonly<Record<ChainSymbol, string>> = {
  sol: "https://solscan.io/tx/{hash}",
  xrp: "https://livenet.xrpl.org/transactions/{hash}",
  sui: "https://suiscan.xyz/mainnet/tx/{hash}",
  doge: "https://blockchair.com/dogecoin/transaction/{hash}",
  zec: "https://blockchair.com/zcash/transaction/{hash}",
  base: "https://basescan.org/tx/{hash}",
  arbitrum: "https://arbiscan.io/tx/{hash}",
  katana: "https://explorer.katanarpc.com/tx/{hash}",
  world: "https://worldscan.org/tx/{hash}",
  unichain: "https://uniscan.xyz/tx/{hash}",
};

/** Per chain, the template set by its variable (null: unset, the default applies to a live chain). */
export type ExplorerConfig = Readonly<Record<ChainSymbol, string | null>>;

export const explorerEnvName = (chain: ChainSymbol) => `${chain.toUpperCase()}_EXPLORER_TX_URL`;

/** Checks one template; returns why it is refused, or null. */
export function explorerTemplateProblem(template: string): string | null {
  if (template.split("{hash}").length !== 2) return "must contain {hash} exactly once";
  let url: URL;
  try {
    url = new URL(template.replace("{hash}", "0"));
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL";
  return null;
}

export function loadExplorerConfig(env: Record<string, string | undefined>): ExplorerConfig {
  const out = {} as Record<ChainSymbol, string | null>;
  for (const chain of CHAIN_SYMBOLS) {
    const name = explorerEnvName(chain);
    const text = env[name]?.trim();
    if (!text) {
      out[chain] = null;
      continue;
    }
    const problem = explorerTemplateProblem(text);
    if (problem) {
      throw new Error(`${name} ${problem} (got ${JSON.stringify(text)}; e.g. ${DEFAULT_EXPLORER_TX_URLS[chain]})`);
    }
    out[chain] = text;
  }
  return out;
}

/** The link to `hash` on `chain`, or null (a simulated chain without a template set). */
export function explorerTxUrl(
  config: ExplorerConfig,
  chain: ChainSymbol,
  hash: string,
  live: boolean,
): string | null {
  const template = config[chain] ?? (live ? DEFAULT_EXPLORER_TX_URLS[chain] : null);
  return template ? template.replace("{hash}", encodeURIComponent(hash)) : null;
}
