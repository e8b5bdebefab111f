/**
 * What a UTXO transaction signer gets and gives, one shape for both chains: doge_tx.ts (legacy P2PKH with
 * bitcoinjs-lib) and zec_tx.ts (v5 transparent with @bitgo/utxo-lib). The payer (payer.ts) plans the outputs with the
 * fee rule coin selection used; a signer only builds, signs and serialises, and never sees a private key: `keyFor`
 * gives the public key and a signing function over a 32-byte sighash (chains/signer.ts, low-S DER).
 */
import type { PayoutCoin } from "../adapter.ts";
import type { UtxoNetwork } from "./network.ts";

export interface UtxoTxOutput {
  address: string;
  amount: bigint;
}

export interface UtxoTxPlan {
  /** Spent in this order; each is a P2PKH output of ours. */
  inputs: PayoutCoin[];
  /** In this order: the payout first, our change (if any) second. */
  outputs: UtxoTxOutput[];
  /** zec: `nExpiryHeight`. */
  expiryHeight?: number;
  /** zec: the consensus branch id the transaction commits to (read from the node). */
  branchId?: number;
}

export interface InputKey {
  /** 33-byte compressed public key; its P2PKH address must be the coin's address. */
  publicKey: Uint8Array;
  /** DER-encoded low-S signature of a 32-byte sighash (without the sighash-type byte). */
  sign(digest: Uint8Array): Uint8Array;
}

export interface SignedUtxoTx {
  /** Serialized transaction, hex. */
  raw: string;
  /** The txid as nodes show it (byte-reversed double-SHA256 for doge; ZIP-244 txid for zec v5). */
  txid: string;
}

export type UtxoTxSigner = (
  network: UtxoNetwork,
  plan: UtxoTxPlan,
  keyFor: (coin: PayoutCoin) => InputKey,
) => SignedUtxoTx;
