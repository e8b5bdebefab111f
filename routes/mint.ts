/** Deposit addresses (spec 4.2, 4.3). */
import { Hono } from "hono";
import { z } from "zod";
import { type ChainSymbol, isEvmChain, isNativeChain, type NativeChain } from "../chains/catalog.ts";
import { createMintWallet, listMintWallets, toMintWalletView } from "../kv/mint_wallets.ts";
import { API_ERRORS } from "../messages.ts";
import { apiError, parseBody, requiredString } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";

const CreateMintWallet = z.object({ chain: requiredString(), destinationChain: requiredString() });

export function mintRoutes(
  kv: Deno.Kv,
  deriveAddress: (chain: NativeChain, index: number) => string,
  /** Chains this process runs: a disabled one is unsupported here; addresses already issued for it stay listed. */
  enabled: readonly ChainSymbol[],
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/wallets", async (c) => {
    const { chain, destinationChain } = await parseBody(c, CreateMintWallet);
    if (!isNativeChain(chain) || !enabled.includes(chain)) throw apiError(API_ERRORS.unsupportedSourceChain);
    if (!isEvmChain(destinationChain) || !enabled.includes(destinationChain)) {
      throw apiError(API_ERRORS.unsupportedDestinationChain);
    }
    const created = await createMintWallet(kv, c.get("wallet"), chain, destinationChain, deriveAddress);
    if (!created.ok) throw apiError(API_ERRORS.mintWalletExists);
    return c.json({ success: true, data: toMintWalletView(created.wallet) }, 201);
  });

  app.get("/wallets", async (c) => {
    const wallets = await listMintWallets(kv, c.get("wallet"));
    return c.json({ success: true, data: wallets.map(toMintWalletView) });
  });

  return app;
}
