/**
 * Each failure the spec names (2.4) ends as a `failed` order with exactly the spec's `errorMessage`, seen by the
 * partner over GET /orders, and moves no value; transient RPC errors are retried with backoff and never fail an order.
 * Set-ups are deterministic: fault injection over POST /sim/faults, and a stalled chain given exactly one block.
 */
import assert from "node:assert/strict";
import { listOrders } from "../kv/orders.ts";
import { setUserWalletStatus } from "../kv/user_wallets.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import {
  expectedDepositId,
  MIN_BURN_WEI,
  MIN_DEPOSIT,
  mintTxs,
  payoutTxs,
  sealOneBlock,
  stored,
  toWei,
  waitUntil,
} from "./support/chain_facts.ts";
import {
  balance,
  depositAddress,
  FAST_PIPELINE,
  type Json,
  outside,
  partner,
  sim,
  terminal,
  waitForOrders,
} from "./support/pipeline.ts";
import { call, startTestServer, type TestServer } from "./support/server.ts";

async function oneTerminalOrder(server: TestServer, token: string): Promise<Json> {
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
  return order;
}

Deno.test("pipeline failures: each ends failed with the spec's message and moves nothing", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    await t.step("a deposit below the minimum: Insufficient deposit amount; the minimum itself mints", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sol", "base");
      const small = MIN_DEPOSIT.sol - 1n;
      const tx = await sim(server, "deposits", { chain: "sol", address, amount: small.toString() });
      const order = await oneTerminalOrder(server, token);
      assert.equal(order.status, "failed");
      assert.equal(order.errorMessage, "Insufficient deposit amount");
      assert.equal(order.amount, "9999999");
      assert.equal(order.transactionHash, null);
      assert.equal(await balance(server, "base", wallet, "uSOL"), 0n);
      assert.equal((await mintTxs(server.services.kv, "base", await expectedDepositId("sol", tx.txHash))).length, 0);

      await sim(server, "deposits", { chain: "sol", address, amount: MIN_DEPOSIT.sol.toString() });
      const both = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal));
      assert.deepEqual(both.map((o: Json) => o.status).sort(), ["completed", "failed"]);
      assert.equal(await balance(server, "base", wallet, "uSOL"), 10n ** 16n, "0.01 SOL is 10^16 wei of uSOL");
    });

    await t.step("a deposit to a deactivated wallet: Wallet address inactive, nothing minted", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "xrp", "arbitrum");
      await setUserWalletStatus(server.services.kv, wallet, "inactive");
      await sim(server, "deposits", { chain: "xrp", address, amount: (MIN_DEPOSIT.xrp * 5n).toString() });
      const [entry] = await waitUntil("the order to end", async () => {
        const { orders } = await listOrders(server.services.kv, wallet, { limit: 10, offset: 0 });
        return orders.length === 1 && terminal(orders[0]) ? orders : null;
      });
      // While inactive the partner cannot even list; once active again the failed order is visible.
      const refused = await call(server, "GET", "/orders", { token });
      assert.equal(refused.status, 403);
      await setUserWalletStatus(server.services.kv, wallet, "active");
      const order = await oneTerminalOrder(server, token);
      assert.equal(order.id, entry.id);
      assert.equal(order.status, "failed");
      assert.equal(order.errorMessage, "Wallet address inactive");
      assert.equal(order.transactionHash, null);
      assert.equal(await balance(server, "arbitrum", wallet, "uXRP"), 0n);
    });

    await t.step(
      "a mint that reverts: Minting contract error, the reverted transaction's hash, no uAsset",
      async () => {
        const { wallet, token } = await partner(server);
        const address = await depositAddress(server, token, "sui", "katana");
        await sim(server, "faults", { chain: "katana", revertNextMint: 1 });
        const tx = await sim(server, "deposits", { chain: "sui", address, amount: MIN_DEPOSIT.sui.toString() });
        const order = await oneTerminalOrder(server, token);
        assert.equal(order.status, "failed");
        assert.equal(order.errorMessage, "Minting contract error");
        const attempts = await mintTxs(server.services.kv, "katana", await expectedDepositId("sui", tx.txHash));
        assert.equal(attempts.length, 1);
        assert.equal(attempts[0].success, false);
        assert.equal(order.transactionHash, attempts[0].hash);
        assert.equal(await balance(server, "katana", wallet, "uSUI"), 0n);
        assert.equal((await new SimLedger(server.services.kv, "katana").getFaults()).revertNextMint, 0);
      },
    );

    await t.step("a burn below the minimum: Amount below minimum burn, nothing paid", async () => {
      const { wallet, token } = await partner(server);
      const destination = outside.depositAddress("sui", 7);
      const cfg = await call(server, "POST", "/burn/wallets", {
        token,
        body: { destinationChain: "sui", destinationAddress: destination },
      });
      assert.equal(cfg.status, 201);
      const amount = MIN_BURN_WEI.sui - 1n;
      await sim(server, "faucet", { chain: "world", address: wallet, token: "uSUI", amount: amount.toString() });
      await sim(server, "transfers", { chain: "world", from: wallet, token: "uSUI", amount: amount.toString() });
      const order = await oneTerminalOrder(server, token);
      assert.equal(order.type, "burn");
      assert.equal(order.status, "failed");
      assert.equal(order.errorMessage, "Amount below minimum burn");
      assert.equal(order.amount, "999999999999999999");
      assert.equal(await balance(server, "sui", destination), 0n);
      assert.equal((await payoutTxs(server.services.kv, "sui", order.id)).length, 0);
    });

    await t.step("a payout the chain rejects: Transaction failed on destination chain, nothing paid", async () => {
      const { wallet, token } = await partner(server);
      const destination = outside.depositAddress("sol", 8);
      await call(server, "POST", "/burn/wallets", {
        token,
        body: { destinationChain: "sol", destinationAddress: destination },
      });
      await sim(server, "faults", { chain: "sol", failNextPayout: 1 });
      const amount = (3n * 10n ** 18n).toString();
      await sim(server, "faucet", { chain: "unichain", address: wallet, token: "uSOL", amount });
      await sim(server, "transfers", { chain: "unichain", from: wallet, token: "uSOL", amount });
      const order = await oneTerminalOrder(server, token);
      assert.equal(order.status, "failed");
      assert.equal(order.errorMessage, "Transaction failed on destination chain");
      const payouts = await payoutTxs(server.services.kv, "sol", order.id);
      assert.equal(payouts.length, 1);
      assert.equal(payouts[0].success, false);
      assert.equal(order.transactionHash, payouts[0].hash);
      assert.equal(await balance(server, "sol", destination), 0n);
    });

    await t.step("RPC down on the destination chain: retried with backoff, never failed, then mints once", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "zec", "world");
      await sim(server, "faults", { chain: "world", rpcErrorRate: 1 });
      try {
        const amount = 123_456n;
        await sim(server, "deposits", { chain: "zec", address, amount: amount.toString() });
        const [{ id }] = await waitForOrders(server, token, (o) => o.length === 1 && o[0].status === "processing");
        const firstErrorAt = await waitUntil("a first transient error", async () => {
          const o = await stored(server.services.kv, id);
          return Number(o.details.transientErrors ?? 0) >= 1 ? Date.now() : null;
        });
        await new Promise((r) => setTimeout(r, 1500));
        const o = await stored(server.services.kv, id);
        const errors = Number(o.details.transientErrors);
        // Backoff from 50 ms doubling gives 5 attempts in 1.5 s (50+100+200+400+800 ms); a fixed 50 ms retry about 30.
        assert.ok(errors >= 3 && errors <= 6, `${errors} attempts in ${Date.now() - firstErrorAt} ms`);
        assert.match(String(o.details.lastTransientError), /injected RPC error/);
        const [seen] = (await call(server, "GET", "/orders", { token })).body.data.orders;
        assert.equal(seen.status, "processing");
        assert.equal(seen.errorMessage, null);
        await sim(server, "faults", { chain: "world", rpcErrorRate: 0 });
        const order = await oneTerminalOrder(server, token);
        assert.equal(order.status, "completed");
        assert.equal(await balance(server, "world", wallet, "uZEC"), toWei("zec", amount));
      } finally {
        await sim(server, "faults", { chain: "world", rpcErrorRate: 0 });
      }
    });

    await t.step("random RPC errors on every chain of a mint and a burn: both complete exactly once", async () => {
      const { wallet, token } = await partner(server);
      const chains = ["sui", "unichain", "doge", "base"];
      for (const chain of chains) await sim(server, "faults", { chain, rpcErrorRate: 0.3 });
      try {
        const address = await depositAddress(server, token, "sui", "unichain");
        const destination = outside.depositAddress("doge", 9);
        await call(server, "POST", "/burn/wallets", {
          token,
          body: { destinationChain: "doge", destinationAddress: destination },
        });
        const deposit = 2_000_000_001n;
        const burned = 7n * 10n ** 17n + 5n; // 0.7 DOGE and 5 wei that cannot be paid
        await sim(server, "deposits", { chain: "sui", address, amount: deposit.toString() });
        await sim(server, "faucet", { chain: "base", address: wallet, token: "uDOGE", amount: burned.toString() });
        await sim(server, "transfers", { chain: "base", from: wallet, token: "uDOGE", amount: burned.toString() });
        const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal), {
          timeoutMs: 30_000,
        });
        for (const o of orders) assert.equal(o.status, "completed", JSON.stringify(o));
        assert.equal(await balance(server, "unichain", wallet, "uSUI"), toWei("sui", deposit));
        assert.equal(await balance(server, "doge", destination), 70_000_000n);
        const burn = orders.find((o: Json) => o.type === "burn");
        assert.equal((await payoutTxs(server.services.kv, "doge", burn.id)).length, 1);
      } finally {
        for (const chain of chains) await sim(server, "faults", { chain, rpcErrorRate: 0 });
      }
    });
  } finally {
    await server.close();
  }
});

Deno.test("a deposit never confirmed in time: Blockchain confirmation timeout, and it stays failed", async () => {
  const server = await startTestServer({ ...FAST_PIPELINE, SIM_CONFIRMATION_TIMEOUT_MS: "1200" });
  try {
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "doge", "base");
    // doge needs 3 confirmations in sim: stall the chain, then give the deposit exactly one block.
    await sim(server, "faults", { chain: "doge", stallMs: 60_000 });
    const tx = await sim(server, "deposits", { chain: "doge", address, amount: MIN_DEPOSIT.doge.toString() });
    await sealOneBlock(server.services.kv, "doge");
    const [pending] = await waitForOrders(server, token, (o) => o.length === 1);
    assert.equal(pending.status, "pending");
    const started = Date.now();
    const order = await oneTerminalOrder(server, token);
    assert.ok(Date.now() - started < 5_000);
    assert.equal(order.status, "failed");
    assert.equal(order.errorMessage, "Blockchain confirmation timeout");
    assert.equal(order.transactionHash, null);

    // The chain moves on and the deposit gains its confirmations: a failed order stays failed, nothing is minted.
    await sim(server, "faults", { chain: "doge", stallMs: 0 });
    const ledger = new SimLedger(server.services.kv, "doge");
    await waitUntil("the deposit to be confirmed", async () => {
      const s = await ledger.txStatus(tx.txHash);
      return s.state === "included" && s.confirmations >= 6;
    });
    await new Promise((r) => setTimeout(r, 200));
    const [after] = (await call(server, "GET", "/orders", { token })).body.data.orders;
    assert.equal(after.status, "failed");
    assert.equal(after.errorMessage, "Blockchain confirmation timeout");
    assert.equal(await balance(server, "base", wallet, "uDOGE"), 0n);
    assert.equal((await mintTxs(server.services.kv, "base", await expectedDepositId("doge", tx.txHash))).length, 0);
  } finally {
    await server.close();
  }
});
