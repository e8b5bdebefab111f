/**
 * Reconciliation end to end on the simulated chains: mints and a burn through the pipeline, then
 * `GET /admin/reconciliation` with an operator key says every coin adds up; then real mismatches are made (uAssets
 * credited outside the pipeline beyond what we hold, an order record deleted) and each is named with its records,
 * stored for /metrics and the dashboard, and the CLI says MISMATCH (exit 2 with `--fail-on-mismatch`).
 */
import assert from "node:assert/strict";
import { NATIVE, nativeToWei } from "../chains/catalog.ts";
import { getOrder, orderKey } from "../kv/orders.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { runTask } from "./support/cli.ts";
import { depositAddress, FAST_PIPELINE, type Json, outside, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

Deno.test("reconciliation over HTTP: ok after mints and a burn; a supply beyond our coins and a lost order are named", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const key = await operatorKeyFor(server, ["read"]);
    const wallet = randomWallet().toLowerCase();
    const token = await tokenFor(server, wallet);
    const solAddress = await depositAddress(server, token, "sol", "base");
    const dogeAddress = await depositAddress(server, token, "doge", "arbitrum");
    await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: outside.depositAddress("sol", 7) },
    });
    const sol = 5_000_000_000n; // 5 SOL
    const doge = 2_500_000_000n; // 25 DOGE
    await sim(server, "deposits", { chain: "sol", address: solAddress, amount: sol.toString() });
    await sim(server, "deposits", { chain: "doge", address: dogeAddress, amount: doge.toString() });
    let orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal), { timeoutMs: 20_000 });
    assert.ok(orders.every((o: Json) => o.status === "completed"), JSON.stringify(orders));
    const burned = NATIVE.sol.uAsset.minimumBurnAmount * 2n + 123n;
    await sim(server, "transfers", { chain: "base", from: wallet, token: "uSOL", amount: burned.toString() });
    orders = await waitForOrders(server, token, (o) => o.length === 3 && o.every(terminal), { timeoutMs: 20_000 });
    assert.ok(orders.every((o: Json) => o.status === "completed"), JSON.stringify(orders));
    const solMint = orders.find((o: Json) => o.type === "mint" && o.sourceChain === "sol");

    await t.step("every coin adds up: ok, with the sums", async () => {
      // The redeemed uSOL is burned on chain in a batch once the burn completed (docs/onchain-burn.md): wait for it.
      let res;
      for (let i = 0; i < 200; i++) {
        res = await call(server, "GET", "/admin/reconciliation", { token: key });
        const c = res.body.data.assets.find((a: Json) => a.asset === "uSOL").chains.find((c: Json) =>
          c.chain === "base"
        );
        if (c.redeem.burnedOnChainWei === burned.toString()) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(res!.status, 200, JSON.stringify(res!.body));
      const r = res!.body.data;
      assert.deepEqual(r.mismatches, []);
      assert.deepEqual(r.unknown, []);
      assert.equal(r.ok, true);
      const uSol = r.assets.find((a: Json) => a.asset === "uSOL");
      const base = uSol.chains.find((c: Json) => c.chain === "base");
      assert.equal(base.mint.completedWei, nativeToWei("sol", sol).toString());
      assert.equal(base.mint.mintedOnChainWei, nativeToWei("sol", sol).toString());
      assert.equal(base.redeem.paidOutWei, (burned - 123n).toString());
      assert.equal(base.redeem.remainderWei, "123");
      assert.equal(base.redeem.transferAddressWei, "0");
      assert.equal(base.redeem.burnedOnChainWei, burned.toString());
      assert.equal(uSol.supply.totalSupplyWei, (nativeToWei("sol", sol) - burned).toString());
      assert.equal(uSol.supply.outstandingWei, (nativeToWei("sol", sol) - burned).toString());
      const uDoge = r.assets.find((a: Json) => a.asset === "uDOGE");
      assert.equal(
        uDoge.chains.find((c: Json) => c.chain === "arbitrum").mint.mintedOnChainWei,
        (doge * 10n ** 10n).toString(),
      );
      assert.ok(BigInt(uDoge.supply.controlled.treasury) >= doge, JSON.stringify(uDoge.supply));
      const stored = await lastReconciliation(server.services.kv);
      assert.equal(stored?.ok, true);
    });

    await t.step("uAssets credited outside the pipeline beyond our coins: supply_exceeds_controlled", async () => {
      const before = (await call(server, "GET", "/admin/reconciliation", { token: key })).body.data;
      const treasury = BigInt(before.assets.find((a: Json) => a.asset === "uDOGE").supply.controlledNative);
      const extra = nativeToWei("doge", treasury + 1n);
      await sim(server, "faucet", {
        chain: "world",
        address: randomWallet(),
        token: "uDOGE",
        amount: extra.toString(),
      });
      const res = await call(server, "GET", "/admin/reconciliation", { token: key });
      assert.equal(res.status, 200);
      const r = res.body.data;
      assert.equal(r.ok, false);
      assert.deepEqual(r.mismatches.map((m: Json) => `${m.kind} ${m.asset} ${m.chain}`), [
        "supply_exceeds_controlled uDOGE null",
      ]);
      assert.match(r.mismatches[0].message, /short by \d+ wei/);
      const stored = await lastReconciliation(server.services.kv);
      assert.equal(stored?.ok, false);
      assert.equal(stored?.mismatches[0].kind, "supply_exceeds_controlled");
    });

    await t.step("a completed mint order's record deleted: its Minted event is minted_without_order", async () => {
      const stored = (await getOrder(server.services.kv, solMint.id)).value!;
      await server.services.kv.delete(orderKey(solMint.id));
      const res = await call(server, "GET", "/admin/reconciliation", { token: key });
      const r = res.body.data;
      const m = r.mismatches.find((m: Json) => m.kind === "minted_without_order");
      assert.ok(m, JSON.stringify(r.mismatches));
      assert.equal(m.asset, "uSOL");
      assert.equal(m.chain, "base");
      assert.deepEqual(m.records, [stored.details.depositId, solMint.transactionHash]);
    });

    await t.step("the CLI prints the table and MISMATCH, exit 0; --fail-on-mismatch exits 2", async () => {
      const plain = await runTask("admin", { KV_PATH: server.kvPath }, ["reconcile"]);
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout, /minted_without_order uSOL base/);
      assert.match(plain.stdout, /MISMATCH: 2 mismatch\(es\)/);
      const strict = await runTask("admin", { KV_PATH: server.kvPath }, ["reconcile", "--fail-on-mismatch"]);
      assert.equal(strict.code, 2);
      assert.match(strict.stderr, /supply_exceeds_controlled uDOGE/);
      assert.match(strict.stderr, /MISMATCH: 2 mismatch\(es\)/);
      // A CLI flag: over the API it is refused, naming it (API clients read `ok`).
      const api = await call(server, "GET", "/admin/reconciliation?failOnMismatch=true", { token: key });
      assert.equal(api.status, 400);
      assert.deepEqual(api.body.error.issues.map((i: Json) => i.path), [["failOnMismatch"]]);
    });

    await t.step("a chain that does not answer: its parts are unknown, the report is not ok", async () => {
      await sim(server, "faults", { chain: "katana", rpcErrorRate: 1 });
      const r = (await call(server, "GET", "/admin/reconciliation", { token: key })).body.data;
      assert.equal(r.ok, false);
      assert.ok(r.unknown.some((u: string) => /^uSOL katana minted events: sim katana: injected RPC error/.test(u)));
      const katana = r.assets.find((a: Json) => a.asset === "uSOL").chains.find((c: Json) => c.chain === "katana");
      assert.equal(katana.ok, false);
      assert.equal(katana.mint.mintedOnChainWei, null);
      assert.equal(r.assets.find((a: Json) => a.asset === "uSOL").supply.totalSupplyWei, null);
    });
  } finally {
    await server.close();
  }
});
