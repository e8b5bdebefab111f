/** Burn configurations (spec 2.3, 4.4-4.6): where a wallet's redeemed coins are paid, per native chain. */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { destinationAddressError } from "../chains/addresses.ts";
import { type ChainSymbol, isNativeChain, type NativeChain } from "../chains/catalog.ts";
import { createBurnConfig, listBurnConfigs, toBurnConfigView, updateBurnConfig } from "../kv/burn_configs.ts";
import { ApiError, badRequest, parseBody, requiredString } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";

const BurnConfigBody = z.object({
  destinationChain: requiredString(),
  destinationAddress: requiredString(),
  memo: z.string().max(256).optional(),
});

const XRP_MEMO_MAX = 4294967295n;

/** Spec 2.3 memo rules; returns the memo to store (null when absent) or throws the spec's message. */
export function checkMemo(chain: NativeChain, memo: string | undefined): string | null {
  if (chain !== "xrp") return memo === undefined || memo === "" ? null : memo;
  if (memo === undefined || memo === "") throw badRequest("Memo is required for XRP and TXRP chains");
  if (!/^\d+$/.test(memo)) throw badRequest("Memo must be numeric for XRP and TXRP chains");
  if (memo.length > 10 || BigInt(memo) > XRP_MEMO_MAX) {
    throw badRequest("Memo must not exceed maximum value (4294967295)");
  }
  return memo;
}

async function validBurnConfig(c: Context, enabled: readonly ChainSymbol[]) {
  const body = await parseBody(c, BurnConfigBody);
  if (!isNativeChain(body.destinationChain) || !enabled.includes(body.destinationChain)) {
    throw badRequest("Unsupported destination chain");
  }
  const chain = body.destinationChain;
  const addressError = destinationAddressError(chain, body.destinationAddress);
  if (addressError) throw badRequest(addressError);
  return { chain, address: body.destinationAddress, memo: checkMemo(chain, body.memo) };
}

/** `enabled`: chains this process runs; a disabled one is unsupported here, its configurations stay listed. */
export function burnRoutes(
  kv: Deno.Kv,
  uAssetTransferAddress: string,
  enabled: readonly ChainSymbol[],
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/wallets", async (c) => {
    const { chain, address, memo } = await validBurnConfig(c, enabled);
    const created = await createBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!created.ok) throw badRequest("Wallet already exists for this chain");
    return c.json({ success: true, data: toBurnConfigView(created.config, uAssetTransferAddress) }, 201);
  });

  app.get("/wallets", async (c) => {
    const configs = await listBurnConfigs(kv, c.get("wallet"));
    return c.json({ success: true, data: configs.map((cfg) => toBurnConfigView(cfg, uAssetTransferAddress)) });
  });

  app.put("/wallets", async (c) => {
    const { chain, address, memo } = await validBurnConfig(c, enabled);
    const updated = await updateBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!updated.ok) throw new ApiError(404, "Burn configuration not found for this chain");
    return c.json({ success: true, data: toBurnConfigView(updated.config, uAssetTransferAddress) }, 200);
  });

  return app;
}
