/**
 * What every live native chain's configuration shares (doge and zec in config/utxo.ts, sol, xrp and sui in
 * config/account.ts): `<CHAIN>_RPC_URLS` and the per-chain numbers, each checked at start and refused with a sentence
 * naming the variable. No message ever quotes an RPC URL beyond its origin, so a password or an API key in the URL
 * never reaches a log.
 *
 * - `<CHAIN>_RPC_URLS`: comma-separated http(s) URLs in order of preference, credentials as userinfo.
 * - `<CHAIN>_CONFIRMATIONS`: default the catalog's (a depth for doge/zec; 1 on top of the finality flag for
 *   sol/xrp/sui), at least 1.
 * - `<CHAIN>_START_BLOCK`: a block height (sol: a slot, xrp: a ledger index, sui: a checkpoint) or `tip` (default):
 *   where the watcher starts on its first run.
 * - `<CHAIN>_RPC_TIMEOUT_MS`, `<CHAIN>_BLOCK_MS`, `<CHAIN>_CONFIRMATION_TIMEOUT_MS`: as for EVM chains.
 */
import { NATIVE, type NativeChain } from "../chains/catalog.ts";

export interface LiveNativeChain<C extends NativeChain = NativeChain> {
  chain: C;
  rpcUrls: string[];
  confirmations: number;
  /** Where the watcher starts on first run: a block height (slot, ledger index, checkpoint), or the tip then. */
  startBlock: number | "tip";
  rpcTimeoutMs: number;
  blockMs: number;
  /** How long a deposit may wait for its confirmations; unset: the catalog's production timeout. */
  confirmationTimeoutMs?: number;
}

/** The RPC clients' default timeout (chains/shared/http_failover.ts). */
export const NATIVE_RPC_TIMEOUT_MS_DEFAULT = 15_000;

type Env = Record<string, string | undefined>;

const wholeNumber = /^(0|[1-9]\d{0,15})$/;

/** The variable's whole number, `fallback` when unset, refused (with the bounds) when outside [min, max]. */
export function wholeFromEnv(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  unit = "",
): number {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  if (!wholeNumber.test(text)) throw new Error(`${name} must be a whole number${unit} (got ${JSON.stringify(text)})`);
  const n = Number(text);
  if (n < min || n > max) throw new Error(`${name} must be from ${min} to ${max}${unit} (got ${n})`);
  return n;
}

/**
 * The URLs of `<CHAIN>_RPC_URLS`, each an http(s) URL. A refusal names the entry's position and, when it parses,
 * its origin: never the text itself, which may carry a password.
 */
export function parseRpcUrls(variable: string, value: string | undefined): string[] {
  const entries = (value ?? "").split(",").map((u) => u.trim());
  if (entries.every((u) => u === "")) return [];
  return entries.map((raw, i) => {
    const which = `${variable} entry ${i + 1}`;
    if (raw === "") throw new Error(`${which} is empty (two commas in a row?)`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`${which} is not a URL (give http://user:password@host:port/)`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`${which} must be an http or https URL, not ${url.protocol.replace(/:$/, "")}`);
    }
    if (url.hostname === "") throw new Error(`${which} has no host`);
    if (url.password !== "" && url.username === "") {
      throw new Error(`${which} (${url.origin}) has a password but no user name`);
    }
    return raw;
  });
}

/** The catalog's confirmations: a depth chain's depth, 1 (being in a final block) for a flag chain. */
export function catalogConfirmations(chain: NativeChain): number {
  const f = NATIVE[chain].finality;
  return f.kind === "depth" ? f.confirmations : 1;
}

/** Where a chain's blocks are counted, for messages: `<CHAIN>_START_BLOCK` takes one of these or "tip". */
const START_UNIT: Record<NativeChain, string> = {
  sol: "a slot",
  xrp: "a ledger index",
  sui: "a checkpoint sequence number",
  doge: "a block height",
  zec: "a block height",
};

/**
 * A native chain's `<CHAIN>_*` values, or null when `<CHAIN>_RPC_URLS` is unset. The per-chain values are checked
 * even without URLs: a typo is refused before the day the chain is switched on.
 */
export function liveNativeChainFromEnv<C extends NativeChain>(env: Env, chain: C): LiveNativeChain<C> | null {
  const prefix = chain.toUpperCase();
  const urls = parseRpcUrls(`${prefix}_RPC_URLS`, env[`${prefix}_RPC_URLS`]);
  const confirmations = wholeFromEnv(env, `${prefix}_CONFIRMATIONS`, catalogConfirmations(chain), 1, 100_000);
  const startText = env[`${prefix}_START_BLOCK`]?.trim();
  const startBlock = startText === undefined || startText === "" || startText === "tip"
    ? "tip" as const
    : wholeFromEnv(env, `${prefix}_START_BLOCK`, 0, 0, Number.MAX_SAFE_INTEGER, ` (${START_UNIT[chain]}) or "tip"`);
  const rpcTimeoutMs = wholeFromEnv(
    env,
    `${prefix}_RPC_TIMEOUT_MS`,
    NATIVE_RPC_TIMEOUT_MS_DEFAULT,
    100,
    600_000,
    " of ms",
  );
  const blockMs = wholeFromEnv(env, `${prefix}_BLOCK_MS`, NATIVE[chain].blockMs, 10, 3_600_000, " of ms");
  const timeout = wholeFromEnv(env, `${prefix}_CONFIRMATION_TIMEOUT_MS`, -1, 1, 7 * 86_400_000, " of ms");
  if (urls.length === 0) return null;
  return {
    chain,
    rpcUrls: urls,
    confirmations,
    startBlock,
    rpcTimeoutMs,
    blockMs,
    ...(timeout >= 0 ? { confirmationTimeoutMs: timeout } : {}),
  };
}
