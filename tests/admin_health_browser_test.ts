/**
 * The dashboard tells the truth at rest (docs/dashboard.md "Health"), in Debian's chromium through playwright-core, on
 * a real sim pipeline with WATCHER_UNWATCHED_SECONDS=3 (its watchers' looks stored every second,
 * actors/watcher_looks.ts):
 * - after traffic (a SOL deposit minted on base) and once no watcher lease is held any more, every chain is `ok`;
 * - the order's page (`/admin/ui/orders/:id`, reached from the orders list) shows its transitions, its transactions
 *   linked through SOL_EXPLORER_TX_URL, and its amount in SOL with the exact lamports in the title; an unknown id and
 *   one that is not an order id are a 404 page;
 * - the treasury shows amounts in the chain's coin and no JSON in a cell;
 * - the pipeline stopped, every chain becomes `unwatched` after the stated time; a process whose watcher is behind
 *   more than the threshold makes its chain `lagging`.
 * Screenshots go to SCREENSHOT_DIR, else a temporary folder (paths printed). Without chromium the test is skipped
 * loudly, except under CI=true, where it fails.
 */
import assert from "node:assert/strict";
import { browserAvailable, launchChromium, offlinePage, screenshot } from "./support/browser.ts";
import { writeWatcherLooks } from "../kv/watcher_looks.ts";
import { newOrderId } from "../model/order.ts";
import { depositAddress, FAST_PIPELINE, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";

const { ignore } = browserAvailable("the dashboard health browser test");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "dashboard health at rest, a stopped watcher, a lagging chain; the order page; amounts in units (chromium)",
  ignore,
  // playwright-core keeps its pipe to the browser process in resources Deno's sanitizers do not know of.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startTestServer({
      ...FAST_PIPELINE,
      WATCHER_UNWATCHED_SECONDS: "3",
      SOL_EXPLORER_TX_URL: "https://explorer.test/sol/tx/{hash}",
    });
    const browser = await launchChromium();
    try {
      const key = await operatorKeyFor(server, ["read"], "dash-health");
      const { token } = await partner(server);
      const address = await depositAddress(server, token, "sol", "base");
      const dep = await sim(server, "deposits", { chain: "sol", address, amount: "1500000000" });
      const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), {
        timeoutMs: 20_000,
      });
      assert.equal(order.status, "completed");

      // At rest: wait until no watcher lease is held (an idle watcher takes none), so only the looks say "watched".
      type Row = { chain: string; health: string; leaseHolder: string | null; why: string };
      const rows = async (): Promise<Row[]> =>
        (await call(server, "GET", "/admin/chains", { token: key })).body.data.chains;
      for (let i = 0; (await rows()).some((r) => r.leaseHolder !== null); i++) {
        assert.ok(i < 150, "the idle leases expire within seconds at 40 ms blocks");
        await sleep(100);
      }
      await sleep(3_500); // longer than WATCHER_UNWATCHED_SECONDS: the looks, stored every second, keep it watched

      const origin = new URL(server.url).origin;
      const { page, refused, pageErrors } = await offlinePage(browser, origin, { width: 1500, height: 1100 });
      await page.goto(`${server.url}/admin/ui`);
      await page.fill("#key", key);
      await Promise.all([page.waitForURL(`${server.url}/admin/ui`), page.click("#login")]);
      const health = async () =>
        Object.fromEntries(
          await page.locator("#chains tbody tr").evaluateAll((trs) =>
            trs.map((tr) => [tr.id.replace("chain-", ""), tr.getAttribute("data-health")])
          ),
        );
      const atRest = await health();
      assert.equal(Object.keys(atRest).length, 10);
      assert.deepEqual(
        Object.entries(atRest).filter(([, h]) => h !== "ok"),
        [],
        `every chain ok at rest: ${JSON.stringify(await rows())}`,
      );
      // The looks are the signal, not the lease: in one read with no lease held anywhere, every chain is ok. (A late
      // sim block may take a lease for a moment while the page loads, so the read is retried until none is held.)
      for (let i = 0;; i++) {
        const now = await rows();
        if (now.some((r) => r.leaseHolder !== null)) {
          assert.ok(i < 150, "the idle leases expire within seconds at 40 ms blocks");
          await sleep(100);
          continue;
        }
        assert.deepEqual(now.filter((r) => r.health !== "ok"), [], "every chain ok with no lease held");
        break;
      }
      await screenshot(page, "health-at-rest");

      // The order's page, from the orders list.
      await page.goto(`${server.url}/admin/ui/orders`);
      await Promise.all([page.waitForURL(`${server.url}/admin/ui/orders/${order.id}`), page.click(`text=${order.id}`)]);
      assert.equal(await page.locator("#order-status").textContent(), "completed");
      const amount = page.locator("#order .amount");
      assert.equal(await amount.textContent(), "1.5 SOL");
      assert.equal(await amount.getAttribute("title"), "1500000000 smallest units");
      const transitions = await page.locator("#order-transitions tbody tr td:nth-child(2)").allTextContents();
      assert.equal(transitions[0], "pending");
      assert.equal(transitions.at(-1), "completed");
      const link = page.locator('#order-transactions tr[data-role="deposit"] a');
      assert.equal(await link.getAttribute("href"), `https://explorer.test/sol/tx/${encodeURIComponent(dep.txHash)}`);
      assert.equal(await page.locator('#order-transactions tr[data-role="mint"] a').count(), 0, "sim base: no link");
      assert.ok(Number((await page.locator("#order-webhooks h2").textContent())?.match(/\d+/)?.[0]) >= 0);
      await screenshot(page, "order-detail");
      for (const id of [newOrderId(), "not-an-order"]) {
        const res = await page.goto(`${server.url}/admin/ui/orders/${id}`);
        assert.equal(res!.status(), 404, id);
        assert.equal(await page.locator("#notice").textContent(), `no order ${id}`);
      }
      await screenshot(page, "order-404");

      // Treasury: amounts in each chain's coin, the exact integer in the title, no JSON in a cell.
      await page.goto(`${server.url}/admin/ui/treasury`);
      const cells = await page.locator("section[id^=treasury-] td.num").allTextContents();
      assert.ok(cells.length > 10);
      assert.deepEqual(cells.filter((c) => /[{}"]/.test(c)), [], "no JSON in a cell");
      assert.ok(cells.some((c) => / SOL$/.test(c.trim())), cells.join(" | "));
      assert.ok(cells.some((c) => / DOGE$/.test(c.trim())), cells.join(" | "));
      await screenshot(page, "treasury-units");

      // The watchers stopped: after WATCHER_UNWATCHED_SECONDS every chain is unwatched.
      await server.pipeline!.stop();
      const stoppedAt = Date.now();
      await sleep(1_000);
      await page.goto(`${server.url}/admin/ui`);
      assert.deepEqual(
        Object.entries(await health()).filter(([, h]) => h !== "ok"),
        [],
        "within the stated time a stopped process's chains are still ok",
      );
      await sleep(Math.max(0, stoppedAt + 4_200 - Date.now()));
      await page.goto(`${server.url}/admin/ui`);
      assert.ok(Object.values(await health()).every((h) => h === "unwatched"), JSON.stringify(await health()));
      assert.match(await page.locator("#chain-sol").textContent() ?? "", /WATCHER_UNWATCHED_SECONDS/);
      await screenshot(page, "health-stopped");

      // Another process watching doge, 5,000 blocks behind (the threshold is a minute of 40 ms blocks: 1,500).
      const now = new Date().toISOString();
      await writeWatcherLooks(server.services.kv, {
        owner: "peer-behind",
        at: now,
        chains: { doge: { at: now, scannedTo: 10, lag: 5_000 } },
      });
      await page.goto(`${server.url}/admin/ui`);
      assert.equal((await health()).doge, "lagging");
      assert.match(
        await page.locator("#chain-doge").textContent() ?? "",
        /5000 blocks behind the tip \(threshold 1500\)/,
      );
      await screenshot(page, "health-lagging");

      assert.deepEqual(pageErrors, []);
      assert.deepEqual(refused, []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
