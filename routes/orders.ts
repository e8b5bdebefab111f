/**
 * Order reads: the listing (spec 4.7: newest first, scoped to the caller's wallet, exact totals from counters) and one
 * order by id (docs/order-reads.md). Pending orders carry `confirmations` and `requiredConfirmations`
 * (docs/order-reads.md, additions to spec 2.4), computed per response from the watchers' tips (kv/chain_tips.ts), never
 * stored.
 *
 * Fast path (bench/orders_wrk.ts): a listing page is serialized once into response bytes and kept while the owner's
 * order version (read in the JWT gate's single KV read, shared by concurrent polls of the same wallet) is unchanged;
 * a pending order's confirmations are spliced into those bytes, and the result is kept per tip snapshot.
 */
import { createRoute } from "@hono/zod-openapi";
import { base64urlnopad, utf8 } from "@scure/base";
import { z } from "zod";
import { confirmationRule } from "../actors/confirmation_events.ts";
import type { PipelineSettings } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { ChainTips, type TipSnapshot } from "../kv/chain_tips.ts";
import {
  type ChangePosition,
  getOrder,
  listOrderChanges,
  ORDER_SYNC_SETTLE_MS,
  type OrderPage,
  OrderPageCache,
  type OrderQuery,
  ownerVersionKey,
} from "../kv/orders.ts";
import {
  type ConfirmationRule,
  type Order,
  ORDER_STATUSES,
  ORDER_TYPES,
  pendingConfirmations,
  toOrderView,
} from "../model/order.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { apiError, validationError } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";
import { bearerSecurity, errorResponses, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";
import { OrderViewSchema } from "./order_view.ts";

const integerParam = (min: number, max: number, fallback: number) =>
  z.string().regex(/^\d{1,9}$/, ISSUE_MESSAGES.nonNegativeInteger).optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(min).max(max));

/** An order id: a UUID (orders have UUIDv7 ids), any case. */
const UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
const UUID = new RegExp(`^${UUID_PATTERN}$`);
/** `Date.prototype.toISOString`'s format, the one the change index sorts by. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The incremental-sync cursor (docs/order-reads.md): base64url of the change-index position `[changedAt, id]` as
 * JSON. Opaque to partners; decoded strictly, so a made-up value is a validation error rather than a guess.
 */
export function encodeCursor(p: ChangePosition): string {
  return base64urlnopad.encode(utf8.decode(JSON.stringify([p.at, p.id])));
}
export function decodeCursor(cursor: string): ChangePosition | null {
  try {
    const v = JSON.parse(utf8.encode(base64urlnopad.decode(cursor)));
    if (!Array.isArray(v) || v.length !== 2) return null;
    const [at, id] = v;
    if (typeof at !== "string" || !ISO_MS.test(at) || Number.isNaN(Date.parse(at))) return null;
    if (typeof id !== "string" || (id !== "" && !UUID.test(id))) return null;
    return { at, id: id.toLowerCase() };
  } catch {
    return null;
  }
}

export const OrdersQuery = z.object({
  limit: integerParam(1, 100, 20),
  offset: integerParam(0, Number.MAX_SAFE_INTEGER, 0),
  type: z.enum(ORDER_TYPES).optional(),
  status: z.enum(ORDER_STATUSES).optional(),
  cursor: z.string().max(256).optional().transform((v, ctx) => {
    if (v === undefined) return undefined;
    const position = decodeCursor(v);
    if (position === null) ctx.addIssue({ code: "custom", message: ISSUE_MESSAGES.invalidCursor });
    return position ?? undefined;
  }).describe(
    "Incremental sync: the `nextCursor` of an earlier answer. Orders then come by last change, oldest first, after " +
      "that position (docs/order-reads.md).",
  ),
  updatedSince: z.iso.datetime({ offset: true }).optional().describe(
    "Incremental sync: orders whose last change (`updatedAt`, else `createdAt`) is at or after this ISO 8601 time, " +
      "oldest change first. Ignored when `cursor` is given.",
  ),
}).superRefine((q, ctx) => {
  if ((q.cursor !== undefined || q.updatedSince !== undefined) && q.offset !== 0) {
    ctx.addIssue({ code: "custom", path: ["offset"], message: ISSUE_MESSAGES.offsetWithCursor });
  }
});
type ListQuery = z.output<typeof OrdersQuery>;

const Pagination = z.object({
  limit: z.int(),
  offset: z.int(),
  total: z.int().min(0),
  hasMore: z.boolean(),
  nextCursor: z.string().optional().describe(
    "Incremental sync only (with `cursor` or `updatedSince`): where the next request continues. Always present " +
      "there, also on the last page: keep it and ask again later for the changes made since.",
  ),
});
const OrdersPage = okEnvelope(z.object({ orders: z.array(OrderViewSchema), pagination: Pagination }));

const listDoc = {
  method: "get" as const,
  path: "/",
  summary: "List the caller's orders",
  tags: [TAGS.orders],
  description: "Newest first, scoped to the token's wallet (spec 4.7). Pending orders also show `confirmations` and " +
    "`requiredConfirmations`. With `cursor` or `updatedSince`: incremental sync, by last change, oldest first, " +
    "with `pagination.nextCursor` (docs/order-reads.md).",
  security: bearerSecurity,
  request: { query: OrdersQuery },
  responses: {
    200: jsonResponse(OrdersPage, "One page of orders"),
    ...errorResponses(400, 401, 403, 500),
  },
};
// The document's route; the served one validates the same OrdersQuery itself, remembering the outcome per query
// string (partners poll the same few URLs), instead of an async zod parse per request.
const listDocRoute = createRoute(listDoc);
const listRoute = createRoute({ ...listDoc, request: {}, hide: true });

/** OrdersQuery's outcome per raw query string, bounded. */
class QueryMemo {
  readonly #outcomes = new Map<string, ReturnType<typeof OrdersQuery.safeParse>>();
  constructor(private readonly maxEntries = 1_000) {}

  parse(raw: string, query: () => Record<string, string>): ListQuery {
    let outcome = this.#outcomes.get(raw);
    if (outcome === undefined) {
      outcome = OrdersQuery.safeParse(query());
      if (this.#outcomes.size >= this.maxEntries) this.#outcomes.clear();
      this.#outcomes.set(raw, outcome);
    }
    if (!outcome.success) throw validationError(outcome.error);
    return outcome.data;
  }
}

const byIdParams = z.object({
  id: z.string().describe("The order's id (UUIDv7, any case); anything else is an unknown order"),
});
const byIdDoc = {
  method: "get" as const,
  summary: "One of the caller's orders",
  tags: [TAGS.orders],
  description: "The order as GET /orders shows it. 404 `Order not found` for an unknown id, an id that is not a " +
    "UUID and another wallet's order alike.",
  security: bearerSecurity,
  request: { params: byIdParams },
  responses: {
    200: jsonResponse(okEnvelope(OrderViewSchema), "The order"),
    ...errorResponses(401, 403, 404, 500),
  },
};
// The document shows `/orders/{id}`; Hono serves the id here only where it is UUID-shaped, so `/orders/stream` and
// any other word can never be taken for an id whatever the mounting order (`{...}` patterns are not OpenAPI paths).
// Any other single segment answers as an unknown order from `orderIdFallbackRoutes`, mounted after every /orders route.
const byIdDocRoute = createRoute({ ...byIdDoc, path: "/{id}" });
const byIdRoute = createRoute({ ...byIdDoc, path: `/:id{${UUID_PATTERN}}`, hide: true });
const byIdFallbackRoute = createRoute({ ...byIdDoc, path: "/:id", hide: true });

/**
 * `GET /orders/<segment>` for a segment no route above took (not a UUID, not `stream`): `404 Order not found`, as an
 * unknown id, since a malformed id names no order either (docs/order-reads.md). Mount it after every /orders router.
 */
export function orderIdFallbackRoutes() {
  const app = router<{ Variables: AuthVariables }>();
  app.openapi(byIdFallbackRoute, () => {
    throw apiError(API_ERRORS.orderNotFound);
  });
  return app;
}

/** Mount behind `requireJwt(kv, tokens, orderRoutesPrefetch)`: the gate then reads the owner's order version. */
export const orderRoutesPrefetch = (wallet: string) => [ownerVersionKey(wallet)];

export interface OrderRoutesOptions {
  /** The pipeline's settings (required confirmations, finality per chain); unset: no confirmations shown. */
  settings?: PipelineSettings | null;
  log?: Log;
  /** How old a tip snapshot may be when a response uses it (ms). */
  tipMaxAgeMs?: number;
}

/** A page as response bytes: `segments` with, between each two, the confirmations of `pending[i]` to splice in. */
interface RenderedPage {
  segments: Uint8Array[];
  pending: Order[];
  /** The assembled body for one tip snapshot. */
  assembled?: { gen: number; body: Uint8Array };
}

const encoder = new TextEncoder();
const JSON_HEADERS = { "content-type": "application/json" };

export function orderRoutes(kv: Deno.Kv, opts: OrderRoutesOptions | Log = {}) {
  const o: OrderRoutesOptions = typeof opts === "function" ? { log: opts } : opts;
  const log = o.log ?? redactedLog();
  const app = router<{ Variables: AuthVariables }>();
  const tips = new ChainTips(kv, o.tipMaxAgeMs);
  const rules = new Map<ChainSymbol, ConfirmationRule | null>();
  const ruleOf = (chain: ChainSymbol): ConfirmationRule | null => {
    let rule = rules.get(chain);
    if (rule === undefined) {
      const s = o.settings;
      rule = s ? confirmationRule(s, chain) : null;
      rules.set(chain, rule);
    }
    return rule;
  };
  const confirmationsOf = (order: Order, snapshot: TipSnapshot | null) => {
    const rule = ruleOf(order.sourceChain);
    return rule && pendingConfirmations(order, rule, snapshot?.tips.get(order.sourceChain));
  };
  const needsTips = (order: Order) => order.status === "pending" && ruleOf(order.sourceChain) !== null;

  const render = (page: OrderPage, q: OrderQuery): RenderedPage => {
    const pagination = {
      limit: q.limit,
      offset: q.offset,
      total: page.total,
      hasMore: q.offset + page.orders.length < page.total,
    };
    const segments: string[] = [];
    const pending: Order[] = [];
    let current = '{"success":true,"data":{"orders":[';
    page.orders.forEach((order, i) => {
      if (i > 0) current += ",";
      const json = JSON.stringify(toOrderView(order));
      if (!needsTips(order)) {
        current += json;
        return;
      }
      segments.push(current + json.slice(0, -1)); // the closing brace comes after the spliced fields
      pending.push(order);
      current = "}";
    });
    segments.push(`${current}],"pagination":${JSON.stringify(pagination)}}}`);
    return { segments: segments.map((s) => encoder.encode(s)), pending };
  };
  // Up to 2,000 pages of at most 100 orders (about 50 KB each with their assembled copy): bounded memory.
  const pages = new OrderPageCache(kv, render, 2_000);

  const assemble = (page: RenderedPage, snapshot: TipSnapshot): Uint8Array => {
    if (page.assembled?.gen === snapshot.gen) return page.assembled.body;
    const inserts = page.pending.map((order) => {
      const c = confirmationsOf(order, snapshot)!;
      return encoder.encode(`,"confirmations":${c.confirmations},"requiredConfirmations":${c.requiredConfirmations}`);
    });
    let length = 0;
    for (const part of [...page.segments, ...inserts]) length += part.length;
    const body = new Uint8Array(length);
    let at = 0;
    page.segments.forEach((segment, i) => {
      body.set(segment, at);
      at += segment.length;
      if (i < inserts.length) {
        body.set(inserts[i], at);
        at += inserts[i].length;
      }
    });
    page.assembled = { gen: snapshot.gen, body };
    return body;
  };

  /** Incremental sync (docs/order-reads.md): a page of the change index, not cached (each position is read once). */
  const syncPage = async (wallet: string, q: ListQuery) => {
    const after = q.cursor ?? { at: new Date(q.updatedSince!).toISOString(), id: "" };
    const settledBefore = new Date(Date.now() - ORDER_SYNC_SETTLE_MS).toISOString();
    try {
      const page = await listOrderChanges(kv, wallet, {
        type: q.type,
        status: q.status,
        limit: q.limit,
        after,
        settledBefore,
      });
      const snapshot = page.orders.some(needsTips) ? tips.fresh() ?? await tips.snapshot() : null;
      return {
        success: true as const,
        data: {
          orders: page.orders.map((order) => ({ ...toOrderView(order), ...confirmationsOf(order, snapshot) })),
          pagination: {
            limit: q.limit,
            offset: 0,
            total: page.total,
            hasMore: page.hasMore,
            nextCursor: encodeCursor(page.next),
          },
        },
      };
    } catch (err) {
      log("syncing orders failed", err);
      throw apiError(API_ERRORS.ordersUnavailable);
    }
  };

  const queries = new QueryMemo();
  app.openAPIRegistry.registerPath(listDocRoute);
  app.openapi(listRoute, async (c) => {
    const url = c.req.url;
    const at = url.indexOf("?");
    const q = queries.parse(at < 0 ? "" : url.slice(at + 1), () => c.req.query());
    if (q.cursor !== undefined || q.updatedSince !== undefined) return c.json(await syncPage(c.get("wallet"), q), 200);
    let body: Uint8Array;
    try {
      const wallet = c.get("wallet");
      const version = c.get("prefetched")?.[0];
      const page = (version && pages.cached(wallet, q, version)) ?? await pages.list(wallet, q, version);
      body = page.pending.length === 0 ? page.segments[0] : assemble(page, tips.fresh() ?? await tips.snapshot());
    } catch (err) {
      log("listing orders failed", err);
      throw apiError(API_ERRORS.ordersUnavailable);
    }
    return c.body(body as Uint8Array<ArrayBuffer>, 200, JSON_HEADERS) as never;
  });

  app.openAPIRegistry.registerPath(byIdDocRoute);
  app.openapi(byIdRoute, async (c) => {
    const id = c.req.param("id").toLowerCase();
    const wallet = c.get("wallet");
    const entry = await getOrder(kv, id).catch((err) => {
      log(`reading order ${id} failed`, err);
      throw apiError(API_ERRORS.orderUnavailable);
    });
    const owner = entry.invalid ? (entry.raw as { owner?: unknown } | null)?.owner : entry.value?.owner;
    // Another wallet's order answers exactly as an unknown one: its existence is not the caller's business.
    if (entry.versionstamp === null || owner !== wallet) throw apiError(API_ERRORS.orderNotFound);
    if (entry.invalid) {
      log(`order ${id} fails its schema`, entry.invalid);
      throw apiError(API_ERRORS.orderUnavailable);
    }
    const order = entry.value;
    const snapshot = needsTips(order)
      ? await tips.snapshot().catch((err) => {
        log("reading the watchers' tips failed", err);
        throw apiError(API_ERRORS.orderUnavailable);
      })
      : null;
    return c.json(
      { success: true, data: { ...toOrderView(order), ...confirmationsOf(order, snapshot) } },
      200,
    ) as never;
  });

  return app;
}
