/**
 * The partner client of the issuance and redemption service (client/README.md). Types come from the service's own
 * `/openapi.json` (openapi.generated.ts, by openapi-typescript); calls go through openapi-fetch with one transport
 * (transport.ts) that adds the access token, an Idempotency-Key on every POST and bounded retries with jitter.
 *
 * ```ts
 * const client = createClient({ baseUrl, apiKey, walletAddress });
 * const { address } = await client.mint.createWallet({ chain: "sol", destinationChain: "base" });
 * for await (const event of client.orders.watch({ lastEventId: 0 })) console.log(event.type, event.order.id);
 * ```
 */
import createFetchClient from "openapi-fetch";
import { TokenSource } from "./auth.ts";
import { apiErrorOf } from "./errors.ts";
import { type Order, type OrderEvent, type WatchOptions, watchOrders } from "./events.ts";
import type { paths } from "./openapi.generated.ts";
import { DEFAULT_RETRY, type RetryPolicy, sleep, transportFetch } from "./transport.ts";
import { type HeaderSource, type VerifyOptions, verifyWebhook } from "./webhooks.ts";

export { ApiError, TransportError, type ValidationIssue } from "./errors.ts";
export type { Order, OrderEvent, WatchOptions } from "./events.ts";
export {
  API_ERROR_MESSAGES,
  type ApiErrorMessage,
  ORDER_ERROR_MESSAGES,
  type OrderErrorMessage,
} from "./messages.generated.ts";
export type { components, paths } from "./openapi.generated.ts";
export { DEFAULT_RETRY, type RetryPolicy } from "./transport.ts";
export { type VerifyOptions, verifyWebhook } from "./webhooks.ts";

export interface ClientOptions {
  /** The service's `{base_url}`, such as `https://issuance.example.com`. */
  baseUrl: string;
  /** `{auth_url}` (spec 4): where `/token` is; default `<baseUrl>/auth`. */
  authUrl?: string;
  /** `<keyId>.<secret>` from the operator. Kept private; never logged. */
  apiKey: string;
  /** The EVM wallet the token is bound to (spec 5.1). */
  walletAddress: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** Renew the token when less than this is left (ms); default one day. */
  refreshBeforeMs?: number;
  /** Clock (ms since the epoch), sleep and randomness: injected by tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends
  { responses: { [K in S]: { content: { "application/json": infer B } } } } ? B
  : never;
type Data<P extends keyof paths, M extends keyof paths[P], S extends number> = Json<P, M, S> extends { data: infer D }
  ? D
  : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends
  { requestBody: { content: { "application/json": infer B } } } ? B
  : paths[P][M] extends { requestBody?: { content: { "application/json": infer B } } } ? B
  : never;

export type OrdersQuery = NonNullable<
  paths["/orders"]["get"]["parameters"]["query"]
>;
export type OrdersPage = Data<"/orders", "get", 200>;

/** Paths that take the access token (spec 4's JWT routes); the others are public or take the API key. */
const TOKEN_PATHS = ["/mint/", "/burn/", "/orders", "/webhooks/"];
const DAY_MS = 86_400_000;
const EPOCH = "1970-01-01T00:00:00.000Z";

export function createClient(o: ClientOptions) {
  const baseUrl = o.baseUrl.replace(/\/+$/, "");
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, "");
  const retry = { ...DEFAULT_RETRY, ...o.retry };
  const deps = {
    fetch: o.fetch ?? globalThis.fetch.bind(globalThis),
    retry,
    sleep: o.sleep ?? sleep,
    random: o.random ?? Math.random,
  };
  const plain = transportFetch({ ...deps, needsToken: () => false });
  const tokens = new TokenSource({
    authUrl: o.authUrl ?? `${baseUrl}/auth`,
    apiKey: o.apiKey,
    walletAddress: o.walletAddress,
    fetch: plain,
    now: o.now ?? Date.now,
    refreshBeforeMs: o.refreshBeforeMs ?? DAY_MS,
  });
  const transport = transportFetch({
    ...deps,
    token: ({ refresh }) => tokens.token({ refresh }),
    needsToken: (url) => {
      const path = url.pathname.slice(basePath.length);
      return TOKEN_PATHS.some((p) =>
        path === p.replace(/\/$/, "") ||
        path.startsWith(p.endsWith("/") ? p : `${p}/`)
      );
    },
  });
  const raw = createFetchClient<paths>({ baseUrl, fetch: transport });

  /** The `data` of a success envelope, or the ApiError of the answer. */
  async function unwrap<T>(
    operation: string,
    call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  ) {
    const r = await call;
    if (!r.response.ok) {
      throw apiErrorOf(r.response.status, r.error ?? null, operation);
    }
    return (r.data as { data: T }).data;
  }

  const orders = {
    get: (id: string) =>
      unwrap<Data<"/orders/{id}", "get", 200>>(
        "GET /orders/{id}",
        raw.GET("/orders/{id}", { params: { path: { id } } }),
      ),
    /** One page as the service answers it: offset paging (spec 4.7), or incremental sync with `cursor`/`updatedSince`. */
    page: (query: OrdersQuery = {}) =>
      unwrap<OrdersPage>(
        "GET /orders",
        raw.GET("/orders", { params: { query } }),
      ),
    /**
     * Every order matching `type`/`status` (changed at or after `updatedSince`, default: all), oldest change first,
     * through the cursor: no order is missed or repeated while others are created meanwhile. Changes of the last
     * couple of seconds appear on the next call (docs/order-reads.md "Incremental sync").
     */
    async *list(
      query: Omit<OrdersQuery, "cursor" | "offset"> = {},
    ): AsyncGenerator<Order, void, undefined> {
      let page = await orders.page({
        updatedSince: EPOCH,
        ...query,
        limit: query.limit ?? "100",
      });
      for (;;) {
        yield* page.orders;
        if (!page.pagination.hasMore) return;
        const cursor = page.pagination.nextCursor;
        page = await orders.page({
          ...query,
          limit: query.limit ?? "100",
          updatedSince: undefined,
          cursor,
        });
      }
    },
    /**
     * The changes since `cursor` (a `nextCursor` you kept; none: since `updatedSince`, default all), every page read:
     * keep the returned `nextCursor` and call again later for the next changes.
     */
    async sync(
      from: { cursor?: string; updatedSince?: string } = {},
      query: Pick<OrdersQuery, "type" | "status"> = {},
    ) {
      const changed: Order[] = [];
      let page = await orders.page(
        from.cursor ? { ...query, cursor: from.cursor, limit: "100" } : {
          ...query,
          updatedSince: from.updatedSince ?? EPOCH,
          limit: "100",
        },
      );
      for (;;) {
        changed.push(...page.orders);
        if (!page.pagination.hasMore) {
          return { orders: changed, nextCursor: page.pagination.nextCursor! };
        }
        page = await orders.page({
          ...query,
          cursor: page.pagination.nextCursor,
          limit: "100",
        });
      }
    },
    /** The wallet's order events, live, resuming after drops (events.ts). */
    watch: (
      opts: WatchOptions = {},
    ): AsyncGenerator<OrderEvent, void, undefined> =>
      watchOrders({
        baseUrl,
        fetch: transport,
        retry,
        sleep: deps.sleep,
        random: deps.random,
      }, opts),
  };

  return {
    /** The typed openapi-fetch client over the same transport, for any operation without a helper below. */
    raw,
    auth: {
      /** The current access token (exchanged or renewed when due). */
      token: () => tokens.token(),
      /** Exchanges again now. */
      refresh: () => tokens.token({ refresh: true }),
      get expiresAtMs() {
        return tokens.expiresAtMs;
      },
    },
    mint: {
      createWallet: (body: Body<"/mint/wallets", "post">) =>
        unwrap<Data<"/mint/wallets", "post", 201>>(
          "POST /mint/wallets",
          raw.POST("/mint/wallets", { body }),
        ),
      listWallets: () =>
        unwrap<Data<"/mint/wallets", "get", 200>>(
          "GET /mint/wallets",
          raw.GET("/mint/wallets"),
        ),
    },
    burn: {
      createWallet: (body: Body<"/burn/wallets", "post">) =>
        unwrap<Data<"/burn/wallets", "post", 201>>(
          "POST /burn/wallets",
          raw.POST("/burn/wallets", { body }),
        ),
      listWallets: () =>
        unwrap<Data<"/burn/wallets", "get", 200>>(
          "GET /burn/wallets",
          raw.GET("/burn/wallets"),
        ),
      updateWallet: (body: Body<"/burn/wallets", "put">) =>
        unwrap<Data<"/burn/wallets", "put", 200>>(
          "PUT /burn/wallets",
          raw.PUT("/burn/wallets", { body }),
        ),
    },
    config: {
      mint: () =>
        unwrap<Data<"/config/mint", "get", 200>>(
          "GET /config/mint",
          raw.GET("/config/mint"),
        ),
      burn: () =>
        unwrap<Data<"/config/burn", "get", 200>>(
          "GET /config/burn",
          raw.GET("/config/burn"),
        ),
    },
    orders,
    webhooks: {
      createEndpoint: (body: Body<"/webhooks/endpoints", "post">) =>
        unwrap<Data<"/webhooks/endpoints", "post", 201>>(
          "POST /webhooks/endpoints",
          raw.POST("/webhooks/endpoints", { body }),
        ),
      listEndpoints: () =>
        unwrap<Data<"/webhooks/endpoints", "get", 200>>(
          "GET /webhooks/endpoints",
          raw.GET("/webhooks/endpoints"),
        ),
      /**
       * True when a delivery is genuine: `rawBody` exactly as received, its headers, the endpoint's secret (or the
       * secrets you hold while rotating). docs/webhooks.md "Verifying the signature".
       */
      verify: (
        rawBody: string | Uint8Array,
        headers: HeaderSource,
        secret: string | readonly string[],
        opts?: VerifyOptions,
      ) => verifyWebhook(rawBody, headers, secret, opts),
    },
    /** Sim and devnet servers only: drive the simulated chains (the walkthrough uses them). */
    sim: {
      deposit: (body: Body<"/sim/deposits", "post">) =>
        unwrap<Data<"/sim/deposits", "post", 201>>(
          "POST /sim/deposits",
          raw.POST("/sim/deposits", { body }),
        ),
      faucet: (body: Body<"/sim/faucet", "post">) =>
        unwrap<Data<"/sim/faucet", "post", 201>>(
          "POST /sim/faucet",
          raw.POST("/sim/faucet", { body }),
        ),
      transfer: (body: Body<"/sim/transfers", "post">) =>
        unwrap<Data<"/sim/transfers", "post", 201>>(
          "POST /sim/transfers",
          raw.POST("/sim/transfers", { body }),
        ),
      balance: (
        query: NonNullable<
          paths["/sim/balances"]["get"]["parameters"]["query"]
        >,
      ) =>
        unwrap<Data<"/sim/balances", "get", 200>>(
          "GET /sim/balances",
          raw.GET("/sim/balances", { params: { query } }),
        ),
    },
    toJSON: () => ({ baseUrl, token: tokens.toJSON() }),
  };
}

export type Client = ReturnType<typeof createClient>;
