/**
 * The order detail (actors/ops/order_detail.ts) over real HTTP and the CLI, on a sim pipeline: a SOL deposit minted
 * on base shows its transitions in order with times, its deposit and mint transactions (the deposit linked through
 * SOL_EXPLORER_TX_URL, the simulated base mint without a link), its webhook deliveries; an order cancelled by an
 * operator shows the audit entry and its cancelled transition. An unknown id and one that is not an order id are 404;
 * a bad explorer template refuses the configuration.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../config/env.ts";
import { explorerTxUrl, loadExplorerConfig } from "../config/explorers.ts";
import { createOrder } from "../kv/orders.ts";
import { runTask } from "./support/cli.ts";
import { makeOrder } from "./support/orders.ts";
import { depositAddress, FAST_PIPELINE, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";

Deno.test("order detail: transitions, transactions with explorer links, webhooks, audit; 404s; over the API and the CLI", async () => {
  const server = await startTestServer({
    ...FAST_PIPELINE,
    SOL_EXPLORER_TX_URL: "https://explorer.test/sol/tx/{hash}",
  });
  try {
    const key = await operatorKeyFor(server, ["read", "operate"], "detail-reader");
    const { wallet, token } = await partner(server);
    const hook = await call(server, "POST", "/webhooks/endpoints", {
      token,
      body: { url: "https://hooks.partner.test/orders" },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const address = await depositAddress(server, token, "sol", "base");
    const dep = await sim(server, "deposits", { chain: "sol", address, amount: "1500000000" });
    const [done] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 20_000 });
    assert.equal(done.status, "completed");

    // Every transition is sequenced shortly after it commits; wait until the completed one is.
    let d;
    for (let i = 0; i < 200; i++) {
      const res = await call(server, "GET", `/admin/orders/${done.id}/detail`, { token: key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      d = res.body.data;
      if (d.transitions.at(-1)?.status === "completed" && d.transitions.at(-1).seq !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(d.order.display.amount, "1.5 SOL");
    assert.equal(d.order.owner, wallet.toLowerCase());
    const statuses = d.transitions.map((t: { status: string }) => t.status);
    assert.equal(statuses[0], "pending");
    assert.equal(statuses.at(-1), "completed");
    assert.ok(statuses.includes("minting"), statuses.join(","));
    const times = d.transitions.map((t: { at: string }) => Date.parse(t.at));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), "oldest first");
    assert.ok(d.transitionsComplete);

    const deposit = d.transactions.find((t: { role: string }) => t.role === "deposit");
    assert.equal(deposit.chain, "sol");
    assert.equal(deposit.txHash, dep.txHash);
    assert.equal(deposit.url, `https://explorer.test/sol/tx/${encodeURIComponent(dep.txHash)}`);
    assert.equal(deposit.status, "confirmed");
    const mint = d.transactions.find((t: { role: string }) => t.role === "mint");
    assert.equal(mint.chain, "base");
    assert.equal(mint.txHash, done.transactionHash);
    assert.equal(mint.status, "final");
    assert.equal(mint.url, null, "a simulated chain without a template has no link");

    assert.ok(d.webhooks.length >= 1, "a delivery per sequenced event to the partner's endpoint");
    assert.ok(d.webhooks.every((w: { url: string }) => w.url === "https://hooks.partner.test/orders"));
    assert.ok(d.webhooks.some((w: { eventType: string }) => w.eventType === "order.completed"));
    assert.equal(d.hold, null);
    assert.deepEqual(d.audit, []);

    // An order an operator cancels: its audit entry and its transition.
    const pending = makeOrder(wallet.toLowerCase(), "mint", "pending", 1);
    assert.ok(await createOrder(server.services.kv, pending));
    const cancel = await call(server, "POST", `/admin/orders/${pending.id}/cancel`, { token: key });
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    const c = (await call(server, "GET", `/admin/orders/${pending.id}/detail`, { token: key })).body.data;
    assert.deepEqual(c.audit.map((a: { action: string; by: string }) => [a.action, a.by.split(" ")[0]]), [
      ["order.cancel", "detail-reader"],
    ]);
    assert.equal(c.transitions.at(-1).status, "cancelled");

    for (const id of ["01900000-0000-7000-8000-000000000000", "not-an-order", "../orders"]) {
      const res = await call(server, "GET", `/admin/orders/${encodeURIComponent(id)}/detail`, { token: key });
      assert.equal(res.status, 404, id);
      if (id !== "../orders") assert.match(JSON.stringify(res.body), /no order/);
    }

    // The CLI: the same operation on the same KV, in words.
    const cli = await runTask("admin", {
      KV_PATH: server.kvPath,
      SOL_EXPLORER_TX_URL: "https://explorer.test/sol/tx/{hash}",
    }, [
      "order",
      "detail",
      done.id,
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`^order ${done.id}: mint completed, 1\\.5 SOL, sol -> base`, "m"));
    assert.match(cli.stdout, /\tcompleted$/m);
    assert.match(cli.stdout, new RegExp(`deposit\\tsol\\t${dep.txHash}\\tconfirmed\\thttps://explorer\\.test/sol/tx/`));
    const missing = await runTask("admin", { KV_PATH: server.kvPath }, ["order", "detail", "nope"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr + missing.stdout, /no order nope/);
  } finally {
    await server.close();
  }
});

Deno.test("explorer templates: {hash} exactly once in an http(s) URL, else refused at start; mainnet defaults for live chains", () => {
  const ok = loadExplorerConfig({ XRP_EXPLORER_TX_URL: "https://testnet.xrpl.org/transactions/{hash}" });
  assert.equal(explorerTxUrl(ok, "xrp", "AB12", false), "https://testnet.xrpl.org/transactions/AB12");
  assert.equal(explorerTxUrl(ok, "base", "0xab", true), "https://basescan.org/tx/0xab");
  assert.equal(explorerTxUrl(ok, "base", "0xab", false), null, "sim: no default link");
  assert.equal(explorerTxUrl(ok, "sol", "a/b?c", true), "https://solscan.io/tx/a%2Fb%3Fc", "the hash is encoded");
  for (
    const [value, why] of [
      ["https://x.test/tx/", /SOL_EXPLORER_TX_URL must contain \{hash\} exactly once/],
      ["https://x.test/{hash}/{hash}", /exactly once/],
      ["javascript:alert({hash})", /must be an http or https URL/],
      ["not a url {hash}", /is not a URL/],
    ] as const
  ) {
    assert.throws(() => loadConfig({ SOL_EXPLORER_TX_URL: value }), why, value);
  }
});
