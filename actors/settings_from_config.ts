/** The pipeline's per-chain settings as the configuration defines them (server and operator CLI alike). */
import { type PipelineSettings, pipelineSettings } from "./context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import type { ChainPlan } from "../config/chain_mode.ts";
import type { Config } from "../config/env.ts";
import { configuredUtxoFee } from "../config/utxo.ts";

/**
 * `enabled`: the chain plan's enabled chains (config/chain_mode.ts); unset, every chain (operator commands).
 * `plan`: the native chains that run live (UTXO chains with their networks, account chains); unset, none (the
 * configured native values stay unused).
 */
export function settingsFromConfig(
  config: Config,
  transferAddress: string,
  enabled?: readonly ChainSymbol[],
  plan?: Pick<ChainPlan, "liveUtxo" | "utxoNetworks"> & Partial<Pick<ChainPlan, "liveAccount">>,
): PipelineSettings {
  const liveUtxo = plan?.liveUtxo ?? [];
  const liveAccount = plan?.liveAccount ?? [];
  return pipelineSettings({
    enabled,
    blockMs: config.simBlockMs,
    confirmationTimeoutMs: config.simConfirmationTimeoutMs,
    transferAddress,
    live: {
      ...config.evm.chains,
      ...Object.fromEntries(liveUtxo.map((c) => [c, config.utxo.chains[c]!])),
      ...Object.fromEntries(liveAccount.map((c) => [c, config.account.chains[c]!])),
    },
    utxoNetworks: plan?.utxoNetworks,
    // Built now, so a fee rate the build cannot apply is refused at start, not at the first payout.
    utxoFees: Object.fromEntries(liveUtxo.map((c) => [c, configuredUtxoFee(c, config.utxo)])),
    minterAllowanceAlertPercent: config.minterAllowanceAlertPercent,
    hotBands: config.hotBands,
  });
}
