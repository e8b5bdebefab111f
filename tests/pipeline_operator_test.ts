/**
 * The operator's tools against a running server, each run as its own process on the server's KV file as an operator
 * would: `deno task admin` (orders held, order show, order cancel, order retry) and `deno task sim` (the /sim
 * endpoints from a shell). The partner's view is checked over GET /orders, value on the simulated chains. The /sim
 * endpoints exist only in sim mode.
 */
import { displayAmount, unitOf } from "../model/amounts.ts";
import assert from "node:assert/strict";
import { intentOf } from "../actors/transition.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { listOrders } from "../kv/orders.ts";
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
  allOrders,
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
import { runTask } from "./support/cli.ts";
import { call, startTestServer, type TestServer } from "./support/server.ts";
import { evmChainEnv } from "./support/live_env.ts";

const admin = (server: TestServer, ...args: string[]) => runTask("admin", { KV_PATH: server.kvPath }, args);
async function simCli(server: TestServer, ...args: string[]) {
  const res = await runTask("sim", { KV_PATH: server.kvPath }, args);
  assert.equal(res.code, 0, `deno task sim ${args.join(" ")}: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

async function oneOrder(server: TestServer, token: string, done: (o: Json) => boolean): Promise<Json> {
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && done(o[0]));
  return order;
}

Deno.test("operator commands on a running server", async (t) => {
  const server = await startTestServer({ ...FAST_PIPELINE, SIM_CONFIRMATION_TIMEOUT_MS: "3000" });
  const kv = server.services.kv;
  try {
    await t.step(
      "deno task sim: deposit, balance, faucet, transfer and faults act on the server's chains",
      async () => {
        const { wallet, token } = await partner(server);
        const address = await depositAddress(server, token, "sol", "base");
        const amount = 123_456_789n;
        const dep = await simCli(server, "deposit", "--chain", "sol", "--address", address, "--amount", `${amount}`);
        assert.match(dep.txHash, /^[1-9A-HJ-NP-Za-km-z]{80,90}$/, "a Solana signature");
        assert.equal(typeof dep.blockNumber, "number");
        const mint = await oneOrder(server, token, terminal);
        assert.equal(mint.status, "completed");
        assert.equal(mint.amount, "123456789");
        const bal = await simCli(server, "balance", "--chain", "base", "--address", wallet, "--token", "uSOL");
        assert.deepEqual(bal, { balance: "123456789000000000" });
        assert.equal(await balance(server, "base", wallet, "uSOL"), 123_456_789_000_000_000n);

        const destination = outside.depositAddress("doge", 4);
        await call(server, "POST", "/burn/wallets", {
          token,
          body: { destinationChain: "doge", destinationAddress: destination },
        });
        const burned = (MIN_BURN_WEI.doge * 3n + 42n).toString();
        await simCli(server, "faucet", "--chain", "base", "--address", wallet, "--token", "uDOGE", "--amount", burned);
        assert.equal(await balance(server, "base", wallet, "uDOGE"), BigInt(burned));
        const tr = await simCli(
          server,
          "transfer",
          "--chain",
          "base",
          "--from",
          wallet,
          "--token",
          "uDOGE",
          "--amount",
          burned,
        );
        assert.match(tr.txHash, /^0x[0-9a-f]{64}$/);
        const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal));
        assert.ok(orders.every((o: Json) => o.status === "completed"), JSON.stringify(orders));
        assert.deepEqual(await simCli(server, "balance", "--chain", "doge", "--address", destination), {
          balance: "30000000",
        });
        // At the transfer address until the burn tick burns it on chain (docs/onchain-burn.md).
        const held = await balance(server, "base", server.services.uAssetTransferAddress, "uDOGE");
        assert.ok(held === BigInt(burned) || held === 0n, `redeemed uDOGE at the transfer address or burned: ${held}`);

        const refused = await runTask("sim", { KV_PATH: server.kvPath }, [
          "transfer",
          "--chain",
          "base",
          "--from",
          wallet,
          "--token",
          "uDOGE",
          "--amount",
          "1",
        ]);
        assert.equal(refused.code, 2);
        assert.match(refused.stderr, /Insufficient balance/);

        const faults = await simCli(server, "faults", "--chain", "katana", "--revert-next-mint", "1");
        assert.equal(faults.faults.revertNextMint, 1);
        assert.equal((await new SimLedger(kv, "katana").getFaults()).revertNextMint, 1);
        // A stall and a reorg through the CLI: the stalled head keeps its height and gets another hash.
        const stalled = await simCli(server, "faults", "--chain", "katana", "--stall-ms", "60000");
        assert.ok(stalled.faults.stalledUntil > Date.now());
        const before = await new SimLedger(kv, "katana").head();
        const reorged = await simCli(server, "faults", "--chain", "katana", "--reorg", "1");
        assert.equal(reorged.head.number, before.number);
        assert.notEqual(reorged.head.hash, before.hash);
        assert.equal(await new SimLedger(kv, "katana").blockHash(before.number), reorged.head.hash);
        await simCli(server, "faults", "--chain", "katana", "--stall-ms", "0");
        await waitUntil(
          "katana to move again",
          async () => (await new SimLedger(kv, "katana").head()).number > before.number,
        );

        for (
          const args of [
            ["deposit", "--chain", "eth", "--address", address, "--amount", "1"],
            ["deposit", "--chain", "sol", "--address", address, "--amount", "1.5"],
            ["faults", "--chain", "base", "--rpc-error-rate", "2"],
            ["nonsense", "--chain", "sol"],
          ]
        ) {
          const res = await runTask("sim", { KV_PATH: server.kvPath }, args);
          assert.equal(res.code, 2, args.join(" "));
          assert.match(res.stderr, /error/);
        }
        assert.equal((await new SimLedger(kv, "base").getFaults()).rpcErrorRate, 0);
      },
    );

    await t.step(
      "order retry: a reverted mint is minted once on retry (revert injected with deno task sim)",
      async () => {
        const { wallet, token } = await partner(server);
        const address = await depositAddress(server, token, "xrp", "katana");
        const amount = 2_500_000n;
        const dep = await sim(server, "deposits", { chain: "xrp", address, amount: amount.toString() });
        const failed = await oneOrder(server, token, terminal);
        assert.equal(failed.status, "failed");
        assert.equal(failed.errorMessage, "Minting contract error");

        const shown = await admin(server, "order", "show", failed.id);
        assert.equal(shown.code, 0, shown.stderr);
        const json = JSON.parse(shown.stdout);
        assert.equal(json.id, failed.id);
        assert.equal(json.status, "failed");
        assert.equal(json.errorMessage, "Minting contract error");
        assert.equal(json.details.depositId, await expectedDepositId("xrp", dep.txHash));

        const retried = await admin(server, "order", "retry", failed.id);
        assert.equal(retried.code, 0, retried.stderr);
        assert.match(retried.stdout, /processing again/);
        const done = await oneOrder(server, token, (o) => o.status === "completed");
        assert.equal(done.errorMessage, null);
        const mints = await mintTxs(kv, "katana", await expectedDepositId("xrp", dep.txHash));
        assert.deepEqual(mints.map((m) => m.success).sort(), [false, true], "the reverted attempt and one mint");
        assert.equal(done.transactionHash, mints.find((m) => m.success)!.hash);
        assert.equal(await balance(server, "katana", wallet, "uXRP"), toWei("xrp", amount));
        assert.equal((await stored(kv, done.id)).details.retries, 1);
      },
    );

    await t.step("order retry: a payout the chain rejected is paid once on retry", async () => {
      const { wallet, token } = await partner(server);
      const destination = outside.depositAddress("sui", 5);
      await call(server, "POST", "/burn/wallets", {
        token,
        body: { destinationChain: "sui", destinationAddress: destination },
      });
      await simCli(server, "faults", "--chain", "sui", "--fail-next-payout", "1");
      const amount = (MIN_BURN_WEI.sui * 2n).toString();
      await sim(server, "faucet", { chain: "world", address: wallet, token: "uSUI", amount });
      await sim(server, "transfers", { chain: "world", from: wallet, token: "uSUI", amount });
      const failed = await oneOrder(server, token, terminal);
      assert.equal(failed.errorMessage, "Transaction failed on destination chain");
      assert.equal(await balance(server, "sui", destination), 0n);
      const retried = await admin(server, "order", "retry", failed.id);
      assert.equal(retried.code, 0, retried.stderr);
      const done = await oneOrder(server, token, (o) => o.status === "completed");
      const payouts = await payoutTxs(kv, "sui", done.id);
      assert.deepEqual(payouts.map((p) => p.success).sort(), [false, true]);
      assert.equal(done.transactionHash, payouts.find((p) => p.success)!.hash);
      assert.equal(await balance(server, "sui", destination), 2_000_000_000n, "2 SUI, paid once");
    });

    await t.step("order retry: a deposit refused for an inactive wallet mints once the wallet is active", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "zec", "arbitrum");
      assert.equal((await admin(server, "wallet", "deactivate", wallet)).code, 0);
      await sim(server, "deposits", { chain: "zec", address, amount: "250000" });
      const [failed] = await waitUntil("the order to fail", async () => {
        const { orders } = await listOrders(kv, wallet, { limit: 5, offset: 0 });
        return orders.length === 1 && orders[0].status === "failed" ? orders : null;
      });
      assert.equal(failed.errorMessage, "Wallet address inactive");
      assert.equal((await admin(server, "wallet", "activate", wallet)).code, 0);
      const retried = await admin(server, "order", "retry", failed.id);
      assert.equal(retried.code, 0, retried.stderr);
      const done = await oneOrder(server, token, (o) => o.status === "completed");
      assert.equal(done.id, failed.id);
      assert.equal(await balance(server, "arbitrum", wallet, "uZEC"), toWei("zec", 250_000n));
    });

    await t.step("order retry: a confirmation timeout waits again and mints once the chain moves", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "doge", "world");
      await simCli(server, "faults", "--chain", "doge", "--stall-ms", "60000");
      const amount = MIN_DEPOSIT.doge * 2n;
      await sim(server, "deposits", { chain: "doge", address, amount: amount.toString() });
      await sealOneBlock(kv, "doge");
      const failed = await oneOrder(server, token, terminal);
      assert.equal(failed.errorMessage, "Blockchain confirmation timeout");
      const retried = await admin(server, "order", "retry", failed.id);
      assert.equal(retried.code, 0, retried.stderr);
      assert.match(retried.stdout, /pending again/);
      const [again] = (await call(server, "GET", "/orders", { token })).body.data.orders;
      assert.equal(again.status, "pending");
      assert.equal(again.errorMessage, null);
      await simCli(server, "faults", "--chain", "doge", "--stall-ms", "0");
      const done = await oneOrder(server, token, (o) => o.status === "completed");
      assert.equal(done.id, failed.id);
      assert.equal(await balance(server, "world", wallet, "uDOGE"), toWei("doge", amount));
    });

    await t.step("order retry is refused for causes that cannot pass and for orders that did not fail", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sui", "base");
      await sim(server, "deposits", { chain: "sui", address, amount: (MIN_DEPOSIT.sui - 1n).toString() });
      const failed = await oneOrder(server, token, terminal);
      assert.equal(failed.errorMessage, "Insufficient deposit amount");
      const refused = await admin(server, "order", "retry", failed.id);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /retry is not allowed for a failed order/);
      await sim(server, "deposits", { chain: "sui", address, amount: MIN_DEPOSIT.sui.toString() });
      const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal));
      const completed = orders.find((o: Json) => o.status === "completed");
      const again = await admin(server, "order", "retry", completed.id);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /not allowed for a completed order/);
      const now = await allOrders(server, token);
      assert.deepEqual(now.map((o: Json) => o.status).sort(), ["completed", "failed"]);
      assert.equal(await balance(server, "base", wallet, "uSUI"), toWei("sui", MIN_DEPOSIT.sui));
      const missing = await admin(server, "order", "show", "01900000-0000-7000-8000-000000000000");
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /no order/);
    });

    await t.step("order cancel: a pending order is cancelled and never mints", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "zec", "unichain");
      await sim(server, "faults", { chain: "zec", stallMs: 60_000 });
      const dep = await sim(server, "deposits", { chain: "zec", address, amount: "900000" });
      const sealed = await sealOneBlock(kv, "zec");
      const pending = await oneOrder(server, token, (o) => o.status === "pending");
      const res = await admin(server, "order", "cancel", pending.id);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /cancelled/);
      await sim(server, "faults", { chain: "zec", stallMs: 0 });
      await waitUntil("zec to give the deposit its confirmations", async () => {
        const s = await new SimLedger(kv, "zec").txStatus(dep.txHash);
        return s.state === "included" && s.confirmations >= 5 && s.blockNumber === sealed.number;
      });
      await new Promise((r) => setTimeout(r, 150));
      const [after] = (await call(server, "GET", "/orders", { token })).body.data.orders;
      assert.equal(after.status, "cancelled");
      assert.equal(after.transactionHash, null);
      assert.equal(await balance(server, "unichain", wallet, "uZEC"), 0n);
      assert.equal((await mintTxs(kv, "unichain", await expectedDepositId("zec", dep.txHash))).length, 0);
      const twice = await admin(server, "order", "cancel", pending.id);
      assert.equal(twice.code, 2);
      assert.match(twice.stderr, /not allowed for a cancelled order/);
    });

    await t.step("order cancel is refused once a transaction was recorded; the order completes", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sui", "unichain");
      await sim(server, "faults", { chain: "unichain", stallMs: 60_000 });
      try {
        const amount = 3_000_000_000n;
        await sim(server, "deposits", { chain: "sui", address, amount: amount.toString() });
        const minting = await oneOrder(server, token, (o) => o.status === "minting");
        assert.ok(intentOf(await stored(kv, minting.id)));
        const res = await admin(server, "order", "cancel", minting.id);
        assert.equal(res.code, 2);
        // The chain is asked: the mint is pending, so it may still land.
        assert.match(res.stderr, /cancel refused: .* is not proven dead .*may still land/);
        assert.equal((await stored(kv, minting.id)).status, "minting");
        await sim(server, "faults", { chain: "unichain", stallMs: 0 });
        const done = await oneOrder(server, token, terminal);
        assert.equal(done.status, "completed");
        assert.equal(await balance(server, "unichain", wallet, "uSUI"), toWei("sui", amount));
        const late = await admin(server, "order", "cancel", done.id);
        assert.equal(late.code, 2);
        assert.match(late.stderr, /not allowed for a completed order/);
      } finally {
        await sim(server, "faults", { chain: "unichain", stallMs: 0 });
      }
    });

    await t.step("orders held lists uAssets sent without a burn configuration", async () => {
      const { wallet } = await partner(server);
      const amount = (MIN_BURN_WEI.zec * 4n + 3n).toString();
      await sim(server, "faucet", { chain: "arbitrum", address: wallet, token: "uZEC", amount });
      const tx = await sim(server, "transfers", { chain: "arbitrum", from: wallet, token: "uZEC", amount });
      const line = await waitUntil("the held transfer to be listed", async () => {
        const res = await admin(server, "orders", "held");
        assert.equal(res.code, 0, res.stderr);
        return res.stdout.split("\n").find((l) => l.includes(tx.txHash));
      });
      const [chain, id, from, value, block, reason] = line.split("\t");
      assert.equal(chain, "arbitrum");
      assert.equal(id, `${tx.txHash}:0`);
      assert.equal(from, `from=${wallet.toLowerCase()}`);
      assert.equal(value, displayAmount(amount, unitOf("uZEC")), "the amount in uZEC's units (--json keeps the wei)");
      assert.match(block, /^block=\d+$/);
      assert.equal(reason, "no burn configuration for zec");
      const res = await admin(server, "orders", "held");
      assert.match(res.stdout, /\n1 of 1 held transfer\(s\), newest first; they are never paid automatically\n/);
      assert.match(res.stdout, /\n0 dust aggregate\(s\): sub-minimum transfers from outsiders, counted, never paid\n$/);
      assert.equal((await admin(server, "orders", "held", "extra")).code, 2);
    });
  } finally {
    await server.close();
  }
});

Deno.test("the sim endpoints and deno task sim exist only in sim mode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "live-secrets-" });
  try {
    await Deno.writeTextFile(`${dir}/jwt.pem`, await newPrivateKeyPem(), { mode: 0o600 });
    await Deno.writeTextFile(
      `${dir}/mnemonic.txt`,
      "legal winner thank year wave sausage worth useful legal winner thank yellow\n",
      { mode: 0o600 },
    );
    const server = await startTestServer({
      CHAIN_MODE: "live",
      PIPELINE: "off",
      // Live mode needs a configured EVM chain to start; with PIPELINE=off no node is asked anything.
      ...(await evmChainEnv(dir, "http://127.0.0.1:1")),
      JWT_PRIVATE_KEY_FILE: `${dir}/jwt.pem`,
      MASTER_MNEMONIC_FILE: `${dir}/mnemonic.txt`,
    });
    try {
      const body = { chain: "sol", address: outside.depositAddress("sol", 1), amount: "1000" };
      for (const path of ["/sim/deposits", "/sim/faucet", "/sim/transfers", "/sim/faults"]) {
        const res = await call(server, "POST", path, { body });
        assert.equal(res.status, 404, path);
        assert.deepEqual(res.body, { success: false, message: "Not found" });
      }
      const bal = await call(server, "GET", "/sim/balances?chain=sol&address=x");
      assert.equal(bal.status, 404);
      const res = await runTask("sim", { KV_PATH: server.kvPath, CHAIN_MODE: "live" }, [
        "balance",
        "--chain",
        "sol",
        "--address",
        "x",
      ]);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /only with CHAIN_MODE=sim/);
      // The health check answers, so the 404s above are the missing routes, not a dead server.
      assert.equal((await call(server, "GET", "/healthz")).status, 200);
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
