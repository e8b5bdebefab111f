/**
 * The admin API (docs/admin-api.md): every operator operation (actors/ops/) with an `http` route, served under `/admin`
 * from the operation's own schemas, behind operator credentials (`Authorization: Bearer <operator key>`,
 * kv/operator_keys.ts) that are never partner keys. Each route requires its operation's scope. The CLI runs the
 * same operations (cli/ops_cli.ts); nothing here decides anything an operation does not.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { Services } from "./services.ts";
import { OPS } from "../actors/ops/index.ts";
import { type AnyOp, type OpContext, OpError, pathParams } from "../actors/ops/op.ts";
import { chainsFromConfig, settingsOf } from "../actors/ops/context.ts";
import { operatorActor, type OperatorKeyRecord, type OperatorScope, verifyOperatorKey } from "../kv/operator_keys.ts";
import { OPERATOR_ERRORS, operatorScopeMissing } from "../messages.ts";
import { ApiError, validationError } from "./errors.ts";
import { errorResponses, jsonResponse, okEnvelope, OPERATOR_AUTH, router, TAGS } from "./openapi.ts";

export interface OperatorVariables {
  operator?: OperatorKeyRecord;
}

/** `security` of a route behind the operator gate. */
export const operatorSecurity = [{ [OPERATOR_AUTH]: [] }];

/**
 * The operator gate: a valid, unrevoked, unexpired operator key in `Authorization: Bearer`, or 401/403 with the
 * envelope. It only authenticates; each route checks its scope (`requireScope`).
 */
export function requireOperator(kv: Deno.Kv): MiddlewareHandler<{ Variables: OperatorVariables }> {
  return async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("Authorization") ?? "");
    if (!match) {
      throw new ApiError(OPERATOR_ERRORS.missingCredentials.status, OPERATOR_ERRORS.missingCredentials.message);
    }
    const check = await verifyOperatorKey(kv, match[1]);
    if (!check.ok) {
      const e = check.reason === "malformed" ? OPERATOR_ERRORS.missingCredentials : OPERATOR_ERRORS.invalidKey;
      throw new ApiError(e.status, e.message);
    }
    c.set("operator", check.key);
    await next();
  };
}

/** The verified operator key of this request, holding `scope`, or 403. */
export function requireScope(c: Context<{ Variables: OperatorVariables }>, scope: OperatorScope): OperatorKeyRecord {
  const key = c.get("operator");
  if (!key) throw new ApiError(OPERATOR_ERRORS.missingCredentials.status, OPERATOR_ERRORS.missingCredentials.message);
  if (!key.scopes.includes(scope)) {
    const e = operatorScopeMissing(scope);
    throw new ApiError(e.status, e.message);
  }
  return key;
}

/** The server's context for an operation run by `key`: its own chains and settings, built on first use otherwise. */
export function serverOpContext(s: Services, by: string): OpContext {
  let chains: ReturnType<OpContext["chains"]> | undefined;
  return {
    kv: s.kv,
    config: s.config,
    by,
    via: "api",
    now: () => new Date(),
    chains: () => chains ??= s.pipeline ? Promise.resolve(s.pipeline.chains) : chainsFromConfig(s.kv, s.config),
    settings: () => s.pipeline?.settings ?? settingsOf(s.config),
    transferAddress: () => Promise.resolve(s.uAssetTransferAddress),
    signingKid: () => Promise.resolve(s.tokens?.keys.publicJwk.kid ?? null),
  };
}

/** Runs `op` for a request: the input from path, query or JSON body, checked by the operation's schema. */
export async function runOpForRequest(
  s: Services,
  c: Context<{ Variables: OperatorVariables }>,
  op: AnyOp,
): Promise<unknown> {
  const key = requireScope(c, op.scope);
  const raw: Record<string, unknown> = op.http!.method === "get" ? { ...c.req.query() } : await bodyOf(c);
  for (const name of pathParams(op)) raw[name] = c.req.param(name);
  const parsed = (op.input as z.ZodType).safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error);
  try {
    return await op.run(serverOpContext(s, operatorActor(key)), parsed.data);
  } catch (e) {
    if (e instanceof OpError) throw new ApiError(e.status, e.message);
    throw e;
  }
}

async function bodyOf(c: Context): Promise<Record<string, unknown>> {
  // The route's validator has read and checked the JSON already (hono keeps the parsed body); no body is `{}`.
  if (!c.req.header("Content-Type")) return {};
  const body = await c.req.json().catch(() => ({}));
  return body && typeof body === "object" && !Array.isArray(body) ? { ...body } : {};
}

function routeOf(op: AnyOp) {
  const http = op.http!;
  const params = pathParams(op);
  const shape = op.input.shape as Record<string, z.ZodType>;
  const rest = Object.fromEntries(Object.entries(shape).filter(([k]) => !params.includes(k)));
  const paramSchema = params.length ? z.object(Object.fromEntries(params.map((p) => [p, shape[p]]))) : undefined;
  const restSchema = z.object(rest);
  const hasRest = Object.keys(rest).length > 0;
  const allOptional = restSchema.safeParse({}).success;
  return createRoute({
    method: http.method,
    path: http.path,
    tags: [TAGS.admin],
    summary: op.summary,
    description: `Operator scope \`${op.scope}\`. The same operation as \`deno task admin ${op.name}\`.`,
    security: operatorSecurity,
    request: {
      ...(paramSchema ? { params: paramSchema } : {}),
      ...(http.method === "get" && hasRest ? { query: restSchema } : {}),
      ...(http.method === "post" && hasRest
        ? { body: { content: { "application/json": { schema: restSchema } }, required: !allOptional } }
        : {}),
    },
    responses: {
      200: jsonResponse(okEnvelope(op.output), "The operation's result"),
      // 503: an operation that must ask a chain first (actors/ops/op.ts `OpError`) could not; it changed nothing.
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  });
}

/** The `/admin` router: one route per operation with an `http` route. Mount behind `requireOperator`. */
export function adminRoutes(s: Services, ops: readonly AnyOp[] = OPS): OpenAPIHono<{ Variables: OperatorVariables }> {
  const app = router<{ Variables: OperatorVariables }>();
  for (const op of ops) {
    if (!op.http) continue;
    const handler = async (c: Context<{ Variables: OperatorVariables }>) =>
      c.json({ success: true, data: await runOpForRequest(s, c, op) }, 200);
    // The route's types come from the operation's schemas at run time; the handler answers the documented shape.
    const route = routeOf(op);
    app.openapi(route, handler as unknown as Parameters<typeof app.openapi<typeof route>>[1]);
  }
  return app;
}
