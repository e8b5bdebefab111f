/** Burn configurations (spec 2.3, 4.4-4.6): where a wallet's redeemed coins are paid, per native chain. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { destinationAddressError } from "../chains/addresses.ts";
import {
  chainFamily,
  type ChainSymbol,
  isNativeChain,
  MEMO_MAX_LENGTH,
  memoProblem,
  NATIVE_CHAINS,
  type NativeChain,
  type UtxoChain,
} from "../chains/catalog.ts";
import type { UtxoNetworkName } from "../chains/utxo/network.ts";
import { createBurnConfig, listBurnConfigs, toBurnConfigView, updateBurnConfig } from "../kv/burn_configs.ts";
import { API_ERRORS, memoTooLarge } from "../messages.ts";
import { apiError, badRequest, requiredString, validationError } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";
import { bearerSecurity, errorResponses, jsonBody, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";

const memoField = (maxLength: number) => z.string().max(maxLength).optional();

const BurnConfigBody = z.object({
  destinationChain: requiredString().describe("The native chain redeemed coins are paid on: sol, xrp, sui, doge, zec"),
  destinationAddress: requiredString().describe("Where they are paid, in the chain's address format"),
  memo: memoField(MEMO_MAX_LENGTH).describe("xrp: the destination tag (required, numeric); other chains: optional"),
});

/** `toBurnConfigView` (spec 2.3). */
export const BurnConfigSchema = z.object({
  uAssetTransferAddress: z.string().describe("Send uAssets to this EVM address to redeem them"),
  destinationChain: z.enum(NATIVE_CHAINS),
  destinationAddress: z.string(),
  memo: z.string().nullable(),
}).meta({ id: "BurnWalletConfiguration" });

const burnConfigResponse = (description: string) => jsonResponse(okEnvelope(BurnConfigSchema), description);

const create = createRoute({
  method: "post",
  path: "/wallets",
  tags: [TAGS.burn],
  summary: "Create a burn configuration",
  description: "Where the caller's redeemed coins of one native chain are paid (spec 4.4).",
  security: bearerSecurity,
  request: { body: jsonBody(BurnConfigBody) },
  responses: { 201: burnConfigResponse("The new configuration"), ...errorResponses(400, 401, 403, 500) },
});

const list = createRoute({
  method: "get",
  path: "/wallets",
  tags: [TAGS.burn],
  summary: "List burn configurations",
  description: "The caller's burn configurations (spec 4.5).",
  security: bearerSecurity,
  responses: {
    200: jsonResponse(okEnvelope(z.array(BurnConfigSchema)), "The caller's configurations"),
    ...errorResponses(401, 403, 500),
  },
});

const update = createRoute({
  method: "put",
  path: "/wallets",
  tags: [TAGS.burn],
  summary: "Change a burn configuration",
  description: "Replaces the destination of the caller's configuration for that chain (spec 4.6).",
  security: bearerSecurity,
  request: { body: jsonBody(BurnConfigBody) },
  responses: { 200: burnConfigResponse("The changed configuration"), ...errorResponses(400, 401, 403, 404, 500) },
});

/** The catalog's memo rule of `chain` (spec 2.3); returns the memo to store (null when absent) or throws its error. */
export function checkMemo(chain: NativeChain, memo: string | undefined): string | null {
  const p = memoProblem(chain, memo);
  if (p === null) return memo === undefined || memo === "" ? null : memo;
  switch (p.problem) {
    case "required":
      throw apiError(API_ERRORS.memoRequired);
    case "notNumeric":
      throw apiError(API_ERRORS.memoNotNumeric);
    case "tooLarge":
      throw apiError(memoTooLarge(p.max));
    case "tooLong":
      // A chain whose memo is shorter than the longest any chain takes: the same validation error as the body's.
      throw validationError(z.object({ memo: memoField(p.maxLength) }).safeParse({ memo }).error!);
  }
}

/** The address network of each UTXO chain (the chain plan's); a chain not named is mainnet. */
export type BurnNetworks = Partial<Record<UtxoChain, UtxoNetworkName>>;

function validBurnConfig(
  body: z.infer<typeof BurnConfigBody>,
  enabled: readonly ChainSymbol[],
  networks: BurnNetworks,
) {
  if (!isNativeChain(body.destinationChain) || !enabled.includes(body.destinationChain)) {
    throw apiError(API_ERRORS.unsupportedDestinationChain);
  }
  const chain = body.destinationChain;
  const family = chainFamily(chain);
  const network = family.family === "utxo" ? networks[family.chain] ?? "mainnet" : "mainnet";
  const addressError = destinationAddressError(chain, body.destinationAddress, network);
  if (addressError) throw badRequest(addressError);
  return { chain, address: body.destinationAddress, memo: checkMemo(chain, body.memo) };
}

/**
 * `enabled`: chains this process runs; a disabled one is unsupported here, its configurations stay listed.
 * `networks`: where doge and zec destinations must be (regtest on a devnet node); unset, mainnet.
 */
export function burnRoutes(
  kv: Deno.Kv,
  uAssetTransferAddress: string,
  enabled: readonly ChainSymbol[],
  networks: BurnNetworks = {},
): OpenAPIHono<{ Variables: AuthVariables }> {
  const app = router<{ Variables: AuthVariables }>();

  app.openapi(create, async (c) => {
    const { chain, address, memo } = validBurnConfig(c.req.valid("json"), enabled, networks);
    const created = await createBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!created.ok) throw apiError(API_ERRORS.burnWalletExists);
    return c.json({ success: true as const, data: toBurnConfigView(created.config, uAssetTransferAddress) }, 201);
  });

  app.openapi(list, async (c) => {
    const configs = await listBurnConfigs(kv, c.get("wallet"));
    const data = configs.map((cfg) => toBurnConfigView(cfg, uAssetTransferAddress));
    return c.json({ success: true as const, data }, 200);
  });

  app.openapi(update, async (c) => {
    const { chain, address, memo } = validBurnConfig(c.req.valid("json"), enabled, networks);
    const updated = await updateBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!updated.ok) throw apiError(API_ERRORS.burnConfigNotFound);
    return c.json({ success: true as const, data: toBurnConfigView(updated.config, uAssetTransferAddress) }, 200);
  });

  return app;
}
