/**
 * Order reads: the listing (spec 4.7: newest first, scoped to the caller's wallet, exact totals from counters) and one
 * order by id (issue 12). Pending orders carry `confirmations` and `requiredConfirmations` (issue 12, additions to
 * spec 2.4), computed per response from the watchers' tips (kv/chain_tips.ts), never stored.
 *
 * Fast path (bench/orders_wrk.ts): a listing page is serialized once into response bytes and kept while the owner's
 * order version (read in the JWT gate's single KV read, shared by concurrent polls of the same wallet) is unchanged;
 * a pending order's confirmations are spliced into those bytes, and the result is kept per tip snapshot.
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import type { PipelineSettings } from "../actors/context.ts";
import type { ChainSymbol } from "../chains/catalog.ts";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { ChainTips, type TipSnapshot } from "../kv/chain_tips.ts";
import { getOrder, type OrderPage, OrderPageCache, type OrderQuery, ownerVersionKey } from "../kv/orders.ts";
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

export const OrdersQuery = z.object({
  limit: integerParam(1, 100, 20),
  offset: integerParam(0, Number.MAX_SAFE_INTEGER, 0),
  type: z.enum(ORDER_TYPES).optional(),
  status: z.enum(ORDER_STATUSES).optional(),
});

/** An order id as a path segment: a UUID (orders have UUIDv7 ids), any case. */
const UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

const OrdersPage = okEnvelope(z.object({
  orders: z.array(OrderViewSchema),
  pagination: z.object({
    limit: z.int(),
    offset: z.int(),
    total: z.int().min(0),
    hasMore: z.boolean(),
  }),
}));

const listDoc = {
  method: "get" as const,
  path: "/",
  summary: "List the caller's orders",
  tags: [TAGS.orders],
  description: "Newest first, scoped to the token's wallet (spec 4.7). Pending orders also show `confirmations` and " +
    "`requiredConfirmations`.",
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

  parse(raw: string, query: () => Record<string, string>): OrderQuery {
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
  id: z.string().regex(new RegExp(`^${UUID_PATTERN}$`)).describe("The order's id (UUIDv7)"),
});
const byIdDoc = {
  method: "get" as const,
  summary: "One of the caller's orders",
  tags: [TAGS.orders],
  description: "The order as GET /orders shows it. 404 `Order not found` for an unknown id and for another " +
    "wallet's order alike.",
  security: bearerSecurity,
  request: { params: byIdParams },
  responses: {
    200: jsonResponse(okEnvelope(OrderViewSchema), "The order"),
    ...errorResponses(401, 403, 404, 500),
  },
};
// The document shows `/orders/{id}`; Hono serves the id only where it is UUID-shaped, so `/orders/stream` and any
// other word can never be taken for an id whatever the mounting order (`{...}` patterns are not OpenAPI paths).
const byIdDocRoute = createRoute({ ...byIdDoc, path: "/{id}" });
const byIdRoute = createRoute({ ...byIdDoc, path: `/:id{${UUID_PATTERN}}`, hide: true });

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
      rule = s ? { required: s.confirmations(chain), flag: s.finality(chain).kind === "flag" } : null;
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

  const queries = new QueryMemo();
  app.openAPIRegistry.registerPath(listDocRoute);
  app.openapi(listRoute, async (c) => {
    const url = c.req.url;
    const at = url.indexOf("?");
    const q = queries.parse(at < 0 ? "" : url.slice(at + 1), () => c.req.query());
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
