/**
 * Funding and preparing a native payout, the one rule for every payout the service sends (a burn order's payout, a
 * refund of a held record): UTXO chains spend treasury coins chosen by coin selection; account chains pay from the hot
 * wallet after what recorded, not yet final payouts hold (kv/hot_wallet.ts), and reserve this one's amount and fee in
 * the atomic that records it. Nothing is written here: the caller records the prepared transaction with its
 * reservations, or waits with the reason given.
 */
import type { PayoutRequest, PreparedTx } from "../chains/adapter.ts";
import { isAccountChain, isUtxoChain, type NativeChain } from "../chains/catalog.ts";
import { fundsAfterHolds, readHotWalletHolds } from "../kv/hot_wallet.ts";
import type { PipelineContext } from "./context.ts";
import { fundPayout, TREASURY_CANNOT_FUND } from "./treasury_steps.ts";

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
  req: Omit<PayoutRequest, "coins">,
): Promise<FundedPayout> {
  const payer = ctx.chains.payer(chain);
  const coins = isUtxoChain(chain) ? await fundPayout(ctx, chain, req.amount) : undefined;
  if (coins === null) return { kind: "wait", reason: TREASURY_CANNOT_FUND };
  const request: PayoutRequest = { ...req, ...(coins ? { coins } : {}) };
  // Account chains: what recorded, not yet final payouts hold, read before the payer reads the chain balance.
  const hot = payer.hotWallet !== undefined && isAccountChain(chain) ? chain : null;
  const holds = hot ? await readHotWalletHolds(ctx.kv, hot) : null;
  const check = await payer.checkPayout?.(request) ?? { ok: true as const };
  if (!check.ok && check.reason === "destination_below_reserve") return { kind: "below_reserve", detail: check.detail };
  // Sweeps of deposits fund the hot wallet, and the payout goes out once they have.
  if (!check.ok) return { kind: "wait", reason: check.detail };
  // The same wait while funds are promised to payouts already recorded: they go out first, or die and free them.
  const short = hot && holds ? fundsAfterHolds(hot, check, holds, req.amount) : null;
  if (short !== null) return { kind: "wait", reason: short };
  const prepared = await payer.preparePayout(request);
  if (hot && holds) {
    const hold = {
      kind: "hotWallet" as const,
      chain: hot,
      amount: req.amount + (check.fee ?? 0n),
      epoch: holds.epoch,
      epochValue: holds.epochValue,
    };
    prepared.reservations = [...(prepared.reservations ?? []), hold];
  }
  return { kind: "prepared", prepared };
}
