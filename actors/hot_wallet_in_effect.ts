/**
 * The payer of the hot wallet in effect on an account chain (docs/operations.md "Rotating a hot wallet"). The index in
 * effect is state in KV (kv/hot_wallets.ts) and chains/ never reads KV (docs/architecture.md "Layers"), so the actors
 * read it and ask the chain's payer for that wallet's payer (`AccountPayer.atHotIndex`): every payout, sweep and report
 * of one step uses the wallet it read, and the commit that records a payout checks the epoch a rotation bumps
 * (kv/hot_wallet.ts), so a payout checked against a wallet that was rotated out meanwhile is refused, never recorded.
 */
import type { AccountPayer, Chains, UtxoPayer } from "../chains/adapter.ts";
import type { AccountChain, UtxoChain } from "../chains/catalog.ts";
import { hotWalletStateKey, readChangeAddressState, readHotWalletState } from "../kv/hot_wallets.ts";
import type { RetiredHotWallet } from "../model/hot_wallet.ts";

/** The payer of `chain`'s hot wallet at derivation index `index`. Throws when the payer cannot serve that index. */
export function payerAtHotIndex(chains: Chains, chain: AccountChain, index: number): AccountPayer {
  const payer = chains.payer(chain);
  if ((payer.hotIndex ?? 0) === index) return payer;
  if (!payer.atHotIndex) throw new Error(`the ${chain} payer cannot sign for hot wallet index ${index}`);
  return payer.atHotIndex(index);
}

/**
 * The payer of the hot wallet in effect on `chain`, and the check that keeps it so: a recording that adds `check`
 * commits only if no rotation (nor drain step) changed the hot-wallet record since it was read.
 */
export async function hotPayerChecked(
  ctx: { kv: Deno.Kv; chains: Chains },
  chain: AccountChain,
): Promise<{ payer: AccountPayer; check: Deno.AtomicCheck }> {
  const read = await readHotWalletState(ctx.kv, chain);
  return {
    payer: payerAtHotIndex(ctx.chains, chain, read.state?.current.index ?? 0),
    check: { key: hotWalletStateKey(chain), versionstamp: read.versionstamp },
  };
}

/**
 * Every hot wallet of `chain` whose coins we still control: the one in effect (its payer) and each retired one (an
 * old wallet keeps its reserve for good, and its balance while a drain is due or in flight). Reconciliation and the
 * treasury report count them all; a drain in flight is in one of them whichever side of it the chain is on.
 */
export async function hotWalletsOf(
  ctx: { kv: Deno.Kv; chains: Chains },
  chain: AccountChain,
): Promise<{ payer: AccountPayer; retired: RetiredHotWallet[] }> {
  const { state } = await readHotWalletState(ctx.kv, chain);
  return { payer: payerAtHotIndex(ctx.chains, chain, state?.current.index ?? 0), retired: state?.retired ?? [] };
}

/** What completed drains paid in fee (what left the old wallet less what the new one received): an operator cost. */
export function drainFeesOf(retired: readonly RetiredHotWallet[]): bigint {
  let fees = 0n;
  for (const r of retired) {
    if (r.drainAmount === undefined || r.delivered === undefined) continue;
    // A chain that reports more delivered than left (it should not) is counted as no fee, never a negative one.
    const fee = BigInt(r.drainAmount) - BigInt(r.delivered);
    if (fee > 0n) fees += fee;
  }
  return fees;
}

/** The payer of UTXO chain `chain` with its change key at `index`. Throws when the payer cannot serve that index. */
export function payerAtChangeIndex(chains: Chains, chain: UtxoChain, index: number): UtxoPayer {
  const payer = chains.payer(chain);
  if ((payer.changeIndex ?? 0) === index) return payer;
  if (!payer.atChangeIndex) throw new Error(`the ${chain} payer cannot sign for change index ${index}`);
  return payer.atChangeIndex(index);
}

/**
 * The payer of UTXO chain `chain` whose change goes to the change address in effect (kv/hot_wallets.ts;
 * docs/operations.md "Rotating a hot wallet", UTXO change). A payout prepared just before a rotation sends its change
 * to the old address: harmless, a coin there is a treasury coin its own key still signs.
 */
export async function changePayer(ctx: { kv: Deno.Kv; chains: Chains }, chain: UtxoChain): Promise<UtxoPayer> {
  const { state } = await readChangeAddressState(ctx.kv, chain);
  return payerAtChangeIndex(ctx.chains, chain, state?.current.index ?? 0);
}
