/**
 * The operator dashboard at `/admin/ui` (docs/dashboard.md): server-rendered HTML (routes/admin_ui/views.ts),
 * no script, no build step, nothing loaded from another host. An operator logs in with an operator key (scope `read`)
 * and gets a session (kv/operator_sessions.ts) in an HttpOnly, SameSite=Strict cookie. Every page and action runs the
 * SAME operations as the admin API and the CLI (actors/ops/), looked up by name at request time, with the session
 * key's `operatorActor` as the audit's `by`; an action needs its operation's scope on the key, and a refusal shows the
 * operation's own message. A section whose operation this server lacks says "not available".
 *
 * Every POST (login included) must come from this origin (`Origin` equal to the base URL's origin or the request's
 * own); every POST but login must carry the session's CSRF token. These routes are HTML, not JSON: they are not in
 * /openapi.json (tests/openapi_test.ts lists them as HTML routes).
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import { z } from "zod";
import type { Services } from "./services.ts";
import { findOp } from "../actors/ops/index.ts";
import { type AnyOp, OpError } from "../actors/ops/op.ts";
import type { ChainRow, OrderRow } from "../actors/ops/overview.ts";
import { ORDER_ID, type OrderDetail } from "../actors/ops/order_detail.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { listAlerts } from "../kv/alerts.ts";
import { operatorActor, type OperatorKeyRecord, verifyOperatorKey } from "../kv/operator_keys.ts";
import {
  type ActiveSession,
  createSession,
  csrfMatches,
  deleteSession,
  readSession,
  SESSION_TTL_MS,
  setFlash,
  takeFlash,
} from "../kv/operator_sessions.ts";
import { ORDER_STATUSES, ORDER_TYPES } from "../model/order.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { serverOpContext } from "./admin.ts";
import { type Log, redactedLog } from "../chains/shared/redact.ts";
import * as v from "./admin_ui/views.ts";
import { overviewCharts } from "./admin_ui/charts.ts";

export const UI_PATH = "/admin/ui";
export const SESSION_COOKIE = "op_session";

/** The operations the dashboard's forms may run (POST /admin/ui/action); anything else is refused. */
export const UI_ACTIONS = ["chain pause", "chain resume", "held release", "held refund", "reconcile", "alerts clear"];

/** Where an action may send the browser back to. */
const BACK = [UI_PATH, `${UI_PATH}/treasury`, `${UI_PATH}/orders`];

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return new Uint8Array(digest).toBase64();
}

type RunResult =
  | { kind: "ok"; result: unknown }
  | { kind: "absent" }
  | { kind: "refused"; status: number; message: string };

/** Runs the operation `name` as `key` with `raw` input: the same checks as the admin API (scope, input schema). */
export async function runOpAs(s: Services, key: OperatorKeyRecord, name: string, raw: Record<string, unknown>) {
  const op = findOp(name.split(" "));
  if (!op || op.name !== name) return { kind: "absent" } satisfies RunResult as RunResult;
  return await runFound(s, key, op, raw);
}

async function runFound(
  s: Services,
  key: OperatorKeyRecord,
  op: AnyOp,
  raw: Record<string, unknown>,
): Promise<RunResult> {
  if (!key.scopes.includes(op.scope)) {
    return { kind: "refused", status: 403, message: `This operator key lacks the ${op.scope} scope` };
  }
  const parsed = (op.input as z.ZodType).safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ");
    return { kind: "refused", status: 400, message: `Validation error: ${issues}` };
  }
  try {
    return { kind: "ok", result: await op.run(serverOpContext(s, operatorActor(key)), parsed.data) };
  } catch (e) {
    if (e instanceof OpError) return { kind: "refused", status: e.status, message: e.message };
    throw e;
  }
}

const has = (name: string) => findOp(name.split(" "))?.name === name;

/** The input fields of `op` found in a form: empty optional fields are left out, unknown fields are dropped. */
function formInput(op: AnyOp, form: Record<string, unknown>): Record<string, unknown> {
  const shape = op.input.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(shape)) {
    const value = form[name];
    if (typeof value !== "string") continue;
    if (value === "" && schema.safeParse(undefined).success) continue;
    out[name] = value;
  }
  return out;
}

/** `log`: where refused logins and refused posts are recorded (never a key's secret, never a session id). */
export function adminUiRoutes(s: Services, log: Log = redactedLog()): Hono {
  const app = new Hono();
  const secure = new URL(s.config.baseUrl).protocol === "https:";
  const baseOrigin = new URL(s.config.baseUrl).origin;
  const styleHash = sha256Base64(v.STYLE);

  // Every answer: no script, no frame, nothing from another host, not cached, not sniffed.
  app.use("*", async (c, next) => {
    await next();
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; style-src 'sha256-${await styleHash}'; img-src 'self'; form-action 'self'; ` +
        "frame-ancestors 'none'; base-uri 'none'",
    );
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    c.header("Cache-Control", "no-store");
  });

  const sameOrigin = (c: Context) => {
    const origin = c.req.header("Origin");
    return origin !== undefined && (origin === baseOrigin || origin === new URL(c.req.url).origin);
  };
  const session = (c: Context) => readSession(s.kv, getCookie(c, SESSION_COOKIE));
  const forbidden = (c: Context, message: string, status: 400 | 403 = 403) => {
    log(`dashboard: ${c.req.method} ${c.req.path} refused (${status}): ${message}`);
    return c.html(v.errorPage(status, message), status);
  };

  /** The session of a POST that came from this origin with the session's CSRF token, or the refusal to answer. */
  async function checkedPost(c: Context): Promise<{ s: ActiveSession; form: Record<string, unknown> } | Response> {
    if (!sameOrigin(c)) return forbidden(c, "Refused: this request did not come from the dashboard's origin");
    const active = await session(c);
    if (!active) return forbidden(c, "Your session has ended (logged out, expired, or its key revoked); log in again");
    const form = await c.req.parseBody().catch(() => ({}));
    if (!csrfMatches(active.session, (form as Record<string, unknown>).csrf)) {
      return forbidden(c, "Refused: the form's CSRF token is missing or wrong; reload the page and try again");
    }
    return { s: active, form: form as Record<string, unknown> };
  }

  app.get("/login", async (c) => (await session(c)) ? c.redirect(UI_PATH, 303) : c.html(v.loginPage()));

  app.post("/login", async (c) => {
    if (!sameOrigin(c)) return forbidden(c, "Refused: this request did not come from the dashboard's origin");
    const form = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
    const presented = typeof form.key === "string" ? form.key.trim() : "";
    const check = await verifyOperatorKey(s.kv, presented);
    if (!check.ok) {
      const keyId = /^op_[0-9a-f]{16}(?=\.)/.exec(presented)?.[0] ?? "(not an operator key)";
      log(`dashboard: login refused for ${keyId}: invalid operator key`);
      return c.html(v.loginPage("Invalid operator key"), 403);
    }
    if (!check.key.scopes.includes("read")) {
      log(`dashboard: login refused for ${check.key.keyId}: no read scope`);
      return c.html(v.loginPage("This operator key lacks the read scope the dashboard needs"), 403);
    }
    const { sessionId } = await createSession(s.kv, check.key);
    setCookie(c, SESSION_COOKIE, sessionId, {
      path: UI_PATH,
      httpOnly: true,
      sameSite: "Strict",
      secure,
      maxAge: SESSION_TTL_MS / 1000,
    });
    return c.redirect(UI_PATH, 303);
  });

  app.post("/logout", async (c) => {
    const checked = await checkedPost(c);
    if (checked instanceof Response) return checked;
    await deleteSession(s.kv, getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: UI_PATH, secure, httpOnly: true, sameSite: "Strict" });
    return c.redirect(`${UI_PATH}/login`, 303);
  });

  /** A page for a logged-in operator, or the login page. */
  const pageRoute = (
    path: string,
    here: v.PageChrome["here"],
    title: string,
    body: (a: ActiveSession, c: Context) => Promise<ReturnType<typeof v.page>>,
  ) =>
    app.get(path, async (c) => {
      const active = await session(c);
      if (!active) return c.redirect(`${UI_PATH}/login`, 303);
      const content = await body(active, c);
      const flash = await takeFlash(s.kv, active);
      return c.html(v.page({ title, here, who: operatorActor(active.key), csrf: active.session.csrf, flash }, content));
    });

  pageRoute("/", "overview", "Overview", async ({ key, session: sess }) => {
    const csrf = sess.csrf;
    const chains = await runOpAs(s, key, "chains", {});
    const held = await runOpAs(s, key, "held list", {});
    const stuck = await runOpAs(s, key, "stuck", {});
    const alerts = await listAlerts(s.kv);
    const canOperate = key.scopes.includes("operate");
    return html`${
      chains.kind === "ok"
        ? v.chainsSection(
          (chains.result as { chains: ChainRow[] }).chains,
          csrf,
          has("chain pause"),
          has("chain resume"),
        )
        : v.refused("Chains", chains.kind === "refused" ? chains.message : "not available")
    }
${v.alertsSection(alerts, csrf, canOperate && has("alerts clear"))}
${
      v.heldSection(
        held.kind === "ok"
          ? { kind: "ok", items: v.heldItems(held.result), total: v.heldTotal(held.result) }
          : held.kind === "absent"
          ? { kind: "absent" }
          : { kind: "refused", message: held.message },
        csrf,
        has("held release"),
        has("held refund"),
      )
    }
${
      v.stuckSection(
        stuck.kind === "ok"
          ? stuck.result as v.StuckView
          : { message: stuck.kind === "refused" ? stuck.message : "not available" },
      )
    }
${v.reconciliationSection(await lastReconciliation(s.kv), csrf, has("reconcile"))}
${await overviewCharts(s.kv, s.chainPlan.enabled)}`;
  });

  pageRoute("/treasury", "treasury", "Treasury", async ({ key }) => {
    const chains = NATIVE_CHAINS.filter((c) => s.chainPlan.enabled.includes(c));
    const sections = [];
    for (const chain of chains) {
      const r = await runOpAs(s, key, "treasury", { chain });
      sections.push(
        v.treasurySection(
          chain,
          r.kind === "ok"
            ? { kind: "ok", result: r.result }
            : r.kind === "absent"
            ? { kind: "absent" }
            : { kind: "refused", message: r.message },
        ),
      );
    }
    return html`<p class="muted">Per native chain: the treasury (UTXO chains) or the hot wallet (account chains), the
payouts waiting for funds and those recorded but not yet counted. Account chains' balances are read from their node.</p>
${sections.length ? sections : html`<p class="muted">No native chain is enabled.</p>`}`;
  });

  pageRoute("/orders", "orders", "Orders", async ({ key }, c) => {
    const q = c.req.query();
    const filter = { status: q.status || undefined, type: q.type || undefined, limit: q.limit || undefined };
    const r = await runOpAs(s, key, "orders", filter);
    const out = r.kind === "ok" ? r.result as { orders: OrderRow[]; truncated: boolean } : null;
    return v.ordersSection(
      out ? out.orders : { message: r.kind === "refused" ? r.message : "not available" },
      filter,
      ORDER_STATUSES,
      ORDER_TYPES,
      out?.truncated ?? false,
    );
  });

  // One order (actors/ops/order_detail.ts): an unknown id and one that is not an order id alike are a 404 page.
  app.get("/orders/:id", async (c) => {
    const active = await session(c);
    if (!active) return c.redirect(`${UI_PATH}/login`, 303);
    const id = c.req.param("id");
    const r = ORDER_ID.test(id)
      ? await runOpAs(s, active.key, "order detail", { id })
      : { kind: "refused" as const, status: 404, message: `no order ${id}` };
    if (r.kind !== "ok") {
      const status = r.kind === "refused" ? r.status : 404;
      const message = r.kind === "refused" ? r.message : "order detail: not available on this server";
      return c.html(v.errorPage(status, message), status as 400 | 403 | 404 | 409 | 503);
    }
    const flash = await takeFlash(s.kv, active);
    const chrome = { title: `Order ${id}`, here: "orders" as const, who: operatorActor(active.key) };
    return c.html(v.page({ ...chrome, csrf: active.session.csrf, flash }, v.orderDetailPage(r.result as OrderDetail)));
  });

  app.post("/action", async (c) => {
    const checked = await checkedPost(c);
    if (checked instanceof Response) return checked;
    const { s: active, form } = checked;
    const name = typeof form.op === "string" ? form.op : "";
    const back = typeof form.back === "string" && BACK.includes(form.back) ? form.back : UI_PATH;
    if (!UI_ACTIONS.includes(name)) return forbidden(c, `Refused: ${name || "(none)"} is not a dashboard action`, 400);
    const op = findOp(name.split(" "));
    let flash: { ok: boolean; message: string };
    if (!op || op.name !== name) flash = { ok: false, message: `${name}: not available on this server` };
    else {
      const r = await runFound(s, active.key, op, formInput(op, form));
      flash = r.kind === "ok" ? { ok: true, message: `${name}: done. ${op.text(r.result).join(" ")}`.slice(0, 600) } : {
        ok: false,
        message: `${name} refused (${r.kind === "refused" ? r.status : 404}): ${
          r.kind === "refused" ? r.message : "not available"
        }`,
      };
    }
    // A refusal is shown once on the next page and kept in the log (who, what, why): never only on a screen.
    if (!flash.ok) log(`dashboard: ${active.key.name} (${active.key.keyId}): ${flash.message}`);
    await setFlash(s.kv, active, flash);
    return c.redirect(back, 303);
  });

  return app;
}
