/** Token endpoints (spec 4.1), served under AUTH_URL's path, and the JWKS that lets anyone verify our tokens. */
import { type Context, Hono } from "hono";
import { zeroAddress } from "viem";
import { z } from "zod";
import { isEvmAddress } from "../chains/addresses.ts";
import { verifyApiKey } from "../kv/api_keys.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { apiError, parseBody, requiredString } from "./errors.ts";
import { AUTH_ERRORS, issueToken, type TokenSettings } from "./jwt.ts";

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

export function authRoutes(kv: Deno.Kv, tokens: TokenSettings, transferAddress: string): Hono {
  const app = new Hono();
  const TokenRequest = tokenRequest(transferAddress);

  const issue = async (c: Context) => {
    const check = await verifyApiKey(kv, c.req.header("X-API-Key"));
    if (!check.ok) {
      throw apiError(check.reason === "malformed" ? API_ERRORS.missingApiKey : API_ERRORS.invalidApiKey);
    }
    const { walletAddress } = await parseBody(c, TokenRequest);
    const wallet = await ensureUserWallet(kv, walletAddress, check.key.partnerId);
    if (wallet.partnerId !== check.key.partnerId) throw AUTH_ERRORS.otherPartner();
    // A deactivated wallet gets no new token: deactivation must not be undone by a refresh.
    if (wallet.status !== "active") throw AUTH_ERRORS.inactive();
    return c.json(await issueToken(tokens, walletAddress, check.key.partnerId, check.key.keyId), 200);
  };

  app.post("/token", issue);
  app.post("/token/refresh", issue);
  app.get("/.well-known/jwks.json", (c) => c.json({ keys: [tokens.keys.publicJwk] }));
  return app;
}
