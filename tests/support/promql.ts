/** Reading PromQL for tests: which metrics an expression (an alert rule's, a Grafana panel's) queries. */

const PROMQL_WORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "inf",
  "nan",
]);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords or label names. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, "") // label matchers
    .replace(/\[[^\]]*\]/g, "") // range selectors
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ""); // label lists
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith("(") || PROMQL_WORDS.has(m[0].toLowerCase())) continue; // a function or a keyword
    if (/^\d/.test(m[0])) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Debian's `promtool` (package prometheus, installed by .ci/run), or null when it is not installed. */
export function promtool(): string | null {
  for (const path of ["/usr/bin/promtool", "/usr/local/bin/promtool"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not here */ }
  }
  return null;
}
