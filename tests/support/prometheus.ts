/**
 * A strict reader of the Prometheus text exposition format (0.0.4) for tests: every line must be a `# HELP`, a
 * `# TYPE`, a comment, blank, or a sample of a declared family; anything else throws, naming the line.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name -> type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count", ""],
};

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  const n = Number(text);
  if (text === "" || Number.isNaN(n)) throw new Error(`not a sample value: ${JSON.stringify(line)}`);
  return n;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || m.index !== start) throw new Error(`bad labels in ${JSON.stringify(line)}`);
    if (m[1] in labels) throw new Error(`label ${m[1]} twice in ${JSON.stringify(line)}`);
    labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
  }
  return labels;
}

/** The family a sample belongs to: its own name, or its name less a histogram's or summary's suffix. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const [family, type] of types) {
    for (const suffix of SUFFIXES[type] ?? []) if (suffix && name === family + suffix) return family;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest = ""] = m;
      if (!NAME.test(name)) throw new Error(`bad metric name in ${JSON.stringify(line)}`);
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`unknown type in ${JSON.stringify(line)}`);
        if (types.has(name)) throw new Error(`${name} typed twice`);
        types.set(name, rest);
      } else help.set(name, rest);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = m;
    if (familyOf(name, types) === undefined) throw new Error(`sample of an undeclared family: ${JSON.stringify(line)}`);
    const labels = parseLabels(labelText ?? "", line);
    const id = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(id)) throw new Error(`series twice: ${JSON.stringify(line)}`);
    seen.add(id);
    samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  return { types, help, samples };
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(e: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample named `name` with exactly these labels' values among its own, or undefined. */
export function valueOf(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samplesOf(e, name, labels);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} series match`);
  return found[0]?.value;
}
