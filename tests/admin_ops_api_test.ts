/**
 * Every operator operation ported from the admin CLI (docs/admin-api.md), over real HTTP with operator keys: each one
 * through the API with its effect in KV and its audit entry, the scopes that refuse it, and the same operation through
 * the CLI (`runAdmin`, the shell's entry point, in process) giving the same result and the same refusal. A parity check
 * over the registry: every operation with a route is in /openapi.json, every operation is in the CLI usage.
 */
import assert from "node:assert/strict";
import { OPS } from "../actors/ops/index.ts";
import { opUsage } from "../cli/ops_cli.ts";
import { runAdmin } from "../cli/admin.ts";
import { apiKeyKey } from "../kv/api_keys.ts";
import { listAudit } from "../kv/audit.ts";
import { openConsolidation } from "../kv/consolidations.ts";
import { createOrder, orderKey } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { addHeldTransfer, type HeldTransfer, watchResumeKey } from "../kv/pipeline.ts";
import { type CoinHold, coinHoldKey, spentBy } from "../kv/treasury.ts";
import { seedSimUtxoGenesis, SIM_GENESIS_COINS } from "../actors/treasury_steps.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { userWalletKey } from "../kv/user_wallets.ts";
import { ORDER_ERRORS } from "../messages.ts";
import { makeOrder } from "./support/orders.ts";
import { call, operatorKeyFor, randomWallet, startTestServer, type TestServer } from "./support/server.ts";

const OWNER = "0x" + "ab".repeat(20);

/** The shell's `deno task admin <args>` on the server's KV, in process: exit code, stdout and stderr lines. */
async function cli(server: TestServer, ...args: string[]) {
  const out: string[] = [], err: string[] = [];
  const code = await runAdmin(
    args,
    server.services.kv,
    (l) => out.push(l),
    (l) => err.push(l),
    server.services.config,
  );
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

async function cliJson(server: TestServer, ...args: string[]) {
  const res = await cli(server, ...args, "--json");
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}

async function lastAudit(server: TestServer) {
  return (await listAudit(server.services.kv)).at(-1)!;
}

Deno.test("admin API: every ported operation over HTTP, its effect in KV, its scope, and the CLI's same result", async (t) => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const all = await operatorKeyFor(server, ["read", "operate", "keys"], "alice");
    const read = await operatorKeyFor(server, ["read"], "reader");
    const operate = await operatorKeyFor(server, ["operate"], "oper");
    const post = (path: string, token: string, body?: unknown) => call(server, "POST", path, { token, body });
    const get = (path: string, token: string) => call(server, "GET", path, { token });
    const scopeRefusal = (scope: string) => ({ success: false, message: `This operator key lacks the ${scope} scope` });

    await t.step(
      "parity: every operation with a route is documented, every operation is in the CLI usage",
      async () => {
        const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
          paths: Record<string, Record<string, { security?: unknown; description?: string }>>;
        };
        const usage = (await cli(server, "no-such-command")).stderr;
        for (const op of OPS) {
          assert.ok(usage.includes(`  ${opUsage(op)}`), `${op.name} is in the CLI usage`);
          if (!op.http) continue;
          const documented = doc.paths[`/admin${op.http.path}`]?.[op.http.method];
          assert.ok(
            documented,
            `${op.name}: ${op.http.method.toUpperCase()} /admin${op.http.path} is in /openapi.json`,
          );
          assert.match(documented.description ?? "", new RegExp(`scope \`${op.scope}\``), op.name);
        }
        // evm deploy is the one shell-only command without an operation: it reads key files on the operator's machine.
        assert.match(usage, /evm deploy .*\n.*\n.*shell only, not in the admin API/);
        assert.ok(!OPS.some((op) => op.name === "evm deploy"));
      },
    );

    let keyId = "";
    await t.step(
      "api-key create (keys): the secret once, a hash in KV, audited; refused to read and operate keys",
      async () => {
        for (const token of [read, operate]) {
          const refused = await post("/admin/api-keys", token, { partner: "acme" });
          assert.equal(refused.status, 403);
          assert.deepEqual(refused.body, scopeRefusal("keys"));
        }
        const res = await post("/admin/api-keys", all, { partner: "acme", expiresInDays: "30" });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const { key, apiKey, auditId } = res.body.data;
        assert.match(apiKey, /^ak_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
        keyId = key.keyId;
        const stored = (await kv.get<Record<string, unknown>>(apiKeyKey(keyId))).value!;
        assert.equal(stored.partnerId, "acme");
        assert.ok(!JSON.stringify(stored).includes(apiKey.split(".")[1]), "only a hash is stored");
        const audit = await lastAudit(server);
        assert.deepEqual([audit.id, audit.action, audit.subject], [auditId, "api-key.create", keyId]);
        assert.match(audit.by, /^alice \(op_[0-9a-f]{16}\)$/);
        // The partner key works at once.
        const token = await call(server, "POST", "/auth/token", {
          headers: { "X-API-Key": apiKey },
          body: { walletAddress: randomWallet() },
        });
        assert.equal(token.status, 200);
      },
    );

    await t.step("api-key list (keys): no secret; the CLI lists the same keys", async () => {
      assert.deepEqual((await get("/admin/api-keys", read)).body, scopeRefusal("keys"));
      const res = await get("/admin/api-keys", all);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.keys.map((k: { keyId: string; state: string }) => [k.keyId, k.state]), [
        [keyId, "active"],
      ]);
      assert.ok(!JSON.stringify(res.body).includes("secret"));
      assert.deepEqual(await cliJson(server, "api-key", "list"), res.body.data);
    });

    await t.step("api-key create refusals: the same message on both sides, nothing created", async () => {
      const res = await post("/admin/api-keys", all, { partner: "bad partner!" });
      assert.equal(res.status, 400);
      const message = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";
      assert.deepEqual(res.body.error.issues, [{ path: ["partner"], message }]);
      const shell = await cli(server, "api-key", "create", "--partner", "bad partner!");
      assert.equal(shell.code, 2);
      assert.match(shell.stderr, new RegExp(`^error: --partner ${message.replace(/[.]/g, "\\.")}`));
      assert.equal((await get("/admin/api-keys", all)).body.data.keys.length, 1);
    });

    await t.step("api-key revoke (keys): revokedAt in KV, audited; an unknown key is 404 on both sides", async () => {
      const res = await post(`/admin/api-keys/${keyId}/revoke`, all);
      assert.equal(res.status, 200);
      const stored = (await kv.get<{ revokedAt: string }>(apiKeyKey(keyId))).value!;
      assert.equal(stored.revokedAt, res.body.data.revokedAt);
      assert.equal((await lastAudit(server)).action, "api-key.revoke");
      const missing = await post("/admin/api-keys/ak_0000000000000000/revoke", all);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.message, "no API key ak_0000000000000000");
      const shell = await cli(server, "api-key", "revoke", "ak_0000000000000000");
      assert.deepEqual([shell.code, shell.stderr], [2, "error: no API key ak_0000000000000000"]);
    });

    const wallet = randomWallet();
    await t.step("wallet deactivate, activate, move (keys): the record in KV, audited", async () => {
      assert.deepEqual((await post(`/admin/wallets/${wallet}/deactivate`, operate)).body, scopeRefusal("keys"));
      const off = await post(`/admin/wallets/${wallet}/deactivate`, all);
      assert.equal(off.status, 200, JSON.stringify(off.body));
      const record = async () => (await kv.get<{ status: string; partnerId: string }>(userWalletKey(wallet))).value;
      assert.equal((await record())?.status, "inactive");
      assert.deepEqual([(await lastAudit(server)).action, (await lastAudit(server)).subject], [
        "wallet.deactivate",
        wallet.toLowerCase(),
      ]);
      assert.equal((await post(`/admin/wallets/${wallet}/activate`, all)).status, 200);
      assert.equal((await record())?.status, "active");
      const moved = await post(`/admin/wallets/${wallet}/move`, all, { toPartner: "partner-b" });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal((await record())?.partnerId, "partner-b");
      assert.deepEqual([moved.body.data.from, moved.body.data.to], ["", "partner-b"]);
      const again = await post(`/admin/wallets/${wallet}/move`, all, { toPartner: "partner-b" });
      assert.equal(again.status, 409);
      const shell = await cli(server, "wallet", "move", wallet, "--to-partner", "partner-b");
      assert.deepEqual([shell.code, shell.stderr.split("\n")[0]], [2, `error: ${again.body.message}`]);
    });

    await t.step("wallet refusals: a bad address and an unknown wallet, the same on both sides", async () => {
      const bad = await post("/admin/wallets/0x1234/activate", all);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.error.issues, [{ path: ["address"], message: "0x1234 is not an EVM address" }]);
      assert.equal(
        (await cli(server, "wallet", "activate", "0x1234")).stderr.split("\n")[0],
        "error: 0x1234 is not an EVM address",
      );
      const unknown = randomWallet();
      const missing = await post(`/admin/wallets/${unknown}/activate`, all);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.message, `no wallet ${unknown.toLowerCase()}`);
      assert.equal((await cli(server, "wallet", "activate", unknown)).stderr, `error: ${missing.body.message}`);
      assert.equal((await kv.get(userWalletKey(unknown))).value, null);
    });

    await t.step("watch resume (operate): the instruction in KV, audited; keys-only keys refused", async () => {
      const keysOnly = await operatorKeyFor(server, ["keys"], "keys-only");
      assert.deepEqual((await post("/admin/watch/sol/resume", keysOnly, { from: "5" })).body, scopeRefusal("operate"));
      const res = await post("/admin/watch/sol/resume", operate, { from: "5" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const stored = (await kv.get<{ fromBlock: number; by: string }>(watchResumeKey("sol"))).value!;
      assert.equal(stored.fromBlock, 5);
      assert.match(stored.by, /^oper \(op_/);
      const bad = await post("/admin/watch/ltc/resume", operate, { from: "5" });
      assert.equal(bad.status, 400);
      const message = bad.body.error.issues[0].message;
      assert.match(message, /^must be one of sol, xrp, sui, doge, zec, base/);
      assert.equal(
        (await cli(server, "watch", "resume", "ltc", "--from", "5")).stderr.split("\n")[0],
        `error: <chain> ${message}`,
      );
    });

    await t.step("orders held (read): held transfers and dust; the CLI shows the same", async () => {
      const held: HeldTransfer = {
        chain: "base",
        txHash: "0x" + "12".repeat(32),
        index: 3,
        from: "0x" + "cd".repeat(20),
        asset: "uSOL",
        amount: "1000",
        blockNumber: 9,
        detectedAt: new Date().toISOString(),
        reason: "no burn configuration for the sender",
      };
      assert.ok((await addHeldTransfer(kv.atomic(), held).commit()).ok);
      const res = await get("/admin/transfers/held", read);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, { held: [held], heldTotal: 1, dust: [] });
      assert.deepEqual(await cliJson(server, "orders", "held"), res.body.data);
      const text = await cli(server, "orders", "held");
      assert.match(
        text.stdout,
        new RegExp(`^base\\t${held.txHash}:3\\tfrom=${held.from}\\t0\\.000000000000001 uSOL\\tblock=9\\t`),
      );
    });

    const pending = makeOrder(OWNER, "mint", "pending", 1);
    const failedBase = makeOrder(OWNER, "mint", "failed", 2);
    const failed: Order = {
      ...failedBase,
      errorKind: "confirmation_timeout",
      errorMessage: ORDER_ERRORS.confirmation_timeout,
    };
    await createOrder(kv, pending);
    await createOrder(kv, failed);

    await t.step("order show (read): the order whole; an unknown order 404; an invalid record 409", async () => {
      const res = await get(`/admin/orders/${pending.id}`, read);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, pending);
      assert.deepEqual(await cliJson(server, "order", "show", pending.id), pending);
      const missing = await get("/admin/orders/01900000-0000-7000-8000-000000000000", read);
      assert.deepEqual([missing.status, missing.body.message], [404, "no order 01900000-0000-7000-8000-000000000000"]);
      const broken = makeOrder(OWNER, "mint", "pending", 3);
      await kv.set(orderKey(broken.id), { ...broken, details: { ...broken.details, confirmBy: "soon" } });
      const invalid = await get(`/admin/orders/${broken.id}`, read);
      assert.equal(invalid.status, 409);
      assert.match(invalid.body.message, /details\.confirmBy/);
      const shell = await cli(server, "order", "show", broken.id);
      assert.equal(shell.code, 2);
      assert.equal(JSON.parse(shell.stdout).details.confirmBy, "soon", "the CLI shows the record as stored");
      assert.equal(shell.stderr, `error: ${invalid.body.message}`);
    });

    await t.step(
      "order cancel and retry (operate): the status in KV, audited; refusals 409 on both sides",
      async () => {
        assert.deepEqual((await post(`/admin/orders/${pending.id}/cancel`, read)).body, scopeRefusal("operate"));
        const cancelled = await post(`/admin/orders/${pending.id}/cancel`, operate);
        assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
        assert.equal((await kv.get<Order>(orderKey(pending.id))).value?.status, "cancelled");
        const audit = await lastAudit(server);
        assert.deepEqual([audit.id, audit.action, audit.before, audit.after], [
          cancelled.body.data.auditId,
          "order.cancel",
          { status: "pending" },
          { status: "cancelled" },
        ]);
        const twice = await post(`/admin/orders/${pending.id}/cancel`, operate);
        assert.deepEqual([twice.status, twice.body.message], [409, "cancel is not allowed for a cancelled order"]);
        assert.equal((await cli(server, "order", "cancel", pending.id)).stderr, `error: ${twice.body.message}`);
        const unknown = "01900000-0000-7000-8000-000000000001";
        const nowhere = await post(`/admin/orders/${unknown}/cancel`, operate);
        assert.deepEqual([nowhere.status, nowhere.body.message], [404, `no order ${unknown}`]);

        const retried = await post(`/admin/orders/${failed.id}/retry`, operate);
        assert.equal(retried.status, 200, JSON.stringify(retried.body));
        assert.equal(retried.body.data.status, "pending");
        const stored = (await kv.get<Order>(orderKey(failed.id))).value!;
        assert.deepEqual([stored.status, stored.details.retries], ["pending", 1]);
        assert.equal((await lastAudit(server)).action, "order.retry");
        const shell = await cli(server, "order", "retry", pending.id);
        assert.deepEqual([shell.code, shell.stderr], [2, "error: retry is not allowed for a cancelled order"]);
      },
    );

    await t.step("treasury (read): a UTXO and an account chain, the same report as the CLI's --json", async () => {
      const doge = await get("/admin/treasury/doge", read);
      assert.equal(doge.status, 200, JSON.stringify(doge.body));
      assert.equal(doge.body.data.chain, "doge");
      const { at: _, ...shell } = await cliJson(server, "treasury", "--chain", "doge");
      const { at: __, ...api } = doge.body.data;
      assert.deepEqual(api, shell);
      const sol = await get("/admin/treasury/sol", read);
      assert.equal(sol.status, 200, JSON.stringify(sol.body));
      assert.equal(sol.body.data.chain, "sol");
      assert.equal(typeof sol.body.data.hotWallet.balance, "string");
      const bad = await get("/admin/treasury/ltc", read);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.error.issues, [{
        path: ["chain"],
        message: "must be one of sol, xrp, sui, doge, zec",
      }]);
      assert.equal(
        (await cli(server, "treasury", "--chain", "ltc")).stderr.split("\n")[0],
        "error: --chain must be one of sol, xrp, sui, doge, zec",
      );
    });

    await t.step(
      "utxo release-coin and forget-coin (operate): the hold gone from KV, a spent marker, audited",
      async () => {
        const hold: CoinHold = { reason: "reorg past finality", at: new Date().toISOString() } as CoinHold;
        const a = { txHash: "aa".repeat(32), index: 0 }, b = { txHash: "bb".repeat(32), index: 1 };
        await kv.set(coinHoldKey("doge", a), hold);
        await kv.set(coinHoldKey("doge", b), hold);
        assert.deepEqual(
          (await post(`/admin/utxo/doge/coins/${a.txHash}:0/release`, read)).body,
          scopeRefusal("operate"),
        );
        const released = await post(`/admin/utxo/doge/coins/${a.txHash}:0/release`, operate);
        assert.equal(released.status, 200, JSON.stringify(released.body));
        assert.equal((await kv.get(coinHoldKey("doge", a))).value, null);
        assert.equal((await lastAudit(server)).action, "utxo.release-coin");
        const forgotten = await post(`/admin/utxo/doge/coins/${b.txHash}:1/forget`, operate);
        assert.equal(forgotten.status, 200);
        assert.equal((await kv.get(coinHoldKey("doge", b))).value, null);
        assert.match((await spentBy(kv, "doge", b)) ?? "", /^forgotten by operator oper \(op_/);
        const again = await post(`/admin/utxo/doge/coins/${b.txHash}:1/forget`, operate);
        assert.deepEqual([again.status, again.body.message], [404, `coin ${b.txHash}:1 on doge is not held`]);
        assert.equal(
          (await cli(server, "utxo", "forget-coin", "--chain", "doge", `${b.txHash}:1`)).stderr,
          `error: ${again.body.message}`,
        );
        const bad = await post("/admin/utxo/doge/coins/abc/release", operate);
        assert.deepEqual(bad.body.error.issues, [{
          path: ["outpoint"],
          message: "abc is not an outpoint <txid:index>",
        }]);
      },
    );

    await t.step(
      "utxo consolidate (operate): recorded write-ahead with its coins, audited; then shown, not doubled",
      async () => {
        // The sim's genesis coins: on its ledger and in the treasury, as the running service seeds them.
        await seedSimUtxoGenesis(new SimLedger(kv, "doge"), defaultSimOperatorAddress("doge"), 8n * 100_000_000n);
        const bad = await post("/admin/utxo/doge/consolidate", operate, { maxInputs: "0" });
        assert.deepEqual(bad.body.error.issues, [{
          path: ["maxInputs"],
          message: "must be a whole number from 1 to 9999",
        }]);
        const few = await post("/admin/utxo/doge/consolidate", operate, { minInputs: "9" });
        assert.equal(few.body.data.kind, "nothing");
        assert.equal(await openConsolidation(kv, "doge"), null);
        const res = await post("/admin/utxo/doge/consolidate", operate, {});
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.kind, "started");
        const open = await openConsolidation(kv, "doge");
        assert.equal(open?.id, res.body.data.consolidation.id);
        assert.equal(open?.inputs.length, SIM_GENESIS_COINS);
        const audit = await lastAudit(server);
        assert.deepEqual([audit.id, audit.action], [res.body.data.auditId, "utxo.consolidate"]);
        const shell = await cli(server, "utxo", "consolidate", "--chain", "doge");
        assert.equal(shell.code, 0, shell.stderr);
        assert.match(shell.stdout, new RegExp(`consolidation ${open!.id} on doge is already open`));
      },
    );
  } finally {
    await server.close();
  }
});

Deno.test("docs/admin-api.md lists every operation of the registry with its CLI usage, route and scope", async () => {
  // Compared with whitespace collapsed: `deno fmt` wraps long lines.
  const flat = (text: string) => text.replace(/\s+/g, " ");
  const doc = flat(await Deno.readTextFile(new URL("../docs/admin-api.md", import.meta.url)));
  const missing = OPS.filter((op) => {
    const route = op.http ? `\`${op.http.method.toUpperCase()} /admin${op.http.path}\`` : "shell only";
    return !doc.includes(flat(`- \`${opUsage(op)}\` ${route}, scope \`${op.scope}\`: ${op.summary}.`));
  });
  // The lines to add, as the registry gives them.
  const lines = missing.map((op) =>
    `- \`${opUsage(op)}\`\n  ${
      op.http ? `\`${op.http.method.toUpperCase()} /admin${op.http.path}\`` : "shell only"
    }, scope \`${op.scope}\`: ${op.summary}.`
  );
  assert.deepEqual(lines, [], `docs/admin-api.md lacks (or has stale):\n${lines.join("\n")}`);
});
