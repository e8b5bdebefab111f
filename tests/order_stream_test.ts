/**
 * GET /orders/stream over real HTTP: a partner watches a deposit's order from pending to completed, disconnects,
 * misses more changes and gets exactly those on a reconnect with Last-Event-ID; another wallet's events never reach
 * it; auth and input errors use the spec's envelopes. The route alone (real KV, real HTTP, a stand-in for the JWT
 * gate) shows "from now", heartbeats, events sequenced by another KV handle and the ends of a stream.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { EVM_CHAINS, NATIVE } from "../chains/catalog.ts";
import { openKv } from "../kv/open.ts";
import { listOwnerEvents, type OrderEvent, sequenceOrderEvents } from "../kv/order_events.ts";
import { createOrder } from "../kv/orders.ts";
import { API_ERRORS, ISSUE_MESSAGES } from "../messages.ts";
import { onError } from "../routes/errors.ts";
import type { AuthVariables } from "../routes/jwt.ts";
import { MAX_STREAMS_PER_WALLET, type OrderStreamOptions, orderStreamRoutes } from "../routes/order_stream.ts";
import { type StreamSlot, takeStreamSlot } from "../kv/order_streams.ts";
import { OrderViewSchema } from "../routes/order_view.ts";
import { withKv } from "./support/kv.ts";
import { makeOrder } from "./support/orders.ts";
import { allOrders, depositAddress, FAST_PIPELINE, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import {
  call,
  checkResponse,
  newApiKey,
  randomWallet,
  startPeerServer,
  startTestServer,
  type TestServer,
  tokenFor,
} from "./support/server.ts";

interface SseEvent {
  id: string;
  event: string;
  data: OrderEvent;
}

/** A minimal EventSource over fetch: parses `id`, `event` and `data` fields and counts comment lines. */
class SseClient {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  comments = 0;

  private constructor(readonly response: Response, private readonly abort: AbortController) {
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  }

  static async open(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const abort = new AbortController();
    const res = await fetch(`${baseUrl}${path}`, { headers, signal: abort.signal });
    assert.equal(res.status, 200, await (res.ok ? Promise.resolve("") : res.text()));
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    return new SseClient(res, abort);
  }

  /** The next event or comment block; null when the server ended the stream. */
  async read(): Promise<SseEvent | "comment" | null> {
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const lines = block.split("\n");
        if (lines.every((l) => l.startsWith(":"))) {
          this.comments++;
          return "comment";
        }
        const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        return { id: field("id")!, event: field("event")!, data: JSON.parse(field("data")!) };
      }
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#buffer += value;
    }
  }

  /** The next event, comments skipped; null when the server ended the stream. */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const r = await this.read();
      if (r !== "comment") return r;
    }
  }

  async take(n: number): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    while (out.length < n) {
      const e = await this.next();
      assert.ok(e, `the stream ended after ${out.length} of ${n} events`);
      out.push(e);
    }
    return out;
  }

  /** Events until `stop(event)` holds (inclusive). */
  async until(stop: (e: SseEvent) => boolean): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (;;) {
      const e = await this.next();
      assert.ok(e, `the stream ended after ${out.length} events`);
      out.push(e);
      if (stop(e)) return out;
    }
  }

  close() {
    this.abort.abort();
    this.#reader.cancel().catch(() => {});
  }
}

/** Each event as the SSE fields carry it: id = seq, event = type, data = the event, its order a valid order view. */
function assertWellFormed(events: SseEvent[], owner: string) {
  for (const e of events) {
    assert.equal(e.id, String(e.data.seq));
    assert.equal(e.event, e.data.type);
    if (e.data.type === "order.confirmations") assert.equal(e.data.order.status, "pending");
    else assert.equal(e.data.type, `order.${e.data.order.status}`);
    assert.equal(e.data.owner, owner);
    assert.equal(e.data.order.destinationWallet, owner);
    assert.deepEqual(Object.keys(e.data), ["id", "type", "createdAt", "owner", "order", "seq"]);
    OrderViewSchema.strict().parse(e.data.order);
  }
}

const consecutive = (events: SseEvent[], after: number) =>
  assert.deepEqual(events.map((e) => Number(e.id)), events.map((_, i) => after + i + 1), "ids are consecutive");

async function waitForLog(kv: Deno.Kv, owner: string, done: (events: OrderEvent[]) => boolean) {
  for (let i = 0; i < 1000; i++) {
    const events = await listOwnerEvents(kv, owner, 0, 1000);
    if (done(events)) return events;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the event log of ${owner} never got there`);
}

Deno.test("SSE: a deposit's order live, a reconnect with Last-Event-ID gets exactly the missed events", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  const clients: SseClient[] = [];
  const open = async (token: string, path = "/orders/stream", headers: Record<string, string> = {}) => {
    const c = await SseClient.open(server.url, path, { Authorization: `Bearer ${token}`, ...headers });
    clients.push(c);
    return c;
  };
  try {
    const a = await partner(server);
    const b = await partner(server);
    const ownerA = a.wallet.toLowerCase();
    const ownerB = b.wallet.toLowerCase();
    const deposit = async (token: string, chain: "sol" | "xrp" | "sui", dest: typeof EVM_CHAINS[number]) => {
      const address = await depositAddress(server, token, chain, dest);
      await sim(server, "deposits", { chain, address, amount: (NATIVE[chain].minimumDeposit * 2n).toString() });
    };
    const live = await open(a.token); // no id: from now, and nothing has happened yet
    const other = await open(b.token, "/orders/stream?lastEventId=0");

    await deposit(a.token, "sol", EVM_CHAINS[0]);
    const first = await live.until((e) => e.data.order.status === "completed");
    assertWellFormed(first, ownerA);
    consecutive(first, 0);
    assert.equal(first[0].event, "order.pending");
    // The pending event carries the deposit's first count (the block it was seen in: one confirmation on sim sol,
    // final by depth), and the confirmation events after it only later counts, each once (docs/streaming.md).
    assert.equal(first[0].data.order.confirmations, 1);
    assert.ok(first[0].data.order.requiredConfirmations! >= 1);
    const counts = first.filter((e) => e.event === "order.confirmations").map((e) => e.data.order.confirmations!);
    assert.ok(counts.every((c, i) => c > (i === 0 ? 1 : counts[i - 1])), `counts after the first: ${counts}`);
    assert.deepEqual(new Set(first.map((e) => e.data.order.id)).size, 1);
    const statuses = first.filter((e) => e.event !== "order.confirmations").map((e) => e.data.order.status);
    assert.deepEqual(statuses, [...new Set(statuses)], `each status once: ${statuses}`);
    const [listed] = await allOrders(server, a.token);
    assert.deepEqual(first.at(-1)!.data.order, listed, "the last event carries the order as GET /orders shows it");
    const lastSeen = Number(first.at(-1)!.id);
    live.close();

    // Changes while disconnected.
    await deposit(a.token, "xrp", EVM_CHAINS[1]);
    await waitForOrders(server, a.token, (o) => o.length === 2 && o.every(terminal));
    const log = await waitForLog(
      server.services.kv,
      ownerA,
      (events) => events.filter((e) => e.type === "order.completed").length === 2,
    );
    assert.ok(log.length > lastSeen);

    const resumed = await open(a.token, "/orders/stream?lastEventId=1", { "Last-Event-ID": String(lastSeen) });
    const missed = await resumed.take(log.length - lastSeen);
    assertWellFormed(missed, ownerA);
    consecutive(missed, lastSeen);
    assert.deepEqual(missed.map((e) => e.data), log.slice(lastSeen), "exactly the missed events, the header wins");
    assert.equal(missed.at(-1)!.data.order.status, "completed");

    // B's stream replays from 0: had any of A's events reached it, they would come before B's own.
    await deposit(b.token, "sui", EVM_CHAINS[0]);
    const own = await other.until((e) => e.data.order.status === "completed");
    assertWellFormed(own, ownerB);
    consecutive(own, 0);

    // A replay from 0 is A's whole log.
    const replay = await open(a.token, "/orders/stream?lastEventId=0");
    assert.deepEqual((await replay.take(log.length)).map((e) => e.data), log);

    // Server shutdown ends the open streams (it would otherwise wait for them for ever).
    await server.close();
    assert.equal(await replay.next(), null);
    assert.equal(await other.next(), null);
  } finally {
    await server.close().catch(() => {}); // a no-op unless the test failed before
    for (const c of clients) c.close();
  }
});

Deno.test("SSE: auth and input errors use the spec's envelopes", async () => {
  const server = await startTestServer();
  try {
    const { token } = await partner(server);
    const envelope = (e: { message: string }) => ({ success: false, message: e.message });
    assert.deepEqual(await call(server, "GET", "/orders/stream"), {
      status: 401,
      body: envelope(API_ERRORS.missingAuthorization),
    });
    assert.deepEqual(await call(server, "GET", "/orders/stream", { headers: { Authorization: "Bearer nope" } }), {
      status: 401,
      body: envelope(API_ERRORS.invalidToken),
    });
    const issue = (path: string) => ({
      success: false,
      message: API_ERRORS.validationError.message,
      error: { issues: [{ path: [path], message: ISSUE_MESSAGES.nonNegativeInteger }] },
    });
    assert.deepEqual(await call(server, "GET", "/orders/stream?lastEventId=abc", { token }), {
      status: 400,
      body: issue("lastEventId"),
    });
    assert.deepEqual(await call(server, "GET", "/orders/stream", { token, headers: { "Last-Event-ID": "-1" } }), {
      status: 400,
      body: issue("last-event-id"),
    });
  } finally {
    await server.close();
  }
});

/** The stream route alone on a real KV file and real HTTP, the JWT gate replaced by a fixed wallet and partner. */
function serveRoute(
  kv: Deno.Kv,
  owner: string,
  heartbeatMs: number,
  more: Omit<OrderStreamOptions, "shutdown" | "heartbeatMs" | "gauge"> & { partnerId?: string } = {},
) {
  const shutdown = new AbortController();
  const gauge = { open: 0 };
  const app = new Hono<{ Variables: AuthVariables }>();
  app.onError(onError());
  app.use("*", async (c, next) => {
    c.set("wallet", owner);
    c.set("partnerId", more.partnerId ?? "test-partner");
    await next();
  });
  const opts: OrderStreamOptions = { pollMs: 20, ...more, shutdown: shutdown.signal, heartbeatMs, gauge };
  app.route("/orders", orderStreamRoutes(kv, opts));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return { url: `http://127.0.0.1:${server.addr.port}`, shutdown, server, gauge };
}

Deno.test("SSE route: from now without an id, heartbeats, another process's events, ends on abort and shutdown", async () => {
  await withKv("order-stream-", async (kv, path) => {
    const owner = "0x" + "d4".repeat(20);
    // Heartbeats far apart: only the server noticing a client leave can end its stream below.
    const route = serveRoute(kv, owner, 60_000);
    const otherProcess = await openKv(path);
    try {
      const newEvent = async (i: number, handle: Deno.Kv) => {
        assert.ok(await createOrder(handle, makeOrder(owner, "mint", "pending", i)));
        assert.equal(await sequenceOrderEvents(handle, []), 1);
      };
      await newEvent(0, kv);
      await newEvent(1, kv);
      const fromNow = await SseClient.open(route.url, "/orders/stream");
      const past = await SseClient.open(route.url, "/orders/stream?lastEventId=1");
      const ahead = await SseClient.open(route.url, "/orders/stream", { "Last-Event-ID": "99" });
      // Sequenced by another handle on the file (kv.watch does not see it; the poll does).
      await newEvent(2, otherProcess);
      for (const client of [fromNow, ahead]) assert.deepEqual((await client.take(1)).map((e) => e.id), ["3"]);
      assert.deepEqual((await past.take(2)).map((e) => e.id), ["2", "3"]);

      // Idle: comment lines keep the connection alive, and nothing else comes.
      const beating = serveRoute(kv, owner, 30);
      const idle = await SseClient.open(beating.url, "/orders/stream");
      assert.equal(await idle.read(), "comment");
      assert.equal(await idle.read(), "comment");
      idle.close();
      beating.shutdown.abort();
      await beating.server.shutdown();

      // A client leaving ends its stream on the server; server shutdown ends the others.
      assert.equal(route.gauge.open, 3);
      ahead.close();
      for (let i = 0; i < 500 && route.gauge.open > 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(route.gauge.open, 2, "the server noticed the client leaving");
      route.shutdown.abort();
      assert.equal(await fromNow.next(), null, "the stream ends on server shutdown");
      assert.equal(await past.next(), null);
      await route.server.shutdown();
      assert.equal(route.gauge.open, 0);
    } finally {
      otherProcess.close();
    }
  });
});

Deno.test("SSE: a wallet may hold at most MAX_STREAMS_PER_WALLET open streams; more is 429, other wallets unaffected", async () => {
  const server = await startTestServer();
  const open: Response[] = [];
  try {
    const a = await partner(server);
    const b = await partner(server);
    const connect = (token: string) =>
      fetch(`${server.url}/orders/stream`, { headers: { Authorization: `Bearer ${token}` } });
    // Streams that are opened and never read hold their slots.
    for (let i = 0; i < MAX_STREAMS_PER_WALLET; i++) {
      const res = await connect(a.token);
      assert.equal(res.status, 200);
      open.push(res);
    }
    const refused = await connect(a.token);
    if (refused.status !== 429) open.push(refused);
    assert.equal(refused.status, 429);
    const body = await refused.json();
    assert.deepEqual(body, { success: false, message: API_ERRORS.tooManyStreams.message });
    await checkResponse(server, "GET", "/orders/stream", 429, refused.headers.get("Content-Type"), body);
    const other = await connect(b.token);
    assert.equal(other.status, 200, "another wallet has its own limit");
    open.push(other);

    // A stream that ends frees its slot.
    await open.shift()!.body!.cancel();
    let again: Response | undefined;
    for (let i = 0; i < 500; i++) {
      const res = await connect(a.token);
      if (res.status === 200) {
        again = res;
        break;
      }
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(again, "a slot is free again once a stream ended");
    open.push(again);
  } finally {
    for (const res of open) await res.body?.cancel().catch(() => {});
    await server.close();
  }
});

Deno.test("SSE: the stream limits hold per wallet and per partner across two server processes on one KV; a closed stream frees its slot", async () => {
  // A partner limit small enough to reach with two wallets (docs/partners.md "Limits per partner and per API key":
  // PARTNER_MAX_STREAMS).
  const env = { PARTNER_MAX_STREAMS: "12" };
  const server = await startTestServer(env);
  const peer = await startPeerServer(server, env);
  const open: Response[] = [];
  try {
    const key = await newApiKey(server, "stream-partner");
    const [w1, w2] = [randomWallet(), randomWallet()];
    const t1 = await tokenFor(server, w1, key);
    const t2 = await tokenFor(server, w2, key);
    const other = await tokenFor(server, randomWallet(), await newApiKey(server, "another-partner"));
    const connect = (on: TestServer, token: string) =>
      fetch(`${on.url}/orders/stream`, { headers: { Authorization: `Bearer ${token}` } });
    const accepted = async (on: TestServer, token: string) => {
      const res = await connect(on, token);
      open.push(res);
      assert.equal(res.status, 200, res.ok ? "" : await res.text());
      return res;
    };
    const refused = async (on: TestServer, token: string, message: string) => {
      const res = await connect(on, token);
      if (res.status !== 429) open.push(res);
      assert.equal(res.status, 429, res.ok ? "a stream was opened" : "");
      const body = await res.json();
      assert.deepEqual(body, { success: false, message });
      await checkResponse(on, "GET", "/orders/stream", 429, res.headers.get("Content-Type"), body);
    };

    // One wallet's streams count together whichever process serves them.
    const half = MAX_STREAMS_PER_WALLET / 2;
    for (let i = 0; i < half; i++) await accepted(server, t1);
    for (let i = half; i < MAX_STREAMS_PER_WALLET; i++) await accepted(peer, t1);
    await refused(server, t1, "Too many open event streams for this wallet; close one before opening another");

    // The partner's other wallet has its own wallet limit but shares the partner's 12.
    await accepted(peer, t2);
    await accepted(server, t2);
    await refused(server, t2, "Too many open event streams for this partner; close one before opening another");
    await refused(peer, t2, "Too many open event streams for this partner; close one before opening another");
    // Another partner is not affected.
    await accepted(server, other);

    // A stream that ends (here one the peer serves) frees the partner's slot for every process.
    await open.splice(half, 1)[0].body!.cancel();
    let again: Response | undefined;
    for (let i = 0; i < 500 && !again; i++) {
      const res = await connect(server, t2);
      if (res.status === 200) again = res;
      else await res.body?.cancel();
      if (!again) await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(again, "a slot is free again once a stream ended");
    open.push(again);
  } finally {
    for (const res of open) await res.body?.cancel().catch(() => {});
    await peer.close();
    await server.close();
  }
});

Deno.test("SSE route: a crashed process's stream slots free themselves at their expiry; a live stream renews its slot", async () => {
  await withKv("order-stream-slots-", async (kv, path) => {
    const owner = "0x" + "e5".repeat(20);
    const partnerId = "slot-partner";
    const ttl = 600;
    let clock = Date.now();
    // Route A's clock is the test's, so a crashed holder's expiry is reached by moving it, not by waiting.
    const a = serveRoute(kv, owner, 60_000, { partnerId, maxPerPartner: 2, slotTtlMs: ttl, now: () => clock });
    const crashed = await openKv(path);
    const streams: Response[] = [];
    try {
      // Another process took both of the partner's slots, then died without ending its streams.
      for (let i = 0; i < 2; i++) {
        const taken = await takeStreamSlot(crashed, partnerId, owner, { perWallet: 10, perPartner: 2 }, ttl, clock);
        assert.ok(taken.ok);
      }
      crashed.close();
      const connect = () => fetch(`${a.url}/orders/stream`);
      const refused = await connect();
      assert.equal(refused.status, 429);
      assert.deepEqual(await refused.json(), { success: false, message: API_ERRORS.tooManyPartnerStreams.message });
      clock += ttl; // their expiry
      const first = await connect();
      streams.push(first);
      assert.equal(first.status, 200);

      // A live stream keeps its slot past many lifetimes: its process renews it (route B, the real clock).
      const b = serveRoute(kv, owner, 60_000, { partnerId: "renewing", maxPerPartner: 1, slotTtlMs: ttl });
      try {
        const held = await fetch(`${b.url}/orders/stream`);
        streams.push(held);
        assert.equal(held.status, 200);
        const slot = async () => {
          const slots = await Array.fromAsync(kv.list<StreamSlot>({ prefix: ["order_stream_slot", "renewing"] }));
          assert.equal(slots.length, 1);
          return slots[0].value.expiresAt;
        };
        const firstExpiry = await slot();
        for (let i = 0; i < 600 && await slot() < firstExpiry + 2 * ttl; i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(await slot() >= firstExpiry + 2 * ttl, "the slot was renewed past two lifetimes");
        const more = await fetch(`${b.url}/orders/stream`);
        if (more.status !== 429) streams.push(more);
        assert.equal(more.status, 429, "the renewed slot still counts");
        await more.body?.cancel();
        assert.equal(b.gauge.open, 1, "the stream is still open");
      } finally {
        for (const res of streams.splice(1)) await res.body?.cancel().catch(() => {});
        b.shutdown.abort();
        await b.server.shutdown();
      }

      // A stream the server ends (a graceful shutdown) frees its slot before its response ends.
      a.shutdown.abort();
      await a.server.shutdown();
      const slots = await Array.fromAsync(kv.list<StreamSlot>({ prefix: ["order_stream_slot", partnerId] }));
      assert.deepEqual(slots.filter((e) => e.value.expiresAt > clock), [], "no live slot is left");
    } finally {
      for (const res of streams) await res.body?.cancel().catch(() => {});
      a.shutdown.abort();
      await a.server.shutdown();
    }
  });
});
