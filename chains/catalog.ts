/**
 * The one table of chains, tokens, decimals, chain ids and every per-chain rule: minimums, dust, finality
 * (confirmations or a flag), reorg depth, the expiry of our transactions, the memo rule and reserves.
 * Config endpoints, routes, actors, watchers and adapters all read from here; nothing repeats these numbers.
 */

export const NATIVE_CHAINS = ["sol", "xrp", "sui", "doge", "zec"] as const;
export const EVM_CHAINS = ["base", "arbitrum", "katana", "world", "unichain"] as const;

export type NativeChain = typeof NATIVE_CHAINS[number];
export type EvmChain = typeof EVM_CHAINS[number];
export type ChainSymbol = NativeChain | EvmChain;
export const CHAIN_SYMBOLS = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;

/** Native chains whose coins are unspent outputs (kv/treasury.ts keeps one record per coin); the others, balances. */
export const UTXO_CHAINS = ["doge", "zec"] as const satisfies readonly NativeChain[];
export type UtxoChain = typeof UTXO_CHAINS[number];
export type AccountChain = Exclude<NativeChain, UtxoChain>;
/** Native chains whose coins are account balances: a hot wallet pays, sweeps fund it. */
export const ACCOUNT_CHAINS = ["sol", "xrp", "sui"] as const satisfies readonly AccountChain[];
const _accountChains = null as unknown as AccountChain satisfies typeof ACCOUNT_CHAINS[number];

export type NativeToken = "SOL" | "XRP" | "SUI" | "DOGE" | "ZEC";
export type UAsset = `u${NativeToken}`;

export const UASSET_DECIMALS = 18;

/**
 * When a transaction is final, as the chain defines it: a number of blocks on top (doge, zec), or a flag the chain's
 * node reports for a block, ledger or checkpoint (sol `finalized` commitment, a `validated` xrp ledger, a
 * `checkpointed` sui transaction, i.e. in a certified checkpoint). A flag chain's adapter reports it as
 * `TxStatus.final`; then one confirmation (being included) is all the depth it needs.
 */
export type Finality =
  | { kind: "depth"; confirmations: number }
  | { kind: "flag"; name: "finalized" | "validated" | "checkpointed" };

/**
 * The memo a burn configuration may carry (spec 2.3): xrp's is the destination tag the payout carries, required and
 * a 32-bit unsigned decimal; the other chains have no destination tag, their memo is optional text kept for the
 * partner.
 */
export type MemoRule =
  | { kind: "destinationTag"; required: true; max: bigint }
  | { kind: "text"; required: false; maxLength: number };

/**
 * How long an outgoing transaction can still be mined. `height`: the chain refuses it once its counter (block height,
 * ledger index, epoch) is past the one it names in `field`, set `window` ahead when it is signed; past that (at
 * finality) and unknown, it is proven dead (docs/architecture.md "Where native coins live"). `none`: it never expires,
 * only a conflicting spend (doge) or a used nonce (EVM) proves it dead.
 */
export type ExpiryRule =
  | { kind: "none" }
  | {
    kind: "height";
    unit: "block" | "ledger" | "epoch";
    window: number;
    field: "lastValidBlockHeight" | "LastLedgerSequence" | "expiration" | "nExpiryHeight";
  };

const NO_EXPIRY: ExpiryRule = { kind: "none" };
const TEXT_MEMO: MemoRule = { kind: "text", required: false, maxLength: 256 };

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
  /** When a deposit (or our payout) is final on mainnet, before value moves (docs/architecture.md invariant 4). */
  finality: Finality;
  /** Confirmations in sim mode, small so a local mint completes in seconds. */
  simConfirmations: number;
  /** How long a deposit may wait for its finality before it fails with `Blockchain confirmation timeout`. */
  confirmationTimeoutMinutes: number;
  /**
   * The deepest reorganisation the chain can have before finality, in blocks (slots, ledgers, checkpoints): the
   * watcher remembers more blocks than this (REORG_WINDOW_BLOCKS). A deeper one halts the watcher for an operator.
   */
  reorgDepth: number;
  /** The expiry our payouts carry, which lets a lost one be proven dead. */
  expiry: ExpiryRule;
  /** The memo a burn configuration for this chain may carry. */
  memo: MemoRule;
  /**
   * Native units an account must keep (xrp's base reserve; sol's rent-exempt minimum for 0 bytes): a sweep leaves it,
   * a payout to a new account must deliver at least it. The chain may lower it (xrp by fee vote, sol by feature
   * gate): a live adapter reads the current value from its node and uses this only as the default.
   */
  reserve: bigint;
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
  /** As NativeChainInfo's: a reorg deeper than this halts the watcher. */
  reorgDepth: number;
  /** EVM transactions never expire: a mint is proven dead only by its nonce used at finality. */
  expiry: ExpiryRule;
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
    finality: { kind: "flag", name: "finalized" },
    simConfirmations: 2,
    confirmationTimeoutMinutes: 30,
    // A slot is finalized once a supermajority has voted 32 slots on top of it (maximum lockout).
    reorgDepth: 32,
    // A transaction's blockhash is valid for 150 blocks: the node gives its lastValidBlockHeight with the blockhash.
    expiry: { kind: "height", unit: "block", window: 150, field: "lastValidBlockHeight" },
    memo: TEXT_MEMO,
    reserve: 890_880n, // rent-exempt minimum of a 0-byte account (getMinimumBalanceForRentExemption(0))
  },
  xrp: {
    symbol: "xrp",
    name: "XRP Ledger",
    token: { symbol: "XRP", name: "XRP", decimals: 6 },
    uAsset: { symbol: "uXRP", name: "Universal XRP", minimumBurnAmount: 25_000000000_000000000n },
    minimumDeposit: 1_000_000n, // 1 XRP
    dustDeposit: 100_000n, // 0.1 XRP
    blockMs: 4000,
    finality: { kind: "flag", name: "validated" },
    simConfirmations: 1,
    confirmationTimeoutMinutes: 30,
    // A closed ledger can still be replaced by the one consensus validates; a validated ledger never changes.
    reorgDepth: 1,
    // LastLedgerSequence = the last validated ledger + 20.
    expiry: { kind: "height", unit: "ledger", window: 20, field: "LastLedgerSequence" },
    memo: { kind: "destinationTag", required: true, max: 4_294_967_295n }, // 32-bit unsigned
    reserve: 1_000_000n, // base reserve, 1 XRP
  },
  sui: {
    symbol: "sui",
    name: "Sui",
    token: { symbol: "SUI", name: "Sui", decimals: 9 },
    uAsset: { symbol: "uSUI", name: "Universal SUI", minimumBurnAmount: 1_000000000_000000000n },
    minimumDeposit: 1_000_000_000n, // 1 SUI
    dustDeposit: 100_000_000n, // 0.1 SUI
    blockMs: 500,
    finality: { kind: "flag", name: "checkpointed" },
    simConfirmations: 1,
    confirmationTimeoutMinutes: 30,
    // A checkpoint is final when it is certified: there is nothing to reorganise.
    reorgDepth: 0,
    // Valid until the end of the epoch after the one it is signed in.
    expiry: { kind: "height", unit: "epoch", window: 1, field: "expiration" },
    memo: TEXT_MEMO,
    reserve: 0n,
  },
  doge: {
    symbol: "doge",
    name: "Dogecoin",
    token: { symbol: "DOGE", name: "Dogecoin", decimals: 8 },
    uAsset: { symbol: "uDOGE", name: "Universal DOGE", minimumBurnAmount: 100000000_000000000n },
    minimumDeposit: 1_000_000_000n, // 10 DOGE
    dustDeposit: 100_000_000n, // 1 DOGE
    blockMs: 60000,
    finality: { kind: "depth", confirmations: 40 },
    simConfirmations: 3,
    confirmationTimeoutMinutes: 360,
    reorgDepth: 40, // the depth we call final: a deeper reorg is an incident, not a case the watcher guesses at
    expiry: NO_EXPIRY, // dead only when one of its inputs is spent by another buried transaction
    memo: TEXT_MEMO,
    reserve: 0n,
  },
  zec: {
    symbol: "zec",
    name: "Zcash",
    token: { symbol: "ZEC", name: "Zcash", decimals: 8 },
    uAsset: { symbol: "uZEC", name: "Universal ZEC", minimumBurnAmount: 100000000_000000000n },
    minimumDeposit: 100_000n, // 0.001 ZEC
    dustDeposit: 10_000n, // 0.0001 ZEC
    blockMs: 75000,
    finality: { kind: "depth", confirmations: 24 },
    simConfirmations: 3,
    confirmationTimeoutMinutes: 360,
    reorgDepth: 24,
    // nExpiryHeight = the tip + 40: a transaction cannot be mined above it.
    expiry: { kind: "height", unit: "block", window: 40, field: "nExpiryHeight" },
    memo: TEXT_MEMO,
    reserve: 0n,
  },
};

/** Every uAsset symbol, in the order of NATIVE_CHAINS. */
export const UASSETS = NATIVE_CHAINS.map((c) => NATIVE[c].uAsset.symbol) as [UAsset, ...UAsset[]];

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
    reorgDepth: 20,
    expiry: NO_EXPIRY,
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
    reorgDepth: 20,
    expiry: NO_EXPIRY,
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
    reorgDepth: 20,
    expiry: NO_EXPIRY,
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
    reorgDepth: 20,
    expiry: NO_EXPIRY,
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
    reorgDepth: 20,
    expiry: NO_EXPIRY,
  },
};

/**
 * Confirmations a transaction needs under `finality`: its depth, or one for a flag chain, where the adapter's
 * `TxStatus.final` carries the flag and `isCounted` requires it.
 */
export function requiredConfirmations(finality: Finality): number {
  return finality.kind === "depth" ? finality.confirmations : 1;
}

/**
 * How many recent blocks a watcher remembers to find the common ancestor after a reorg: twice the deepest reorg any
 * chain can have before finality (and any chain's confirmations), so a reorg that could undo a confirmed transfer is
 * always seen whole. A reorg deeper than this is not guessed at: the watcher stops that chain and raises an operator
 * alert.
 */
export const REORG_WINDOW_BLOCKS = 2 *
  Math.max(
    ...Object.values(NATIVE).flatMap((c) => [c.reorgDepth, requiredConfirmations(c.finality)]),
    ...Object.values(EVM).flatMap((c) => [c.reorgDepth, c.confirmations]),
  );

/**
 * The longest memo any chain accepts: a request body is held to it before its chain is known; the chain's own rule
 * (`memoProblem`) applies after.
 */
export const MEMO_MAX_LENGTH = Math.max(
  ...Object.values(NATIVE).map((c) => c.memo.kind === "text" ? c.memo.maxLength : c.memo.max.toString().length),
);

export type MemoProblem =
  | { problem: "required" }
  | { problem: "notNumeric" }
  | { problem: "tooLarge"; max: bigint }
  | { problem: "tooLong"; maxLength: number };

/** How `memo` breaks `chain`'s memo rule (an absent memo is undefined or ""), or null when it is acceptable. */
export function memoProblem(chain: NativeChain, memo: string | undefined): MemoProblem | null {
  const rule = NATIVE[chain].memo;
  if (memo === undefined || memo === "") return rule.required ? { problem: "required" } : null;
  if (rule.kind === "text") {
    return memo.length > rule.maxLength ? { problem: "tooLong", maxLength: rule.maxLength } : null;
  }
  if (!/^\d+$/.test(memo)) return { problem: "notNumeric" };
  // Compared as text first: BigInt of a thousand digits is a needless cost on a request path.
  const tooLarge = memo.length > rule.max.toString().length || BigInt(memo) > rule.max;
  return tooLarge ? { problem: "tooLarge", max: rule.max } : null;
}

export function isNativeChain(value: unknown): value is NativeChain {
  return typeof value === "string" && (NATIVE_CHAINS as readonly string[]).includes(value);
}

export function isUtxoChain(value: unknown): value is UtxoChain {
  return (UTXO_CHAINS as readonly unknown[]).includes(value);
}

export function isAccountChain(value: unknown): value is AccountChain {
  return isNativeChain(value) && !isUtxoChain(value);
}

export function isEvmChain(value: unknown): value is EvmChain {
  return typeof value === "string" && (EVM_CHAINS as readonly string[]).includes(value);
}

/**
 * Which family a chain belongs to, with the chain narrowed to it: the one question callers outside `chains/` ask
 * (`switch (chainFamily(c).family)`), answered here from the catalog's lists so no other module keeps its own.
 * UTXO chains (doge, zec) pay from treasury coins with change; account chains (sol, xrp, sui) pay from a hot wallet
 * that sweeps fill (docs/operations.md, "UTXO treasuries" and "Account treasuries").
 */
export type ChainFamily =
  | { family: "evm"; chain: EvmChain }
  | { family: "utxo"; chain: UtxoChain }
  | { family: "account"; chain: AccountChain };

export type Family = ChainFamily["family"];
/** The chains of one family. */
export type ChainOf<F extends Family> = Extract<ChainFamily, { family: F }>["chain"];

export function chainFamily(chain: EvmChain): Extract<ChainFamily, { family: "evm" }>;
export function chainFamily(chain: NativeChain): Exclude<ChainFamily, { family: "evm" }>;
export function chainFamily(chain: ChainSymbol): ChainFamily;
/** A value read from a stored record or a request: null when it names no chain. */
export function chainFamily(chain: unknown): ChainFamily | null;
export function chainFamily(chain: unknown): ChainFamily | null {
  if (isUtxoChain(chain)) return { family: "utxo", chain };
  if (isAccountChain(chain)) return { family: "account", chain };
  if (isEvmChain(chain)) return { family: "evm", chain };
  return null;
}

/** Whether `value` names a chain of `family`: the runtime check of a stored record's or a request's chain. */
export function isChainOf<F extends Family>(family: F, value: unknown): value is ChainOf<F> {
  return chainFamily(value)?.family === family;
}

/** The chains of `family` among `chains`, in their order. */
export function chainsOf<F extends Family>(family: F, chains: readonly unknown[]): ChainOf<F>[] {
  return chains.filter((c): c is ChainOf<F> => isChainOf(family, c));
}

/** The family of a native chain's payer (chains/adapter.ts `UtxoPayer`, `AccountPayer`). */
export function payerFamily(chain: NativeChain): "utxo" | "account" {
  return chainFamily(chain).family;
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
