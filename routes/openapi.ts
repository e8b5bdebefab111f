/**
 * The OpenAPI side of every router (issue 12): routers are `OpenAPIHono`s whose routes are declared with
 * `createRoute` from the same zod schemas that validate the requests, so `/openapi.json` is generated, never written by
 * hand. A failed validation throws the spec's `Validation error` envelope (routes/errors.ts), like `parseBody` does.
 * Shared response shapes (the envelope, the error statuses) and the security schemes live here, once.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Env } from "hono";
import { z } from "zod";
import { validationError } from "./errors.ts";

/** A router whose request validation failures become the spec's `Validation error` (400) envelope. */
export function router<E extends Env = Env>(): OpenAPIHono<E> {
  return new OpenAPIHono<E>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error as z.ZodError);
    },
  });
}

/** Security scheme names, registered on the document by the app (see `openApiDocument` users). */
export const BEARER_AUTH = "bearerAuth";
export const API_KEY_AUTH = "apiKeyAuth";
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
  }).optional(),
});

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
  500: "Internal error",
};

/** The error responses of a route, each the error envelope: `...errorResponses(400, 401, 403)`. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((s) => [s, jsonResponse(ErrorEnvelope, ERROR_DESCRIPTIONS[s] ?? "Error")]),
  ) as Record<S, ReturnType<typeof jsonResponse<typeof ErrorEnvelope>>>;
}
