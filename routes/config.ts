/** Public chain and token configuration (spec 4.8, 4.9), straight from the catalog. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { burnConfigView, type ChainSymbol, EVM_CHAINS, mintConfigView, NATIVE_CHAINS } from "../chains/catalog.ts";
import { jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";

/** The catalog's views (chains/catalog.ts, spec 2.5, 2.6). */
const TokenSchema = z.object({ name: z.string(), symbol: z.string(), decimals: z.number().int() });
const NativeChainSchema = z.object({
  name: z.string(),
  symbol: z.enum(NATIVE_CHAINS),
  type: z.literal("main"),
  tokens: z.array(TokenSchema),
});
const EvmChainSchema = z.object({
  name: z.string(),
  symbol: z.enum(EVM_CHAINS),
  type: z.literal("main"),
  chainId: z.number().int(),
  vm: z.literal("EVM"),
  tokens: z.array(TokenSchema).describe("The uAssets on this chain"),
});

export const MintConfigSchema = z.object({
  sourceChains: z.array(NativeChainSchema),
  destinationChains: z.array(EvmChainSchema),
  supportedTokens: z.array(TokenSchema),
}).meta({ id: "MintConfiguration" });

export const BurnConfigViewSchema = z.object({
  sourceChains: z.array(EvmChainSchema),
  destinationChains: z.array(NativeChainSchema),
  supportedTokens: z.array(TokenSchema.extend({
    minimumBurnAmount: z.string().regex(/^(0|[1-9][0-9]*)$/).describe("In the uAsset's smallest unit (wei)"),
  })),
}).meta({ id: "BurnConfiguration" });

const mintRoute = createRoute({
  method: "get",
  path: "/mint",
  tags: [TAGS.config],
  summary: "Mint configuration",
  description: "Native chains deposits are taken on, EVM chains uAssets are minted on, and their tokens (spec 4.8).",
  responses: { 200: jsonResponse(okEnvelope(MintConfigSchema), "The mint configuration") },
});

const burnRoute = createRoute({
  method: "get",
  path: "/burn",
  tags: [TAGS.config],
  summary: "Burn configuration",
  description: "EVM chains uAssets are redeemed from, native chains they are paid on, minimum amounts (spec 4.9).",
  responses: { 200: jsonResponse(okEnvelope(BurnConfigViewSchema), "The burn configuration") },
});

/** `enabled`: the chains this process runs; a disabled chain is absent from both views. */
export function configRoutes(enabled: readonly ChainSymbol[]): OpenAPIHono {
  const app = router();
  // Built once: the catalog and the enabled chains are constant for the life of the process.
  const mint = JSON.stringify({ success: true, data: mintConfigView(enabled) });
  const burn = JSON.stringify({ success: true, data: burnConfigView(enabled) });
  const json = { "Content-Type": "application/json", "Cache-Control": "public, max-age=3600" };
  // The serialized views are served as they are; `as never` tells the typed handler that this body is the documented
  // 200 (tests/support/server.ts validates every response against /openapi.json).
  app.openapi(mintRoute, (c) => c.body(mint, 200, json) as never);
  app.openapi(burnRoute, (c) => c.body(burn, 200, json) as never);
  return app;
}
