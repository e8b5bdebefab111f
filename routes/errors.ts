/**
 * The error side of the response envelope (spec 2.1, 7): one error type carrying the spec's status and message,
 * one `onError` and one `notFound` that turn everything into `{success:false, message, error?}`.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { API_ERRORS, ISSUE_MESSAGES, type PartnerError } from "../messages.ts";

export interface ValidationIssue {
  path: string[];
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly error?: { issues: ValidationIssue[] },
  ) {
    super(message);
  }
}

/** The ApiError of one of the partner-facing errors in messages.ts. */
export const apiError = (e: PartnerError) => new ApiError(e.status, e.message);
export const badRequest = (message: string) => new ApiError(400, message);

export function validationError(error: z.ZodError): ApiError {
  return new ApiError(API_ERRORS.validationError.status, API_ERRORS.validationError.message, {
    issues: error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
  });
}

/** Parses a JSON body against `schema`; malformed JSON is `Invalid request body`, a mismatch `Validation error`. */
export async function parseBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw apiError(API_ERRORS.invalidRequestBody);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}

/** A string field whose absence reads `Required`, as spec 7 shows. */
export function requiredString() {
  return z.string({ error: (issue) => (issue.input === undefined ? ISSUE_MESSAGES.required : undefined) });
}

export function errorResponse(c: Context, err: ApiError) {
  return c.json(
    err.error ? { success: false, message: err.message, error: err.error } : { success: false, message: err.message },
    err.status,
  );
}

/**
 * The request-body refusals of the OpenAPI routers' validators (routes/openapi.ts): hono's validator throws 400
 * "Malformed JSON in request body" and @hono/zod-openapi's media-type gate 415 for a body that is not JSON. Both are
 * spec 7's `Invalid request body`, as `parseBody` answers.
 */
function isBodyRefusal(err: Error): boolean {
  return err instanceof HTTPException &&
    (err.status === 415 || (err.status === 400 && err.message === "Malformed JSON in request body"));
}

/** Unexpected errors are logged redacted (a library error may quote an RPC URL with its key) and answered 500. */
export function onError(log: Log = redactedLog()) {
  return (err: Error, c: Context) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (isBodyRefusal(err)) return errorResponse(c, apiError(API_ERRORS.invalidRequestBody));
    log(`unhandled error on ${c.req.method} ${c.req.path}`, err);
    return errorResponse(c, apiError(API_ERRORS.internal));
  };
}

export function notFound(c: Context) {
  return errorResponse(c, apiError(API_ERRORS.notFound));
}
