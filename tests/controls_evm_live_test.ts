/**
 * A pause on a live EVM chain (docs/controls.md): anvil with the five uAssets deployed, Base live beside the simulated
 * native chains. With base paused over the admin API, a sim SOL deposit confirms but nothing is minted on anvil (the
 * minter key sends nothing); resumed, it mints once.
 */
import assert from "node:assert/strict";
import { getOrder } from "../kv/orders.ts";
import { toWei, waitUntil } from "./support/chain_facts.ts";
import { liveBase, minter } from "./support/live_base.ts";
import { FAST_PIPELINE, sim, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

Deno.test("live Base: paused, a deposit does not mint on anvil; resumed, it mints once", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env() });
  try {
    const key = await operatorKeyFor(server, ["read", "operate"], "alice");
    const paused = await call(server, "POST", "/admin/chains/base/pause", { token: key, body: { reason: "drill" } });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));

    const wallet = randomWallet().toLowerCase();
    const token = await tokenFor(server, wallet);
    const created = await call(server, "POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(created.status, 201);
    const amount = 250_000_000n;
    await sim(server, "deposits", { chain: "sol", address: created.body.data.address, amount: amount.toString() });
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && o[0].status === "processing");
    const held = await waitUntil("the order waits on the pause", async () => {
      const e = await getOrder(server.services.kv, order.id);
      return e.value?.details.heldReason === "paused by operator: chain base (drill)" ? e.value : null;
    });
    assert.equal(held.details.intent, undefined);
    assert.equal(await live.client.getTransactionCount({ address: minter.address }), 0, "nothing sent to anvil");
    assert.equal(await live.balanceOf("uSOL", wallet), 0n);

    const resumed = await call(server, "POST", "/admin/chains/base/resume", { token: key });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.data.ordersDue, 1);
    const [done] = await waitForOrders(server, token, (o) => o.length === 1 && o[0].status === "completed", {
      timeoutMs: 20_000,
    });
    assert.equal(await live.balanceOf("uSOL", wallet), toWei("sol", amount));
    assert.equal((await live.mintedLogs("uSOL", held.details.depositId)).length, 1);
    assert.equal(await live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");
    assert.equal(done.transactionHash, (await live.mintedLogs("uSOL", held.details.depositId))[0].transactionHash);
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});
