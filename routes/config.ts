/** Public chain and token configuration (spec 4.8, 4.9), straight from the catalog. */
import { Hono } from "hono";
import { burnConfigView, type ChainSymbol, mintConfigView } from "../chains/catalog.ts";

/** `enabled`: the chains this process runs; a disabled chain is absent from both views. */
export function configRoutes(enabled: readonly ChainSymbol[]): Hono {
  const app = new Hono();
  // Built once: the catalog and the enabled chains are constant for the life of the process.
  const mint = JSON.stringify({ success: true, data: mintConfigView(enabled) });
  const burn = JSON.stringify({ success: true, data: burnConfigView(enabled) });
  const json = { "Content-Type": "application/json", "Cache-Control": "public, max-age=3600" };
  app.get("/mint", (c) => c.body(mint, 200, json));
  app.get("/burn", (c) => c.body(burn, 200, json));
  return app;
}
