/**
 * What a Solana transaction credits: the one rule both ways of finding deposits use (a block read whole,
 * chains/sol/reader.ts, or a transaction found by address, chains/sol/poll.ts), so a deposit has the same
 * (signature, account index, amount, sender) whichever found it, and so the same deposit id (actors/watcher.ts
 * `depositIdOf`).
 */
import type { ObservedTransfer } from "../adapter.ts";

/**
 * The lamports each account of a successful transaction received (its balance rose), only for the accounts `ours`
 * accepts (all without it): the key is looked up before anything is built, so a block's credits to outsiders (nearly
 * all of them) cost no object. The sender is the fee payer, the first signer.
 */
export function creditsTo(tx: CreditableTx, ours?: (address: string) => boolean): ObservedTransfer[] {
  const meta = tx.meta;
  if (meta === null || meta.err !== null) return []; // failed: only its fee payer was charged
  const keys = tx.transaction.accountKeys ?? tx.transaction.message?.accountKeys;
  const signature = tx.transaction.signatures[0];
  if (!keys || keys.length === 0 || signature === undefined) {
    throw new Error(`sol: transaction ${signature ?? "?"} has no account keys: request accounts or jsonParsed details`);
  }
  if (meta.preBalances.length !== keys.length || meta.postBalances.length !== keys.length) {
    throw new Error(`sol: transaction ${signature}: ${keys.length} account keys but balances for another count`);
  }
  const out: ObservedTransfer[] = [];
  for (let i = 0; i < keys.length; i++) {
    const pre = meta.preBalances[i];
    const post = meta.postBalances[i];
    if (!rose(pre, post) || (ours && !ours(keys[i].pubkey))) continue;
    const from = keys.find((k) => k.signer)?.pubkey ?? keys[0].pubkey; // the fee payer is the first signer
    const amount = BigInt(post) - BigInt(pre);
    out.push({ txHash: signature, index: i, from, to: keys[i].pubkey, amount, asset: "native" });
  }
  return out;
}

/** Lamports as the schema gives them (bigint) or as a node answered them and `isPlainScanBlock` checked them. */
export type Lamports = bigint | number | string;

/** What crediting reads of a transaction: `SolTransaction`, or a block's transaction as answered, checked in place. */
export interface CreditableTx {
  transaction: {
    signatures: readonly string[];
    accountKeys?: readonly { pubkey: string; signer: boolean }[];
    message?: { accountKeys: readonly { pubkey: string; signer: boolean }[] };
  };
  meta: { err: unknown; preBalances: readonly Lamports[]; postBalances: readonly Lamports[] } | null;
}

function rose(pre: Lamports, post: Lamports): boolean {
  return typeof pre === "number" && typeof post === "number" ? post > pre : BigInt(post) > BigInt(pre);
}
