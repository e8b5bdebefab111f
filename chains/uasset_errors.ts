/** Refusals of a `UAssetSender` (chains/adapter.ts) both the sim and the live EVM adapters raise. */
import type { EvmChain, UAsset } from "./catalog.ts";
import { ChainError } from "./errors.ts";

/**
 * The transfer address holds less of `asset` than a burn or a refund would move: nothing was signed. Never expected
 * (the uAssets of every burn order sit there until burned); the caller alerts an operator and sends nothing.
 */
export class UAssetBalanceShortError extends ChainError {
  constructor(
    override readonly chain: EvmChain,
    readonly asset: UAsset,
    readonly balance: bigint,
    readonly needed: bigint,
  ) {
    super(`${chain}: the transfer address holds ${balance} wei of ${asset}, less than the ${needed} wei needed`, {
      chain,
    });
    this.name = "UAssetBalanceShortError";
  }
}

/**
 * The transfer address cannot pay the gas of a transaction it would send (live EVM): nothing was recorded or sent. The
 * operator funds it with the chain's native coin; the caller alerts and tries again later.
 */
export class TransferAddressUnfundedError extends ChainError {
  constructor(
    override readonly chain: EvmChain,
    readonly address: string,
    readonly balance: bigint,
    readonly needed: bigint,
  ) {
    super(
      `${chain}: the transfer address ${address} holds ${balance} wei of the native coin, less than the ${needed} wei ` +
        "its transaction may cost in gas; fund it",
      { chain },
    );
    this.name = "TransferAddressUnfundedError";
  }
}
