/**
 * Security review of the operator dashboard (/admin/ui, routes/admin_ui.ts, kv/operator_sessions.ts) over real HTTP
 * against the started server, for what tests/admin_dashboard_browser_test.ts does not already drive: markup planted in
 * every field partners and chains control (alert subject and message, held reason, hold reason, pause reason given in a
 * dashboard form) is shown as text on every page; a session past its 8 hours is refused for pages and actions; a
 * login needs an `Origin` and its answer (the session cookie) is never replayed through an `Idempotency-Key`; the
 * cookie's attributes.
 */
import assert from "node:assert/strict";
import { raiseAlert } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { getControls } from "../kv/controls.ts";
import { createOperatorKey, operatorActor } from "../kv/operator_keys.ts";
import { createSession, SESSION_TTL_MS } from "../kv/operator_sessions.ts";
import { createOrder } from "../kv/orders.ts";
import { withDetails } from "../model/order.ts";
import { orderHoldKey } from "../kv/pipeline.ts";
import { makeOrder } from "./support/orders.ts";
import { randomWallet, startTestServer, type TestServer } from "./support/server.ts";

const MARKUP = `"'><svg onload=alert(1)><script>alert(2)</script><a href="javascript:alert(3)">x</a>`;
const ESCAPED = "&quot;&#39;&gt;&lt;svg onload=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;";

function post(server: TestServer, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { Origin: server.url, "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });
}

async function get(server: TestServer, path: string, cookie: string) {
  const res = await fetch(`${server.url}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
  return { res, body: await res.text() };
}

/** Logs in with `key`: the `name=value` of the session cookie and the page's CSRF token. */
async function login(server: TestServer, key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await post(server, "/admin/ui/login", { key });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const cookie = res.headers.get("Set-Cookie")!.split(";")[0];
  const { body } = await get(server, "/admin/ui", cookie);
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(body)![1] };
}

// The overview draws its charts as inline <svg> of its own (routes/admin_ui/charts.ts, no event handler attributes):
// what must never appear is the planted element with its handler, a script, or a javascript: URL.
const noMarkup = (body: string, where: string) => {
  for (const tag of [/<svg[^>]*\son\w+=/i, /<script/i, /<a href="javascript/i, /="javascript/i]) {
    assert.doesNotMatch(body, tag, `${where}: planted markup reached the page as markup`);
  }
};

Deno.test("dashboard security: markup in alerts, held and hold reasons and a pause reason is shown as text", async () => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const { operatorKey, record } = await createOperatorKey(kv, {
      name: "sec-alice",
      scopes: ["read", "operate"],
      by: "t",
    });
    await raiseAlert(kv, { kind: "invalid_record", subject: MARKUP, chain: null, message: MARKUP });
    const waiting = withDetails(makeOrder(randomWallet(), "mint", "pending", 1), { heldReason: MARKUP });
    assert.ok(await createOrder(kv, waiting));
    const held = makeOrder(randomWallet(), "mint", "processing", 2);
    assert.ok(await createOrder(kv, held));
    await kv.set(orderHoldKey(held.id), {
      kind: "reorg",
      reason: MARKUP,
      at: new Date().toISOString(),
      alert: { kind: "deep_reorg", subject: MARKUP },
    });

    const { cookie, csrf } = await login(server, operatorKey);
    // A reason typed into a dashboard form is stored as given and shown back as text (flash, chain row).
    const paused = await post(server, "/admin/ui/action", {
      csrf,
      op: "chain pause",
      chain: "sui",
      reason: MARKUP,
      back: "/admin/ui",
    }, { Cookie: cookie });
    await paused.body?.cancel();
    assert.equal(paused.status, 303);
    assert.equal((await getControls(kv)).controls.pausedChains.sui?.reason, MARKUP);
    const audit = (await listAudit(kv)).filter((e) => e.action.includes("pause"));
    assert.equal(audit.length, 1);
    assert.equal(audit[0].by, operatorActor(record));

    const overview = await get(server, "/admin/ui", cookie);
    assert.equal(overview.res.status, 200);
    noMarkup(overview.body, "overview");
    // Alert subject and message, the hold reason, the held reason and the pause reason (chain row and flash).
    assert.ok(overview.body.split(ESCAPED).length - 1 >= 6, "every planted value is on the page, escaped");
    const orders = await get(server, "/admin/ui/orders", cookie);
    assert.equal(orders.res.status, 200);
    noMarkup(orders.body, "orders");
    assert.ok(orders.body.split(ESCAPED).length - 1 >= 2, "hold and held reasons on the orders page, escaped");
    // A filter value from the query is echoed only as escaped text, and refused by the operation.
    const filtered = await get(server, `/admin/ui/orders?limit=${encodeURIComponent(MARKUP)}`, cookie);
    noMarkup(filtered.body, "orders with a hostile limit");
    assert.match(filtered.body, /Validation error/);
  } finally {
    await server.close();
  }
});

Deno.test("dashboard security: a session past its 8 hours opens no page and runs no action", async () => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const { record } = await createOperatorKey(kv, { name: "sec-old", scopes: ["read", "operate"], by: "t" });
    const then = new Date(Date.now() - SESSION_TTL_MS - 1000);
    const { sessionId, session } = await createSession(kv, record, then);
    const cookie = `op_session=${sessionId}`;
    const page = await get(server, "/admin/ui", cookie);
    assert.equal(page.res.status, 303);
    assert.equal(page.res.headers.get("Location"), "/admin/ui/login");
    const form = { csrf: session.csrf, op: "chain pause", chain: "sui", reason: "x", back: "/admin/ui" };
    const res = await post(server, "/admin/ui/action", form, { Cookie: cookie });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /session has ended/);
    assert.equal((await getControls(kv)).controls.pausedChains.sui, undefined);
    assert.deepEqual((await listAudit(kv)).filter((e) => e.action !== "operator-key.create"), []);
    // The same session one minute younger still works: the refusal above was for its age alone.
    const fresh = await createSession(kv, record, new Date(Date.now() - SESSION_TTL_MS + 60_000));
    assert.equal((await get(server, "/admin/ui", `op_session=${fresh.sessionId}`)).res.status, 200);
  } finally {
    await server.close();
  }
});

Deno.test("dashboard security: login needs an Origin; the session cookie is never replayed by Idempotency-Key", async () => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const { operatorKey } = await createOperatorKey(kv, { name: "sec-bob", scopes: ["read"], by: "t" });
    const bare = await fetch(`${server.url}/admin/ui/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ key: operatorKey }),
    });
    await bare.body?.cancel();
    assert.equal(bare.status, 403);
    assert.equal(bare.headers.get("Set-Cookie"), null);

    const idem = { "Idempotency-Key": "dashboard-login-0001" };
    const first = await post(server, "/admin/ui/login", { key: operatorKey }, idem);
    await first.body?.cancel();
    const setCookie = first.headers.get("Set-Cookie")!;
    assert.match(
      setCookie,
      /^op_session=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/admin\/ui; HttpOnly; Secure; SameSite=Strict$/,
    );
    assert.equal(first.headers.get("Cache-Control"), "no-store");
    // Someone else sending the same key with no operator key gets a refusal, not the stored answer and its cookie.
    const replay = await post(server, "/admin/ui/login", { key: "" }, idem);
    await replay.body?.cancel();
    assert.equal(replay.status, 403);
    assert.equal(replay.headers.get("Set-Cookie"), null);
    const again = await post(server, "/admin/ui/login", { key: operatorKey }, idem);
    await again.body?.cancel();
    assert.notEqual(
      again.headers.get("Set-Cookie")!.split(";")[0],
      setCookie.split(";")[0],
      "a new session each login",
    );
  } finally {
    await server.close();
  }
});

Deno.test("dashboard: an action refused for want of scope is shown once and kept in the log with who", async () => {
  const server = await startTestServer();
  const logged: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => {
    logged.push(args.map(String).join(" "));
  };
  try {
    const { operatorKey, record } = await createOperatorKey(server.services.kv, {
      name: "sec-reader",
      scopes: ["read"],
      by: "t",
    });
    const { cookie, csrf } = await login(server, operatorKey);
    const res = await post(server, "/admin/ui/action", { csrf, op: "chain pause", chain: "sol", back: "/admin/ui" }, {
      Cookie: cookie,
    });
    await res.body?.cancel();
    assert.equal(res.status, 303);
    const line = logged.find((l) => l.includes("chain pause refused"));
    assert.ok(line, `no log line among ${JSON.stringify(logged)}`);
    assert.ok(line.includes(`sec-reader (${record.keyId})`) && line.includes("lacks the operate scope"), line);
    assert.ok(!logged.join("\n").includes(operatorKey.split(".")[1]), "never the key's secret");
  } finally {
    console.log = original;
    await server.close();
  }
});
