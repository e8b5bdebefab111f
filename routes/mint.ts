/** Deposit addresses (spec 4.2, 4.3). */
import { createRoute } from "@hono/zod-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { type ChainSymbol, EVM_CHAINS, isEvmChain, isNativeChain, NATIVE_CHAINS } from "../chains/catalog.ts";
import { type AddressSource, createMintWallet, listMintWallets, toMintWalletView } from "../kv/mint_wallets.ts";
import { raiseAlert } from "../kv/alerts.ts";
import { API_ERRORS } from "../messages.ts";
import { apiError, requiredString } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";
import { bearerSecurity, errorResponses, jsonBody, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";

const CreateMintWallet = z.object({
  chain: requiredString().describe("The native chain deposits are made on: sol, xrp, sui, doge, zec"),
  destinationChain: requiredString().describe("The EVM chain the uAsset is minted on"),
});

/** `toMintWalletView` (spec 2.2). */
export const MintWalletSchema = z.object({
  address: z.string().describe("The deposit address on the native chain"),
  chain: z.enum(NATIVE_CHAINS),
  destinationChain: z.enum(EVM_CHAINS),
}).meta({ id: "MintWallet" });

const create = createRoute({
  method: "post",
  path: "/wallets",
  tags: [TAGS.mint],
  summary: "Create a deposit address",
  description: "One deposit address per source chain and destination chain for the caller's wallet (spec 4.2).",
  security: bearerSecurity,
  request: { body: jsonBody(CreateMintWallet) },
  responses: {
    201: jsonResponse(okEnvelope(MintWalletSchema), "The new deposit address"),
    ...errorResponses(400, 401, 403, 500, 503),
  },
});

const list = createRoute({
  method: "get",
  path: "/wallets",
  tags: [TAGS.mint],
  summary: "List deposit addresses",
  description: "The caller's deposit addresses (spec 4.3).",
  security: bearerSecurity,
  responses: {
    200: jsonResponse(okEnvelope(z.array(MintWalletSchema)), "The caller's deposit addresses"),
    ...errorResponses(401, 403, 500),
  },
});

export function mintRoutes(
  kv: Deno.Kv,
  /** A process with the mnemonic derives (and takes pool entries first); ROLE=api has the pool alone. */
  source: AddressSource,
  /** Chains this process runs: a disabled one is unsupported here; addresses already issued for it stay listed. */
  enabled: readonly ChainSymbol[],
): OpenAPIHono<{ Variables: AuthVariables }> {
  const app = router<{ Variables: AuthVariables }>();

  app.openapi(create, async (c) => {
    const { chain, destinationChain } = c.req.valid("json");
    if (!isNativeChain(chain) || !enabled.includes(chain)) throw apiError(API_ERRORS.unsupportedSourceChain);
    if (!isEvmChain(destinationChain) || !enabled.includes(destinationChain)) {
      throw apiError(API_ERRORS.unsupportedDestinationChain);
    }
    const created = await createMintWallet(kv, c.get("wallet"), chain, destinationChain, source);
    if (!created.ok && created.reason === "pool_empty") {
      // Never a guessed or reused address: the partner retries (spec 7, 5xx), the operator is told why.
      await raiseAlert(kv, {
        kind: "deposit_pool_empty",
        subject: chain,
        chain,
        message: `No pre-derived ${chain} deposit address was left for POST /mint/wallets: is a worker running on ` +
          'this KV? (it refills the pool; docs/operations.md "Roles")',
      });
      throw apiError(API_ERRORS.depositAddressesUnavailable);
    }
    if (!created.ok) throw apiError(API_ERRORS.mintWalletExists);
    return c.json({ success: true as const, data: toMintWalletView(created.wallet) }, 201);
  });

  app.openapi(list, async (c) => {
    const wallets = await listMintWallets(kv, c.get("wallet"));
    return c.json({ success: true as const, data: wallets.map(toMintWalletView) }, 200);
  });

  return app;
}
