/**
 * Solana for bench/scale.ts: slots of ~2,000 transactions (a third votes; `transactionDetails: "accounts"`, ~3 MB of
 * JSON each) from the Solana-RPC-shaped server (tests/support/solana_rpc_server.ts, `mainnetBlocks`), generated when
 * asked. Mainnet: a slot every 400 ms (2.5 per second; Solana docs, "Clusters", and Solana Explorer's average slot
 * time), about 2,000 to 4,000 transactions per block, 60-70% of them votes in busy hours (Solana Explorer and
 * solanabeach's per-block counts).
 */
import { solReader } from "../../chains/sol/reader.ts";
import { solRpc } from "../../chains/sol/rpc.ts";
import { solDetectionFromEnv } from "../../config/account.ts";
import { type ScaleChain, scaleMain, scaleSigner } from "../support/scale.ts";
import { startSolanaRpcServer } from "../../tests/support/solana_rpc_server.ts";

const AMOUNT = 2_000_000_000n;

export const sol: ScaleChain = {
  chain: "sol",
  realBlocksPerSecond: 2.5,
  source: "a slot every 400 ms (Solana docs, Clusters; Solana Explorer), ~2,000-4,000 transactions per block",
  defaultBlocks: 10_000,
  serve(blocks, ours) {
    const server = startSolanaRpcServer({ finalityLag: 0, mainnetBlocks: {} });
    server.produce(1);
    server.finalize();
    const start = server.finalizedSlot;
    const half = Math.floor(blocks / 2);
    server.produce(half - 1);
    server.inject({
      payer: scaleSigner.address("sol", 900),
      credits: [{ to: ours, lamports: AMOUNT }, { to: scaleSigner.address("sol", 901), lamports: 5_000n }],
    });
    server.produce(blocks - half);
    server.finalize();
    return Promise.resolve({
      url: server.url,
      start,
      end: server.finalizedSlot,
      deposits: { count: 1, amount: AMOUNT.toString() },
      shape: "~2,000 transactions per slot (a third votes), ~3 MB of JSON per getBlock",
    });
  },
  // SOL_DETECTION (config/account.ts) as the service reads it: `addresses` runs the catch-up polling our addresses.
  reader: (url) =>
    solReader(solRpc({ urls: [url] }), { confirmations: 1, detection: solDetectionFromEnv(Deno.env.toObject()) }),
};

if (import.meta.main) await scaleMain(sol);
