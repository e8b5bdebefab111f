/**
 * What watching a chain reads at mainnet's rate: bytes of RPC answers per minute, the one figure deploy mode weighs
 * against its per-run byte budget (config/watch_plan.ts; README "Deploy on Deno Deploy", docs/scan-budget.md "Deploy
 * mode"). A watcher reads whole blocks (DESIGN.md "Chains"), so this grows with the chain's activity, never with our
 * number of deposit addresses.
 *
 * Each figure is blocks per minute (the catalog's block time) times the bytes one block's scan reads:
 * - sol: measured, 2.9 MiB per slot (`getBlock` with `transactionDetails: "accounts"` of a ~2,000-transaction slot,
 *   docs/scan-budget.md "Measured"; bench/scale.ts `KiB/block`), 150 slots a minute.
 * - xrp, sui, doge, zec: estimates from the chains' public statistics until their readers are measured the same way
 *   (bench/scale/<chain>.ts): an XRPL ledger of ~80 transactions at ~3 KB of JSON each with its metadata (~250 KB,
 *   15 ledgers a minute); a Sui checkpoint of ~50 transactions at ~1 KB of GraphQL answer each (~50 KB, 120 a
 *   minute); a Dogecoin block of up to ~250 KB served as hex and JSON (~1 MB, one a minute); a Zcash block of ~50 KB
 *   as `getblock(h, 2)` JSON (~250 KB, one per 75 s). Each is rounded up.
 * - EVM chains: `eth_getLogs` for uAsset `Transfer`s to one address (DESIGN.md "Chains"): a few KB a minute whatever the
 *   chain's volume; 64 KiB is a generous bound.
 */
import type { ChainSymbol } from "./catalog.ts";

const MiB = 1024 * 1024;

export const MAINNET_WATCH_BYTES_PER_MINUTE: Readonly<Record<ChainSymbol, number>> = {
  sol: Math.round(150 * 2.9 * MiB),
  xrp: 4 * MiB,
  sui: 6 * MiB,
  doge: 1 * MiB,
  zec: 1 * MiB,
  base: 64 * 1024,
  arbitrum: 64 * 1024,
  katana: 64 * 1024,
  world: 64 * 1024,
  unichain: 64 * 1024,
};
