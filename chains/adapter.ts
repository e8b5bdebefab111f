/**
 * The one interface every chain adapter implements, simulated or live. Watchers read blocks through `ChainReader`;
 * actors move value through `ChainSender`. Outgoing transactions follow DESIGN.md invariant 2: `prepare` returns the
 * signed transaction (bytes and hash) without sending it, the caller commits it to KV, then `broadcast`s it; after a
 * crash the caller re-broadcasts the same bytes or asks for their status, never preparing a second one while the
 * first may still land.
 */
import type { ChainSymbol, UAsset } from "./catalog.ts";

/** A transient failure (RPC down, timeout, rate limit): retry later, never a reason to fail an order. */
export class TransientChainError extends Error {
  constructor(message: string) {
    super(message);
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
}

export interface ScannedBlock {
  number: number;
  hash: string;
  parentHash: string;
  transfers: ObservedTransfer[];
}

export interface BlockRef {
  number: number;
  hash: string;
}

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
     * Whether the block is at or below the chain's finality tag (`safe`/`finalized`) and still canonical. Left
     * undefined by chains that have no such tag (the simulated ledgers): there `confirmations` alone decide.
     */
    final?: boolean;
  }
  /**
   * Proven never to be mined: e.g. on EVM its nonce is used at the finality tag and none of its versions has a
   * receipt. `proof` states those facts in plain text; only then may a new transaction replace it.
   */
  | { state: "dead"; proof: string };

/**
 * Whether an included transaction counts: deep enough, and final where the chain can say so. The one rule for
 * deposits, burns and our own outgoing transactions.
 */
export function isCounted(status: TxStatus, required: number): boolean {
  return status.state === "included" && status.confirmations >= required && status.final !== false;
}

export interface ChainReader {
  readonly chain: ChainSymbol;
  tip(): Promise<BlockRef>;
  /** Hash of the canonical block at `number`, or null above the tip. */
  blockHash(number: number): Promise<string | null>;
  /** Canonical blocks `from..to` (inclusive) with the transfers a watcher may care about. */
  scan(from: number, to: number): Promise<ScannedBlock[]>;
  /**
   * `raw` (the recorded signed bytes of one of ours) lets the reader prove the transaction dead; without it the
   * answer is never `dead`.
   */
  txStatus(txHash: string, raw?: string): Promise<TxStatus>;
  /**
   * The transfers a scan shows for this transaction in the block it is in now, numbered as `scan` numbers them, or
   * null when it is in no canonical block. After a reorg the same transaction can be re-executed with other effects
   * (other logs on EVM): a burn is re-checked with this before value moves.
   */
  transfersOf(txHash: string): Promise<ObservedTransfer[] | null>;
}

export interface PreparedTx {
  txHash: string;
  /** What `broadcast` sends: signed bytes (hex/base64) or, in sim, the serialized transaction. */
  raw: string;
  /**
   * Reservations the signature relies on (an EVM nonce), added by the caller to the SAME atomic that records the
   * transaction: if that commit fails, nothing was reserved and the transaction is never sent.
   */
  reserve?: (atomic: Deno.AtomicOperation) => void;
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
}

export interface NativePayer extends ChainSender {
  preparePayout(req: PayoutRequest): Promise<PreparedTx>;
}

/** Everything the pipeline needs, per chain symbol. */
export interface Chains {
  reader(chain: ChainSymbol): ChainReader;
  minter(chain: import("./catalog.ts").EvmChain): EvmMinter;
  payer(chain: import("./catalog.ts").NativeChain): NativePayer;
}

/**
 * A call on a chain this process does not run (no live adapter configured, and it is not simulated). Never transient:
 * the pipeline holds what concerns that chain instead of retrying it, and nothing is ever simulated in its place.
 */
export class ChainDisabledError extends Error {
  constructor(readonly chain: import("./catalog.ts").ChainSymbol) {
    super(`chain ${chain} is disabled in this process`);
    this.name = "ChainDisabledError";
  }
}
