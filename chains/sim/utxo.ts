/**
 * The sim's UTXO mode for doge and zec (ledger.ts keeps the records): which outputs a transaction creates, and the
 * rules a spend must pass. A native transfer (or a genesis output) creates output 0 to its recipient; a payout with inputs creates output 0
 * to its destination and output 1 (its change) to the operator; the fee is what the inputs hold beyond the outputs
 * and must meet the chain's fee rule (chains/shared/utxo_fee.ts), as a node's relay policy would demand.
 */
import type { ChainSymbol } from "../catalog.ts";
import { isUtxoChain } from "../catalog.ts";
import { utxoFee } from "../shared/utxo_fee.ts";
import type { SimTx } from "./tx.ts";

/** The index of a payout's change output. */
export const CHANGE_INDEX = 1;

export interface SimOutput {
  address: string;
  amount: bigint;
}

/** Output `index` of a transaction, or null when it has none there. */
export function outputOf(tx: SimTx, index: number): SimOutput | null {
  if (tx.kind === "transfer" || tx.kind === "genesis" || tx.kind === "coinbase") {
    return index === 0 ? { address: tx.to, amount: tx.amount } : null;
  }
  if (tx.kind !== "payout") return null;
  if (index === 0) return { address: tx.to, amount: tx.amount };
  if (index === CHANGE_INDEX && tx.change) return { address: tx.change.address, amount: tx.change.amount };
  return null;
}

export type SpendRefusal = "duplicate_input" | "insufficient_fee";

/** Why a UTXO-mode payout is malformed on its own (before the ledger looks its inputs up), or null. */
export function spendRefusal(chain: ChainSymbol, tx: SimTx & { kind: "payout" }): SpendRefusal | null {
  const inputs = tx.inputs ?? [];
  const ids = new Set(inputs.map((i) => `${i.txHash}:${i.index}`));
  if (ids.size !== inputs.length) return "duplicate_input";
  if (!isUtxoChain(chain)) return null;
  const total = inputs.reduce((sum, i) => sum + i.amount, 0n);
  const outputs = tx.change ? 2 : 1;
  const paid = tx.amount + (tx.change?.amount ?? 0n);
  return total - paid < utxoFee(chain)(inputs.length, outputs) ? "insufficient_fee" : null;
}
