/**
 * Builds the service from a configuration: opens KV, loads secrets, derives the shared transfer address and mounts
 * every router. `main.ts` serves the result; tests serve the same thing on a temporary KV.
 */
import { Hono } from "hono";
import { Deriver } from "./chains/derivation.ts";
import { authMountPath, type Config } from "./config/env.ts";
import { loadSecrets, type Secrets } from "./config/secrets.ts";
import { authRoutes } from "./routes/auth.ts";
import { burnRoutes } from "./routes/burn.ts";
import { configRoutes } from "./routes/config.ts";
import { notFound, onError } from "./routes/errors.ts";
import { requireJwt, type TokenSettings, VerifiedTokenCache } from "./routes/jwt.ts";
import { mintRoutes } from "./routes/mint.ts";
import { orderRoutes, orderRoutesPrefetch } from "./routes/orders.ts";

export interface Services {
  config: Config;
  kv: Deno.Kv;
  tokens: TokenSettings;
  deriver: Deriver;
  uAssetTransferAddress: string;
}

/** The EVM path of the shared uAsset transfer address, unless BURN_TRANSFER_ADDRESS names another. */
export const TRANSFER_ADDRESS_PATH = "m/44'/60'/0'/0/0";

export async function openKv(path: string): Promise<Deno.Kv> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  if (dir) await Deno.mkdir(dir, { recursive: true });
  return await Deno.openKv(path);
}

export async function buildServices(config: Config, secrets?: Secrets): Promise<Services> {
  const loaded = secrets ?? await loadSecrets(config);
  const deriver = Deriver.fromMnemonic(loaded.mnemonic);
  const kv = await openKv(config.kvPath);
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
    uAssetTransferAddress: config.burnTransferAddress ?? deriver.evmAddress(TRANSFER_ADDRESS_PATH),
  };
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
  app.route(authMountPath(s.config), authRoutes(s.kv, s.tokens));

  // The JWT gate covers the partner resources only, so an unknown path still answers 404.
  const cache = new VerifiedTokenCache();
  const jwt = requireJwt(s.kv, s.tokens, { cache });
  // "/x/*" also matches "/x" in Hono, so each gate is registered once.
  for (const path of ["/mint/*", "/burn/*"]) app.use(path, jwt);
  app.use("/orders/*", requireJwt(s.kv, s.tokens, { cache, prefetch: orderRoutesPrefetch }));
  app.route("/mint", mintRoutes(s.kv, (chain, index) => s.deriver.depositAddress(chain, index)));
  app.route("/burn", burnRoutes(s.kv, s.uAssetTransferAddress));
  app.route("/orders", orderRoutes(s.kv));
  return app;
}
