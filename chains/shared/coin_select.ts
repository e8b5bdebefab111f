/**
 * Coin selection for UTXO payouts (doge, zec): which of our spendable coins (kv/treasury.ts `spendableCoins`) pay
 * `amount` to one output, with change back to us or none. Pure: no KV, no chain.
 *
 * Largest-first, on purpose: fewest inputs, so the smallest transaction and fee for a hot wallet that pays out often;
 * deterministic (ties broken by outpoint), so a retried preparation after a crash picks the same coins when nothing
 * changed; and it stops at the first prefix that pays, so a coin worth less than the fee of its own input (which only
 * makes things worse) is reached last. Branch-and-bound finds change-less exact matches more often, but its gain (one
 * output less) does not pay for a second code path in the money path; it can come later behind the same signature.
 *
 * Change smaller than the dust limit (after paying for its own output) is not created: it goes to the fee, and the
 * result says how much (`dustToFee`) so the caller records it.
 */
import type { Outpoint } from "../adapter.ts";

export interface SelectableCoin {
  outpoint: Outpoint;
  amount: bigint;
}

/** The fee, in the chain's smallest unit, of a transaction with this many inputs and outputs. */
export type FeeFunction = (inputs: number, outputs: number) => bigint;

export type Selection<C extends SelectableCoin> =
  | {
    ok: true;
    inputs: C[];
    /** Back to our change address; null when none is created. */
    change: bigint | null;
    /** Everything the inputs hold beyond amount and change: the fee function's fee plus `dustToFee`. */
    fee: bigint;
    /** Change below the dust limit given to the fee instead (0 when change was created or nothing was left). */
    dustToFee: bigint;
  }
  /** Not enough coins: `short` more would fund it (with the fee of spending every coin). The payout waits. */
  | { ok: false; reason: "insufficient_funds"; short: bigint }
  /**
   * Enough coins, but not in MAX_TX_INPUTS of them: the largest MAX_TX_INPUTS fall `short`. The payout waits for a
   * consolidation (`deno task admin utxo consolidate`) or a larger deposit.
   */
  | { ok: false; reason: "too_many_inputs"; short: bigint };

/**
 * The most coins one of our transactions spends (a payout, a refund, a consolidation). The atomic that records it
 * checks each coin's lock, and a Deno KV atomic takes at most 100 checks (docs/architecture.md "Actors on Deno KV")
 * with the record's own checks beside them: past this a transaction could never be recorded, and its order would wait
 * for ever. The simulated ledger's own submission checks two keys per input (chains/sim/ledger.ts `addSpends`), so 40
 * keeps it under the limit too. Also far under every node's standard transaction size.
 */
export const MAX_TX_INPUTS = 40;

/** One payout output, plus the change output when there is change. */
const PAYOUT_OUTPUTS = 1;

/**
 * Chooses inputs for paying `amount`. Throws RangeError for bad input (a non-positive amount or an amount below the
 * dust limit, a negative dust limit, a coin that is not positive, the same outpoint twice, a negative fee): nothing
 * is chosen then.
 */
export function selectCoins<C extends SelectableCoin>(
  coins: readonly C[],
  amount: bigint,
  fee: FeeFunction,
  dustLimit: bigint,
): Selection<C> {
  if (dustLimit < 0n) throw new RangeError(`dust limit must not be negative (${dustLimit})`);
  if (amount <= 0n || amount < dustLimit) {
    throw new RangeError(`amount ${amount} must be positive and at least the dust limit ${dustLimit}`);
  }
  const seen = new Set<string>();
  for (const c of coins) {
    const id = `${c.outpoint.txHash}:${c.outpoint.index}`;
    if (seen.has(id)) throw new RangeError(`coin ${id} given twice`);
    seen.add(id);
    if (c.amount <= 0n) throw new RangeError(`coin ${id} has amount ${c.amount}`);
  }
  const feeOf = (inputs: number, outputs: number): bigint => {
    const f = fee(inputs, outputs);
    if (f < 0n) throw new RangeError(`fee function gave ${f} for ${inputs} inputs, ${outputs} outputs`);
    return f;
  };

  const ordered = [...coins].sort(largestFirst);
  let total = 0n;
  // Largest first: if the largest MAX_TX_INPUTS coins cannot pay, no MAX_TX_INPUTS coins can.
  const most = Math.min(ordered.length, MAX_TX_INPUTS);
  for (let n = 1; n <= most; n++) {
    total += ordered[n - 1].amount;
    const inputs = ordered.slice(0, n);
    const withChange = total - amount - feeOf(n, PAYOUT_OUTPUTS + 1);
    if (withChange >= dustLimit && withChange > 0n) {
      return { ok: true, inputs, change: withChange, fee: total - amount - withChange, dustToFee: 0n };
    }
    const noChangeFee = feeOf(n, PAYOUT_OUTPUTS);
    const left = total - amount - noChangeFee;
    if (left >= 0n) return { ok: true, inputs, change: null, fee: total - amount, dustToFee: left };
  }
  const all = ordered.reduce((sum, c) => sum + c.amount, 0n);
  if (ordered.length > MAX_TX_INPUTS && all - amount - feeOf(ordered.length, PAYOUT_OUTPUTS) >= 0n) {
    return { ok: false, reason: "too_many_inputs", short: amount + feeOf(most, PAYOUT_OUTPUTS) - total };
  }
  return { ok: false, reason: "insufficient_funds", short: amount + feeOf(ordered.length, PAYOUT_OUTPUTS) - all };
}

function largestFirst(a: SelectableCoin, b: SelectableCoin): number {
  if (a.amount !== b.amount) return a.amount > b.amount ? -1 : 1;
  if (a.outpoint.txHash !== b.outpoint.txHash) return a.outpoint.txHash < b.outpoint.txHash ? -1 : 1;
  return a.outpoint.index - b.outpoint.index;
}
