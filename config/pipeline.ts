/** The pipeline's per-chain settings as the configuration defines them (server and operator CLI alike). */
import { type PipelineSettings, pipelineSettings } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import type { Config } from "./env.ts";

/** `enabled`: the chain plan's enabled chains (config/chain_mode.ts); unset, every chain (operator commands). */
export function settingsFromConfig(
  config: Config,
  transferAddress: string,
  enabled?: readonly ChainSymbol[],
): PipelineSettings {
  return pipelineSettings({
    enabled,
    blockMs: config.simBlockMs,
    confirmationTimeoutMs: config.simConfirmationTimeoutMs,
    transferAddress,
    live: config.evm.chains,
  });
}
