/**
 * The fee rules of the UTXO chains (doge, zec), one place for coin selection (chains/shared/coin_select.ts), the
 * adapters that build payouts and the sim ledger that refuses underpaying ones.
 * - doge: 0.01 DOGE per kB (the default minimum relay fee), on an estimated size: a P2PKH input is about 148 bytes,
 *   an output 34, the envelope 10. Rounded up to whole bytes, never under one kB's share of a real transaction.
 * - zec: ZIP-317's conventional fee, 5,000 zats per logical action, at least two; a transparent transaction has
 *   max(inputs, outputs) logical actions.
 * Change below the chain's output dust limit is not created: doge 0.01 DOGE (Dogecoin Core's soft dust limit), zec
 * 5,000 zats (ZIP-317: an output worth less than the fee of spending it). These are output rules, far below the
 * catalog's `dustDeposit` (a deposit too small to get an order), which would refuse the smallest burns' payouts.
 */
import type { UtxoChain } from "../catalog.ts";
import type { FeeFunction } from "./coin_select.ts";

const DOGE_SATS_PER_BYTE = 1_000n; // 0.01 DOGE (1,000,000 sats) per 1,000 bytes
const ZEC_MARGINAL_FEE = 5_000n;
const ZEC_GRACE_ACTIONS = 2;

export function dogeTxBytes(inputs: number, outputs: number): number {
  return 10 + 148 * inputs + 34 * outputs;
}

export function utxoFee(chain: UtxoChain): FeeFunction {
  switch (chain) {
    case "doge":
      return (inputs, outputs) => BigInt(dogeTxBytes(inputs, outputs)) * DOGE_SATS_PER_BYTE;
    case "zec":
      return (inputs, outputs) => ZEC_MARGINAL_FEE * BigInt(Math.max(ZEC_GRACE_ACTIONS, inputs, outputs));
  }
}

const OUTPUT_DUST: Readonly<Record<UtxoChain, bigint>> = { doge: 1_000_000n, zec: 5_000n };

/** No output (a payout's or its change) below this: change that small goes to the fee instead. */
export function changeDustLimit(chain: UtxoChain): bigint {
  return OUTPUT_DUST[chain];
}

/**
 * The outputs a payout of `amount` spending `inputsTotal` in `inputs` coins makes, by the same rule `selectCoins`
 * applies: change when what is left after the two-output fee is at least the dust limit, else no change and the rest
 * to the fee. Null when the coins cannot pay.
 */
export function payoutChange(
  chain: UtxoChain,
  inputs: number,
  inputsTotal: bigint,
  amount: bigint,
): { change: bigint | null } | null {
  const fee = utxoFee(chain);
  const withChange = inputsTotal - amount - fee(inputs, 2);
  if (withChange >= changeDustLimit(chain) && withChange > 0n) return { change: withChange };
  return inputsTotal - amount - fee(inputs, 1) >= 0n ? { change: null } : null;
}
