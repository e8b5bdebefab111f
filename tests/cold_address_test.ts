/**
 * Cold addresses (actors/ops/cold.ts, kv/cold_addresses.ts) over the admin API and the CLI, on a started server and
 * its real KV file: a change is scheduled after the delay, never in effect at once, with its audit entry and the
 * `cold_address_change` alert in the same commit; bad input changes nothing; a pending change can be cancelled.
 */
import assert from "node:assert/strict";
import { runTask } from "./support/cli.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { getAlert } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { coldAddressAt, coldAddressKey } from "../kv/cold_addresses.ts";
import { INVALID_ADDRESS_FORMAT } from "../messages.ts";

const COLD = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const OTHER = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV";
const HOUR = 3_600_000;

Deno.test("cold addresses over the admin API and the CLI: scheduled after the delay with an alert at once, audited, cancellable; bad input changes nothing", async (t) => {
  const server = await startTestServer({ COLD_ADDRESS_DELAY_HOURS: "24" });
  try {
    const kv = server.services.kv;
    const operate = await operatorKeyFor(server, ["operate", "read"], "erin");
    const reader = await operatorKeyFor(server, ["read"], "rita");

    await t.step(
      "bad input: a malformed address, an unknown chain, a read-only key: refused, nothing written",
      async () => {
        const before = (await listAudit(kv)).length;
        const bad = await call(server, "POST", "/admin/cold/sol", { token: operate, body: { address: "not-base58!" } });
        assert.equal(bad.status, 400);
        assert.equal(bad.body.message, INVALID_ADDRESS_FORMAT.sol);
        const chain = await call(server, "POST", "/admin/cold/eth", { token: operate, body: { address: COLD } });
        assert.equal(chain.status, 400);
        const scope = await call(server, "POST", "/admin/cold/sol", { token: reader, body: { address: COLD } });
        assert.equal(scope.status, 403);
        assert.equal((await listAudit(kv)).length, before);
        assert.equal((await kv.get(coldAddressKey("sol"))).value, null);
        assert.equal(await getAlert(kv, "cold_address_change", "sol"), null);
      },
    );

    await t.step("set: pending for the delay, not in effect; the alert and the audit entry come with it", async () => {
      const asked = Date.now();
      const set = await call(server, "POST", "/admin/cold/sol", { token: operate, body: { address: COLD } });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const effectiveAt = Date.parse(set.body.data.effectiveAt);
      assert.ok(effectiveAt >= asked + 24 * HOUR && effectiveAt <= Date.now() + 24 * HOUR, set.body.data.effectiveAt);
      const shown = await call(server, "GET", "/admin/cold", { token: reader });
      const sol = shown.body.data.chains.find((c: { chain: string }) => c.chain === "sol");
      assert.equal(sol.current, null, "not in effect before the delay");
      assert.equal(sol.pending.address, COLD);
      assert.match(sol.pending.by, /^erin \(op_[0-9a-f]{16}\)$/);
      assert.equal(shown.body.data.delayHours, 24);
      const alert = await getAlert(kv, "cold_address_change", "sol");
      assert.ok(alert, "raised at once");
      assert.match(alert.message, new RegExp(`from none to ${COLD}: it takes effect at ${set.body.data.effectiveAt}`));
      const entry = (await listAudit(kv)).find((e) => e.id === set.body.data.auditId);
      assert.equal(entry?.action, "cold.set");
      // The record's own rule: in effect from its time, not before.
      const record = (await kv.get(coldAddressKey("sol"))).value as Parameters<typeof coldAddressAt>[0];
      assert.equal(coldAddressAt(record, new Date(effectiveAt - 1)).current, null);
      assert.deepEqual(coldAddressAt(record, new Date(effectiveAt)).current, {
        address: COLD,
        since: set.body.data.effectiveAt,
      });
      const again = await call(server, "POST", "/admin/cold/sol", { token: operate, body: { address: COLD } });
      assert.equal(again.status, 409);
    });

    await t.step("cancel over the CLI: the pending change is gone, audited with who, alerted", async () => {
      const cli = await runTask("admin", { KV_PATH: server.kvPath }, ["cold", "cancel", "sol", "--by", "frank"]);
      assert.equal(cli.code, 0, cli.stderr);
      const shown = await call(server, "GET", "/admin/cold", { token: reader });
      const sol = shown.body.data.chains.find((c: { chain: string }) => c.chain === "sol");
      assert.equal(sol.pending, null);
      assert.equal(sol.current, null);
      const last = (await listAudit(kv)).at(-1)!;
      assert.equal(last.action, "cold.cancel");
      assert.equal(last.by, "frank");
      const alert = await getAlert(kv, "cold_address_change", "sol");
      assert.equal(alert?.count, 2);
      assert.match(alert!.message, /frank cancelled the change of the cold address of sol/);
      const none = await call(server, "POST", "/admin/cold/sol/cancel", { token: operate, body: {} });
      assert.equal(none.status, 404);
      assert.equal(none.body.message, "no cold address change of sol is waiting");
      // A new change replaces nothing in effect and waits its own delay.
      const other = await call(server, "POST", "/admin/cold/sol", { token: operate, body: { address: OTHER } });
      assert.equal(other.status, 200, JSON.stringify(other.body));
    });
  } finally {
    await server.close();
  }
});
