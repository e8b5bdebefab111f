/** Order listing (spec 4.7): newest first, scoped to the caller's wallet, with exact totals from counters. */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { ORDER_STATUSES, ORDER_TYPES, OrderPageCache, ownerVersionKey, toOrderView } from "../kv/orders.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { apiError } from "./errors.ts";
import type { AuthVariables } from "./jwt.ts";
import { bearerSecurity, errorResponses, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";
import { OrderViewSchema } from "./order_view.ts";

const integerParam = (min: number, max: number, fallback: number) =>
  z.string().regex(/^\d{1,9}$/, ISSUE_MESSAGES.nonNegativeInteger).optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(min).max(max));

const OrdersQuery = z.object({
  limit: integerParam(1, 100, 20),
  offset: integerParam(0, Number.MAX_SAFE_INTEGER, 0),
  type: z.enum(ORDER_TYPES).optional(),
  status: z.enum(ORDER_STATUSES).optional(),
});

/** Mount behind `requireJwt(kv, tokens, orderRoutesPrefetch)`: the gate then reads the owner's order version. */
export const orderRoutesPrefetch = (wallet: string) => [ownerVersionKey(wallet)];

const listRoute = createRoute({
  method: "get",
  path: "/",
  tags: [TAGS.orders],
  summary: "List orders",
  security: bearerSecurity,
  request: { query: OrdersQuery },
  responses: {
    200: jsonResponse(
      okEnvelope(z.object({
        orders: z.array(OrderViewSchema),
        pagination: z.object({
          limit: z.number().int(),
          offset: z.number().int(),
          total: z.number().int(),
          hasMore: z.boolean(),
        }),
      })),
      "A page of orders",
    ),
    ...errorResponses(400, 401, 403, 500),
  },
});

export function orderRoutes(kv: Deno.Kv, log: Log = redactedLog()) {
  const app = router<{ Variables: AuthVariables }>();
  const pages = new OrderPageCache(kv);

  app.openapi(listRoute, async (c) => {
    const { limit, offset, type, status } = c.req.valid("query");
    let page;
    try {
      page = await pages.list(c.get("wallet"), { type, status, limit, offset }, c.get("prefetched")?.[0]);
    } catch (err) {
      log("listing orders failed", err);
      throw apiError(API_ERRORS.ordersUnavailable);
    }
    return c.json({
      success: true,
      data: {
        orders: page.orders.map(toOrderView),
        pagination: { limit, offset, total: page.total, hasMore: offset + page.orders.length < page.total },
      },
    }, 200) as never;
  });

  return app;
}
