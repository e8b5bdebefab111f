/**
 * Reconciliation with live Base on anvil: after a sim SOL deposit mints real uSOL, the `Minted` events read from
 * anvil (from the deployment block, in `maxRange` pieces) match the order and the report is ok; a mint outside the
 * pipeline (the contracts' admin granting itself the minter role) is `minted_without_order`, named with its deposit
 * id and transaction.
 */
import assert from "node:assert/strict";
import { keccak256, toHex } from "viem";
import { evmClient } from "../chains/evm/client.ts";
import { evmUAssetView } from "../chains/evm/uasset_view.ts";
import { nativeToWei } from "../chains/catalog.ts";
import { getOrder } from "../kv/orders.ts";
import { liveBase } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, type Json, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

Deno.test("live Base on anvil: Minted events read from the chain match the mint; an outside mint is named", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env() });
  try {
    const key = await operatorKeyFor(server, ["read"]);
    const wallet = randomWallet().toLowerCase();
    const token = await tokenFor(server, wallet);
    const address = await depositAddress(server, token, "sol", "base");
    const amount = 1_234_567_891n;
    await sim(server, "deposits", { chain: "sol", address, amount: amount.toString() });
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 20_000 });
    assert.equal(order.status, "completed", JSON.stringify(order));
    const stored = (await getOrder(server.services.kv, order.id)).value!;

    // The view itself, one block per eth_getLogs: the same events as anvil's own log query.
    const view = evmUAssetView({
      chain: "base",
      client: evmClient({ chain: "base", urls: [live.anvil.url], chainId: live.anvil.chainId }),
      uAssets: live.uAssets,
      maxRange: 1,
      fromBlock: live.deployedAt,
    });
    const events = await view.minted("uSOL");
    assert.deepEqual(events.map((e) => [e.depositId, e.to, e.amount, e.txHash]), [
      [stored.details.depositId, wallet, nativeToWei("sol", amount), order.transactionHash],
    ]);
    assert.equal(await view.totalSupply("uSOL"), nativeToWei("sol", amount));
    assert.equal(await view.balanceOf("uSOL", wallet), nativeToWei("sol", amount));

    let res = await call(server, "GET", "/admin/reconciliation", { token: key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    let r = res.body.data;
    assert.deepEqual(r.mismatches, []);
    assert.deepEqual(r.unknown, []);
    assert.equal(r.ok, true);
    const base = r.assets.find((a: Json) => a.asset === "uSOL").chains.find((c: Json) => c.chain === "base");
    assert.equal(base.mint.mintedEvents, 1);
    assert.equal(base.mint.mintedOnChainWei, nativeToWei("sol", amount).toString());

    // A mint the service never made: the deployer takes the minter role and mints with its own deposit id.
    const outsideAmount = 7n * 10n ** 18n;
    const stranger = randomWallet().toLowerCase() as `0x${string}`;
    await live.fund("uSOL", stranger, outsideAmount);
    const outsideDepositId = keccak256(toHex(`evm-live-test:fund:${stranger}:${outsideAmount}`));
    res = await call(server, "GET", "/admin/reconciliation", { token: key });
    r = res.body.data;
    assert.equal(r.ok, false);
    const m = r.mismatches.find((m: Json) => m.kind === "minted_without_order");
    assert.ok(m, JSON.stringify(r.mismatches));
    assert.equal(m.chain, "base");
    assert.equal(m.asset, "uSOL");
    assert.match(m.message, new RegExp(`${outsideAmount} wei`));
    assert.equal(m.records[0], outsideDepositId);
    assert.match(m.records[1], /^0x[0-9a-f]{64}$/, "the outside mint's transaction");
    // The supply check counts it too: 7 SOL more outstanding than the 1.23 SOL deposit we hold.
    assert.ok(r.mismatches.some((m: Json) => m.kind === "supply_exceeds_controlled" && m.asset === "uSOL"));
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});
