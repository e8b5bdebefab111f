/**
 * The admin API's foundation (docs/admin-api.md): operator keys made by the CLI, the operator gate and scopes over real
 * HTTP, and one operation served by both the CLI and the API with the same effect and audit entry.
 */
import assert from "node:assert/strict";
import { runTask } from "./support/cli.ts";
import { call, newApiKey, operatorKeyFor, startTestServer } from "./support/server.ts";
import { raiseAlert } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";

function admin(kvPath: string, ...args: string[]) {
  return runTask("admin", { KV_PATH: kvPath }, args);
}

Deno.test("admin API: operator keys from the CLI, the gate, scopes, and one implementation for CLI and API", async (t) => {
  const server = await startTestServer();
  try {
    let readKey = "";
    await t.step("operator-key create prints the key once; only its hash is stored; the audit says who", async () => {
      const res = await admin(
        server.kvPath,
        "operator-key",
        "create",
        "--name",
        "alice",
        "--scopes",
        "read",
        "--by",
        "root",
      );
      assert.equal(res.code, 0, res.stderr);
      readKey = res.stdout.trim().split("\n").at(-1)!;
      assert.match(readKey, /^op_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
      const [keyId, secret] = readKey.split(".");
      const stored = JSON.stringify((await server.services.kv.get(["operator_key", keyId])).value);
      assert.ok(!stored.includes(secret));
      const audit = (await listAudit(server.services.kv)).find((e) => e.subject === keyId)!;
      assert.equal(audit.action, "operator-key.create");
      assert.equal(audit.by, "root");
    });

    await t.step("bad scopes and names are refused with exit 2, and nothing is created", async () => {
      const before = (await listAudit(server.services.kv)).length;
      const res = await admin(server.kvPath, "operator-key", "create", "--name", "bob", "--scopes", "read,root");
      assert.equal(res.code, 2);
      assert.match(res.stderr, /--scopes: Must be a comma-separated list of read, operate, keys, metrics/);
      assert.equal((await listAudit(server.services.kv)).length, before);
    });

    await t.step("no key, a partner key, a wrong secret: 401 and 403 with the envelope", async () => {
      const none = await call(server, "GET", "/admin/audit");
      assert.equal(none.status, 401);
      assert.equal(
        none.body.message,
        "Missing or malformed operator credentials: send Authorization: Bearer <operator key>",
      );
      const partner = await call(server, "GET", "/admin/audit", { token: await newApiKey(server) });
      assert.deepEqual(partner.body, { success: false, message: "Invalid operator key" });
      assert.equal(partner.status, 403);
      const wrong = await call(server, "GET", "/admin/audit", { token: readKey.slice(0, -1) + "x" });
      assert.equal(wrong.status, 403);
    });

    await t.step("a read key reads the audit log but may not clear an alert (scope operate)", async () => {
      const res = await call(server, "GET", "/admin/audit?limit=1", { token: readKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.entries.length, 1);
      assert.deepEqual(res.body.data.entries[0], (await listAudit(server.services.kv)).at(-1), "the newest entry");
      const two = await call(server, "GET", "/admin/audit?limit=2", { token: readKey });
      assert.deepEqual(two.body.data.entries, (await listAudit(server.services.kv)).slice(-2), "oldest first");
      await raiseAlert(server.services.kv, { kind: "deep_reorg", subject: "sol", chain: "sol", message: "m" });
      const refused = await call(server, "POST", "/admin/alerts/clear", {
        token: readKey,
        body: { kind: "deep_reorg", subject: "sol" },
      });
      assert.deepEqual(refused.body, { success: false, message: "This operator key lacks the operate scope" });
      assert.equal((await call(server, "GET", "/admin/alerts", { token: readKey })).body.data.alerts.length, 1);
    });

    await t.step("alerts clear over the API and over the CLI: same effect, audited with who", async () => {
      const key = await operatorKeyFor(server, ["operate"], "carol");
      const bad = await call(server, "POST", "/admin/alerts/clear", {
        token: key,
        body: { kind: "nope", subject: "x" },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.message, "Validation error");
      const ok = await call(server, "POST", "/admin/alerts/clear", {
        token: key,
        body: { kind: "deep_reorg", subject: "sol" },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const entry = (await listAudit(server.services.kv)).find((e) => e.id === ok.body.data.auditId)!;
      assert.match(entry.by, /^carol \(op_[0-9a-f]{16}\)$/);
      const again = await call(server, "POST", "/admin/alerts/clear", {
        token: key,
        body: { kind: "deep_reorg", subject: "sol" },
      });
      assert.equal(again.status, 404);
      assert.equal(again.body.message, "no deep_reorg alert for sol");
      await raiseAlert(server.services.kv, { kind: "deep_reorg", subject: "xrp", chain: "xrp", message: "m" });
      const cli = await admin(server.kvPath, "alerts", "clear", "deep_reorg", "xrp", "--by", "dave");
      assert.equal(cli.code, 0, cli.stderr);
      const last = (await listAudit(server.services.kv)).at(-1)!;
      assert.equal(last.by, "dave");
      assert.equal(last.action, "alert.clear");
    });

    await t.step("operator keys cannot be created over the API; a revoked key stops at once", async () => {
      const list = await admin(server.kvPath, "operator-key", "list");
      assert.match(list.stdout, /name=alice\tscopes=read/);
      const keyId = readKey.split(".")[0];
      assert.equal((await admin(server.kvPath, "operator-key", "revoke", keyId)).code, 0);
      assert.equal((await call(server, "GET", "/admin/audit", { token: readKey })).status, 403);
    });
  } finally {
    await server.close();
  }
});
