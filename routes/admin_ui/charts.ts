/**
 * The overview's charts (docs/dashboard.md "Charts"): inline SVG built on the server from `readCharts`
 * (actors/charts.ts). No script and no style attribute (the dashboard's Content-Security-Policy allows neither): colours
 * and fonts are SVG presentation attributes, the font the system's. Each chart has a `<title>` and a `<desc>` and the
 * numbers it draws in a table beside it (`<details>`), so a screen reader and a careful operator read the same values.
 *
 * Amounts stay bigints: a balance's height in pixels is `value * height / max` in bigint arithmetic, and labels are
 * the exact decimal strings in the coin's units. Counts, blocks and seconds are plain numbers.
 */
import { html } from "hono/html";
import { type ChainSymbol, NATIVE, NATIVE_CHAINS, type NativeChain } from "../../chains/catalog.ts";
import { CHART_HOURS, type ChartData, type Quantile, readCharts } from "../../actors/charts.ts";
import { type ChartSample, MINT_LATENCY_BUCKETS_SECONDS } from "../../kv/charts.ts";
import { formatUnits } from "../../model/amounts.ts";

/** Smallest units (decimal digits) in the coin's units, thousands separated (model/amounts.ts, the one formatter). */
const units = (amount: string, decimals: number) => formatUnits(BigInt(amount), decimals);

type Html = ReturnType<typeof html>;

const W = 720;
const H = 200;
const PAD = { left: 56, right: 12, top: 18, bottom: 26 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;
const FONT = "system-ui, sans-serif";

/** Status colours, matching the dashboard's badges where they exist. */
export const STATUS_COLOURS: Record<string, string> = {
  pending: "#9aa5b8",
  processing: "#e0a800",
  minting: "#4c6ef5",
  burning: "#7048e8",
  completed: "#2b8a3e",
  failed: "#c92a2a",
  cancelled: "#868e96",
};
const SERIES_COLOURS = ["#1c7ed6", "#e8590c", "#2b8a3e", "#ae3ec9", "#c92a2a", "#0c8599", "#5c940d", "#e67700"];

const hh = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const fmtQ = (q: Quantile) => q === null ? "-" : "seconds" in q ? `≤ ${duration(q.seconds)}` : `> ${duration(q.above)}`;

export function duration(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : seconds < 7200 ? `${seconds / 60} min` : `${seconds / 3600} h`;
}

/** A chart's frame: the `<svg>` with its title and description, the plot area's axes, and `body`. */
function frame(id: string, title: string, desc: string, body: Html, extra: Html | string = ""): Html {
  return html`
    <svg id="${id}" class="chart" role="img" aria-labelledby="${id}-title" aria-describedby="${id}-desc"
      viewBox="0 0 ${W} ${H}"
      width="${W}" height="${H}" font-family="${FONT}" font-size="11"
      xmlns="http://www.w3.org/2000/svg">
    <title id="${id}-title">${title}</title><desc id="${id}-desc">${desc}</desc>
    <rect x="${PAD.left}" y="${PAD.top}" width="${PLOT_W}" height="${PLOT_H}" fill="#fbfbfd" stroke="#dde"/>
    ${body}${extra}</svg>
  `;
}

/** Hour labels every 3 hours along the bottom of an hourly chart. */
function hourAxis(hours: number[]): Html {
  const step = PLOT_W / hours.length;
  return html`${
    hours.map((h, i) =>
      i % 3 === 0
        ? html`<text x="${(PAD.left + i * step + step / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle" fill="#556">${
          hh(h)
        }</text>`
        : ""
    )
  }`;
}

/** Gridlines at 0, half and the top of a value axis, labelled inside the plot (a long amount is never cut off). */
function valueAxis(top: string, half: string): Html {
  const y = (f: number) => (PAD.top + PLOT_H * (1 - f)).toFixed(1);
  return html`${
    [[0, "0"], [0.5, half], [1, top]].map(([f, label]) =>
      html`
        <line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(f as number)}" y2="${y(f as number)}" stroke="#e6e8ef" />
        <text x="${PAD.left + 4}" y="${(Number(y(f as number)) - 3).toFixed(1)}" fill="#556">${label}</text>
      `
    )
  }`;
}

function legend(items: { label: string; colour: string }[]): Html {
  return html`<p class="muted legend">${
    items.map((i) =>
      html`
        <svg width="10" height="10" aria-hidden="true">
          <rect width="10" height="10" fill="${i.colour}" />
        </svg> ${i.label}&nbsp;&nbsp;
      `
    )
  }</p>`;
}

/** The smallest "nice" number (1, 2, 5 times a power of ten) at or above `n`, at least 1. */
export function niceCeil(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

// ---- orders per hour by status ----

export function ordersChart(d: ChartData): Html {
  const totals = d.hours.map((_, i) => d.entered.reduce((sum, s) => sum + s.counts[i], 0));
  const top = niceCeil(Math.max(0, ...totals));
  const step = PLOT_W / d.hours.length;
  const barW = Math.max(2, step * 0.7);
  const bars = d.hours.map((h, i) => {
    let base = 0;
    return d.entered.map((s) => {
      const n = s.counts[i];
      if (n === 0) return "";
      const y0 = PAD.top + PLOT_H * (1 - base / top);
      base += n;
      const y1 = PAD.top + PLOT_H * (1 - base / top);
      return html`
        <rect class="bar" data-hour="${hh(h)}" data-series="${s.type}/${s
          .status}" data-count="${n}" x="${(PAD.left + i * step + (step - barW) / 2).toFixed(1)}"
          y="${y1.toFixed(1)}" width="${barW.toFixed(1)}" height="${(y0 - y1).toFixed(
            1,
          )}" fill="${STATUS_COLOURS[s.status]}" fill-opacity="${s.type === "mint" ? 1 : 0.6}">
          <title>${hh(h)} UTC: ${n} ${s.type} → ${s.status}</title>
        </rect>
      `;
    });
  });
  const sum = totals.reduce((a, b) => a + b, 0);
  const desc = `Stacked bars, one per hour over the last ${CHART_HOURS} hours (UTC): orders that entered each status ` +
    `that hour, by type. ${sum} status changes in all.`;
  const svg = frame(
    "chart-orders",
    `Orders per hour by status, last ${CHART_HOURS} h`,
    desc,
    html`${valueAxis(String(top), String(top / 2))}${bars}${hourAxis(d.hours)}`,
  );
  const table = html`
    <table id="chart-orders-table">
      <thead>
        <tr><th>hour (UTC)</th>${d.entered.map((s) => html`<th class="num">${s.type} → ${s.status}</th>`)}</tr>
      </thead>
      <tbody>${d.hours.map((h, i) =>
        totals[i] === 0
          ? ""
          : html`<tr><td>${hh(h)}</td>${d.entered.map((s) => html`<td class="num">${s.counts[i]}</td>`)}</tr>`
      )}</tbody>
    </table>${sum === 0 ? html`<p class="na">No order changed status in the last ${CHART_HOURS} h.</p>` : ""}
  `;
  return chartBlock(
    "Orders per hour by status",
    svg,
    legend(d.entered.map((s) => ({ label: `${s.type} → ${s.status}`, colour: STATUS_COLOURS[s.status] }))),
    table,
  );
}

// ---- mint latency ----

/** Height of a latency: its bucket's place on an axis of the buckets' bounds (roughly logarithmic). */
function latencyY(q: Quantile): number | null {
  if (q === null) return null;
  const n = MINT_LATENCY_BUCKETS_SECONDS.length;
  const i = "seconds" in q ? MINT_LATENCY_BUCKETS_SECONDS.indexOf(q.seconds as never) : n;
  return PAD.top + PLOT_H * (1 - (i + 1) / (n + 1));
}

export function latencyChart(d: ChartData): Html {
  const step = PLOT_W / d.hours.length;
  const x = (i: number) => (PAD.left + i * step + step / 2).toFixed(1);
  const n = MINT_LATENCY_BUCKETS_SECONDS.length;
  const grid = MINT_LATENCY_BUCKETS_SECONDS.map((b, i) => {
    const y = (PAD.top + PLOT_H * (1 - (i + 1) / (n + 1))).toFixed(1);
    return i % 2 === 0
      ? html`
        <line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y}" y2="${y}" stroke="#e6e8ef" />
        <text x="${PAD.left - 4}" y="${Number(y) + 4}" text-anchor="end" fill="#556">${duration(b)}</text>
      `
      : "";
  });
  const series = (which: "p50" | "p95", colour: string) => {
    const pts = d.mintLatency.map((m, i) => ({ i, y: latencyY(m[which]), q: m[which] }));
    const path = pts.filter((p) => p.y !== null).map((p, k) => `${k === 0 ? "M" : "L"}${x(p.i)} ${p.y!.toFixed(1)}`)
      .join(" ");
    return html`${
      path
        ? html`
          <path d="${path}" fill="none" stroke="${colour}" stroke-width="2" />
        `
        : ""
    }${
      pts.map((p) =>
        p.y === null ? "" : html`
          <circle class="${which}" data-hour="${hh(d.hours[p.i])}" cx="${x(p.i)}" cy="${p.y.toFixed(
            1,
          )}" r="3" fill="${colour}">
            <title>${hh(d.hours[p.i])} UTC: ${which} ${fmtQ(p.q)}</title>
          </circle>
        `
      )
    }`;
  };
  const completed = d.mintLatency.reduce((a, m) => a + m.completed, 0);
  const svg = frame(
    "chart-latency",
    `Time from deposit seen to mint completed, p50 and p95 per hour, last ${CHART_HOURS} h`,
    `Per hour (UTC), the 50th and 95th percentile of the time from a deposit being seen to its mint completing, ` +
      `read from fixed buckets (each value is its bucket's upper bound). ${completed} mints completed in all.`,
    html`${grid}${series("p50", "#1c7ed6")}${series("p95", "#e8590c")}${hourAxis(d.hours)}`,
  );
  const table = html`
    <table id="chart-latency-table">
      <thead>
        <tr>
          <th>hour (UTC)</th>
          <th class="num">mints completed</th>
          <th class="num">p50</th>
          <th class="num">p95</th>
        </tr>
      </thead>
      <tbody>${d.mintLatency.map((m, i) =>
        m.completed === 0 ? "" : html`
          <tr>
            <td>${hh(d.hours[i])}</td>
            <td class="num">${m.completed}</td>
            <td class="num">${fmtQ(m.p50)}</td>
            <td class="num">${fmtQ(m.p95)}</td>
          </tr>
        `
      )}</tbody>
    </table>${completed === 0 ? html`<p class="na">No mint completed in the last ${CHART_HOURS} h.</p>` : ""}
  `;
  return chartBlock(
    "Deposit seen → mint completed",
    svg,
    legend([{ label: "p50", colour: "#1c7ed6" }, { label: "p95", colour: "#e8590c" }]),
    table,
  );
}

// ---- sampled series (lag, funds) ----

interface Series<T> {
  label: string;
  colour: string;
  value: (s: ChartSample) => T | null;
}

/** A step path through the samples (a value holds until the next sample), broken where a value is unknown. */
/**
 * A step line through samples: each value holds until the next sample (or `endX`, now). A sample taken at the last
 * moment is a zero-length step: the paths that draw these carry `stroke-linecap="round"`, with which SVG renders a
 * zero-length subpath as a dot, so a chart with one fresh sample shows it instead of an empty plot.
 */
function stepPath(points: { x: number; y: number | null }[], endX: number): string {
  let d = "";
  let open = false;
  points.forEach((p, i) => {
    const nextX = i + 1 < points.length ? points[i + 1].x : endX;
    if (p.y === null) {
      open = false;
      return;
    }
    d += `${open ? "V" : "M" + p.x.toFixed(1)}${open ? "" : " "}${p.y.toFixed(1)} H${nextX.toFixed(1)} `;
    open = true;
  });
  return d.trim();
}

function sampleX(d: ChartData, now: number) {
  const start = d.hours[0];
  const end = Math.max(now, start + 1);
  return (at: number) => PAD.left + PLOT_W * Math.max(0, Math.min(1, (at - start) / (end - start)));
}

/** Time labels every 6 hours along a sampled chart. */
function timeAxis(d: ChartData, now: number): Html {
  const x = sampleX(d, now);
  return html`${
    d.hours.filter((_, i) => i % 6 === 0).map((h) =>
      html`<text x="${x(h).toFixed(1)}" y="${H - 8}" text-anchor="middle" fill="#556">${hh(h)}</text>`
    )
  }`;
}

export function lagChart(d: ChartData, now: Date): Html {
  const t = now.getTime();
  const chains = d.chains.filter((c) => d.samples.some((s) => c in s.lag));
  const series: Series<number>[] = chains.map((c, i) => ({
    label: c,
    colour: SERIES_COLOURS[i % SERIES_COLOURS.length],
    value: (s) => s.lag[c] ?? null,
  }));
  const max = Math.max(0, ...d.samples.flatMap((s) => chains.map((c) => s.lag[c] ?? 0)));
  const top = niceCeil(max);
  const x = sampleX(d, t);
  const y = (v: number) => PAD.top + PLOT_H * (1 - v / top);
  const paths = series.map((s) =>
    html`
      <path class="lag" data-chain="${s.label}" d="${stepPath(
        d.samples.map((p) => ({ x: x(p.at), y: s.value(p) === null ? null : y(s.value(p)!) })),
        x(t),
      )}" fill="none" stroke="${s.colour}" stroke-width="2"
        stroke-linecap="round" />
    `
  );
  const svg = frame(
    "chart-lag",
    `Watcher lag per chain, last ${CHART_HOURS} h`,
    `Blocks each chain's watcher was behind its tip, looked at every 10 minutes and stored when it moved by 5 minutes ` +
      `of the chain's blocks or more (a value holds until the next sample). ${d.samples.length} sample(s); the largest lag ${max} ` +
      "blocks.",
    html`${valueAxis(String(top), String(top / 2))}${paths}${timeAxis(d, t)}`,
  );
  const last = d.samples.at(-1);
  const table = html`
    <table id="chart-lag-table">
      <thead>
        <tr>
          <th>chain</th>
          <th class="num">last sample (blocks)</th>
          <th class="num">most in ${CHART_HOURS} h</th>
        </tr>
      </thead>
      <tbody>${chains.map((c) => {
        const values = d.samples.map((s) => s.lag[c]).filter((v): v is number => typeof v === "number");
        return html`
          <tr>
            <td>${c}</td>
            <td class="num">${last?.lag[c] ?? "unknown"}</td>
            <td class="num">${values.length ? Math.max(...values) : "unknown"}</td>
          </tr>
        `;
      })}</tbody>
    </table>${last ? html`<p class="muted">Last sample ${new Date(last.at).toISOString()}.</p>` : noSamples}
  `;
  return chartBlock("Watcher lag", svg, legend(series), table);
}

const noSamples = html`<p class="na">No sample yet: the pipeline looks at lag and funds every 10 minutes.</p>`;

/** Hot, cold and waiting payouts of one native chain, in its coin (bigint heights). */
export function fundsChart(d: ChartData, chain: NativeChain, now: Date): Html {
  const t = now.getTime();
  const coin = NATIVE[chain].token;
  const samples = d.samples.filter((s) => s.funds[chain] !== undefined);
  const parts = [["hot", "#1c7ed6"], ["cold", "#5c940d"], ["waiting", "#c92a2a"]] as const;
  const big = (v: string | null | undefined) => typeof v === "string" && /^\d+$/.test(v) ? BigInt(v) : null;
  let max = 0n;
  for (const s of samples) {
    for (const [p] of parts) {
      max = (big(s.funds[chain]![p]) ?? 0n) > max ? big(s.funds[chain]![p])! : max;
    }
  }
  const top = max === 0n ? 1n : max;
  const x = sampleX(d, t);
  const y = (v: bigint) => PAD.top + PLOT_H - Number((v * BigInt(PLOT_H)) / top);
  const paths = parts.map(([p, colour]) =>
    html`
      <path class="funds" data-part="${p}" d="${stepPath(
        samples.map((s) => {
          const v = big(s.funds[chain]![p]);
          return { x: x(s.at), y: v === null ? null : y(v) };
        }),
        x(t),
      )}" fill="none" stroke="${colour}" stroke-width="2"
        stroke-linecap="round"
        ${p === "waiting"
          ? html`
            stroke-dasharray="5 3"
          `
          : ""} />
    `
  );
  const id = `chart-funds-${chain}`;
  const svg = frame(
    id,
    `${chain}: hot and cold balances against waiting payouts, last ${CHART_HOURS} h`,
    `${coin.symbol} held hot (spendable), held cold, and owed to burns waiting for their payout, looked at every 10 ` +
      `minutes and stored when they moved (a value holds until the next sample). Top of the scale: ` +
      `${units(top.toString(), coin.decimals)} ${coin.symbol}.`,
    html`${
      valueAxis(
        `${units(top.toString(), coin.decimals)} ${coin.symbol}`,
        `${units((top / 2n).toString(), coin.decimals)} ${coin.symbol}`,
      )
    }${paths}${timeAxis(d, t)}`,
  );
  const shown = (v: string | null | undefined) =>
    v === undefined || v === null
      ? html`<span class="na">unknown</span>`
      : html`<span title="${v} smallest units">${units(v, coin.decimals)} ${coin.symbol}</span>`;
  const recent = samples.slice(-6).reverse();
  const table = html`
    <table id="${id}-table">
      <thead>
        <tr>
          <th>sampled (UTC)</th>
          <th class="num">hot</th>
          <th class="num">cold</th>
          <th class="num">waiting payouts</th>
        </tr>
      </thead>
      <tbody>${recent.map((s) =>
        html`
          <tr>
            <td>${new Date(s.at).toISOString().slice(0, 16).replace("T", " ")}</td>
            <td class="num">${shown(s.funds[chain]!.hot)}</td>
            <td class="num">${shown(s.funds[chain]!.cold)}</td>
            <td class="num">${shown(s.funds[chain]!.waiting)}</td>
          </tr>
        `
      )}</tbody>
    </table>${samples.length ? "" : noSamples}
  `;
  return chartBlock(
    `${chain}: hot, cold and waiting payouts`,
    svg,
    legend(parts.map(([label, colour]) => ({ label, colour }))),
    table,
  );
}

function chartBlock(heading: string, svg: Html, key: Html, table: Html): Html {
  return html`
    <figure
      class="chart-block"><h3>${heading}</h3>${svg}${key}<details><summary>The numbers</summary>${table}</details></figure>
  `;
}

/** The overview's charts section: one call from routes/admin_ui.ts. */
export function chartsSection(d: ChartData, now: Date, nativeChains: readonly NativeChain[]): Html {
  return html`<section id="charts"><h2>Last ${CHART_HOURS} hours</h2>
<p class="muted">Hourly counts are kept as the orders move (docs/dashboard.md "Charts"); lag and funds are samples.
Times in UTC.</p>
${ordersChart(d)}${latencyChart(d)}${lagChart(d, now)}${nativeChains.map((c) => fundsChart(d, c, now))}</section>`;
}

/** Reads a day of charts and draws them for the enabled chains: the overview's one call. */
export async function overviewCharts(kv: Deno.Kv, enabled: readonly ChainSymbol[], now = new Date()): Promise<Html> {
  const data = await readCharts(kv, now, enabled);
  return chartsSection(data, now, NATIVE_CHAINS.filter((c) => enabled.includes(c)));
}
