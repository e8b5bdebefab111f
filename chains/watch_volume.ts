/**
 * What watching a chain reads at mainnet's rate: bytes of RPC answers per minute, the one figure deploy mode weighs
 * against its per-run byte budget (config/watch_plan.ts; docs/operations.md "Deploy on Deno Deploy",
 * docs/scan-budget.md "Deploy mode"). A watcher reads whole blocks (docs/architecture.md "Chains"), so this grows with
 * the chain's activity, never with our number of deposit addresses.
 *
 * Each figure is blocks per minute at mainnet's rate times the bytes one block's scan reads, measured by
 * `deno task bench:scale` (bench/scale/<chain>.ts: the whole service catching up on mainnet-sized blocks served by the
 * chain's local protocol server; docs/scan-budget.md) and rounded up:
 * - sol: 2.9 MiB per slot (`getBlock`, `transactionDetails: "accounts"`, ~2,000 transactions), 150 slots a minute;
 * - xrp: ~200 KiB per ledger (~75 transactions, expanded with metadata), ~17 ledgers a minute: 3.4 MiB;
 * - sui: ~24 KiB per checkpoint (its transactions and balance changes), 240 checkpoints a minute: 5.7 MiB;
 * - doge: ~34 KiB per block (raw hex), one a minute; zec: ~161 KiB per block (verbosity 2 JSON), 0.8 a minute;
 * - EVM chains: `eth_getLogs` for uAsset `Transfer`s to one address reads almost nothing of a busy chain; following the
 *   tip reads headers, about 290 MiB a day on Base (bench/evm_catchup.ts), 0.2 MiB a minute.
 */
import type { ChainSymbol } from "./catalog.ts";

const MiB = 1024 * 1024;

export const MAINNET_WATCH_BYTES_PER_MINUTE: Readonly<Record<ChainSymbol, number>> = {
  sol: Math.round(150 * 2.9 * MiB),
  xrp: 4 * MiB,
  sui: 6 * MiB,
  doge: MiB / 16,
  zec: MiB / 4,
  base: MiB / 4,
  arbitrum: MiB / 4,
  katana: MiB / 4,
  world: MiB / 4,
  unichain: MiB / 4,
};
