/**
 * The fee rules of the UTXO chains (doge, zec), one place for coin selection (chains/shared/coin_select.ts), the
 * adapters that build payouts and the sim ledger that refuses underpaying ones.
 * - doge: 0.01 DOGE per kB by default (Dogecoin Core's recommended fee; `DOGE_FEE_PER_KB` style settings pass
 *   `dogeSatsPerKb`), on an upper bound of the size: a low-S P2PKH input is at most 148 bytes (36 outpoint, 1 script
 *   length, 73 signature push with the sighash byte, 34 key push, 4 sequence), an output at most 34 (P2PKH; P2SH is
 *   32), the envelope 8 plus the two counts' varints. The real signed size is never above it (tested against signed
 *   transactions in tests/utxo_doge_sign_test.ts), so the fee never underpays the rate. Rounded up to a whole sat.
 * - zec: ZIP-317's conventional fee, 5,000 zats per logical action, at least two; a transparent transaction has
 *   max(inputs, outputs) logical actions.
 * Change below the chain's output dust limit is not created: doge 0.01 DOGE (Dogecoin Core's soft dust limit), zec
 * 5,000 zats (ZIP-317: an output worth less than the fee of spending it). These are output rules, far below the
 * catalog's `dustDeposit` (a deposit too small to get an order), which would refuse the smallest burns' payouts.
 */
import type { UtxoChain } from "../catalog.ts";
import type { FeeFunction } from "./coin_select.ts";

/** 0.01 DOGE (1,000,000 sats) per 1,000 bytes. */
export const DEFAULT_DOGE_SATS_PER_KB = 1_000_000n;
const ZEC_MARGINAL_FEE = 5_000n;
const ZEC_GRACE_ACTIONS = 2;

/** Bytes of a Bitcoin-style compact size (varint) encoding `n`. */
function varintBytes(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : 5;
}

/** Upper bound of a signed legacy P2PKH transaction's size (low-S signatures, P2PKH or P2SH outputs). */
export function dogeTxBytes(inputs: number, outputs: number): number {
  // version 4 + locktime 4, the input and output counts, then the inputs and outputs.
  return 8 + varintBytes(inputs) + varintBytes(outputs) + 148 * inputs + 34 * outputs;
}

export interface UtxoFeeOptions {
  /** doge: sats per 1,000 bytes (default `DEFAULT_DOGE_SATS_PER_KB`, 0.01 DOGE/kB). */
  dogeSatsPerKb?: bigint;
}

export function utxoFee(chain: UtxoChain, opts: UtxoFeeOptions = {}): FeeFunction {
  switch (chain) {
    case "doge": {
      const perKb = opts.dogeSatsPerKb ?? DEFAULT_DOGE_SATS_PER_KB;
      if (perKb <= 0n) throw new RangeError(`doge fee rate must be positive sats per kB, got ${perKb}`);
      // Ceiling division: a fraction of a sat is paid, never dropped.
      return (inputs, outputs) => (BigInt(dogeTxBytes(inputs, outputs)) * perKb + 999n) / 1_000n;
    }
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
 * to the fee. Null when the coins cannot pay. `fee` is the rule coin selection used (the payer's settings).
 */
export function payoutChange(
  chain: UtxoChain,
  inputs: number,
  inputsTotal: bigint,
  amount: bigint,
  fee: FeeFunction = utxoFee(chain),
): { change: bigint | null } | null {
  const withChange = inputsTotal - amount - fee(inputs, 2);
  if (withChange >= changeDustLimit(chain) && withChange > 0n) return { change: withChange };
  return inputsTotal - amount - fee(inputs, 1) >= 0n ? { change: null } : null;
}
