/**
 * The whole service over HTTP with live Dogecoin: `CHAIN_MODE=devnet`, `DOGE_RPC_URLS` pointing at a real
 * Bitcoin-Core-family regtest node (Debian's litecoind standing in for Dogecoin Core: same RPC family, P2PKH version
 * 111 on regtest like Dogecoin regtest) and Base live on anvil with the five uAssets. A deposit from the node's wallet
 * becomes a completed mint of uDOGE on anvil and a treasury coin; a real uDOGE transfer to the transfer address becomes
 * a payout signed by us, accepted by the node's mempool and mined, paying exactly the burned amount with its change
 * back to our change address; a burn the treasury cannot fund waits and goes out when a deposit confirms; and a
 * SIGKILL of a child-process server after recording or after broadcasting the payout still ends with exactly one
 * payout, the one recorded before the crash.
 *
 * Confirmations are the catalog's (doge 40): mining 40 regtest blocks takes milliseconds, so nothing is shortened.
 * Without litecoind these tests skip loudly; under CI=true they fail (tests/support/litecoind.ts).
 */
import assert from "node:assert/strict";
import { Transaction } from "bitcoinjs-lib";
import { NATIVE } from "../chains/catalog.ts";
import { outputScript, utxoNetwork } from "../chains/utxo/network.ts";
import { TREASURY_CANNOT_FUND } from "../actors/treasury_steps.ts";
import { openKv } from "../kv/open.ts";
import { getOrder, listOrders } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { coinLocks } from "../kv/chain_state.ts";
import { readCoin, spendableCoins, spentBy } from "../kv/treasury.ts";
import { expectedDepositId, toWei, waitUntil } from "./support/chain_facts.ts";
import { ChildServer } from "./support/child_server.ts";
import { type Litecoind, litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, type Json, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";

const DOGE_REGTEST = utxoNetwork("doge", "regtest");
const FINALITY = NATIVE.doge.finality;
const CONFIRMATIONS = FINALITY.kind === "depth" ? FINALITY.confirmations : 0;
const KOINU_TO_WEI = 10n ** 10n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service's environment for live doge on `node` beside live Base: the catalog's confirmations, fast polling. */
async function dogeEnv(live: LiveBase, node: Litecoind, over: Record<string, string> = {}) {
  const height = await node.call<number>("getblockcount");
  return {
    ...FAST_PIPELINE,
    ...live.env(),
    DOGE_RPC_URLS: node.url,
    // Deposits made from here on are seen; the 101 funding blocks are not rescanned.
    DOGE_START_BLOCK: String(height),
    DOGE_BLOCK_MS: "25",
    ...over,
  };
}

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

/** A transaction's outputs as exact koinu, from its raw bytes (the node's `value` is a float: never read it). */
async function outputsOf(node: Litecoind, txid: string): Promise<{ script: string; amount: bigint }[]> {
  const hex = await node.call<string>("getrawtransaction", [txid, false]);
  return Transaction.fromHex(hex).outs.map((o) => ({
    script: Array.from(o.script, (b) => b.toString(16).padStart(2, "0")).join(""),
    amount: BigInt(o.value),
  }));
}

function scriptHex(address: string): string {
  return Array.from(outputScript(DOGE_REGTEST, address), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Confirmations of `txid` as the node sees it (0 in the mempool, null unknown). */
async function confirmationsOf(node: Litecoind, txid: string): Promise<number | null> {
  try {
    const tx = await node.call<{ confirmations?: number }>("getrawtransaction", [txid, true]);
    return tx.confirmations ?? 0;
  } catch {
    return null;
  }
}

/** Every transaction in the node's chain or mempool spending `outpoint`, from the blocks since `fromHeight`. */
async function spendersOf(node: Litecoind, outpoint: { txHash: string; index: number }, fromHeight: number) {
  const spenders = new Set<string>();
  const consider = async (txid: string) => {
    const hex = await node.call<string>("getrawtransaction", [txid, false]);
    const tx = Transaction.fromHex(hex);
    for (const input of tx.ins) {
      const prev = Array.from(input.hash).reverse().map((b) => b.toString(16).padStart(2, "0")).join("");
      if (prev === outpoint.txHash && input.index === outpoint.index) spenders.add(tx.getId());
    }
  };
  const tip = await node.call<number>("getblockcount");
  for (let h = fromHeight; h <= tip; h++) {
    const block = await node.call<{ tx: string[] }>("getblock", [await node.call<string>("getblockhash", [h]), 1]);
    for (const txid of block.tx) await consider(txid);
  }
  for (const txid of await node.call<string[]>("getrawmempool")) await consider(txid);
  return [...spenders];
}

/** A partner with a doge -> base deposit address over HTTP. */
async function dogePartner(server: TestServer) {
  const wallet = randomWallet().toLowerCase();
  const token = await tokenFor(server, wallet);
  const address = await depositAddress(server, token, "doge", "base");
  assert.match(address, /^[mn]/, "a regtest P2PKH address");
  return { wallet, token, address };
}

/**
 * Sends `amount` koinu from the node's wallet to a new deposit address, confirms it with the catalog's confirmations
 * and waits for the mint to end. Returns the order, its statuses and the latency from the block giving the deposit
 * its required confirmations to the mint being recorded (signed, about to be broadcast).
 */
async function mintThroughService(server: TestServer, node: Litecoind, amount: bigint) {
  const partner = await dogePartner(server);
  const txid = await node.send(partner.address, amount);
  await node.mine(1);
  const seen = new Map<string, string[]>();
  const [pending] = await waitForOrders(server, partner.token, (o) => o.length === 1, { seen, timeoutMs: 10_000 });
  assert.equal(pending.status, "pending", JSON.stringify(pending));
  assert.equal(pending.amount, amount.toString());
  // One block short of the required confirmations: still pending.
  await node.mine(CONFIRMATIONS - 2);
  await sleep(150);
  assert.equal((await storedOrder(server.services.kv, pending.id)).status, "pending", "39 of 40 confirmations");
  await node.mine(1);
  const confirmedAt = performance.now();
  const recorded = await waitUntil("the mint recorded", async () => {
    const o = await storedOrder(server.services.kv, pending.id);
    return o.details.intent ? performance.now() : null;
  }, 10_000);
  const [order] = await waitForOrders(server, partner.token, (o) => o.length === 1 && terminal(o[0]), {
    seen,
    timeoutMs: 15_000,
  });
  const stored = await storedOrder(server.services.kv, order.id);
  const sender = await node.call<{ ismine: boolean }>("getaddressinfo", [order.sourceWallet]).catch(() => null);
  return {
    partner,
    txid,
    senderIsTheWallets: sender?.ismine === true,
    order,
    stored,
    statuses: seen.get(order.id)!,
    latencyMs: Math.round(recorded - confirmedAt),
  };
}

/** A completed mint: one uDOGE Minted log, exactly amount x 10^10 wei, the deposit output a treasury coin. */
async function assertMinted(
  live: LiveBase,
  kv: Deno.Kv,
  r: Awaited<ReturnType<typeof mintThroughService>>,
  amount: bigint,
) {
  assert.equal(r.order.status, "completed", JSON.stringify(r.order));
  assert.equal(r.order.sourceChain, "doge");
  assert.equal(r.order.destinationChain, "base");
  assert.equal(r.order.token, "DOGE");
  // The sender is the address the deposit's first input spent: one of the node's own wallet's here.
  assert.equal(r.senderIsTheWallets, true, `sourceWallet ${r.order.sourceWallet}`);
  assert.equal(await live.balanceOf("uDOGE", r.partner.wallet), amount * KOINU_TO_WEI);
  assert.equal(await live.balanceOf("uDOGE", r.partner.wallet), toWei("doge", amount));
  const { txHash, index } = r.stored.details.source;
  assert.equal(txHash, r.txid);
  assert.equal(r.stored.details.depositId, await expectedDepositId("doge", txHash, index));
  const logs = await live.mintedLogs("uDOGE", r.stored.details.depositId);
  assert.equal(logs.length, 1, "exactly one Minted log");
  assert.equal(logs[0].transactionHash, r.order.transactionHash);
  const coin = await readCoin(kv, "doge", { txHash, index });
  assert.ok(coin, "the deposit output is a treasury coin");
  assert.equal(coin.amount, amount);
  assert.equal(coin.address, r.partner.address);
  assert.equal(coin.coinbase, false);
  return coin;
}

/** Registers `destination` as the holder's doge burn destination; returns the holder's token. */
async function dogeBurner(server: TestServer, destination: string) {
  const token = await tokenFor(server, holder.address);
  const configured = await call(server, "POST", "/burn/wallets", {
    token,
    body: { destinationChain: "doge", destinationAddress: destination },
  });
  assert.equal(configured.status, 201, JSON.stringify(configured.body));
  return token;
}

/** The payout as mined: it pays `destination` exactly `koinu` once and its change (if any) to `change`. */
async function assertPaidOnce(
  node: Litecoind,
  o: {
    txHash: string;
    destination: string;
    koinu: bigint;
    change?: { index: number; address: string; amount: string };
  },
) {
  assert.ok((await confirmationsOf(node, o.txHash))! >= CONFIRMATIONS, "the payout is mined and buried");
  const outs = await outputsOf(node, o.txHash);
  const toDestination = outs.filter((x) => x.script === scriptHex(o.destination));
  assert.deepEqual(toDestination.map((x) => x.amount), [o.koinu], "the destination is paid the burned amount once");
  if (o.change) {
    assert.equal(outs[o.change.index].script, scriptHex(o.change.address));
    assert.equal(outs[o.change.index].amount, BigInt(o.change.amount));
  }
  // The node's wallet owns the destination: every transaction paying it is the one payout.
  const received = await node.call<{ address: string; txids: string[] }[]>("listreceivedbyaddress", [
    0,
    false,
    false,
    o.destination,
  ]);
  assert.deepEqual(received.map((r) => r.txids), [[o.txHash]], "one transaction ever paid the destination");
}

// ---------------------------------------------------------------- 1. mint

Deno.test("live doge on litecoind regtest standing in for Dogecoin Core: a deposit mints exact uDOGE on anvil", async () => {
  if (!litecoindAvailable("doge_live_test.ts")) return;
  const started = performance.now();
  const node = await startLitecoind();
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer(await dogeEnv(live, node));
  try {
    assert.deepEqual(server.services.chainPlan.liveUtxo, ["doge"]);
    const amount = 1_234_567_891n; // 12.34567891 DOGE
    const r = await mintThroughService(server, node, amount);
    await assertMinted(live, server.services.kv, r, amount);
    assert.deepEqual(r.statuses.filter((s) => s === "pending" || s === "completed"), ["pending", "completed"]);
    assert.equal(r.stored.details.intent?.txHash, r.order.transactionHash, "the recorded mint is the one mined");
    const spendable = await spendableCoins(server.services.kv, "doge");
    assert.deepEqual(spendable.map((c) => [c.outpoint.txHash, c.amount]), [[r.txid, amount]]);
    assert.equal(await live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");
    console.log(`doge mint: ${r.latencyMs} ms from the 40th confirmation to the mint recorded`);
  } finally {
    await server.close();
    await stopMining();
    await live.close();
    await node.stop();
    console.log(`doge mint test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 2. burn

/**
 * The holder burns `wei` of uDOGE with a real transfer to the transfer address; waits until the payout is recorded
 * and in the node's mempool, mines the catalog's confirmations on it, and waits for the order to end.
 */
async function burnThroughService(server: TestServer, node: Litecoind, live: LiveBase, token: string, wei: bigint) {
  const transfer = await live.transfer("uDOGE", server.services.uAssetTransferAddress, wei);
  const [seen] = await waitForOrders(server, token, (o) => o.length === 1, { timeoutMs: 10_000 });
  const intent = await waitUntil("the payout recorded and broadcast", async () => {
    const o = await storedOrder(server.services.kv, seen.id);
    const i = o.details.intent;
    return i && (await confirmationsOf(node, i.txHash)) === 0 ? i : null;
  }, 15_000);
  await node.mine(CONFIRMATIONS);
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 15_000 });
  return { transfer, intent, order, stored: await storedOrder(server.services.kv, order.id) };
}

Deno.test("live doge on litecoind regtest standing in for Dogecoin Core: a uDOGE burn on anvil is paid from the treasury coin, once", async () => {
  if (!litecoindAvailable("doge_live_test.ts")) return;
  const started = performance.now();
  const node = await startLitecoind();
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer(await dogeEnv(live, node));
  try {
    const kv = server.services.kv;
    const deposited = 1_234_567_891n;
    const minted = await mintThroughService(server, node, deposited);
    const depositCoin = await assertMinted(live, kv, minted, deposited);

    const destination = await node.call<string>("getnewaddress", ["", "legacy"]);
    const token = await dogeBurner(server, destination);
    await live.fund("uDOGE", holder.address, 10n * 10n ** 18n);
    // 5.00000001 DOGE and 123 wei below one koinu: 500000001 koinu are paid, the 123 wei recorded.
    const koinu = 500_000_001n;
    const wei = koinu * KOINU_TO_WEI + 123n;
    const r = await burnThroughService(server, node, live, token, wei);
    assert.equal(r.order.status, "completed", JSON.stringify(r.order));
    assert.equal(r.order.type, "burn");
    assert.equal(r.order.sourceChain, "base");
    assert.equal(r.order.destinationChain, "doge");
    assert.equal(r.order.amount, wei.toString());
    assert.equal(r.order.destinationWallet, destination);
    assert.equal(r.order.transactionHash, r.intent.txHash, "the recorded payout is the one mined");
    assert.ok(r.stored.type === "burn");
    assert.equal(r.stored.details.source.txHash, r.transfer.toLowerCase());
    assert.equal(r.stored.details.nativeAmount, koinu.toString());
    assert.equal(r.stored.details.remainderWei, "123");
    assert.deepEqual(r.intent.consumes, {
      kind: "outpoints",
      outpoints: [depositCoin.outpoint],
      since: depositCoin.height,
    });
    const change = r.intent.change!;
    assert.ok(change, "the payout has change");
    await assertPaidOnce(node, { txHash: r.intent.txHash, destination, koinu, change });
    // The treasury: the deposit coin is spent by the payout, the change is the one spendable coin.
    assert.equal(await readCoin(kv, "doge", depositCoin.outpoint), null);
    assert.equal(await spentBy(kv, "doge", depositCoin.outpoint), r.intent.txHash);
    const coins = await spendableCoins(kv, "doge");
    assert.deepEqual(coins.map((c) => [c.outpoint, c.address, c.amount]), [[
      { txHash: r.intent.txHash, index: change.index },
      server.services.pipeline!.chains.payer("doge").changeAddress,
      BigInt(change.amount),
    ]]);
    // Exact: what left the deposit coin is the payout, the change and the fee, nothing else.
    const outs = await outputsOf(node, r.intent.txHash);
    const fee = deposited - outs.reduce((a, o) => a + o.amount, 0n);
    assert.ok(fee > 0n && fee < 1_000_000n, `fee ${fee} koinu`);
    assert.deepEqual(await spendersOf(node, depositCoin.outpoint, depositCoin.height), [r.intent.txHash]);
    assert.equal(await live.balanceOf("uDOGE", server.services.uAssetTransferAddress), wei);
  } finally {
    await server.close();
    await stopMining();
    await live.close();
    await node.stop();
    console.log(`doge burn test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 3. a burn the treasury cannot fund

Deno.test("live doge on litecoind regtest standing in for Dogecoin Core: a burn the treasury cannot fund waits, then goes out once a deposit confirms", async () => {
  if (!litecoindAvailable("doge_live_test.ts")) return;
  const started = performance.now();
  const node = await startLitecoind();
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer(await dogeEnv(live, node));
  try {
    const kv = server.services.kv;
    assert.deepEqual(await spendableCoins(kv, "doge"), [], "an empty treasury");
    const destination = await node.call<string>("getnewaddress", ["", "legacy"]);
    const token = await dogeBurner(server, destination);
    await live.fund("uDOGE", holder.address, 10n * 10n ** 18n);
    const koinu = 300_000_000n;
    await live.transfer("uDOGE", server.services.uAssetTransferAddress, koinu * KOINU_TO_WEI);
    const [seen] = await waitForOrders(server, token, (o) => o.length === 1, { timeoutMs: 10_000 });
    const waiting = await waitUntil("the burn held for funds", async () => {
      const o = await storedOrder(kv, seen.id);
      return o.details.heldReason === TREASURY_CANNOT_FUND ? o : null;
    }, 10_000);
    assert.equal(waiting.status, "processing");
    assert.equal(waiting.details.intent, undefined, "nothing signed");
    // It keeps waiting, visibly, and never fails for lack of funds.
    await sleep(500);
    const still = await storedOrder(kv, seen.id);
    assert.equal(still.status, "processing");
    assert.equal(still.details.heldReason, TREASURY_CANNOT_FUND);
    assert.equal((await node.call<string[]>("getrawmempool")).length, 0, "no payout sent");

    // A deposit confirms: its coin funds the payout.
    const deposited = 1_500_000_000n;
    const minted = await mintThroughService(server, node, deposited);
    const depositCoin = await assertMinted(live, kv, minted, deposited);
    const intent = await waitUntil("the payout recorded and broadcast", async () => {
      const i = (await storedOrder(kv, seen.id)).details.intent;
      return i && (await confirmationsOf(node, i.txHash)) === 0 ? i : null;
    }, 15_000);
    assert.deepEqual(intent.consumes?.kind === "outpoints" && intent.consumes.outpoints, [depositCoin.outpoint]);
    await node.mine(CONFIRMATIONS);
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 15_000 });
    assert.equal(order.status, "completed", JSON.stringify(order));
    const stored = await storedOrder(kv, order.id);
    assert.equal(stored.details.heldReason, undefined, "no longer held");
    await assertPaidOnce(node, { txHash: intent.txHash, destination, koinu, change: intent.change });
  } finally {
    await server.close();
    await stopMining();
    await live.close();
    await node.stop();
    console.log(`doge unfunded burn test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 4. SIGKILL mid-payout

async function childTerminal(server: ChildServer, token: string, what: string): Promise<Json> {
  let last: Json = null;
  return await waitUntil(what, async () => {
    last = await server.orders(token);
    return last.length === 1 && terminal(last[0]) ? last[0] : null;
  }, 20_000).catch(async (err) => {
    throw new Error(`${err.message}; last ${JSON.stringify(last)}; log: ${await server.errTail()}`);
  });
}

async function payoutCrashCase(point: "after-record" | "after-broadcast") {
  const started = performance.now();
  const node = await startLitecoind();
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const kvPath = `${live.dir}/kv.sqlite3`;
  const env = {
    ...(await dogeEnv(live, node)),
    KV_PATH: kvPath,
    // Fixed, so the partners' tokens (aud) stay valid on the restarted servers, which listen on new ports.
    BASE_URL: "http://doge-live.test",
  };
  let server: ChildServer | null = null;
  try {
    const adminKv = await openKv(kvPath);
    const apiKey = (await createApiKey(adminKv, "doge-crash-partner")).apiKey;
    adminKv.close();

    // A completed mint first, by a server without a crash point: the treasury holds its deposit coin.
    server = await ChildServer.start(live.dir, env);
    const minterWallet = randomWallet().toLowerCase();
    const mintToken = await server.token(apiKey, minterWallet);
    const created = await server.call("POST", "/mint/wallets", {
      token: mintToken,
      body: { chain: "doge", destinationChain: "base" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const deposited = 2_000_000_007n;
    const depositTx = await node.send(created.body.data.address, deposited);
    await node.mine(1);
    await waitUntil("the deposit seen", async () => (await server!.orders(mintToken)).length === 1);
    await node.mine(CONFIRMATIONS - 1);
    const mint = await childTerminal(server, mintToken, "the mint to end");
    assert.equal(mint.status, "completed", JSON.stringify(mint));
    assert.equal(await live.balanceOf("uDOGE", minterWallet), deposited * KOINU_TO_WEI);
    const destination = await node.call<string>("getnewaddress", ["", "legacy"]);
    const burnToken = await server.token(apiKey, holder.address);
    const configured = await server.call("POST", "/burn/wallets", {
      token: burnToken,
      body: { destinationChain: "doge", destinationAddress: destination },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    const transferAddress = configured.body.data.uAssetTransferAddress as string;
    await server.stop();
    server = null;

    let kv = await openKv(kvPath);
    const [depositCoin] = await spendableCoins(kv, "doge");
    kv.close();
    assert.deepEqual(depositCoin.outpoint, { txHash: depositTx, index: depositCoin.outpoint.index });
    assert.equal(depositCoin.amount, deposited);

    // The burn, on a server that dies at `point`.
    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: point });
    await live.fund("uDOGE", holder.address, 10n * 10n ** 18n);
    const koinu = 700_000_000n;
    await live.transfer("uDOGE", transferAddress, koinu * KOINU_TO_WEI);
    const died = await server.exited(20_000);
    assert.ok(died, `the server did not crash at ${point}: ${await server.errTail()}`);
    assert.equal(died.signal, "SIGKILL", `exit ${JSON.stringify(died)}: ${await server.errTail()}`);
    assert.match(await server.errTail(), new RegExp(`FAULT_CRASH_POINT=${point}`));
    server = null;

    // What the dead process left in KV: the payout recorded with the coin it locks.
    kv = await openKv(kvPath);
    const { orders } = await listOrders(kv, holder.address.toLowerCase(), { limit: 10, offset: 0 });
    assert.equal(orders.length, 1);
    const before = orders[0];
    assert.equal(before.status, "burning");
    const recorded = before.details.intent!;
    assert.ok(recorded, "the payout was recorded before the crash");
    assert.deepEqual(recorded.consumes?.kind === "outpoints" && recorded.consumes.outpoints, [depositCoin.outpoint]);
    assert.deepEqual(await coinLocks(kv, "doge", [depositCoin.outpoint]), [recorded.txHash], "the coin is locked");
    kv.close();
    if (point === "after-record") {
      assert.equal(await confirmationsOf(node, recorded.txHash), null, "recorded, never broadcast");
    } else {
      assert.equal(await confirmationsOf(node, recorded.txHash), 0, "broadcast before the crash: in the mempool");
    }

    // Restarted without the crash point: the recorded bytes go out (again), are mined, and the order completes.
    server = await ChildServer.start(live.dir, env);
    await waitUntil("the recorded payout in the node's mempool", async () => {
      return (await confirmationsOf(node, recorded.txHash)) === 0;
    }, 15_000).catch(async (err) => {
      throw new Error(`${err.message}; log: ${await server!.errTail()}`);
    });
    await node.mine(CONFIRMATIONS);
    const order = await childTerminal(server, burnToken, "the burn to end after the restart");
    await server.stop();
    server = null;
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.transactionHash, recorded.txHash, "the payout recorded before the crash is the one mined");
    // Exactly one transaction ever spent the locked coin, and the destination was paid once.
    assert.deepEqual(await spendersOf(node, depositCoin.outpoint, depositCoin.height), [recorded.txHash]);
    await assertPaidOnce(node, { txHash: recorded.txHash, destination, koinu, change: recorded.change });
    kv = await openKv(kvPath);
    assert.equal(await spentBy(kv, "doge", depositCoin.outpoint), recorded.txHash);
    // Its lock stays, naming the payout that spent it: no later step can reserve the spent coin again.
    assert.deepEqual(await coinLocks(kv, "doge", [depositCoin.outpoint]), [recorded.txHash], "held by its spender");
    const after = await storedOrder(kv, order.id);
    assert.equal(after.details.deadIntents, undefined, "never re-signed");
    kv.close();
  } finally {
    await server?.stop();
    await stopMining();
    await live.close();
    await node.stop();
    console.log(`doge crash ${point} test: ${Math.round(performance.now() - started)} ms`);
  }
}

Deno.test("live doge on litecoind regtest standing in for Dogecoin Core: SIGKILL after recording the payout, before broadcasting: the recorded payout is sent, once", async () => {
  if (!litecoindAvailable("doge_live_test.ts")) return;
  await payoutCrashCase("after-record");
});

Deno.test("live doge on litecoind regtest standing in for Dogecoin Core: SIGKILL after broadcasting the payout: exactly one payout", async () => {
  if (!litecoindAvailable("doge_live_test.ts")) return;
  await payoutCrashCase("after-broadcast");
});
