/**
 * `GET /orders/stream` (docs/streaming.md): the caller's order events as Server-Sent Events, read from the owner's
 * event log (kv/order_events.ts). Each event is `id: <seq>` (gapless per wallet), `event: order.<status>` and `data:`
 * the event JSON; a reconnect with `Last-Event-ID` (or `?lastEventId=` on a first connection) resumes right after that
 * seq. Without an id the stream starts from now; `0` replays every retained event. See docs/streaming.md.
 */
import { createRoute } from "@hono/zod-openapi";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { z } from "zod";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import { DEFAULT_PARTNER_LIMITS } from "../config/env.ts";
import { listOwnerEvents, ownerLastSeq, ownerSeqKey } from "../kv/order_events.ts";
import { releaseStreamSlot, renewStreamSlot, STREAM_SLOT_TTL_MS, takeStreamSlot } from "../kv/order_streams.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { apiError } from "./errors.ts";
import { bearerSecurity, errorResponses, router, TAGS } from "./openapi.ts";
import type { AuthVariables } from "./jwt.ts";

export interface OrderStreamOptions {
  /** Aborted when the server shuts down: every open stream ends, so a graceful shutdown does not wait for them. */
  shutdown?: AbortSignal;
  /** A comment line after this long without output keeps proxies from closing an idle stream. */
  heartbeatMs?: number;
  /**
   * How often the owner's seq record is read besides `kv.watch`, which sees only this process's writes on a local
   * KV file (the sequencer may run in another process).
   */
  pollMs?: number;
  log?: Log;
  /** Counts the streams open in this process (for operators and tests). */
  gauge?: { open: number };
  /** Streams of all a partner's wallets together (config `PARTNER_MAX_STREAMS`). */
  maxPerPartner?: number;
  /** How long a stream's slot outlives its process (kv/order_streams.ts); renewed at half of it. */
  slotTtlMs?: number;
  /** The clock slots are taken and renewed by (ms). */
  now?: () => number;
}

const PAGE = 100;
/** Streams one wallet may hold open at once, across server processes (each holds a KV watch and polls). */
export const MAX_STREAMS_PER_WALLET = 10;

const seqParam = z.string().regex(/^\d{1,15}$/, ISSUE_MESSAGES.nonNegativeInteger)
  .transform(Number).pipe(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER));

const StreamQuery = z.object({
  lastEventId: seqParam.optional().describe(
    "Resume after this event id on a first connection (`0`: every retained event). " +
      "`Last-Event-ID` wins when both are sent. Without either, the stream starts from now.",
  ),
});
const StreamHeaders = z.object({
  "last-event-id": seqParam.optional().describe(
    "The last event id received (EventSource sends it on a reconnect): the stream resumes right after it.",
  ),
});

const EVENT_STREAM_DESCRIPTION = "A `text/event-stream` of the caller's order events, oldest first. Each event:\n\n" +
  "```\nid: <seq, gapless per wallet, from 1>\nevent: order.<status>\n" +
  'data: {"id":"<uuid>","type":"order.<status>","createdAt":"<iso>","owner":"<wallet>","seq":<seq>,' +
  '"order":{<the order as GET /orders shows it>}}\n```\n\n' +
  "Comment lines (`: heartbeat`) are sent when the stream has been idle for about 15 seconds.";

export const orderStreamRoute = createRoute({
  method: "get",
  path: "/stream",
  tags: [TAGS.orders],
  summary: "Stream the caller's order events (SSE)",
  description: "Server-Sent Events of every order creation and status change of the caller's wallet. " +
    "Reconnect with `Last-Event-ID` to resume without gaps or duplicates. See docs/streaming.md.",
  security: bearerSecurity,
  request: { query: StreamQuery, headers: StreamHeaders },
  responses: {
    200: {
      content: { "text/event-stream": { schema: z.string().describe(EVENT_STREAM_DESCRIPTION) } },
      description: "The event stream (stays open; ends when the client disconnects or the server shuts down)",
    },
    ...errorResponses(400, 401, 403, 429),
  },
});

export function orderStreamRoutes(kv: Deno.Kv, opts: OrderStreamOptions = {}) {
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const pollMs = opts.pollMs ?? 500;
  const log = opts.log ?? redactedLog();
  const limits = {
    perWallet: MAX_STREAMS_PER_WALLET,
    perPartner: opts.maxPerPartner ?? DEFAULT_PARTNER_LIMITS.streamsPerPartner,
  };
  const slotTtlMs = opts.slotTtlMs ?? STREAM_SLOT_TTL_MS;
  const now = opts.now ?? Date.now;
  const app = router<{ Variables: AuthVariables }>();

  app.openapi(orderStreamRoute, async (c) => {
    const wallet = c.get("wallet");
    const { lastEventId } = c.req.valid("query");
    const fromHeader = c.req.valid("header")["last-event-id"];
    const head = await ownerLastSeq(kv, wallet);
    // No id: from now. An id past the last event (seqs only grow, so the client never saw one) also means from now.
    const requested = fromHeader ?? lastEventId;
    let after = requested === undefined ? head : Math.min(requested, head);
    // A slot in KV, so every process sharing it counts the same streams; freed when the stream ends, however it
    // ends, or by its expiry if this process dies first.
    const taken = await takeStreamSlot(kv, c.get("partnerId"), wallet, limits, slotTtlMs, now());
    if (!taken.ok) {
      throw apiError(taken.limit === "wallet" ? API_ERRORS.tooManyStreams : API_ERRORS.tooManyPartnerStreams);
    }
    let slot = taken.slot;

    return streamSSE(c, async (stream) => {
      try {
        await serve(stream);
      } finally {
        await releaseStreamSlot(kv, slot).catch((err) =>
          log(`order stream slot of ${wallet} not released (it frees itself at its expiry)`, err)
        );
      }
    });

    async function serve(stream: SSEStreamingApi) {
      const done = new AbortController();
      const end = () => done.abort();
      if (opts.shutdown?.aborted) return;
      opts.shutdown?.addEventListener("abort", end, { once: true });
      stream.onAbort(end);
      // Set by the watch when the owner's seq record changes: the next wait returns at once, so a change seen
      // while events are being written is not left for the poll.
      let changed = false;
      let wake = () => {};
      if (opts.gauge) opts.gauge.open++;
      const watch = kv.watch([ownerSeqKey(wallet)]).getReader();
      const watching = (async () => {
        try {
          while (!(await watch.read()).done) {
            changed = true;
            wake();
          }
        } catch { /* cancelled */ }
      })();
      try {
        let lastOutput = Date.now();
        while (!done.signal.aborted) {
          if (slot.value.expiresAt - now() < slotTtlMs / 2) {
            const renewed = await renewStreamSlot(kv, slot, slotTtlMs, now());
            if (!renewed) {
              log(`order stream of ${wallet} lost its slot (stalled past its expiry); it ends, the client resumes`);
              break;
            }
            slot = renewed;
          }
          changed = false;
          for (;;) {
            const events = await listOwnerEvents(kv, wallet, after, PAGE);
            for (const event of events) {
              await stream.writeSSE({ id: String(event.seq), event: event.type, data: JSON.stringify(event) });
              after = event.seq;
            }
            if (events.length > 0) lastOutput = Date.now();
            if (events.length < PAGE || done.signal.aborted) break;
          }
          if (Date.now() - lastOutput >= heartbeatMs) {
            await stream.write(": heartbeat\n\n");
            lastOutput = Date.now();
          }
          await new Promise<void>((resolve) => {
            if (changed || done.signal.aborted) return resolve();
            const timer = setTimeout(finish, Math.min(pollMs, heartbeatMs));
            function finish() {
              clearTimeout(timer);
              done.signal.removeEventListener("abort", finish);
              wake = () => {};
              resolve();
            }
            wake = finish;
            done.signal.addEventListener("abort", finish, { once: true });
          });
        }
      } catch (err) {
        // A write to a closed stream is the client leaving; anything else ends the stream (the client resumes).
        if (!done.signal.aborted && !stream.aborted && !stream.closed) log(`order stream of ${wallet} failed`, err);
      } finally {
        opts.shutdown?.removeEventListener("abort", end);
        await watch.cancel().catch(() => {});
        await watching;
        if (opts.gauge) opts.gauge.open--;
      }
    }
  });

  return app;
}
