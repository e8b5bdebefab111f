/**
 * The partner client (client/mod.ts) against the started service over real HTTP: the token renewed across its expiry
 * (injected clock), a POST whose answer was lost retried with its Idempotency-Key and run once, errors carrying the
 * spec's exact messages, an SSE stream cut mid-way and resumed with no gap or duplicate, a delivery from the real
 * webhook worker verified (rotation included), and cursor paging across concurrent inserts (docs/order-reads.md).
 * The only thing between client and server is a `fetch` that forwards to the real one and cuts where a network would.
 */
import assert from "node:assert/strict";
import { ApiError, createClient, TransportError } from "../client/mod.ts";
import type { ClientOptions, OrderEvent } from "../client/mod.ts";
import { sequenceOrderEvents } from "../kv/order_events.ts";
import { createOrder, updateOrder } from "../kv/orders.ts";
import { webhookSink } from "../kv/webhooks.ts";
import type { Order } from "../model/order.ts";
import { newOrderId } from "../model/order.ts";
import { API_ERRORS, INVALID_ADDRESS_FORMAT, ISSUE_MESSAGES } from "../messages.ts";
import { syntheticOrderEvent } from "./support/order_events.ts";
import { makeOrder } from "./support/orders.ts";
import { call, newApiKey, randomWallet, startTestServer, type TestServer } from "./support/server.ts";

const noSleep = (delays: number[] = []) => (ms: number) => {
  delays.push(ms);
  return Promise.resolve();
};

async function clientFor(server: TestServer, opts: Partial<ClientOptions> = {}) {
  const walletAddress = opts.walletAddress ?? randomWallet();
  const apiKey = opts.apiKey ?? await newApiKey(server);
  return {
    walletAddress,
    apiKey,
    client: createClient({ baseUrl: server.url, apiKey, walletAddress, sleep: noSleep(), ...opts }),
  };
}

/** Every request the client sent: method, path and the headers that matter here. */
function recording(inner: typeof fetch = fetch) {
  const sent: { method: string; path: string; headers: Headers }[] = [];
  const f = ((input: Request) => {
    const url = new URL(input.url);
    sent.push({ method: input.method, path: url.pathname + url.search, headers: new Headers(input.headers) });
    return inner(input);
  }) as typeof fetch;
  return { fetch: f, sent };
}

/** An order of `owner` last changed `agoMs` ago (settled for incremental sync when older than its margin). */
function pastOrder(owner: string, i: number, agoMs: number): Order {
  const at = new Date(Date.now() - agoMs).toISOString();
  return { ...makeOrder(owner, i % 2 ? "mint" : "burn", "completed", i), createdAt: at, updatedAt: at };
}

Deno.test("client: token exchanged once, kept, renewed before expiry (injected clock), never shown", async () => {
  const server = await startTestServer();
  try {
    let clock = Date.now();
    const rec = recording();
    const { client, apiKey } = await clientFor(server, { fetch: rec.fetch, now: () => clock });
    const exchanges = () => rec.sent.filter((r) => r.path.startsWith("/auth/token")).map((r) => r.path);

    assert.deepEqual(await client.mint.listWallets(), []);
    await client.burn.listWallets();
    assert.deepEqual(exchanges(), ["/auth/token"], "one exchange for both calls");
    const expiresAt = client.auth.expiresAtMs!;
    assert.ok(expiresAt > Date.now() + 364 * 86_400_000, "spec 5: a token lasts a year");

    clock = expiresAt - 86_400_000 - 1; // just outside the renewal margin (one day)
    await client.mint.listWallets();
    assert.deepEqual(exchanges(), ["/auth/token"]);

    clock = expiresAt - 3_600_000; // an hour before expiry: renewed first, then the call
    await Promise.all([client.mint.listWallets(), client.orders.page()]);
    assert.deepEqual(exchanges(), ["/auth/token", "/auth/token/refresh"], "one renewal for concurrent calls");
    const last = rec.sent.at(-1)!;
    assert.match(last.headers.get("Authorization") ?? "", /^Bearer ey/);
    assert.ok(rec.sent.filter((r) => r.path.startsWith("/auth")).every((r) => r.headers.get("X-API-Key") === apiKey));
    assert.ok(
      rec.sent.filter((r) => !r.path.startsWith("/auth")).every((r) => !r.headers.has("X-API-Key")),
      "the API key goes to the token endpoints only",
    );
    const secret = apiKey.split(".")[1];
    assert.ok(!JSON.stringify(client).includes(secret) && !Deno.inspect(client, { depth: 10 }).includes(secret));

    // A refused key is an ApiError with the spec's message, and names no secret.
    const bad = createClient({ baseUrl: server.url, apiKey: `${apiKey}x`, walletAddress: randomWallet() });
    const err = await bad.mint.listWallets().catch((e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 403);
    assert.equal(err.message, API_ERRORS.invalidApiKey.message);
    assert.ok(!String(err.stack).includes(secret));
  } finally {
    await server.close();
  }
});

Deno.test("client: a POST whose answer was lost is retried with the same Idempotency-Key and runs once", async () => {
  const server = await startTestServer();
  try {
    let cut = true;
    const answers: Headers[] = [];
    const rec = recording(
      (async (input: Request) => {
        const res = await fetch(input);
        answers.push(res.headers);
        if (cut && new URL(input.url).pathname === "/mint/wallets" && input.method === "POST") {
          cut = false;
          await res.body?.cancel();
          throw new TypeError("connection reset after the request reached the server"); // the answer is lost
        }
        return res;
      }) as typeof fetch,
    );
    const delays: number[] = [];
    const { client } = await clientFor(server, { fetch: rec.fetch, sleep: noSleep(delays), random: () => 0.5 });

    const wallet = await client.mint.createWallet({ chain: "sol", destinationChain: "base" });
    const posts = rec.sent.filter((r) => r.method === "POST" && r.path === "/mint/wallets");
    assert.equal(posts.length, 2);
    const key = posts[0].headers.get("Idempotency-Key");
    assert.ok(key && key === posts[1].headers.get("Idempotency-Key"), "the retry carries the same key");
    assert.equal(answers.at(-1)!.get("Idempotent-Replayed"), "true", "the server answered from its record");
    assert.deepEqual((await client.mint.listWallets()).map((w) => w.address), [wallet.address], "one wallet");
    assert.deepEqual(delays, [125], "one wait, jittered within the first backoff bound (250 ms)");

    // A second, separate request gets its own key: the duplicate pair is refused with spec 7's exact message.
    const err = await client.mint.createWallet({ chain: "sol", destinationChain: "base" }).catch((e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 400);
    assert.equal(err.message, "A wallet already exists for this chain and destination combination");
    const keys = rec.sent.filter((r) => r.method === "POST" && r.path === "/mint/wallets").map((r) =>
      r.headers.get("Idempotency-Key")
    );
    assert.equal(new Set(keys).size, 2);

    // Validation errors carry their issues; a burn address is refused with its chain's message.
    const bad = await client.burn.createWallet({ destinationChain: "sol", destinationAddress: "nope" }).catch((e) => e);
    assert.ok(bad instanceof ApiError);
    switch (bad.message) {
      case "Invalid Solana address format. Must be base58 encoded, 32-44 characters.":
        break;
      default:
        assert.fail(`unexpected message ${bad.message}`);
    }
    assert.equal(bad.message, INVALID_ADDRESS_FORMAT.sol);
  } finally {
    await server.close();
  }
});

Deno.test("client: network errors and 5xx are retried a bounded number of times with growing jittered waits", async () => {
  const server = await startTestServer();
  try {
    const delays: number[] = [];
    let calls = 0;
    const { client } = await clientFor(server, {
      fetch: ((input: Request) => {
        calls++;
        if (new URL(input.url).pathname.startsWith("/auth")) return fetch(input);
        return Promise.resolve(
          new Response('{"success":false,"message":"Failed to retrieve orders"}', { status: 500 }),
        );
      }) as typeof fetch,
      sleep: noSleep(delays),
      random: () => 0.999,
      retry: { attempts: 4, baseDelayMs: 100, maxDelayMs: 250 },
    });
    const err = await client.orders.page().catch((e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 500);
    assert.equal(err.message, API_ERRORS.ordersUnavailable.message);
    assert.deepEqual(delays, [99, 199, 249], "doubling, capped, never above the bound");
    assert.equal(calls, 1 + 4, "the token exchange, then four attempts");

    const down = createClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "k.s",
      walletAddress: randomWallet(),
      sleep: noSleep(),
      retry: { attempts: 3 },
    });
    const unreachable = await down.config.mint().catch((e) => e);
    assert.ok(unreachable instanceof TransportError, String(unreachable));
    assert.match(unreachable.message, /GET \/config\/mint: no answer after 3 attempts/);
  } finally {
    await server.close();
  }
});

Deno.test("client: orders.watch resumes a stream cut mid-event from the last id, with no gap or duplicate", async () => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const connections: Headers[] = [];
    let cutFirst = true;
    const { client, walletAddress } = await clientFor(server, {
      fetch: (async (input: Request) => {
        const res = await fetch(input);
        if (new URL(input.url).pathname !== "/orders/stream") return res;
        connections.push(new Headers(input.headers));
        if (!cutFirst) return res;
        cutFirst = false;
        // The first connection breaks in the middle of the third event: two whole events, then part of one.
        let text = "";
        const decoder = new TextDecoder();
        const cutter = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            text += decoder.decode(chunk, { stream: true });
            const afterSecond = text.indexOf("\n\n", text.indexOf("id: 2\n"));
            if (text.indexOf("id: 2\n") < 0 || afterSecond < 0 || text.indexOf("id: 3\n") < 0) return;
            controller.enqueue(new TextEncoder().encode(text.slice(0, text.indexOf("id: 3\n") - 5)));
            controller.error(new TypeError("connection reset"));
          },
        });
        return new Response(res.body!.pipeThrough(cutter), { status: res.status, headers: res.headers });
      }) as typeof fetch,
    });
    const owner = walletAddress.toLowerCase();
    const ids: string[] = [];
    const add = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const o = makeOrder(owner, "mint", "pending", ids.length);
        ids.push(o.id);
        assert.ok(await createOrder(kv, o));
      }
      await sequenceOrderEvents(kv, []);
    };
    await add(3);

    const got: OrderEvent[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of client.orders.watch({ lastEventId: 0, signal: stop.signal })) {
        got.push(event);
        if (got.length === 3) await add(2); // while the resumed stream is open
        if (got.length === 5) stop.abort();
      }
    })();
    await reading;

    assert.deepEqual(got.map((e) => e.seq), [1, 2, 3, 4, 5]);
    assert.deepEqual(got.map((e) => e.order.id), ids);
    assert.ok(got.every((e) => e.type === "order.pending" && e.owner === owner));
    assert.deepEqual(connections.map((h) => h.get("Last-Event-ID")), ["0", "2"], "resumed after the last whole event");
  } finally {
    await server.close();
  }
});

Deno.test("client: webhooks.verify accepts a real delivery (both secrets while rotating) and refuses forgeries", async () => {
  const server = await startTestServer({ PIPELINE: "on", SWEEP_MS: "20", WEBHOOK_BACKOFF_BASE_MS: "20" });
  const received: { raw: string; headers: Headers }[] = [];
  const hook = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    received.push({ raw: await req.text(), headers: req.headers });
    return new Response("ok");
  });
  try {
    const { client, walletAddress } = await clientFor(server);
    const endpoint = await client.webhooks.createEndpoint({ url: `http://127.0.0.1:${hook.addr.port}/hook` });
    const rotated = await client.raw.POST("/webhooks/endpoints/{id}/rotate-secret", {
      params: { path: { id: endpoint.id } },
    });
    const fresh = rotated.data!.data.secret;
    const event = syntheticOrderEvent(walletAddress.toLowerCase(), 1, newOrderId(), "pending");
    for (;;) { // what the sequencer does with an event: the webhook sink's writes in one atomic
      const addTo = await webhookSink().prepare(server.services.kv, [event]);
      const atomic = server.services.kv.atomic();
      addTo(atomic, event);
      if ((await atomic.commit()).ok) break;
    }
    for (let i = 0; received.length === 0; i++) {
      assert.ok(i < 1000, "the delivery arrives");
      await new Promise((r) => setTimeout(r, 10));
    }
    const { raw, headers } = received[0];
    const t = Number(headers.get("webhook-timestamp"));

    assert.equal(await client.webhooks.verify(raw, headers, fresh), true, "the new secret");
    assert.equal(await client.webhooks.verify(raw, headers, endpoint.secret), true, "the old one, within 24 h");
    assert.equal(await client.webhooks.verify(raw, headers, ["whsec_other", fresh]), true, "any secret held");
    const nodeStyle = Object.fromEntries(headers.entries());
    assert.equal(await client.webhooks.verify(new TextEncoder().encode(raw), nodeStyle, fresh), true, "bytes, object");
    assert.equal(await client.webhooks.verify(raw, headers, "whsec_" + "0".repeat(64)), false, "a wrong secret");
    assert.equal(await client.webhooks.verify(raw.replace("500000000", "500000001"), headers, fresh), false);
    assert.equal(await client.webhooks.verify(raw, headers, fresh, { nowSec: t + 301 }), false, "too old");
    assert.equal(await client.webhooks.verify(raw, headers, fresh, { nowSec: t - 301 }), false, "from the future");
    assert.equal(await client.webhooks.verify(raw, new Headers(), fresh), false, "unsigned");
    assert.deepEqual(JSON.parse(raw), event);
  } finally {
    await server.close();
    await hook.shutdown();
  }
});

Deno.test("client: cursor paging across concurrent inserts misses and repeats no order; updatedSince; spec paging unchanged", async () => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const { client, walletAddress } = await clientFor(server);
    const owner = walletAddress.toLowerCase();
    const seeded: string[] = [];
    for (let i = 0; i < 230; i++) {
      const o = pastOrder(owner, i, 600_000 - i * 100);
      seeded.push(o.id);
      assert.ok(await createOrder(kv, o));
    }

    // Walk everything while new orders keep arriving (one per 25 read).
    const seen: string[] = [];
    const inserted: string[] = [];
    for await (const order of client.orders.list({ limit: "40" })) {
      seen.push(order.id);
      if (seen.length % 25 === 0) {
        const o = makeOrder(owner, "mint", "pending", 1000 + inserted.length);
        inserted.push(o.id);
        assert.ok(await createOrder(kv, o));
      }
    }
    assert.equal(new Set(seen).size, seen.length, "no order twice");
    assert.deepEqual(seen.slice(0, seeded.length), seeded, "every seeded order, oldest change first");

    // Syncing on from where the walk ended finds the inserted ones once they settle, and nothing twice.
    const synced = new Set(seen);
    let cursor = (await client.orders.sync({ updatedSince: new Date(Date.now() - 600_000).toISOString() })).nextCursor;
    for (let i = 0; !inserted.every((id) => synced.has(id)); i++) {
      assert.ok(i < 200, `all inserted orders arrive (missing ${inserted.filter((id) => !synced.has(id))})`);
      await new Promise((r) => setTimeout(r, 50));
      const next = await client.orders.sync({ cursor });
      for (const o of next.orders) {
        assert.ok(!synced.has(o.id) || !seeded.includes(o.id), `seeded order ${o.id} again`);
        synced.add(o.id);
      }
      cursor = next.nextCursor;
    }

    // A change moves an order to the end: a sync from before the change sees it, one from after does not.
    const since = new Date(Date.now() - 1).toISOString();
    await updateOrder(kv, seeded[5], (o) => ({ ...o, errorMessage: null }));
    const before = await client.orders.page({ updatedSince: since, limit: "100" });
    assert.ok(before.pagination.nextCursor, "sync answers carry a cursor");
    assert.ok(!before.orders.some((o) => o.id === seeded[5]), "not served before it settles");
    for (let i = 0;; i++) {
      const page = await client.orders.page({ updatedSince: since, limit: "100" });
      if (page.orders.some((o) => o.id === seeded[5])) {
        assert.ok(page.orders.every((o) => o.updatedAt! >= since));
        break;
      }
      assert.ok(i < 200, "the changed order arrives");
      await new Promise((r) => setTimeout(r, 50));
    }
    const filtered = await client.orders.page({ updatedSince: "2000-01-01T00:00:00Z", type: "burn", limit: "100" });
    assert.ok(filtered.orders.length > 0 && filtered.orders.every((o) => o.type === "burn"));

    // The spec's paging keeps its exact fields, newest first.
    const token = await client.auth.token();
    const spec = await call(server, "GET", "/orders?limit=3&offset=2", { token });
    assert.equal(spec.status, 200);
    assert.deepEqual(Object.keys(spec.body.data.pagination), ["limit", "offset", "total", "hasMore"]);
    assert.deepEqual(spec.body.data.pagination, { limit: 3, offset: 2, total: 230 + inserted.length, hasMore: true });

    // A cursor nobody issued, and an offset beside a cursor, are validation errors that name the field.
    const forged = await client.orders.page({ cursor: "bm9wZQ" }).catch((e) => e);
    assert.ok(forged instanceof ApiError);
    assert.equal(forged.message, API_ERRORS.validationError.message);
    assert.deepEqual(forged.issues, [{ path: ["cursor"], message: ISSUE_MESSAGES.invalidCursor }]);
    const mixed = await client.orders.page({ cursor, offset: "5" }).catch((e) => e);
    assert.deepEqual(mixed.issues, [{ path: ["offset"], message: ISSUE_MESSAGES.offsetWithCursor }]);
  } finally {
    await server.close();
  }
});
