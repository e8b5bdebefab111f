/**
 * Deploys the five uAssets to one EVM chain: the admin gets DEFAULT_ADMIN_ROLE and PAUSER_ROLE, the minter
 * MINTER_ROLE only with its allowance, each contract its supply cap. Used by `deno task admin evm deploy --chain <symbol>` and by the
 * live-EVM tests.
 *
 * The minter key is hot: it signs every mint from a running server. Were it also the admin, whoever steals it could
 * raise the cap, unpause, and grant itself anything, so the admin is a separate key unless the caller says otherwise
 * in so many words (`adminIsMinter`, for throwaway dev chains).
 */
import { type Address, createWalletClient, http, type LocalAccount, publicActions } from "viem";
import { UASSET_ABI, UASSET_BYTECODE } from "../../contracts/uasset.ts";
import { redactingTransport } from "./client.ts";
import { EVM, type EvmChain, NATIVE, NATIVE_CHAINS, type UAsset, UASSET_DECIMALS, UASSETS } from "../catalog.ts";

export interface DeployUAssetsOptions {
  chain: EvmChain;
  rpcUrl: string;
  /** Signs the deployments and pays their gas; it gets no role unless it is also `admin` or `minter`. */
  deployer: LocalAccount;
  /** Gets DEFAULT_ADMIN_ROLE and PAUSER_ROLE: sets the supply cap, pauses, grants and revokes roles. */
  admin: Address;
  /** Gets MINTER_ROLE only, with `minterAllowance`. */
  minter: Address;
  /** Most total supply per uAsset, in wei (18 decimals). */
  supplyCap: Record<UAsset, bigint>;
  /**
   * What the minter may mint per uAsset before the admin tops it up (wei): all a stolen minter key could ever mint.
   * Each mint spends it; only the admin raises it (`configureMinter`, docs/live-chains.md "Minter allowance").
   */
  minterAllowance: Record<UAsset, bigint>;
  /** Accepts `admin` equal to `minter`. Never on a chain that carries value. */
  adminIsMinter?: boolean;
  chainId?: number;
}

/** Why these roles must not be deployed, or null: the minter as admin needs the explicit flag. */
export function adminRoleProblem(opts: { admin: string; minter: string; adminIsMinter?: boolean }): string | null {
  const same = opts.admin.toLowerCase() === opts.minter.toLowerCase();
  if (same && !opts.adminIsMinter) {
    return `the admin ${opts.admin} is the minter key: a stolen minter key could then lift the supply cap and the ` +
      `pause; give a separate admin, or --admin-is-minter for a throwaway dev chain`;
  }
  if (!same && opts.adminIsMinter) return `--admin-is-minter, but the admin ${opts.admin} is not the minter`;
  return null;
}

export async function deployUAssets(
  opts: DeployUAssetsOptions,
): Promise<{ addresses: Record<UAsset, `0x${string}`>; deployedAtBlock: bigint }> {
  const problem = adminRoleProblem(opts);
  if (problem) throw new Error(`${opts.chain}: ${problem}`);
  const chainId = opts.chainId ?? EVM[opts.chain].chainId;
  const client = createWalletClient({
    account: opts.deployer,
    chain: {
      id: chainId,
      name: EVM[opts.chain].name,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [opts.rpcUrl] } },
    },
    transport: redactingTransport(http(opts.rpcUrl)),
  }).extend(publicActions);
  const actual = await client.getChainId();
  if (actual !== chainId) throw new Error(`${opts.chain}: the node reports chain id ${actual}, expected ${chainId}`);
  const addresses = {} as Record<UAsset, `0x${string}`>;
  let deployedAtBlock = 0n;
  for (const native of NATIVE_CHAINS) {
    const u = NATIVE[native].uAsset;
    const cap = opts.supplyCap[u.symbol];
    if (cap === undefined) throw new Error(`${opts.chain}: no supply cap for ${u.symbol}`);
    const allowance = opts.minterAllowance[u.symbol];
    if (allowance === undefined) throw new Error(`${opts.chain}: no minter allowance for ${u.symbol}`);
    const hash = await client.deployContract({
      abi: UASSET_ABI,
      bytecode: UASSET_BYTECODE,
      args: [u.name, u.symbol, opts.admin, opts.minter, cap, allowance],
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`${u.symbol}: deployment failed`);
    addresses[u.symbol] = receipt.contractAddress;
    if (deployedAtBlock === 0n) deployedAtBlock = receipt.blockNumber;
  }
  return { addresses, deployedAtBlock };
}

const WHOLE_TOKENS = /^[1-9][0-9]*$/;
const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * Parses `--supply-cap` (or `--minter-allowance`, with `what` naming it in errors): one whole number of tokens for all
 * five uAssets, or `uSOL=N,uXRP=N,...` naming each of the five once. Whole tokens only, read as bigint (a float would
 * round large caps), returned in wei.
 */
export function parseSupplyCaps(text: string, what = "the supply cap"): Record<UAsset, bigint> {
  const wei = (tokens: string, what: string) => {
    if (!WHOLE_TOKENS.test(tokens)) {
      throw new Error(`${what} must be a positive whole number of tokens, got "${tokens}"`);
    }
    const value = BigInt(tokens) * 10n ** BigInt(UASSET_DECIMALS);
    if (value > MAX_UINT256) throw new Error(`${what} ${tokens} does not fit the contract's uint256`);
    return value;
  };
  const trimmed = text.trim();
  if (!trimmed.includes("=")) {
    const cap = wei(trimmed, what);
    return Object.fromEntries(UASSETS.map((s) => [s, cap])) as Record<UAsset, bigint>;
  }
  const caps: Partial<Record<UAsset, bigint>> = {};
  for (const part of trimmed.split(",")) {
    const [symbol, tokens, ...rest] = part.split("=").map((s) => s.trim());
    if (rest.length > 0 || tokens === undefined) throw new Error(`"${part}" is not <uAsset>=<whole tokens>`);
    if (!(UASSETS as string[]).includes(symbol)) {
      throw new Error(`unknown uAsset "${symbol}" in ${what}; expected ${UASSETS.join(", ")}`);
    }
    if (caps[symbol as UAsset] !== undefined) throw new Error(`${symbol} is given twice in ${what}`);
    caps[symbol as UAsset] = wei(tokens, `${what} of ${symbol}`);
  }
  const missing = UASSETS.filter((s) => caps[s] === undefined);
  if (missing.length > 0) throw new Error(`${what} names no value for ${missing.join(", ")}`);
  return caps as Record<UAsset, bigint>;
}

/** The `<CHAIN>_UASSETS` value for these addresses. */
export function uAssetsEnvValue(addresses: Record<UAsset, string>): string {
  return NATIVE_CHAINS.map((c) => `${NATIVE[c].uAsset.symbol}=${addresses[NATIVE[c].uAsset.symbol]}`).join(",");
}
