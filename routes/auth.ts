/** Token endpoints (spec 4.1), served under AUTH_URL's path, and the JWKS that lets anyone verify our tokens. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { zeroAddress } from "viem";
import { z } from "zod";
import { isEvmAddress } from "../chains/addresses.ts";
import { verifyApiKey } from "../kv/api_keys.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { apiError, requiredString } from "./errors.ts";
import { AUTH_ERRORS, issueToken, type TokenSettings } from "./jwt.ts";
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse, router, TAGS } from "./openapi.ts";

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
      .refine((a) => a.toLowerCase() !== transfer, ISSUE_MESSAGES.transferAddress),
  });
}

const TokenAnswer = z.object({
  token: z.string().describe("The access token (RS256 JWT)"),
  expiresAt: z.number().int().describe("Unix seconds"),
});

const JwksAnswer = z.object({ keys: z.array(z.object({ kty: z.string(), kid: z.string() }).passthrough()) });

export function authRoutes(kv: Deno.Kv, tokens: TokenSettings, transferAddress: string): OpenAPIHono {
  const app = router<{ Variables: { apiKey: { partnerId: string; keyId: string } } }>();
  const TokenRequest = tokenRequest(transferAddress);

  // The key is checked before the body is read (a route's middleware runs before its validators).
  const requireApiKey: MiddlewareHandler<{ Variables: { apiKey: { partnerId: string; keyId: string } } }> = async (
    c,
    next,
  ) => {
    const check = await verifyApiKey(kv, c.req.header("X-API-Key"));
    if (!check.ok) {
      throw apiError(check.reason === "malformed" ? API_ERRORS.missingApiKey : API_ERRORS.invalidApiKey);
    }
    c.set("apiKey", { partnerId: check.key.partnerId, keyId: check.key.keyId });
    await next();
  };

  const tokenRoute = (path: string, summary: string) =>
    createRoute({
      method: "post",
      path,
      tags: [TAGS.auth],
      summary,
      security: apiKeySecurity,
      middleware: [requireApiKey] as const,
      request: { body: jsonBody(TokenRequest) },
      responses: {
        200: jsonResponse(TokenAnswer, "The access token"),
        ...errorResponses(400, 401, 403, 500),
      },
    });

  for (const route of [tokenRoute("/token", "Get an access token"), tokenRoute("/token/refresh", "Refresh it")]) {
    app.openapi(route, async (c) => {
      const { walletAddress } = c.req.valid("json");
      const key = c.get("apiKey");
      const wallet = await ensureUserWallet(kv, walletAddress, key.partnerId);
      if (wallet.partnerId !== key.partnerId) throw AUTH_ERRORS.otherPartner();
      // A deactivated wallet gets no new token: deactivation must not be undone by a refresh.
      if (wallet.status !== "active") throw AUTH_ERRORS.inactive();
      return c.json(await issueToken(tokens, walletAddress, key.partnerId, key.keyId), 200);
    });
  }
  app.openapi(
    createRoute({
      method: "get",
      path: "/.well-known/jwks.json",
      tags: [TAGS.auth],
      summary: "Token verification keys",
      responses: { 200: jsonResponse(JwksAnswer, "The JWKS") },
    }),
    (c) => c.json({ keys: [tokens.keys.publicJwk] }, 200) as never,
  );
  return app as unknown as OpenAPIHono;
}
