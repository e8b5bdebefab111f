/**
 * Builds the service from a configuration: opens KV, loads secrets, derives the shared transfer address and mounts
 * every router. `main.ts` serves the result; tests serve the same thing on a temporary KV.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Deriver } from "./chains/derivation.ts";
import { openKv } from "./kv/open.ts";
import { readChangeAddressState, readHotIndex, readHotWalletState } from "./kv/hot_wallets.ts";
import { nextRotationIndex } from "./model/hot_wallet.ts";
import { uAssetTransferAddress } from "./chains/transfer_address.ts";
import { authMountPath, type Config } from "./config/env.ts";
import {
  type ApiSecrets,
  loadApiSecrets,
  loadSecrets,
  loadWorkerSecrets,
  type Secrets,
  type WorkerSecrets,
} from "./config/secrets.ts";
import { publishedTransferAddress, publishTransferAddress } from "./kv/public_config.ts";
import { refillDepositPool } from "./kv/mint_wallets.ts";
import { authRoutes, requireApiKey, TOKEN_PATHS } from "./routes/auth.ts";
import { idempotency } from "./routes/idempotency.ts";
import { burnRoutes } from "./routes/burn.ts";
import { configRoutes } from "./routes/config.ts";
import { notFound, onError } from "./routes/errors.ts";
import { mountDocs } from "./routes/docs.ts";
import { registerSecuritySchemes, router } from "./routes/openapi.ts";
import { limitBodies } from "./routes/body_limit.ts";
import { JwtKeyRing, requireJwt, type TokenSettings, VerifiedTokenCache } from "./routes/jwt.ts";
import { mintRoutes } from "./routes/mint.ts";
import { simRoutes } from "./routes/sim.ts";
import { healthRoutes } from "./routes/health.ts";
import { Readiness } from "./actors/readiness.ts";
import type { PipelineContext, PipelineSettings } from "./actors/context.ts";
import { settingsFromConfig } from "./actors/settings_from_config.ts";
import { buildChains, type ChainSetup, liveSigner } from "./config/registry.ts";
import {
  chainsOf,
  type ChainSymbol,
  EVM_CHAINS,
  type EvmChain,
  isNativeChain,
  type NativeChain,
} from "./chains/catalog.ts";
import { defaultSimOperatorAddress } from "./chains/sim/adapters.ts";
import { seedSimUtxoGenesis } from "./actors/treasury_steps.ts";
import { type ChainPlan, chainPlan, DEVNET_CHAIN_ID, proveChainNodes } from "./config/chain_mode.ts";
import { PipelineRuntime, type RuntimeOptions } from "./actors/runtime.ts";
import { checkWatchPlan, watchedChains } from "./config/watch_plan.ts";
import { CRON_LEASE_MS } from "./actors/cron.ts";
import { SimLedger } from "./chains/sim/ledger.ts";
import { orderIdFallbackRoutes, orderRoutes, orderRoutesPrefetch } from "./routes/orders.ts";
import { orderStreamRoutes } from "./routes/order_stream.ts";
import { redactedLog } from "./chains/shared/redact.ts";
import { Signer } from "./chains/signer.ts";
import { type KeyRef, RemoteSigner } from "./chains/signer_client.ts";
import { TRANSFER_ADDRESS_INDEX } from "./chains/evm/index.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { adminRoutes, type OperatorVariables, requireOperator } from "./routes/admin.ts";
import { adminUiRoutes, UI_PATH } from "./routes/admin_ui.ts";
import type { Context } from "hono";
import { webhookSink } from "./kv/webhooks.ts";
import { DEFAULT_WEBHOOK_OPTIONS } from "./actors/webhook_delivery.ts";
import { Metrics } from "./actors/metrics.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import type { Services } from "./routes/services.ts";

export async function buildServices(
  config: Config,
  secrets?: Secrets | ApiSecrets | WorkerSecrets,
): Promise<Services> {
  // Refused before anything is opened: a mode that would mix live and simulated chains unsafely never starts.
  const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
  // A chain this process cannot keep up with (deploy mode's cron budget) is refused here too, saying what to do instead.
  checkWatchPlan(config.watch, config.runtimeMode, {
    mode: plan.mode,
    enabled: plan.enabled,
    live: [...plan.live, ...plan.liveUtxo, ...plan.liveAccount],
    polling: config.account.solDetection.mode === "addresses" ? ["sol"] : [],
  });
  // Every live node is asked which chain it serves (devnet: anvil, regtest, no mainnet; live: native mainnet) before
  // anything starts.
  await proveChainNodes(plan, config.evm, config.utxo, config.account);
  announcePlan(plan);
  if (config.role === "api") return await buildApiServices(config, plan, secrets);
  if (config.role === "signer") throw new Error("ROLE=signer runs the signer process (actors/signer/process.ts)");
  // docs/operations.md "Roles", the signer process: a worker given SIGNER_SOCKET holds no key (config/env.ts refused
  // them) and signs through the socket; the signer process derives deposit addresses and publishes the transfer
  // address.
  const remote = config.role === "worker" && config.signerSocket ? await connectSigner(config, plan) : null;
  if (!remote && secrets && !("mnemonic" in secrets)) throw new Error(`ROLE=${config.role} needs the master mnemonic`);
  // The worker serves no partner route: it neither needs nor holds the JWT key (docs/operations.md "Roles").
  const loaded: { mnemonic: string; jwt?: Secrets["jwt"] } | null = remote ? null : (secrets as Secrets) ??
    (config.role === "worker" ? await loadWorkerSecrets(config) : await loadSecrets(config));
  const jwt = config.role === "worker" ? undefined : loaded?.jwt;
  if (config.role === "all" && !jwt) throw new Error("ROLE=all needs the JWT key");
  // Deposit addresses of doge and zec in the plan's network (regtest on a devnet node, mainnet otherwise).
  const deriver = loaded ? Deriver.fromMnemonic(loaded.mnemonic, plan.utxoNetworks) : null;
  // One Signer for every live native chain; the hot-wallet addresses are printed even with PIPELINE=off, since
  // operators fund them before payouts start.
  const localSigner = loaded ? liveSigner(plan, loaded.mnemonic) : undefined;
  const signer = remote ?? localSigner;
  // Deploy mode: the platform's KV, which has no queues (the cron sweep drives the pipeline).
  const kv = await openKv(config.kvPath, { queues: config.runtimeMode !== "deploy" });
  if (signer) await announceHotWallets(kv, plan, signer);
  if (remote) await loadChangeKeys(kv, plan, remote);
  const transferAddress = deriver
    ? uAssetTransferAddress(config, deriver)
    : config.burnTransferAddress ?? await publishedTransferAddress(kv);
  if (!transferAddress) {
    kv.close();
    throw new Error(
      "ROLE=worker with SIGNER_SOCKET: no uAsset transfer address is published on this KV yet: start the signer " +
        "process (ROLE=signer) on the same KV first (it publishes the address), or set BURN_TRANSFER_ADDRESS",
    );
  }
  // For api processes on this KV, which cannot derive it (docs/operations.md "Roles").
  if (deriver) await publishTransferAddress(kv, transferAddress);
  // prom-client's process metrics read /proc and process.* (they work under Deno 2.9.6); not tried on Deno Deploy.
  const metrics = new Metrics({ processDefaults: config.runtimeMode !== "deploy" });
  // Burns and refunds are signed by the transfer address, which pays their gas (docs/onchain-burn.md).
  console.log(
    `uAsset transfer address (burns redeemed uAssets; fund it with gas on live EVM chains): ${transferAddress}`,
  );
  // PIPELINE=off serves the API alone: no chain adapter is built (the plan above was still checked).
  let setup;
  let settings: PipelineSettings | undefined;
  let tokens: TokenSettings | null = null;
  try {
    if (jwt) tokens = await tokenSettings(config, kv, jwt);
    if (config.pipeline === "on") {
      settings = settingsFromConfig(config, transferAddress, plan.enabled, plan);
      // Only live native chains sign with the master mnemonic's keys here, with one Signer built once; it is never
      // logged (it prints as "Signer {}") and holds no key outside #private fields.
      setup = await buildChains(kv, plan, config.evm, transferAddress, {
        hotWalletGenesis: config.simHotWalletGenesis,
        utxo: signer && plan.liveUtxo.length > 0 ? { config: config.utxo, signer, settings } : undefined,
        account: signer && plan.liveAccount.length > 0 ? { config: config.account, signer, settings } : undefined,
        rpcHook: metrics.rpcHook,
        transferSigner: remote ?? localSigner ?? Signer.fromMnemonic(loaded!.mnemonic, plan.utxoNetworks),
        ...(remote ? { minterAccount: (chain: EvmChain) => remote.minterAccount(chain) } : {}),
      });
    } else {
      setup = { chains: null, simulated: plan.simulated };
    }
    if (config.pipeline === "on") await seedSimTreasuries(kv, plan.simulated, config.simUtxoGenesis);
  } catch (err) {
    // Refused at start (a wrong chain id, no RPC, an unreadable key): leave no KV handle open.
    kv.close();
    throw err;
  }
  return {
    config,
    kv,
    tokens,
    deriver,
    uAssetTransferAddress: transferAddress,
    pipeline: setup.chains
      ? {
        ...pipelineContext(config, kv, transferAddress, setup as ChainSetup, plan, settings),
        ...metricsHooks(metrics),
      }
      : null,
    chainPlan: plan,
    simulatedChains: setup.simulated,
    shutdown: new AbortController(),
    metrics,
  };
}

/**
 * ROLE=api (docs/operations.md "Roles"): the JWT key and nothing else. No Deriver, no Signer, no pipeline; deposit
 * addresses come from the pool the worker fills and the transfer address from what the worker published (or
 * BURN_TRANSFER_ADDRESS). config/env.ts already refused a mnemonic or an EVM key in the environment; a caller's full
 * `Secrets` are cut to the JWT key here, so the mnemonic is never referenced by what this returns.
 */
async function buildApiServices(
  config: Config,
  plan: ChainPlan,
  secrets?: Secrets | ApiSecrets | WorkerSecrets,
): Promise<Services> {
  if (secrets && !("jwt" in secrets)) throw new Error("ROLE=api needs the JWT key");
  const jwt = secrets ? secrets.jwt : (await loadApiSecrets(config)).jwt;
  const kv = await openKv(config.kvPath, { queues: false });
  const transferAddress = config.burnTransferAddress ?? await publishedTransferAddress(kv);
  if (!transferAddress) {
    kv.close();
    throw new Error(
      "ROLE=api: no uAsset transfer address is published on this KV yet: start a worker (ROLE=worker) on the same " +
        "KV first (it publishes the address), or set BURN_TRANSFER_ADDRESS",
    );
  }
  console.log(`ROLE=api: uAsset transfer address ${transferAddress}; deposit addresses from the worker's pool`);
  return {
    config,
    kv,
    tokens: await tokenSettings(config, kv, jwt).catch((err) => {
      kv.close();
      throw err;
    }),
    deriver: null,
    uAssetTransferAddress: transferAddress,
    pipeline: null,
    chainPlan: plan,
    simulatedChains: plan.simulated,
    shutdown: new AbortController(),
    metrics: new Metrics({ processDefaults: config.runtimeMode !== "deploy" }),
  };
}

/**
 * The token settings of a process holding the JWT key. Every such process records the key it signs with before it
 * serves, so every other process on this KV verifies its tokens and the JWKS publishes it; a key an operator retired
 * refuses to start (docs/operations.md "Rotating the JWT signing key").
 */
async function tokenSettings(config: Config, kv: Deno.Kv, keys: Secrets["jwt"]): Promise<TokenSettings> {
  const ring = new JwtKeyRing(kv, keys);
  await ring.recordSigningKey();
  return { keys, ring, issuer: config.authUrl, audience: config.baseUrl, claimNamespace: config.claimNamespace };
}

/** What the pipeline tells the metrics (actors/metrics.ts). */
function metricsHooks(metrics: Metrics): Pick<PipelineContext, "onOrderMoved"> {
  return { onOrderMoved: metrics.orderMoved };
}

/**
 * Prints each live account chain's hot-wallet address in effect (chains/derivation.ts `hotWalletPath` at the index
 * kv/hot_wallets.ts records: docs/operations.md "Rotating a hot wallet"), which operators fund so payouts can go out
 * before sweeps do; the key itself is never printed nor stored.
 */
async function announceHotWallets(
  kv: Deno.Kv,
  plan: ChainPlan,
  signer: Pick<Signer, "address"> & Partial<Pick<RemoteSigner, "loadKey">>,
) {
  for (const chain of plan.liveAccount) {
    const index = await readHotIndex(kv, chain);
    if (signer.loadKey) {
      // A keyless worker knows only the public keys it loaded (chains/signer_client.ts): the wallet in effect, the
      // retired ones (a drain signs from them) and the next index, so one rotation needs no restart of the worker.
      const { state } = await readHotWalletState(kv, chain);
      const retired = (state?.retired ?? []).map((r) => r.index);
      for (const i of new Set([index, nextRotationIndex(state), ...retired])) {
        await signer.loadKey(chain, i, "hot");
      }
    }
    console.log(
      `${chain} hot wallet (payouts are sent from it; fund it): ${signer.address(chain, index, "hot")}` +
        (index === 0 ? "" : ` (index ${index})`),
    );
  }
}

/**
 * A keyless worker knows only the public keys it loaded (chains/signer_client.ts): each live UTXO chain's change keys
 * at index 0 (the payer is built there), in effect, rotated out (their coins stay spendable) and the next index, so one
 * rotation (docs/operations.md "Rotating a hot wallet", UTXO change) needs no restart of the worker.
 */
async function loadChangeKeys(kv: Deno.Kv, plan: ChainPlan, remote: RemoteSigner) {
  for (const chain of plan.liveUtxo) {
    const { state } = await readChangeAddressState(kv, chain);
    const current = state?.current.index ?? 0;
    const retired = state?.retired.map((r) => r.index) ?? [];
    for (const i of new Set([0, current, nextRotationIndex(state), ...retired])) {
      await remote.loadKey(chain, i, "change");
    }
  }
}

/**
 * A keyless worker's signer: the signer process's client, with the public keys the adapters need loaded once (each
 * live account chain's hot wallet, the transfer address, the minter); each live UTXO chain's change keys are loaded
 * with the KV at hand (`loadChangeKeys`), its deposit keys when a payout spends their coins (chains/utxo/payer.ts).
 */
async function connectSigner(config: Config, plan: ChainPlan): Promise<RemoteSigner> {
  const preload: KeyRef[] = [
    ...plan.liveAccount.map((chain) => ({ chain, index: 0, branch: "hot" as const })),
    ...EVM_CHAINS.map((chain) => ({ chain, index: TRANSFER_ADDRESS_INDEX, branch: "deposit" as const })),
    ...plan.live.map((chain) => ({ chain, index: 0, branch: "minter" as const })),
  ];
  try {
    return await RemoteSigner.connect(config.signerSocket!, preload);
  } catch (err) {
    throw new Error(
      `ROLE=worker cannot use the signer at SIGNER_SOCKET ${config.signerSocket}: ${(err as Error).message}`,
    );
  }
}

/** The simulated UTXO chains' genesis coins, paid to the sim payer's operator address and in the treasury. */
async function seedSimTreasuries(kv: Deno.Kv, simulated: ChainSymbol[], total: bigint): Promise<void> {
  for (const chain of chainsOf("utxo", simulated)) {
    await seedSimUtxoGenesis(new SimLedger(kv, chain), defaultSimOperatorAddress(chain), total);
  }
}

function announcePlan(plan: ChainPlan) {
  if (plan.mode === "live" && plan.disabled.length > 0) {
    console.warn(
      `CHAIN_MODE=live: disabled chains (no live adapter configured): ${plan.disabled.join(", ")}; ` +
        "their transfers are held and requests naming them are refused",
    );
  }
  const natives = [...plan.liveAccount, ...plan.liveUtxo];
  if (plan.mode === "live" && natives.length > 0) {
    console.log(`CHAIN_MODE=live: ${natives.join(", ")} live on mainnet`);
  }
  if (plan.mode === "devnet") {
    const regtest = (plan.liveUtxo.length > 0 ? ` and ${plan.liveUtxo.join(", ")} on a local regtest node` : "") +
      (plan.liveAccount.length > 0 ? ` and ${plan.liveAccount.join(", ")} on local test nodes` : "");
    console.warn(
      `!!! CHAIN_MODE=devnet is for TESTS ONLY: ${plan.live.join(", ") || "no EVM chain"} live on a local dev ` +
        `chain (chain id ${DEVNET_CHAIN_ID})${regtest} beside simulated ${plan.simulated.join(", ")}, with /sim ` +
        "open to anyone !!!",
    );
  }
}

export function pipelineContext(
  config: Config,
  kv: Deno.Kv,
  transferAddress: string,
  setup: ChainSetup,
  plan: ChainPlan,
  /** The settings the chains were built with; unset, built here from the same configuration and plan. */
  settings: PipelineSettings = settingsFromConfig(config, transferAddress, plan.enabled, plan),
): PipelineContext {
  return {
    kv,
    chains: setup.chains,
    settings,
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
    useQueue: s.config.runtimeMode !== "deploy" && s.config.kvPath !== "" && !/^https?:/.test(s.config.kvPath),
    blockMs,
    blockChains: s.simulatedChains,
    produceBlock: (chain) => new SimLedger(kv, chain).sealBlock(),
    eventSinks: [webhookSink()],
    webhooks: {
      ...DEFAULT_WEBHOOK_OPTIONS,
      pollMs: Math.min(DEFAULT_WEBHOOK_OPTIONS.pollMs, s.config.sweepMs),
      timeoutMs: s.config.webhookTimeoutMs,
      backoffBaseMs: s.config.webhookBackoffBaseMs,
    },
    hasPending: (chain) => new SimLedger(kv, chain).hasPending(),
    watchChains: watchedChains(s.config.watch, s.chainPlan.enabled),
    cronRunMs: s.config.watch.cronRunMs,
    watchBytesPerRun: s.config.watch.bytesPerRun,
    lagAlertMs: s.config.watch.lagAlertMs,
    unwatchedAfterMs: s.config.watch.unwatchedAfterMs,
    // The worker fills the pool the api processes allocate from; ROLE=all derives on request as it always did.
    depositPool: s.config.role === "worker" && s.deriver ? depositPool(s, s.deriver) : undefined,
    // Deploy mode: cron runs once a minute in whatever isolate; a lease outlives a run, not the period.
    ...(s.config.runtimeMode === "deploy" ? { leaseMs: CRON_LEASE_MS, idleLeaseMs: CRON_LEASE_MS } : {}),
  });
}

function depositPool(s: Services, deriver: Deriver): RuntimeOptions["depositPool"] {
  return {
    chains: s.chainPlan.enabled.filter(isNativeChain),
    refill: (chain) => refillDepositPool(s.kv, chain, (c, i) => deriver.depositAddress(c, i), s.config.depositPool),
  };
}

/**
 * The pipeline's settings for the read side (confirmations shown on pending orders): this process's, or with
 * PIPELINE=off the ones a pipeline process on the same configuration runs with; null when they cannot be built.
 */
function readSettings(s: Services): PipelineSettings | null {
  if (s.pipeline) return s.pipeline.settings;
  try {
    return settingsFromConfig(s.config, s.uAssetTransferAddress, s.chainPlan.enabled, s.chainPlan);
  } catch {
    return null;
  }
}

/**
 * The service's routes on one OpenAPIHono: every router is an OpenAPI router (routes/openapi.ts), so
 * `/openapi.json` (routes/docs.ts) documents exactly what is mounted here. `readiness`: what /readyz reports; main.ts
 * passes its own (starting until the pipeline runs), tests a ready one.
 */
export function createApp(s: Services, readiness: Readiness = new Readiness("ready")): OpenAPIHono {
  const app = router();
  app.onError(onError());
  app.notFound(notFound);
  registerSecuritySchemes(app);
  mountDocs(app, { baseUrl: s.config.baseUrl, authUrl: s.config.authUrl, chainMode: s.config.chainMode });

  // A stopping process ends its open event streams at once (actors/shutdown.ts would otherwise wait, then cut them).
  readiness.stopping.addEventListener("abort", () => s.shutdown.abort(), { once: true });
  app.route("/", healthRoutes(s.kv, s.config.chainMode, readiness));
  // ROLE=worker holds the keys: its HTTP is probes and scraping only, so no partner or operator credential is ever
  // presented to the process that signs. Admin stays with the api role; it acts through KV, which the worker reads.
  if (s.config.role === "worker") {
    app.route("/", metricsRoutes(s));
    return app;
  }
  const tokens = s.tokens;
  if (!tokens) throw new Error(`ROLE=${s.config.role} serves partner routes and needs the JWT key`);
  const enabled = s.chainPlan.enabled;
  app.route("/config", configRoutes(enabled));
  // No body above the one size limit is read by anything below (routes/body_limit.ts).
  app.on(["POST", "PUT"], "*", limitBodies());
  const authMount = authMountPath(s.config);
  // The X-API-Key gate of the token endpoints, before the Idempotency-Key middleware below.
  for (const path of TOKEN_PATHS) app.on("POST", `${authMount === "/" ? "" : authMount}${path}`, requireApiKey(s.kv));

  // The JWT gate covers the partner resources only, so an unknown path still answers 404.
  const cache = new VerifiedTokenCache();
  const jwt = requireJwt(s.kv, tokens, { cache });
  // "/x/*" also matches "/x" in Hono, so each gate is registered once.
  for (const path of ["/mint/*", "/burn/*", "/webhooks/*"]) app.use(path, jwt);
  app.use("/orders/*", requireJwt(s.kv, tokens, { cache, prefetch: orderRoutesPrefetch }));
  // Operators: the admin API takes operator keys only (routes/admin.ts); the dashboard under /admin/ui has its own
  // session gate.
  const operatorGate = requireOperator(s.kv);
  app.use("/admin/*", async (c: Context<{ Variables: OperatorVariables }>, next) => {
    if (c.req.path === "/admin/ui" || c.req.path.startsWith("/admin/ui/")) return await next();
    return await operatorGate(c, next);
  });
  // Idempotency-Key on every POST: after every credential gate above, before every route below (docs/idempotency.md).
  // Requests no gate verified take keys only on the /sim routes, where they are mounted.
  const simMounted = s.config.chainMode !== "live" && s.simulatedChains.length > 0;
  const unverified = (path: string) => simMounted && (path === "/sim" || path.startsWith("/sim/"));
  app.on("POST", "*", idempotency(s.kv, redactedLog(), { unverified }));
  const { limits } = s.config;
  app.route(authMount, authRoutes(s.kv, tokens, s.uAssetTransferAddress, limits.newWalletsPerKeyPerDay));
  const deriver = s.deriver;
  const derive = deriver && ((chain: NativeChain, index: number) => deriver.depositAddress(chain, index));
  // ROLE=all derives on request exactly as before (same address for an index either way); ROLE=api takes the pool.
  app.route("/mint", mintRoutes(s.kv, { derive, pool: derive === null }, enabled));
  app.route("/burn", burnRoutes(s.kv, s.uAssetTransferAddress, enabled, s.chainPlan.utxoNetworks));
  const streams = { shutdown: s.shutdown.signal, maxPerPartner: limits.streamsPerPartner };
  app.route("/orders", orderStreamRoutes(s.kv, streams)); // before /orders/:id
  app.route("/orders", orderRoutes(s.kv, { settings: readSettings(s) }));
  app.route("/orders", orderIdFallbackRoutes()); // after every /orders router: a malformed id is an unknown order
  const webhooks = { chainMode: s.config.chainMode, maxPerPartner: limits.webhookEndpointsPerPartner };
  app.route("/webhooks", webhookRoutes(s.kv, webhooks));
  app.route(UI_PATH, adminUiRoutes(s)); // HTML, not in /openapi.json (docs/dashboard.md)
  app.route("/admin", adminRoutes(s));
  app.route("/", metricsRoutes(s)); // GET /metrics, behind its own operator gate (scope metrics)
  // Sim and devnet only, and then for the simulated chains only; live mode never mounts it (404).
  if (simMounted) {
    app.route("/sim", simRoutes(s.kv, s.uAssetTransferAddress, s.simulatedChains));
  }
  return app;
}
