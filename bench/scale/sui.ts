/**
 * Sui for bench/scale.ts: mainnet-shaped checkpoints from the Sui-GraphQL-shaped server (tests/support/
 * sui_graphql_server.ts, `mainnetCheckpoints`; the shape in tests/support/sui_mainnet_checkpoints.ts), generated when
 * asked, under the Sui GraphQL service's limits. Mainnet: a checkpoint about every 250 ms, 4 per second (Flipside's Sui
 * `fact_checkpoints` documentation; sui-indexer-alt-graphql config.rs sizes `max_scan_limit` "at 4
 * checkpoints/second"), tens of millions of transactions a day (Sui's blog, "Sui's 90 Day Metrics": 65.8 million at
 * the 2023 peak; Suiscan's daily counts around ten million since): ~30 transactions and ~75 balance changes per
 * checkpoint here.
 */
import { suiGraphql } from "../../chains/sui/client.ts";
import { suiReader } from "../../chains/sui/reader.ts";
import { type ScaleChain, scaleMain, scaleSigner } from "../support/scale.ts";
import { startSuiGraphqlServer } from "../../tests/support/sui_graphql_server.ts";

const AMOUNT = 2_000_000_000n;

export const sui: ScaleChain = {
  chain: "sui",
  realBlocksPerSecond: 4,
  source: "a checkpoint every ~250 ms (Flipside Sui docs; sui-indexer-alt-graphql config.rs), ~10M transactions a day",
  defaultBlocks: 20_000,
  async serve(blocks, ours) {
    const server = await startSuiGraphqlServer({ mainnetCheckpoints: {}, checkpointsPerEpoch: 1_000_000 });
    server.mine(1);
    const start = server.tip;
    const half = Math.floor(blocks / 2);
    server.mine(half - 1);
    server.deposit([{ to: ours, amount: AMOUNT }, { to: scaleSigner.address("sui", 901), amount: 5_000n }]);
    server.mine(blocks - half + 1);
    return {
      url: server.url,
      start,
      end: server.tip,
      deposits: { count: 1, amount: AMOUNT.toString() },
      shape: "~30 transactions and ~75 balance changes per checkpoint (15% above a page of 50), ~24 KB of GraphQL each",
    };
  },
  reader: (url) => suiReader(suiGraphql({ urls: [url] })),
};

if (import.meta.main) await scaleMain(sui);
