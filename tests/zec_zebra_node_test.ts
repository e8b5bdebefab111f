/**
 * The Zebra node (chains/utxo/zebra.ts) and the zec signer against the Zebra-shaped RPC server
 * (tests/support/zebra_rpc_server.ts; no Zebra runs on this machine kind): blocks with exact amounts and the
 * coinbase flagged, where a transaction is, signed payouts accepted and mined, and the rejections Zebra makes (wrong
 * key, underpaid fee, expired, spent input, wrong branch id), plus our refusal of an unknown branch id.
 */
import assert from "node:assert/strict";
import { type PayoutCoin, TransientChainError } from "../chains/adapter.ts";
import { p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { RpcError, utxoRpc } from "../chains/utxo/rpc.ts";
import type { InputKey, UtxoTxPlan } from "../chains/utxo/tx.ts";
import { zatoshis, zebraNode } from "../chains/utxo/zebra.ts";
import { signZecTx, UnknownBranchIdError, ZEC_BRANCH_IDS } from "../chains/utxo/zec_tx.ts";
import { Signer } from "../chains/signer.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const network = utxoNetwork("zec", "regtest");
const signer = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");
const addressOf = (index: number) => p2pkhAddress(network, signer.publicKey("zec", index));
const keyFor = (coin: PayoutCoin): InputKey => ({
  publicKey: signer.publicKey("zec", coin.derivationIndex),
  sign: (digest) => signer.signDigest("zec", coin.derivationIndex, digest).bytes,
});

async function withZebra(
  fn: (server: ZebraShapedServer, node: ReturnType<typeof zebraNode>) => Promise<void>,
  opts: { branchId?: number } = {},
): Promise<void> {
  const server = ZebraShapedServer.start({ network, initialBlocks: 3, ...opts });
  try {
    await fn(server, zebraNode(utxoRpc({ chain: "zec", urls: [server.url] }), network));
  } finally {
    await server.close();
  }
}

/** A confirmed coin of ours at derivation index `index`, `amount` zats. */
function fund(server: ZebraShapedServer, index: number, amount: bigint): PayoutCoin {
  const { txid, index: n } = server.deposit(addressOf(index), amount);
  server.mine(1);
  return {
    txHash: txid,
    index: n,
    amount,
    address: addressOf(index),
    derivationIndex: index,
    height: server.tipHeight,
  };
}

async function payout(
  node: ReturnType<typeof zebraNode>,
  coins: PayoutCoin[],
  amount: bigint,
  opts: { fee?: bigint; expiryHeight?: number; keyFor?: (c: PayoutCoin) => InputKey } = {},
): Promise<{ raw: string; txid: string; plan: UtxoTxPlan }> {
  const total = coins.reduce((a, c) => a + c.amount, 0n);
  const fee = opts.fee ?? utxoFee("zec")(coins.length, 2);
  const plan: UtxoTxPlan = {
    inputs: coins,
    outputs: [{ address: addressOf(50), amount }, { address: addressOf(51), amount: total - amount - fee }],
    expiryHeight: opts.expiryHeight ?? (await node.tip()).number + 40,
    branchId: await node.nextBranchId!(),
  };
  return { ...signZecTx(network, plan, opts.keyFor ?? keyFor), plan };
}

Deno.test("zec on a Zebra-shaped RPC server: blocks read with exact valueZat amounts, addresses from scripts, coinbase flagged", async () => {
  await withZebra(async (server, node) => {
    const big = 2_100_000_000_000_000n - 1n; // more than 2^53 / 8: exact only as an integer
    const a = server.deposit(addressOf(1), 123_456_789n);
    const b = server.deposit(addressOf(2), big);
    server.mine(1);
    const tip = await node.tip();
    assert.equal(tip.number, server.tipHeight);
    assert.equal(tip.hash, server.tipHash);
    assert.equal(await node.blockHash(tip.number), tip.hash);
    assert.equal(await node.blockHash(tip.number + 1), null);
    const calls = server.calls.length;
    const blocks = await node.blocks(tip.number - 1, tip.number + 5);
    assert.deepEqual(blocks.map((b) => b.number), [tip.number - 1, tip.number]);
    // One batch, no tip read first: the heights above the tip answer -8 and end the range there.
    assert.deepEqual(server.calls.slice(calls), Array(7).fill("getblock"));
    assert.equal(blocks[1].parentHash, blocks[0].hash);
    const [coinbase, ...txs] = blocks[1].txs;
    assert.equal(coinbase.coinbase, true);
    assert.deepEqual(coinbase.inputs, []);
    assert.deepEqual(txs.map((t) => [t.txid, t.coinbase, t.outputs]), [
      [a.txid, false, [{ index: 0, address: addressOf(1), amount: 123_456_789n }]],
      [b.txid, false, [{ index: 0, address: addressOf(2), amount: big }]],
    ]);
    assert.ok(blocks.every((b) => b.txs[0].coinbase && b.txs.slice(1).every((t) => !t.coinbase)));
    assert.ok(addressOf(1).startsWith("tm"));
  });
});

Deno.test("zec Zebra node: only integer valueZat is an amount (floats, strings, negatives, unsafe integers refused)", () => {
  assert.equal(zatoshis(5_000, "x"), 5_000n);
  assert.equal(zatoshis(0, "x"), 0n);
  for (const bad of [1.5, "5000", -1, 2 ** 53, "9007199254740993", null, undefined]) {
    assert.throws(() => zatoshis(bad, "tx:0"), /not a whole number of zatoshis/);
  }
});

Deno.test("zec on a Zebra-shaped RPC server: a signed payout is accepted, found in the mempool, mined, re-sent as success", async () => {
  await withZebra(async (server, node) => {
    const coin = fund(server, 3, 1_000_000n);
    const { raw, txid } = await payout(node, [coin], 600_000n);
    assert.deepEqual(await node.findTx(txid), { where: "nowhere" });
    await node.send(raw);
    const inPool = await node.findTx(txid);
    assert.equal(inPool.where, "mempool");
    await node.send(raw); // already in the mempool: success
    server.mine(2);
    const place = await node.findTx(txid);
    assert.ok(place.where === "block");
    assert.equal(place.height, server.tipHeight - 1);
    assert.equal(place.blockHash, server.blocks[server.tipHeight - 1].hash);
    assert.equal(place.confirmations, 2);
    assert.deepEqual(place.tx.inputs, [{ txHash: coin.txHash, index: coin.index }]);
    assert.deepEqual(place.tx.outputs.map((o) => [o.address, o.amount]), [
      [addressOf(50), 600_000n],
      [addressOf(51), 1_000_000n - 600_000n - 10_000n],
    ]);
    await node.send(raw); // already mined: success
    assert.ok(server.utxos().has(`${txid}:0`));
    assert.ok(!server.utxos().has(`${coin.txHash}:${coin.index}`));
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a signature by the wrong key is rejected", async () => {
  await withZebra(async (server, node) => {
    const coin = fund(server, 4, 1_000_000n);
    // The right public key (so our own ownership check passes) but another index's signature.
    const wrong = (c: PayoutCoin): InputKey => ({
      publicKey: signer.publicKey("zec", c.derivationIndex),
      sign: (digest) => signer.signDigest("zec", c.derivationIndex + 1, digest).bytes,
    });
    const { raw } = await payout(node, [coin], 500_000n, { keyFor: wrong });
    await assert.rejects(
      node.send(raw),
      (e: unknown) => e instanceof RpcError && /signature does not verify/.test(e.message),
    );
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a fee below ZIP-317's conventional fee is rejected; exactly it is accepted", async () => {
  await withZebra(async (server, node) => {
    const coins = [fund(server, 5, 400_000n), fund(server, 6, 400_000n), fund(server, 7, 400_000n)];
    const conventional = utxoFee("zec")(3, 2); // 15,000: three inputs
    assert.equal(conventional, 15_000n);
    const under = await payout(node, coins, 700_000n, { fee: conventional - 1n });
    await assert.rejects(node.send(under.raw), /unpaid actions/);
    const exact = await payout(node, coins, 700_000n, { fee: conventional });
    await node.send(exact.raw);
    server.mine(1);
    assert.equal((await node.findTx(exact.txid)).where, "block");
  });
});

Deno.test("zec on a Zebra-shaped RPC server: an expired payout is rejected; one that expires in the mempool is dropped", async () => {
  await withZebra(async (server, node) => {
    const coin = fund(server, 8, 1_000_000n);
    const expired = await payout(node, [coin], 500_000n, { expiryHeight: server.tipHeight });
    await assert.rejects(node.send(expired.raw), /greater than its expiry/);
    const lastChance = await payout(node, [coin], 500_000n, { expiryHeight: server.tipHeight + 2 });
    await node.send(lastChance.raw);
    server.mine(2, { skip: [lastChance.txid] }); // a miner leaves it out until it can no longer be mined
    assert.deepEqual(await node.findTx(lastChance.txid), { where: "nowhere" });
    await assert.rejects(node.send(lastChance.raw), /greater than its expiry/);
    // The coin is still ours: a new payout spends it.
    const again = await payout(node, [coin], 500_000n);
    await node.send(again.raw);
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a second spend of a coin is rejected (mempool and chain)", async () => {
  await withZebra(async (server, node) => {
    const coin = fund(server, 9, 1_000_000n);
    const first = await payout(node, [coin], 500_000n);
    const second = await payout(node, [coin], 400_000n);
    await node.send(first.raw);
    await assert.rejects(node.send(second.raw), /duplicate spend/);
    server.mine(1);
    await assert.rejects(node.send(second.raw), /missing or spent/);
  });
});

Deno.test("zec on a Zebra-shaped RPC server: the node's next branch id is signed for; a transaction for another branch is rejected", async () => {
  await withZebra(async (server, node) => {
    assert.equal(await node.nextBranchId!(), 0x37a5165b);
    const coin = fund(server, 10, 1_000_000n);
    const plan = (await payout(node, [coin], 500_000n)).plan;
    const old = signZecTx(network, { ...plan, branchId: ZEC_BRANCH_IDS["NU6.2"] }, keyFor);
    await assert.rejects(node.send(old.raw), /incorrect consensus branch id/);
    server.setNextBranchId(ZEC_BRANCH_IDS["NU6.2"]);
    assert.equal(await node.nextBranchId!(), ZEC_BRANCH_IDS["NU6.2"]);
    await node.send(old.raw);
  });
});

Deno.test("zec on a Zebra-shaped RPC server: an unknown next branch id is refused with UnknownBranchIdError before signing", async () => {
  await withZebra(async (server, node) => {
    const coin = fund(server, 11, 1_000_000n);
    server.setNextBranchId(0xdeadbeef);
    await assert.rejects(payout(node, [coin], 500_000n), (e: unknown) => {
      assert.ok(e instanceof UnknownBranchIdError);
      assert.match(e.message, /0xdeadbeef/);
      return true;
    });
    assert.equal(server.mempool.size, 0);
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a reorg that drops a deposit leaves it nowhere; the height gets a new hash", async () => {
  await withZebra(async (server, node) => {
    const d = server.deposit(addressOf(12), 77_000n);
    server.mine(1);
    const height = server.tipHeight;
    const before = await node.blockHash(height);
    assert.equal((await node.findTx(d.txid)).where, "block");
    server.reorg(1, { drop: [d.txid] });
    server.mine(2);
    assert.notEqual(await node.blockHash(height), before);
    assert.deepEqual(await node.findTx(d.txid), { where: "nowhere" });
    const [block] = await node.blocks(height, height);
    assert.ok(block.txs.every((t) => t.txid !== d.txid));
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a node on another chain, or wrong credentials, are refused clearly", async () => {
  await withZebra(async (server) => {
    const mainnetNode = zebraNode(utxoRpc({ chain: "zec", urls: [server.url] }), utxoNetwork("zec", "mainnet"));
    await assert.rejects(mainnetNode.tip(), /on chain "regtest".*configured for mainnet/);
    const badUrl = server.url.replace("zebra-secret", "wrong");
    const badNode = zebraNode(utxoRpc({ chain: "zec", urls: [badUrl] }), network);
    await assert.rejects(badNode.tip(), (e: unknown) => e instanceof TransientChainError && /401/.test(e.message));
  });
});

Deno.test("zec Zebra node has no isUnspent (Zebra has no gettxout: zec payouts are proven dead by expiry)", () => {
  const node = zebraNode(utxoRpc({ chain: "zec", urls: ["http://127.0.0.1:1/"] }), network);
  assert.equal(node.isUnspent, undefined);
});
