/**
 * Burns end to end over real HTTP on the embedded simulated chains: uAssets sent to the transfer address by a wallet
 * with a burn configuration pay the native coin to the configured destination; without a configuration the transfer
 * is held for an operator and never paid.
 */
import assert from "node:assert/strict";
import { NATIVE, weiPerNativeUnit } from "../chains/catalog.ts";
import { getOrder } from "../kv/orders.ts";
import { listHeld } from "../kv/pipeline.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { balance, FAST_PIPELINE, outside, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

Deno.test("a uAsset transfer to the transfer address pays the native coin, remainder recorded", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    const destination = outside.depositAddress("xrp", 3);
    const config = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "xrp", destinationAddress: destination, memo: "424242" },
    });
    assert.equal(config.status, 201);
    const unit = weiPerNativeUnit("xrp");
    const burned = NATIVE.xrp.uAsset.minimumBurnAmount * 2n + 123n; // 50 XRP and 123 wei that cannot be paid
    await sim(server, "faucet", {
      chain: "arbitrum",
      address: wallet,
      token: "uXRP",
      amount: (burned * 2n).toString(),
    });
    await sim(server, "transfers", { chain: "arbitrum", from: wallet, token: "uXRP", amount: burned.toString() });
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.type, "burn");
    assert.equal(order.sourceChain, "arbitrum");
    assert.equal(order.destinationChain, "xrp");
    assert.equal(order.token, "uXRP");
    assert.equal(order.amount, burned.toString());
    assert.equal(order.sourceWallet, wallet.toLowerCase());
    assert.equal(order.destinationWallet, destination);
    assert.ok(order.transactionHash);
    assert.equal(await balance(server, "xrp", destination), burned / unit);
    const stored = (await getOrder(server.services.kv, order.id)).value!;
    assert.ok(stored.type === "burn");
    assert.equal(stored.details.remainderWei, "123");
    assert.equal(stored.details.nativeAmount, (burned / unit).toString());
    assert.equal(stored.details.memo, "424242");
    // They sit at the transfer address until the burn tick burns them on chain (docs/onchain-burn.md).
    const held = await balance(server, "arbitrum", server.services.uAssetTransferAddress, "uXRP");
    assert.ok(held === burned || held === 0n, `the redeemed uAssets are at the transfer address or burned: ${held}`);
  } finally {
    await server.close();
  }
});

Deno.test("a transfer from a wallet without a burn configuration is held, never paid", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    // A configuration for another chain does not count: the uAsset decides the chain.
    await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: outside.depositAddress("sol", 1) },
    });
    const amount = NATIVE.doge.uAsset.minimumBurnAmount * 5n;
    await sim(server, "faucet", { chain: "base", address: wallet, token: "uDOGE", amount: amount.toString() });
    const tx = await sim(server, "transfers", {
      chain: "base",
      from: wallet,
      token: "uDOGE",
      amount: amount.toString(),
    });
    const deadline = Date.now() + 10_000;
    let held = await listHeld(server.services.kv);
    while (held.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      held = await listHeld(server.services.kv);
    }
    assert.equal(held.length, 1);
    assert.equal(held[0].txHash, tx.txHash);
    assert.equal(held[0].from, wallet.toLowerCase());
    assert.equal(held[0].amount, amount.toString());
    assert.equal(held[0].asset, "uDOGE");
    assert.match(held[0].reason, /no burn configuration for doge/);
    // Configuring afterwards does not pay the held transfer (spec 4.4).
    await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "doge", destinationAddress: outside.depositAddress("doge", 1) },
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await call(server, "GET", "/orders", { token })).body.data.pagination.total, 0);
    assert.equal(await balance(server, "doge", outside.depositAddress("doge", 1)), 0n);
    const refused = await call(server, "POST", "/sim/transfers", {
      body: { chain: "base", from: wallet, token: "uDOGE", amount: "1" },
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { success: false, message: "Insufficient balance" });
  } finally {
    await server.close();
  }
});

Deno.test("a stored destination that no longer validates fails the burn with Invalid destination address", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    // A record that bypassed the API's validation (an old or damaged record): the pipeline checks again.
    const typo = outside.depositAddress("doge", 2).slice(0, -1) + "1";
    await createBurnConfig(server.services.kv, wallet.toLowerCase(), "doge", typo, null);
    const amount = NATIVE.doge.uAsset.minimumBurnAmount * 3n;
    await sim(server, "faucet", { chain: "world", address: wallet, token: "uDOGE", amount: amount.toString() });
    await sim(server, "transfers", { chain: "world", from: wallet, token: "uDOGE", amount: amount.toString() });
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
    assert.equal(order.status, "failed");
    assert.equal(order.errorMessage, "Invalid destination address");
    assert.equal(order.transactionHash, null);
    assert.equal(await balance(server, "doge", typo), 0n);
  } finally {
    await server.close();
  }
});
