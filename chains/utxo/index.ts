/**
 * The live UTXO adapters (doge, zec), one factory for both chains in the style of the EVM one: a node of the chain's
 * family (bitcoin_core.ts for Dogecoin Core, zebra.ts for Zebra), the shared reader (reader.ts) and payer (payer.ts),
 * and the signer that signs by derivation index and never hands out a key.
 *
 * zec: Zebra's RPC (zebra.ts `zebraNode`) and v5 transparent payouts signed per ZIP-244 (zec_tx.ts `signZecTx`).
 */
import type { ChainReader, UtxoPayer } from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import type { UtxoSigningPort, UtxoTxFamily } from "./tx.ts";
import type { UtxoNetwork } from "./network.ts";
import type { UtxoRpc } from "./rpc.ts";
import { bitcoinCoreNode } from "./bitcoin_core.ts";
import { DOGE_TX } from "./doge_tx.ts";
import { utxoPayer, type UtxoSettings } from "./payer.ts";

// Defined beside the payer that reads it (so payer.ts need not import this factory); the family's callers take it from here.
export type { UtxoSettings };
import { utxoReader } from "./reader.ts";
import { zebraNode } from "./zebra.ts";
import { ZEC_TX } from "./zec_tx.ts";

/** Each chain's transaction steps: the payer's, and the signer process's when it checks a request (actors/signer/utxo.ts). */
export const UTXO_TX: Readonly<Record<UtxoChain, UtxoTxFamily>> = { doge: DOGE_TX, zec: ZEC_TX };

export interface UtxoAdapterOptions {
  chain: UtxoChain;
  network: UtxoNetwork;
  rpc: UtxoRpc;
  signer: UtxoSigningPort;
  settings: UtxoSettings;
}

export interface UtxoAdapters {
  reader: ChainReader;
  payer: UtxoPayer & { readonly changeAddress: string };
}

export function utxoAdapters(opts: UtxoAdapterOptions): UtxoAdapters {
  const { chain, network, rpc, signer, settings } = opts;
  if (network.chain !== chain) throw new Error(`${chain}: given the ${network.chain} ${network.name} network`);
  switch (chain) {
    case "doge": {
      const node = bitcoinCoreNode(rpc, network);
      return {
        reader: utxoReader(node, { chain, confirmations: settings.confirmations }),
        payer: utxoPayer({ chain, network, node, signer, settings, family: UTXO_TX.doge }),
      };
    }
    case "zec": {
      const node = zebraNode(rpc, network);
      return {
        reader: utxoReader(node, { chain, confirmations: settings.confirmations }),
        payer: utxoPayer({ chain, network, node, signer, settings, family: UTXO_TX.zec }),
      };
    }
  }
}
