/** Burn configurations (spec 2.3, 4.4-4.6): where a wallet's redeemed coins are paid, per native chain. */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { destinationAddressError } from "../chains/addresses.ts";
import {
  type ChainSymbol,
  isNativeChain,
  isUtxoChain,
  MEMO_MAX_LENGTH,
  memoProblem,
  type NativeChain,
  type UtxoChain,
} from "../chains/catalog.ts";
import type { UtxoNetworkName } from "../chains/utxo/network.ts";
import { createBurnConfig, listBurnConfigs, toBurnConfigView, updateBurnConfig } from "../kv/burn_configs.ts";
import { API_ERRORS, memoTooLarge } from "../messages.ts";
import { apiError, badRequest, parseBody, requiredString, validationError } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";

const memoField = (maxLength: number) => z.string().max(maxLength).optional();

const BurnConfigBody = z.object({
  destinationChain: requiredString(),
  destinationAddress: requiredString(),
  memo: memoField(MEMO_MAX_LENGTH),
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

async function validBurnConfig(c: Context, enabled: readonly ChainSymbol[], networks: BurnNetworks) {
  const body = await parseBody(c, BurnConfigBody);
  if (!isNativeChain(body.destinationChain) || !enabled.includes(body.destinationChain)) {
    throw apiError(API_ERRORS.unsupportedDestinationChain);
  }
  const chain = body.destinationChain;
  const network = isUtxoChain(chain) ? networks[chain] ?? "mainnet" : "mainnet";
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
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/wallets", async (c) => {
    const { chain, address, memo } = await validBurnConfig(c, enabled, networks);
    const created = await createBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!created.ok) throw apiError(API_ERRORS.burnWalletExists);
    return c.json({ success: true, data: toBurnConfigView(created.config, uAssetTransferAddress) }, 201);
  });

  app.get("/wallets", async (c) => {
    const configs = await listBurnConfigs(kv, c.get("wallet"));
    return c.json({ success: true, data: configs.map((cfg) => toBurnConfigView(cfg, uAssetTransferAddress)) });
  });

  app.put("/wallets", async (c) => {
    const { chain, address, memo } = await validBurnConfig(c, enabled, networks);
    const updated = await updateBurnConfig(kv, c.get("wallet"), chain, address, memo);
    if (!updated.ok) throw apiError(API_ERRORS.burnConfigNotFound);
    return c.json({ success: true, data: toBurnConfigView(updated.config, uAssetTransferAddress) }, 200);
  });

  return app;
}
