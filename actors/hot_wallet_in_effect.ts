/**
 * The payer of the hot wallet in effect on an account chain (README "Rotating a hot wallet"). The index in effect is
 * state in KV (kv/hot_wallets.ts) and chains/ never reads KV (DESIGN.md "Layers"), so the actors read it and ask the
 * chain's payer for that wallet's payer (`AccountPayer.atHotIndex`): every payout, sweep and report of one step uses
 * the wallet it read, and the commit that records a payout checks the epoch a rotation bumps (kv/hot_wallet.ts), so a
 * payout checked against a wallet that was rotated out meanwhile is refused, never recorded.
 */
import type { AccountPayer, Chains } from "../chains/adapter.ts";
import type { AccountChain } from "../chains/catalog.ts";
import { readHotIndex } from "../kv/hot_wallets.ts";

/** The payer of `chain`'s hot wallet at derivation index `index`. Throws when the payer cannot serve that index. */
export function payerAtHotIndex(chains: Chains, chain: AccountChain, index: number): AccountPayer {
  const payer = chains.payer(chain);
  if ((payer.hotIndex ?? 0) === index) return payer;
  if (!payer.atHotIndex) throw new Error(`the ${chain} payer cannot sign for hot wallet index ${index}`);
  return payer.atHotIndex(index);
}

/** The payer of the hot wallet in effect on `chain`, read from KV now. */
export async function hotPayer(
  ctx: { kv: Deno.Kv; chains: Chains },
  chain: AccountChain,
): Promise<AccountPayer> {
  return payerAtHotIndex(ctx.chains, chain, await readHotIndex(ctx.kv, chain));
}
