/**
 * Errors the client throws. An answer of the service that is not a success becomes an `ApiError` carrying the spec's
 * exact `message` (spec 5 and 7), typed as the known messages (messages.generated.ts) so partner code can `switch` on
 * them; anything the service may add later still arrives, as a plain string.
 */
import type { ApiErrorMessage } from "./messages.generated.ts";

export interface ValidationIssue {
  path: string[];
  message: string;
}

// Plain fields, no constructor parameter properties: Node runs this file by erasing types only (no transform).
export class ApiError extends Error {
  override readonly name = "ApiError";
  /** The HTTP status (spec 7). */
  readonly status: number;
  /** The envelope's `message`: one of `API_ERROR_MESSAGES`, or a message this client version does not know. */
  declare readonly message: ApiErrorMessage | (string & Record<never, never>);
  /** `error.issues` of a `Validation error` (one per invalid field), else empty. */
  readonly issues: ValidationIssue[];
  /** The operation, as `METHOD /path` (no query, no credentials). */
  readonly operation: string;

  constructor(
    status: number,
    message: string,
    issues: ValidationIssue[] = [],
    operation = "",
  ) {
    super(message);
    this.status = status;
    this.issues = issues;
    this.operation = operation;
  }
}

/** The service could not be reached (or kept failing with 5xx) after the client's bounded retries. */
export class TransportError extends Error {
  override readonly name = "TransportError";
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** Builds the ApiError of an error response's body (the envelope `{success:false, message, error?}`). */
export function apiErrorOf(
  status: number,
  body: unknown,
  operation: string,
): ApiError {
  const b = body as { message?: unknown; error?: { issues?: unknown } } | null;
  const message = typeof b?.message === "string" ? b.message : `HTTP ${status}`;
  const issues = Array.isArray(b?.error?.issues) ? b.error.issues as ValidationIssue[] : [];
  return new ApiError(status, message, issues, operation);
}
