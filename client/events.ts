/**
 * `orders.watch()`: the order events of `GET /orders/stream` (docs/streaming.md) as an async iterator, parsed by
 * eventsource-parser. Every event's `id` (its `seq`, gapless per wallet) is remembered and sent as `Last-Event-ID` when
 * the connection drops, so the events continue with the next one: none missed, none twice.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ApiError, apiErrorOf, TransportError } from "./errors.ts";
import { backoffMs, type RetryPolicy } from "./transport.ts";
import type { paths } from "./openapi.generated.ts";

/** An order as `GET /orders` and `GET /orders/{id}` show it (spec 2.4, with docs/order-reads.md's additions). */
export type Order = paths["/orders/{id}"]["get"]["responses"][200]["content"]["application/json"][
  "data"
];

/** One order event: the SSE `data` and the webhook body alike (docs/streaming.md "The event"). */
export interface OrderEvent {
  /** UUIDv7, the same on SSE and webhooks: deduplicate on it when consuming both. */
  id: string;
  /**
   * `order.<status>`: the status the order entered; `order.confirmations`: a pending order's source transfer has a
   * new count of confirmations (`order.confirmations`/`order.requiredConfirmations`; docs/streaming.md).
   */
  type: `order.${Order["status"]}` | "order.confirmations";
  createdAt: string;
  owner: string;
  /** The wallet's event counter (the SSE id): gapless from 1. */
  seq: number;
  order: Order;
}

export interface WatchOptions {
  /**
   * Resume after this event's `seq` (`0`: every retained event). Without it the stream starts from now, and a drop
   * before the first event could lose what happened meanwhile: pass the last `seq` you processed to be gapless.
   */
  lastEventId?: number;
  /** Ends the iteration (the open connection is closed). */
  signal?: AbortSignal;
}

export interface WatchDeps {
  baseUrl: string;
  fetch: (input: Request) => Promise<Response>;
  retry: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/** Reconnects for as long as it is iterated: a drop, a deploy or a 5xx only delays events. 4xx ends it (ApiError). */
export async function* watchOrders(
  d: WatchDeps,
  opts: WatchOptions = {},
): AsyncGenerator<OrderEvent, void, undefined> {
  let last = opts.lastEventId;
  let failures = 0;
  const url = `${d.baseUrl.replace(/\/+$/, "")}/orders/stream`;
  while (!opts.signal?.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    opts.signal?.addEventListener("abort", stop, { once: true });
    try {
      const headers = new Headers({ Accept: "text/event-stream" });
      if (last !== undefined) headers.set("Last-Event-ID", String(last));
      let res: Response;
      try {
        res = await d.fetch(
          new Request(url, { headers, signal: connection.signal }),
        );
      } catch (err) {
        if (opts.signal?.aborted) return;
        if (!(err instanceof TransportError) && !(err instanceof TypeError)) {
          throw err;
        }
        await d.sleep(backoffMs(d.retry, Math.min(++failures, 8), d.random));
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        // A slot still held by the connection that just dropped (freed within 60 s), or the service busy: wait.
        await res.body?.cancel();
        await d.sleep(backoffMs(d.retry, Math.min(++failures, 8), d.random));
        continue;
      }
      if (!res.ok || res.body === null) {
        throw apiErrorOf(
          res.status,
          await res.json().catch(() => null),
          "GET /orders/stream",
        );
      }
      const received: OrderEvent[] = [];
      const parser = createParser({
        onEvent(message: EventSourceMessage) {
          if (message.id === undefined) return;
          received.push(JSON.parse(message.data) as OrderEvent);
        },
      });
      // A reader rather than `for await` over the stream: the DOM typings of some runtimes lack its async iterator.
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { done, value: chunk } = await reader.read();
          if (done) break;
          parser.feed(chunk);
          for (const event of received.splice(0)) {
            // The service never repeats an id after Last-Event-ID; this guard keeps that promise here too.
            if (last !== undefined && event.seq <= last) continue;
            last = event.seq;
            failures = 0;
            yield event;
          }
        }
      } catch (err) {
        if (opts.signal?.aborted) return;
        if (err instanceof ApiError) throw err;
        // The connection dropped mid-stream: reconnect from `last`.
      } finally {
        await reader.cancel().catch(() => {}); // the consumer stopped, or the stream ended: release it
      }
      await d.sleep(backoffMs(d.retry, Math.min(++failures, 8), d.random));
    } finally {
      opts.signal?.removeEventListener("abort", stop);
      connection.abort(); // the iteration stopped or the stream ended: close this connection
    }
  }
}
