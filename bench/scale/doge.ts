/**
 * Dogecoin for bench/scale.ts: a day of merge-mined blocks (1,440) from the Dogecoin-Core-shaped server
 * (tests/support/bitcoin_core_server.ts, `mainnetBlocks`; shapes in tests/support/doge_mainnet_blocks.ts), generated
 * from the height when asked and read raw (`getblock <hash> false`, chains/utxo/raw_block.ts). Mainnet: a block a
 * minute (Dogecoin Core src/chainparams.cpp `nPowTargetSpacing = 60`); about 20,000-30,000 transactions a day on
 * ordinary days since 2015 (Blockworks, "Dogecoin flips Ethereum transaction count", 2023; Blockchair's ~20,000 a
 * day, quoted by BTC News the same month), served at 40 a block (twice that), ~17 KB each.
 */
import { bitcoinCoreNode } from "../../chains/utxo/bitcoin_core.ts";
import { utxoNetwork } from "../../chains/utxo/network.ts";
import { utxoReader } from "../../chains/utxo/reader.ts";
import { utxoRpc } from "../../chains/utxo/rpc.ts";
import { type ScaleChain, scaleMain } from "../support/scale.ts";
import { startBitcoinCoreServer } from "../../tests/support/bitcoin_core_server.ts";

const AMOUNT = 1_230_000_000n;
/** A mainnet height of late 2025. */
const FIRST = 5_900_000;
const network = utxoNetwork("doge", "mainnet");

export const doge: ScaleChain = {
  chain: "doge",
  realBlocksPerSecond: 1 / 60,
  source: "a block a minute (nPowTargetSpacing 60), ~20,000-30,000 transactions a day (Blockworks; Blockchair)",
  defaultBlocks: 1_440,
  serve(blocks, ours) {
    const deposits = [{ height: FIRST + Math.ceil(blocks / 2), address: ours, amount: AMOUNT }];
    const server = startBitcoinCoreServer({ network, mainnetBlocks: { first: FIRST, count: blocks + 1, deposits } });
    return Promise.resolve({
      url: server.url,
      start: FIRST,
      end: server.chain.last,
      deposits: { count: 1, amount: AMOUNT.toString() },
      shape: "~40 transactions per merge-mined block, ~17 KB (~35 KB of hex per getblock)",
    });
  },
  reader: (url) =>
    utxoReader(bitcoinCoreNode(utxoRpc({ chain: "doge", urls: [url] }), network), { chain: "doge", confirmations: 1 }),
};

if (import.meta.main) await scaleMain(doge);
