/**
 * The XRP Ledger for bench/scale.ts: validated ledgers of ~75 transactions of the mainnet mix (Payments of XRP and
 * issued currencies, OfferCreate/OfferCancel, TrustSet, AMM, NFToken; ~220 KB of JSON per `ledger` answer with
 * `transactions` and `expand`) from the rippled-shaped server (tests/support/rippled_rpc_server.ts, `mainnetLedgers`;
 * the shape and its sources are in tests/support/xrpl_mainnet_ledgers.ts), generated when asked. Mainnet: a ledger
 * closes every 3.5 to 4 s (xrpl.org "Ledger Close Times" and livenet.xrpl.org's average close time; 3.5 s taken here,
 * the faster end), about 24,700 ledgers a day, holding 1.5 to 2 million transactions a day (xrpl.org "XRPL Metrics",
 * XRPScan metrics).
 */
import { xrpReader } from "../../chains/xrp/reader.ts";
import { xrplRpc } from "../../chains/xrp/rpc.ts";
import { type ScaleChain, scaleMain, scaleSigner } from "../support/scale.ts";
import { startRippledServer } from "../../tests/support/rippled_rpc_server.ts";

const AMOUNT = 30_000_000n;
const CLOSE_SECONDS = 3.5;

export const xrp: ScaleChain = {
  chain: "xrp",
  realBlocksPerSecond: Number((1 / CLOSE_SECONDS).toFixed(3)),
  source: "a ledger every 3.5-4 s (xrpl.org, livenet.xrpl.org), ~24,700 a day, 1.5-2 million transactions a day " +
    "(xrpl.org XRPL Metrics, XRPScan)",
  defaultBlocks: Math.round(86_400 / CLOSE_SECONDS),
  serve(blocks, ours) {
    const server = startRippledServer({ mainnetLedgers: {} });
    const h = server.hooks;
    const start = h.validatedIndex;
    h.validateThrough(start + Math.floor(blocks / 2) - 1);
    h.fund(scaleSigner.address("xrp", 901), 50_000_000n); // a stranger's payment beside ours
    h.fund(ours, AMOUNT);
    h.validateThrough(start + blocks);
    return Promise.resolve({
      url: server.url,
      start,
      end: h.validatedIndex,
      deposits: { count: 1, amount: AMOUNT.toString() },
      shape: "~75 transactions per ledger (mainnet mix), ~220 KB of JSON per expanded ledger",
    });
  },
  reader: (url) => xrpReader({ rpc: xrplRpc({ urls: [url] }), confirmations: 1 }),
};

if (import.meta.main) await scaleMain(xrp);
