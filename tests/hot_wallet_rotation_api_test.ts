/**
 * Hot-wallet rotation over the admin API and the CLI (actors/ops/hot_wallets.ts), on a started server (sim chains,
 * real HTTP): `hot rotate` needs the operate scope, refuses a UTXO or unknown chain (400) and a second rotation while
 * the old wallet drains (409), changing nothing; a rotation is audited and alerted in its commit; `hot show` over the
 * CLI shows what the API shows.
 */
import assert from "node:assert/strict";
import { defaultSimOperatorAddress, simHotWallet } from "../chains/sim/adapters.ts";
import { getAlert } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { hotWalletStateKey } from "../kv/hot_wallets.ts";
import { runTask } from "./support/cli.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";

Deno.test("hot wallets over the admin API and the CLI: rotate (operate scope, audited, alerted), refusals change nothing, show", async () => {
  const server = await startTestServer({});
  try {
    // No pipeline runs here (no drain tick), so what each call does is all that happens.
    assert.equal(server.pipeline, null);
    const kv = server.services.kv;
    const operate = await operatorKeyFor(server, ["operate", "read"], "erin");
    const reader = await operatorKeyFor(server, ["read"], "rita");
    const old = defaultSimOperatorAddress("xrp");

    const before = (await listAudit(kv)).length;
    for (const chain of ["doge", "eth"]) {
      const bad = await call(server, "POST", `/admin/hot-wallets/${chain}/rotate`, { token: operate, body: {} });
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
      assert.match(JSON.stringify(bad.body), /must be one of sol, xrp, sui/, JSON.stringify(bad.body));
    }
    const scope = await call(server, "POST", "/admin/hot-wallets/xrp/rotate", { token: reader, body: {} });
    assert.equal(scope.status, 403);
    assert.equal((await listAudit(kv)).length, before);
    assert.equal((await kv.get(hotWalletStateKey("xrp"))).versionstamp, null, "nothing written");

    const rotated = await call(server, "POST", "/admin/hot-wallets/xrp/rotate", { token: operate, body: {} });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.deepEqual(rotated.body.data.from, { index: 0, address: old });
    assert.deepEqual(rotated.body.data.to, { index: 1, address: simHotWallet(old, 1) });
    const entry = (await listAudit(kv)).find((e) => e.id === rotated.body.data.auditId);
    assert.equal(entry?.action, "hot.rotate");
    assert.match(entry!.by, /^erin \(op_[0-9a-f]{16}\)$/);
    assert.match((await getAlert(kv, "hot_wallet_rotation", "xrp"))!.message, /rotated the xrp hot wallet/);

    // The drain has not run: a second rotation now is refused, writing nothing.
    const state = await kv.get(hotWalletStateKey("xrp"));
    const again = await call(server, "POST", "/admin/hot-wallets/xrp/rotate", { token: operate, body: {} });
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.match(again.body.message, /still draining/);
    assert.equal((await kv.get(hotWalletStateKey("xrp"))).versionstamp, state.versionstamp, "nothing written");

    const shown = await call(server, "GET", "/admin/hot-wallets", { token: reader });
    assert.equal(shown.status, 200);
    const xrp = shown.body.data.chains.find((c: { chain: string }) => c.chain === "xrp");
    const cli = await runTask("admin", { KV_PATH: server.kvPath }, ["hot", "show", "--json"]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout).chains.find((c: { chain: string }) => c.chain === "xrp"), xrp);
    assert.equal(xrp.retired[0].address, old);
    assert.equal(xrp.retired[0].by, entry!.by);
  } finally {
    await server.close();
  }
});
