/**
 * The one request-body size limit (docs/partners.md "Decisions where the spec is silent"): every POST and PUT body
 * above `MAX_BODY_BYTES` is refused with 413 before any route reads it, so no caller, authenticated or not, can make
 * the service buffer, hash or store a large body. The largest body a route takes (a webhook URL and description) is far
 * smaller. `documentBodyLimit` adds the answer to every POST and PUT of the generated document.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { API_ERRORS } from "../messages.ts";
import { apiError, errorResponse } from "./errors.ts";
import { ERROR_ENVELOPE_REF } from "./openapi.ts";

export const MAX_BODY_BYTES = 64 * 1024;

export function limitBodies(): MiddlewareHandler {
  return bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c: Context) => errorResponse(c, apiError(API_ERRORS.bodyTooLarge)),
  });
}

/** Adds the 413 answer to every POST and PUT operation of a generated OpenAPI document. */
export function documentBodyLimit<D extends { paths?: Record<string, unknown> }>(doc: D): D {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of ["post", "put"]) {
      // deno-lint-ignore no-explicit-any
      const op = (item as Record<string, any>)?.[method];
      if (!op) continue;
      op.responses ??= {};
      op.responses["413"] ??= {
        description: API_ERRORS.bodyTooLarge.message,
        content: { "application/json": { schema: ERROR_ENVELOPE_REF } },
      };
    }
  }
  return doc;
}
