/**
 * The one writer of a sent transaction's settling (model/sent_tx_effects.ts): turns the effects the driver returned
 * into the operations of the atomic that also changes the purpose's own record, so both are committed together or
 * not at all (docs/architecture.md invariant 2).
 */
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import { addReleases } from "./chain_state.ts";
import { releaseHotWalletHold } from "./hot_wallet.ts";
import { addCoinRecord, addSpent } from "./treasury.ts";

export function addSentTxEffects(atomic: Deno.AtomicOperation, effects: readonly SentTxEffect[]): Deno.AtomicOperation {
  for (const e of effects) {
    switch (e.kind) {
      case "releaseConsumed":
        addReleases(atomic, e.chain, e.consumes);
        break;
      case "releaseHotWalletHold":
        releaseHotWalletHold(atomic, e.chain, e.txHash);
        break;
      case "spendCoins":
        addSpent(atomic, e.chain, e.outpoints, e.spentBy);
        break;
      case "addCoin":
        addCoinRecord(atomic, { ...e.coin, coinbase: false });
        break;
    }
  }
  return atomic;
}
