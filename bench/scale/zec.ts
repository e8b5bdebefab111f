/**
 * Zcash for bench/scale.ts: a day of blocks (1,152) from the Zebra-shaped server (tests/support/zebra_rpc_server.ts,
 * `mainnetBlocks`; shapes in tests/support/zec_mainnet_blocks.ts), generated from the height when asked and read with
 * `getblock <height> 2`. Mainnet: a block every 75 s (ZIP-208); roughly 10,000-20,000 transactions a day through 2025,
 * about half with a shielded part (Blockworks Research's "Zcash total transactions" chart; Blockchair's Zcash
 * dashboard), served at 12 a block (45% shielded-only: Orchard 2-action or Sapling), ~165 KB of JSON each.
 */
import { utxoNetwork } from "../../chains/utxo/network.ts";
import { utxoReader } from "../../chains/utxo/reader.ts";
import { utxoRpc } from "../../chains/utxo/rpc.ts";
import { zebraNode } from "../../chains/utxo/zebra.ts";
import { type ScaleChain, scaleMain } from "../support/scale.ts";
import { ZebraShapedServer } from "../../tests/support/zebra_rpc_server.ts";

const AMOUNT = 123_000_000n;
/** A mainnet height of late 2025. */
const FIRST = 3_100_000;
const network = utxoNetwork("zec", "mainnet");

export const zec: ScaleChain = {
  chain: "zec",
  realBlocksPerSecond: 1 / 75,
  source: "a block every 75 s (ZIP-208), ~10,000-20,000 transactions a day, half shielded (Blockworks; Blockchair)",
  defaultBlocks: 1_152,
  serve(blocks, ours) {
    const deposits = [{ height: FIRST + Math.ceil(blocks / 2), address: ours, amount: AMOUNT }];
    const server = ZebraShapedServer.start({ network, mainnetBlocks: { first: FIRST, count: blocks + 1, deposits } });
    return Promise.resolve({
      url: server.url,
      start: FIRST,
      end: server.mainnet!.last,
      deposits: { count: 1, amount: AMOUNT.toString() },
      shape: "~12 transactions per block (45% shielded-only, Orchard or Sapling), ~165 KB of getblock verbosity 2 JSON",
    });
  },
  reader: (url) =>
    utxoReader(zebraNode(utxoRpc({ chain: "zec", urls: [url] }), network), { chain: "zec", confirmations: 1 }),
};

if (import.meta.main) await scaleMain(zec);
