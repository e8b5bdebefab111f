/** Public chain and token configuration (spec 4.8, 4.9), straight from the catalog. */
import { Hono } from "hono";
import { burnConfigView, mintConfigView } from "../chains/catalog.ts";

export function configRoutes(): Hono {
  const app = new Hono();
  // Built once: the catalog is constant for the life of the process.
  const mint = JSON.stringify({ success: true, data: mintConfigView() });
  const burn = JSON.stringify({ success: true, data: burnConfigView() });
  const json = { "Content-Type": "application/json", "Cache-Control": "public, max-age=3600" };
  app.get("/mint", (c) => c.body(mint, 200, json));
  app.get("/burn", (c) => c.body(burn, 200, json));
  return app;
}
