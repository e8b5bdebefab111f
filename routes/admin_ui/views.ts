/**
 * The dashboard's HTML (routes/admin_ui.ts serves it): `hono/html` templates, which escape every value, one inline
 * style sheet allowed by its hash in the Content-Security-Policy, no script, no external asset. Every POST form
 * carries the session's CSRF token. Values come from operations' outputs as they are (amounts as decimal strings).
 */
import { html, raw } from "hono/html";
import type { ChainRow, OrderRow } from "../../actors/ops/overview.ts";
import type { OrderDetail } from "../../actors/ops/order_detail.ts";
import type { StoredReconciliation } from "../../kv/reconciliation.ts";
import { displayAmount, nativeUnit, unitOf } from "../../model/amounts.ts";
import { isNativeChain } from "../../chains/catalog.ts";
import { chainTime } from "../../actors/watcher_lag.ts";

type Html = ReturnType<typeof html>;

export const STYLE = `
:root{color-scheme:light;font-family:system-ui,-apple-system,sans-serif;font-size:14px}
body{margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:.6rem 1.2rem;display:flex;gap:1.2rem;align-items:center}
header a{color:#cfd8ff;text-decoration:none}header a.here{color:#fff;font-weight:600}
header .who{margin-left:auto;color:#aab}
main{padding:1rem 1.2rem;max-width:1500px}
section{background:#fff;border:1px solid #dde;border-radius:6px;padding:.6rem 1rem 1rem;margin-bottom:1rem}
h1{font-size:1.1rem;margin:0}h2{font-size:1rem;margin:.4rem 0 .6rem}h3{font-size:.9rem;margin:.8rem 0 .3rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eef;vertical-align:top}
th{font-weight:600;color:#556;font-size:.85rem}
td.num{font-variant-numeric:tabular-nums;text-align:right}
code{font-size:.85rem;word-break:break-all}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:9px;font-size:.8rem;font-weight:600}
.ok{background:#dff5e3;color:#17692b}.lagging{background:#fff3cd;color:#7a5a00}.erroring{background:#fde2e1;color:#9b1c1c}
.paused{background:#e3e8ff;color:#2c3e9b}.disabled{background:#eee;color:#666}.unwatched{background:#ffe4cc;color:#8a3b00}
.notice{padding:.5rem .8rem;border-radius:5px;margin-bottom:1rem}.notice.good{background:#dff5e3}.notice.bad{background:#fde2e1}
.na{color:#888;font-style:italic}
form.inline{display:inline-flex;gap:.3rem;margin:0 .3rem .2rem 0}
input[type=text],input[type=password],select{padding:.2rem .4rem;border:1px solid #bbc;border-radius:4px}
button{padding:.2rem .7rem;border:1px solid #889;border-radius:4px;background:#f3f4f8;cursor:pointer}
button.danger{border-color:#b44;color:#922}
.login{max-width:28rem;margin:4rem auto}.login input{width:100%;box-sizing:border-box;margin:.4rem 0 .8rem}
details pre{background:#f7f7fa;padding:.5rem;overflow:auto;max-height:20rem}
.muted{color:#778}
td.id code{white-space:nowrap}td.record{overflow-wrap:anywhere;max-width:60rem}
`;

export interface PageChrome {
  title: string;
  here: "overview" | "treasury" | "orders";
  who: string;
  csrf: string;
  flash?: { ok: boolean; message: string };
}

const NAV = [
  ["overview", "/admin/ui", "Overview"],
  ["treasury", "/admin/ui/treasury", "Treasury"],
  ["orders", "/admin/ui/orders", "Orders"],
] as const;

function document(title: string, body: Html): Html {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>${title} · operator dashboard</title>
        <style>${raw(STYLE)}</style>
      </head>
      <body>
    ${body}
      </body>
    </html>
  `;
}

export function page(chrome: PageChrome, content: Html): Html {
  return document(
    chrome.title,
    html`
      <header>
        <h1>Operator dashboard</h1>
        <nav>${NAV.map(([id, href, label]) =>
          html`
            <a href="${href}" class="${id === chrome.here ? "here" : ""}">${label}</a>
          `
        )}</nav>
        <span class="who">${chrome.who}</span>
        <form class="inline" method="post" action="/admin/ui/logout">${csrfField(
          chrome.csrf,
        )}<button id="logout">Log out</button></form>
      </header>
      <main>
      ${chrome.flash
        ? html`<div class="notice ${
          chrome.flash.ok ? "good" : "bad"
        }" id="notice" role="status">${chrome.flash.message}</div>`
        : ""}
      ${content}
      </main>
    `,
  );
}

export function loginPage(error?: string): Html {
  return document(
    "Log in",
    html`<section class="login">
<h2>Operator dashboard</h2>
<p class="muted">Log in with an operator key with the <code>read</code> scope (<code>deno task admin operator-key create</code>).
Actions need the scope their operation needs.</p>
${error ? html`<div class="notice bad" id="notice" role="alert">${error}</div>` : ""}
<form method="post" action="/admin/ui/login">
<label for="key">Operator key</label>
<input type="password" id="key" name="key" autocomplete="off" required>
<button id="login">Log in</button>
</form>
</section>`,
  );
}

export function errorPage(status: number, message: string): Html {
  return document(
    `${status}`,
    html`
      <section class="login">
        <h2>${status}</h2>
        <div class="notice bad" id="notice" role="alert">${message}</div>
        <p><a href="/admin/ui">Back to the dashboard</a></p>
      </section>
    `,
  );
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** A POST form running the operation `op` with `fields` (hidden) and `inputs` (visible text inputs). */
export function actionForm(
  csrf: string,
  op: string,
  label: string,
  opts: {
    fields?: Record<string, string>;
    inputs?: { name: string; placeholder: string }[];
    back?: string;
    danger?: boolean;
    id?: string;
  } = {},
): Html {
  return html`<form class="inline" method="post" action="/admin/ui/action">${csrfField(csrf)}
<input type="hidden" name="op" value="${op}">
<input type="hidden" name="back" value="${opts.back ?? "/admin/ui"}">
${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
${(opts.inputs ?? []).map((i) => html`<input type="text" name="${i.name}" placeholder="${i.placeholder}">`)}
<button class="${opts.danger ? "danger" : ""}" ${opts.id ? html`id="${opts.id}"` : ""}>${label}</button></form>`;
}

export function notAvailable(what: string, op: string): Html {
  return html`<p class="na">${what}: not available (this server has no <code>${op}</code> operation).</p>`;
}

export function refused(what: string, message: string): Html {
  return html`<p class="notice bad">${what}: ${message}</p>`;
}

/**
 * An amount for people with its exact smallest units in the title (model/amounts.ts): `shown` from the operation's
 * `display` field, `exact` the integer the record holds.
 */
export function amountCell(shown: string | undefined, exact: string, token?: string): Html {
  const human = shown ?? (token ? displayAmount(exact, token) : exact);
  return html`<span class="amount" title="${exact} smallest units">${human}</span>`;
}

/** An element id from any text: characters other than letters, digits, `_` and `-` become `_`. */
export const safeId = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, "_");

const dash = (v: unknown) => v === null || v === undefined || v === "" ? "–" : String(v);

export function chainsSection(rows: ChainRow[], csrf: string, canPause: boolean, canResume: boolean): Html {
  return html`
    <section id="chains">
      <h2>Chains</h2>
      <table>
        <thead>
          <tr>
            <th>Chain</th>
            <th>Mode</th>
            <th>Health</th>
            <th>Tip</th>
            <th>Watcher cursor</th>
            <th>Lag (blocks / threshold; chain time)</th>
            <th>Last look (process)</th>
            <th>Open alerts</th>
            <th>Why</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
    ${rows.map((r) =>
      html`
        <tr id="chain-${r.chain}" data-health="${r.health}">
          <td><strong>${r.chain}</strong></td>
          <td>${r.mode}</td>
          <td><span class="badge ${r.health}">${r.health}</span></td>
          <td class="num">${dash(r.tip)}</td>
          <td class="num">${dash(r.cursor)}</td>
          <td class="num">${dash(r.lag)}<span class="muted"> / ${r.lagThreshold}</span>${r.lagMs === null
            ? ""
            : html`<br><span class="muted lag-time">${chainTime(r.lagMs)}</span>`}</td>
          <td>${r.lookedAt
            ? html`<span title="${r.lookedAt}">${r.lookedAt.slice(11, 19)}</span>`
            : "–"}<br><code class="muted">${dash(r.lookedBy ?? r.leaseHolder)}</code></td>
          <td class="num">${r.alerts.length}</td>
          <td>${r.why}</td>
          <td>${r.mode === "disabled"
            ? ""
            : r.paused
            ? (canResume
              ? actionForm(csrf, "chain resume", "Resume", { fields: { chain: r.chain }, id: `resume-${r.chain}` })
              : html`<span class="na">resume not available</span>`)
            : (canPause
              ? actionForm(csrf, "chain pause", "Pause", {
                fields: { chain: r.chain },
                inputs: [{ name: "reason", placeholder: "reason" }],
                danger: true,
                id: `pause-${r.chain}`,
              })
              : html`<span class="na">pause not available</span>`)}</td>
        </tr>
      `
    )}
        </tbody>
      </table>
      <p class="muted">Health, the first that holds: disabled (not in the chain plan), erroring (tip unreadable, or an open
    alert that stops the chain's work), paused, unwatched (no process looked at it for longer than
    WATCHER_UNWATCHED_SECONDS), lagging (more blocks behind the tip than the threshold), ok (watched and within it,
    whether or not blocks arrive). docs/dashboard.md.</p>
    </section>
  `;
}

export interface AlertRow {
  kind: string;
  subject: string;
  chain: string | null;
  message: string;
  count: number;
  lastAt: string;
}

export function alertsSection(alerts: AlertRow[], csrf: string, canClear: boolean): Html {
  return html`<section id="alerts"><h2>Open alerts (${alerts.length})</h2>
${
    alerts.length === 0 ? html`<p class="muted">None.</p>` : html`
      <table>
        <thead>
          <tr>
            <th>Kind</th>
            <th>Subject</th>
            <th>Chain</th>
            <th>Count</th>
            <th>Last</th>
            <th>Message</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
      ${alerts.map((a) =>
        html`
          <tr>
            <td>${a.kind}</td>
            <td><code>${a.subject}</code></td>
            <td>${dash(a.chain)}</td>
            <td class="num">${a.count}</td>
            <td>${a.lastAt}</td>
            <td>${a.message}</td>
            <td>${canClear
              ? actionForm(csrf, "alerts clear", "Acknowledge", {
                fields: { kind: a.kind, subject: a.subject },
                id: safeId(`clear-${a.kind}-${a.subject}`),
              })
              : ""}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `
  }
</section>`;
}

/** A held record as `held list` returns it: an `id` and whatever else it says. */
export type HeldItem = Record<string, unknown> & { id: string };

/** The `id`-carrying records of a `held list` result, wherever its array is. */
export function heldItems(result: unknown): HeldItem[] {
  const arrays = Array.isArray(result)
    ? [result]
    : result && typeof result === "object"
    ? Object.values(result).filter(Array.isArray)
    : [];
  return arrays.flat().filter((x): x is HeldItem =>
    x !== null && typeof x === "object" && typeof (x as { id?: unknown }).id === "string"
  );
}

/** The `total` a `held list` result gives (every held record, listed or not), or null. */
export function heldTotal(result: unknown): number | null {
  const total = result && typeof result === "object" ? (result as { total?: unknown }).total : undefined;
  return typeof total === "number" ? total : null;
}

function fieldsText(item: Record<string, unknown>): Html {
  const empty = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);
  // A record's `amount` beside its `token` (an order) or its `asset` (a held transfer; "native": the chain's coin) is
  // shown in that unit, the exact integer after it (model/amounts.ts).
  const unitOfRecord = (o: Record<string, unknown>) =>
    typeof o.token === "string"
      ? unitOf(o.token)
      : o.asset === "native" && isNativeChain(o.chain)
      ? nativeUnit(o.chain)
      : typeof o.asset === "string"
      ? unitOf(o.asset)
      : null;
  const flat = (v: unknown): string => {
    if (Array.isArray(v)) return v.map(flat).join(", ");
    if (v === null || typeof v !== "object") return String(v);
    const o = v as Record<string, unknown>;
    const unit = unitOfRecord(o);
    return Object.entries(o).filter(([, x]) => !empty(x)).map(([k, x]) =>
      k === "amount" && unit && typeof x === "string" ? `${k} ${displayAmount(x, unit)} (${x})` : `${k} ${flat(x)}`
    ).join(" · ");
  };
  const entries = Object.entries(item).filter(([k, v]) => k !== "id" && !empty(v));
  return html`${entries.map(([k, v]) => html`<span class="muted">${k}:</span> ${flat(v)}<br>`)}`;
}

export function heldSection(
  held:
    | { kind: "absent" }
    | { kind: "refused"; message: string }
    | { kind: "ok"; items: HeldItem[]; total?: number | null },
  csrf: string,
  canRelease: boolean,
  canRefund: boolean,
): Html {
  let body: Html;
  if (held.kind === "absent") body = notAvailable("Held records", "held list");
  else if (held.kind === "refused") body = refused("Held records", held.message);
  else if (held.items.length === 0) body = html`<p class="muted">No held record.</p>`;
  else {
    const total = held.total ?? held.items.length;
    body = html`
      <p class="held-count">${held.items.length} of ${total} held record(s), newest first${held.items.length < total
        ? html`
          (<code>deno task admin held list --limit N</code> lists more)
        `
        : ""}</p>
      <table>
        <thead>
          <tr>
            <th>Id</th>
            <th>Record</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
      ${held.items.map((h) =>
        html`
          <tr data-held="${h.id}">
            <td class="id"><code>${h.id}</code></td>
            <td class="record">${fieldsText(h)}</td>
            <td>
          ${canRelease
            ? actionForm(csrf, "held release", "Release", {
              fields: { id: h.id },
              id: safeId(`release-${h.id}`),
            })
            : html`<span class="na">release not available</span>`}
          ${canRefund
            ? actionForm(csrf, "held refund", "Refund", {
              fields: { id: h.id },
              inputs: [{ name: "to", placeholder: "refund to (optional)" }],
              danger: true,
              id: safeId(`refund-${h.id}`),
            })
            : html`<span class="na">refund not available</span>`}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `;
  }
  return html`<section id="held"><h2>Held records</h2>
<p class="muted">Orders held by an operator hold (a reorg past finality, a cap) and transfers held for want of a burn
configuration or an enabled chain: nothing moves until an operator releases or refunds them.</p>
${body}</section>`;
}

export interface StuckView {
  thresholdMinutes: number;
  transactions: {
    orderId: string;
    type: string;
    chain: string;
    txHash: string;
    recordedAt: string;
    age: string;
    amount: string;
    token: string;
    display?: { amount: string };
  }[];
  waiting: {
    orderId: string;
    type: string;
    status: string;
    sourceChain: string;
    destinationChain: string;
    amount: string;
    token: string;
    heldReason: string;
    age: string;
    display?: { amount: string };
  }[];
  truncated: boolean;
}

export function stuckSection(stuck: StuckView | { message: string }): Html {
  if ("message" in stuck) {
    return html`<section id="stuck"><h2>Stuck payouts</h2>${refused("Stuck", stuck.message)}</section>`;
  }
  return html`<section id="stuck"><h2>Stuck payouts and waiting orders</h2>
<h3>Recorded transactions not counted after ${stuck.thresholdMinutes} min (${stuck.transactions.length})</h3>
${
    stuck.transactions.length === 0 ? html`<p class="muted">None.</p>` : html`
      <table>
        <thead>
          <tr>
            <th>Order</th>
            <th>Type</th>
            <th>Chain</th>
            <th>Transaction</th>
            <th>Amount</th>
            <th>Recorded</th>
            <th>Age</th>
          </tr>
        </thead>
        <tbody>
      ${stuck.transactions.map((t) =>
        html`
          <tr>
            <td><a href="/admin/ui/orders/${t.orderId}"><code>${t.orderId}</code></a></td>
            <td>${t.type}</td>
            <td>${t.chain}</td>
            <td><code>${t.txHash}</code></td>
            <td class="num">${amountCell(t.display?.amount, t.amount, t.token)}</td>
            <td>${t.recordedAt}</td>
            <td>${t.age}</td>
          </tr>
        `
      )}</tbody>
      </table>
      <p class="muted">A recorded transaction is re-sent as the same bytes and re-signed only once the chain proves it dead
      (<code>deno task admin order retry|cancel</code>).</p>
    `
  }
<h3>Orders waiting with a reason (${stuck.waiting.length})</h3>
${
    stuck.waiting.length === 0 ? html`<p class="muted">None.</p>` : html`
      <table>
        <thead>
          <tr>
            <th>Order</th>
            <th>Type</th>
            <th>Status</th>
            <th>Chains</th>
            <th>Amount</th>
            <th>Reason</th>
            <th>Waiting</th>
          </tr>
        </thead>
        <tbody>
      ${stuck.waiting.map((w) =>
        html`
          <tr>
            <td><a href="/admin/ui/orders/${w.orderId}"><code>${w.orderId}</code></a></td>
            <td>${w.type}</td>
            <td>${w.status}</td>
            <td>${w.sourceChain} → ${w.destinationChain}</td>
            <td class="num">${amountCell(w.display?.amount, w.amount, w.token)}</td>
            <td>${w.heldReason}</td>
            <td>${w.age}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `
  }
${stuck.truncated ? html`<p class="muted">A scan stopped at its bound: more may exist.</p>` : ""}
</section>`;
}

export function reconciliationSection(last: StoredReconciliation | null, csrf: string, canRun: boolean): Html {
  const run = canRun
    ? actionForm(csrf, "reconcile", "Run reconciliation now", { id: "reconcile" })
    : notAvailable("Running it", "reconcile");
  if (!last) {
    return html`<section id="reconciliation"><h2>Reconciliation</h2><p class="muted">No report stored yet.</p>${run}</section>`;
  }
  return html`<section id="reconciliation"><h2>Reconciliation</h2>
<p>Last report at ${last.at}: <span class="badge ${last.ok ? "ok" : "erroring"}">${
    last.ok ? "everything adds up" : `${last.mismatches.length} mismatch(es)`
  }</span></p>
${
    last.mismatches.length === 0 ? "" : html`
      <table>
        <thead>
          <tr>
            <th>Kind</th>
            <th>Asset</th>
            <th>Chain</th>
            <th>Message</th>
            <th>Records</th>
          </tr>
        </thead>
        <tbody>
      ${last.mismatches.map((m) =>
        html`
          <tr>
            <td>${m.kind}</td>
            <td>${m.asset}</td>
            <td>${dash(m.chain)}</td>
            <td>${m.message}</td>
            <td>${m.records.map((r) => html`<code>${r}</code><br>`)}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `
  }
<details><summary>The whole report</summary><pre>${JSON.stringify(last.report, null, 2)}</pre></details>
${run}
</section>`;
}

export function ordersSection(
  orders: OrderRow[] | { message: string },
  filter: { status?: string; type?: string; limit?: string },
  statuses: readonly string[],
  types: readonly string[],
  truncated: boolean,
): Html {
  const option = (value: string, chosen?: string) =>
    html`<option value="${value}" ${value === (chosen ?? "") ? "selected" : ""}>${value || "any"}</option>`;
  const form = html`<form class="inline" method="get" action="/admin/ui/orders">
<select name="status">${["", ...statuses].map((s) => option(s, filter.status))}</select>
<select name="type">${["", ...types].map((t) => option(t, filter.type))}</select>
<input type="text" name="limit" value="${filter.limit ?? ""}" placeholder="limit (50)">
<button>Filter</button></form>`;
  if ("message" in orders) {
    return html`<section id="orders"><h2>Recent orders</h2>${form}${refused("Orders", orders.message)}</section>`;
  }
  return html`<section id="orders"><h2>Recent orders (${orders.length})</h2>${form}
<table><thead><tr><th>Created</th><th>Order</th><th>Type</th><th>Status</th><th>Chains</th><th>Amount</th><th>Owner</th>
<th>Transaction</th><th>Hold / reason / error</th></tr></thead><tbody>
${
    orders.map((o) =>
      html`
        <tr>
          <td>${o.createdAt}</td>
          <td><a href="/admin/ui/orders/${o.id}"><code>${o.id}</code></a></td>
          <td>${o.type}</td>
          <td>${o.status}</td>
          <td>${o.sourceChain} → ${o.destinationChain}</td>
          <td class="num">${amountCell(o.display?.amount, o.amount, o.token)}</td>
          <td><code>${o.owner}</code></td>
          <td><code>${dash(o.transactionHash)}</code></td>
          <td>${o.hold ? html`<strong>hold:</strong> ${o.hold.reason}<br>` : ""}${o.heldReason ?? ""}${o.errorMessage ??
            ""}</td>
        </tr>
      `
    )
  }</tbody></table>
${truncated ? html`<p class="muted">The scan stopped at its bound: older matching orders are not shown.</p>` : ""}
</section>`;
}

/** One native chain's treasury report (the `treasury` operation's result), whichever kind of chain it is. */
export function treasurySection(
  chain: string,
  report: { kind: "absent" } | { kind: "refused"; message: string } | { kind: "ok"; result: unknown },
): Html {
  if (report.kind === "absent") {
    return html`<section id="treasury-${chain}"><h2>${chain}</h2>${notAvailable("Treasury", "treasury")}</section>`;
  }
  if (report.kind === "refused") {
    return html`<section id="treasury-${chain}"><h2>${chain}</h2>${refused("Treasury", report.message)}</section>`;
  }
  const r = (report.result ?? {}) as Record<string, unknown>;
  // Every amount in the chain's coin from the operation's `display` (model/amounts.ts), the exact integer in its title;
  // a nested record (`held`: count and amount) as words, never as JSON.
  const display = (r.display ?? {}) as Record<string, string>;
  const cell = (v: unknown, path: string): Html => {
    if (display[path] !== undefined) return amountCell(display[path], String(v));
    if (Array.isArray(v)) return html`${v.length} item(s)`;
    if (v !== null && typeof v === "object") {
      const parts = Object.entries(v).filter(([, x]) => x !== undefined && x !== null);
      return html`${
        parts.map(([k, x], i) => html`${i > 0 ? " · " : ""}<span class="muted">${k}</span> ${cell(x, `${path}.${k}`)}`)
      }`;
    }
    return html`${dash(v)}`;
  };
  const kv = (o: unknown, base: string) =>
    o && typeof o === "object"
      ? html`
        <table>
          <tbody>${Object.entries(o as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]) =>
            html`
              <tr>
                <th>${k}</th>
                <td class="num">${cell(v, `${base}.${k}`)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `
      : "";
  const count = (k: string) => Array.isArray(r[k]) ? (r[k] as unknown[]).length : null;
  return html`<section id="treasury-${chain}"><h2>${chain}</h2>
${r.balances ? html`<h3>Treasury balances</h3>${kv(r.balances, "balances")}` : ""}
${r.hotWallet ? html`<h3>Hot wallet</h3>${kv(r.hotWallet, "hotWallet")}` : ""}
${r.custody ? html`<h3>Hot / cold / in flight to cold</h3>${kv(r.custody, "custody")}` : ""}
${r.unswept ? html`<h3>Unswept deposits</h3>${kv({ ...(r.unswept as object), deposits: undefined }, "unswept")}` : ""}
<p class="muted">Amounts in ${chain}'s coin; the exact smallest units in each one's title and in
<code>deno task admin treasury --chain ${chain} --json</code>.</p>
<p>Payouts waiting: ${dash(count("pendingPayouts"))} · stuck payouts (recorded, not yet counted): ${
    dash(count("stuckPayouts"))
  }</p>
<details><summary>The whole report</summary><pre>${JSON.stringify(r, null, 2)}</pre></details>
</section>`;
}

/** A transaction hash, linked to its chain's explorer when there is a template for it (config/explorers.ts). */
function txLink(hash: string, url: string | null): Html {
  return url ? html`<a href="${url}" rel="noopener noreferrer"><code>${hash}</code></a>` : html`<code>${hash}</code>`;
}

/** The order page (`/admin/ui/orders/:id`): the `order detail` operation's answer. */
export function orderDetailPage(d: OrderDetail): Html {
  const o = d.order;
  const empty = (what: string) => html`<p class="muted">${what}</p>`;
  return html`
    <section id="order"><h2>Order <code>${o.id}</code></h2>
    <table><tbody>
    <tr><th>Type</th><td>${o.type}</td></tr>
    <tr><th>Status</th><td id="order-status">${o.status}</td></tr>
    <tr><th>Amount</th><td>${amountCell(o.display.amount, o.amount)}</td></tr>
    <tr><th>Chains</th><td>${o.sourceChain} → ${o.destinationChain}</td></tr>
    <tr><th>Owner</th><td><code>${o.owner}</code></td></tr>
    <tr><th>Created</th><td>${o.createdAt}</td></tr>
    <tr><th>Updated</th><td>${dash(o.updatedAt)}</td></tr>
    ${o.heldReason
      ? html`
        <tr>
          <th>Waiting</th>
          <td>${o.heldReason}</td>
        </tr>
      `
      : ""}
    ${o.errorMessage
      ? html`
        <tr>
          <th>Error</th>
          <td>${o.errorMessage}</td>
        </tr>
      `
      : ""}
    </tbody></table>
    ${d.hold
      ? html`<p class="notice bad" id="order-hold"><strong>Hold:</strong> ${d.hold.reason} (since ${d.hold.at})</p>`
      : ""}
    </section>
    <section id="order-transitions"><h2>Transitions (${d.transitions.length})</h2>
    ${d.transitions.length === 0 ? empty("None recorded.") : html`
      <table>
        <thead>
          <tr>
            <th>At</th>
            <th>Status</th>
            <th>Event</th>
          </tr>
        </thead>
        <tbody>
      ${d.transitions.map((t) =>
        html`
          <tr>
            <td>${t.at}</td>
            <td>${t.status}</td>
            <td class="muted">${t.seq === null ? "not yet sequenced" : `seq ${t.seq}`}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `}
    ${d.transitionsComplete
      ? ""
      : empty("The owner's event log was read back only so far: older transitions are not shown.")}
    </section>
    <section id="order-transactions">
      <h2>Transactions (${d.transactions.length})</h2>
      <table>
        <thead>
          <tr>
            <th>Role</th>
            <th>Chain</th>
            <th>Transaction</th>
            <th>Status</th>
            <th>At</th>
          </tr>
        </thead>
        <tbody>
    ${d.transactions.map((t) =>
      html`
        <tr data-role="${t.role}">
          <td>${t.role}</td>
          <td>${t.chain}</td>
          <td>${txLink(t.txHash, t.url)}</td>
          <td>${t.status}</td>
          <td>${dash(t.at)}</td>
        </tr>
      `
    )}</tbody>
      </table>
      <p
        class="muted">Links follow <code>&lt;CHAIN&gt;_EXPLORER_TX_URL</code>; a simulated chain has none unless it is set.</p>
    </section>
    <section id="order-webhooks"><h2>Webhook deliveries (${d.webhooks.length})</h2>
    ${d.webhooks.length === 0 ? empty("None.") : html`
      <table>
        <thead>
          <tr>
            <th>Created</th>
            <th>Event</th>
            <th>Endpoint</th>
            <th>State</th>
            <th>Attempts</th>
            <th>Last attempt</th>
          </tr>
        </thead>
        <tbody>
      ${d.webhooks.map((w) =>
        html`
          <tr>
            <td>${w.createdAt}</td>
            <td>${w.eventType}</td>
            <td><code>${w.url}</code></td>
            <td>${w.state}</td>
            <td class="num">${w.attemptCount}</td>
            <td>${w.lastAttempt
              ? `${w.lastAttempt.at}: ${w.lastAttempt.status ?? w.lastAttempt.error ?? ""}`
              : "–"}</td>
          </tr>
        `
      )}</tbody>
      </table>
    `}
    </section>
    <section id="order-audit"><h2>Audit entries (${d.audit.length})</h2>
    ${d.audit.length === 0 ? empty("None.") : html`
      <table>
        <thead>
          <tr>
            <th>At</th>
            <th>Action</th>
            <th>By</th>
            <th>Subject</th>
          </tr>
        </thead>
        <tbody>
      ${d.audit.map((a) =>
        html`
          <tr>
            <td>${a.at}</td>
            <td>${a.action}</td>
            <td>${a.by}</td>
            <td><code>${a.subject}</code></td>
          </tr>
        `
      )}
        </tbody>
      </table>
    `}
    ${d.auditComplete ? "" : empty("The audit log was read back only so far: older entries are not shown.")}
    </section>
  `;
}
