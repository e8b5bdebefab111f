/**
 * The one interface every chain adapter implements, simulated or live. Watchers read blocks through `ChainReader`;
 * actors move value through `ChainSender`. Outgoing transactions follow docs/architecture.md invariant 2: `prepare`
 * returns the signed transaction (bytes and hash) without sending it, together with what it consumes, when it expires
 * and what must be reserved for it, all as plain data; the caller commits it and its reservations to KV in one atomic
 * (kv/chain_state.ts), then `broadcast`s it. After a crash the caller re-broadcasts the same bytes or asks for their
 * status, never preparing a second one while the first may still land: only `txStatus` answering `dead`, with a
 * proof, lets a new one be signed.
 *
 * Adapters never write KV to reserve anything: a nonce, a coin, a note is returned as a `Reservation` and written by
 * kv/chain_state.ts in the recording atomic, so a failed commit leaves nothing reserved and nothing to undo.
 *
 * The contract suite every adapter must pass is tests/support/chain_contract.ts.
 */
import type { Awaitable, SigningContext } from "./signing.ts";
import {
  type AccountChain,
  type ChainSymbol,
  type EvmChain,
  type NativeChain,
  payerFamily,
  type UAsset,
  type UtxoChain,
} from "./catalog.ts";
import { ChainError, type ChainErrorOptions } from "./errors.ts";

/** A transient failure (RPC down, timeout, rate limit): retry later, never a reason to fail an order. */
export class TransientChainError extends ChainError {
  constructor(message: string, options: Omit<ChainErrorOptions, "transient"> = {}) {
    super(message, { ...options, transient: true });
    this.name = "TransientChainError";
  }
}

/** One value transfer seen in a block: a native output/transfer, or a uAsset ERC-20 `Transfer` log. */
export interface ObservedTransfer {
  txHash: string;
  /** Output or log index within the transaction: (chain, txHash, index) identifies a deposit for ever. */
  index: number;
  from: string;
  to: string;
  /** Smallest units: native units for a native coin, wei for a uAsset. */
  amount: bigint;
  /** "native" for the chain's coin, else the uAsset symbol. */
  asset: "native" | UAsset;
  /**
   * UTXO chains: an output of a coinbase transaction. Never credited (it needs maturity, and a Zcash coinbase can
   * only be spent to shielded outputs): the watcher records it as held for an operator.
   */
  coinbase?: true;
  /**
   * Value that reached one of our addresses in a way we never credit automatically, with why: an XRPL issued-currency
   * payment or a transaction type other than Payment delivering XRP, for example. The watcher records it as held for
   * an operator (no order, never dropped). `amount` is what the chain says was delivered, in native units where it is
   * native (0 when it is not the native coin).
   */
  heldReason?: string;
}

export interface ScannedBlock {
  number: number;
  hash: string;
  parentHash: string;
  transfers: ObservedTransfer[];
}

/**
 * How a watcher bounds a scan (docs/scan-budget.md). Readers that cannot honour an option ignore it: the watcher
 * matches every transfer against its address set anyway.
 */
export interface ScanOptions {
  /**
   * Whether an address is one of ours. A reader that takes it builds a transfer only for a recipient it accepts, so
   * nothing of a block that is not ours is kept. Only readers of final blocks use it (the watcher refreshes the set
   * after reading the tip, and a final block under that tip cannot change, so every address it pays was in the set).
   */
  ours?: (address: string) => boolean;
  /**
   * Bytes of answers the scan may read. A reader that honours it reads the range in order and stops after the block
   * that reaches it: its answer then ends at the last block it read (at least one when the range has any), and the
   * watcher goes on after that block.
   */
  maxBytes?: number;
  /**
   * Credited with the bytes of every answer the scan reads, by readers that count them: what a cron run of the watcher
   * has read against its byte budget (docs/scan-budget.md "Deploy mode").
   */
  meter?: { bytes: number };
  /**
   * Every address of ours, listable (the set `ours` answers from): a reader that can ask its node per address (Solana's
   * `getSignaturesForAddress`, chains/sol/poll.ts) uses it instead of reading every block when that is cheaper.
   */
  addresses?: AddressList;
}

/** Our addresses of a chain as a watcher holds them: how many, and each one (kv/address_index.ts). */
export interface AddressList {
  readonly size: number;
  values(): Iterable<string>;
}

/** What a reader's scans read, counted on the wire, for tests, benches and operators (never used to decide anything). */
export interface ScanStats {
  /** Requests of scans answered. */
  requests: number;
  /** Bytes of those answers. */
  bytes: number;
  /** The largest single answer, in bytes: what one request made the reader hold at once. */
  largestResponse: number;
}

/** A block reader's `ScanStats`, and what it built. */
export interface BlockScanStats extends ScanStats {
  blocks: number;
  /** Transfers built (with `ours`, only those to our addresses). */
  transfersBuilt: number;
  /** Requests asked again smaller after a provider refused or failed them. */
  fallbacks: number;
}

export interface BlockRef {
  number: number;
  hash: string;
}

/**
 * `blockHash` of a height the chain passed over without a block (a skipped Solana slot). Distinct from null, which
 * means "above the tip": a skipped slot is neither a reorg nor the end of the chain, and a watcher scans past it.
 */
export const SKIPPED: unique symbol = Symbol.for("chain-adapter.skipped-block");
export type Skipped = typeof SKIPPED;

/**
 * How a chain says a transaction is final, for operators and for the reader's `final` flag:
 * - `depth`: N blocks on top (doge, zec; the catalog's confirmations). `included.final` is left undefined and
 *   `confirmations` alone decide.
 * - `flag`: the chain marks it: Solana `finalized`, XRPL `validated`, Sui checkpointed, an EVM `safe`/`finalized`
 *   tag. The reader MUST set `included.final` (true or false) on every `included` answer; confirmations are counted
 *   too, so a catalog count above 1 still applies on top of the flag.
 */
export type Finality = { kind: "depth" } | { kind: "flag"; flag: string };

/** A UTXO: the output `index` of transaction `txHash`. */
export interface Outpoint {
  txHash: string;
  index: number;
}

/**
 * Until when a signed transaction may be included, in the chain's own unit. It may land in a block (ledger, epoch)
 * at or below `value`, never above: Solana `lastValidBlockHeight` and Zcash `nExpiryHeight` are heights, XRPL
 * `LastLedgerSequence` a ledger index, a Sui expiration an epoch.
 */
export interface Expiry {
  kind: "height" | "ledger" | "epoch";
  value: number;
}

/** What a transaction uses up on chain: another final transaction using the same thing proves it dead. */
export type Consumed =
  /**
   * Coins spent (doge, zec). `since`: the lowest block any of them was confirmed in, so a conflicting spend is
   * looked for from there up, never through the whole chain.
   */
  | { kind: "outpoints"; outpoints: Outpoint[]; since?: number }
  /** An account's nonce (EVM) or sequence (XRPL). */
  | { kind: "nonce"; account: string; nonce: number };

/**
 * Why a recorded transaction can never be mined: the facts, as data (stored on the order in `deadIntents`, plain
 * JSON), besides a sentence for people.
 * - `expired`: the chain's final height, ledger or epoch (`reached`) is past the transaction's `expiry` and the chain
 *   does not know the transaction.
 * - `conflict`: what it `consumed` (an input, a nonce, a sequence) is used by another final transaction (`spentBy`
 *   when the chain says which).
 * - `failed`: it was included and failed, and that block is final (it consumed its fee and sequence, and the same
 *   bytes cannot run again).
 */
export type DeathProof =
  | { kind: "expired"; expiry: Expiry; reached: number }
  | { kind: "conflict"; consumed: Consumed; spentBy: string | null }
  | { kind: "failed"; blockNumber: number; reason: string };

/** Where a transaction stands on the canonical chain now. */
export type TxStatus =
  | { state: "unknown" } // not seen: never broadcast, dropped, or reorganised out and not (yet) re-included
  | { state: "pending" } // in the mempool
  | {
    state: "included";
    blockNumber: number;
    confirmations: number;
    success: boolean;
    reason?: string;
    /** The hash that was mined when it differs from the one asked about (a fee-bumped replacement, same nonce). */
    txHash?: string;
    /**
     * Whether the chain marks it final and its block is still canonical: at or below the EVM finality tag
     * (`safe`/`finalized`), Solana `finalized`, in an XRPL validated ledger, in a certified Sui checkpoint. Readers
     * of `flag` finality set it on every answer; readers of `depth` finality (doge, zec, the simulated ledgers) leave
     * it undefined, and `confirmations` alone decide.
     */
    final?: boolean;
  }
  /**
   * Proven never to be mined (see `DeathProof`): only then may a new transaction replace it. Readers answer it only
   * when asked with the transaction's `OwnTx` (they need its bytes, expiry or inputs to prove anything), and only
   * from final facts: a reorg can never bring a dead transaction back.
   */
  | { state: "dead"; proof: DeathProof; detail: string };

/** One of our recorded transactions, as `txStatus` needs it to prove it dead. */
export interface OwnTx {
  raw: string;
  expiry?: Expiry;
  consumes?: Consumed;
}

/**
 * Whether an included transaction counts: deep enough, and final where the chain can say so. The one rule for
 * deposits, burns and our own outgoing transactions.
 */
export function isCounted(status: TxStatus, required: number): boolean {
  return status.state === "included" && status.confirmations >= required && status.final !== false;
}

export interface ChainReader {
  readonly chain: ChainSymbol;
  /** How this chain decides finality; `flag` readers set `included.final` on every answer. */
  readonly finality: Finality;
  /** The newest block; never a skipped slot. */
  tip(): Promise<BlockRef>;
  /** Hash of the canonical block at `number`, `SKIPPED` if the chain has no block there, or null above the tip. */
  blockHash(number: number): Promise<string | Skipped | null>;
  /**
   * Canonical blocks `from..to` (inclusive) with the transfers a watcher may care about. Skipped slots are absent;
   * adapters may leave out blocks with nothing for us (EVM log scans) but return the range's last block when it has
   * one. An empty answer (for `to` at or below `tip()`) states that the range holds no block at all: the watcher moves
   * past it. A reader that cannot prove that (its node keeps no history there, or has not finalized `to` yet) throws.
   * With `opts.maxBytes` a reader may answer a prefix of the range instead (see `ScanOptions`).
   */
  scan(from: number, to: number, opts?: ScanOptions): Promise<ScannedBlock[]>;
  /**
   * True when the reader would rather read `from..to` on a later tick (a reader polling per address between its polls,
   * chains/sol/poll.ts): the watcher then scans nothing this tick and keeps its cursor. Absent: always read now.
   */
  deferScan?(from: number, to: number, addresses: number): boolean;
  /**
   * `ours` (the recorded transaction: bytes, expiry, what it consumes) lets the reader prove it dead; without it the
   * answer is never `dead`.
   */
  txStatus(txHash: string, ours?: OwnTx): Promise<TxStatus>;
  /**
   * The transfers a scan shows for this transaction in the block it is in now, numbered as `scan` numbers them, or
   * null when it is in no canonical block. After a reorg the same transaction can be re-executed with other effects
   * (other logs on EVM): a burn is re-checked with this before value moves.
   */
  transfersOf(txHash: string): Promise<ObservedTransfer[] | null>;
  /**
   * UTXO chains, whose scan leaves `from` empty (a transaction has inputs, not a sender): the address the
   * transaction's first input spent, or null when it cannot be told (a coinbase, a non-standard script). The watcher
   * asks only for transfers that pay us, so its cost grows with our deposits, never with a block's size.
   */
  senderOf?(txHash: string): Promise<string | null>;
  /**
   * Account chains (sol, xrp, sui): the native balance `address` holds at the tip, in smallest units (0 for an
   * account that does not exist). What the sweeper reads before sweeping a deposit address.
   */
  balance?(address: string): Promise<bigint>;
  /**
   * UTXO chains (doge, zec): whether each of `outpoints`, outputs paying `address`, is unspent in the best chain
   * (mempool ignored), in order. Throws when the node cannot say. What reconciliation counts of the cold sweeps'
   * outputs still at the cold address (a Dogecoin node has no address index, so only outputs we know are asked about).
   */
  unspent?(address: string, outpoints: readonly Outpoint[]): Promise<boolean[]>;
}

/**
 * What must be locked in KV for a signed transaction to be safe to send, written by kv/chain_state.ts in the SAME
 * atomic that records it (checks and writes): if that commit fails, nothing was reserved and it is never sent.
 * - `nonce`: the account's next-nonce counter moves from `nonce` to `nonce + 1`, checked against the counter's
 *   versionstamp the adapter read (`expectVersion`, null when absent): of two preparations only one commits.
 * - `mintNote`: where a deposit id's mint was recorded (which uAsset, which transaction), so `mintedBy` asks one
 *   contract instead of five.
 * - `coins`: each outpoint is locked to this transaction; the commit fails if any is already locked. Released in the
 *   commit that records the transaction dead (its `consumes`).
 * - `sequence` (xrp): the account's `Sequence` is locked to this transaction; the commit fails if another recorded
 *   transaction holds it, so two payouts prepared at once never both take it. Not a counter like an EVM nonce: an
 *   XRPL transaction expires (LastLedgerSequence) without using its Sequence, and the next one must take that same
 *   Sequence again, so the lock is released in the commit that records the transaction dead or failed.
 * - `hotWallet` (account chains' payouts, added by the order actor, never by an adapter): the payout holds `amount`
 *   (its amount and fee) of the hot wallet at `hotIndex` until it is final or dead, and the chain's hot-wallet epoch
 *   read before the funding check (`epoch`, its versionstamp) is checked and bumped: of two payouts checked at once only one commits
 *   (kv/hot_wallet.ts).
 */
export type Reservation =
  | { kind: "nonce"; chain: EvmChain; account: string; nonce: bigint; expectVersion: string | null }
  | { kind: "mintNote"; chain: EvmChain; depositId: string; asset: UAsset; txHash: string }
  | { kind: "coins"; chain: ChainSymbol; outpoints: Outpoint[] }
  | { kind: "sequence"; chain: "xrp"; account: string; sequence: number }
  | {
    kind: "hotWallet";
    chain: "sol" | "xrp" | "sui";
    amount: bigint;
    epoch: string | null;
    epochValue: bigint;
    /** The derivation index of the hot wallet it leaves (0 when absent). */
    hotIndex?: number;
  };

export interface PreparedTx {
  txHash: string;
  /** What `broadcast` sends: signed bytes (hex/base64) or, in sim, the serialized transaction. */
  raw: string;
  /** Past this the transaction can never be included (chains without expiry: absent). */
  expiry?: Expiry;
  /** What it uses up on chain: recorded with it, to prove it dead and to release coins. */
  consumes?: Consumed;
  /** Locked in the recording atomic; plain data, never closures (kv/chain_state.ts `addReservations`). */
  reservations?: Reservation[];
  /**
   * UTXO chains: the output paying our change address, which becomes a treasury coin when the transaction is final.
   * Absent when the payout has no change.
   */
  change?: ChangeOutput;
  /**
   * What it pays in fee, where the payer knows it when signing (UTXO chains: its coins less its outputs). Recorded
   * with it: reconciliation counts it as spent by the operator once the transaction is final.
   */
  fee?: bigint;
}

/** Output `index` of a prepared transaction, paying `amount` back to our `address`. */
export interface ChangeOutput {
  index: number;
  address: string;
  amount: bigint;
  /**
   * The change key's index on the change branch (chains/derivation.ts `CHANGE_PARENT_PATHS`): the one in effect when it
   * was signed (docs/operations.md "Rotating a hot wallet", UTXO change). Absent: 0, the one change address before
   * rotations.
   */
  derivationIndex?: number;
}

export interface MintRequest {
  /** 32-byte hex id of the deposit; the uAsset contract refuses an id it has minted. */
  depositId: string;
  to: string;
  asset: UAsset;
  amountWei: bigint;
}

export interface PayoutRequest {
  orderId: string;
  to: string;
  amount: bigint;
  /** Destination tag (xrp) or memo. */
  memo: string | null;
}

/**
 * A UTXO chain's payout: the coins to spend, chosen by the caller from the treasury (unlocked, confirmed). The
 * prepared payout `consumes` their outpoints and reserves them (`coins`).
 */
export interface UtxoPayoutRequest extends PayoutRequest {
  coins: PayoutCoin[];
}

/**
 * A treasury coin handed to a UTXO payer: the outpoint, what it holds, and whose key signs its spend (the deposit
 * key at `derivationIndex`, or the payer's own change key when `address` is its change address). `height` is the
 * block it was confirmed in: a conflicting spend of it can only be at or above it.
 */
export interface PayoutCoin extends Outpoint {
  amount: bigint;
  address: string;
  derivationIndex: number;
  height: number;
}

/** The outpoints of `coins`, without the rest (what a transaction `consumes` and reserves). */
export function outpointsOf(coins: readonly Outpoint[]): Outpoint[] {
  return coins.map(({ txHash, index }) => ({ txHash, index }));
}

/**
 * Moves a deposit address's balance to the hot wallet (account chains: sol, xrp, sui), keeping the address's own
 * reserve where the chain needs one. Signed by the deposit key at `derivationIndex` through the adapter's signer,
 * which never hands out the key. UTXO chains need no sweep (their coins are spent directly).
 */
export interface SweepRequest {
  /** The deposit (mint order) whose funds move: one sweep per deposit, recorded under this id. */
  sweepId: string;
  from: string;
  derivationIndex: number;
  /** The whole balance less the address's reserve and the fee, as the adapter computes it, when absent. */
  amount?: bigint;
  /**
   * Whose key `derivationIndex` names: a deposit address's (the default), or a retired hot wallet's, drained into the
   * hot wallet in effect after a rotation (docs/operations.md "Rotating a hot wallet"): the same one payment, from
   * another key.
   */
  branch?: "deposit" | "hot";
}

export interface ChainSender {
  readonly chain: ChainSymbol;
  /** Broadcasting the same `raw` again is harmless: it is the same transaction. */
  broadcast(tx: PreparedTx): Promise<void>;
  /**
   * Called while a recorded transaction is not mined (pending, or unknown to the node: never sent or dropped): an
   * adapter rebroadcasts its latest version or replaces it with a higher fee at the same nonce (recording the
   * replacement before sending it). Optional (sim chains never get stuck); without it the actor rebroadcasts.
   */
  nudge?(tx: PreparedTx, pendingSinceMs: number): Promise<void>;
}

export interface EvmMinter extends ChainSender {
  prepareMint(req: MintRequest): Promise<PreparedTx>;
  /** The transaction that minted `depositId`, read from the contract, or null when it was never minted. */
  mintedBy(depositId: string): Promise<string | null>;
  /**
   * Why the contract would refuse this mint now for a reason its admin can lift (paused, supply cap), or null. Asked
   * after a mint reverted on chain: such an order waits with the reason recorded instead of failing.
   */
  adminRefusal?(req: MintRequest): Promise<string | null>;
  /**
   * What the minter key may still mint of `asset` (its allowance, which each mint spends and only the contract's admin
   * raises) and what the admin last set it to. Absent where the contract keeps no allowance (the sim).
   */
  allowance?(asset: UAsset): Promise<{ left: bigint; configured: bigint }>;
  /**
   * The address this minter signs with. An attempt recorded under another (a minter key the admin rotated out:
   * docs/live-chains.md "Rotating the minter key") that reverted is that key's, not the order's. Absent on the sim.
   */
  readonly account?: string;
}

/**
 * Whether a payout can be signed now, asked before preparing it:
 * - `unfunded`: the hot wallet cannot pay it yet (its balance less its reserve and the fee): the order waits, with
 *   `detail` as its held reason, until sweeps fund the hot wallet.
 * - `destination_below_reserve`: the destination account does not exist and the amount is below what creating it
 *   needs (xrp base reserve, sol rent-exempt minimum): the chain would refuse it, the order fails.
 *
 * `ok` says what the hot wallet can spend now (`spendable`: its balance less what it must keep and this payout's fee)
 * and the payout's `fee` (an upper bound where the chain charges at most a budget): the order actor subtracts what
 * recorded, not yet final payouts hold (kv/hot_wallet.ts `fundsAfterHolds`) and reserves `amount + fee` for this one.
 */
export type PayoutCheck =
  | { ok: true; spendable?: bigint; fee?: bigint }
  | { ok: false; reason: "unfunded" | "destination_below_reserve"; detail: string };

/**
 * A UTXO chain's payer (doge, zec): it spends the treasury coins the caller chose, sends change to its own change
 * address, and needs no sweep (deposit coins are spent directly) and no funding check (coin selection is the check).
 */
export interface UtxoPayer extends ChainSender {
  readonly family: "utxo";
  /**
   * Our change address (chains/derivation.ts `CHANGE_PARENT_PATHS`, index 0), where payouts send their change and
   * consolidations merge coins. The payer signs coins at this address with its change key. Null only where this
   * process cannot sign for the chain (a disabled chain, config/registry.ts): it neither pays nor consolidates.
   */
  readonly changeAddress: string | null;
  /** The change key's index of `changeAddress` (0 unless built by `atChangeIndex`); absent where it has none. */
  readonly changeIndex?: number;
  /**
   * The same payer with its change address at index `index` of the change branch: new change goes there, and coins at
   * every earlier change address stay spendable (their own change key signs them, by the coin's `derivationIndex`).
   * Absent where the payer cannot sign for another index.
   */
  atChangeIndex?(index: number): UtxoPayer;
  preparePayout(req: UtxoPayoutRequest): Promise<PreparedTx>;
}

/**
 * An account chain's payer (sol, xrp, sui): payouts leave the hot wallet, after `checkPayout` says it can pay them,
 * and sweeps move deposit addresses' balances into it.
 */
export interface AccountPayer extends ChainSender {
  readonly family: "account";
  /**
   * The hot wallet payouts are sent from and sweeps move deposits to. Null only where this process cannot sign for
   * the chain (a disabled chain, config/registry.ts): nothing is paid from it or swept to it, and reports say so.
   */
  readonly hotWallet: string | null;
  /**
   * The derivation index of `hotWallet` (chains/derivation.ts `hotWalletPath`); absent on a payer that has none.
   * Which index is in effect is state (kv/hot_wallets.ts), and chains/ never reads KV: the actors read it and ask
   * `atHotIndex` for the payer of that wallet, so each prepared transaction is signed by the key the caller recorded
   * it under, and two processes never disagree about a payer's wallet in the middle of a step.
   */
  readonly hotIndex?: number;
  /**
   * The same payer with its hot wallet at derivation index `index`. Absent where the payer cannot sign for another
   * index (a disabled chain, a test's stand-in): its chain's hot wallet cannot be rotated.
   */
  atHotIndex?(index: number): AccountPayer;
  preparePayout(req: PayoutRequest): Promise<PreparedTx>;
  /** Asked before `preparePayout` (see `PayoutCheck`). */
  checkPayout(req: PayoutRequest): Promise<PayoutCheck>;
  /**
   * Prepares a sweep of a deposit address into the hot wallet, recorded and broadcast like a payout (its expiry,
   * consumes and reservations included). With `branch: "hot"`, the drain of a retired hot wallet into this one.
   */
  prepareSweep(req: SweepRequest): Promise<PreparedTx>;
}

/** A native chain's payer: callers that hold only a `NativeChain` switch on `family` once. */
export type NativePayer = UtxoPayer | AccountPayer;

/**
 * The payer `Chains.payer` returns for `chain`: a `UtxoPayer` for a UTXO chain, an `AccountPayer` for an account
 * chain, and the union when the caller only knows a `NativeChain`. The catalog's types decide, so a caller that
 * already knows the family (the sweeper: account chains; consolidation: UTXO chains) needs no switch at all.
 */
export type PayerOf<C extends NativeChain> = C extends UtxoChain ? UtxoPayer
  : C extends AccountChain ? AccountPayer
  : never;

/**
 * `payer` as `chain`'s `PayerOf`, after checking that its family is the one the catalog gives the chain: what a
 * `Chains.payer` that picks among payers (config/registry.ts, a test's or bench's counted payer) returns, so a payer
 * of the wrong family fails where it is handed out, never at a caller that trusted its type.
 */
export function payerFor<C extends NativeChain>(chain: C, payer: NativePayer): PayerOf<C> {
  if (payer.family !== payerFamily(chain)) {
    throw new Error(`${chain} is a ${payerFamily(chain)} chain: it cannot be served by a ${payer.family} payer`);
  }
  return payer as PayerOf<C>;
}

/** One `Minted(depositId, to, amount)` event of a uAsset contract, as the chain has it. */
export interface MintedEvent {
  depositId: string;
  to: string;
  amount: bigint;
  txHash: string;
  blockNumber: number;
}

/**
 * The uAsset contracts of one EVM chain as the chain sees them (docs/reconciliation.md: reconciliation and metrics read
 * them, never KV): supply, balances, and every mint event since deployment.
 */
export interface UAssetView {
  readonly chain: EvmChain;
  totalSupply(asset: UAsset): Promise<bigint>;
  balanceOf(asset: UAsset, address: string): Promise<bigint>;
  /** Every `Minted` event of `asset`'s contract, oldest first, up to the tip. */
  minted(asset: UAsset): Promise<MintedEvent[]>;
}

/**
 * Transactions signed by the shared transfer address's key (chains/transfer_address.ts; docs/onchain-burn.md), recorded
 * and sent like every outgoing transaction (write-ahead, nonce reservations, `nudge`, proof of death):
 * - `prepareBurn`: `burn(amount)` of uAssets the transfer address holds for completed burn orders;
 * - `prepareTransfer`: `transfer(to, amount)` of uAssets back to a sender (a refunded held record).
 */
export interface UAssetSender extends ChainSender {
  /** The transfer address these transactions are sent from. */
  readonly address: string;
  prepareBurn(req: { asset: UAsset; amount: bigint; batchId: string }): Promise<PreparedTx>;
  prepareTransfer(req: { asset: UAsset; to: string; amount: bigint; refundId: string }): Promise<PreparedTx>;
}

/** Everything the pipeline needs, per chain symbol. */
export interface Chains {
  reader(chain: ChainSymbol): ChainReader;
  minter(chain: EvmChain): EvmMinter;
  /**
   * One method typed per family (not two accessors): call sites keep one name, a caller with a `UtxoChain` or an
   * `AccountChain` gets its family's payer, and one with a `NativeChain` switches on `family` once.
   */
  payer<C extends NativeChain>(chain: C): PayerOf<C>;
  /**
   * docs/reconciliation.md: the uAsset contracts as the chain sees them. Absent where not built (a process without EVM
   * chains).
   */
  uAssetView?(chain: EvmChain): UAssetView;
  /**
   * docs/onchain-burn.md: the transfer address's sender. Absent when its key is not ours (BURN_TRANSFER_ADDRESS names
   * another address): then nothing is burned or refunded on chain, and an alert says so.
   */
  uAssetSender?(chain: EvmChain): UAssetSender;
}

/**
 * A call on a chain this process does not run (no live adapter configured, and it is not simulated). Never transient:
 * the pipeline holds what concerns that chain instead of retrying it, and nothing is ever simulated in its place.
 */
export class ChainDisabledError extends ChainError {
  declare readonly chain: ChainSymbol;

  constructor(chain: ChainSymbol) {
    super(`chain ${chain} is disabled in this process`, { chain, transient: false });
    this.name = "ChainDisabledError";
  }
}

/** Why an RPC endpoint failed a call (chains/shared/http_failover.ts, chains/evm/client.ts). */
export type RpcFailureReason = "network" | "timeout" | "http" | "unauthorized" | "rate_limited" | "invalid_answer";

/**
 * The RPC clients' hook: called once per call sent to an endpoint. Its optional `failed` is called once per call an
 * endpoint failed (no answer, a timeout, an HTTP error, refused credentials, a rate limit, an answer that is not
 * JSON-RPC), before the client fails over to the next URL; a node's own JSON-RPC error is an answer, not a failure.
 * `failed` rides on the function itself, so every client layer that passes `onRpc` along passes it too. `url` may
 * carry credentials or a key in its path: whoever keeps it redacts it (chains/shared/redact.ts).
 */
export interface RpcHook {
  (info: { url: string; method: string }): void;
  failed?: (info: { url: string; method: string; reason: RpcFailureReason }) => void;
}

/**
 * What every live account-chain factory takes (chains/sol, chains/xrp, chains/sui: `solAdapters`, `xrpAdapters`,
 * `suiAdapters`), built by config/registry.ts from `<CHAIN>_RPC_URLS` and the pipeline settings.
 */
export interface AccountAdapterOptions {
  /** In order of preference (failover); credentials, when any, as URL userinfo (chains/shared/http_failover.ts). */
  urls: readonly string[];
  timeoutMs?: number;
  /** Called once per RPC call sent (metrics, tests and benches counting calls); `failed` once per endpoint failure. */
  onRpc?: RpcHook;
  /**
   * Signs by derivation index and branch, never handing out a key: deposit keys for sweeps, the hot wallets
   * (`branch: "hot"`, chains/derivation.ts `hotWalletPath`, by index) for payouts and drains. Signing may answer
   * later (the signer process, chains/signer_client.ts): payers await it and give the unsigned bytes
   * (chains/signing.ts), which an in-process Signer ignores and the signer process checks.
   */
  signer: {
    /**
     * Makes `publicKey` and `address` of that key answerable (the signer process's client asks for it once, since a
     * keyless worker cannot derive deposit keys); absent in process, where every key is at hand.
     */
    loadKey?(chain: "sol" | "xrp" | "sui", index: number, branch: "deposit" | "hot"): Promise<void>;
    publicKey(chain: "sol" | "xrp" | "sui", index: number, branch?: "deposit" | "hot"): Uint8Array;
    address(chain: "sol" | "xrp" | "sui", index: number, branch?: "deposit" | "hot"): string;
    signMessage(
      chain: "sol" | "sui",
      index: number,
      message: Uint8Array,
      branch?: "deposit" | "hot",
      context?: SigningContext,
    ): Awaitable<Uint8Array>;
    signDigest(
      chain: "xrp",
      index: number,
      digest: Uint8Array,
      branch?: "deposit" | "hot",
      context?: SigningContext,
    ): Awaitable<{ format: "der"; bytes: Uint8Array } | { format: "recoverable"; bytes: Uint8Array; recovery: 0 | 1 }>;
  };
  /** Confirmations on top of the chain's finality flag (the catalog's, or `<CHAIN>_CONFIRMATIONS`). */
  confirmations: number;
  /** How deposits are found (sol only: `SOL_DETECTION`, chains/sol/poll.ts); unset: by reading every block. */
  detection?: Detection;
}

/**
 * How a reader finds our deposits: reading every block (`blocks`), asking per address (`addresses`), or per address
 * while there are at most `maxAddresses` of them (`auto`); a poll at most every `pollEveryMs` at the tip.
 */
export interface Detection {
  mode: "blocks" | "addresses" | "auto";
  maxAddresses: number;
  pollEveryMs: number;
}

export interface AccountAdapters {
  reader: ChainReader;
  payer: AccountPayer;
}
