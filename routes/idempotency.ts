/**
 * The `Idempotency-Key` header on every POST (docs/idempotency.md), one middleware mounted once by the app after the
 * credential gates and before the routes, so every POST route, present or future, gets it without knowing of it.
 * It reads the raw body through Hono's body cache, so the route still reads (and validates) it as usual.
 *
 * Scope of a key: the JWT's wallet, else the verified API key's id (token endpoints), else, for a request no gate
 * verified, a hash of the credentials it presented (none: the path; the /sim routes). Partners never share a scope.
 */
import type { Context, MiddlewareHandler } from "hono";
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "@scure/base";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
  requestFingerprint,
  seal,
  sealKeyFrom,
  unseal,
} from "../kv/idempotency.ts";
import type { ApiKeyRecord } from "../kv/api_keys.ts";
import { API_ERRORS } from "../messages.ts";
import { apiError } from "./errors.ts";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { ERROR_ENVELOPE_REF } from "./openapi.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** 1 to 255 printable ASCII characters (space to tilde). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** Deno KV values are at most 64 KiB; a larger response is not kept (the key is released instead). */
const MAX_STORED_BODY = 60 * 1024;

interface CredentialVariables {
  wallet?: string;
  apiKey?: ApiKeyRecord;
  /** An operator key the admin gate verified (routes/admin.ts). */
  operator?: { keyId: string };
}

const digest = (s: string) => hex.encode(sha256(new TextEncoder().encode(s)));

function scopeOf(c: Context<{ Variables: CredentialVariables }>): string {
  const wallet = c.get("wallet");
  if (wallet) return `wallet:${wallet}`;
  const apiKey = c.get("apiKey");
  if (apiKey) return `key:${apiKey.keyId}`;
  const operator = c.get("operator");
  if (operator) return `operator:${operator.keyId}`;
  // No gate verified this request (yet): only the very same credentials can meet its key again.
  const presented = [c.req.header("Authorization"), c.req.header("X-API-Key")];
  if (presented.some((h) => h !== undefined)) return `unverified:${digest(JSON.stringify(presented))}`;
  return `path:${c.req.path}`;
}

/** The token of `Authorization: Bearer <token>`, as the operator gate read it (routes/admin.ts). */
const bearerOf = (header: string | undefined) => /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1] ?? "";

/** Which responses are kept: everything but 5xx, so a request that failed on our side can be retried with its key. */
export const isStored = (status: number) => status < 500;

export interface IdempotencyOptions {
  /**
   * Which paths take keys from requests no gate verified (app.ts: the mounted /sim routes). Elsewhere such a request
   * (an unknown path) runs as if it had no key: anyone could otherwise make the service read any body and keep a
   * record per key for 24 hours, unauthenticated. Default: every path.
   */
  unverified?: (path: string) => boolean;
}

export function idempotency(
  kv: Deno.Kv,
  log: Log = redactedLog(),
  opts: IdempotencyOptions = {},
): MiddlewareHandler {
  const unverified = opts.unverified ?? (() => true);
  return async (c: Context<{ Variables: CredentialVariables }>, next) => {
    if (c.req.method !== "POST") return await next();
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) return await next();
    if (!c.get("wallet") && !c.get("apiKey") && !c.get("operator") && !unverified(c.req.path)) return await next();
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw apiError(API_ERRORS.idempotencyKeyMalformed);

    const scope = scopeOf(c);
    // A verified API key seals the stored response (a JWT) with a key derived from its secret, never stored; a
    // verified operator key likewise (an admin answer may hold a secret: the partner key `api-key create` returns).
    const sealWith = c.get("apiKey")
      ? await sealKeyFrom(c.req.header("X-API-Key")!)
      : c.get("operator")
      ? await sealKeyFrom(bearerOf(c.req.header("Authorization")))
      : null;
    const body = new Uint8Array(await c.req.arrayBuffer());
    const fingerprint = requestFingerprint(c.req.method, c.req.path, body);
    const claim = await claimIdempotencyKey(kv, scope, key, fingerprint);
    if (claim.kind === "mismatch") throw apiError(API_ERRORS.idempotencyKeyReused);
    if (claim.kind === "in_flight") throw apiError(API_ERRORS.idempotencyKeyInFlight);
    if (claim.kind === "replay") {
      const { record } = claim;
      const plain = record.sealed ? (sealWith ? await unseal(sealWith, record.body) : null) : record.body;
      // Unreadable only if the same key id came with another secret, which the gate refuses first.
      if (plain === null) throw apiError(API_ERRORS.idempotencyKeyReused);
      const headers = new Headers({ [REPLAYED_HEADER]: "true" });
      if (record.contentType) headers.set("Content-Type", record.contentType);
      return c.body(plain as Uint8Array<ArrayBuffer>, record.status as 200, Object.fromEntries(headers));
    }

    const { lockId } = claim;
    let kept = false;
    try {
      await next();
      const res = c.res;
      if (isStored(res.status)) {
        const out = new Uint8Array(await res.clone().arrayBuffer());
        if (out.length <= MAX_STORED_BODY) {
          try {
            kept = await completeIdempotencyKey(kv, scope, key, lockId, {
              fingerprint,
              status: res.status,
              contentType: res.headers.get("Content-Type"),
              body: sealWith ? await seal(sealWith, out) : out,
              sealed: sealWith !== null,
            });
          } catch (err) {
            // The request took effect: answer it. Only the replay is lost (the key is released below).
            log("storing an Idempotency-Key response", err);
          }
        }
      }
    } finally {
      if (!kept) {
        await releaseIdempotencyKey(kv, scope, key, lockId).catch((err) => log("releasing an Idempotency-Key", err));
      }
    }
  };
}

/** The header as an OpenAPI 3.1 parameter object. */
export const IDEMPOTENCY_OPENAPI_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: "header",
  required: false,
  description: "Optional. The same key and request within 24 hours returns the first response (status below 500) " +
    `with \`${REPLAYED_HEADER}: true\`; see docs/idempotency.md. Scoped to the caller's credential.`,
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]{1,255}$" },
} as const;

/**
 * Adds what the middleware does to every POST operation of a generated OpenAPI document, since routes do not declare
 * it (new POST routes get it as they get the middleware): the header parameter and the 409 and 422 answers.
 */
export function documentIdempotency<D extends { paths?: Record<string, unknown> }>(doc: D): D {
  for (const item of Object.values(doc.paths ?? {})) {
    // deno-lint-ignore no-explicit-any
    const op = (item as Record<string, any>)?.post;
    if (!op) continue;
    // deno-lint-ignore no-explicit-any
    const others = (op.parameters ?? []).filter((p: any) => p?.name?.toLowerCase() !== "idempotency-key");
    op.parameters = [...others, IDEMPOTENCY_OPENAPI_PARAMETER];
    op.responses ??= {};
    const answers: [string, string][] = [
      ["409", API_ERRORS.idempotencyKeyInFlight.message],
      ["422", API_ERRORS.idempotencyKeyReused.message],
    ];
    for (const [status, message] of answers) {
      op.responses[status] ??= {
        description: message,
        content: { "application/json": { schema: ERROR_ENVELOPE_REF } },
      };
    }
  }
  return doc;
}
