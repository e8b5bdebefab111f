/**
 * What settling a sent transaction (model/sent_tx.ts) does to the rest of the store, as plain data: the one driver
 * (actors/sent_tx.ts) returns these, each purpose adds its own record's change, and one writer (kv/sent_tx_effects.ts)
 * turns both into the operations of a single atomic. Pure: no KV, no clock.
 *
 * Every purpose settles the same way (docs/architecture.md invariant 2, and the "proof of death" table):
 * - **final**: a UTXO transaction's inputs leave the treasury (spent by the hash that was mined; their locks stay,
 *   naming it) and the outputs paying us back become treasury coins; a Sui transaction's coin-version locks go (those
 *   versions are gone); a hot-wallet hold taken for it is released (the chain's balance now shows the payout itself);
 * - **failed** (a final failed inclusion): nothing was spent on chain: its coins and XRPL Sequence lock are released,
 *   and its hot-wallet hold;
 * - **dead** (proven never to be mined): the same releases, except the coins a conflicting final transaction spent,
 *   which leave the treasury (spent by it, their locks naming it), so they are never selected or reserved again.
 * An EVM nonce is never given back (kv/chain_state.ts `addReleases`): the transaction that proved ours dead used it.
 */
import { chainFamily, type ChainSymbol, type UtxoChain } from "../chains/catalog.ts";
import type { Consumed, DeathProof, Outpoint } from "../chains/adapter.ts";
import { CHANGE_DERIVATION_INDEX } from "../chains/derivation.ts";
import type { SentTx } from "./sent_tx.ts";

/** A treasury coin to add (kv/treasury.ts `Coin`), as data. */
export interface CoinEffect {
  chain: UtxoChain;
  outpoint: Outpoint;
  /** Our address it pays, and the derivation index of its key (chains/signer.ts signs the spend with it). */
  address: string;
  derivationIndex: number;
  amount: bigint;
  /** The block it was confirmed in. */
  height: number;
}

export type SentTxEffect =
  /** Its coins' locks and its XRPL Sequence lock go (kv/chain_state.ts `addReleases`). */
  | { kind: "releaseConsumed"; chain: ChainSymbol; consumes: Consumed }
  /** The hot-wallet hold recorded under its hash goes (kv/hot_wallet.ts). */
  | { kind: "releaseHotWalletHold"; chain: ChainSymbol; txHash: string }
  /** These coins leave the treasury, spent by `spentBy` (kv/treasury.ts `addSpent`). */
  | { kind: "spendCoins"; chain: UtxoChain; outpoints: Outpoint[]; spentBy: string }
  /** A new treasury coin. */
  | { kind: "addCoin"; coin: CoinEffect };

/** An output of one of our transactions that pays us back, with the key that signs its spend. */
export interface OwnOutput {
  index: number;
  address: string;
  derivationIndex: number;
  amount: bigint;
}

/** The outputs of `tx` that pay us: its change, signed by the change key. */
export function changeOutputsOf(tx: SentTx): OwnOutput[] {
  if (!tx.change) return [];
  const { index, address, amount } = tx.change;
  const derivationIndex = tx.change.derivationIndex ?? CHANGE_DERIVATION_INDEX;
  return [{ index, address, derivationIndex, amount: BigInt(amount) }];
}

/**
 * `tx` counted final as `minedHash` (itself, or a fee-bumped replacement) in block `height`. `own`: the outputs paying
 * us back (its change by default; a consolidation's merged output).
 */
export function finalEffects(
  tx: SentTx,
  minedHash: string,
  height: number,
  own: OwnOutput[] = changeOutputsOf(tx),
): SentTxEffect[] {
  const effects: SentTxEffect[] = [{ kind: "releaseHotWalletHold", chain: tx.chain, txHash: tx.txHash }];
  const family = chainFamily(tx.chain);
  if (family.family !== "utxo" && tx.consumes?.kind === "outpoints") {
    // Sui coin object versions: the final transaction consumed them, no transaction can use them again, so their locks
    // would only pile up.
    effects.push({ kind: "releaseConsumed", chain: tx.chain, consumes: tx.consumes });
  }
  if (family.family !== "utxo" || tx.consumes?.kind !== "outpoints") return effects;
  const chain = family.chain;
  effects.push({ kind: "spendCoins", chain, outpoints: tx.consumes.outpoints, spentBy: minedHash });
  for (const o of own) {
    effects.push({
      kind: "addCoin",
      coin: {
        chain,
        outpoint: { txHash: minedHash, index: o.index },
        address: o.address,
        derivationIndex: o.derivationIndex,
        amount: o.amount,
        height,
      },
    });
  }
  return effects;
}

/** `tx` failed on chain, finally: what it held is free again. */
export function failedEffects(tx: SentTx): SentTxEffect[] {
  const effects: SentTxEffect[] = [];
  if (tx.consumes) effects.push({ kind: "releaseConsumed", chain: tx.chain, consumes: tx.consumes });
  effects.push({ kind: "releaseHotWalletHold", chain: tx.chain, txHash: tx.txHash });
  return effects;
}

/**
 * `tx` proven dead by `proof`: what it held is free again, except the coins another final transaction spent, which
 * are gone (spent by it: their locks stay, naming it, so no step reserves them again).
 */
export function deadEffects(tx: SentTx, proof: DeathProof): SentTxEffect[] {
  const family = chainFamily(tx.chain);
  if (family.family !== "utxo" || proof.kind !== "conflict" || proof.consumed.kind !== "outpoints") {
    return failedEffects(tx);
  }
  const taken = proof.consumed.outpoints;
  const isTaken = (o: Outpoint) => taken.some((t) => t.txHash === o.txHash && t.index === o.index);
  const effects: SentTxEffect[] = [];
  if (tx.consumes?.kind === "outpoints") {
    const free = tx.consumes.outpoints.filter((o) => !isTaken(o));
    if (free.length > 0) {
      effects.push({ kind: "releaseConsumed", chain: tx.chain, consumes: { ...tx.consumes, outpoints: free } });
    }
  }
  effects.push({ kind: "releaseHotWalletHold", chain: tx.chain, txHash: tx.txHash });
  const spentBy = proof.spentBy ?? "unknown conflicting transaction";
  effects.push({ kind: "spendCoins", chain: family.chain, outpoints: taken, spentBy });
  return effects;
}
