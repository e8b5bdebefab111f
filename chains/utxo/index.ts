/**
 * The live UTXO adapters (doge, zec), one factory for both chains in the style of the EVM one: a node of the chain's
 * family (bitcoin_core.ts for Dogecoin Core, zebra.ts for Zebra), the shared reader (reader.ts) and payer (payer.ts),
 * and the signer that signs by derivation index and never hands out a key.
 *
 * zec: Zebra's RPC (zebra.ts `zebraNode`) and v5 transparent payouts signed per ZIP-244 (zec_tx.ts `signZecTx`).
 */
import type { ChainReader, NativePayer } from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import type { FeeFunction } from "../shared/coin_select.ts";
import type { Signer } from "../signer.ts";
import type { UtxoNetwork } from "./network.ts";
import type { UtxoRpc } from "./rpc.ts";
import { bitcoinCoreNode } from "./bitcoin_core.ts";
import { signDogeTx } from "./doge_tx.ts";
import { utxoPayer } from "./payer.ts";
import { utxoReader } from "./reader.ts";
import { zebraNode } from "./zebra.ts";
import { signZecTx } from "./zec_tx.ts";

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

export function utxoAdapters(opts: UtxoAdapterOptions): UtxoAdapters {
  const { chain, network, rpc, signer, settings } = opts;
  if (network.chain !== chain) throw new Error(`${chain}: given the ${network.chain} ${network.name} network`);
  switch (chain) {
    case "doge": {
      const node = bitcoinCoreNode(rpc, network);
      return {
        reader: utxoReader(node, { chain, confirmations: settings.confirmations }),
        payer: utxoPayer({ chain, network, node, signer, settings, signTx: signDogeTx }),
      };
    }
    case "zec": {
      const node = zebraNode(rpc, network);
      return {
        reader: utxoReader(node, { chain, confirmations: settings.confirmations }),
        payer: utxoPayer({ chain, network, node, signer, settings, signTx: signZecTx }),
      };
    }
  }
}
