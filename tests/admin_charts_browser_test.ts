/**
 * The overview's charts (docs/dashboard.md "Charts") in a real browser after traffic on the sim chains: Debian's
 * chromium driven by npm playwright-core, every request to another host refused. Mints on three native chains (and a
 * deposit below the minimum, which fails) go through the real pipeline; the page then draws the orders per hour by
 * status, the deposit-to-mint latency, the watcher lag of every chain and the funds of every native chain, each an SVG
 * image with its name and its numbers beside it, and the Content-Security-Policy refuses nothing.
 *
 * Screenshots go to `SCREENSHOT_DIR` (default: a new temporary folder); their paths are printed. Without chromium the
 * test is skipped with a loud message, except under CI=true, where it fails.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { browserAvailable, launchChromium, offlinePage } from "./support/browser.ts";
import { createOperatorKey } from "../kv/operator_keys.ts";
import { depositAddress, FAST_PIPELINE, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";
import { chartSampleTicker } from "../actors/charts.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";

const { ignore } = browserAvailable("the dashboard charts browser test");

const DEPOSITS = [
  { chain: "sol", destination: "base", amount: "50000000" },
  { chain: "sol", destination: "arbitrum", amount: "70000000" },
  { chain: "xrp", destination: "base", amount: "2000000" },
  { chain: "doge", destination: "world", amount: "2000000000" },
  { chain: "sol", destination: "base", amount: "5000000" }, // below the 0.01 SOL minimum: a failed order
];

async function screenshotDir(): Promise<string> {
  const dir = Deno.env.get("SCREENSHOT_DIR") || await Deno.makeTempDir({ prefix: "dashboard-charts-" });
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

const attr = (page: Page, selector: string, name: string) =>
  page.locator(selector).evaluateAll((els, n) => els.map((e) => e.getAttribute(n) ?? ""), name);

Deno.test({
  name:
    "dashboard charts: after mints on sim chains the overview draws orders, latency, lag and funds with their numbers",
  ignore,
  // playwright-core keeps its pipe to the browser process in resources Deno's sanitizers do not know of.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startTestServer(FAST_PIPELINE);
    const browser = await launchChromium();
    try {
      const kv = server.services.kv;
      const { token } = await partner(server);
      const addresses = new Map<string, string>(); // one deposit address per chain and destination, reused
      for (const d of DEPOSITS) {
        const pair = `${d.chain}>${d.destination}`;
        const address = addresses.get(pair) ?? await depositAddress(server, token, d.chain, d.destination);
        addresses.set(pair, address);
        await sim(server, "deposits", { chain: d.chain, address, amount: d.amount });
      }
      const orders = await waitForOrders(
        server,
        token,
        (os) => os.length === DEPOSITS.length && os.every(terminal),
        { timeoutMs: 20_000 },
      );
      const completed = orders.filter((o) => o.status === "completed").length;
      assert.equal(completed, 4, JSON.stringify(orders.map((o) => [o.sourceChain, o.status])));
      // A sample now (the runtime's own tick takes one every 600 blocks' time): lag and funds after the traffic.
      const ctx = server.services.pipeline!;
      assert.ok(["written", "unchanged"].includes(await chartSampleTicker(ctx, ctx.settings.enabledChains, 1)()));

      const { operatorKey } = await createOperatorKey(kv, { name: "charts", scopes: ["read"], by: "test" });
      const origin = new URL(server.url).origin;
      const { page, refused, pageErrors } = await offlinePage(browser, origin, { width: 1400, height: 1000 });
      page.on("console", (m) => /Content Security Policy|Refused to/i.test(m.text()) && pageErrors.push(m.text()));
      await page.goto(`${server.url}/admin/ui`);
      await page.fill("#key", operatorKey);
      await Promise.all([page.waitForURL(`${server.url}/admin/ui`), page.click("#login")]);

      // Each chart is an image named by its title, described, with its table of numbers.
      for (
        const [id, name] of [
          ["chart-orders", /^Orders per hour by status, last 24 h$/],
          ["chart-latency", /^Time from deposit seen to mint completed/],
          ["chart-lag", /^Watcher lag per chain/],
          ["chart-funds-sol", /^sol: hot and cold balances against waiting payouts/],
        ] as const
      ) {
        assert.equal(await page.getByRole("img", { name }).count(), 1, `${id}: an image named ${name}`);
        assert.equal(await page.locator(`#${id}-table`).count(), 1, `${id}: its numbers`);
        assert.ok(((await page.locator(`#${id}-desc`).textContent()) ?? "").length > 40, `${id}: described`);
      }
      // Orders: the bars add up to what happened, four mints completed and one failed.
      const series = await attr(page, "#chart-orders rect.bar", "data-series");
      const counts = (await attr(page, "#chart-orders rect.bar", "data-count")).map(Number);
      const total = (s: string) => series.reduce((sum, x, i) => sum + (x === s ? counts[i] : 0), 0);
      assert.equal(total("mint/completed"), 4);
      assert.equal(total("mint/failed"), 1);
      assert.equal(total("mint/pending"), 5);
      // Latency: this hour's p50 and p95 points, and its row says four mints.
      assert.ok(await page.locator("#chart-latency circle.p50").count() >= 1);
      assert.ok(await page.locator("#chart-latency circle.p95").count() >= 1);
      const latencyRows = await page.locator("#chart-latency-table tbody tr td:nth-child(2)").allTextContents();
      assert.equal(latencyRows.map(Number).reduce((a, b) => a + b, 0), 4);
      // Lag: a line per enabled chain; funds: a chart per native chain with a drawn hot line and a number.
      assert.equal(await page.locator("#chart-lag path.lag").count(), ctx.settings.enabledChains.length);
      for (const chain of NATIVE_CHAINS) {
        const hot = await attr(page, `#chart-funds-${chain} path.funds[data-part="hot"]`, "d");
        assert.match(hot[0], /^M\d/, `${chain}: the hot line is drawn`);
        assert.match(
          (await page.locator(`#chart-funds-${chain}-table tbody tr td:nth-child(2)`).first().textContent()) ?? "",
          /^\d{1,3}(,\d{3})*(\.\d+)? [A-Z]+$/,
        );
      }
      assert.equal(await page.locator("script").count(), 0);
      assert.deepEqual(pageErrors, [], "nothing refused by the policy, no page error");
      assert.deepEqual(refused, [], "nothing asked of another host");

      const dir = await screenshotDir();
      // The tables open, so the screenshot shows the numbers beside the pictures.
      await page.locator("#charts details").evaluateAll((els) => els.forEach((e) => e.setAttribute("open", "")));
      const shots = [`${dir}/overview-charts.png`];
      await page.locator("#charts").screenshot({ path: shots[0] });
      for (const id of ["chart-orders", "chart-latency", "chart-lag", "chart-funds-sol"]) {
        const path = `${dir}/${id}.png`;
        await page.locator(`#${id}`).screenshot({ path });
        shots.push(path);
      }
      for (const s of shots) console.log(`dashboard charts screenshot: ${s}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
