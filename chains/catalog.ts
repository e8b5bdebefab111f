/**
 * The one table of chains, tokens, decimals, chain ids, minimums and confirmations.
 * Config endpoints, validation, conversions and watchers all read from here; nothing repeats these numbers.
 */

export const NATIVE_CHAINS = ["sol", "xrp", "sui", "doge", "zec"] as const;
export const EVM_CHAINS = ["base", "arbitrum", "katana", "world", "unichain"] as const;

export type NativeChain = typeof NATIVE_CHAINS[number];
export type EvmChain = typeof EVM_CHAINS[number];
export type ChainSymbol = NativeChain | EvmChain;

export type NativeToken = "SOL" | "XRP" | "SUI" | "DOGE" | "ZEC";
export type UAsset = `u${NativeToken}`;

export const UASSET_DECIMALS = 18;

export interface NativeChainInfo {
  symbol: NativeChain;
  name: string;
  token: { symbol: NativeToken; name: string; decimals: number };
  uAsset: { symbol: UAsset; name: string; minimumBurnAmount: bigint };
  /** Smallest deposit (native smallest unit) that is minted; smaller ones become failed orders. */
  minimumDeposit: bigint;
  /**
   * Below this a deposit is dust: it gets no order of its own (that would let anyone grow our storage for a fraction
   * of a cent) but is counted in one aggregate record per (chain, sender, asset). Between this and `minimumDeposit`
   * a deposit is a failed order with `Insufficient deposit amount`, so a partner sees a real but too small deposit.
   */
  dustDeposit: bigint;
  /** Typical time between blocks (ledgers, checkpoints), to schedule the next look at a waiting order. */
  blockMs: number;
  /** Confirmations a deposit needs on mainnet before value moves (DESIGN.md invariant 4). */
  confirmations: number;
  /** Confirmations in sim mode, small so a local mint completes in seconds. */
  simConfirmations: number;
  /** How long a deposit may wait for its confirmations before it fails with `Blockchain confirmation timeout`. */
  confirmationTimeoutMinutes: number;
  /** How the chain expresses finality, for operators reading the catalog. */
  finality: string;
}

export interface EvmChainInfo {
  symbol: EvmChain;
  name: string;
  chainId: number;
  /** Typical time between blocks, to schedule the next look at a waiting order. */
  blockMs: number;
  /** Blocks a uAsset transfer to the transfer address needs before a burn pays out on mainnet. */
  confirmations: number;
  simConfirmations: number;
  confirmationTimeoutMinutes: number;
  /**
   * The node's block tag a burn transfer (and a mint's own receipt) must be at or below before it counts, besides
   * `confirmations`: on these rollups `safe` means the batch is posted to L1, `finalized` that L1 finalized it.
   */
  finalityTag: "safe" | "finalized";
  /** Fee-bump ceiling per gas for mints: a stuck mint is never re-priced above this (`<CHAIN>_MAX_FEE_PER_GAS_WEI`). */
  maxFeePerGasWei: bigint;
}

export const NATIVE: Readonly<Record<NativeChain, NativeChainInfo>> = {
  sol: {
    symbol: "sol",
    name: "Solana",
    token: { symbol: "SOL", name: "Solana", decimals: 9 },
    uAsset: { symbol: "uSOL", name: "Universal SOL", minimumBurnAmount: 1_000000000_000000000n },
    minimumDeposit: 10_000_000n, // 0.01 SOL
    dustDeposit: 1_000_000n, // 0.001 SOL
    blockMs: 400,
    confirmations: 32,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 30,
    finality: "finalized commitment",
  },
  xrp: {
    symbol: "xrp",
    name: "XRP Ledger",
    token: { symbol: "XRP", name: "XRP", decimals: 6 },
    uAsset: { symbol: "uXRP", name: "Universal XRP", minimumBurnAmount: 25_000000000_000000000n },
    minimumDeposit: 1_000_000n, // 1 XRP
    dustDeposit: 100_000n, // 0.1 XRP
    blockMs: 4000,
    confirmations: 1,
    simConfirmations: 1,
    confirmationTimeoutMinutes: 30,
    finality: "validated ledger",
  },
  sui: {
    symbol: "sui",
    name: "Sui",
    token: { symbol: "SUI", name: "Sui", decimals: 9 },
    uAsset: { symbol: "uSUI", name: "Universal SUI", minimumBurnAmount: 1_000000000_000000000n },
    minimumDeposit: 1_000_000_000n, // 1 SUI
    dustDeposit: 100_000_000n, // 0.1 SUI
    blockMs: 500,
    confirmations: 1,
    simConfirmations: 1,
    confirmationTimeoutMinutes: 30,
    finality: "certified checkpoint",
  },
  doge: {
    symbol: "doge",
    name: "Dogecoin",
    token: { symbol: "DOGE", name: "Dogecoin", decimals: 8 },
    uAsset: { symbol: "uDOGE", name: "Universal DOGE", minimumBurnAmount: 100000000_000000000n },
    minimumDeposit: 1_000_000_000n, // 10 DOGE
    dustDeposit: 100_000_000n, // 1 DOGE
    blockMs: 60000,
    confirmations: 40,
    simConfirmations: 3,
    confirmationTimeoutMinutes: 360,
    finality: "block depth",
  },
  zec: {
    symbol: "zec",
    name: "Zcash",
    token: { symbol: "ZEC", name: "Zcash", decimals: 8 },
    uAsset: { symbol: "uZEC", name: "Universal ZEC", minimumBurnAmount: 100000000_000000000n },
    minimumDeposit: 100_000n, // 0.001 ZEC
    dustDeposit: 10_000n, // 0.0001 ZEC
    blockMs: 75000,
    confirmations: 24,
    simConfirmations: 3,
    confirmationTimeoutMinutes: 360,
    finality: "block depth",
  },
};

export const EVM: Readonly<Record<EvmChain, EvmChainInfo>> = {
  base: {
    symbol: "base",
    name: "Base",
    chainId: 8453,
    blockMs: 2000,
    confirmations: 20,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 60,
    finalityTag: "safe",
    maxFeePerGasWei: 10_000_000_000n, // 10 gwei
  },
  arbitrum: {
    symbol: "arbitrum",
    name: "Arbitrum One",
    chainId: 42161,
    blockMs: 250,
    confirmations: 20,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 60,
    finalityTag: "safe",
    maxFeePerGasWei: 10_000_000_000n, // 10 gwei
  },
  katana: {
    symbol: "katana",
    name: "Katana",
    chainId: 747474,
    blockMs: 1000,
    confirmations: 20,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 60,
    finalityTag: "safe",
    maxFeePerGasWei: 10_000_000_000n, // 10 gwei
  },
  world: {
    symbol: "world",
    name: "World Chain",
    chainId: 480,
    blockMs: 2000,
    confirmations: 20,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 60,
    finalityTag: "safe",
    maxFeePerGasWei: 10_000_000_000n, // 10 gwei
  },
  unichain: {
    symbol: "unichain",
    name: "Unichain",
    chainId: 130,
    blockMs: 1000,
    confirmations: 20,
    simConfirmations: 2,
    confirmationTimeoutMinutes: 60,
    finalityTag: "safe",
    maxFeePerGasWei: 10_000_000_000n, // 10 gwei
  },
};

/**
 * How many recent blocks a watcher remembers to find the common ancestor after a reorg: more than any chain's
 * required confirmations, so a reorg that could undo a confirmed transfer is always seen whole. A reorg deeper than
 * this is not guessed at: the watcher stops that chain and raises an operator alert.
 */
export const REORG_WINDOW_BLOCKS = 2 *
  Math.max(...Object.values(NATIVE).map((c) => c.confirmations), ...Object.values(EVM).map((c) => c.confirmations));

export function isNativeChain(value: unknown): value is NativeChain {
  return typeof value === "string" && (NATIVE_CHAINS as readonly string[]).includes(value);
}

export function isEvmChain(value: unknown): value is EvmChain {
  return typeof value === "string" && (EVM_CHAINS as readonly string[]).includes(value);
}

/** The native chain whose coin a uAsset stands for, or undefined for an unknown symbol. */
export function nativeChainOfUAsset(symbol: string): NativeChain | undefined {
  return NATIVE_CHAINS.find((c) => NATIVE[c].uAsset.symbol === symbol);
}

/** 10^(18 - decimals): wei of uAsset per smallest native unit. */
export function weiPerNativeUnit(chain: NativeChain): bigint {
  return 10n ** BigInt(UASSET_DECIMALS - NATIVE[chain].token.decimals);
}

/** Native smallest units to uAsset wei; exact, a multiplication never rounds. */
export function nativeToWei(chain: NativeChain, amount: bigint): bigint {
  return amount * weiPerNativeUnit(chain);
}

/** uAsset wei to native smallest units, with the remainder that cannot be paid in native units. */
export function weiToNative(chain: NativeChain, wei: bigint): { native: bigint; remainderWei: bigint } {
  const unit = weiPerNativeUnit(chain);
  return { native: wei / unit, remainderWei: wei % unit };
}

// ---- the views served by GET /config/mint and GET /config/burn (spec 4.8, 4.9, 2.5, 2.6) ----

function nativeTokenView(chain: NativeChain) {
  const t = NATIVE[chain].token;
  return { name: t.name, symbol: t.symbol, decimals: t.decimals };
}

function uAssetView(chain: NativeChain) {
  const u = NATIVE[chain].uAsset;
  return { name: u.name, symbol: u.symbol, decimals: UASSET_DECIMALS };
}

function nativeChainView(chain: NativeChain) {
  return { name: NATIVE[chain].name, symbol: chain, type: "main", tokens: [nativeTokenView(chain)] };
}

/**
 * The views take the chains this process runs (config/chain_mode.ts): a disabled chain is absent, and so is the
 * token or uAsset of a disabled native chain, since it can be neither minted nor redeemed.
 */
function evmChainView(chain: EvmChain, natives: readonly NativeChain[]) {
  const e = EVM[chain];
  return {
    name: e.name,
    symbol: chain,
    type: "main",
    chainId: e.chainId,
    vm: "EVM",
    tokens: natives.map(uAssetView),
  };
}

function enabledSplit(enabled: readonly ChainSymbol[]) {
  return {
    natives: NATIVE_CHAINS.filter((c) => enabled.includes(c)),
    evms: EVM_CHAINS.filter((c) => enabled.includes(c)),
  };
}

export function mintConfigView(enabled: readonly ChainSymbol[]) {
  const { natives, evms } = enabledSplit(enabled);
  return {
    sourceChains: natives.map(nativeChainView),
    destinationChains: evms.map((c) => evmChainView(c, natives)),
    supportedTokens: natives.map(nativeTokenView),
  };
}

export function burnConfigView(enabled: readonly ChainSymbol[]) {
  const { natives, evms } = enabledSplit(enabled);
  return {
    sourceChains: evms.map((c) => evmChainView(c, natives)),
    destinationChains: natives.map(nativeChainView),
    supportedTokens: natives.map((c) => ({
      ...uAssetView(c),
      minimumBurnAmount: NATIVE[c].uAsset.minimumBurnAmount.toString(),
    })),
  };
}
