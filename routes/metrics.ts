/**
 * `GET /metrics`: the service's Prometheus metrics (actors/metrics.ts, docs/metrics.md) as Prometheus text, for a
 * scraper holding an operator key with scope `metrics` (`Authorization: Bearer op_...`). Not under /admin, so the
 * operator gate is mounted on the route itself.
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import type { Services } from "./services.ts";
import { redactedLog } from "../chains/shared/redact.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import type { MetricsSources } from "../actors/metrics.ts";
import { operatorSecurity, type OperatorVariables, requireOperator, requireScope } from "./admin.ts";
import { errorResponses, router, TAGS } from "./openapi.ts";

const metrics = createRoute({
  method: "get",
  path: "/metrics",
  tags: [TAGS.admin],
  summary: "Prometheus metrics (operator scope `metrics`)",
  description: "Operator scope `metrics`. Prometheus text exposition format 0.0.4: orders by type and status, step " +
    "latencies, watcher lag, RPC errors per endpoint, held records, stuck transactions, payout funds against " +
    "pending payouts, reconciliation mismatches, open alerts (docs/metrics.md). Gauges read from KV are at most a " +
    "few seconds old.",
  security: operatorSecurity,
  responses: {
    200: {
      content: { "text/plain": { schema: z.string().describe("Prometheus text format, version 0.0.4") } },
      description: "The metrics",
    },
    ...errorResponses(401, 403),
  },
});

/** The `/metrics` route, behind an operator key with scope `metrics`. Mount at "/". */
export function metricsRoutes(s: Services) {
  const app = router<{ Variables: OperatorVariables }>();
  app.use(metrics.path, requireOperator(s.kv));
  const sources = metricsSources(s);
  app.openapi(metrics, async (c) => {
    requireScope(c, "metrics");
    const text = await s.metrics.scrape(sources);
    return c.text(text, 200, { "Content-Type": s.metrics.contentType });
  });
  return app;
}

/** What a scrape of `s` reads: its KV, its enabled chains, and its chain adapters where it runs the pipeline. */
export function metricsSources(s: Services): MetricsSources {
  return {
    kv: s.kv,
    enabled: s.pipeline?.settings.enabledChains ?? s.chainPlan.enabled,
    // Tips and hot-wallet balances only where this process runs the chains (PIPELINE=on).
    chains: s.pipeline?.chains ?? null,
    utxoFee: (chain) => s.pipeline?.settings.utxoFee(chain) ?? utxoFee(chain),
    now: () => new Date(),
    log: s.pipeline?.log ?? redactedLog(),
  };
}
