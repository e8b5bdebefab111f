/**
 * The whole service over HTTP with live Zcash against a Zebra-shaped RPC server (tests/support/zebra_rpc_server.ts:
 * no Zebra runs on this machine kind; it answers in Zebra's documented shapes and checks what Zebra's mempool checks:
 * v5 parsing, branch id, expiry, ZIP-244 signatures, ZIP-317 fee). `CHAIN_MODE=devnet`, `ZEC_RPC_URLS` pointing at
 * it, Base live on anvil. A transparent deposit becomes a completed mint of uZEC and a treasury coin; a real uZEC
 * transfer becomes a v5 payout from that coin, accepted, mined once, paying exactly the burned amount with its change
 * back to our change address. Confirmations are the catalog's (zec 24): the server mines them instantly.
 */
import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { NATIVE } from "../chains/catalog.ts";
import { outputScript, p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { getOrder } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { readCoin, spendableCoins, spentBy } from "../kv/treasury.ts";
import { expectedDepositId, waitUntil } from "./support/chain_facts.ts";
import { holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const ZEC_REGTEST = utxoNetwork("zec", "regtest");
const FINALITY = NATIVE.zec.finality;
const CONFIRMATIONS = FINALITY.kind === "depth" ? FINALITY.confirmations : 0;
const ZAT_TO_WEI = 10n ** 10n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

async function zecSetup() {
  const zebra = ZebraShapedServer.start({ network: ZEC_REGTEST, initialBlocks: 3 });
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({
    ...FAST_PIPELINE,
    ...live.env(),
    ZEC_RPC_URLS: zebra.url,
    ZEC_START_BLOCK: String(zebra.tipHeight),
    ZEC_BLOCK_MS: "25",
  });
  return {
    zebra,
    live,
    server,
    async close() {
      await server.close();
      await stopMining();
      await live.close();
      await zebra.close();
    },
  };
}

/** A zec deposit of `amount` zats to a new deposit address, confirmed with the catalog's 24, minted on anvil. */
async function zecMint(server: TestServer, zebra: ZebraShapedServer, live: LiveBase, amount: bigint) {
  const wallet = randomWallet().toLowerCase();
  const token = await tokenFor(server, wallet);
  const address = await depositAddress(server, token, "zec", "base");
  assert.match(address, /^tm/, "a regtest transparent address");
  const outpoint = zebra.deposit(address, amount);
  zebra.mine(1);
  const seen = new Map<string, string[]>();
  const [pending] = await waitForOrders(server, token, (o) => o.length === 1, { seen, timeoutMs: 10_000 });
  assert.equal(pending.status, "pending", JSON.stringify(pending));
  zebra.mine(CONFIRMATIONS - 2);
  await sleep(150);
  assert.equal((await storedOrder(server.services.kv, pending.id)).status, "pending", "23 of 24 confirmations");
  zebra.mine(1);
  const confirmedAt = performance.now();
  await waitUntil("the mint recorded", async () => (await storedOrder(server.services.kv, pending.id)).details.intent);
  const latencyMs = Math.round(performance.now() - confirmedAt);
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), {
    seen,
    timeoutMs: 15_000,
  });
  assert.equal(order.status, "completed", JSON.stringify(order));
  assert.deepEqual(seen.get(order.id)!.filter((s) => s === "pending" || s === "completed"), ["pending", "completed"]);
  assert.equal(order.token, "ZEC");
  assert.equal(await live.balanceOf("uZEC", wallet), amount * ZAT_TO_WEI);
  const stored = await storedOrder(server.services.kv, order.id);
  assert.deepEqual(stored.details.source.txHash, outpoint.txid);
  assert.equal(stored.details.depositId, await expectedDepositId("zec", outpoint.txid, outpoint.index));
  const logs = await live.mintedLogs("uZEC", stored.details.depositId);
  assert.deepEqual(logs.map((l) => l.transactionHash), [order.transactionHash], "exactly one Minted log");
  const coin = await readCoin(server.services.kv, "zec", { txHash: outpoint.txid, index: outpoint.index });
  assert.ok(coin, "the deposit output is a treasury coin");
  assert.equal(coin.amount, amount);
  assert.equal(coin.address, address);
  return { coin, latencyMs };
}

Deno.test("live zec on a Zebra-shaped RPC server: a transparent deposit mints exact uZEC on anvil", async () => {
  const started = performance.now();
  const s = await zecSetup();
  try {
    assert.deepEqual(s.server.services.chainPlan.liveUtxo, ["zec"]);
    assert.equal(s.server.services.chainPlan.utxoNetworks.zec, "regtest");
    const amount = 123_456_789n; // 1.23456789 ZEC
    const { coin, latencyMs } = await zecMint(s.server, s.zebra, s.live, amount);
    assert.deepEqual((await spendableCoins(s.server.services.kv, "zec")).map((c) => c.outpoint), [coin.outpoint]);
    assert.equal(await s.live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");
    console.log(`zec mint: ${latencyMs} ms from the 24th confirmation to the mint recorded`);
  } finally {
    await s.close();
    console.log(`zec mint test: ${Math.round(performance.now() - started)} ms`);
  }
});

Deno.test("live zec on a Zebra-shaped RPC server: a uZEC burn on anvil is paid from the treasury coin as a v5 transaction, once", async () => {
  const started = performance.now();
  const s = await zecSetup();
  try {
    const kv = s.server.services.kv;
    const deposited = 400_000_000n; // 4 ZEC
    const { coin } = await zecMint(s.server, s.zebra, s.live, deposited);

    // A transparent address of nobody we know.
    const destination = p2pkhAddress(ZEC_REGTEST, secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    const token = await tokenFor(s.server, holder.address);
    const configured = await call(s.server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "zec", destinationAddress: destination },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    await s.live.fund("uZEC", holder.address, 10n * 10n ** 18n);
    // 2.50000001 ZEC and 77 wei below one zat.
    const zats = 250_000_001n;
    const wei = zats * ZAT_TO_WEI + 77n;
    await s.live.transfer("uZEC", s.server.services.uAssetTransferAddress, wei);
    const [seen] = await waitForOrders(s.server, token, (o) => o.length === 1, { timeoutMs: 10_000 });
    const intent = await waitUntil("the payout recorded and in the mempool", async () => {
      const i = (await storedOrder(kv, seen.id)).details.intent;
      return i && s.zebra.mempool.has(i.txHash) ? i : null;
    }, 15_000);
    assert.deepEqual(intent.consumes?.kind === "outpoints" && intent.consumes.outpoints, [coin.outpoint]);
    assert.equal(intent.expiry?.kind, "height");
    s.zebra.mine(CONFIRMATIONS);
    const [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
      timeoutMs: 15_000,
    });
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.destinationChain, "zec");
    assert.equal(order.transactionHash, intent.txHash, "the recorded payout is the one mined");
    const stored = await storedOrder(kv, order.id);
    assert.ok(stored.type === "burn");
    assert.equal(stored.details.nativeAmount, zats.toString());
    assert.equal(stored.details.remainderWei, "77");

    // On chain: mined once, the destination paid exactly, the change back to our change address.
    const blocks = s.zebra.blocks.filter((b) => b.txs.some((t) => t.txid === intent.txHash));
    assert.equal(blocks.length, 1, "the payout is in one block");
    const tx = blocks[0].txs.find((t) => t.txid === intent.txHash)!.tx;
    const toDestination = tx.outputs.filter((o) => hex(o.script) === hex(outputScript(ZEC_REGTEST, destination)));
    assert.deepEqual(toDestination.map((o) => o.value), [zats]);
    const spenders = s.zebra.blocks.flatMap((b) => b.txs).filter((t) =>
      t.tx.inputs.some((i) => hex(Uint8Array.from(i.prevHash).reverse()) === coin.outpoint.txHash)
    );
    assert.deepEqual(spenders.map((t) => t.txid), [intent.txHash], "one transaction spent the deposit coin");
    const change = intent.change!;
    assert.ok(change, "the payout has change");
    assert.equal(hex(tx.outputs[change.index].script), hex(outputScript(ZEC_REGTEST, change.address)));
    assert.equal(tx.outputs[change.index].value, BigInt(change.amount));
    const fee = deposited - tx.outputs.reduce((a, o) => a + o.value, 0n);
    assert.equal(fee, 10_000n, "ZIP-317: 5,000 zats x max(2, logical actions)");

    // The treasury: the deposit coin spent by the payout, its change the one spendable coin.
    assert.equal(await spentBy(kv, "zec", coin.outpoint), intent.txHash);
    const coins = await spendableCoins(kv, "zec");
    assert.deepEqual(coins.map((c) => [c.outpoint, c.address, c.amount]), [[
      { txHash: intent.txHash, index: change.index },
      s.server.services.pipeline!.chains.payer("zec").changeAddress,
      BigInt(change.amount),
    ]]);
  } finally {
    await s.close();
    console.log(`zec burn test: ${Math.round(performance.now() - started)} ms`);
  }
});
