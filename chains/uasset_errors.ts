/** Refusals of a `UAssetSender` (chains/adapter.ts) both the sim and the live EVM adapters raise. */
import type { EvmChain, UAsset } from "./catalog.ts";

/**
 * The transfer address holds less of `asset` than a burn or a refund would move: nothing was signed. Never expected
 * (the uAssets of every burn order sit there until burned); the caller alerts an operator and sends nothing.
 */
export class UAssetBalanceShortError extends Error {
  constructor(
    readonly chain: EvmChain,
    readonly asset: UAsset,
    readonly balance: bigint,
    readonly needed: bigint,
  ) {
    super(`${chain}: the transfer address holds ${balance} wei of ${asset}, less than the ${needed} wei needed`);
    this.name = "UAssetBalanceShortError";
  }
}
