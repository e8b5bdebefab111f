/**
 * docs/alerts.yml (docs/metrics.md): `promtool check rules` accepts it (Debian package `prometheus`, installed by
 * .ci/run; skipped loudly without it, failed under CI=true), every rule has a severity, a summary and a runbook, and
 * every metric its expressions use is one a started server's GET /metrics exports (besides Prometheus's own `up`), so a
 * renamed metric cannot leave an alert that never fires. `promtool test rules` checks what the key rules decide.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { parsePrometheusText } from "./support/prometheus.ts";
import { metricNames, promtool } from "./support/promql.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";

const RULES = new URL("../docs/alerts.yml", import.meta.url).pathname;
/** Series Prometheus makes itself for every target, never exported by a target. */
const PROMETHEUS_OWN = new Set(["up"]);

const tool = promtool();
if (!tool) {
  const why = "promtool (Debian package prometheus) is not installed: `apt-get install -y prometheus` (.ci/run does)";
  if (Deno.env.get("CI") === "true") {
    Deno.test("promtool is installed", () => assert.fail(why));
  } else {
    console.warn(`\n!!! SKIPPING promtool checks of docs/alerts.yml: ${why} !!!\n`);
  }
}

async function run(args: string[], cwd?: string): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(tool!, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function rules(): Rule[] {
  const doc = parse(Deno.readTextFileSync(RULES)) as { groups: { name: string; rules: Rule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

Deno.test("metricNames reads the metrics of an expression, not its functions, keywords or labels", () => {
  assert.deepEqual(
    metricNames(
      'sum by (chain, endpoint) (rate(a_total{x="y z"}[10m])) / on(chain) b > 0.2 and time() - c > 26 * 3600',
    ),
    ["a_total", "b", "c"],
  );
  assert.deepEqual(metricNames('up{job="issuance"} == 0'), ["up"]);
});

Deno.test("docs/alerts.yml: promtool accepts it, and each alert has a severity, a summary and a runbook", {
  ignore: !tool,
}, async () => {
  const check = await run(["check", "rules", RULES]);
  assert.equal(check.code, 0, check.out);
  assert.match(check.out, /SUCCESS/);
  const all = rules();
  assert.ok(all.length >= 10, `${all.length} rules`);
  for (const r of all) {
    assert.ok(r.alert, `a rule without an alert name: ${r.expr}`);
    assert.match(r.alert, /^Issuance[A-Z]/);
    assert.ok(["critical", "warning"].includes(r.labels?.severity ?? ""), `${r.alert}: severity`);
    assert.ok((r.annotations?.summary ?? "").length > 10, `${r.alert}: summary`);
    assert.ok((r.annotations?.runbook ?? "").length > 80, `${r.alert}: runbook`);
  }
  // The list: watcher lag, RPC errors, stuck transactions, held records, funds against pending payouts,
  // reconciliation mismatch or staleness, open alerts.
  const names = all.map((r) => r.alert);
  for (
    const wanted of [
      "IssuanceWatcherLagging",
      "IssuanceRpcErrorRate",
      "IssuanceStuckTransactions",
      "IssuanceHeldRecords",
      "IssuancePayoutFundsShort",
      "IssuanceReconciliationMismatch",
      "IssuanceReconciliationStale",
      "IssuanceOpenAlerts",
    ]
  ) assert.ok(names.includes(wanted), wanted);
});

Deno.test("every metric the alert rules use is exported by GET /metrics of a started server", async () => {
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
    const used = new Set(rules().flatMap((r) => metricNames(r.expr)));
    assert.ok(used.size >= 10, [...used].join(", "));
    const missing = [...used].filter((n) => !families.has(n) && !PROMETHEUS_OWN.has(n));
    assert.deepEqual(missing, [], "metrics the alert rules use that /metrics does not export");
  } finally {
    await server.close();
  }
});

/** A `promtool test rules` case: input series and the alerts expected at `evalTime`. */
const RULE_TESTS = {
  rule_files: [RULES],
  evaluation_interval: "1m",
  tests: [
    {
      interval: "1m",
      input_series: [
        { series: 'issuance_payout_funds_available{chain="sol",instance="a"}', values: "100x30" },
        { series: 'issuance_payouts_pending_amount{chain="sol",instance="a"}', values: "250x30" },
        { series: 'issuance_payout_funds_available{chain="doge",instance="a"}', values: "500x30" },
        { series: 'issuance_payouts_pending_amount{chain="doge",instance="a"}', values: "250x30" },
        { series: 'issuance_reconciliation_ok{instance="a"}', values: "0x30" },
        { series: 'issuance_reconciliation_last_run_timestamp_seconds{instance="a"}', values: "0x30" },
        { series: 'issuance_watcher_lag_blocks{chain="base",instance="a"}', values: "5x30" },
        { series: 'issuance_watcher_cursor_block{chain="base",instance="a"}', values: "100x30" },
        { series: 'issuance_watcher_lag_blocks{chain="sol",instance="a"}', values: "5x30" },
        { series: 'issuance_watcher_cursor_block{chain="sol",instance="a"}', values: "100+10x30" },
        {
          series: 'issuance_rpc_requests_total{chain="sol",endpoint="https://a.example",instance="a"}',
          values: "0+100x30",
        },
        {
          series: 'issuance_rpc_errors_total{chain="sol",endpoint="https://a.example",reason="timeout",instance="a"}',
          values: "0+50x30",
        },
        {
          series: 'issuance_rpc_requests_total{chain="xrp",endpoint="https://b.example",instance="a"}',
          values: "0+100x30",
        },
        {
          series: 'issuance_rpc_errors_total{chain="xrp",endpoint="https://b.example",reason="timeout",instance="a"}',
          values: "0+1x30",
        },
      ],
      alert_rule_test: [
        {
          eval_time: "20m",
          alertname: "IssuancePayoutFundsShort",
          exp_alerts: [{
            exp_labels: { severity: "critical", chain: "sol" },
            exp_annotations: {
              summary: "sol: payout funds are below what waiting burns must pay",
              runbook: rules().find((r) => r.alert === "IssuancePayoutFundsShort")!.annotations!.runbook,
            },
          }],
        },
        // A reconciliation never stored is stale, not a mismatch.
        { eval_time: "20m", alertname: "IssuanceReconciliationMismatch", exp_alerts: [] },
        // Base's cursor has not moved with a lag above 0; sol's moves.
        {
          eval_time: "25m",
          alertname: "IssuanceWatcherStalled",
          exp_alerts: [{
            exp_labels: { severity: "critical", chain: "base" },
            exp_annotations: {
              summary: "base: the watcher has not moved for 15 minutes while the chain did",
              runbook: rules().find((r) => r.alert === "IssuanceWatcherStalled")!.annotations!.runbook,
            },
          }],
        },
      ],
    },
  ],
};

Deno.test("promtool test rules: funds short, a never-run reconciliation, a stalled watcher", {
  ignore: !tool,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "alert-rules-" });
  try {
    await Deno.writeTextFile(`${dir}/tests.json`, JSON.stringify(RULE_TESTS)); // JSON is YAML
    const result = await run(["test", "rules", `${dir}/tests.json`]);
    assert.equal(result.code, 0, result.out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
