/**
 * Security review of the operator surface (docs/admin-api.md), over real HTTP: no secret an operator action returns is
 * kept readable anywhere, and the operator gate holds on every path.
 */
import assert from "node:assert/strict";
import { call, operatorKeyFor, randomWallet, startTestServer, tokenFor } from "./support/server.ts";
import { OPS } from "../actors/ops/index.ts";
import { listAudit } from "../kv/audit.ts";
import { createOperatorKey } from "../kv/operator_keys.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { reconcileOp } from "../actors/ops/reconcile.ts";
import type { OpContext } from "../actors/ops/op.ts";
import type { Chains } from "../chains/adapter.ts";
import { type UAsset, UASSETS } from "../chains/catalog.ts";
import { evmClient } from "../chains/evm/client.ts";
import { evmUAssetView } from "../chains/evm/uasset_view.ts";

async function kvDump(kv: Deno.Kv, prefix: Deno.KvKey): Promise<string[]> {
  const out: string[] = [];
  const dec = new TextDecoder();
  for await (const e of kv.list({ prefix })) {
    // Stored bodies are bytes: read them as text too, so a secret in them is found.
    out.push(JSON.stringify(e.value, (_k, v) => v instanceof Uint8Array ? dec.decode(v) : v));
  }
  return out;
}

Deno.test("admin security: api-key create under an Idempotency-Key keeps no readable secret", async () => {
  const server = await startTestServer();
  try {
    const op = await operatorKeyFor(server, ["keys"]);
    const headers = { "Idempotency-Key": "create-acme-1" };
    const first = await call(server, "POST", "/admin/api-keys", { token: op, body: { partner: "acme" }, headers });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const secret = (first.body.data.apiKey as string).split(".")[1];
    const stored = await kvDump(server.services.kv, ["idempotency"]);
    assert.ok(stored.length > 0, "the response is kept for replay");
    assert.ok(stored.every((s) => !s.includes(secret)), "no partner key secret readable in the Idempotency-Key store");
    const again = await call(server, "POST", "/admin/api-keys", { token: op, body: { partner: "acme" }, headers });
    assert.equal(again.status, 200);
    assert.equal(again.body.data.apiKey, first.body.data.apiKey, "the retry replays the same key");
  } finally {
    await server.close();
  }
});

Deno.test("admin security: every admin route refuses a partner JWT, a metrics-only key and a key without its scope", async () => {
  const server = await startTestServer();
  try {
    const partnerJwt = await tokenFor(server, randomWallet());
    const metricsOnly = await operatorKeyFor(server, ["metrics"], "scraper");
    const all = ["read", "operate", "keys"] as const;
    // Operator keys made here are audited themselves; nothing else may be.
    const changes = async () =>
      (await listAudit(server.services.kv)).filter((e) => e.action !== "operator-key.create").length;
    const auditBefore = await changes();
    const routes = OPS.filter((op) => op.http);
    assert.ok(routes.length > 20);
    for (const op of routes) {
      // Plausible path values: the scope is checked whatever the operation would then do.
      const path = "/admin" +
        op.http!.path.replace(
          /\{(\w+)\}/g,
          (_m, name: string) =>
            ({
              chain: "doge",
              asset: "uDOGE",
              address: randomWallet(),
              outpoint: "ab:0",
              keyId: "ak_0000000000000000",
            })[
              name
            ] ?? "order:00000000-0000-0000-0000-000000000000",
        );
      const method = op.http!.method.toUpperCase();
      const body = method === "POST" ? {} : undefined;
      const jwt = await call(server, method, path, { token: partnerJwt, body });
      assert.ok([401, 403].includes(jwt.status), `${method} ${path} with a partner JWT: ${jwt.status}`);
      const metrics = await call(server, method, path, { token: metricsOnly, body });
      assert.ok([400, 403].includes(metrics.status), `${method} ${path} with a metrics key: ${metrics.status}`);
      const others = await operatorKeyFor(server, all.filter((s) => s !== op.scope), "other-scopes");
      const other = await call(server, method, path, { token: others, body });
      assert.ok([400, 403].includes(other.status), `${method} ${path} without scope ${op.scope}: ${other.status}`);
    }
    assert.equal(await changes(), auditBefore, "no refused request changed anything");
  } finally {
    await server.close();
  }
});

Deno.test("admin security: an expired operator key stops at once, on /admin and /metrics", async () => {
  const server = await startTestServer();
  try {
    const kv = server.services.kv;
    const soon = new Date(Date.now() - 86_400_000 + 60_000); // expires a minute from now
    const live = await createOperatorKey(kv, {
      name: "soon",
      scopes: ["read", "metrics"],
      by: "t",
      expiresInDays: 1,
      now: soon,
    });
    assert.equal((await call(server, "GET", "/admin/audit", { token: live.operatorKey })).status, 200);
    const past = new Date(Date.now() - 2 * 86_400_000);
    const expired = await createOperatorKey(kv, {
      name: "old",
      scopes: ["read", "metrics"],
      by: "t",
      expiresInDays: 1,
      now: past,
    });
    for (const path of ["/admin/audit", "/metrics"]) {
      const res = await call(server, "GET", path, { token: expired.operatorKey });
      assert.equal(res.status, 403, path);
      assert.deepEqual(res.body, { success: false, message: "Invalid operator key" });
    }
  } finally {
    await server.close();
  }
});

Deno.test("admin security: an RPC URL's key never reaches the reconciliation report, answered or stored", async () => {
  // A real JSON-RPC endpoint over HTTP whose every answer is an error code viem does not know (a provider refusing
  // its key): viem's error message then quotes the URL, path and all, where providers put the key.
  const rpc = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32099, message: "invalid api key" } });
  });
  const dir = await Deno.makeTempDir({ prefix: "admin-security-" });
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  try {
    const secret = "SECRETKEY0123456789";
    const client = evmClient({ chain: "base", urls: [`http://127.0.0.1:${rpc.addr.port}/v2/${secret}`] });
    const contract = `0x${"11".repeat(20)}` as const;
    const uAssets = Object.fromEntries(UASSETS.map((a) => [a, contract])) as Record<UAsset, `0x${string}`>;
    const view = evmUAssetView({ chain: "base", client, uAssets, maxRange: 1000 });
    const chains = { uAssetView: () => view } as unknown as Chains;
    const ctx = {
      kv,
      by: "test",
      via: "api",
      now: () => new Date(),
      chains: () => Promise.resolve(chains),
      settings: () => ({ enabledChains: ["base"] }),
      transferAddress: () => Promise.resolve(contract),
    } as unknown as OpContext;
    const report = await reconcileOp.run(ctx, {});
    assert.equal(report.ok, false);
    assert.ok(report.unknown.some((u: string) => u.includes("invalid api key")), "the reason is still said");
    assert.ok(!JSON.stringify(report).includes(secret), "no RPC key in the answer");
    assert.ok(!JSON.stringify(await lastReconciliation(kv)).includes(secret), "no RPC key in the stored report");
  } finally {
    kv.close();
    await rpc.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
