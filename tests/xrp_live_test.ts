/**
 * The whole service over HTTP with live XRP against a rippled-shaped JSON-RPC server (tests/support/
 * rippled_rpc_server.ts: no rippled runs on this machine kind; it answers in rippled's documented shapes, verifies
 * signatures, Sequence, fee, LastLedgerSequence and reserves). `CHAIN_MODE=devnet` (the server answers `server_info`
 * with a network_id other than mainnet's 0), `XRP_RPC_URLS` pointing at it, Base live on anvil. The test closes a
 * ledger every few ms (a validated ledger lags by one), as the network would every 3-4 s.
 *
 * 1. A deposit becomes a completed mint of exact uXRP and is swept once into the hot wallet (the address keeps its
 *    reserve, the fee comes out of the sweep).
 * 2. A uXRP burn is paid from the hot wallet once, exactly, with the registered memo as its DestinationTag.
 * 3. A payout the node accepts and loses expires (LastLedgerSequence passed, the range searched whole), is proven
 *    dead, and the re-signed payout lands once.
 * 4. A child-process server SIGKILLed after recording the payout, before broadcasting it: the restarted server sends
 *    the recorded bytes, exactly one payout lands.
 */
import assert from "node:assert/strict";
import { decode } from "xrpl";
import { Signer } from "../chains/signer.ts";
import { openKv } from "../kv/open.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { getOrder, listOrders } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { readSweep } from "../kv/treasury.ts";
import { expectedDepositId, toWei, waitUntil } from "./support/chain_facts.ts";
import { ChildServer } from "./support/child_server.ts";
import { holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, terminal, waitForOrders } from "./support/pipeline.ts";
import { type RippledServer, startRippledServer } from "./support/rippled_rpc_server.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";
import { elsewhere, XRP } from "./support/xrp_env.ts";

const DROPS_TO_WEI = 10n ** 12n;
/** Not mainnet's 0: a local devnet node's `[network_id]`. */
const DEVNET_NETWORK_ID = 63456;
/** The memo registered with the burn destination: the payout's DestinationTag. */
const TAG = "3141592653";

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

/** Closes a ledger every `ms` until paused or stopped (the network closes one every 3-4 s). */
function ledgerCloser(rippled: RippledServer, ms = 25) {
  let paused = false;
  const timer = setInterval(() => {
    if (!paused) rippled.hooks.closeLedgers(1);
  }, ms);
  return {
    pause: () => (paused = true),
    resume: () => (paused = false),
    stop: () => clearInterval(timer),
  };
}

/** The service's environment for live xrp on `rippled` beside live Base. */
function xrpEnv(live: LiveBase, rippled: RippledServer, over: Record<string, string> = {}) {
  return {
    ...FAST_PIPELINE,
    ...live.env(),
    XRP_RPC_URLS: rippled.url,
    XRP_START_BLOCK: String(rippled.hooks.validatedIndex),
    XRP_BLOCK_MS: "25",
    ...over,
  };
}

async function xrpSetup() {
  const rippled = startRippledServer({ networkId: DEVNET_NETWORK_ID });
  const closer = ledgerCloser(rippled);
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer(xrpEnv(live, rippled));
  const hotWallet = server.services.pipeline!.chains.payer("xrp").hotWallet!;
  return {
    rippled,
    h: rippled.hooks,
    live,
    server,
    hotWallet,
    async close() {
      await server.close();
      await stopMining();
      await live.close();
      closer.stop();
      await rippled.close();
    },
  };
}

/** Whether `txHash` is in a validated ledger of `rippled` (a probe for `waitUntil`). */
function isValidated(rippled: RippledServer, txHash: string): Promise<boolean> {
  const ledger = rippled.hooks.ledgerOf(txHash);
  return Promise.resolve(ledger !== null && ledger <= rippled.hooks.validatedIndex);
}

/** Every transaction in a closed ledger paying `to` (XRP Payments applied with tesSUCCESS). */
function paymentsTo(rippled: RippledServer, to: string) {
  return rippled.hooks.transactions().filter((t) =>
    t.tx.TransactionType === "Payment" && t.tx.Destination === to && t.meta.TransactionResult === "tesSUCCESS"
  );
}

/** Registers `destination` with `memo` as the holder's xrp burn destination over HTTP; returns the holder's token. */
async function xrpBurner(server: TestServer, destination: string, memo: string) {
  const token = await tokenFor(server, holder.address);
  const configured = await call(server, "POST", "/burn/wallets", {
    token,
    body: { destinationChain: "xrp", destinationAddress: destination, memo },
  });
  assert.equal(configured.status, 201, JSON.stringify(configured.body));
  return token;
}

// ---------------------------------------------------------------- 1. deposit -> mint -> sweep

Deno.test("live xrp on a rippled-shaped JSON-RPC server: a deposit mints exact uXRP on anvil and is swept once into the hot wallet", async () => {
  const started = performance.now();
  const s = await xrpSetup();
  try {
    const kv = s.server.services.kv;
    assert.deepEqual(s.server.services.chainPlan.liveAccount, ["xrp"]);
    assert.equal(s.h.account(s.hotWallet), null, "the hot wallet does not exist yet");
    const wallet = randomWallet().toLowerCase();
    const token = await tokenFor(s.server, wallet);
    const address = await depositAddress(s.server, token, "xrp", "base");
    assert.match(address, /^r/, "a classic address");

    const drops = 30_123_457n; // 30.123457 XRP
    const depositTx = s.h.fund(address, drops);
    const seen = new Map<string, string[]>();
    const [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
      seen,
      timeoutMs: 15_000,
    });
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.token, "XRP");
    assert.equal(order.amount, drops.toString());
    assert.equal(await s.live.balanceOf("uXRP", wallet), drops * DROPS_TO_WEI);
    assert.equal(await s.live.balanceOf("uXRP", wallet), toWei("xrp", drops));
    const stored = await storedOrder(kv, order.id);
    assert.equal(stored.details.source.txHash.toUpperCase(), depositTx);
    assert.equal(stored.details.depositId, await expectedDepositId("xrp", stored.details.source.txHash, 0));
    const logs = await s.live.mintedLogs("uXRP", stored.details.depositId);
    assert.deepEqual(logs.map((l) => l.transactionHash), [order.transactionHash], "exactly one Minted log");
    assert.equal(await s.live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");

    // The sweeper moves everything above the reserve, less the fee, to the hot wallet: one sweep, completed.
    const sweep = await waitUntil("the sweep completed", async () => {
      const sw = await readSweep(kv, "xrp", order.id);
      return sw?.status === "completed" ? sw : null;
    }, 15_000);
    assert.equal(sweep.from.address, address);
    assert.equal(sweep.to, s.hotWallet);
    // The record says what leaves the address (all above its reserve); the fee comes out of it on the ledger.
    assert.equal(BigInt(sweep.amount), drops - s.h.reserveBase);
    assert.equal(BigInt(sweep.leave), s.h.reserveBase);
    const swept = drops - s.h.reserveBase - s.h.baseFee;
    await waitUntil("the sweep validated", () => isValidated(s.rippled, sweep.txHash));
    assert.equal(s.h.account(s.hotWallet)?.balance, swept, "the hot wallet grew by the swept amount");
    assert.equal(s.h.account(address)?.balance, s.h.reserveBase, "the deposit address keeps its base reserve");
    const fromDeposit = s.h.transactions().filter((t) => t.tx.Account === address);
    assert.deepEqual(fromDeposit.map((t) => t.hash), [sweep.txHash], "swept exactly once");
    assert.equal(fromDeposit[0].meta.TransactionResult, "tesSUCCESS");
    assert.equal(fromDeposit[0].tx.Amount, swept.toString());
    assert.equal(fromDeposit[0].tx.Fee, s.h.baseFee.toString());
    // Later sweeper ticks leave it alone.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.h.transactions().filter((t) => t.tx.Account === address).length, 1);
  } finally {
    await s.close();
    console.log(`xrp mint and sweep test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 2. burn -> payout

/** The holder burns `wei` uXRP with a real transfer; waits for the order to end. */
async function burnThroughService(s: Awaited<ReturnType<typeof xrpSetup>>, token: string, wei: bigint) {
  const transfer = await s.live.transfer("uXRP", s.server.services.uAssetTransferAddress, wei);
  const [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
    timeoutMs: 20_000,
  });
  assert.equal(order.status, "completed", JSON.stringify(order));
  return { transfer, order, stored: await storedOrder(s.server.services.kv, order.id) };
}

Deno.test("live xrp on a rippled-shaped JSON-RPC server: a uXRP burn on anvil is paid from the hot wallet with its DestinationTag, once", async () => {
  const started = performance.now();
  const s = await xrpSetup();
  try {
    const funded = 200n * XRP;
    const fundTx = s.h.fund(s.hotWallet, funded);
    const token = await xrpBurner(s.server, elsewhere, TAG);
    await s.live.fund("uXRP", holder.address, 100n * 10n ** 18n);
    // 27.654321 XRP and 777 wei below one drop: 27654321 drops are paid, the 777 wei recorded.
    const drops = 27_654_321n;
    const wei = drops * DROPS_TO_WEI + 777n;
    const r = await burnThroughService(s, token, wei);
    assert.equal(r.order.type, "burn");
    assert.equal(r.order.destinationChain, "xrp");
    assert.equal(r.order.destinationWallet, elsewhere);
    assert.equal(r.order.amount, wei.toString());
    assert.ok(r.stored.type === "burn");
    assert.equal(r.stored.details.source.txHash, r.transfer.toLowerCase());
    assert.equal(r.stored.details.nativeAmount, drops.toString());
    assert.equal(r.stored.details.remainderWei, "777");
    const intent = r.stored.details.intent!;
    assert.equal(r.order.transactionHash, intent.txHash, "the recorded payout is the one validated");
    assert.equal(intent.expiry?.kind, "ledger");
    // A new account's first Sequence is the index of the ledger that created it (rippled's rule).
    assert.deepEqual(intent.consumes, { kind: "nonce", account: s.hotWallet, nonce: s.h.ledgerOf(fundTx) });
    assert.equal(nonceOf(intent.raw), s.h.ledgerOf(fundTx));

    // On the ledger: one payment to the destination, from the hot wallet, exactly the burned drops, tagged.
    const paid = paymentsTo(s.rippled, elsewhere);
    assert.deepEqual(paid.map((t) => t.hash), [intent.txHash], "the destination paid once");
    assert.equal(paid[0].tx.Account, s.hotWallet);
    assert.equal(paid[0].tx.Amount, drops.toString());
    assert.equal(paid[0].tx.DestinationTag, Number(TAG), "the registered memo is the DestinationTag");
    assert.equal(paid[0].meta.delivered_amount, drops.toString());
    await waitUntil("the payout validated", () => isValidated(s.rippled, intent.txHash));
    assert.equal(s.h.account(elsewhere)?.balance, drops, "the destination balance is exact");
    assert.equal(s.h.account(s.hotWallet)?.balance, funded - drops - BigInt(String(paid[0].tx.Fee)));
    assert.equal(await s.live.balanceOf("uXRP", s.server.services.uAssetTransferAddress), wei);
  } finally {
    await s.close();
    console.log(`xrp burn test: ${Math.round(performance.now() - started)} ms`);
  }
});

function nonceOf(raw: string): number {
  return Number((decode(raw) as { Sequence: number }).Sequence);
}

// ---------------------------------------------------------------- 3. a lost payout, proven dead, re-sent once

Deno.test("live xrp on a rippled-shaped JSON-RPC server: a payout the node loses expires, is proven dead and re-sent once", async () => {
  const started = performance.now();
  const s = await xrpSetup();
  try {
    const funded = 200n * XRP;
    s.h.fund(s.hotWallet, funded);
    const token = await xrpBurner(s.server, elsewhere, TAG);
    await s.live.fund("uXRP", holder.address, 100n * 10n ** 18n);
    // The next submission (the payout: nothing else is sent in this test) is answered tesSUCCESS and lost.
    s.h.loseNextSubmissions(1);
    const drops = 25_000_001n;
    const r = await burnThroughService(s, token, drops * DROPS_TO_WEI);
    assert.ok(r.stored.type === "burn");
    const dead = r.stored.details.deadIntents ?? [];
    assert.equal(dead.length, 1, JSON.stringify(r.stored.details));
    const lost = dead[0];
    const lastLedger = (decode(lost.raw) as { LastLedgerSequence: number }).LastLedgerSequence;
    assert.deepEqual(lost.proof, {
      kind: "expired",
      expiry: { kind: "ledger", value: lastLedger },
      reached: lost.proof.kind === "expired" ? lost.proof.reached : -1,
    });
    assert.ok(lost.proof.kind === "expired" && lost.proof.reached > lastLedger, "proven after the expiry passed");
    assert.equal(s.h.ledgerOf(lost.txHash), null, "the lost payout never reached a ledger");
    assert.ok(s.h.submissions.some((x) => x.hash === lost.txHash), "the lost payout was submitted");

    const intent = r.stored.details.intent!;
    assert.notEqual(intent.txHash, lost.txHash, "re-signed");
    assert.equal(r.order.transactionHash, intent.txHash);
    // The lost payout never used its Sequence: the new one takes the same.
    assert.equal(nonceOf(intent.raw), nonceOf(lost.raw));
    const paid = paymentsTo(s.rippled, elsewhere);
    assert.deepEqual(paid.map((t) => t.hash), [intent.txHash], "the destination paid once");
    assert.equal(paid[0].tx.Amount, drops.toString());
    assert.equal(paid[0].tx.DestinationTag, Number(TAG));
    await waitUntil("the payout validated", () => isValidated(s.rippled, intent.txHash));
    assert.equal(s.h.account(elsewhere)?.balance, drops);
    assert.equal(s.h.account(s.hotWallet)?.balance, funded - drops - BigInt(String(paid[0].tx.Fee)));
  } finally {
    await s.close();
    console.log(`xrp lost payout test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 4. SIGKILL between record and broadcast

/**
 * The hot wallet of a child server, from the master mnemonic it generated beside its KV file (devnet). Its stdout,
 * where app.ts announces the address, is not reliably in the log file while the child runs.
 */
async function childHotWallet(dir: string): Promise<string> {
  const text = await Deno.readTextFile(`${dir}/master-mnemonic.txt`);
  return Signer.fromMnemonic(text.trim().split(/\s+/).join(" ")).address("xrp", 0, "hot");
}

Deno.test("live xrp on a rippled-shaped JSON-RPC server: SIGKILL after recording the payout, before broadcasting: the restarted server sends the recorded payout, once", async () => {
  const started = performance.now();
  const rippled = startRippledServer({ networkId: DEVNET_NETWORK_ID });
  const h = rippled.hooks;
  const closer = ledgerCloser(rippled);
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const kvPath = `${live.dir}/kv.sqlite3`;
  const env = {
    ...xrpEnv(live, rippled),
    KV_PATH: kvPath,
    // Fixed, so the partner's token (aud) stays valid on the restarted server, which listens on a new port.
    BASE_URL: "http://xrp-live.test",
  };
  let server: ChildServer | null = null;
  try {
    const adminKv = await openKv(kvPath);
    const apiKey = (await createApiKey(adminKv, "xrp-crash-partner")).apiKey;
    adminKv.close();

    // The server that dies after recording the payout. The hot wallet is funded through the server's hook.
    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: "after-record" });
    const hotWallet = await childHotWallet(live.dir);
    const funded = 300n * XRP;
    const fundTx = h.fund(hotWallet, funded);
    const token = await server.token(apiKey, holder.address);
    const configured = await server.call("POST", "/burn/wallets", {
      token,
      body: { destinationChain: "xrp", destinationAddress: elsewhere, memo: TAG },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    await waitUntil("the hot wallet funded", () => isValidated(rippled, fundTx));
    // The ledgers stand still while the server is down: the recorded payout must not expire before the restart
    // (20 ledgers are 60-80 s on the network, well beyond a restart; here they would be half a second).
    closer.pause();
    await live.fund("uXRP", holder.address, 100n * 10n ** 18n);
    const drops = 26_000_003n;
    await live.transfer("uXRP", configured.body.data.uAssetTransferAddress, drops * DROPS_TO_WEI);
    const died = await server.exited(20_000);
    assert.ok(died, `the server did not crash after recording: ${await server.errTail()}`);
    assert.equal(died.signal, "SIGKILL", `exit ${JSON.stringify(died)}: ${await server.errTail()}`);
    assert.match(await server.errTail(), /FAULT_CRASH_POINT=after-record/);
    server = null;

    // What the dead process left: the payout recorded, never submitted.
    let kv = await openKv(kvPath);
    const { orders } = await listOrders(kv, holder.address.toLowerCase(), { limit: 10, offset: 0 });
    assert.equal(orders.length, 1);
    assert.equal(orders[0].status, "burning");
    const recorded = orders[0].details.intent!;
    assert.ok(recorded, "the payout was recorded before the crash");
    kv.close();
    assert.deepEqual(h.submissions.filter((x) => x.hash === recorded.txHash), [], "recorded, never broadcast");

    // Restarted without the crash point: the recorded bytes go out, validate, and the order completes.
    server = await ChildServer.start(live.dir, env);
    closer.resume();
    const order = await waitUntil("the burn to end after the restart", async () => {
      const o = await server!.orders(token);
      return o.length === 1 && terminal(o[0]) ? o[0] : null;
    }, 20_000).catch(async (err) => {
      throw new Error(`${err.message}; log: ${await server!.errTail()}`);
    });
    await server.stop();
    server = null;
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.transactionHash, recorded.txHash, "the payout recorded before the crash is the one validated");
    const submitted = h.submissions.filter((x) => x.hash === recorded.txHash);
    assert.ok(submitted.length >= 1 && submitted[0].engineResult === "tesSUCCESS", JSON.stringify(submitted));
    const paid = paymentsTo(rippled, elsewhere);
    assert.deepEqual(paid.map((t) => t.hash), [recorded.txHash], "exactly one payout landed");
    assert.equal(paid[0].tx.Amount, drops.toString());
    assert.equal(paid[0].tx.DestinationTag, Number(TAG));
    assert.equal(h.account(elsewhere)?.balance, drops);
    assert.equal(h.account(hotWallet)?.balance, funded - drops - BigInt(String(paid[0].tx.Fee)));
    kv = await openKv(kvPath);
    const after = await storedOrder(kv, order.id);
    assert.equal(after.details.deadIntents, undefined, "never re-signed");
    kv.close();
  } finally {
    await server?.stop();
    await stopMining();
    await live.close();
    closer.stop();
    await rippled.close();
    console.log(`xrp crash after-record test: ${Math.round(performance.now() - started)} ms`);
  }
});
