/**
 * Funding and preparing a native payout, the one rule for every payout the service sends (a burn order's payout, a
 * refund of a held record): UTXO chains spend treasury coins chosen by coin selection; account chains pay from the hot
 * wallet after what recorded, not yet final payouts hold (kv/hot_wallet.ts), and reserve this one's amount and fee in
 * the atomic that records it. Nothing is written here: the caller records the prepared transaction with its
 * reservations, or waits with the reason given.
 */
import type { PayoutRequest, PreparedTx } from "../chains/adapter.ts";
import { type AccountChain, chainFamily, type NativeChain, type UtxoChain } from "../chains/catalog.ts";
import { fundsAfterHolds, readHotWalletHolds } from "../kv/hot_wallet.ts";
import type { PipelineContext } from "./context.ts";
import { fundPayout } from "./treasury_steps.ts";
import { changePayer, payerAtHotIndex } from "./hot_wallet_in_effect.ts";

export type FundedPayout =
  /** Prepared, its coin or hot-wallet reservations attached: record it, then send it. */
  | { kind: "prepared"; prepared: PreparedTx }
  /** Not fundable now (treasury coins, hot-wallet balance after holds): never a failure, it waits for funds. */
  | { kind: "wait"; reason: string }
  /** The destination account does not exist and the amount cannot create it (the chain would refuse it). */
  | { kind: "below_reserve"; detail: string };

export async function prepareFundedPayout(
  ctx: PipelineContext,
  chain: NativeChain,
  req: PayoutRequest,
): Promise<FundedPayout> {
  const family = chainFamily(chain);
  switch (family.family) {
    case "utxo":
      return await prepareUtxoPayout(ctx, family.chain, req);
    case "account":
      return await prepareAccountPayout(ctx, family.chain, req);
  }
}

/** The treasury's coins, chosen by coin selection, pay it; none fit now: it waits. */
async function prepareUtxoPayout(ctx: PipelineContext, chain: UtxoChain, req: PayoutRequest): Promise<FundedPayout> {
  const funded = await fundPayout(ctx, chain, req.amount);
  if (!funded.ok) return { kind: "wait", reason: funded.reason };
  const payer = await changePayer(ctx, chain);
  return { kind: "prepared", prepared: await payer.preparePayout({ ...req, coins: funded.coins }) };
}

/** The hot wallet pays it, once what recorded, not yet final payouts hold is counted, and holds its amount and fee. */
async function prepareAccountPayout(
  ctx: PipelineContext,
  hot: AccountChain,
  req: PayoutRequest,
): Promise<FundedPayout> {
  // What recorded, not yet final payouts of the wallet in effect hold, read before the payer reads the chain balance;
  // the wallet is the one in effect after the epoch read, so a rotation since then refuses this payout's commit.
  const holds = await readHotWalletHolds(ctx.kv, hot);
  const payer = payerAtHotIndex(ctx.chains, hot, holds.hotIndex);
  const check = await payer.checkPayout(req);
  if (!check.ok && check.reason === "destination_below_reserve") return { kind: "below_reserve", detail: check.detail };
  // Sweeps of deposits fund the hot wallet, and the payout goes out once they have.
  if (!check.ok) return { kind: "wait", reason: check.detail };
  // The same wait while funds are promised to payouts already recorded: they go out first, or die and free them.
  const short = fundsAfterHolds(hot, check, holds, req.amount);
  if (short !== null) return { kind: "wait", reason: short };
  const prepared = await payer.preparePayout(req);
  const hold = {
    kind: "hotWallet" as const,
    chain: hot,
    amount: req.amount + (check.fee ?? 0n),
    epoch: holds.epoch,
    epochValue: holds.epochValue,
    hotIndex: holds.hotIndex,
  };
  prepared.reservations = [...(prepared.reservations ?? []), hold];
  return { kind: "prepared", prepared };
}
