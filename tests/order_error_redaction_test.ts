/**
 * Security review (docs/partners.md "RPC URLs in errors"): what the order actor records of a failed step (the order's
 * `lastTransientError`, read by `deno task admin order show` and GET /admin/orders/{id}, and the persistent-errors
 * alert) never quotes an RPC URL whole: providers put their API key in its path, and viem's errors quote the URL. Nor
 * do the refund paths: the refund actor's waiting reason (GET /admin/refunds, the `refunds` command, the dashboard) and
 * `held refund`'s 503 (the admin API's answer, the dashboard's flash stored in KV).
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
import { stepRefund } from "../actors/refunds.ts";
import { DEVNET_CHAIN_ID } from "../config/chain_mode.ts";
import { heldTransferId } from "../kv/held_ids.ts";
import { heldKey, type HeldTransfer } from "../kv/pipeline.ts";
import { getRefund } from "../kv/refunds.ts";
import { createRefund } from "../actors/refund_create.ts";
import { evmChainEnv } from "./support/live_env.ts";
import { MOCK_RPC_SECRETS, mockNode } from "./support/mock_rpc.ts";
import { FAST_PIPELINE, outside } from "./support/pipeline.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { evmKvState } from "../kv/chain_state.ts";

function assertNoSecrets(text: string) {
  for (const secret of MOCK_RPC_SECRETS) assert.ok(!text.includes(secret), `${secret} leaked:\n${text}`);
}

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
      state: evmKvState(kv),
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

/**
 * Every key and value of `kv` as text, for a search: values are structured clones (bigint, Uint8Array, KvU64, nested
 * objects), so each is rendered with a replacer that never throws on them.
 */
async function everyKvText(kv: Deno.Kv): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  const replacer = (_k: string, v: unknown) =>
    typeof v === "bigint"
      ? v.toString()
      : v instanceof Deno.KvU64
      ? v.value.toString()
      : v instanceof Uint8Array
      ? new TextDecoder().decode(v)
      : v instanceof Error
      ? Deno.inspect(v)
      : v;
  for await (const e of kv.list({ prefix: [] })) {
    const key = JSON.stringify(e.key, replacer);
    out.push({ key, text: `${key} ${JSON.stringify(e.value, replacer)}` });
  }
  return out;
}

Deno.test(
  "refunds: an RPC error of a live EVM chain reaches no refund reason, admin answer, dashboard flash or KV value " +
    "with the URL's key (devnet server, local JSON-RPC server standing in for a provider that revokes the key)",
  async () => {
    // Serves anvil's dev chain id (devnet's start asks every node) until the provider revokes the key; from then on
    // every call is answered with an error code viem does not know, so viem quotes the URL, path and query, whole.
    let revoked = false;
    const node = mockNode((method) =>
      revoked
        ? { error: { code: -32099, message: "invalid api key" } }
        : method === "eth_chainId"
        ? { result: `0x${DEVNET_CHAIN_ID.toString(16)}` }
        : { error: { code: -32601, message: "method not found" } }
    );
    const keyDir = await Deno.makeTempDir({ prefix: "refund-redaction-" });
    const server = await startTestServer({
      ...(await evmChainEnv(keyDir, node.url)),
      ...FAST_PIPELINE,
      CHAIN_MODE: "devnet",
    });
    try {
      await server.pipeline!.stop(); // the test steps the refund actor itself
      const kv = server.services.kv;
      const running = server.services.pipeline!;
      const key = await operatorKeyFor(server, ["read", "operate"], "alice");
      // A uAsset sent to the transfer address on base by a sender with no burn configuration, as the watcher holds it.
      const held: HeldTransfer = {
        chain: "base",
        txHash: `0x${"ab".repeat(32)}`,
        index: 0,
        from: outside.evmAddress().toLowerCase(),
        asset: "uSOL",
        amount: "5000000000000000000",
        blockNumber: 7,
        detectedAt: new Date().toISOString(),
        reason: "no burn configuration for sol",
      };
      await kv.set(heldKey(held.chain, held.txHash, held.index), held);
      const heldId = heldTransferId(held);
      revoked = true;

      // `held refund` over the admin API: the transfer cannot be checked on chain now.
      const api = await call(server, "POST", `/admin/held/${encodeURIComponent(heldId)}/refund`, {
        token: key,
        body: {},
      });
      assert.equal(api.status, 503, JSON.stringify(api.body));
      assert.match(api.body.message, /cannot check .* on base now \(.*invalid api key.*\); nothing was changed/s);
      assertNoSecrets(JSON.stringify(api.body));
      assert.ok((await kv.get(heldKey(held.chain, held.txHash, held.index))).value, "still held");

      // The same action from the dashboard: its flash is stored in KV and shown on the next page.
      const login = await fetch(`${server.url}/admin/ui/login`, {
        method: "POST",
        redirect: "manual",
        headers: { Origin: server.url, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ key }),
      });
      await login.body?.cancel();
      const cookie = login.headers.get("Set-Cookie")!.split(";")[0];
      const page = () => fetch(`${server.url}/admin/ui`, { headers: { Cookie: cookie } }).then((r) => r.text());
      const csrf = /name="csrf" value="([^"]+)"/.exec(await page())![1];
      const action = await fetch(`${server.url}/admin/ui/action`, {
        method: "POST",
        redirect: "manual",
        headers: { Origin: server.url, Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, op: "held refund", id: heldId }),
      });
      await action.body?.cancel();
      assert.equal(action.status, 303);
      // The flash waits in KV until the next page takes it.
      for (const e of await everyKvText(kv)) assertNoSecrets(e.text);
      const shown = await page();
      assert.match(shown, /held refund refused \(503\)/);
      assertNoSecrets(shown);

      // A refund of it recorded while the key still worked (its source checked then), stepped after the revocation.
      const { refund } = await createRefund(kv, {
        heldId,
        by: "operator:alice",
        now: new Date(),
        utxoNetwork: () => "mainnet",
        transferAddress: server.services.uAssetTransferAddress,
        verifySource: () => Promise.resolve(null),
      });
      const later = Date.now() + 60_000;
      assert.equal(await stepRefund({ ...running, now: () => new Date(later) }, refund.id), "waiting");
      const waiting = (await getRefund(kv, refund.id)).value!;
      assert.match(String(waiting.waitingReason), /^last step failed: .*invalid api key/s);
      assertNoSecrets(String(waiting.waitingReason));
      const listed = await call(server, "GET", "/admin/refunds", { token: key });
      assert.equal(listed.status, 200);
      assert.ok(listed.body.data.refunds.some((r: { id: string }) => r.id === refund.id), JSON.stringify(listed.body));
      assertNoSecrets(JSON.stringify(listed.body));

      // Nothing written during the run holds the key: every key and value of the server's KV file.
      const all = await everyKvText(kv);
      assert.ok(all.some((e) => e.text.includes("invalid api key")), "the node's answer was recorded somewhere");
      for (const e of all) assertNoSecrets(e.text);
    } finally {
      await server.close();
      await node.close();
      await Deno.remove(keyDir, { recursive: true });
    }
  },
);
