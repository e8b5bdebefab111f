/**
 * Token endpoints (spec 4.1), served under AUTH_URL's path, the `X-API-Key` gate in front of them, and the JWKS that
 * lets anyone verify our tokens. The gate is mounted by the app before the Idempotency-Key middleware (so a replay is
 * only ever served to the key that made the first request); the routes assume it ran.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { zeroAddress } from "viem";
import { z } from "zod";
import { isEvmAddress } from "../chains/addresses.ts";
import { type ApiKeyRecord, verifyApiKey } from "../kv/api_keys.ts";
import { DEFAULT_PARTNER_LIMITS } from "../config/env.ts";
import { bindUserWallet } from "../kv/user_wallets.ts";
import { API_ERRORS, ISSUE_MESSAGES, newWalletLimit } from "../messages.ts";
import { apiError, requiredString } from "./errors.ts";
import { listJwtKeys, mayHaveLiveTokens } from "../kv/jwt_keys.ts";
import { AUTH_ERRORS, issueToken, type TokenSettings } from "./jwt.ts";
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, router, TAGS } from "./openapi.ts";

export interface ApiKeyVariables {
  /** The verified API key of a token request (set by `requireApiKey`). */
  apiKey: ApiKeyRecord;
}

/** Paths of the token endpoints, relative to the auth mount path. */
export const TOKEN_PATHS = ["/token", "/token/refresh"] as const;

/**
 * The `X-API-Key` gate (spec 5): 401 `Missing or malformed X-API-Key` when absent or not `<keyId>.<secret>`, 403
 * `Invalid API key` for any other value that is not an active key. Runs before the body is read, as before.
 */
export function requireApiKey(kv: Deno.Kv): MiddlewareHandler<{ Variables: ApiKeyVariables }> {
  return async (c, next) => {
    const check = await verifyApiKey(kv, c.req.header("X-API-Key"));
    if (!check.ok) {
      throw apiError(check.reason === "malformed" ? API_ERRORS.missingApiKey : API_ERRORS.invalidApiKey);
    }
    c.set("apiKey", check.key);
    await next();
  };
}

/**
 * Addresses no user can own: the zero address (nobody holds its key), and our own uAsset transfer address, whose
 * owner could configure burns and receive redemptions of every uAsset sent to it.
 */
function tokenRequest(transferAddress: string) {
  const transfer = transferAddress.toLowerCase();
  return z.object({
    walletAddress: requiredString()
      .refine(isEvmAddress, ISSUE_MESSAGES.evmAddress)
      .refine((a) => a.toLowerCase() !== zeroAddress, ISSUE_MESSAGES.zeroAddress)
      .refine((a) => a.toLowerCase() !== transfer, ISSUE_MESSAGES.transferAddress)
      .describe("EVM address to bind the token to (any case; the token's `sub` is lowercase)"),
  });
}

/** Spec 4.1: not wrapped in the envelope. */
export const TokenResponse = z.object({
  token: z.string().describe("The RS256 JWT"),
  expiresAt: z.number().int().describe("Expiry, Unix seconds (365 days after issuance)"),
});

function tokenRoute(path: string, summary: string, TokenRequest: ReturnType<typeof tokenRequest>) {
  return createRoute({
    method: "post",
    path,
    summary,
    tags: [TAGS.auth],
    security: apiKeySecurity,
    request: { body: jsonBody(TokenRequest) },
    responses: {
      200: jsonResponse(TokenResponse, "A JWT bound to `walletAddress` (not enveloped)"),
      ...errorResponses(400, 401, 403, 409, 422, 429, 500),
    },
  });
}

const Jwk = z.looseObject({ kty: z.string(), kid: z.string().optional(), alg: z.string().optional() });

const jwksRoute = createRoute({
  method: "get",
  path: "/.well-known/jwks.json",
  summary: "The public keys that verify our JWTs (RS256)",
  description: "Every signing key that is not retired and may still have unexpired tokens, by `kid`, the key new " +
    "tokens are signed with first. During a key rotation it lists the new key and the previous one.",
  tags: [TAGS.auth],
  responses: { 200: jsonResponse(z.object({ keys: z.array(Jwk) }), "A JWK Set (not enveloped)") },
});

export function authRoutes(
  kv: Deno.Kv,
  tokens: TokenSettings,
  transferAddress: string,
  /** New wallets one API key may bind per UTC day (config `API_KEY_MAX_NEW_WALLETS_PER_DAY`). */
  newWalletsPerDay = DEFAULT_PARTNER_LIMITS.newWalletsPerKeyPerDay,
): OpenAPIHono<{ Variables: ApiKeyVariables }> {
  const app = router<{ Variables: ApiKeyVariables }>();
  const TokenRequest = tokenRequest(transferAddress);
  const routes = [
    tokenRoute(TOKEN_PATHS[0], "Issue a JWT for a wallet", TokenRequest),
    tokenRoute(TOKEN_PATHS[1], "Refresh the JWT of a wallet", TokenRequest),
  ];
  for (const route of routes) {
    app.openapi(route, async (c) => {
      const key = c.get("apiKey");
      if (!key) throw new Error("the X-API-Key gate (requireApiKey) is not mounted in front of the token routes");
      const { walletAddress } = c.req.valid("json");
      const bound = await bindUserWallet(kv, walletAddress, key, newWalletsPerDay);
      if (!bound.ok) throw apiError(newWalletLimit(newWalletsPerDay));
      const wallet = bound.wallet;
      if (wallet.partnerId !== key.partnerId) throw AUTH_ERRORS.otherPartner();
      // A deactivated wallet gets no new token: deactivation must not be undone by a refresh.
      if (wallet.status !== "active") throw AUTH_ERRORS.inactive();
      return c.json(await issueToken(tokens, walletAddress, key.partnerId, key.keyId), 200);
    });
  }
  app.openapi(jwksRoute, async (c) => c.json({ keys: await publishedKeys(kv, tokens) }, 200));
  return app;
}

/**
 * The JWKS (kv/jwt_keys.ts): every recorded key that is not retired and whose last signing plus a token's lifetime
 * is still ahead, this process's key first, then the most recently used. Read from KV on each request: the JWKS is
 * fetched rarely and must drop a retired key at once.
 */
async function publishedKeys(kv: Deno.Kv, tokens: TokenSettings): Promise<z.infer<typeof Jwk>[]> {
  const own = tokens.keys.publicJwk.kid;
  const now = Date.now();
  const records = await listJwtKeys(kv);
  const live = records
    .filter((k) => k.kid !== own && k.retiredAt === null && mayHaveLiveTokens(k, now))
    .sort((a, b) => b.lastSignedAt.localeCompare(a.lastSignedAt));
  // This process's own key too is dropped once retired (another process may retire it: the retiring one refuses its own).
  const ownRetired = records.some((k) => k.kid === own && k.retiredAt !== null);
  return [...(ownRetired ? [] : [tokens.keys.publicJwk]), ...live.map((k) => k.publicJwk)] as z.infer<typeof Jwk>[];
}
