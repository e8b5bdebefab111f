/**
 * docs/grafana-dashboard.json (docs/metrics.md "Grafana"): every series a panel or variable queries is one a started
 * server's GET /metrics exports (as tests/alert_rules_test.ts checks the alert rules), every expression is PromQL
 * `promtool` accepts (each checked as a recording rule, Grafana's variables replaced), and the panels are laid out
 * on Grafana's 24-column grid without overlapping.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { parsePrometheusText } from "./support/prometheus.ts";
import { metricNames, promtool } from "./support/promql.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";

const DASHBOARD = new URL("../docs/grafana-dashboard.json", import.meta.url).pathname;
/** Series Prometheus makes itself for every target, never exported by a target. */
const PROMETHEUS_OWN = new Set(["up"]);

interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; query: { query: string } }[] };
}

const dashboard = JSON.parse(Deno.readTextFileSync(DASHBOARD)) as Dashboard;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const graphs = panels.filter((p) => p.type !== "row");
const exprs = graphs.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** The metric a `label_values(metric, label)` variable reads. */
function variableMetrics(): string[] {
  return dashboard.templating.list.map((v) => {
    const m = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*[a-zA-Z_]+\s*\)$/.exec(v.query.query);
    assert.ok(m, `variable ${v.name}: not a label_values(metric, label) query: ${v.query.query}`);
    return m[1];
  });
}

/** Grafana's variables as Prometheus would see them once Grafana has replaced them. */
const resolved = (expr: string) => expr.replaceAll("$chain", ".*").replaceAll("$__rate_interval", "5m");

Deno.test("docs/grafana-dashboard.json: titled panels with queries, unique ids, on the grid without overlapping", () => {
  assert.equal(dashboard.uid, "issuance-overview");
  assert.ok(graphs.length >= 12, `${graphs.length} panels`);
  assert.equal(new Set(panels.map((p) => p.id)).size, panels.length, "panel ids are unique");
  const cells = new Map<string, string>();
  for (const p of panels) {
    assert.ok(p.title, `panel ${p.id} has no title`);
    const { x, y, w, h } = p.gridPos;
    assert.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: outside the 24 columns`);
    for (let i = x; i < x + w; i++) {
      for (let j = y; j < y + h; j++) {
        const taken = cells.get(`${i},${j}`);
        assert.ok(!taken, `${p.title} overlaps ${taken}`);
        cells.set(`${i},${j}`, p.title);
      }
    }
    if (p.type === "row") continue;
    assert.ok((p.description ?? "").length > 20, `${p.title}: a description says what it shows`);
    assert.equal(p.datasource?.uid, "${DS_PROMETHEUS}", `${p.title}: the datasource is the import's input`);
    assert.ok((p.targets ?? []).length > 0, `${p.title}: no query`);
  }
});

Deno.test("every series the Grafana dashboard queries is exported by GET /metrics of a started server", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const key = await operatorKeyFor(server, ["metrics"]);
    const res = await call(server, "GET", "/metrics", { token: key });
    assert.equal(res.status, 200);
    const exported = parsePrometheusText(res.body);
    const families = new Set<string>();
    for (const [name, type] of exported.types) {
      families.add(name);
      if (type === "histogram") { for (const s of ["_bucket", "_sum", "_count"]) families.add(name + s); }
    }
    const used = new Set([...exprs.flatMap((e) => metricNames(e.expr)), ...variableMetrics()]);
    assert.ok(used.size >= 20, [...used].join(", "));
    const missing = [...used].filter((n) => !families.has(n) && !PROMETHEUS_OWN.has(n));
    assert.deepEqual(missing, [], "series the dashboard queries that /metrics does not export");
    // The labels a panel groups by are labels of the series it reads (checked where the scrape has samples of them).
    for (const { panel, expr } of exprs) {
      const sampled = exported.samples.filter((s) => metricNames(expr).includes(s.name));
      if (sampled.length === 0) continue;
      for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) {
        for (const label of m[1].split(",").map((l) => l.trim()).filter((l) => l !== "le" && l !== "instance")) {
          assert.ok(sampled.some((s) => label in s.labels), `${panel}: no series it reads has the label ${label}`);
        }
      }
    }
  } finally {
    await server.close();
  }
});

const tool = promtool();
if (!tool) {
  const why = "promtool (Debian package prometheus) is not installed: `apt-get install -y prometheus` (.ci/run does)";
  if (Deno.env.get("CI") === "true") Deno.test("promtool is installed", () => assert.fail(why));
  else console.warn(`\n!!! SKIPPING promtool check of docs/grafana-dashboard.json: ${why} !!!\n`);
}

Deno.test("every query of the Grafana dashboard is PromQL promtool accepts", { ignore: !tool }, async () => {
  const dir = await Deno.makeTempDir({ prefix: "grafana-promql-" });
  try {
    const rules = exprs.map((e, i) => ({ record: `grafana:panel_${i}`, expr: resolved(e.expr) }));
    const path = `${dir}/panels.yml`;
    await Deno.writeTextFile(path, stringify({ groups: [{ name: "grafana", rules }] }));
    const out = await new Deno.Command(tool!, { args: ["check", "rules", path], stdout: "piped", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, new RegExp(`SUCCESS: ${rules.length} rules found`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
