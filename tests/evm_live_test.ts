/**
 * Live EVM against a real EVM node: each test starts its own anvil with the dev chain id (31337) on loopback, deploys
 * the five uAssets from contracts/, and runs the service in `CHAIN_MODE=devnet` (the test-only mode that proves the
 * live side is a local dev chain) with Base live (`BASE_RPC_URLS`, `BASE_UASSETS`, ...) beside the simulated native
 * chains. A sim deposit becomes a real mint, a real ERC-20 transfer becomes a burn paid on a sim chain, SIGKILLs of a
 * child-process server around the broadcast still leave exactly one mint, a reorg before confirmation never pays (and
 * a reorged mint is re-sent as the same transaction), a dead first RPC URL fails over, and in live mode a node of
 * another chain id than the catalog's is refused at start. `deno task admin evm deploy` deploys usable contracts.
 */
import assert from "node:assert/strict";
import { createPublicClient, type Hex, http } from "viem";
import { buildServices } from "../app.ts";
import { EVM, EVM_CHAINS, NATIVE_CHAINS, type UAsset } from "../chains/catalog.ts";
import { ChainDisabledError } from "../chains/adapter.ts";
import { loadConfig } from "../config/env.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { DEVNET_CHAIN_ID } from "../config/chain_mode.ts";
import { loadSecrets, newPrivateKeyPem } from "../config/secrets.ts";
import { DEFAULT_ADMIN_ROLE, MINTER_ROLE, UASSET_ABI } from "../contracts/uasset.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { openKv } from "../kv/open.ts";
import { addOrderCreate, getOrder, listOrders } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { addReschedule, cursorKey, dueAtKey, listHeld } from "../kv/pipeline.ts";
import { listAlerts } from "../kv/alerts.ts";
import { DISABLED_CHAIN_RECHECK_MS } from "../actors/order_actor.ts";
import { ANVIL_MNEMONIC, ANVIL_PRIVATE_KEYS, anvilRpc, closedPortUrl, startAnvil } from "./support/anvil.ts";
import { expectedDepositId, ledgerTxs, toWei, waitUntil } from "./support/chain_facts.ts";
import { makeOrder } from "./support/orders.ts";
import { evmChainEnv } from "./support/live_env.ts";
import { balance, FAST_PIPELINE, type Json, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";
import { ChildServer } from "./support/child_server.ts";
import { deployer, holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const BASE_CHAIN_ID = EVM.base.chainId;
/** Where redeemed SOL is paid (an address of nobody we know). */
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

/** A partner with a sol -> base deposit address; returns the wallet, its token and the address. */
async function solToBasePartner(server: TestServer) {
  const wallet = randomWallet().toLowerCase();
  const token = await tokenFor(server, wallet);
  const created = await call(server, "POST", "/mint/wallets", {
    token,
    body: { chain: "sol", destinationChain: "base" },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { wallet, token, address: created.body.data.address as string };
}

/** Deposits `amount` lamports through the sim and waits for the single resulting mint order to end. */
async function mintThroughService(server: TestServer, live: LiveBase, amount: bigint) {
  const partner = await solToBasePartner(server);
  const deposit = await sim(server, "deposits", {
    chain: "sol",
    address: partner.address,
    amount: amount.toString(),
  });
  const seen = new Map<string, string[]>();
  const [order] = await waitForOrders(server, partner.token, (o) => o.length === 1 && terminal(o[0]), {
    seen,
    timeoutMs: 20_000,
  });
  const stored = await storedOrder(server.services.kv, order.id);
  return { partner, deposit, order, stored, statuses: seen.get(order.id)!, live };
}

/** What a completed mint must look like on chain: one successful tx, one Minted log, the exact balance. */
async function assertMintedOnce(live: LiveBase, o: { order: Json; stored: Order; wallet: string; amount: bigint }) {
  assert.equal(o.order.status, "completed", JSON.stringify(o.order));
  assert.match(o.order.transactionHash, /^0x[0-9a-f]{64}$/);
  const receipt = await live.client.getTransactionReceipt({ hash: o.order.transactionHash });
  assert.equal(receipt.status, "success");
  assert.equal(receipt.to?.toLowerCase(), live.uAssets.uSOL.toLowerCase());
  assert.equal(await live.balanceOf("uSOL", o.wallet), toWei("sol", o.amount));
  const depositId = o.stored.details.depositId;
  const source = o.stored.details.source;
  assert.equal(depositId, await expectedDepositId("sol", source.txHash, source.index));
  assert.equal(await live.minted("uSOL", depositId), true);
  const logs = await live.mintedLogs("uSOL", depositId);
  assert.equal(logs.length, 1, `exactly one Minted log for ${depositId}: ${logs.map((l) => l.transactionHash)}`);
  assert.equal(logs[0].transactionHash, o.order.transactionHash);
  // The minter key sent exactly one transaction: nothing was signed and sent twice.
  assert.equal(await live.client.getTransactionCount({ address: minter.address }), 1);
  return depositId;
}

// ---- 1, 2, 5: mint, burn, failover, in-process server ----

Deno.test("live Base: a sim SOL deposit mints real uSOL on anvil", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env() });
  try {
    assert.deepEqual(server.services.simulatedChains.includes("base"), false, "base is live here");
    const amount = 1_234_567_891n;
    const r = await mintThroughService(server, live, amount);
    await assertMintedOnce(live, { order: r.order, stored: r.stored, wallet: r.partner.wallet, amount });
    assert.equal(r.order.destinationChain, "base");
    assert.equal(r.order.destinationWallet, r.partner.wallet);
    assert.ok(r.statuses.includes("minting") || r.statuses.includes("pending"), r.statuses.join(","));
    const intent = r.stored.details.intent!;
    assert.equal(intent.txHash, r.order.transactionHash, "the recorded transaction is the one mined");
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});

Deno.test("live Base: a real uSOL transfer to the transfer address is burned and paid on sim Solana", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env() });
  try {
    await live.fund("uSOL", holder.address, 5n * 10n ** 18n);
    const token = await tokenFor(server, holder.address);
    const configured = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: SOL_DESTINATION },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    const transferAddress = server.services.uAssetTransferAddress;
    assert.equal(configured.body.data.uAssetTransferAddress.toLowerCase(), transferAddress.toLowerCase());
    // 1.5 uSOL and 123 wei: 1.5 SOL is paid, the 123 wei below one lamport are recorded.
    const amount = 1_500_000_000_000_000_123n;
    const hash = await live.transfer("uSOL", transferAddress, amount);
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 20_000 });
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.type, "burn");
    assert.equal(order.sourceChain, "base");
    assert.equal(order.destinationChain, "sol");
    assert.equal(order.token, "uSOL");
    assert.equal(order.amount, amount.toString());
    assert.equal(order.destinationWallet, SOL_DESTINATION);
    const stored = await storedOrder(server.services.kv, order.id);
    assert.equal(stored.details.source.txHash, hash.toLowerCase());
    assert.ok(stored.type === "burn");
    assert.equal(stored.details.remainderWei, "123");
    assert.equal(await balance(server, "sol", SOL_DESTINATION), amount / 10n ** 9n);
    assert.equal(await balance(server, "sol", SOL_DESTINATION), 1_500_000_000n);
    assert.equal(await live.balanceOf("uSOL", transferAddress), amount);
    assert.equal(await live.balanceOf("uSOL", holder.address), 5n * 10n ** 18n - amount);
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});

Deno.test("live Base: a dead first RPC URL fails over to the next and the mint completes", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const dead = closedPortUrl();
  // The dead URL alone is refused at start: it really answers nothing.
  const onlyDead = loadConfig({
    KV_PATH: `${live.dir}/dead.sqlite3`,
    PIPELINE: "on",
    ...live.env({ BASE_RPC_URLS: dead }),
  });
  await assert.rejects(
    async () => buildServices(onlyDead, await loadSecrets(onlyDead, () => {})),
    /base|eth_chainId|fetch|connect/i,
  );
  // Devnet proves every node's chain id at start, so the first node is alive then and dies right after: from then on
  // its URL refuses connections, as the dead URL above does.
  const first = await startAnvil({ chainId: DEVNET_CHAIN_ID });
  const server = await startTestServer({
    ...FAST_PIPELINE,
    ...live.env({ BASE_RPC_URLS: `${first.url},${live.anvil.url}` }),
  });
  first.kill();
  await first.stop();
  try {
    const amount = 20_000_001n;
    const r = await mintThroughService(server, live, amount);
    await assertMintedOnce(live, { order: r.order, stored: r.stored, wallet: r.partner.wallet, amount });
  } finally {
    await server.close();
    await first.stop();
    await stopMining();
    await live.close();
  }
});

// ---- 4: reorgs before confirmation ----

Deno.test("live Base: a burn transfer reorganised away before its confirmations is never paid", async () => {
  const live = await liveBase();
  const server = await startTestServer({
    ...FAST_PIPELINE,
    ...live.env({ BASE_CONFIRMATIONS: "5", BASE_CONFIRMATION_TIMEOUT_MS: "2500" }),
  });
  try {
    await live.fund("uSOL", holder.address, 3n * 10n ** 18n);
    const token = await tokenFor(server, holder.address);
    const configured = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: SOL_DESTINATION },
    });
    assert.equal(configured.status, 201);
    const snapshot = await anvilRpc<string>(live.anvil.url, "evm_snapshot");
    const amount = 2n * 10n ** 18n;
    const hash = await live.transfer("uSOL", server.services.uAssetTransferAddress, amount);
    const [pending] = await waitForOrders(server, token, (o) => o.length === 1);
    assert.equal(pending.status, "pending");
    await live.mine(2); // 3 of 5 confirmations: still pending
    await sleep(200);
    assert.equal((await storedOrder(server.services.kv, pending.id)).status, "pending");

    assert.equal(await anvilRpc(live.anvil.url, "evm_revert", [snapshot]), true);
    await live.mine(8); // more than enough confirmations, had the transfer stayed
    assert.equal(await live.client.getTransactionReceipt({ hash }).catch(() => null), null, "the transfer is gone");
    assert.equal(await live.balanceOf("uSOL", server.services.uAssetTransferAddress), 0n);

    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 10_000 });
    assert.equal(order.status, "failed", JSON.stringify(order));
    assert.equal(order.errorMessage, "Blockchain confirmation timeout");
    assert.equal(order.transactionHash, null);
    const stored = await storedOrder(server.services.kv, order.id);
    assert.equal(stored.details.intent, undefined, "no payout was ever prepared");
    assert.equal(await balance(server, "sol", SOL_DESTINATION), 0n, "nothing was paid");
  } finally {
    await server.close();
    await live.close();
  }
});

Deno.test("live Base: a mint reorganised away before its confirmations is re-sent as the same transaction, once", async () => {
  const live = await liveBase();
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env({ BASE_CONFIRMATIONS: "5" }) });
  let stopMining: (() => Promise<void>) | null = null;
  try {
    const partner = await solToBasePartner(server);
    const snapshot = await anvilRpc<string>(live.anvil.url, "evm_snapshot");
    const amount = 300_000_007n;
    await sim(server, "deposits", { chain: "sol", address: partner.address, amount: amount.toString() });
    const [first] = await waitForOrders(server, partner.token, (o) => o.length === 1);
    const minting = await waitUntil("the mint recorded and mined (1 of 5 confirmations)", async () => {
      const o = await storedOrder(server.services.kv, first.id);
      const intent = o.details.intent;
      if (o.status !== "minting" || !intent) return null;
      const r = await live.client.getTransactionReceipt({ hash: intent.txHash as Hex }).catch(() => null);
      return r ? { order: o, intent, receipt: r } : null;
    });
    const depositId = minting.order.details.depositId;
    assert.equal(await live.minted("uSOL", depositId), true);
    await sleep(300); // several looks by the actor: 1 of 5 confirmations is not enough to complete
    assert.equal((await storedOrder(server.services.kv, first.id)).status, "minting");

    // The reorg: the block with the mint is gone. Automine off, so a re-broadcast waits in the mempool for us.
    await anvilRpc(live.anvil.url, "evm_setAutomine", [false]);
    assert.equal(await anvilRpc(live.anvil.url, "evm_revert", [snapshot]), true);
    assert.equal(
      await live.client.getTransactionReceipt({ hash: minting.intent.txHash as Hex }).catch(() => null),
      null,
    );
    assert.equal(await live.minted("uSOL", depositId), false);
    assert.equal(await live.balanceOf("uSOL", partner.wallet), 0n);
    assert.equal((await storedOrder(server.services.kv, first.id)).status, "minting", "not completed on a lost block");

    stopMining = live.mineEvery(60);
    const [order] = await waitForOrders(server, partner.token, (o) => o.length === 1 && terminal(o[0]), {
      timeoutMs: 20_000,
    });
    const stored = await storedOrder(server.services.kv, order.id);
    await assertMintedOnce(live, { order, stored, wallet: partner.wallet, amount });
    assert.equal(order.transactionHash, minting.intent.txHash, "the very same signed transaction landed again");
  } finally {
    await stopMining?.();
    await server.close();
    await live.close();
  }
});

// ---- 3: SIGKILL around the broadcast, server as a child process (tests/support/child_server.ts) ----

async function crashCase(point: "after-sign" | "after-record" | "after-broadcast") {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const kvPath = `${live.dir}/kv.sqlite3`;
  const env = {
    KV_PATH: kvPath,
    // Fixed, so the partner's token (aud) stays valid on the restarted server, which listens on a new port.
    BASE_URL: "http://evm-live.test",
    SIM_BLOCK_MS: "40",
    SWEEP_MS: "40",
    SIM_CONFIRMATION_TIMEOUT_MS: "30000",
    ...live.env(),
    PIPELINE: "on",
  };
  let server: ChildServer | null = null;
  try {
    // The operator's API key, written on the KV file before the server exists (as `deno task admin` would).
    const adminKv = await openKv(kvPath);
    const apiKey = (await createApiKey(adminKv, "crash-partner")).apiKey;
    adminKv.close();

    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: point });
    const wallet = randomWallet().toLowerCase();
    const auth = await server.call("POST", "/auth/token", {
      headers: { "X-API-Key": apiKey },
      body: { walletAddress: wallet },
    });
    assert.equal(auth.status, 200, JSON.stringify(auth.body));
    const token = auth.body.token as string;
    const created = await server.call("POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const amount = 77_000_003n;
    const deposit = await server.call("POST", "/sim/deposits", {
      body: { chain: "sol", address: created.body.data.address, amount: amount.toString() },
    });
    assert.equal(deposit.status, 201, JSON.stringify(deposit.body));

    const died = await server.exited(20_000);
    assert.ok(died, `the server did not crash at ${point}: ${await server.errTail()}`);
    assert.equal(died.signal, "SIGKILL", `exit ${JSON.stringify(died)}: ${await server.errTail()}`);
    assert.match(await server.errTail(), new RegExp(`FAULT_CRASH_POINT=${point}`));
    server = null;

    // What the dead process left in KV, read on a handle of our own.
    const kv = await openKv(kvPath);
    const { orders } = await listOrders(kv, wallet, { limit: 10, offset: 0 });
    kv.close();
    assert.equal(orders.length, 1);
    const before = orders[0];
    const recorded = before.details.intent;
    const sentBefore = await live.client.getTransactionCount({ address: minter.address });
    if (point === "after-sign") {
      assert.equal(before.status, "processing", "signed but never recorded");
      assert.equal(recorded, undefined);
      assert.equal(sentBefore, 0, "nothing was broadcast");
    } else {
      assert.equal(before.status, "minting");
      assert.ok(recorded, "the intent was recorded before the crash");
      const onChain = await live.client.getTransactionReceipt({ hash: recorded.txHash as Hex }).catch(() => null);
      if (point === "after-record") {
        assert.equal(onChain, null, "recorded but never broadcast");
        assert.equal(sentBefore, 0);
      } else {
        assert.equal(onChain?.status, "success", "broadcast (and automined) before the crash");
      }
    }

    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: "" });
    let last: Json = null;
    const order = await waitUntil("the order to end after the restart", async () => {
      const res = await server!.call("GET", "/orders", { token });
      last = res.body;
      const o = res.body?.data?.orders?.[0];
      return o && terminal(o) ? o : null;
    }, 20_000).catch(async (err) => {
      throw new Error(`${err.message}; last ${JSON.stringify(last)}; log: ${await server!.errTail()}`);
    });
    await server.stop();
    server = null;

    const kv2 = await openKv(kvPath);
    const stored = await storedOrder(kv2, order.id);
    kv2.close();
    await assertMintedOnce(live, { order, stored, wallet, amount });
    if (recorded) {
      assert.equal(
        order.transactionHash,
        recorded.txHash,
        "the transaction recorded before the crash is the one mined",
      );
    }
  } finally {
    await server?.stop();
    await stopMining();
    await live.close();
  }
}

Deno.test("live Base, SIGKILL after signing, before recording: the restarted server mints exactly once", async () => {
  await crashCase("after-sign");
});

Deno.test("live Base, SIGKILL after recording, before broadcasting: the recorded transaction is sent, once", async () => {
  await crashCase("after-record");
});

Deno.test("live Base, SIGKILL after broadcasting, before completion: no second mint", async () => {
  await crashCase("after-broadcast");
});

// ---- 5b: live mode, Base configured, every native chain disabled (no live adapter yet) ----

/** A server in CHAIN_MODE=live with Base on anvil (Base's own chain id) and its operator secret files. */
async function liveModeServer(live: LiveBase) {
  const jwt = `${live.dir}/jwt.pem`;
  const mnemonic = `${live.dir}/mnemonic.txt`;
  await Deno.writeTextFile(jwt, await newPrivateKeyPem(), { mode: 0o600 });
  await Deno.writeTextFile(mnemonic, `${ANVIL_MNEMONIC}\n`, { mode: 0o600 });
  return await startTestServer({
    ...FAST_PIPELINE,
    ...live.env(),
    JWT_PRIVATE_KEY_FILE: jwt,
    MASTER_MNEMONIC_FILE: mnemonic,
  });
}

Deno.test("live mode, Base only: no /sim, sol is unsupported, and a real uSOL transfer for sol is held, never paid", async () => {
  const live = await liveBase(BASE_CHAIN_ID);
  const stopMining = live.mineEvery(60);
  const server = await liveModeServer(live);
  try {
    const kv = server.services.kv;
    const wallet = holder.address.toLowerCase();
    const token = await tokenFor(server, holder.address);
    // Issued before this restart, when sol still ran: they stay visible and their transfers stay ours.
    assert.ok((await createBurnConfig(kv, wallet, "sol", SOL_DESTINATION, null)).ok);
    const issued = await createMintWallet(
      kv,
      wallet,
      "sol",
      "base",
      (c, i) => server.services.deriver!.depositAddress(c, i),
    );
    assert.ok(issued.ok);

    for (const path of ["/sim/deposits", "/sim/faucet", "/sim/transfers", "/sim/faults"]) {
      const res = await call(server, "POST", path, {
        body: { chain: "sol", address: issued.wallet.address, amount: "1" },
      });
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { success: false, message: "Not found" });
    }
    assert.equal((await call(server, "GET", "/sim/balances?chain=sol&address=x")).status, 404);

    const mintConfig = (await call(server, "GET", "/config/mint")).body.data;
    assert.deepEqual(mintConfig.sourceChains, [], "no native chain runs");
    assert.deepEqual(mintConfig.destinationChains.map((c: Json) => c.symbol), ["base"]);
    assert.deepEqual(mintConfig.supportedTokens, []);
    const burnConfig = (await call(server, "GET", "/config/burn")).body.data;
    assert.deepEqual(burnConfig.sourceChains.map((c: Json) => c.symbol), ["base"]);
    assert.deepEqual(burnConfig.destinationChains, []);
    for (const chain of NATIVE_CHAINS) {
      const mint = await call(server, "POST", "/mint/wallets", { token, body: { chain, destinationChain: "base" } });
      assert.equal(mint.status, 400, chain);
      assert.deepEqual(mint.body, { success: false, message: "Unsupported source chain" });
    }
    const body = { destinationChain: "sol", destinationAddress: SOL_DESTINATION };
    for (const method of ["POST", "PUT"]) {
      const res = await call(server, method, "/burn/wallets", { token, body });
      assert.equal(res.status, 400, method);
      assert.deepEqual(res.body, { success: false, message: "Unsupported destination chain" });
    }
    const mintWallets = (await call(server, "GET", "/mint/wallets", { token })).body.data;
    assert.deepEqual(mintWallets.map((w: Json) => w.address), [issued.wallet.address]);
    const burnWallets = (await call(server, "GET", "/burn/wallets", { token })).body.data;
    assert.deepEqual(burnWallets.map((w: Json) => [w.destinationChain, w.destinationAddress]), [[
      "sol",
      SOL_DESTINATION,
    ]]);

    await live.fund("uSOL", holder.address, 2n * 10n ** 18n);
    const transferAddress = server.services.uAssetTransferAddress;
    const amount = 1_500_000_000_000_000_000n;
    const hash = await live.transfer("uSOL", transferAddress, amount);
    const held = await waitUntil("the uSOL transfer held", async () => {
      return (await listHeld(kv)).find((h) => h.txHash === hash.toLowerCase()) ?? null;
    }, 20_000);
    assert.equal(held.chain, "base");
    assert.equal(held.asset, "uSOL");
    assert.equal(held.amount, amount.toString());
    assert.equal(held.from, wallet);
    assert.equal(held.reason, "destination chain sol is disabled");
    assert.equal((await listOrders(kv, wallet, { limit: 10, offset: 0 })).orders.length, 0, "no burn order");
    assert.deepEqual(await ledgerTxs(kv, "sol"), [], "nothing was paid in simulated SOL");
    assert.equal(await live.balanceOf("uSOL", transferAddress), amount, "the uAssets stay with us");
    // The registry serves no simulator in a disabled chain's place: every call on it is refused.
    const chains = server.services.pipeline!.chains;
    await assert.rejects(() => chains.reader("sol").tip(), ChainDisabledError);
    await assert.rejects(
      () => chains.payer("sol").preparePayout({ orderId: "x", to: SOL_DESTINATION, amount: 1n, memo: null }),
      ChainDisabledError,
    );
    await assert.rejects(() => chains.minter("arbitrum").mintedBy(`0x${"00".repeat(32)}`), ChainDisabledError);
    // No watcher runs for a disabled chain: Base has a cursor, no native chain has one.
    for (const chain of NATIVE_CHAINS) assert.equal((await kv.get(cursorKey(chain))).value, null, chain);
    assert.notEqual((await kv.get(cursorKey("base"))).value, null);
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});

Deno.test("live mode, Base only: orders left over for sol are held with a reason and an alert, never failed or minted", async () => {
  const live = await liveBase(BASE_CHAIN_ID);
  const server = await liveModeServer(live);
  try {
    const kv = server.services.kv;
    const wallet = randomWallet().toLowerCase();
    await tokenFor(server, wallet); // an active wallet: nothing but the disabled chain stands in the way
    // As a process that ran sol left them: a confirmed sol deposit about to mint on Base, a Base burn paying sol.
    const mint = makeOrder(wallet, "mint", "processing", 0);
    const burn = makeOrder(wallet, "burn", "pending", 0);
    burn.details.confirmBy = new Date(Date.now() + 3_600_000).toISOString();
    for (const order of [mint, burn]) {
      assert.deepEqual([order.sourceChain, order.destinationChain].sort(), ["base", "sol"]);
      const atomic = kv.atomic();
      addOrderCreate(atomic, order);
      addReschedule(atomic, order.id, { key: dueAtKey(order.id), value: null, versionstamp: null }, Date.now());
      assert.ok((await atomic.commit()).ok);
    }
    const reason = "chain sol is disabled in this process";
    for (const order of [mint, burn]) {
      const stored = await waitUntil(`order ${order.type} held`, async () => {
        const o = await storedOrder(kv, order.id);
        return o.details.heldReason === reason ? o : null;
      }, 20_000);
      assert.equal(stored.status, order.status, "neither failed nor moved");
      assert.equal(stored.errorMessage, null);
      assert.equal(stored.details.intent, undefined, "nothing was prepared");
      const due = (await kv.get<number>(dueAtKey(order.id))).value!;
      assert.ok(due - Date.now() > DISABLED_CHAIN_RECHECK_MS / 2, "looked at again only after a long wait");
    }
    // Each alert is raised just after the commit that holds its order, which the waits above saw.
    const alerts = await waitUntil("both held orders counted on the alert", async () => {
      const all = await listAlerts(kv, "chain_disabled");
      return all.length > 0 && all[0].count >= 2 ? all : null;
    });
    assert.deepEqual(alerts.map((a) => [a.subject, a.chain]), [["sol", "sol"]], "one alert for the chain");
    assert.equal(alerts[0].count, 2, "raised once per order newly held, never per look");
    assert.equal(await live.client.getTransactionCount({ address: minter.address }), 0, "no mint was sent");
    assert.deepEqual(await ledgerTxs(kv, "sol"), [], "no simulated payout either");
  } finally {
    await server.close();
    await live.close();
  }
});

// ---- 6: what live mode runs, and what it refuses at start ----

Deno.test("live Base: CHAIN_MODE=live disables the chains it cannot run live; a node of another chain id is refused", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "evm-live-refuse-" });
  const other = await startAnvil(); // chain id 31337, not Base's
  try {
    const baseEnv = {
      KV_PATH: `${dir}/kv.sqlite3`,
      PIPELINE: "on",
      CHAIN_MODE: "live",
      ...(await evmChainEnv(dir, other.url)),
    };
    // Generated as sim mode would, then handed over: these steps are about chains, not about secret files.
    const secrets = await loadSecrets(loadConfig({ KV_PATH: baseEnv.KV_PATH }), () => {});

    await t.step(
      "CHAIN_MODE=live with only Base configured disables every other chain, never simulates it",
      async () => {
        // PIPELINE=off: the API alone, so no node is asked anything; the plan is decided all the same.
        const services = await buildServices(loadConfig({ ...baseEnv, PIPELINE: "off" }), secrets);
        try {
          const plan = services.chainPlan;
          for (const c of [...NATIVE_CHAINS, ...EVM_CHAINS.filter((c) => c !== "base")]) {
            assert.ok(plan.disabled.includes(c), `disables ${c}: ${plan.disabled}`);
          }
          assert.deepEqual(plan.live, ["base"]);
          assert.ok(!plan.disabled.includes("base"));
          assert.deepEqual(services.simulatedChains, [], "nothing is simulated in live mode");
        } finally {
          services.kv.close();
        }
      },
    );

    await t.step("BASE_RPC_URLS on a node reporting another eth_chainId is refused at start, naming base", async () => {
      const config = loadConfig(baseEnv);
      await assert.rejects(() => buildServices(config, secrets), (err: Error) => {
        assert.match(err.message, /^base: /);
        assert.match(err.message, /31337/);
        assert.match(err.message, new RegExp(`${BASE_CHAIN_ID}`));
        return true;
      });
    });
  } finally {
    await other.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- 7: the deploy command ----

Deno.test("live Base: `deno task admin evm deploy` deploys five uAssets with MINTER_ROLE for the minter", async () => {
  const anvil = await startAnvil({ chainId: BASE_CHAIN_ID });
  const dir = await Deno.makeTempDir({ prefix: "evm-live-deploy-" });
  try {
    const minterFile = `${dir}/minter.key`;
    const deployerFile = `${dir}/deployer.key`;
    await Deno.writeTextFile(minterFile, ANVIL_PRIVATE_KEYS[1], { mode: 0o600 });
    await Deno.writeTextFile(deployerFile, ANVIL_PRIVATE_KEYS[0], { mode: 0o600 });
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        ...["task", "-q", "admin", "evm", "deploy", "--chain", "base", "--rpc-url", anvil.url],
        ...["--admin", deployer.address, "--supply-cap", "1000000", "--minter-allowance", "1000000"],
      ],
      cwd: ROOT,
      env: { KV_PATH: `${dir}/kv.sqlite3`, EVM_MINTER_KEY_FILE: minterFile, EVM_DEPLOYER_KEY_FILE: deployerFile },
      stdin: "null",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${stdout}\n${new TextDecoder().decode(out.stderr)}`);
    const lines = stdout.trim().split("\n");
    const printed = lines.filter((l) => /^u[A-Z]+\t0x[0-9a-fA-F]{40}$/.test(l));
    assert.equal(printed.length, 5, stdout);
    const last = lines.at(-1)!;
    assert.match(last, /^BASE_UASSETS=/);
    // The last line is usable as it is: the configuration loader accepts it.
    const evm = loadEvmConfig({
      BASE_RPC_URLS: anvil.url,
      BASE_UASSETS: last.slice("BASE_UASSETS=".length),
      EVM_MINTER_KEY_FILE: minterFile,
    });
    const uAssets = evm.chains.base!.uAssets;
    const client = createPublicClient({ transport: http(anvil.url) });
    for (const line of printed) {
      const [symbol, address] = line.split("\t");
      assert.equal(uAssets[symbol as UAsset].toLowerCase(), address.toLowerCase());
    }
    for (const [symbol, address] of Object.entries(uAssets)) {
      const code = await client.getCode({ address });
      assert.ok(code && code.length > 2, `${symbol} has bytecode`);
      const read = <T>(functionName: string, args: unknown[] = []) =>
        // deno-lint-ignore no-explicit-any
        client.readContract({ address, abi: UASSET_ABI, functionName, args } as any) as Promise<T>;
      assert.equal(await read<string>("symbol"), symbol);
      assert.equal(await read<number>("decimals"), 18);
      assert.equal(await read<boolean>("hasRole", [MINTER_ROLE, minter.address]), true, `${symbol} minter`);
      assert.equal(await read<boolean>("hasRole", [DEFAULT_ADMIN_ROLE, deployer.address]), true, `${symbol} admin`);
      assert.equal(await read<boolean>("hasRole", [MINTER_ROLE, deployer.address]), false);
    }
  } finally {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
