/**
 * The operator dashboard (/admin/ui, routes/admin_ui.ts) in a real browser: Debian's chromium driven by npm
 * playwright-core, with every request to another host refused. An operator logs in with an operator key, acts from
 * the page, and the test checks KV: the change, and its audit entry naming the key. A wrong key, a POST without the
 * CSRF token and one from another origin are refused and change nothing; a revoked key ends its session. Screenshots
 * are saved in SCREENSHOT_DIR, else a temporary folder (paths printed). Without chromium the tests are skipped with a
 * loud message, except under CI=true, where they fail.
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { browserAvailable, launchChromium, offlinePage, screenshot } from "./support/browser.ts";
import { findOp } from "../actors/ops/index.ts";
import { getAlert, raiseAlert } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { getControls } from "../kv/controls.ts";
import { operatorActor, revokeOperatorKey } from "../kv/operator_keys.ts";
import { createOrder } from "../kv/orders.ts";
import { orderHoldKey } from "../kv/pipeline.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { makeOrder } from "./support/orders.ts";
import { randomWallet, startTestServer, type TestServer } from "./support/server.ts";
import { createOperatorKey } from "../kv/operator_keys.ts";

const { ignore } = browserAvailable("the dashboard browser tests");

/** The operations the pause and held-release tests run (actors/ops/controls.ts, actors/ops/held.ts). */
const controlsOps = ["chain pause", "chain resume", "held list", "held release"];

interface Harness {
  server: TestServer;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  dir: string;
  refused: string[];
  pageErrors: string[];
  shot(name: string): Promise<string>;
  close(): Promise<void>;
}

async function open(): Promise<Harness> {
  const server = await startTestServer();
  const browser = await launchChromium();
  const origin = new URL(server.url).origin;
  const { context, page, refused, pageErrors } = await offlinePage(browser, origin, { width: 1500, height: 1100 });
  // A style or resource the Content-Security-Policy refuses is reported on the console.
  page.on("console", (m) => /Content Security Policy|Refused to/i.test(m.text()) && pageErrors.push(m.text()));
  let dir = "";
  return {
    server,
    browser,
    context,
    page,
    get dir() {
      return dir;
    },
    refused,
    pageErrors,
    async shot(name) {
      const path = await screenshot(page, name);
      dir ||= path.slice(0, path.lastIndexOf("/"));
      return path;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

async function login(h: Harness, key: string) {
  await h.page.goto(`${h.server.url}/admin/ui`);
  assert.match(h.page.url(), /\/admin\/ui\/login$/);
  await h.page.fill("#key", key);
  await Promise.all([h.page.waitForURL(`${h.server.url}/admin/ui`), h.page.click("#login")]);
}

const text = async (page: Page, selector: string) => (await page.locator(selector).first().textContent()) ?? "";
const csrfOf = async (page: Page) => (await page.locator('input[name="csrf"]').first().getAttribute("value"))!;

const browserTest = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name,
    ignore,
    // playwright-core keeps its pipe to the browser process in resources Deno's sanitizers do not know of.
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });

browserTest(
  "dashboard: login, every page, an action audited with the key's name, refusals, logout, revocation",
  async () => {
    const h = await open();
    const kv = h.server.services.kv;
    try {
      const { operatorKey: key, record } = await createOperatorKey(kv, {
        name: "dash-alice",
        scopes: ["read", "operate"],
        by: "test",
      });
      for (let i = 0; i < 4; i++) {
        await createOrder(
          kv,
          makeOrder(randomWallet(), i % 2 ? "burn" : "mint", "pending", i),
        );
      }
      await raiseAlert(kv, { kind: "deep_reorg", subject: "sui", chain: "sui", message: "sui watcher halted" });
      // Record text is shown escaped: markup in an alert stays text.
      const markup = `<script>document.title="owned"</script><img src="https://evil.example/x.png">`;
      await raiseAlert(kv, { kind: "invalid_record", subject: "order:x", chain: null, message: markup });

      // A wrong key: the login page again with the refusal, no session cookie.
      await h.page.goto(`${h.server.url}/admin/ui`);
      assert.match(h.page.url(), /\/admin\/ui\/login$/);
      await h.shot("login");
      await h.page.fill("#key", key.slice(0, -2) + "xx");
      const wrong = await Promise.all([h.page.waitForResponse(/\/admin\/ui\/login$/), h.page.click("#login")]);
      assert.equal(wrong[0].status(), 403);
      assert.equal(await text(h.page, "#notice"), "Invalid operator key");
      assert.deepEqual(await h.context.cookies(), []);

      await login(h, key);
      const cookie = (await h.context.cookies()).find((c) => c.name === "op_session")!;
      assert.ok(cookie.httpOnly && cookie.sameSite === "Strict", JSON.stringify(cookie));
      assert.equal(await h.page.locator("#chains tbody tr").count(), 10);
      assert.equal(await h.page.locator("#chain-sui").getAttribute("data-health"), "erroring");
      assert.match(await text(h.page, ".who"), /dash-alice/);
      assert.equal(await h.page.locator("script, img").count(), 0);
      assert.ok((await text(h.page, "#alerts")).includes(markup));
      await h.shot("overview");

      // An action from the page runs the same operation as the API: the alert is gone, audited with the key's name.
      await Promise.all([h.page.waitForURL(`${h.server.url}/admin/ui`), h.page.click("#clear-deep_reorg-sui")]);
      assert.match(await text(h.page, "#notice"), /^alerts clear: done/);
      assert.equal(await getAlert(kv, "deep_reorg", "sui"), null);
      const cleared = (await listAudit(kv)).filter((e) => e.action === "alert.clear");
      assert.equal(cleared.length, 1);
      assert.equal(cleared[0].by, operatorActor(record));
      assert.equal(cleared[0].by, `dash-alice (${record.keyId})`);

      // Without the CSRF token, or from another origin: refused, nothing changes. The browser's own cookie is sent.
      await raiseAlert(kv, { kind: "deep_reorg", subject: "sol", chain: "sol", message: "again" });
      const form = { op: "alerts clear", kind: "deep_reorg", subject: "sol", back: "/admin/ui" };
      const noCsrf = await h.page.request.post(`${h.server.url}/admin/ui/action`, {
        form,
        headers: { Origin: h.server.url },
        maxRedirects: 0,
      });
      assert.equal(noCsrf.status(), 403);
      assert.match(await noCsrf.text(), /CSRF token is missing or wrong/);
      const csrf = await csrfOf(h.page);
      const otherOrigin = await h.page.request.post(`${h.server.url}/admin/ui/action`, {
        form: { ...form, csrf },
        headers: { Origin: "https://evil.example" },
        maxRedirects: 0,
      });
      assert.equal(otherOrigin.status(), 403);
      const wrongCsrf = await h.page.request.post(`${h.server.url}/admin/ui/action`, {
        form: { ...form, csrf: csrf.slice(0, -1) + (csrf.endsWith("A") ? "B" : "A") },
        headers: { Origin: h.server.url },
        maxRedirects: 0,
      });
      assert.equal(wrongCsrf.status(), 403);
      assert.ok(await getAlert(kv, "deep_reorg", "sol"), "a refused post changed nothing");
      assert.equal((await listAudit(kv)).filter((e) => e.action === "alert.clear").length, 1);
      // The same post with the token is accepted: the refusals above were for the token and the origin alone.
      const ok = await h.page.request.post(`${h.server.url}/admin/ui/action`, {
        form: { ...form, csrf },
        headers: { Origin: h.server.url },
        maxRedirects: 0,
      });
      assert.equal(ok.status(), 303);
      assert.equal(await getAlert(kv, "deep_reorg", "sol"), null);

      // The other pages.
      await h.page.click("text=Treasury");
      await h.page.waitForURL(`${h.server.url}/admin/ui/treasury`);
      assert.equal(await h.page.locator("section[id^=treasury-]").count(), 5);
      await h.shot("treasury");
      await h.page.click("text=Orders");
      await h.page.waitForURL(`${h.server.url}/admin/ui/orders`);
      assert.equal(await h.page.locator("#orders tbody tr").count(), 4);
      await h.page.selectOption('select[name="type"]', "burn");
      await Promise.all([h.page.waitForURL(/type=burn/), h.page.click("#orders button")]);
      assert.equal(await h.page.locator("#orders tbody tr").count(), 2);
      await h.shot("orders");

      // The page's headers: a strict policy, and nothing but the server was asked.
      const res = await h.page.goto(`${h.server.url}/admin/ui`);
      const csp = res!.headers()["content-security-policy"];
      assert.match(csp, /default-src 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|script-src/);
      assert.deepEqual(h.pageErrors, [], "errors on the page (a style refused by the policy shows here)");
      assert.deepEqual(h.refused, [], "the dashboard asked hosts other than the server");

      // Logout ends the session; the old cookie no longer opens a page.
      await Promise.all([h.page.waitForURL(/\/admin\/ui\/login$/), h.page.click("#logout")]);
      await h.context.addCookies([cookie]);
      await h.page.goto(`${h.server.url}/admin/ui`);
      assert.match(h.page.url(), /\/admin\/ui\/login$/);

      // Revoking the key ends its sessions at the next request.
      await login(h, key);
      await revokeOperatorKey(kv, record.keyId, "test");
      await h.page.reload();
      assert.match(h.page.url(), /\/admin\/ui\/login$/);
    } finally {
      await h.close();
    }
  },
);

browserTest(
  "dashboard: a read-only key sees the pages but an operate action is refused with the operation's message",
  async () => {
    const h = await open();
    const kv = h.server.services.kv;
    try {
      const { operatorKey } = await createOperatorKey(kv, { name: "dash-reader", scopes: ["read"], by: "test" });
      await raiseAlert(kv, { kind: "deep_reorg", subject: "xrp", chain: "xrp", message: "halted" });
      await login(h, operatorKey);
      // No button for what the key may not do; a forged post is refused by the scope check.
      assert.equal(await h.page.locator("#clear-deep_reorg-xrp").count(), 0);
      const res = await h.page.request.post(`${h.server.url}/admin/ui/action`, {
        form: { op: "alerts clear", kind: "deep_reorg", subject: "xrp", back: "/admin/ui", csrf: await csrfOf(h.page) },
        headers: { Origin: h.server.url },
      });
      assert.equal(res.status(), 200); // followed to the page, which shows the refusal
      await h.page.reload();
      // The notice was taken by the followed redirect above: the refusal is on that page.
      assert.match(await res.text(), /alerts clear refused \(403\): This operator key lacks the operate scope/);
      assert.ok(await getAlert(kv, "deep_reorg", "xrp"));
      // A key without read cannot log in.
      const { operatorKey: metrics } = await createOperatorKey(kv, {
        name: "scraper",
        scopes: ["metrics"],
        by: "test",
      });
      await h.page.context().clearCookies();
      await h.page.goto(`${h.server.url}/admin/ui/login`);
      await h.page.fill("#key", metrics);
      await h.page.click("#login");
      assert.match(await text(h.page, "#notice"), /lacks the read scope/);
    } finally {
      await h.close();
    }
  },
);

browserTest(
  "dashboard: pause and resume a chain, run a reconciliation; the controls record, the audit and the report",
  async () => {
    const h = await open();
    const kv = h.server.services.kv;
    try {
      const { operatorKey, record } = await createOperatorKey(kv, {
        name: "dash-pauser",
        scopes: ["read", "operate"],
        by: "test",
      });
      for (const name of controlsOps) assert.equal(findOp(name.split(" "))?.name, name, `no ${name} operation`);
      await login(h, operatorKey);
      await h.page.fill('#chain-sol input[name="reason"]', "browser test");
      await Promise.all([h.page.waitForURL(`${h.server.url}/admin/ui`), h.page.click("#pause-sol")]);
      assert.match(await text(h.page, "#notice"), /^chain pause: done/);
      const { controls } = await getControls(kv);
      assert.equal(controls.pausedChains.sol?.by, operatorActor(record));
      assert.equal(controls.pausedChains.sol?.reason, "browser test");
      assert.equal(await h.page.locator("#chain-sol").getAttribute("data-health"), "paused");
      const audit = (await listAudit(kv)).filter((e) => e.by === operatorActor(record));
      assert.ok(audit.some((e) => /pause/.test(e.action) && e.subject.includes("sol")), JSON.stringify(audit));
      await h.shot("paused");

      await Promise.all([h.page.waitForURL(`${h.server.url}/admin/ui`), h.page.click("#resume-sol")]);
      assert.equal((await getControls(kv)).controls.pausedChains.sol, undefined);

      // The reconciliation button runs the operation, which stores its report; the section shows it.
      await Promise.all([h.page.waitForURL(`${h.server.url}/admin/ui`), h.page.click("#reconcile")]);
      assert.match(await text(h.page, "#notice"), /^reconcile: done/);
      const stored = await lastReconciliation(kv);
      assert.ok(stored);
      assert.match(await text(h.page, "#reconciliation"), new RegExp(`Last report at ${stored.at}`));
    } finally {
      await h.close();
    }
  },
);

browserTest("dashboard: release a reorg-held order from the page; the hold is gone and audited", async () => {
  const h = await open();
  const kv = h.server.services.kv;
  try {
    const { operatorKey, record } = await createOperatorKey(kv, {
      name: "dash-releaser",
      scopes: ["read", "operate"],
      by: "test",
    });
    const order = makeOrder(randomWallet(), "mint", "processing", 3);
    assert.ok(await createOrder(kv, order));
    await kv.set(orderHoldKey(order.id), {
      reason: "a reorg past finality replaced the block of its deposit",
      at: new Date().toISOString(),
      alert: { kind: "reorg_past_finality", subject: "doge:100" },
    });
    await login(h, operatorKey);
    const id = `order:${order.id}`;
    assert.equal(await h.page.locator(`[data-held="${id}"]`).count(), 1);
    assert.match(await text(h.page, "#held"), /1 of 1 held record\(s\), newest first/, "the held list's total");
    await h.shot("held");
    await Promise.all([
      h.page.waitForURL(`${h.server.url}/admin/ui`),
      h.page.click(`#release-${id.replace(/[^A-Za-z0-9_-]/g, "_")}`),
    ]);
    assert.match(await text(h.page, "#notice"), /^held release: done/);
    assert.equal((await kv.get(orderHoldKey(order.id))).value, null);
    const audit = (await listAudit(kv)).filter((e) => e.by === operatorActor(record));
    assert.ok(audit.some((e) => /release/.test(e.action) && e.subject.includes(order.id)), JSON.stringify(audit));
    assert.equal(await h.page.locator(`[data-held="${id}"]`).count(), 0);
  } finally {
    await h.close();
  }
});
