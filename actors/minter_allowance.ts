/**
 * The `minter_allowance_low` alert (docs/live-chains.md "Minter allowance"): each mint spends the minter key's
 * allowance on its uAsset contract, which only the admin (a cold key) raises. Checked when a mint is prepared: when
 * what it leaves is below `minterAllowanceAlertPercent` of what the admin last set, an operator is told (one alert per
 * chain and uAsset, counted while it stays low) before mints start to wait; once a top-up lifts it above, the alert
 * clears itself.
 */
import type { EvmMinter } from "../chains/adapter.ts";
import type { EvmChain, UAsset } from "../chains/catalog.ts";
import { clearAlert, raiseAlert } from "../kv/alerts.ts";
import type { PipelineContext } from "./context.ts";

/** The alert's subject: one per chain and uAsset. */
export function allowanceSubject(chain: EvmChain, asset: UAsset): string {
  return `${chain}:${asset}`;
}

/** After preparing a mint of `amountWei`: raises or clears the alert for what the minter's allowance will have left. */
export async function checkMinterAllowance(
  ctx: Pick<PipelineContext, "kv" | "now" | "settings">,
  chain: EvmChain,
  minter: EvmMinter,
  asset: UAsset,
  amountWei: bigint,
): Promise<void> {
  const percent = ctx.settings.minterAllowanceAlertPercent;
  if (!minter.allowance || percent <= 0) return; // the sim keeps no allowance
  const { left, configured } = await minter.allowance(asset);
  const after = left > amountWei ? left - amountWei : 0n;
  const subject = allowanceSubject(chain, asset);
  // Integer arithmetic: below `percent` percent of the configured allowance.
  if (after * 100n < configured * BigInt(percent)) {
    await raiseAlert(ctx.kv, {
      kind: "minter_allowance_low",
      subject,
      chain,
      message: `${chain} ${asset}: the minter's allowance will have ${after} wei left after this mint, ` +
        `below ${percent}% of the ${configured} wei its admin last set; the admin tops it up with configureMinter ` +
        `before mints start to wait (docs/live-chains.md "Minter allowance")`,
      now: ctx.now(),
    });
  } else {
    await clearAlert(ctx.kv, "minter_allowance_low", subject); // reads it first: nothing written when there is none
  }
}
