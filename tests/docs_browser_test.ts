/**
 * /docs in a real browser (docs/openapi.md): Debian's chromium, driven by npm playwright-core, opens the reference page
 * with every request to another host refused, so the page is proven to work offline; every operation of /openapi.json
 * must be listed on the rendered page. A screenshot is kept in a temporary folder whose path is printed.
 * Without chromium the test is skipped with a loud message, except under CI=true, where it fails.
 */
import assert from "node:assert/strict";
import { browserAvailable, launchChromium, offlinePage } from "./support/browser.ts";
import { startTestServer } from "./support/server.ts";

const METHODS = ["get", "put", "post", "delete", "patch"];
const { ignore } = browserAvailable("the /docs browser test");

Deno.test({
  name: "/docs renders every route of /openapi.json in chromium with no host but the server reachable",
  ignore,
  // playwright-core keeps its pipe to the browser process in resources Deno's sanitizers do not know of.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startTestServer();
    const browser = await launchChromium();
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

      // Offline: the server answers, every other host is refused (and recorded).
      const { page, refused, pageErrors } = await offlinePage(browser, new URL(server.url).origin, {
        width: 1400,
        height: 1000,
      });

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
