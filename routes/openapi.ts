/**
 * The OpenAPI side of every router (docs/openapi.md): routers are `OpenAPIHono`s whose routes are declared with
 * `createRoute` from the same zod schemas that validate the requests, so `/openapi.json` is generated, never written by
 * hand. A failed validation throws the spec's `Validation error` envelope (routes/errors.ts), like `parseBody` does.
 * Shared response shapes (the envelope, the error statuses) and the security schemes live here, once.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Env } from "hono";
import { z } from "zod";
import { API_ERRORS } from "../messages.ts";
import { apiError, validationError } from "./errors.ts";

/** `application/json` or `application/<x>+json`, with parameters (the JSON media types hono's validator reads). */
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json(\s*;.*)?$/i;

/**
 * A router whose request validation failures become the spec's `Validation error` (400) envelope.
 *
 * JSON bodies (spec 4: "Content-Type: application/json where a body is sent"): a body under another media type, or
 * without `Content-Type`, is 400 `Invalid request body` like malformed JSON (the 415 of @hono/zod-openapi's media-type
 * gate and hono's "Malformed JSON" 400 are mapped in routes/errors.ts `onError`). The hook below covers the case the
 * gate lets through, an empty body without `Content-Type`, which hono's validator would read as `{}`: before the
 * OpenAPI routers that was `Invalid request body` too (docs/partners.md "Decisions where the spec is silent").
 */
export function router<E extends Env = Env>(): OpenAPIHono<E> {
  return new OpenAPIHono<E>({
    defaultHook: (result, c: Context) => {
      if (result.target === "json" && !JSON_MEDIA_TYPE.test(c.req.header("Content-Type") ?? "")) {
        throw apiError(API_ERRORS.invalidRequestBody);
      }
      if (!result.success) throw validationError(result.error as z.ZodError);
    },
  });
}

/** Security scheme names, registered once on the app's document by `registerSecuritySchemes`. */
export const BEARER_AUTH = "bearerAuth";
export const API_KEY_AUTH = "apiKeyAuth";
export const OPERATOR_AUTH = "operatorAuth";

/** Registers the two security schemes (spec 5) on the app whose document is served. */
export function registerSecuritySchemes(app: OpenAPIHono<Env>) {
  app.openAPIRegistry.registerComponent("securitySchemes", BEARER_AUTH, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An access token from POST /auth/token (RS256, bound to one EVM wallet; spec 5)",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", API_KEY_AUTH, {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "A partner API key `<keyId>.<secret>`, issued by an operator (spec 5)",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", OPERATOR_AUTH, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "op_<keyId>.<secret>",
    description:
      'An operator key (never a partner\'s), created by `deno task admin operator-key create` (docs/operations.md "Operator control")',
  });
}

/** The document's tags, in the order the reference lists them; routes name one each. */
export const TAGS = {
  auth: "Authentication",
  mint: "Mint",
  burn: "Burn",
  orders: "Orders",
  config: "Configuration",
  health: "Health",
  webhooks: "Webhooks",
  sim: "Simulator",
  reference: "Reference",
  admin: "Admin",
} as const;

export const TAG_DESCRIPTIONS: Record<string, string> = {
  [TAGS.auth]: "API keys for access tokens (spec 4.1, 5)",
  [TAGS.mint]: "Deposit addresses: native coins in, uAssets out (spec 4.2, 4.3)",
  [TAGS.burn]: "Where redeemed coins are paid (spec 4.4-4.6)",
  [TAGS.orders]: "Mint and burn orders (spec 4.7)",
  [TAGS.config]: "Supported chains and tokens (spec 4.8, 4.9)",
  [TAGS.health]: "Liveness and readiness for supervisors",
  [TAGS.webhooks]: "Signed order events pushed to the partner's HTTPS endpoints (docs/webhooks.md)",
  [TAGS.sim]: "Sim and devnet modes only: drive the simulated chains (never served in live mode)",
  [TAGS.reference]: "This document and its rendered reference page",
  [TAGS.admin]:
    'Operators only, with an operator key: reports, controls and held records (docs/operations.md "Operator control")',
};
/** `security` of a route behind the JWT gate. */
export const bearerSecurity = [{ [BEARER_AUTH]: [] }];
/** `security` of a route that takes `X-API-Key`. */
export const apiKeySecurity = [{ [API_KEY_AUTH]: [] }];

/** Spec 2.1: `{success: true, data}`. */
export function okEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

/** Spec 2.1 and 7: `{success: false, message, error?: {issues}}`. */
export const ErrorEnvelope = z.object({
  success: z.literal(false),
  message: z.string(),
  error: z.object({
    issues: z.array(z.object({ path: z.array(z.string()), message: z.string() })),
  }).optional().describe("Present on `Validation error`: one issue per invalid field"),
}).meta({ id: "ErrorEnvelope" });

/** The error envelope's component in the generated document, for answers added to it after generation. */
export const ERROR_ENVELOPE_REF = { $ref: "#/components/schemas/ErrorEnvelope" } as const;

/** A JSON response object of `createRoute`'s `responses`. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

/** A JSON request body of `createRoute`'s `request`, required. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { content: { "application/json": { schema } }, required: true, description };
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: the envelope's message says why (spec 7)",
  401: "Missing or unreadable credentials (spec 5)",
  403: "Credentials refused (spec 5)",
  404: "Not found",
  409: "Conflict",
  422: "Idempotency-Key reused with a different request",
  429: "A limit was reached: the envelope's message names it (docs/partners.md, decisions where the spec is silent)",
  500: "Internal error",
  503: "A chain cannot be asked now: the message says which and why; nothing was changed",
};

/** The error responses of a route, each the error envelope: `...errorResponses(400, 401, 403)`. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((s) => [s, jsonResponse(ErrorEnvelope, ERROR_DESCRIPTIONS[s] ?? "Error")]),
  ) as Record<S, ReturnType<typeof jsonResponse<typeof ErrorEnvelope>>>;
}
