/**
 * What the routers are handed: the services `app.ts` builds from a configuration. It lives beside the routers, not in
 * `app.ts`, because imports run one way (docs/architecture.md "Layout"): `app.ts` mounts the routers, routers never
 * import it.
 */
import type { Config } from "../config/env.ts";
import type { TokenSettings } from "./jwt.ts";
import type { Deriver } from "../chains/derivation.ts";
import type { PipelineContext } from "../actors/context.ts";
import type { ChainPlan } from "../config/chain_mode.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import type { Metrics } from "../actors/metrics.ts";

export interface Services {
  config: Config;
  kv: Deno.Kv;
  /**
   * Issues and verifies partner tokens; null in ROLE=worker, which serves no partner route (docs/operations.md
   * "Roles").
   */
  tokens: TokenSettings | null;
  /** Derives deposit addresses from the mnemonic; null in ROLE=api, which holds none (docs/operations.md "Roles"). */
  deriver: Deriver | null;
  uAssetTransferAddress: string;
  /** The order pipeline's shared context; null when PIPELINE=off. */
  pipeline: PipelineContext | null;
  /** Which chains are live, simulated or disabled (config/chain_mode.ts). */
  chainPlan: ChainPlan;
  /** Chains served by embedded simulated ledgers. */
  simulatedChains: ChainSymbol[];
  /** Abort before shutting the server down: open event streams (GET /orders/stream) end instead of holding it. */
  shutdown: AbortController;
  /** This process's Prometheus registry (GET /metrics): its pipeline's moves and its RPC calls feed it. */
  metrics: Metrics;
}
