/**
 * GET /metrics over real HTTP (docs/metrics.md): only an operator key with scope `metrics` reads it; the text
 * is valid Prometheus exposition; a sim mint and burn show in the order gauges and the step histograms; the gauges
 * read held records, holds, stuck transactions, alerts, payouts and the stored reconciliation from KV; RPC endpoint
 * failures of live adapters (EVM on anvil over viem, Solana over the HTTP failover) are counted per endpoint origin,
 * with no credential, path or key of the URL in the text.
 */
import assert from "node:assert/strict";
import { EVM, NATIVE } from "../chains/catalog.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { Metrics } from "../actors/metrics.ts";
import { raiseAlert } from "../kv/alerts.ts";
import { addOrderCreate } from "../kv/orders.ts";
import { type Order, withDetails } from "../model/order.ts";
import { cursorKey, heldKey, type HeldTransfer, type OrderHold, orderHoldKey } from "../kv/pipeline.ts";
import { storeReconciliation } from "../kv/reconciliation.ts";
import { addCoins } from "../kv/treasury.ts";
import { treasuryReport } from "../actors/treasury_report.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { ANVIL_MNEMONIC, closedPortUrl } from "./support/anvil.ts";
import { liveBase } from "./support/live_base.ts";
import { makeOrder } from "./support/orders.ts";
import { depositAddress, FAST_PIPELINE, outside, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { type Exposition, parsePrometheusText, samplesOf, valueOf } from "./support/prometheus.ts";
import { call, newApiKey, operatorKeyFor, randomWallet, startTestServer, type TestServer } from "./support/server.ts";
import { signer } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";

async function scrape(server: TestServer, key: string): Promise<{ text: string; metrics: Exposition }> {
  const res = await call(server, "GET", "/metrics", { token: key });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(typeof res.body, "string");
  return { text: res.body, metrics: parsePrometheusText(res.body) };
}

Deno.test("GET /metrics answers only an operator key with scope metrics, in the documented shapes", async () => {
  const server = await startTestServer();
  try {
    const none = await call(server, "GET", "/metrics");
    assert.equal(none.status, 401);
    assert.equal(none.body.success, false);
    const partnerKey = await newApiKey(server);
    assert.equal((await call(server, "GET", "/metrics", { token: partnerKey })).status, 403, "a partner key");
    assert.equal((await call(server, "GET", "/metrics", { token: "op_0123456789abcdef.wrong" })).status, 403);
    const reader = await operatorKeyFor(server, ["read", "operate", "keys"], "no-metrics");
    const refused = await call(server, "GET", "/metrics", { token: reader });
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, /metrics/);

    const key = await operatorKeyFor(server, ["metrics"], "scraper");
    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("Content-Type") ?? "", /^text\/plain; version=0\.0\.4/);
    const metrics = parsePrometheusText(await res.text());
    assert.equal(metrics.types.get("issuance_orders"), "gauge");
    assert.equal(metrics.types.get("issuance_order_step_seconds"), "histogram");
    assert.equal(metrics.types.get("issuance_rpc_errors_total"), "counter");
    assert.equal(valueOf(metrics, "issuance_orders", { type: "mint", status: "completed" }), 0);
    // A metrics key is no admin key.
    assert.equal((await call(server, "GET", "/admin/audit", { token: key })).status, 403);
  } finally {
    await server.close();
  }
});

Deno.test("a sim mint and burn show in the order gauges, the transitions and the step histograms", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "sol", "base");
    await sim(server, "deposits", { chain: "sol", address, amount: NATIVE.sol.minimumDeposit.toString() });
    const destination = outside.depositAddress("xrp", 3);
    const config = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "xrp", destinationAddress: destination, memo: "7" },
    });
    assert.equal(config.status, 201);
    const burned = NATIVE.xrp.uAsset.minimumBurnAmount * 2n;
    await sim(server, "faucet", { chain: "arbitrum", address: wallet, token: "uXRP", amount: burned.toString() });
    await sim(server, "transfers", { chain: "arbitrum", from: wallet, token: "uXRP", amount: burned.toString() });
    const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal));
    assert.deepEqual(orders.map((o) => `${o.type} ${o.status}`).sort(), ["burn completed", "mint completed"]);

    const { metrics } = await scrape(server, await operatorKeyFor(server, ["metrics"]));
    for (const type of ["mint", "burn"]) {
      assert.equal(valueOf(metrics, "issuance_orders", { type, status: "completed" }), 1, type);
      for (const status of ["pending", "processing", "failed"]) {
        assert.equal(valueOf(metrics, "issuance_orders", { type, status }), 0, `${type} ${status}`);
      }
    }
    assert.equal(valueOf(metrics, "issuance_orders", { type: "mint", status: "burning" }), undefined);

    const paths = {
      mint: { source_chain: "sol", destination_chain: "base", steps: ["pending", "processing", "minting"] },
      burn: { source_chain: "arbitrum", destination_chain: "xrp", steps: ["pending", "processing", "burning"] },
    };
    for (const [type, p] of Object.entries(paths)) {
      const labels = { type, source_chain: p.source_chain, destination_chain: p.destination_chain };
      const moves = [[p.steps[0], p.steps[1]], [p.steps[1], p.steps[2]], [p.steps[2], "completed"]];
      let stepsSum = 0;
      for (const [from, to] of moves) {
        const step = `${from}_to_${to}`;
        assert.equal(valueOf(metrics, "issuance_order_step_seconds_count", { ...labels, step }), 1, `${type} ${step}`);
        const sum = valueOf(metrics, "issuance_order_step_seconds_sum", { ...labels, step })!;
        assert.ok(sum >= 0, `${type} ${step}: ${sum}`);
        stepsSum += sum;
        assert.equal(valueOf(metrics, "issuance_order_transitions_total", { type, from, to }), 1, `${type} ${step}`);
        const inf = valueOf(metrics, "issuance_order_step_seconds_bucket", { ...labels, step, le: "+Inf" });
        assert.equal(inf, 1);
      }
      const endToEnd = { ...labels, step: "end_to_end" };
      assert.equal(valueOf(metrics, "issuance_order_step_seconds_count", endToEnd), 1);
      // Each step is timed from when the order entered it: the steps add up to the whole.
      const whole = valueOf(metrics, "issuance_order_step_seconds_sum", endToEnd)!;
      assert.ok(Math.abs(whole - stepsSum) < 0.002, `${type}: steps ${stepsSum} s, end to end ${whole} s`);
    }

    // Every enabled chain's watcher is followed: its tip was read and the lag is known for the chains it scanned.
    for (const chain of ["sol", "xrp", "base", "arbitrum"]) {
      assert.equal(valueOf(metrics, "issuance_chain_tip_up", { chain }), 1, chain);
      const lag = valueOf(metrics, "issuance_watcher_lag_blocks", { chain });
      assert.ok(lag !== undefined && lag >= 0, `${chain} lag ${lag}`);
    }
    assert.equal(valueOf(metrics, "issuance_payouts_pending", { chain: "xrp" }), 0);
    assert.equal(valueOf(metrics, "issuance_payout_funds_up", { chain: "xrp" }), 1);
    assert.equal(valueOf(metrics, "issuance_stuck_transactions", { type: "mint", chain: "base" }), 0);
  } finally {
    await server.close();
  }
});

const HOUR_MS = 3_600_000;

/** `o` created and last moved `ms` ago, its recorded transaction (if any) prepared then too. */
function agedBy(o: Order, ms: number): Order {
  const at = new Date(Date.now() - ms).toISOString();
  const intent = o.details.intent ? { ...o.details.intent, preparedAt: at } : undefined;
  return withDetails({ ...o, createdAt: at, updatedAt: at }, intent ? { intent } : {});
}

Deno.test("the gauges read stuck transactions, held records, holds, alerts, payouts and the reconciliation", async () => {
  const server = await startTestServer(); // no pipeline: nothing moves the records written here
  try {
    const kv = server.services.kv;
    const owner = randomWallet();
    // makeOrder's chains follow its index: 3 -> doge and world, 0 -> sol and base.
    const stuckBurn = agedBy(makeOrder(owner, "burn", "burning", 3), 2 * HOUR_MS);
    const freshMint = makeOrder(owner, "mint", "minting", 0);
    // Two doge payouts waiting, 5 and 50 DOGE, against one 20 DOGE coin: the first is fundable, the second not.
    const doge = (i: number, units: bigint) => {
      const o = makeOrder(owner, "burn", "processing", i);
      return { ...o, amount: (units * 10n ** 8n * 10n ** 10n).toString() } as Order;
    };
    const waiting = withDetails(doge(8, 5n), { heldReason: "waiting for coins" });
    const waitingMore = doge(13, 50n);
    const heldOrder = makeOrder(owner, "mint", "processing", 5);
    assert.equal(stuckBurn.destinationChain, "doge");
    assert.equal(waiting.destinationChain, "doge");
    assert.equal(freshMint.destinationChain, "base");
    const atomic = kv.atomic();
    for (const o of [stuckBurn, freshMint, waiting, waitingMore, heldOrder]) addOrderCreate(atomic, o);
    const hold: OrderHold = {
      reason: "reorg past finality",
      at: new Date().toISOString(),
      alert: { kind: "x", subject: "y" },
    };
    atomic.set(orderHoldKey(heldOrder.id), hold);
    const held: HeldTransfer = {
      chain: "base",
      txHash: "0xabc",
      index: 0,
      from: randomWallet(),
      asset: "uSOL",
      amount: "1",
      blockNumber: 1,
      detectedAt: new Date().toISOString(),
      reason: "no burn configuration",
    };
    atomic.set(heldKey("base", "0xabc", 0), held);
    assert.ok((await atomic.commit()).ok);
    await addCoins(kv, [{
      chain: "doge",
      outpoint: { txHash: "ab".repeat(32), index: 0 },
      address: "DUMMY",
      derivationIndex: 1,
      amount: 20n * 10n ** 8n,
      height: 10,
      coinbase: false,
    }]);
    await raiseAlert(kv, { kind: "deep_reorg", subject: "base", chain: "base", message: "deep" });
    const reconciledAt = new Date(Date.now() - 3 * HOUR_MS);
    const mismatch = (kind: string) => ({ kind, asset: "uSOL", chain: "base", message: kind, records: ["r"] });
    await storeReconciliation(kv, {
      at: reconciledAt.toISOString(),
      ok: false,
      mismatches: [mismatch("minted_without_order"), mismatch("minted_without_order"), mismatch("supply_exceeds")],
      report: {},
    });

    const { text, metrics } = await scrape(server, await operatorKeyFor(server, ["metrics"]));
    assert.equal(valueOf(metrics, "issuance_orders", { type: "burn", status: "burning" }), 1);
    assert.equal(valueOf(metrics, "issuance_orders", { type: "burn", status: "processing" }), 2);
    assert.equal(valueOf(metrics, "issuance_orders", { type: "mint", status: "processing" }), 1);
    assert.equal(valueOf(metrics, "issuance_orders", { type: "mint", status: "minting" }), 1);

    assert.equal(valueOf(metrics, "issuance_stuck_transactions", { type: "burn", chain: "doge" }), 1);
    assert.equal(valueOf(metrics, "issuance_stuck_transactions", { type: "mint", chain: "base" }), 0);
    const oldest = valueOf(metrics, "issuance_outgoing_tx_oldest_age_seconds", { type: "burn", chain: "doge" })!;
    assert.ok(oldest >= 7200 && oldest < 7200 + 600, `${oldest}`);
    assert.ok(valueOf(metrics, "issuance_outgoing_tx_oldest_age_seconds", { type: "mint", chain: "base" })! < 600);
    assert.equal(valueOf(metrics, "issuance_orders_waiting_with_reason", { type: "burn", status: "processing" }), 1);

    assert.equal(valueOf(metrics, "issuance_held_records", { kind: "order_hold" }), 1);
    assert.equal(valueOf(metrics, "issuance_held_records", { kind: "transfer" }), 1);
    assert.equal(valueOf(metrics, "issuance_held_transfers", { chain: "base" }), 1);
    assert.equal(valueOf(metrics, "issuance_alerts_open", { kind: "deep_reorg" }), 1);
    assert.equal(valueOf(metrics, "issuance_alerts_open", { kind: "fee_cap_reached" }), 0);

    assert.equal(valueOf(metrics, "issuance_reconciliation_ok"), 0);
    assert.equal(valueOf(metrics, "issuance_reconciliation_mismatches", { kind: "minted_without_order" }), 2);
    assert.equal(valueOf(metrics, "issuance_reconciliation_mismatches", { kind: "supply_exceeds" }), 1);
    assert.equal(
      valueOf(metrics, "issuance_reconciliation_last_run_timestamp_seconds"),
      reconciledAt.getTime() / 1000,
    );

    // The doge payouts waiting in processing against the one coin, as the admin treasury report sees them.
    assert.equal(valueOf(metrics, "issuance_payouts_pending", { chain: "doge" }), 2);
    assert.equal(valueOf(metrics, "issuance_payouts_pending_amount", { chain: "doge" }), 55 * 1e8);
    assert.equal(valueOf(metrics, "issuance_payout_funds_available", { chain: "doge" }), 20 * 1e8);
    assert.equal(valueOf(metrics, "issuance_payouts_unfundable", { chain: "doge" }), 1);
    const report = await treasuryReport(kv, "doge");
    assert.equal(report.balances.spendable, String(20n * 10n ** 8n));
    assert.deepEqual(report.pendingPayouts.map((p) => p.fundable), [true, false]);
    assert.equal(valueOf(metrics, "issuance_payouts_pending", { chain: "zec" }), 0);
    // Without the pipeline this process has no chain adapters: no tips, no hot-wallet balances.
    assert.deepEqual(samplesOf(metrics, "issuance_chain_tip_up"), []);
    assert.equal(valueOf(metrics, "issuance_payout_funds_up", { chain: "sol" }), undefined);

    // Never an order id, an address or a transaction hash as a label.
    for (const secret of [stuckBurn.id, heldOrder.id, owner, held.from, "0xabc"]) {
      assert.ok(!text.includes(secret), `the text names ${secret}`);
    }
  } finally {
    await server.close();
  }
});

Deno.test("RPC failures of a live EVM chain are counted per endpoint origin, without the URL's secrets", async () => {
  // Live mode (Base's own chain id on anvil): a dead backup URL is tolerated there, as in production.
  const base = await liveBase(EVM.base.chainId);
  let server: TestServer | null = null;
  try {
    const dead = closedPortUrl("/v2/SECRETPATHKEY");
    const withCreds = dead.replace("http://", "http://scraper:hunter2@");
    const jwt = `${base.dir}/jwt.pem`;
    const mnemonic = `${base.dir}/mnemonic.txt`;
    await Deno.writeTextFile(jwt, await newPrivateKeyPem(), { mode: 0o600 });
    await Deno.writeTextFile(mnemonic, `${ANVIL_MNEMONIC}\n`, { mode: 0o600 });
    server = await startTestServer({
      ...FAST_PIPELINE,
      ...base.env({ BASE_RPC_URLS: `${withCreds},${base.anvil.url}` }),
      JWT_PRIVATE_KEY_FILE: jwt,
      MASTER_MNEMONIC_FILE: mnemonic,
    });
    // The first scrape once Base's watcher has scanned (its cursor is what the lag is measured from).
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      if ((await server.services.kv.get(cursorKey("base"))).value) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const { text, metrics } = await scrape(server, await operatorKeyFor(server, ["metrics"]));
    const deadOrigin = new URL(dead).origin;
    const liveOrigin = new URL(base.anvil.url).origin;
    const errors = valueOf(metrics, "issuance_rpc_errors_total", {
      chain: "base",
      endpoint: deadOrigin,
      reason: "network",
    });
    assert.ok(errors !== undefined && errors > 0, text);
    assert.ok(valueOf(metrics, "issuance_rpc_requests_total", { chain: "base", endpoint: deadOrigin })! >= errors);
    assert.ok(valueOf(metrics, "issuance_rpc_requests_total", { chain: "base", endpoint: liveOrigin })! > 0);
    assert.deepEqual(samplesOf(metrics, "issuance_rpc_errors_total", { endpoint: liveOrigin }), []);
    for (const secret of ["hunter2", "scraper", "SECRETPATHKEY"]) assert.ok(!text.includes(secret), secret);
    // The chain is followed through the endpoint that works.
    assert.equal(valueOf(metrics, "issuance_chain_tip_up", { chain: "base" }), 1);
    assert.ok(valueOf(metrics, "issuance_watcher_lag_blocks", { chain: "base" })! >= 0);
  } finally {
    await server?.close();
    await base.close();
  }
});

Deno.test("RPC failures of a live account chain's HTTP failover are counted per endpoint and reason", async () => {
  const node = startSolanaRpcServer();
  const limited = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("slow down", { status: 429 }),
  );
  // Accepts connections and never answers: the client's timeout ends each call.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  const silentOrigin = `http://127.0.0.1:${(silent.addr as Deno.NetAddr).port}`;
  const metrics = new Metrics({ processDefaults: false });
  try {
    node.produce(3);
    const dead = closedPortUrl("/KEY-IN-PATH");
    const limitedUrl = `http://user:pw-secret@127.0.0.1:${limited.addr.port}/another-key`;
    const sol = solAdapters({
      urls: [dead.replace("http://", "http://rpcuser:rpc-secret@"), limitedUrl, `${silentOrigin}/third-key`, node.url],
      signer,
      confirmations: 1,
      timeoutMs: 300,
      onRpc: metrics.rpcHook("sol"),
    });
    const tip = await sol.reader.tip();
    assert.ok(tip.number >= 0);
    const text = await metrics.registry.metrics();
    const m = parsePrometheusText(text);
    const deadOrigin = new URL(dead).origin;
    const limitedOrigin = `http://127.0.0.1:${limited.addr.port}`;
    assert.ok(valueOf(m, "issuance_rpc_errors_total", { chain: "sol", endpoint: deadOrigin, reason: "network" })! > 0);
    assert.ok(
      valueOf(m, "issuance_rpc_errors_total", { chain: "sol", endpoint: limitedOrigin, reason: "rate_limited" })! > 0,
    );
    assert.ok(
      valueOf(m, "issuance_rpc_errors_total", { chain: "sol", endpoint: silentOrigin, reason: "timeout" })! > 0,
    );
    assert.deepEqual(samplesOf(m, "issuance_rpc_errors_total", { endpoint: new URL(node.url).origin }), []);
    assert.ok(valueOf(m, "issuance_rpc_requests_total", { chain: "sol", endpoint: new URL(node.url).origin })! > 0);
    for (const secret of ["rpc-secret", "rpcuser", "pw-secret", "KEY-IN-PATH", "another-key", "third-key"]) {
      assert.ok(!text.includes(secret), secret);
    }
  } finally {
    silent.close();
    await accepting.catch(() => {});
    for (const conn of held) conn.close();
    await limited.shutdown();
    await node.close();
  }
});
