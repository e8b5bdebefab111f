/**
 * The whole service over HTTP with live Sui against a Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts:
 * no Sui node runs on this machine kind; it answers the documents of chains/sui/graphql.ts through the schema shipped
 * in @mysten/sui, verifies our signatures, gas coins and expiration as a validator would, and answers a
 * `chainIdentifier` that is not mainnet's). `CHAIN_MODE=devnet`, `SUI_RPC_URLS` pointing at it, Base live on anvil.
 *
 * A deposit becomes a completed mint of uSUI and is swept into the hot wallet once; a real uSUI transfer becomes a
 * payout from the hot wallet; a payout the server drops is proven dead once its expiration epoch has passed and is
 * re-signed and paid once; a SIGKILL between recording a payout and broadcasting it ends with the recorded bytes paid
 * once. Checkpoints are sealed by the test (a background miner, or one per poll), epochs advanced by hand.
 */
import assert from "node:assert/strict";
import { NATIVE } from "../chains/catalog.ts";
import { Signer } from "../chains/signer.ts";
import { normalizeSuiAddress } from "../chains/sui/client.ts";
import { openKv } from "../kv/open.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { getOrder, listOrders } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { readSweep, type Sweep } from "../kv/treasury.ts";
import { expectedDepositId, waitUntil } from "./support/chain_facts.ts";
import { ChildServer } from "./support/child_server.ts";
import { holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, type Json, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";
import { startSuiGraphqlServer, type SuiGraphqlServer } from "./support/sui_graphql_server.ts";

const MIST_TO_WEI = 10n ** BigInt(18 - NATIVE.sui.token.decimals);
const SUI = 1_000_000_000n;
/** What the server charges each of our transactions: 1,000 computation units at the reference price plus storage. */
const gasOf = (sui: SuiGraphqlServer) => sui.referenceGasPrice * 1000n + 988_000n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function randomSuiAddress(): string {
  return "0x" + Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

async function allSweeps(kv: Deno.Kv): Promise<Sweep[]> {
  const out: Sweep[] = [];
  for await (const e of kv.list<Sweep>({ prefix: ["treasury_sweep", "sui"] })) out.push(e.value);
  return out;
}

/** Seals a checkpoint every `ms` until the returned stop is awaited. */
function mineEvery(sui: SuiGraphqlServer, ms: number): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      sui.mine(1);
      await sleep(ms);
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

/** The service's environment for live sui on `sui` beside live Base: scanning from the current checkpoint. */
function suiEnv(live: LiveBase, sui: SuiGraphqlServer, over: Record<string, string> = {}) {
  return {
    ...FAST_PIPELINE,
    ...live.env(),
    SUI_RPC_URLS: sui.url,
    SUI_START_BLOCK: String(sui.tip),
    SUI_BLOCK_MS: "25",
    ...over,
  };
}

async function suiSetup() {
  // Epochs end only when a test says so: an expiration passes exactly when the test advances the epoch.
  const sui = await startSuiGraphqlServer({ checkpointsPerEpoch: 1_000_000 });
  const live = await liveBase();
  const stopBase = live.mineEvery(60);
  const server = await startTestServer(suiEnv(live, sui));
  return {
    sui,
    live,
    server,
    hotWallet: server.services.pipeline!.chains.payer("sui").hotWallet!,
    async close() {
      await server.close();
      await stopBase();
      await live.close();
      await sui.close();
    },
  };
}

/**
 * A sui deposit of `amount` MIST to a new deposit address, minted on anvil, then swept into the hot wallet (checkpoints
 * sealed in the background throughout). Returns the order, the deposit address and the completed sweep.
 */
async function mintAndSweep(server: TestServer, sui: SuiGraphqlServer, live: LiveBase, amount: bigint) {
  const kv = server.services.kv;
  const wallet = randomWallet().toLowerCase();
  const token = await tokenFor(server, wallet);
  const address = await depositAddress(server, token, "sui", "base");
  assert.match(address, /^0x[0-9a-f]{64}$/, "a Sui address");
  const stopMining = mineEvery(sui, 30);
  try {
    const digest = sui.deposit(address, amount);
    const seen = new Map<string, string[]>();
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), {
      seen,
      timeoutMs: 15_000,
    });
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.token, "SUI");
    assert.equal(order.amount, amount.toString());
    assert.equal(await live.balanceOf("uSUI", wallet), amount * MIST_TO_WEI, "exact wei: MIST x 10^9");
    const stored = await storedOrder(kv, order.id);
    assert.equal(stored.details.source.txHash, digest);
    assert.equal(stored.details.depositId, await expectedDepositId("sui", digest, stored.details.source.index));
    const logs = await live.mintedLogs("uSUI", stored.details.depositId);
    assert.deepEqual(logs.map((l) => l.transactionHash), [order.transactionHash], "exactly one Minted log");

    // The sweeper moves the minted deposit into the hot wallet.
    const sweep = await waitUntil("the deposit swept", async () => {
      const s = await readSweep(kv, "sui", order.id);
      return s?.status === "completed" ? s : null;
    }, 15_000);
    await waitUntil("the sweep mark cleared", async () => {
      for await (const _ of kv.list({ prefix: ["treasury_sweep_due", "sui"] })) return false;
      return true;
    }, 10_000);
    return { order, stored, address, sweep, statuses: seen.get(order.id)! };
  } finally {
    await stopMining();
  }
}

/** Registers `destination` as the holder's sui burn destination over HTTP; returns the holder's token. */
async function suiBurner(server: TestServer, destination: string) {
  const token = await tokenFor(server, holder.address);
  const configured = await call(server, "POST", "/burn/wallets", {
    token,
    body: { destinationChain: "sui", destinationAddress: destination },
  });
  assert.equal(configured.status, 201, JSON.stringify(configured.body));
  return token;
}

/** Every coin the destination holds is one payout of exactly `mist`. */
function assertPaidOnce(sui: SuiGraphqlServer, destination: string, mist: bigint) {
  assert.deepEqual(sui.coins(destination).map((c) => c.balance), [mist], "the destination paid exactly, once");
}

// ---------------------------------------------------------------- 1, 2. deposit -> mint -> sweep; burn -> payout

Deno.test("live sui on a Sui-GraphQL-shaped server: a deposit mints exact uSUI on anvil and is swept into the hot wallet once; a uSUI burn is paid from it exactly, once", async (t) => {
  const started = performance.now();
  const s = await suiSetup();
  try {
    const kv = s.server.services.kv;
    const amount = 3_210_987_654n; // 3.210987654 SUI
    let hotFunded = 0n;
    await t.step("deposit -> completed mint -> one sweep into the hot wallet", async () => {
      assert.ok(s.sui.calls.includes("chainIdentifier"), "devnet asked the node which network it serves");
      assert.notEqual(s.sui.chainIdentifier, "35834a8a");
      assert.equal(s.sui.balance(s.hotWallet), 0n);
      const r = await mintAndSweep(s.server, s.sui, s.live, amount);
      assert.equal(r.statuses.at(-1), "completed");
      assert.equal(await s.live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");

      // The sweep: recorded from the deposit address to the hot wallet, completed, exactly one.
      assert.equal(r.sweep.from.address, normalizeSuiAddress(r.address));
      assert.equal(r.sweep.to, s.hotWallet);
      assert.equal(r.sweep.amount, amount.toString(), "the whole balance: sui has no reserve");
      assert.equal(r.sweep.leave, "0");
      assert.ok(s.sui.included(r.sweep.txHash), "the sweep is in a checkpoint");
      assert.deepEqual((await allSweeps(kv)).map((x) => x.txHash), [r.sweep.txHash], "one sweep");
      // On the server: the hot wallet grew by the deposit less the sweep's gas; the deposit address is empty.
      assert.equal(s.sui.balance(s.hotWallet), amount - gasOf(s.sui));
      assert.equal(s.sui.coins(s.hotWallet).length, 1, "the deposit's coin moved whole");
      // Recorded apart: what the hot wallet received, and the gas the sweep paid (known only once it ran).
      assert.equal(r.sweep.delivered, (amount - gasOf(s.sui)).toString());
      assert.equal(r.sweep.fee, gasOf(s.sui).toString());
      assert.equal(s.sui.balance(r.address), 0n);
      // More checkpoints and sweeper ticks later: still one sweep, nothing else moved.
      s.sui.mine(3);
      await sleep(200);
      assert.equal((await allSweeps(kv)).length, 1);
      hotFunded = s.sui.balance(s.hotWallet);
      assert.equal(hotFunded, amount - gasOf(s.sui));
    });

    await t.step("burn on anvil -> payout from the swept hot wallet, exact, once", async () => {
      const destination = randomSuiAddress();
      const token = await suiBurner(s.server, destination);
      await s.live.fund("uSUI", holder.address, 10n * 10n ** 18n);
      // 2.000000001 SUI and 77 wei below one MIST: 2000000001 MIST are paid, the 77 wei recorded.
      const mist = 2_000_000_001n;
      const wei = mist * MIST_TO_WEI + 77n;
      const transfer = await s.live.transfer("uSUI", s.server.services.uAssetTransferAddress, wei);
      const stopMining = mineEvery(s.sui, 30);
      let order: Json;
      try {
        [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
          timeoutMs: 15_000,
        });
      } finally {
        await stopMining();
      }
      assert.equal(order.status, "completed", JSON.stringify(order));
      assert.equal(order.type, "burn");
      assert.equal(order.destinationChain, "sui");
      assert.equal(order.amount, wei.toString());
      const stored = await storedOrder(kv, order.id);
      assert.ok(stored.type === "burn");
      const intent = stored.details.intent!;
      assert.equal(order.transactionHash, intent.txHash, "the recorded payout is the one in a checkpoint");
      assert.equal(stored.details.source.txHash, transfer.toLowerCase());
      assert.equal(stored.details.nativeAmount, mist.toString());
      assert.equal(stored.details.remainderWei, "77");
      assert.equal(stored.details.deadIntents, undefined);
      assert.equal(intent.expiry?.kind, "epoch");
      assert.equal(intent.consumes?.kind, "outpoints", "the hot wallet's gas coin version it spends");

      assert.ok(s.sui.included(intent.txHash));
      assertPaidOnce(s.sui, destination, mist);
      assert.equal(s.sui.balance(s.hotWallet), hotFunded - mist - gasOf(s.sui), "the hot wallet paid amount and gas");
      assert.equal(await s.live.balanceOf("uSUI", s.server.services.uAssetTransferAddress), wei);
    });
  } finally {
    await s.close();
    console.log(`sui mint, sweep and burn test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 3. a dropped payout, proven dead, re-sent once

Deno.test("live sui on a Sui-GraphQL-shaped server: a payout the server drops is proven dead past its expiration epoch and re-sent once", async () => {
  const started = performance.now();
  const s = await suiSetup();
  try {
    const kv = s.server.services.kv;
    // The hot wallet funded directly (the server's hook): not one of our deposit addresses, so no order.
    s.sui.deposit(s.hotWallet, 7n * SUI);
    s.sui.mine(1);
    const destination = randomSuiAddress();
    const token = await suiBurner(s.server, destination);
    await s.live.fund("uSUI", holder.address, 10n * 10n ** 18n);
    const mist = 1_500_000_000n;
    await s.live.transfer("uSUI", s.server.services.uAssetTransferAddress, mist * MIST_TO_WEI);
    const [seen] = await waitForOrders(s.server, token, (o) => o.length === 1, { timeoutMs: 10_000 });

    // The first payout is recorded and accepted, then dropped before any checkpoint includes it.
    const first = await waitUntil("the payout recorded and executed", async () => {
      const i = (await storedOrder(kv, seen.id)).details.intent;
      return i && s.sui.isPending(i.txHash) ? i : null;
    }, 15_000);
    s.sui.drop(first.txHash);
    assert.equal(first.expiry?.kind, "epoch");
    assert.equal(first.expiry!.value, s.sui.epoch + 1, "valid through the next epoch");
    // Checkpoints pass within the expiration: unknown, not dead; the same bytes are nudged, nothing is re-signed.
    s.sui.mine(3);
    await sleep(300);
    let o = await storedOrder(kv, seen.id);
    assert.equal(o.details.intent?.txHash, first.txHash);
    assert.equal(o.details.deadIntents, undefined, "not dead while its expiration epoch can still come");
    s.sui.advanceEpoch();
    s.sui.mine(2);
    await sleep(300);
    o = await storedOrder(kv, seen.id);
    assert.equal(o.details.deadIntents, undefined, "the expiration epoch itself: still valid");
    assert.equal(o.details.intent?.txHash, first.txHash);

    // Past the expiration epoch: proven dead, and a new payout signed over the same (unspent) gas coin.
    s.sui.advanceEpoch();
    const second = await waitUntil("the payout re-signed after the proof", async () => {
      s.sui.mine(1);
      const i = (await storedOrder(kv, seen.id)).details.intent;
      return i && i.txHash !== first.txHash ? i : null;
    }, 15_000);
    const stopMining = mineEvery(s.sui, 30);
    let order: Json;
    try {
      [order] = await waitForOrders(s.server, token, (x) => x.length === 1 && terminal(x[0]), { timeoutMs: 15_000 });
    } finally {
      await stopMining();
    }
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.transactionHash, second.txHash);
    const stored = await storedOrder(kv, order.id);
    const dead = stored.details.deadIntents ?? [];
    assert.deepEqual(dead.map((d) => d.txHash), [first.txHash], "one dead intent: the dropped payout");
    assert.deepEqual(dead[0].proof, { kind: "expired", expiry: first.expiry, reached: first.expiry!.value + 1 });
    assert.ok(!s.sui.included(first.txHash), "the dropped payout never executed");
    assert.ok(s.sui.included(second.txHash));
    assertPaidOnce(s.sui, destination, mist);
    assert.equal(s.sui.balance(s.hotWallet), 7n * SUI - mist - gasOf(s.sui));
  } finally {
    await s.close();
    console.log(`sui dropped payout test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 4. SIGKILL after record, before broadcast

/**
 * The child server's hot wallet, derived from the master mnemonic it generated in its data folder (the address it
 * prints at start goes to a piped stdout that Deno does not flush line by line, so the test cannot wait for it).
 */
async function childHotWallet(dir: string): Promise<string> {
  const mnemonic = (await Deno.readTextFile(`${dir}/master-mnemonic.txt`)).trim().split(/\s+/).join(" ");
  return normalizeSuiAddress(Signer.fromMnemonic(mnemonic).address("sui", 0, "hot"));
}

Deno.test("live sui on a Sui-GraphQL-shaped server: SIGKILL after recording the payout, before broadcasting: the recorded bytes are sent, once", async () => {
  const started = performance.now();
  const sui = await startSuiGraphqlServer({ checkpointsPerEpoch: 1_000_000 });
  const live = await liveBase();
  const stopBase = live.mineEvery(60);
  const kvPath = `${live.dir}/kv.sqlite3`;
  const env = {
    ...suiEnv(live, sui),
    KV_PATH: kvPath,
    // Fixed, so the partner's token (aud) stays valid on the restarted server, which listens on a new port.
    BASE_URL: "http://sui-live.test",
  };
  let server: ChildServer | null = null;
  const stopMining = mineEvery(sui, 30);
  try {
    const adminKv = await openKv(kvPath);
    const apiKey = (await createApiKey(adminKv, "sui-crash-partner")).apiKey;
    adminKv.close();

    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: "after-record" });
    const hotWallet = await childHotWallet(live.dir);
    sui.deposit(hotWallet, 4n * SUI);
    const destination = randomSuiAddress();
    const token = await server.token(apiKey, holder.address);
    const configured = await server.call("POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sui", destinationAddress: destination },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    await waitUntil("the hot wallet funded", () => Promise.resolve(sui.balance(hotWallet) === 4n * SUI));
    await live.fund("uSUI", holder.address, 10n * 10n ** 18n);
    const mist = 1_250_000_000n;
    await live.transfer("uSUI", configured.body.data.uAssetTransferAddress, mist * MIST_TO_WEI);
    const died = await server.exited(20_000);
    assert.ok(died, `the server did not crash after recording: ${await server.errTail()}`);
    assert.equal(died.signal, "SIGKILL", `exit ${JSON.stringify(died)}: ${await server.errTail()}`);
    assert.match(await server.errTail(), /FAULT_CRASH_POINT=after-record/);
    server = null;

    // What the dead process left: the payout recorded, never sent.
    let kv = await openKv(kvPath);
    const { orders } = await listOrders(kv, holder.address.toLowerCase(), { limit: 10, offset: 0 });
    assert.equal(orders.length, 1);
    assert.equal(orders[0].status, "burning");
    const recorded = orders[0].details.intent!;
    assert.ok(recorded, "the payout was recorded before the crash");
    kv.close();
    assert.ok(!sui.isPending(recorded.txHash) && !sui.included(recorded.txHash), "recorded, never broadcast");

    // Restarted without the crash point: the recorded bytes go out, are checkpointed, and the order completes.
    server = await ChildServer.start(live.dir, env);
    const order = await waitUntil("the burn to end after the restart", async () => {
      const res = await server!.call("GET", "/orders", { token });
      const list = res.body?.data?.orders ?? [];
      return list.length === 1 && terminal(list[0]) ? list[0] : null;
    }, 20_000).catch(async (err) => {
      throw new Error(`${err.message}; log: ${await server!.errTail()}`);
    });
    await server.stop();
    server = null;
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.transactionHash, recorded.txHash, "the payout recorded before the crash is the one executed");
    assert.ok(sui.included(recorded.txHash));
    assertPaidOnce(sui, destination, mist);
    assert.equal(sui.balance(hotWallet), 4n * SUI - mist - gasOf(sui));
    kv = await openKv(kvPath);
    const after = await storedOrder(kv, order.id);
    assert.equal(after.details.deadIntents, undefined, "never re-signed");
    kv.close();
  } finally {
    await server?.stop();
    await stopMining();
    await stopBase();
    await live.close();
    await sui.close();
    console.log(`sui crash after-record test: ${Math.round(performance.now() - started)} ms`);
  }
});
