/**
 * Builds the service from a configuration: opens KV, loads secrets, derives the shared transfer address and mounts
 * every router. `main.ts` serves the result; tests serve the same thing on a temporary KV.
 */
import { Hono } from "hono";
import { Deriver } from "./chains/derivation.ts";
import { openKv } from "./kv/open.ts";
import { uAssetTransferAddress } from "./chains/transfer_address.ts";
import { authMountPath, type Config } from "./config/env.ts";
import { loadSecrets, type Secrets } from "./config/secrets.ts";
import { authRoutes } from "./routes/auth.ts";
import { burnRoutes } from "./routes/burn.ts";
import { configRoutes } from "./routes/config.ts";
import { notFound, onError } from "./routes/errors.ts";
import { requireJwt, type TokenSettings, VerifiedTokenCache } from "./routes/jwt.ts";
import { mintRoutes } from "./routes/mint.ts";
import { simRoutes } from "./routes/sim.ts";
import type { PipelineContext } from "./actors/context.ts";
import { settingsFromConfig } from "./config/pipeline.ts";
import { buildChains, type ChainSetup } from "./chains/registry.ts";
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "./chains/catalog.ts";
import { PipelineRuntime } from "./actors/runtime.ts";
import { SimLedger } from "./chains/sim/ledger.ts";
import { orderRoutes, orderRoutesPrefetch } from "./routes/orders.ts";
import { redactedLog } from "./chains/shared/redact.ts";

export interface Services {
  config: Config;
  kv: Deno.Kv;
  tokens: TokenSettings;
  deriver: Deriver;
  uAssetTransferAddress: string;
  /** The order pipeline's shared context; null when PIPELINE=off. */
  pipeline: PipelineContext | null;
  /** Chains served by embedded simulated ledgers (the others are live). */
  simulatedChains: ChainSymbol[];
}

export async function buildServices(config: Config, secrets?: Secrets): Promise<Services> {
  const loaded = secrets ?? await loadSecrets(config);
  const deriver = Deriver.fromMnemonic(loaded.mnemonic);
  const kv = await openKv(config.kvPath);
  const transferAddress = uAssetTransferAddress(config, deriver);
  // PIPELINE=off serves the API alone: no chain is touched, so none is built (or refused).
  let setup;
  try {
    setup = config.pipeline === "on"
      ? await buildChains(kv, config.chainMode, config.evm, transferAddress)
      : { chains: null, simulated: config.chainMode === "sim" ? [...NATIVE_CHAINS, ...EVM_CHAINS] : [] };
  } catch (err) {
    // Refused at start (live mode with simulated chains, a wrong chain id, no RPC): leave no KV handle open.
    kv.close();
    throw err;
  }
  return {
    config,
    kv,
    tokens: {
      keys: loaded.jwt,
      issuer: config.authUrl,
      audience: config.baseUrl,
      claimNamespace: config.claimNamespace,
    },
    deriver,
    uAssetTransferAddress: transferAddress,
    pipeline: setup.chains ? pipelineContext(config, kv, transferAddress, setup as ChainSetup) : null,
    simulatedChains: setup.simulated,
  };
}

export function pipelineContext(
  config: Config,
  kv: Deno.Kv,
  transferAddress: string,
  setup: ChainSetup,
): PipelineContext {
  return {
    kv,
    chains: setup.chains,
    settings: settingsFromConfig(config, transferAddress),
    now: () => new Date(),
    log: redactedLog(),
    faultPoint: config.faultCrashPoint === undefined ? undefined : (point) => {
      if (point !== config.faultCrashPoint) return;
      console.error(`FAULT_CRASH_POINT=${point}: killing this process with SIGKILL`);
      Deno.kill(Deno.pid, "SIGKILL");
    },
  };
}

/** The pipeline runtime for these services (not started), or null when PIPELINE=off. */
export function pipelineRuntime(s: Services): PipelineRuntime | null {
  if (!s.pipeline) return null;
  const kv = s.kv;
  const blockMs = s.config.simBlockMs;
  return new PipelineRuntime(s.pipeline, {
    id: `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
    sweepMs: s.config.sweepMs,
    watchMs: Math.max(10, Math.floor(blockMs / 2)),
    concurrency: 32,
    useQueue: !/^https?:/.test(s.config.kvPath),
    blockMs,
    blockChains: s.simulatedChains,
    produceBlock: (chain) => new SimLedger(kv, chain).sealBlock(),
  });
}

export function createApp(s: Services): Hono {
  const app = new Hono();
  app.onError(onError());
  app.notFound(notFound);

  app.get("/healthz", async (c) => {
    await s.kv.get(["healthz"]);
    return c.json({ success: true, data: { status: "ok", chainMode: s.config.chainMode } });
  });
  app.route("/config", configRoutes());
  app.route(authMountPath(s.config), authRoutes(s.kv, s.tokens, s.uAssetTransferAddress));

  // The JWT gate covers the partner resources only, so an unknown path still answers 404.
  const cache = new VerifiedTokenCache();
  const jwt = requireJwt(s.kv, s.tokens, { cache });
  // "/x/*" also matches "/x" in Hono, so each gate is registered once.
  for (const path of ["/mint/*", "/burn/*"]) app.use(path, jwt);
  app.use("/orders/*", requireJwt(s.kv, s.tokens, { cache, prefetch: orderRoutesPrefetch }));
  app.route("/mint", mintRoutes(s.kv, (chain, index) => s.deriver.depositAddress(chain, index)));
  app.route("/burn", burnRoutes(s.kv, s.uAssetTransferAddress));
  app.route("/orders", orderRoutes(s.kv));
  if (s.config.chainMode === "sim") app.route("/sim", simRoutes(s.kv, s.uAssetTransferAddress, s.simulatedChains));
  return app;
}
