/**
 * Signed webhooks (docs/webhooks.md) over real HTTP: the service started on a real KV file with its
 * pipeline runtime (whose webhook worker sends the deliveries) and a real receiver on 127.0.0.1.
 * Events enter through the webhook fan-out exactly as the sequencer calls it (`emit`), or from real orders.
 */
import assert from "node:assert/strict";
import { buildServices, createApp, pipelineRuntime } from "../app.ts";
import { loadConfig } from "../config/env.ts";
import { loadSecrets } from "../config/secrets.ts";
import { newOrderId, type OrderStatus } from "../model/order.ts";
import type { OrderEvent } from "../kv/order_events.ts";
import { MAX_ENDPOINTS_PER_WALLET, webhookSink } from "../kv/webhooks.ts";
import { API_ERRORS, webhookEndpointLimit } from "../messages.ts";
import { checkWebhookUrl } from "../routes/webhooks.ts";
import { backoffMs, DEFAULT_WEBHOOK_OPTIONS, WebhookDeliveryWorker } from "../actors/webhook_delivery.ts";
import { listOwnerEvents } from "../kv/order_events.ts";
import { depositAddress, FAST_PIPELINE, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import {
  call,
  newApiKey,
  randomWallet,
  startTestServer,
  TEST_BASE_URL,
  type TestServer,
  tokenFor,
} from "./support/server.ts";
import { syntheticOrderEvent } from "./support/order_events.ts";

// Fast retries: the first retry after about 20 ms; requests time out after 2 s.
const WEBHOOK_ENV = { PIPELINE: "on", SWEEP_MS: "20", WEBHOOK_BACKOFF_BASE_MS: "20", WEBHOOK_TIMEOUT_MS: "2000" };

// ---- the verification snippet of docs/webhooks.md, run as written ----

type Verify = (secret: string, header: string | null, rawBody: string, tol?: number, nowSec?: number) => boolean;
async function docSnippet(): Promise<Verify> {
  const doc = await Deno.readTextFile(new URL("../docs/webhooks.md", import.meta.url));
  const code = /```ts\n([\s\S]*?export function verifyWebhook[\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(code, "docs/webhooks.md has the verifyWebhook snippet");
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(file, code);
  const mod = await import(`file://${file}`);
  await Deno.remove(file);
  return mod.verifyWebhook;
}

// ---- a real receiver ----

interface Received {
  raw: string;
  event: OrderEvent;
  headers: Headers;
  /** The status the receiver answered. */
  answered: number;
}

function receiver(answer: (r: Omit<Received, "answered">, all: Received[]) => number | Promise<number> = () => 200) {
  const requests: Received[] = [];
  let arrived = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    arrived++;
    const raw = await req.text();
    const r = { raw, event: JSON.parse(raw) as OrderEvent, headers: req.headers };
    const status = await answer(r, requests);
    requests.push({ ...r, answered: status });
    return new Response(status === 200 ? "ok" : "no", { status });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    requests,
    /** Requests received, answered or not. */
    arrived: () => arrived,
    delivered: () => requests.filter((r) => r.answered >= 200 && r.answered < 300),
    close: () => server.shutdown(),
  };
}

type Falsy = false | null | undefined | 0 | "";
async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 10_000): Promise<Exclude<T, Falsy>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as Exclude<T, Falsy>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// ---- events, as the sequencer hands them to the fan-out ----

const seqs = new Map<string, number>();

function orderEvent(owner: string, orderId: string, status: OrderStatus): OrderEvent {
  const seq = (seqs.get(owner) ?? 0) + 1;
  seqs.set(owner, seq);
  return syntheticOrderEvent(owner, seq, orderId, status);
}

/** What the sequencer does with a batch: the sink's writes for each event in one atomic. */
async function emit(kv: Deno.Kv, events: OrderEvent[]) {
  for (;;) {
    const add = await webhookSink().prepare(kv, events);
    const atomic = kv.atomic();
    for (const e of events) add(atomic, e);
    if ((await atomic.commit()).ok) return;
  }
}

async function partnerWith(server: TestServer) {
  const wallet = randomWallet();
  return { wallet, owner: wallet.toLowerCase(), token: await tokenFor(server, wallet) };
}

async function register(server: TestServer, token: string, url: string) {
  const res = await call(server, "POST", "/webhooks/endpoints", { token, body: { url } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data as { id: string; secret: string; url: string };
}

async function deliveries(server: TestServer, token: string, endpointId: string) {
  const res = await call(server, "GET", `/webhooks/endpoints/${endpointId}/deliveries?limit=100`, { token });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  // deno-lint-ignore no-explicit-any
  return res.body.data.deliveries as any[];
}

const statusesOf = (rs: Received[], orderId: string) =>
  rs.filter((r) => r.event.order.id === orderId).map((r) => r.event.order.status);

// ---- endpoints ----

Deno.test("webhook endpoints: register shows the whsec_ secret once, list hides it, delete; scoped to the wallet", async () => {
  const server = await startTestServer();
  try {
    const a = await partnerWith(server);
    const b = await partnerWith(server);
    const res = await call(server, "POST", "/webhooks/endpoints", {
      token: a.token,
      body: { url: "https://hooks.example.com/orders?k=1", description: "prod" },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.success, true);
    const created = res.body.data;
    assert.match(created.secret, /^whsec_[0-9a-f]{64}$/);
    assert.equal(created.url, "https://hooks.example.com/orders?k=1");
    assert.equal(created.description, "prod");
    assert.equal(created.previousSecretExpiresAt, null);

    const list = await call(server, "GET", "/webhooks/endpoints", { token: a.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.endpoints.length, 1);
    assert.equal(list.body.data.endpoints[0].id, created.id);
    assert.ok(!JSON.stringify(list.body).includes("whsec_"), "no secret in the listing");
    assert.equal((await call(server, "GET", "/webhooks/endpoints", { token: b.token })).body.data.endpoints.length, 0);

    // Another wallet's endpoint is not found, for every route that names it.
    const notFound = { success: false, message: API_ERRORS.webhookEndpointNotFound.message };
    for (
      const [method, path] of [
        ["DELETE", `/webhooks/endpoints/${created.id}`],
        ["POST", `/webhooks/endpoints/${created.id}/rotate-secret`],
        ["GET", `/webhooks/endpoints/${created.id}/deliveries`],
        ["POST", `/webhooks/endpoints/${created.id}/deliveries/${newOrderId()}/replay`],
        ["DELETE", `/webhooks/endpoints/${crypto.randomUUID()}`],
      ]
    ) {
      const r = await call(server, method, path, { token: b.token });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(r.body, notFound);
    }
    // A bad delivery-log limit.
    for (const limit of ["0", "101", "abc"]) {
      const bad = await call(server, "GET", `/webhooks/endpoints/${created.id}/deliveries?limit=${limit}`, {
        token: a.token,
      });
      assert.equal(bad.status, 400, limit);
      assert.equal(bad.body.message, API_ERRORS.validationError.message);
      assert.deepEqual(bad.body.error.issues.map((i: { path: string[] }) => i.path), [["limit"]]);
    }
    // Unknown delivery of one's own endpoint.
    const r = await call(server, "POST", `/webhooks/endpoints/${created.id}/deliveries/${newOrderId()}/replay`, {
      token: a.token,
    });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { success: false, message: API_ERRORS.webhookDeliveryNotFound.message });

    const del = await call(server, "DELETE", `/webhooks/endpoints/${created.id}`, { token: a.token });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { success: true, data: { id: created.id, deleted: true } });
    assert.equal((await call(server, "GET", "/webhooks/endpoints", { token: a.token })).body.data.endpoints.length, 0);
    assert.equal((await call(server, "DELETE", `/webhooks/endpoints/${created.id}`, { token: a.token })).status, 404);

    // The JWT gate covers every route.
    const anon = await call(server, "GET", "/webhooks/endpoints");
    assert.equal(anon.status, 401);
    assert.equal(anon.body.message, API_ERRORS.missingAuthorization.message);
  } finally {
    await server.close();
  }
});

Deno.test("webhook endpoints: every bad URL or body is refused with its message and stores nothing", async () => {
  const server = await startTestServer();
  try {
    const { token } = await partnerWith(server);
    const refused = async (body: unknown, message: string, rawBody?: string) => {
      const res = await call(server, "POST", "/webhooks/endpoints", rawBody ? { token, rawBody } : { token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.success, false);
      assert.equal(res.body.message, message, JSON.stringify(body));
      return res.body;
    };
    await refused({ url: "not a url" }, API_ERRORS.webhookUrlInvalid.message);
    await refused({ url: "ftp://hooks.example.com/x" }, API_ERRORS.webhookUrlInvalid.message);
    await refused({ url: "http://hooks.example.com/x" }, API_ERRORS.webhookUrlNotHttps.message);
    await refused({ url: "http://10.0.0.5/x" }, API_ERRORS.webhookUrlNotHttps.message);
    await refused({ url: "https://user:pw@hooks.example.com/x" }, API_ERRORS.webhookUrlCredentials.message);
    await refused({ url: "http://user@127.0.0.1/x" }, API_ERRORS.webhookUrlCredentials.message);
    const missing = await refused({}, API_ERRORS.validationError.message);
    assert.deepEqual(missing.error.issues, [{ path: ["url"], message: "Required" }]);
    await refused({ url: "https://x.example/" + "a".repeat(2048) }, API_ERRORS.validationError.message);
    await refused({ url: "https://x.example/", description: "d".repeat(201) }, API_ERRORS.validationError.message);
    await refused({ url: 42 }, API_ERRORS.validationError.message);
    await refused(undefined, API_ERRORS.invalidRequestBody.message, "{not json");
    const textBody = await fetch(`${server.url}/webhooks/endpoints`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/plain" },
      body: JSON.stringify({ url: "https://hooks.example.com/x" }),
    });
    assert.equal(textBody.status, 400);
    assert.equal((await textBody.json()).message, API_ERRORS.invalidRequestBody.message);
    assert.equal((await call(server, "GET", "/webhooks/endpoints", { token })).body.data.endpoints.length, 0);

    // Sim mode accepts plain http to loopback (tests); at most MAX_ENDPOINTS_PER_WALLET endpoints.
    for (let i = 0; i < MAX_ENDPOINTS_PER_WALLET; i++) await register(server, token, `http://127.0.0.1:9/h${i}`);
    await refused({ url: "https://hooks.example.com/11" }, webhookEndpointLimit(MAX_ENDPOINTS_PER_WALLET).message);
    const list = await call(server, "GET", "/webhooks/endpoints", { token });
    assert.equal(list.body.data.endpoints.length, MAX_ENDPOINTS_PER_WALLET);
  } finally {
    await server.close();
  }
});

Deno.test("webhook endpoints: a partner may register at most PARTNER_MAX_WEBHOOK_ENDPOINTS across its wallets; one more is 400 and stores nothing", async () => {
  // A partner limit small enough to reach with two wallets (docs/partners.md "Limits per partner and per API key":
  // PARTNER_MAX_WEBHOOK_ENDPOINTS).
  const server = await startTestServer({ PARTNER_MAX_WEBHOOK_ENDPOINTS: "12" });
  try {
    const key = await newApiKey(server, "hook-partner");
    const t1 = await tokenFor(server, randomWallet(), key);
    const t2 = await tokenFor(server, randomWallet(), key);
    const other = await tokenFor(server, randomWallet(), await newApiKey(server, "another-partner"));
    const count = async (token: string) =>
      (await call(server, "GET", "/webhooks/endpoints", { token })).body.data.endpoints.length;

    const first = [];
    for (let i = 0; i < MAX_ENDPOINTS_PER_WALLET; i++) {
      first.push(await register(server, t1, `http://127.0.0.1:9/a${i}`));
    }
    await register(server, t2, "http://127.0.0.1:9/b0");
    await register(server, t2, "http://127.0.0.1:9/b1");
    const refused = await call(server, "POST", "/webhooks/endpoints", {
      token: t2,
      body: { url: "http://127.0.0.1:9/b2" },
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.deepEqual(refused.body, { success: false, message: "A partner may register at most 12 webhook endpoints" });
    assert.equal(await count(t2), 2, "nothing stored");
    // Another partner is not affected.
    await register(server, other, "http://127.0.0.1:9/c0");

    // Deleting an endpoint (of any of the partner's wallets) frees a slot.
    const del = await call(server, "DELETE", `/webhooks/endpoints/${first[0].id}`, { token: t1 });
    assert.equal(del.status, 200);
    await register(server, t2, "http://127.0.0.1:9/b2");
    assert.equal(await count(t2), 3);
  } finally {
    await server.close();
  }
});

Deno.test("webhook URL rules: live mode refuses http, localhost and loopback/private/link-local IP literals (SSRF)", () => {
  const live = (url: string) => checkWebhookUrl(url, "live")?.message ?? null;
  for (
    const url of [
      "https://localhost/x",
      "https://api.localhost/x",
      "https://127.0.0.1/x",
      "https://127.1.2.3:8443/x",
      "https://10.1.2.3/x",
      "https://172.16.0.1/x",
      "https://172.31.255.255/x",
      "https://192.168.1.1/x",
      "https://169.254.169.254/latest/meta-data",
      "https://100.64.0.1/x",
      "https://0.0.0.0/x",
      "https://2130706433/x", // 127.0.0.1 written as one number
      "https://0x7f.0.0.1/x",
      "https://[::1]/x",
      "https://[::]/x",
      "https://[fd00::1]/x",
      "https://[fe80::1]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://[::ffff:169.254.169.254]/x",
    ]
  ) assert.equal(live(url), API_ERRORS.webhookUrlPrivateHost.message, url);
  assert.equal(live("http://127.0.0.1:8080/x"), API_ERRORS.webhookUrlNotHttps.message);
  assert.equal(live("http://hooks.example.com/x"), API_ERRORS.webhookUrlNotHttps.message);
  for (
    const url of ["https://hooks.example.com/x", "https://8.8.8.8/x", "https://172.32.0.1/x", "https://[2001:db8::1]/x"]
  ) {
    assert.equal(live(url), null, url);
  }
  // sim and devnet: http to loopback only (tests and local development).
  for (const mode of ["sim", "devnet"] as const) {
    assert.equal(checkWebhookUrl("http://127.0.0.1:8080/x", mode), null);
    assert.equal(checkWebhookUrl("http://localhost:8080/x", mode), null);
    assert.equal(checkWebhookUrl("http://[::1]:8080/x", mode), null);
    assert.equal(checkWebhookUrl("http://192.168.1.1/x", mode), API_ERRORS.webhookUrlNotHttps);
  }
});

Deno.test("webhook URL rules: live mode refuses a trailing-dot localhost and IPv6 forms that embed an internal IPv4 (SSRF)", () => {
  const live = (url: string) => checkWebhookUrl(url, "live")?.message ?? null;
  for (
    const url of [
      "https://localhost./x", // the absolute form of localhost: resolves to loopback
      "https://localhost%2e/x",
      "https://api.localhost./x",
      "https://[::127.0.0.1]/x", // IPv4-compatible ::/96
      "https://[::a9fe:a9fe]/x",
      "https://[64:ff9b::169.254.169.254]/x", // NAT64: a gateway forwards it to the IPv4 address
      "https://[64:ff9b::10.0.0.1]/x",
      "https://[::ffff:0:127.0.0.1]/x", // IPv4-translated
      "https://[fec0::1]/x", // deprecated site-local
    ]
  ) assert.equal(live(url), API_ERRORS.webhookUrlPrivateHost.message, url);
  // Public addresses in the same IPv6 forms stay accepted, as does a public name written with its trailing dot.
  for (const url of ["https://[64:ff9b::8.8.8.8]/x", "https://hooks.example.com./x"]) {
    assert.equal(live(url), null, url);
  }
});

// ---- deliveries ----

Deno.test("webhook backoff: 10 s doubling with jitter within 20%, capped at 1 h; retries span more than 24 h", () => {
  const { backoffBaseMs: base, backoffMaxMs: max, giveUpMs } = DEFAULT_WEBHOOK_OPTIONS;
  assert.equal(base, 10_000);
  assert.equal(max, 3600_000);
  assert.equal(giveUpMs, 24 * 3600_000);
  for (let n = 1; n <= 12; n++) {
    const plain = Math.min(max, base * 2 ** (n - 1));
    assert.equal(backoffMs(n, base, max, () => 0.5), plain, `attempt ${n} without jitter`);
    assert.ok(backoffMs(n, base, max, () => 0) >= Math.round(plain * 0.8));
    assert.ok(backoffMs(n, base, max, () => 0.999) <= Math.min(max, Math.round(plain * 1.2)));
  }
  assert.equal(backoffMs(1000, base, max, () => 0.999), max, "never above the cap");
  // With the shortest jitter, the attempts needed to pass 24 h: a delivery is tried until then (then failed).
  let elapsed = 0;
  let attempts = 1;
  while (elapsed < giveUpMs) elapsed += backoffMs(attempts++, base, max, () => 0);
  assert.ok(attempts > 20 && attempts < 40, `${attempts} attempts over 24 h`);
});

Deno.test("webhook delivery: the signed request verifies with the docs' snippet and fails with a wrong secret", async () => {
  const verifyWebhook = await docSnippet();
  const server = await startTestServer(WEBHOOK_ENV);
  const hook = receiver();
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    const event = orderEvent(p.owner, newOrderId(), "pending");
    await emit(server.services.kv, [event]);
    const [got] = await waitFor("the delivery", () => hook.delivered().length === 1 && hook.delivered());

    assert.deepEqual(JSON.parse(got.raw), event, "the body is the OrderEvent as is");
    assert.equal(got.headers.get("content-type"), "application/json");
    assert.equal(got.headers.get("webhook-id"), event.id);
    const t = got.headers.get("webhook-timestamp")!;
    assert.match(t, /^\d{10}$/);
    const signature = got.headers.get("webhook-signature")!;
    assert.match(signature, new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));
    assert.equal(verifyWebhook(endpoint.secret, signature, got.raw), true);
    assert.equal(verifyWebhook("whsec_" + "0".repeat(64), signature, got.raw), false, "wrong secret");
    assert.equal(verifyWebhook(endpoint.secret, signature, got.raw.replace("500000000", "500000001")), false);
    assert.equal(verifyWebhook(endpoint.secret, signature, got.raw, 300, Number(t) + 301), false, "too old");

    const [logged] = await waitFor("the log", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds[0]?.state === "delivered" && ds;
    });
    assert.equal(logged.eventId, event.id);
    assert.equal(logged.eventType, "order.pending");
    assert.equal(logged.orderId, event.order.id);
    assert.equal(logged.attemptCount, 1);
    assert.equal(logged.attempts[0].status, 200);
    assert.equal(logged.attempts[0].error, null);
    assert.equal(typeof logged.attempts[0].latencyMs, "number");
    assert.equal(logged.nextAttemptAt, null);
    assert.equal(got.headers.get("webhook-delivery-id"), logged.id);
  } finally {
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook delivery: a receiver failing 3 times gets the event after retries, each attempt logged", async () => {
  const server = await startTestServer(WEBHOOK_ENV);
  const hook = receiver((_r, all) => (all.length < 3 ? 503 : 200));
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    const event = orderEvent(p.owner, newOrderId(), "completed");
    await emit(server.services.kv, [event]);
    await waitFor("the delivery", () => hook.delivered().length === 1);
    assert.deepEqual(hook.requests.map((r) => r.answered), [503, 503, 503, 200]);
    assert.ok(hook.requests.every((r) => r.event.id === event.id));
    const [d] = await waitFor("the log", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds[0]?.state === "delivered" && ds;
    });
    assert.equal(d.attemptCount, 4);
    assert.deepEqual(d.attempts.map((a: { status: number }) => a.status), [503, 503, 503, 200]);
  } finally {
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook delivery: in order per order under failures, while other orders and endpoints proceed", async () => {
  const server = await startTestServer(WEBHOOK_ENV);
  const orderA = newOrderId();
  const orderB = newOrderId();
  // Order A's events fail until order B's last event has arrived, then each of A's fails once more.
  const failedOnce = new Set<string>();
  const hook = receiver((r, all) => {
    if (r.event.order.id !== orderA) return 200;
    const bDone = all.some((x) => x.event.order.id === orderB && x.event.order.status === "completed");
    if (!bDone || !failedOnce.has(r.event.id)) {
      failedOnce.add(r.event.id);
      return 500;
    }
    return 200;
  });
  const other = receiver(); // a second endpoint of the same wallet, always up
  try {
    const p = await partnerWith(server);
    await register(server, p.token, hook.url);
    await register(server, p.token, other.url);
    const statuses: OrderStatus[] = ["pending", "processing", "minting", "completed"];
    // Interleaved, in separate batches, as the sequencer would hand them over.
    for (const status of statuses) {
      await emit(server.services.kv, [orderEvent(p.owner, orderA, status)]);
      await emit(server.services.kv, [orderEvent(p.owner, orderB, status)]);
    }
    await waitFor("all deliveries", () => hook.delivered().length === 8 && other.delivered().length === 8);
    assert.deepEqual(statusesOf(hook.delivered(), orderA), statuses);
    assert.deepEqual(statusesOf(hook.delivered(), orderB), statuses);
    assert.deepEqual(statusesOf(other.delivered(), orderA), statuses);
    // Every request for order A (failed or not) came in order: never an event before the previous one was delivered.
    const seen = hook.requests.filter((r) => r.event.order.id === orderA);
    for (let i = 1; i < seen.length; i++) {
      const prev = statuses.indexOf(seen[i - 1].event.order.status);
      const cur = statuses.indexOf(seen[i].event.order.status);
      assert.ok(
        cur === prev || (cur === prev + 1 && seen[i - 1].answered === 200),
        JSON.stringify(seen.map((s) => [s.event.order.status, s.answered])),
      );
    }
    // B was not held back by A: all of B arrived before any of A's events succeeded.
    const firstA = hook.requests.findIndex((r) => r.event.order.id === orderA && r.answered === 200);
    const lastB = hook.requests.findLastIndex((r) => r.event.order.id === orderB);
    assert.ok(lastB < firstA);
  } finally {
    await server.close();
    await hook.close();
    await other.close();
  }
});

Deno.test("webhook delivery: two workers on one KV never send the same attempt twice (lease)", async () => {
  const server = await startTestServer({ PIPELINE: "off" });
  const hook = receiver();
  const opts = {
    pollMs: 5,
    concurrency: 8,
    perEndpoint: 8,
    timeoutMs: 2000,
    backoffBaseMs: 10,
    backoffMaxMs: 1000,
    giveUpMs: 3600_000,
  };
  const workers = [1, 2].map((i) => new WebhookDeliveryWorker(server.services.kv, `w${i}`, opts, () => {}));
  try {
    const p = await partnerWith(server);
    await register(server, p.token, hook.url);
    const events = Array.from({ length: 30 }, () => orderEvent(p.owner, newOrderId(), "pending"));
    await emit(server.services.kv, events);
    await waitFor("every event", async () => {
      await Promise.all(workers.map((w) => w.tick()));
      return hook.requests.length >= 30;
    });
    await Promise.all(workers.map((w) => w.stop()));
    assert.equal(hook.requests.length, 30, "each event sent once");
    assert.deepEqual(new Set(hook.requests.map((r) => r.event.id)).size, 30);
    assert.ok(workers.every((w) => w.delivered > 0), "both workers took part");
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await server.close();
    await hook.close();
  }
});

/** Starts the service on an existing KV file (its secrets beside it); close() keeps the files. */
async function startOn(kvPath: string) {
  const config = loadConfig({ KV_PATH: kvPath, BASE_URL: TEST_BASE_URL, ...WEBHOOK_ENV });
  const services = await buildServices(config, await loadSecrets(config, () => {}));
  services.pipeline!.log = () => {};
  const runtime = pipelineRuntime(services)!;
  runtime.start();
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, createApp(services).fetch);
  return {
    url: `http://127.0.0.1:${http.addr.port}`,
    services,
    pipeline: runtime,
    dir: config.dataDir,
    kvPath,
    async close() {
      await runtime.stop();
      await http.shutdown();
      services.kv.close();
    },
  } satisfies TestServer;
}

Deno.test("webhook delivery: a restart on the same KV file loses nothing and keeps the order", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webhooks-restart-" });
  const kvPath = `${dir}/kv.sqlite3`;
  let up = false;
  const hook = receiver(() => (up ? 200 : 503));
  try {
    let server = await startOn(kvPath);
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    const orders = [newOrderId(), newOrderId()];
    for (const status of ["pending", "processing", "completed"] as const) {
      await emit(server.services.kv, orders.map((o) => orderEvent(p.owner, o, status)));
    }
    await waitFor("failed attempts", () => hook.requests.length >= 4);
    await server.close(); // KV closed, HTTP down, worker stopped
    up = true;
    server = await startOn(kvPath);
    try {
      await waitFor("every event", () => hook.delivered().length === 6);
      for (const o of orders) assert.deepEqual(statusesOf(hook.delivered(), o), ["pending", "processing", "completed"]);
      const ds = await waitFor("the log", async () => {
        const ds = await deliveries(server, p.token, endpoint.id);
        return ds.length === 6 && ds.every((d) => d.state === "delivered") && ds;
      });
      assert.ok(ds.some((d) => d.attempts.some((a: { status: number }) => a.status === 503)));
    } finally {
      await server.close();
    }
  } finally {
    await hook.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webhook rotation: the new and the old secret both sign for 24 h, then only the new one", async () => {
  const verifyWebhook = await docSnippet();
  const server = await startTestServer(WEBHOOK_ENV);
  const hook = receiver();
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    const rotated = await call(server, "POST", `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { token: p.token });
    assert.equal(rotated.status, 200);
    const fresh = rotated.body.data.secret as string;
    assert.match(fresh, /^whsec_[0-9a-f]{64}$/);
    assert.notEqual(fresh, endpoint.secret);
    assert.equal(rotated.body.data.id, endpoint.id);
    assert.ok(rotated.body.data.previousSecretExpiresAt);
    const list = await call(server, "GET", "/webhooks/endpoints", { token: p.token });
    assert.ok(!JSON.stringify(list.body).includes("whsec_"));
    assert.equal(list.body.data.endpoints[0].previousSecretExpiresAt, rotated.body.data.previousSecretExpiresAt);

    await emit(server.services.kv, [orderEvent(p.owner, newOrderId(), "pending")]);
    const [first] = await waitFor("the delivery", () => hook.delivered().length === 1 && hook.delivered());
    const sig = first.headers.get("webhook-signature")!;
    assert.equal(sig.match(/v1=/g)?.length, 2, sig);
    assert.ok(verifyWebhook(fresh, sig, first.raw), "the new secret verifies");
    assert.ok(verifyWebhook(endpoint.secret, sig, first.raw), "the old secret still verifies");

    // 24 hours and a minute later (the worker's injected clock), only the new secret signs.
    const worker = server.pipeline!.webhooks!;
    worker.now = () => Date.now() + 24 * 3600_000 + 60_000;
    await emit(server.services.kv, [orderEvent(p.owner, newOrderId(), "pending")]);
    const second = await waitFor("the delivery", () => hook.delivered()[1]);
    const sig2 = second.headers.get("webhook-signature")!;
    const t = Number(second.headers.get("webhook-timestamp"));
    assert.equal(sig2.match(/v1=/g)?.length, 1, sig2);
    assert.ok(verifyWebhook(fresh, sig2, second.raw, 300, t));
    assert.ok(!verifyWebhook(endpoint.secret, sig2, second.raw, 300, t));
  } finally {
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook replay: a new delivery of the same event, queued behind the order's pending ones", async () => {
  const server = await startTestServer(WEBHOOK_ENV);
  const hook = receiver();
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    const event = orderEvent(p.owner, newOrderId(), "completed");
    await emit(server.services.kv, [event]);
    const [original] = await waitFor("the delivery", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds[0]?.state === "delivered" && ds;
    });
    const res = await call(server, "POST", `/webhooks/endpoints/${endpoint.id}/deliveries/${original.id}/replay`, {
      token: p.token,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.replayOf, original.id);
    assert.equal(res.body.data.eventId, event.id);
    assert.notEqual(res.body.data.id, original.id);
    assert.equal(res.body.data.state, "pending");
    await waitFor("the replay", () => hook.delivered().length === 2);
    const [a, b] = hook.delivered();
    assert.equal(a.raw, b.raw, "same body");
    assert.equal(b.headers.get("webhook-id"), event.id, "same Webhook-Id");
    assert.equal(b.headers.get("webhook-delivery-id"), res.body.data.id);
    const ds = await waitFor("the log", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds.length === 2 && ds.every((d) => d.state === "delivered") && ds;
    });
    assert.equal(ds[0].id, res.body.data.id, "newest first");

    // Another wallet cannot replay it.
    const other = await partnerWith(server);
    const refused = await call(server, "POST", `/webhooks/endpoints/${endpoint.id}/deliveries/${original.id}/replay`, {
      token: other.token,
    });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.message, API_ERRORS.webhookEndpointNotFound.message);
  } finally {
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook give-up: a delivery failing for 24 h (injected clock) is failed and the order's next event proceeds", async () => {
  const server = await startTestServer(WEBHOOK_ENV);
  const orderId = newOrderId();
  // The first event is refused forever; the later ones are accepted.
  const hook = receiver((r) => (r.event.order.status === "pending" ? 500 : 200));
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    await emit(server.services.kv, [orderEvent(p.owner, orderId, "pending")]);
    await emit(server.services.kv, [orderEvent(p.owner, orderId, "completed")]);
    await waitFor("a few failed attempts", () => hook.requests.length >= 3);
    assert.equal(hook.delivered().length, 0, "the next event waits behind the failing one");
    const waiting = await deliveries(server, p.token, endpoint.id);
    const next = waiting.find((d) => d.eventType === "order.completed");
    assert.equal(next.state, "pending");
    assert.equal(next.nextAttemptAt, null, "waiting for the earlier event");

    server.pipeline!.webhooks!.now = () => Date.now() + 24 * 3600_000 + 1000;
    await waitFor("the next event", () => hook.delivered().length === 1);
    assert.equal(hook.delivered()[0].event.order.status, "completed");
    const ds = await waitFor("the log", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds.every((d) => d.state !== "pending") && ds;
    });
    const failed = ds.find((d) => d.eventType === "order.pending");
    assert.equal(failed.state, "failed");
    assert.ok(failed.attemptCount >= 4);
    assert.ok(failed.attempts.every((a: { status: number }) => a.status === 500));
    assert.ok(failed.finishedAt);
    assert.equal(ds.find((d) => d.eventType === "order.completed").state, "delivered");
  } finally {
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook delivery: a timeout is a failed attempt with its error; deleting the endpoint fails what is pending", async () => {
  const server = await startTestServer({ ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: "100" });
  let release: () => void = () => {};
  const stuck = new Promise<void>((r) => (release = r));
  const hook = receiver(async () => {
    await stuck;
    return 200;
  });
  try {
    const p = await partnerWith(server);
    const endpoint = await register(server, p.token, hook.url);
    await emit(server.services.kv, [orderEvent(p.owner, newOrderId(), "pending")]);
    const [d] = await waitFor("a timed-out attempt", async () => {
      const ds = await deliveries(server, p.token, endpoint.id);
      return ds[0]?.attemptCount >= 1 && ds;
    });
    assert.equal(d.state, "pending");
    assert.equal(d.attempts[0].status, null);
    assert.equal(d.attempts[0].error, "timeout after 100 ms");
    assert.ok(d.nextAttemptAt);

    const kv = server.services.kv;
    const del = await call(server, "DELETE", `/webhooks/endpoints/${endpoint.id}`, { token: p.token });
    assert.equal(del.status, 200);
    await waitFor("the delivery failed", async () => {
      for await (const e of kv.list<{ state: string }>({ prefix: ["webhook_delivery", endpoint.id] })) {
        if (e.value.state !== "failed") return false;
      }
      return true;
    });
    let due = 0;
    for await (const _ of kv.list({ prefix: ["webhook_due"] })) due++;
    assert.equal(due, 0, "nothing left to attempt");
  } finally {
    release();
    await server.close();
    await hook.close();
  }
});

Deno.test("webhook delivery of real mints: a hanging endpoint does not delay the pipeline; every event arrives in order", async () => {
  // Requests are never timed out during the test: the hanging receiver holds every request it gets.
  const server = await startTestServer({ ...FAST_PIPELINE, WEBHOOK_TIMEOUT_MS: "60000" });
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const slow = receiver(async () => {
    await released;
    return 200;
  });
  const fast = receiver();
  try {
    const withSlow = await partnerWith(server); // a fast and a hanging endpoint
    const without = await partnerWith(server); // a fast endpoint only
    await register(server, withSlow.token, fast.url);
    await register(server, withSlow.token, slow.url);
    await register(server, without.token, fast.url);
    for (const p of [withSlow, without]) {
      const address = await depositAddress(server, p.token, "sol", "base");
      for (let i = 0; i < 3; i++) {
        await sim(server, "deposits", { chain: "sol", address, amount: `${500_000_000 + i}` });
      }
    }
    const done = (orders: { status: string }[]) => orders.length === 3 && orders.every(terminal);
    const ordersWith = await waitForOrders(server, withSlow.token, done, { timeoutMs: 30_000 });
    const ordersWithout = await waitForOrders(server, without.token, done, { timeoutMs: 30_000 });
    // The mints of the wallet whose endpoint hangs completed like the others', while that endpoint answered nothing.
    assert.deepEqual(ordersWith.map((o) => o.status), ["completed", "completed", "completed"]);
    assert.deepEqual(ordersWithout.map((o) => o.status), ["completed", "completed", "completed"]);
    await waitFor("the hanging endpoint to be called", () => slow.arrived() > 0);
    assert.equal(slow.requests.length, 0, "the hanging endpoint has not answered yet");

    // Each wallet's event log (what the sequencer recorded) reaches the fast endpoint, in order per order.
    const kv = server.services.kv;
    const logs = new Map<string, OrderEvent[]>();
    for (const p of [withSlow, without]) {
      // The sequencer may be a moment behind the orders.
      logs.set(
        p.owner,
        await waitFor("the event log", async () => {
          const log = await listOwnerEvents(kv, p.owner, 0, 1000);
          return log.filter((e) => e.type === "order.completed").length === 3 && log;
        }),
      );
    }
    const expected = (owner: string, orderId: string) =>
      logs.get(owner)!.filter((e) => e.order.id === orderId).map((e) => e.order.status);
    const total = [...logs.values()].reduce((n, l) => n + l.length, 0);
    await waitFor("the fast endpoint's events", () => fast.delivered().length === total, 20_000);
    for (const [owner, log] of logs) {
      for (const orderId of new Set(log.map((e) => e.order.id))) {
        const statuses = expected(owner, orderId);
        assert.deepEqual(statuses.at(0), "pending");
        assert.deepEqual(statuses.at(-1), "completed");
        assert.deepEqual(statusesOf(fast.delivered(), orderId), statuses);
      }
    }

    // Released, the hanging endpoint gets its wallet's events too, in order per order.
    release();
    const own = logs.get(withSlow.owner)!;
    await waitFor("the slow endpoint's events", () => slow.delivered().length === own.length, 20_000);
    for (const orderId of new Set(own.map((e) => e.order.id))) {
      assert.deepEqual(statusesOf(slow.delivered(), orderId), expected(withSlow.owner, orderId));
    }
    assert.ok(slow.delivered().every((r) => r.event.owner === withSlow.owner), "scoped to the endpoint's wallet");
  } finally {
    release();
    await server.close();
    await slow.close();
    await fast.close();
  }
});

Deno.test("webhook delivery: a hanging endpoint's backlog of 300 due deliveries does not hold back another endpoint", async () => {
  const server = await startTestServer(WEBHOOK_ENV);
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const hanging = receiver(async () => {
    await released;
    return 200;
  });
  const fast = receiver();
  try {
    const a = await partnerWith(server);
    const b = await partnerWith(server);
    await register(server, a.token, hanging.url);
    await register(server, b.token, fast.url);
    const backlog = Array.from({ length: 300 }, () => orderEvent(a.owner, newOrderId(), "pending"));
    for (let i = 0; i < backlog.length; i += 50) await emit(server.services.kv, backlog.slice(i, i + 50));
    await waitFor("the hanging endpoint to be called", () => hanging.arrived() > 0);
    await emit(server.services.kv, Array.from({ length: 20 }, () => orderEvent(b.owner, newOrderId(), "pending")));
    await waitFor("the other endpoint's deliveries", () => fast.delivered().length === 20);
    assert.equal(hanging.requests.length, 0, "the hanging endpoint has answered nothing yet");
    assert.ok(hanging.arrived() <= DEFAULT_WEBHOOK_OPTIONS.perEndpoint, "at most perEndpoint requests to it at once");
  } finally {
    release();
    await server.close();
    await hanging.close();
    await fast.close();
  }
});
