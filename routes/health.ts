/**
 * Probes for a supervisor (Docker, Kubernetes, systemd): `GET /healthz` is liveness (the process answers and reads
 * its KV), `GET /readyz` is readiness (services built, pipeline started, KV reachable, and not shutting down). A
 * process that is shutting down answers 503 on /readyz while its in-flight requests and actor steps finish, so a load
 * balancer stops sending it traffic. `healthcheck` is the same probe from the command line, for the Dockerfile's
 * HEALTHCHECK (the distroless image has no curl).
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import type { ChainMode } from "../config/env.ts";
import { NOT_READY } from "../messages.ts";
import { ErrorEnvelope, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";
import type { Readiness } from "../actors/readiness.ts";

const Health = z.object({ status: z.literal("ok"), chainMode: z.string() });
const Ready = z.object({ status: z.literal("ready"), chainMode: z.string() });

const healthz = createRoute({
  method: "get",
  path: "/healthz",
  tags: [TAGS.health],
  summary: "Liveness: the process answers and reads its KV",
  responses: {
    200: jsonResponse(okEnvelope(Health), "Alive"),
    500: jsonResponse(ErrorEnvelope, "The KV could not be read"),
  },
});

const readyz = createRoute({
  method: "get",
  path: "/readyz",
  tags: [TAGS.health],
  summary: "Readiness: send traffic here (services built, pipeline started, KV reachable, not shutting down)",
  responses: {
    200: jsonResponse(okEnvelope(Ready), "Ready"),
    503: jsonResponse(ErrorEnvelope, "Not ready: starting, shutting down, or the KV is unreachable"),
  },
});

export function healthRoutes(kv: Deno.Kv, chainMode: ChainMode, readiness: Readiness) {
  const app = router();
  app.openapi(healthz, async (c) => {
    await kv.get(["healthz"]);
    return c.json({ success: true as const, data: { status: "ok" as const, chainMode } }, 200);
  });
  app.openapi(readyz, async (c) => {
    const notReady = (message: string) => c.json({ success: false as const, message }, 503);
    if (readiness.state === "starting") return notReady(NOT_READY.starting);
    if (readiness.state === "stopping") return notReady(NOT_READY.shuttingDown);
    try {
      await kv.get(["healthz"]);
    } catch {
      return notReady(NOT_READY.kvUnreachable);
    }
    // Checked again: a shutdown may have begun while the KV was read.
    if (readiness.state !== "ready") return notReady(NOT_READY.shuttingDown);
    return c.json({ success: true as const, data: { status: "ready" as const, chainMode } }, 200);
  });
  return app;
}

/**
 * `issuance healthcheck [path]`: exit 0 when `http://127.0.0.1:$PORT<path>` (default /healthz) answers 200 within 3 s,
 * 1 otherwise. Used by the Dockerfile's HEALTHCHECK, where no curl exists.
 */
export async function healthcheck(args: string[], env: { PORT?: string }): Promise<number> {
  const path = args[0] ?? "/healthz";
  const url = `http://127.0.0.1:${env.PORT || "8000"}${path.startsWith("/") ? path : `/${path}`}`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    await res.body?.cancel();
    if (res.ok) return 0;
    console.error(`healthcheck: ${url} answered ${res.status}`);
  } catch (err) {
    console.error(`healthcheck: ${url}: ${err instanceof Error ? err.message : err}`);
  }
  return 1;
}
