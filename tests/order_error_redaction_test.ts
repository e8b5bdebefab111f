/**
 * Security review (issue 14): what the order actor records of a failed step (the order's `lastTransientError`, read by
 * `deno task admin order show` and GET /admin/orders/{id}, and the persistent-errors alert) never quotes an RPC URL
 * whole: providers put their API key in its path, and viem's errors quote the URL.
 */
import assert from "node:assert/strict";
import { privateKeyToAccount } from "viem/accounts";
import { type PipelineContext, pipelineSettings } from "../actors/context.ts";
import { PERSISTENT_ERRORS_ALERT_AFTER, stepOrder } from "../actors/order_actor.ts";
import type { Chains } from "../chains/adapter.ts";
import { type UAsset, UASSETS } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { listAlerts } from "../kv/alerts.ts";
import { openKv } from "../kv/open.ts";
import { createOrder } from "../kv/orders.ts";
import { makeOrder } from "./support/orders.ts";

Deno.test("an RPC error of a live EVM chain is recorded on the order and alerted without the URL's key", async () => {
  const secret = "SECRETKEY0123456789";
  // A real JSON-RPC endpoint over HTTP answering every call with an error code viem does not know (a provider
  // refusing its key): viem's error then quotes the URL, path and all.
  const rpc = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32099, message: "invalid api key" } });
  });
  const dir = await Deno.makeTempDir({ prefix: "order-error-redaction-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const contract = `0x${"11".repeat(20)}` as const;
    const evm = await evmChainAdapters({
      chain: "base",
      kv,
      urls: [`http://127.0.0.1:${rpc.addr.port}/v2/${secret}`],
      account: privateKeyToAccount(`0x${"22".repeat(32)}`),
      uAssets: Object.fromEntries(UASSETS.map((a) => [a, contract])) as Record<UAsset, `0x${string}`>,
      transferAddress: contract,
      skipChainIdCheck: true,
    });
    const sim = simChains(kv);
    const chains: Chains = {
      reader: (c) => (c === "base" ? evm.reader : sim.reader(c)),
      minter: (c) => (c === "base" ? evm.minter : sim.minter(c)),
      payer: (c) => sim.payer(c),
    };
    let clock = Date.now();
    const ctx: PipelineContext = {
      kv,
      chains,
      settings: pipelineSettings({ blockMs: 50, confirmationTimeoutMs: 3_600_000, transferAddress: contract }),
      now: () => new Date(clock),
      log: () => {},
    };
    const order = makeOrder(`0x${"33".repeat(20)}`, "burn", "pending", 0); // a burn from base
    assert.equal(order.sourceChain, "base");
    assert.ok(await createOrder(kv, order));
    for (let i = 0; i < PERSISTENT_ERRORS_ALERT_AFTER; i++) {
      clock += 60_000; // past every backoff
      await stepOrder(ctx, order.id);
    }
    const stored = (await kv.get<typeof order>(["order", order.id])).value!;
    const note = String(stored.details.lastTransientError);
    assert.match(note, /invalid api key/, "the error is still recorded");
    assert.ok(!note.includes(secret), `no RPC key on the order: ${note}`);
    const alerts = await listAlerts(kv);
    assert.ok(alerts.some((a) => a.kind === "persistent_errors"), "the persistent errors are alerted");
    assert.ok(!JSON.stringify(alerts).includes(secret), "no RPC key in an alert");
  } finally {
    kv.close();
    await rpc.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
