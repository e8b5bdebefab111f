/**
 * The treasury's part in an order's steps on the UTXO chains (doge, zec), each a set of writes for the commit that
 * moves the order (or a refusal to move it), never a commit of its own:
 * - a mint order's deposit output becomes a coin in the commit that confirms the deposit (pending -> processing),
 *   whatever its amount: a below-minimum deposit fails its order but its coin is ours and spendable. Dust gets no
 *   order and so no coin: it stays an output at our deposit address (the ledger still shows it), for a future
 *   consolidation to pick up;
 * - a burn's payout is funded by coin selection (largest-first, chains/shared/coin_select.ts) under the chain's fee
 *   rule; the adapter returns the coins as a `coins` reservation, locked in the atomic that records the payout; a
 *   payout the treasury cannot fund waits with `TREASURY_CANNOT_FUND` on the order, and goes out when coins arrive;
 * - the payout counted final spends its coins and adds its change as a coin, in the commit that completes the order;
 *   a payout proven dead releases its coins (model/sent_tx_effects.ts says what each outcome writes).
 */
import { type ObservedTransfer, type PayoutCoin, TransientChainError } from "../chains/adapter.ts";
import { chainFamily, type UtxoChain } from "../chains/catalog.ts";
import { MAX_TX_INPUTS, selectCoins } from "../chains/shared/coin_select.ts";
import { changeDustLimit } from "../chains/shared/utxo_fee.ts";
import type { SimLedger } from "../chains/sim/ledger.ts";
import { findDepositAddress } from "../kv/mint_wallets.ts";
import type { MintOrder } from "../model/order.ts";
import { addCoins, type Coin, spendableCoins } from "../kv/treasury.ts";
import { CHANGE_DERIVATION_INDEX } from "../chains/derivation.ts";
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import type { PipelineContext } from "./context.ts";

/** Why a burn waits (on the order's `details.heldReason`) while no set of free coins pays it and its fee. */
export const TREASURY_CANNOT_FUND = "treasury cannot fund this payout yet";

/**
 * Why a burn waits while the treasury holds enough, but only in more coins than one transaction may spend
 * (chains/shared/coin_select.ts `MAX_TX_INPUTS`): an operator consolidates them (docs/operations.md "UTXO treasuries").
 */
export const TREASURY_TOO_FRAGMENTED = `treasury holds enough only in more than ${MAX_TX_INPUTS} coins: ` +
  "consolidate it (deno task admin utxo consolidate)";

/**
 * The write (as data) that adds a confirmed mint deposit's output (in block `height`) to the treasury, or null on
 * other chains.
 * Throws when the output is no longer where the reader says it was, or no longer ours: the step is retried.
 */
export async function depositCoinEffect(
  ctx: PipelineContext,
  order: MintOrder,
  height: number,
): Promise<SentTxEffect | null> {
  const source = chainFamily(order.sourceChain);
  if (source.family !== "utxo") return null;
  const chain = source.chain;
  const { txHash, index } = order.details.source;
  const transfers = await ctx.chains.reader(chain).transfersOf(txHash);
  // Not in a canonical block any more since txStatus answered: the next look decides.
  if (transfers === null) throw new TransientChainError(`${chain}: ${txHash} left the chain mid-check`);
  const out = transfers.find((t: ObservedTransfer) => t.index === index && t.asset === "native");
  if (!out) throw new Error(`${chain}: deposit output ${txHash}:${index} of order ${order.id} is not on chain`);
  const owner = await findDepositAddress(ctx.kv, chain, out.to);
  if (!owner) throw new Error(`${chain}: deposit output ${txHash}:${index} does not pay one of our addresses`);
  const coin = { chain, outpoint: { txHash, index }, address: out.to, derivationIndex: owner.derivationIndex, height };
  return { kind: "addCoin", coin: { ...coin, amount: out.amount } };
}

/** The coins that pay `amount` on a UTXO chain, or why the treasury cannot fund it now. */
export async function fundPayout(
  ctx: PipelineContext,
  chain: UtxoChain,
  amount: bigint,
): Promise<{ ok: true; coins: PayoutCoin[] } | { ok: false; reason: string }> {
  const selection = selectCoins(
    await spendableCoins(ctx.kv, chain),
    amount,
    ctx.settings.utxoFee(chain),
    changeDustLimit(chain),
  );
  if (selection.ok) return { ok: true, coins: selection.inputs.map(payoutCoinOf) };
  return { ok: false, reason: selection.reason === "too_many_inputs" ? TREASURY_TOO_FRAGMENTED : TREASURY_CANNOT_FUND };
}

/** A treasury coin as a payer needs it to sign its spend. */
export function payoutCoinOf(c: Coin): PayoutCoin {
  return { ...c.outpoint, amount: c.amount, address: c.address, derivationIndex: c.derivationIndex, height: c.height };
}

/** How the sim's genesis funds the treasury of a UTXO chain: this many coins, so concurrent payouts need not queue. */
export const SIM_GENESIS_COINS = 8;

/**
 * Sim only: gives the operator's change address `total` native units as SIM_GENESIS_COINS genesis outputs and adds
 * them to the treasury, so burns made with faucet uAssets (no deposit behind them) can be paid. Idempotent: every
 * process sharing the KV may call it at start with the same amount.
 */
export async function seedSimUtxoGenesis(ledger: SimLedger, address: string, total: bigint): Promise<void> {
  const family = chainFamily(ledger.chain);
  if (family.family !== "utxo" || total <= 0n) return;
  const chain = family.chain;
  const each = total / BigInt(SIM_GENESIS_COINS);
  if (each <= 0n) throw new RangeError(`sim ${chain}: genesis ${total} is too small to split`);
  const coins = [];
  for (let i = 0; i < SIM_GENESIS_COINS; i++) {
    const outpoint = await ledger.ensureGenesisOutput(address, each, i);
    coins.push({
      chain,
      outpoint,
      address,
      derivationIndex: CHANGE_DERIVATION_INDEX,
      amount: each,
      height: 0,
      coinbase: false,
    });
  }
  await addCoins(ledger.kv, coins);
}
