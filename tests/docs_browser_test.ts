/**
 * /docs in a real browser (issue 12): Debian's chromium, driven by npm playwright-core, opens the reference page with
 * every request to another host refused, so the page is proven to work offline; every operation of /openapi.json
 * must be listed on the rendered page. A screenshot is kept in a temporary folder whose path is printed.
 * Without chromium the test is skipped with a loud message, except under CI=true, where it fails.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startTestServer } from "./support/server.ts";

const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";
const METHODS = ["get", "put", "post", "delete", "patch"];

function chromiumInstalled(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

const installed = chromiumInstalled();
const inCi = Deno.env.get("CI") === "true";
if (!installed) {
  const message = `${CHROMIUM} not found (Debian: apt-get install -y chromium): the /docs browser test cannot run`;
  console.warn(`\n!!!!!!!!!!\n!!! ${message}${inCi ? "" : "; SKIPPED"}\n!!!!!!!!!!\n`);
}

Deno.test({
  name: "/docs renders every route of /openapi.json in chromium with no host but the server reachable",
  ignore: !installed && !inCi,
  // playwright-core keeps its pipe to the browser process in resources Deno's sanitizers do not know of.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.ok(installed, `${CHROMIUM} is missing and CI=true: .ci/run installs Debian's chromium`);
    const server = await startTestServer();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      // As root (CI, containers) chromium refuses to start sandboxed.
      args: Deno.uid() === 0 ? ["--no-sandbox"] : [],
    });
    try {
      const doc = await (await fetch(`${server.url}/openapi.json`)).json();
      const operations: { method: string; path: string; summary: string }[] = Object.entries(
        doc.paths as Record<string, Record<string, { summary: string }>>,
      ).flatMap(([path, item]) =>
        Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([m, op]) => ({
          method: m.toUpperCase(),
          path,
          summary: op.summary,
        }))
      );
      assert.ok(operations.length >= 20, `only ${operations.length} operations`);

      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      // Offline: the server answers, every other host is refused (and recorded).
      const origin = new URL(server.url).origin;
      const refused: string[] = [];
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (new URL(url).origin === origin) return route.continue();
        refused.push(url);
        return route.abort("internetdisconnected");
      });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (err) => pageErrors.push(err.message));

      const res = await page.goto(`${server.url}/docs`);
      assert.equal(res?.status(), 200);
      // Each tag's "Operations" box lists `METHOD /path`; the sidebar lists each operation's summary. The page
      // functions are strings: this file is type-checked without the DOM library.
      const lines = JSON.stringify(operations.map((op) => `${op.method}\n${op.path}`));
      try {
        await page.waitForFunction(`${lines}.every((l) => document.body.innerText.includes(l))`, undefined, {
          timeout: 60_000,
        });
      } catch {
        const text = String(await page.evaluate("document.body.innerText"));
        const missing = operations.filter((op) => !text.includes(`${op.method}\n${op.path}`));
        assert.fail(`not listed on /docs: ${missing.map((op) => `${op.method} ${op.path}`).join(", ")}`);
      }
      const sidebar = String(
        await page.evaluate(`Array.from(document.querySelectorAll("nav, aside"), (e) => e.innerText).join("\\n")`),
      );
      for (const op of operations) assert.ok(sidebar.includes(op.summary), `sidebar lacks "${op.summary}"`);

      const dir = await Deno.makeTempDir({ prefix: "docs-browser-test-" });
      const screenshot = `${dir}/docs.png`;
      await page.screenshot({ path: screenshot });
      console.log(`/docs screenshot: ${screenshot}`);

      assert.deepEqual(pageErrors, [], "script errors on /docs");
      assert.deepEqual(refused, [], "/docs asked hosts other than the server");
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
