/** The pipeline's per-chain settings as the configuration defines them (server and operator CLI alike). */
import { type PipelineSettings, pipelineSettings } from "../actors/context.ts";
import type { Config } from "./env.ts";

export function settingsFromConfig(config: Config, transferAddress: string): PipelineSettings {
  return pipelineSettings({
    blockMs: config.simBlockMs,
    confirmationTimeoutMs: config.simConfirmationTimeoutMs,
    transferAddress,
    live: config.evm.chains,
  });
}
