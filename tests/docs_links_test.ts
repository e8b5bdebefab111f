/**
 * The documentation stays navigable and cites only what a reader of this repository can open (README.md "Where
 * everything else is"):
 * - every relative link in a Markdown file (README.md, docs/*.md, client/README.md) resolves: the file exists inside
 *   the repository and an `#anchor` names a heading of its target, slugged as GitHub slugs headings;
 * - no comment or document cites an issue number (`issue 12`) or a document outside the repository (a path that
 *   climbs out of it, or a `.md` file the repository does not hold);
 * - every `README "Section"` or `docs/page.md "Section"` citation names a heading (or a bold paragraph label) that
 *   exists in that file.
 * Pure reads of the working tree: no server, no network.
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** Folders that are no source of ours. */
const SKIP_DIRS = new Set(["node_modules", "data", ".git"]);

/**
 * The one place allowed to name a path outside the repository: the Zcash test vectors are read at test time from a
 * folder beside the repository, by licence never copied into it (docs/architecture.md "Chain facts").
 */
const OUTSIDE_PATH_ALLOWED = new Set(["tests/support/zcash_vectors.ts"]);

/** Upstream projects' documents, cited with their project where a chain fact comes from them. */
const UPSTREAM_DOCUMENTS = new Set([
  "fee-recommendation.md", // Dogecoin Core's doc/
  "rate-limiting.md", // XRPLF/xrpl-dev-portal
  "slip-0010.md", // satoshilabs/slips
]);

async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(`${ROOT}/${dir}`)) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory) {
      if (!SKIP_DIRS.has(entry.name)) await walk(rel, out);
    } else if (entry.isFile) out.push(rel);
  }
  return out;
}

const FILES = (await walk("")).sort();
const SOURCES = FILES.filter((f) =>
  (/\.(ts|md|yml|yaml|sh)$/.test(f) || ["Dockerfile", ".ci/run"].includes(f)) && f !== "tests/docs_links_test.ts"
);
const DOCS = FILES.filter((f) => f.endsWith(".md"));
const MD_BASENAMES = new Set(FILES.filter((f) => f.endsWith(".md")).map((f) => f.split("/").pop()!));

const text = new Map<string, string>();
async function read(path: string): Promise<string> {
  if (!text.has(path)) text.set(path, await Deno.readTextFile(`${ROOT}/${path}`));
  return text.get(path)!;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(md: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fenced = false;
  md.split("\n").forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) out.push([i + 1, line]);
  });
  return out;
}

/** GitHub's heading anchor: the rendered text lowercased, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link renders as its text
    .replace(/[`*_]/g, (c) => (c === "_" ? "_" : "")); // code and emphasis marks render as nothing
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function headings(md: string): string[] {
  return proseLines(md).map(([, l]) => /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)?.[1]).filter((h): h is string => !!h);
}

/** Every anchor a page offers, duplicates numbered as GitHub numbers them. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const h of headings(md)) {
    const slug = githubSlug(h);
    const n = seen.get(slug) ?? 0;
    out.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  return out;
}

/** Where `target` (a path relative to `from`'s folder) lands, relative to the root; null when outside it. */
function resolveFrom(from: string, target: string): string | null {
  const parts = from.split("/").slice(0, -1);
  for (const seg of target.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join("/");
}

Deno.test("githubSlug slugs headings as GitHub does", () => {
  assert.equal(githubSlug("What watching costs (`deno task bench:scale`)"), "what-watching-costs-deno-task-benchscale");
  assert.equal(githubSlug("Roles: one process, or api and worker"), "roles-one-process-or-api-and-worker");
  assert.equal(
    githubSlug("Reorg past finality (alert `reorg_past_finality`)"),
    "reorg-past-finality-alert-reorg_past_finality",
  );
  assert.equal(githubSlug("Live Dogecoin and Zcash"), "live-dogecoin-and-zcash");
});

Deno.test("the scan covers the tree: the README, the docs pages and the code", () => {
  for (const f of ["README.md", "docs/architecture.md", "client/README.md"]) assert.ok(DOCS.includes(f), f);
  for (const f of ["main.ts", "actors/order_actor.ts", "docs/alerts.yml", "scripts/walkthrough.sh", "Dockerfile"]) {
    assert.ok(SOURCES.includes(f), f);
  }
});

Deno.test("README.md stays a front page: at most 250 lines, the rest in docs/", async () => {
  const lines = (await read("README.md")).split("\n").length;
  assert.ok(lines <= 250, `README.md has ${lines} lines: move detail to a docs/ page and link it`);
});

Deno.test("every relative link in README.md and docs/*.md resolves, anchors included", async () => {
  const broken: string[] = [];
  for (const page of DOCS) {
    for (const [n, line] of proseLines(await read(page))) {
      const withoutCode = line.replace(/`[^`]*`/g, "");
      for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const link = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith("/")) continue; // a URL or a route of the server
        const [path, anchor] = link.split("#", 2);
        const target = path === "" ? page : resolveFrom(page, decodeURI(path));
        const where = `${page}:${n}: ${link}`;
        if (target === null) {
          broken.push(`${where} (outside the repository)`);
          continue;
        }
        let isFile = false;
        try {
          const stat = await Deno.stat(`${ROOT}/${target}`);
          isFile = stat.isFile;
          if (!stat.isFile && !stat.isDirectory) throw new Error("neither file nor folder");
        } catch {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor !== undefined && (!isFile || !target.endsWith(".md") || !anchors(await read(target)).has(anchor))) {
          broken.push(`${where} (no heading with that anchor in ${target})`);
        }
      }
    }
  }
  assert.deepEqual(broken, [], "broken links");
});

Deno.test("comments and docs cite no issue number and no document outside the repository", async () => {
  const found: string[] = [];
  for (const file of SOURCES) {
    const lines = (await read(file)).split("\n");
    lines.forEach((raw, i) => {
      const where = `${file}:${i + 1}`;
      const line = raw.replace(/https?:\/\/\S+/g, ""); // a URL names its own document
      for (const m of line.matchAll(/\bissues? \d+/gi)) found.push(`${where}: "${m[0]}" (cite the document instead)`);
      if (OUTSIDE_PATH_ALLOWED.has(file)) return;
      for (const m of line.matchAll(/(?:\.\.\/)+[\w.-][\w./-]*/g)) {
        if (resolveFrom(file, m[0]) === null) found.push(`${where}: ${m[0]} (a path outside the repository)`);
      }
      if (/\/work\/|\bshared\/spec\b/.test(line)) found.push(`${where}: a path outside the repository`);
      for (const m of line.matchAll(/\b[\w.-]+\.md\b/g)) {
        if (!MD_BASENAMES.has(m[0]) && !UPSTREAM_DOCUMENTS.has(m[0])) {
          found.push(`${where}: ${m[0]} (no such document in the repository)`);
        }
      }
    });
  }
  assert.deepEqual(found, []);
});

Deno.test('every README "Section" or docs/page.md "Section" citation names a heading of that page', async () => {
  const missing: string[] = [];
  for (const file of SOURCES) {
    // A citation may wrap onto the next comment line: join lines, dropping the comment marks that start them.
    const flat = (await read(file)).replace(/\n[ \t]*(?:\*(?!\*)|\/\/|#)?[ \t]*/g, " ");
    for (const m of flat.matchAll(/\b(README(?:\.md)?|docs\/[\w-]+\.md)(?:'s)?[,:]?\s+\(?"([^"]+)"/g)) {
      const page = m[1].startsWith("README") ? "README.md" : m[1];
      const cited = m[2].replace(/^#+\s*/, "").replace(/`/g, "").toLowerCase();
      if (!FILES.includes(page)) {
        missing.push(`${file}: ${m[0]} (${page} does not exist)`);
        continue;
      }
      const md = await read(page);
      const labels = [...headings(md), ...[...md.matchAll(/\*\*([^*]+)\*\*/g)].map((b) => b[1])]
        .map((h) => h.replace(/`/g, "").toLowerCase());
      if (!labels.some((h) => h.startsWith(cited))) missing.push(`${file}: ${m[0]} (no such heading in ${page})`);
    }
  }
  assert.deepEqual(missing, []);
});
