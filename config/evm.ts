/**
 * Live EVM chains, configured per chain by environment. A chain is live when `<CHAIN>_RPC_URLS` is set (e.g.
 * `BASE_RPC_URLS`); it then needs its five uAsset contract addresses and the minter key. Which modes accept live
 * chains, and what becomes of the others, is config/chain_mode.ts.
 */
import { z } from "zod";
import { readSecretFile } from "./secret_file.ts";
import { EVM, EVM_CHAINS, type EvmChain, NATIVE, NATIVE_CHAINS, type UAsset } from "../chains/catalog.ts";

export interface LiveEvmChain {
  chain: EvmChain;
  rpcUrls: string[];
  uAssets: Record<UAsset, `0x${string}`>;
  confirmations: number;
  blockMs: number;
  /** Where the watcher starts on first run: a block number, or the tip at that moment. */
  startBlock: number | "tip";
  /**
   * `<CHAIN>_DEPLOY_BLOCK`: the block the uAsset contracts were deployed in, where `Minted` events are read from
   * (reconciliation, the minter's log search). Unset: a numeric START_BLOCK, else 0.
   */
  deployBlock?: number;
  /** How long a uAsset transfer may wait for its confirmations; unset: the catalog's production timeout. */
  confirmationTimeoutMs?: number;
  /** No mint offers more per gas (first signing or replacement): `<CHAIN>_MAX_FEE_PER_GAS_WEI`, else the catalog's. */
  maxFeePerGasWei: bigint;
}

export interface EvmConfig {
  chains: Partial<Record<EvmChain, LiveEvmChain>>;
  minterKeyFile: string | undefined;
  /** Deploy mode only: the minter's key itself, from `EVM_MINTER_KEY` (a deployment has no secret files). */
  minterKey?: `0x${string}`;
  /** A transaction pending longer than this gets a fee-bumped replacement at the same nonce. */
  feeBumpAfterMs: number;
}

const UASSETS = NATIVE_CHAINS.map((c) => NATIVE[c].uAsset.symbol);
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be an EVM address");
const wholeNumber = z.string().regex(/^\d{1,12}$/, "must be a whole number");
/** Wei amounts outgrow a JS number: up to 10^30 wei, read as bigint. */
const weiAmount = z.string().regex(/^[1-9]\d{0,29}$/, "must be a positive whole number of wei");

/** `uSOL=0x..,uXRP=0x..,...`: all five, nothing else. */
function parseUAssets(name: string, value: string | undefined): Record<UAsset, `0x${string}`> {
  if (!value) throw new Error(`${name} is required: uSOL=0x..,uXRP=0x..,uSUI=0x..,uDOGE=0x..,uZEC=0x..`);
  const out: Record<string, `0x${string}`> = {};
  for (const part of value.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [symbol, addr] = part.split("=").map((x) => x.trim());
    if (!UASSETS.includes(symbol as UAsset)) throw new Error(`${name}: unknown uAsset ${symbol}`);
    if (!address.safeParse(addr).success) throw new Error(`${name}: ${symbol} is not an EVM address`);
    out[symbol] = addr as `0x${string}`;
  }
  const missing = UASSETS.filter((u) => !out[u]);
  if (missing.length) throw new Error(`${name}: missing ${missing.join(", ")}`);
  return out as Record<UAsset, `0x${string}`>;
}

/**
 * `deploy`: Deno Deploy mode (config/env.ts `runtimeMode`), where secrets come from the environment: the minter's key is
 * `EVM_MINTER_KEY` and `EVM_MINTER_KEY_FILE` is not read; elsewhere the key is only ever read from its file.
 */
export function loadEvmConfig(
  env: Record<string, string | undefined>,
  deploy = false,
  /** false for ROLE=api, which signs nothing and must hold no key (config/env.ts refuses one). */
  needsMinterKey = true,
): EvmConfig {
  const chains: Partial<Record<EvmChain, LiveEvmChain>> = {};
  for (const chain of EVM_CHAINS) {
    const prefix = chain.toUpperCase();
    const urls = env[`${prefix}_RPC_URLS`]?.split(",").map((u) => u.trim()).filter(Boolean) ?? [];
    if (urls.length === 0) continue;
    for (const url of urls) {
      if (!z.url().safeParse(url).success) throw new Error(`${prefix}_RPC_URLS: ${url} is not a URL`);
    }
    const num = (suffix: string, fallback: number) => {
      const v = env[`${prefix}_${suffix}`];
      if (v === undefined || v === "") return fallback;
      if (!wholeNumber.safeParse(v).success) throw new Error(`${prefix}_${suffix} must be a whole number`);
      return Number(v);
    };
    const start = env[`${prefix}_START_BLOCK`];
    const feeCap = env[`${prefix}_MAX_FEE_PER_GAS_WEI`];
    if (feeCap !== undefined && feeCap !== "" && !weiAmount.safeParse(feeCap).success) {
      throw new Error(`${prefix}_MAX_FEE_PER_GAS_WEI must be a positive whole number of wei (got ${feeCap})`);
    }
    chains[chain] = {
      chain,
      rpcUrls: urls,
      uAssets: parseUAssets(`${prefix}_UASSETS`, env[`${prefix}_UASSETS`]),
      confirmations: Math.max(1, num("CONFIRMATIONS", EVM[chain].confirmations)),
      blockMs: Math.max(10, num("BLOCK_MS", EVM[chain].blockMs)),
      startBlock: start === undefined || start === "" || start === "tip" ? "tip" : num("START_BLOCK", 0),
      maxFeePerGasWei: feeCap ? BigInt(feeCap) : EVM[chain].maxFeePerGasWei,
    };
    const deployBlock = env[`${prefix}_DEPLOY_BLOCK`];
    if (deployBlock !== undefined && deployBlock !== "") chains[chain]!.deployBlock = num("DEPLOY_BLOCK", 0);
    const timeout = num("CONFIRMATION_TIMEOUT_MS", -1);
    if (timeout >= 0) chains[chain]!.confirmationTimeoutMs = Math.max(1, timeout);
  }
  const feeBump = env.EVM_FEE_BUMP_AFTER_MS;
  if (feeBump && !wholeNumber.safeParse(feeBump).success) throw new Error("EVM_FEE_BUMP_AFTER_MS must be a number");
  const feeBumpAfterMs = feeBump ? Number(feeBump) : 60_000;
  const live = Object.keys(chains);
  if (deploy) {
    const text = env.EVM_MINTER_KEY || undefined;
    if (needsMinterKey && live.length > 0 && !text) {
      throw new Error(`RUNTIME_MODE=deploy needs EVM_MINTER_KEY when live EVM chains are configured (${live})`);
    }
    const minterKey = text === undefined ? undefined : evmKey(text, "EVM_MINTER_KEY");
    return { chains, minterKeyFile: undefined, minterKey, feeBumpAfterMs };
  }
  if (env.EVM_MINTER_KEY) {
    throw new Error("EVM_MINTER_KEY is read in deploy mode only; give the key in a file named by EVM_MINTER_KEY_FILE");
  }
  const minterKeyFile = env.EVM_MINTER_KEY_FILE || undefined;
  if (needsMinterKey && live.length > 0 && !minterKeyFile) {
    throw new Error(`EVM_MINTER_KEY_FILE is required when live EVM chains are configured (${live})`);
  }
  return { chains, minterKeyFile, feeBumpAfterMs };
}

/** A 32-byte hex key (0x optional) or an error naming `source`; the message never contains the key. */
function evmKey(text: string, source: string): `0x${string}` {
  const trimmed = text.trim();
  const key = trimmed.startsWith("0x") ? trimmed : `0x${trimmed}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${source} does not hold a 32-byte hex key`);
  return key as `0x${string}`;
}

/** The minter's key: `EVM_MINTER_KEY` in deploy mode, else read from `EVM_MINTER_KEY_FILE`. */
export async function minterKeyOf(evm: EvmConfig): Promise<`0x${string}`> {
  if (evm.minterKey) return evm.minterKey;
  if (!evm.minterKeyFile) throw new Error("no minter key: EVM_MINTER_KEY_FILE (or EVM_MINTER_KEY in deploy mode)");
  return await readMinterKey(evm.minterKeyFile);
}

/**
 * Reads an EVM private key (0x + 64 hex) from the file named by `variable` (the minter's unless another is given),
 * refusing a file group or others can access; the message never contains the key.
 */
export async function readMinterKey(path: string, variable = "EVM_MINTER_KEY_FILE"): Promise<`0x${string}`> {
  return evmKey(await readSecretFile(path, variable), `${variable} ${path}`);
}
