/**
 * The live UTXO adapters (doge, zec), one factory for both chains in the style of the EVM one: a node of the chain's
 * family (bitcoin_core.ts for Dogecoin Core, zebra.ts for Zebra), the shared reader (reader.ts) and payer (payer.ts),
 * and the signer that signs by derivation index and never hands out a key.
 *
 * STUB: the signature is fixed (chains/registry.ts calls it); the body is being written.
 */
import type { ChainReader, NativePayer } from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import type { FeeFunction } from "../shared/coin_select.ts";
import type { Signer } from "../signer.ts";
import type { UtxoNetwork } from "./network.ts";
import type { UtxoRpc } from "./rpc.ts";

export interface UtxoSettings {
  /** Confirmations a transaction needs to count (the catalog's, or `<CHAIN>_CONFIRMATIONS`). */
  confirmations: number;
  /** The fee rule coin selection used: the payer builds with the same one (chains/shared/utxo_fee.ts). */
  fee: FeeFunction;
  /** zec: `nExpiryHeight` = tip + this many blocks (`ZEC_EXPIRY_WINDOW`, default the catalog's 40). */
  expiryWindow: number;
}

export interface UtxoAdapterOptions {
  chain: UtxoChain;
  network: UtxoNetwork;
  rpc: UtxoRpc;
  signer: Signer;
  settings: UtxoSettings;
}

export interface UtxoAdapters {
  reader: ChainReader;
  payer: NativePayer;
}

export function utxoAdapters(_opts: UtxoAdapterOptions): UtxoAdapters {
  throw new Error("UTXO adapters are not built yet");
}
