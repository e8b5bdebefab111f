/**
 * Webhook endpoints and their delivery logs (docs/webhooks.md). Mounted under `/webhooks` behind the JWT
 * gate: every endpoint belongs to the token's wallet, and another wallet's endpoint or delivery answers 404 like an
 * unknown one.
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { type ChainMode, DEFAULT_PARTNER_LIMITS } from "../config/env.ts";
import {
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  MAX_ENDPOINTS_PER_WALLET,
  replayDelivery,
  rotateSecret,
  toDeliveryView,
  toEndpointView,
} from "../kv/webhooks.ts";
import {
  API_ERRORS,
  ISSUE_MESSAGES,
  type PartnerError,
  partnerWebhookEndpointLimit,
  webhookEndpointLimit,
} from "../messages.ts";
import { apiError, requiredString } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";
import { bearerSecurity, errorResponses, jsonBody, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";

const MAX_URL_LENGTH = 2048;

const RegisterBody = z.object({
  url: requiredString().max(MAX_URL_LENGTH).describe("https URL the events are POSTed to"),
  description: z.string().max(200).optional().describe("A label for the partner's own use"),
});

const EndpointView = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  createdAt: z.iso.datetime(),
  previousSecretExpiresAt: z.iso.datetime().nullable()
    .describe("While a rotated-out secret still signs (a second v1= in Webhook-Signature), until when"),
});
const EndpointWithSecret = EndpointView.extend({
  secret: z.string().describe("whsec_...: shown only in this response; the HMAC-SHA256 key"),
});
const AttemptView = z.object({
  at: z.iso.datetime(),
  status: z.number().int().nullable().describe("The HTTP status answered; null when no answer came"),
  error: z.string().nullable(),
  latencyMs: z.number().int(),
});
const DeliveryView = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  orderId: z.string(),
  replayOf: z.string().nullable(),
  state: z.enum(["pending", "delivered", "failed"]),
  attemptCount: z.number().int(),
  attempts: z.array(AttemptView),
  nextAttemptAt: z.iso.datetime().nullable()
    .describe("Pending deliveries: when the next attempt may start; null while it waits for an earlier event"),
  createdAt: z.iso.datetime(),
  finishedAt: z.iso.datetime().nullable(),
});

const IdParams = z.object({ id: z.string() });
const DeliveryParams = z.object({ id: z.string(), deliveryId: z.string() });
const DeliveriesQuery = z.object({
  limit: z.string().regex(/^\d{1,3}$/, ISSUE_MESSAGES.nonNegativeInteger).optional()
    .transform((v) => (v === undefined ? 50 : Number(v)))
    .pipe(z.number().int().min(1).max(100)),
});

const tags = [TAGS.webhooks];

const registerRoute = createRoute({
  method: "post",
  path: "/endpoints",
  tags,
  summary: "Register a webhook endpoint (the signing secret is shown once)",
  security: bearerSecurity,
  request: { body: jsonBody(RegisterBody) },
  responses: {
    201: jsonResponse(okEnvelope(EndpointWithSecret), "Registered"),
    ...errorResponses(400, 401, 403),
  },
});
const listRoute = createRoute({
  method: "get",
  path: "/endpoints",
  tags,
  summary: "The wallet's webhook endpoints (no secrets)",
  security: bearerSecurity,
  responses: {
    200: jsonResponse(okEnvelope(z.object({ endpoints: z.array(EndpointView) })), "Endpoints, oldest first"),
    ...errorResponses(401, 403),
  },
});
const deleteRoute = createRoute({
  method: "delete",
  path: "/endpoints/{id}",
  tags,
  summary: "Delete a webhook endpoint; its pending deliveries end as failed",
  security: bearerSecurity,
  request: { params: IdParams },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), "Deleted"),
    ...errorResponses(401, 403, 404),
  },
});
const rotateRoute = createRoute({
  method: "post",
  path: "/endpoints/{id}/rotate-secret",
  tags,
  summary: "A new signing secret (shown once); the previous one signs beside it for 24 hours",
  security: bearerSecurity,
  request: { params: IdParams },
  responses: {
    200: jsonResponse(okEnvelope(EndpointWithSecret), "Rotated"),
    ...errorResponses(401, 403, 404),
  },
});
const deliveriesRoute = createRoute({
  method: "get",
  path: "/endpoints/{id}/deliveries",
  tags,
  summary: "The endpoint's delivery log, newest first",
  security: bearerSecurity,
  request: { params: IdParams, query: DeliveriesQuery },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ deliveries: z.array(DeliveryView) })), "Deliveries"),
    ...errorResponses(400, 401, 403, 404),
  },
});
const replayRoute = createRoute({
  method: "post",
  path: "/endpoints/{id}/deliveries/{deliveryId}/replay",
  tags,
  summary: "A new delivery of the same event, queued behind the order's unfinished deliveries to this endpoint",
  security: bearerSecurity,
  request: { params: DeliveryParams },
  responses: {
    201: jsonResponse(okEnvelope(DeliveryView), "Queued"),
    ...errorResponses(401, 403, 404),
  },
});

export interface WebhookRouteOptions {
  chainMode: ChainMode;
  /** Endpoints of all a partner's wallets together (config `PARTNER_MAX_WEBHOOK_ENDPOINTS`). */
  maxPerPartner?: number;
  now?: () => Date;
}

export function webhookRoutes(kv: Deno.Kv, opts: WebhookRouteOptions) {
  const app = router<{ Variables: AuthVariables }>();
  const now = opts.now ?? (() => new Date());
  const maxPerPartner = opts.maxPerPartner ?? DEFAULT_PARTNER_LIMITS.webhookEndpointsPerPartner;

  const ownEndpoint = async (wallet: string, id: string) => {
    const endpoint = await getEndpoint(kv, wallet, id);
    if (!endpoint) throw apiError(API_ERRORS.webhookEndpointNotFound);
    return endpoint;
  };

  app.openapi(registerRoute, async (c) => {
    const { url, description } = c.req.valid("json");
    const refused = checkWebhookUrl(url, opts.chainMode);
    if (refused) throw apiError(refused);
    const partner = { id: c.get("partnerId"), max: maxPerPartner };
    const created = await createEndpoint(
      kv,
      c.get("wallet"),
      partner,
      { url, description: description ?? null },
      now(),
    );
    if (!created.ok) {
      throw apiError(
        created.limit === "wallet"
          ? webhookEndpointLimit(MAX_ENDPOINTS_PER_WALLET)
          : partnerWebhookEndpointLimit(maxPerPartner),
      );
    }
    const endpoint = created.endpoint;
    return c.json({ success: true as const, data: { ...toEndpointView(endpoint), secret: endpoint.secret } }, 201);
  });

  app.openapi(listRoute, async (c) => {
    const endpoints = await listEndpoints(kv, c.get("wallet"));
    const nowMs = now().getTime();
    return c.json({ success: true as const, data: { endpoints: endpoints.map((e) => toEndpointView(e, nowMs)) } }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid("param");
    if (!await deleteEndpoint(kv, c.get("wallet"), id)) throw apiError(API_ERRORS.webhookEndpointNotFound);
    return c.json({ success: true as const, data: { id, deleted: true as const } }, 200);
  });

  app.openapi(rotateRoute, async (c) => {
    const { id } = c.req.valid("param");
    const endpoint = await rotateSecret(kv, c.get("wallet"), id, now());
    if (!endpoint) throw apiError(API_ERRORS.webhookEndpointNotFound);
    const view = { ...toEndpointView(endpoint, now().getTime()), secret: endpoint.secret };
    return c.json({ success: true as const, data: view }, 200);
  });

  app.openapi(deliveriesRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { limit } = c.req.valid("query");
    const endpoint = await ownEndpoint(c.get("wallet"), id);
    const deliveries = await listDeliveries(kv, endpoint.id, limit);
    return c.json({ success: true as const, data: { deliveries: deliveries.map(toDeliveryView) } }, 200);
  });

  app.openapi(replayRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    const endpoint = await ownEndpoint(c.get("wallet"), id);
    if (!(await getDelivery(kv, endpoint.id, deliveryId)).value) throw apiError(API_ERRORS.webhookDeliveryNotFound);
    const replay = await replayDelivery(kv, endpoint.id, deliveryId, now().getTime());
    if (!replay) throw apiError(API_ERRORS.webhookDeliveryNotFound);
    return c.json({ success: true as const, data: toDeliveryView(replay) }, 201);
  });

  return app;
}

/**
 * The URL rules (docs/webhooks.md): https; plain http only to a loopback host, and only in sim and devnet modes (tests
 * and local development); no credentials; in live mode no `localhost` and no loopback, private or link-local IP
 * literal (SSRF). Returns the refusal, or null when the URL is accepted.
 */
export function checkWebhookUrl(raw: string, mode: ChainMode): PartnerError | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return API_ERRORS.webhookUrlInvalid;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return API_ERRORS.webhookUrlInvalid;
  if (url.username !== "" || url.password !== "") return API_ERRORS.webhookUrlCredentials;
  // A trailing dot is the absolute form of the same name (`localhost.` is loopback): checked without it.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  if (url.protocol === "http:" && (mode === "live" || !isLoopbackHost(host))) return API_ERRORS.webhookUrlNotHttps;
  if (mode === "live" && isInternalHost(host)) return API_ERRORS.webhookUrlPrivateHost;
  return null;
}

function isLoopbackHost(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = ipv4(host) ?? mappedIpv4(host);
  if (v4) return v4[0] === 127;
  return host === "[::1]";
}

/** `localhost`, or an IP literal that is unspecified, loopback, private, shared (CGNAT) or link-local. */
function isInternalHost(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = ipv4(host) ?? mappedIpv4(host);
  if (v4) {
    const [a, b] = v4;
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  if (!host.startsWith("[")) return false;
  const v6 = host.slice(1, -1);
  // fc00::/7 unique local, fe80::/10 link-local and fec0::/10 (deprecated) site-local.
  return v6 === "::" || v6 === "::1" || /^f[cd][0-9a-f]{0,2}:/.test(v6) || /^fe[89a-f][0-9a-f]?:/.test(v6);
}

function ipv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : null;
}

/**
 * The IPv4 address inside an IPv6 literal that carries one: IPv4-mapped `[::ffff:7f00:1]` (how URL writes
 * ::ffff:127.0.0.1), IPv4-compatible `[::7f00:1]`, IPv4-translated `[::ffff:0:7f00:1]` and NAT64 `[64:ff9b::7f00:1]`
 * (a NAT64 gateway forwards it to the IPv4 address).
 */
function mappedIpv4(host: string): number[] | null {
  const m = /^\[(?:::ffff:|::|::ffff:0:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host);
  if (!m) return null;
  const hi = parseInt(m[1], 16);
  const lo = parseInt(m[2], 16);
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
}
