/**
 * What the shared UTXO reader and payer (chains/utxo/reader.ts, payer.ts) need from a node, as plain data with
 * bigint amounts. Two implementations, one per node family:
 * - chains/utxo/bitcoin_core.ts: Dogecoin Core 1.14 (and, in tests, Debian's litecoind regtest, the same RPC family):
 *   `getblockhash`, `getblock(hash, false)` decoded here (chains/utxo/raw_block.ts; the node's `value` floats are
 *   never read), `getrawtransaction(txid, true)` for where a transaction is (`-txindex`).
 * - chains/utxo/zebra.ts: Zebra: `getblock(height, 2)` with `valueZat`, `getrawtransaction(txid, 1)`.
 */
import type { Outpoint } from "../adapter.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import type { UtxoNetwork } from "./network.ts";

export interface UtxoOutputView {
  index: number;
  /** The P2PKH or P2SH address paid, in the network's encoding; null for any other script (ignored safely). */
  address: string | null;
  amount: bigint;
}

export interface UtxoTxView {
  txid: string;
  coinbase: boolean;
  /** The outpoints it spends (none for a coinbase). */
  inputs: Outpoint[];
  outputs: UtxoOutputView[];
}

export interface UtxoBlockView {
  number: number;
  hash: string;
  parentHash: string;
  txs: UtxoTxView[];
}

/** Where the node has a transaction now. */
export type UtxoTxPlace =
  | { where: "block"; height: number; blockHash: string; confirmations: number; tx: UtxoTxView }
  | { where: "mempool"; tx: UtxoTxView }
  | { where: "nowhere" };

export interface UtxoNode {
  readonly network: UtxoNetwork;
  /** Height and hash of the best block. */
  tip(): Promise<{ number: number; hash: string }>;
  /** Hash of the canonical block at `height`, null above the tip. */
  blockHash(height: number): Promise<string | null>;
  /**
   * Canonical blocks `from..to` inclusive, every transaction decoded; stops early at the tip (and may answer a prefix:
   * the caller asks again after its last block). `meter` is credited with the bytes of every answer read.
   */
  blocks(from: number, to: number, meter?: ByteMeter): Promise<UtxoBlockView[]>;
  /** Where `txid` is: a canonical block, the mempool, or nowhere the node knows. */
  findTx(txid: string): Promise<UtxoTxPlace>;
  /**
   * Sends signed bytes. Sending bytes the node already has (in the mempool or a block) is success; a rejection
   * (a conflict, a missing input, too low a fee) throws with the node's reason.
   */
  send(rawHex: string): Promise<void>;
  /**
   * Whether the outpoint is unspent in the best chain (mempool ignored), when the node can say (`gettxout`); null
   * when it cannot (Zebra has no `gettxout`).
   */
  isUnspent?(outpoint: Outpoint): Promise<boolean | null>;
  /**
   * The unspent outputs paying `address` in the best chain (Zebra's `getaddressutxos`, which it serves from its own
   * address index), for a node without `gettxout`.
   */
  addressUtxos?(address: string): Promise<Outpoint[]>;
  /** Zcash: the consensus branch id the next block is validated under (`getblockchaininfo.consensus.nextblock`). */
  nextBranchId?(): Promise<number>;
}
