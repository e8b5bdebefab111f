/** Token endpoints (spec 4.1), served under AUTH_URL's path, and the JWKS that lets anyone verify our tokens. */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { isEvmAddress } from "../chains/addresses.ts";
import { verifyApiKey } from "../kv/api_keys.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ApiError, parseBody, requiredString } from "./errors.ts";
import { AUTH_ERRORS, issueToken, type TokenSettings } from "./jwt.ts";

const TokenRequest = z.object({
  walletAddress: requiredString().refine(isEvmAddress, "Must be a 20-byte hex EVM address (0x followed by 40 hex)"),
});

export function authRoutes(kv: Deno.Kv, tokens: TokenSettings): Hono {
  const app = new Hono();

  const issue = async (c: Context) => {
    const check = await verifyApiKey(kv, c.req.header("X-API-Key"));
    if (!check.ok) {
      throw check.reason === "malformed"
        ? new ApiError(401, "Missing or malformed X-API-Key")
        : new ApiError(403, "Invalid API key");
    }
    const { walletAddress } = await parseBody(c, TokenRequest);
    const wallet = await ensureUserWallet(kv, walletAddress, check.key.partnerId);
    // A deactivated wallet gets no new token: deactivation must not be undone by a refresh.
    if (wallet.status !== "active") throw AUTH_ERRORS.inactive();
    return c.json(await issueToken(tokens, walletAddress, check.key.partnerId, check.key.keyId), 200);
  };

  app.post("/token", issue);
  app.post("/token/refresh", issue);
  app.get("/.well-known/jwks.json", (c) => c.json({ keys: [tokens.keys.publicJwk] }));
  return app;
}
