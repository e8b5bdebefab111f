/**
 * The doge adapter (chains/utxo: bitcoin_core.ts node, reader, payer, doge_tx.ts signing) against a real node:
 * litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core). Deposits from the node's wallet to our
 * derived P2PKH addresses, coinbase and non-address outputs, a reorg, payouts signed by us, a double spend, a
 * malleated copy of a payout, and a crash between record and broadcast.
 */
import assert from "node:assert/strict";
import { Transaction } from "bitcoinjs-lib";
import type { OwnTx, PreparedTx } from "../chains/adapter.ts";
import { RpcError } from "../chains/utxo/rpc.ts";
import { outputScript } from "../chains/utxo/network.ts";
import { coinsText, litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { DOGE_REGTEST, dogeOnLitecoind } from "./support/doge_regtest.ts";

const RUN = litecoindAvailable("tests/utxo_doge_regtest_test.ts");
const NAME = "on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core)";

const own = (tx: PreparedTx): OwnTx => ({ raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes });
const DOGE = 100_000_000n;

Deno.test({ name: `doge adapter ${NAME}`, ignore: !RUN }, async (t) => {
  const node = await startLitecoind();
  try {
    const doge = dogeOnLitecoind(node, { confirmations: 3 });
    const { reader, payer } = doge;
    const wallet = await node.call<string>("getnewaddress", ["", "legacy"]);

    await t.step("deposits to our addresses are scanned with exact amounts; the coinbase is flagged", async () => {
      const amounts = [123_456_789n, 50_000_001n];
      const txids = [await node.send(doge.address(0), amounts[0]), await node.send(doge.address(1), amounts[1])];
      assert.equal((await reader.txStatus(txids[0])).state, "pending");
      const [hash] = await node.mine(1);
      const tip = await reader.tip();
      assert.equal(tip.hash, hash);
      assert.equal(await reader.blockHash(tip.number), hash);
      assert.equal(await reader.blockHash(tip.number + 1), null, "null above the tip");
      const [block] = await reader.scan(tip.number, tip.number + 5);
      assert.equal(block.number, tip.number);
      assert.equal(block.parentHash, await reader.blockHash(tip.number - 1));
      for (const [i, txid] of txids.entries()) {
        const ours = block.transfers.filter((x) => x.txHash === txid && x.to === doge.address(i));
        assert.equal(ours.length, 1);
        assert.equal(ours[0].amount, amounts[i]);
        assert.equal(ours[0].coinbase, undefined);
        assert.equal(ours[0].from, "");
        const sender = await reader.senderOf!(txid);
        assert.ok(sender, "the wallet's P2PKH input is the sender");
        assert.equal((await node.call<{ ismine: boolean }>("getaddressinfo", [sender])).ismine, true);
        // A reader that scanned nothing looks the deposit up on the node: the same sender.
        assert.equal(await dogeOnLitecoind(node).reader.senderOf!(txid), sender, "with or without a scan first");
      }
      const status = await reader.txStatus(txids[0]);
      assert.deepEqual(status, { state: "included", blockNumber: tip.number, confirmations: 1, success: true });
      // The coinbase: its payment to the miner flagged, its witness commitment (OP_RETURN) not a transfer.
      const blockInfo = await node.call<{ tx: string[] }>("getblock", [hash, true]);
      const coinbase = block.transfers.filter((x) => x.txHash === blockInfo.tx[0]);
      assert.equal(coinbase.length, 1);
      assert.equal(coinbase[0].coinbase, true);
      assert.equal(coinbase[0].to, node.minerAddress);
      assert.equal(await reader.senderOf!(blockInfo.tx[0]), null, "a coinbase has no sender");
      const cbVouts = (await node.call<{ vout: unknown[] }>("getrawtransaction", [blockInfo.tx[0], true])).vout;
      assert.equal(cbVouts.length, 2, "the coinbase also has the OP_RETURN witness commitment");
    });

    await t.step("OP_RETURN, bare multisig and P2PK outputs are ignored; the P2PKH beside them counts", async () => {
      const [utxo] = (await node.call<{ txid: string; vout: number; amount: string }[]>("listunspent", [1]))
        .filter((u) => Number(u.amount) >= 1);
      const pub = doge.signer.publicKey("doge", 2);
      const tx = new Transaction();
      tx.version = 2;
      tx.addInput(Uint8Array.from(hexBytes(utxo.txid)).reverse(), utxo.vout);
      tx.addOutput(outputScript(DOGE_REGTEST, doge.address(2)), 20_000_000n);
      tx.addOutput(Uint8Array.of(0x6a, 4, 0xde, 0xad, 0xbe, 0xef), 0n); // OP_RETURN
      tx.addOutput(Uint8Array.of(0x51, 33, ...pub, 0x51, 0xae), 10_000_000n); // 1-of-1 bare multisig to our key
      tx.addOutput(Uint8Array.of(33, ...pub, 0xac), 10_000_000n); // P2PK to our key
      tx.addOutput(outputScript(DOGE_REGTEST, wallet), toSats(utxo.amount) - 41_000_000n);
      const signed = await node.call<{ hex: string; complete: boolean }>("signrawtransactionwithwallet", [tx.toHex()]);
      assert.ok(signed.complete);
      const txid = await node.call<string>("sendrawtransaction", [signed.hex]);
      await node.mine(1);
      const transfers = (await reader.transfersOf(txid))!;
      assert.deepEqual(transfers.map((x) => [x.index, x.to, x.amount]), [
        [0, doge.address(2), 20_000_000n],
        [4, wallet, toSats(utxo.amount) - 41_000_000n],
      ]);
      const tip = (await reader.tip()).number;
      assert.deepEqual((await reader.scan(tip, tip))[0].transfers.filter((x) => x.txHash === txid), transfers);
    });

    await t.step("a reorg (invalidateblock) changes the block hash and takes the deposit away", async () => {
      // A deposit mined without passing through the mempool, then replaced in the competing branch by a conflicting
      // spend of the same wallet coin: it is nowhere afterwards.
      const [utxo] = (await node.call<{ txid: string; vout: number; amount: string }[]>("listunspent", [1]))
        .filter((u) => Number(u.amount) >= 1);
      const spend = async (to: string) => {
        const raw = await node.call<string>("createrawtransaction", [
          [{ txid: utxo.txid, vout: utxo.vout }],
          [{ [to]: coinsText(toSats(utxo.amount) - 100_000n) }],
        ]);
        return (await node.call<{ hex: string }>("signrawtransactionwithwallet", [raw])).hex;
      };
      const deposit = await spend(doge.address(3));
      const rival = await spend(wallet);
      const depositTxid = Transaction.fromHex(deposit).getId();
      const { hash } = await node.call<{ hash: string }>("generateblock", [node.minerAddress, [deposit]]);
      const n = (await reader.tip()).number;
      assert.equal(await reader.blockHash(n), hash);
      assert.equal((await reader.scan(n, n))[0].transfers.filter((x) => x.txHash === depositTxid).length, 1);
      assert.equal((await reader.txStatus(depositTxid)).state, "included");
      await node.call("invalidateblock", [hash]);
      assert.equal((await reader.txStatus(depositTxid)).state, "pending", "back in the mempool after the reorg");
      await node.call("generateblock", [node.minerAddress, [rival]]);
      assert.notEqual(await reader.blockHash(n), hash, "another block at that height");
      assert.equal((await reader.txStatus(depositTxid)).state, "unknown");
      assert.equal(await reader.transfersOf(depositTxid), null);
      const scanned = await reader.scan(n - 1, n + 1);
      assert.equal(scanned.flatMap((b) => b.transfers).filter((x) => x.txHash === depositTxid).length, 0);
      assert.equal(scanned[1].parentHash, scanned[0].hash);
    });

    await t.step(
      "a payout signed by us is accepted, mined, and its change comes back to our change address",
      async () => {
        const coin = await doge.depositCoin(4, 5n * DOGE);
        const tx = await payer.preparePayout({
          orderId: "p1",
          to: wallet,
          amount: 2n * DOGE,
          memo: null,
          coins: [coin],
        });
        const fee = doge.settings.fee(1, 2);
        assert.deepEqual(tx.change, { index: 1, address: payer.changeAddress, amount: 3n * DOGE - fee });
        assert.deepEqual(tx.consumes, {
          kind: "outpoints",
          outpoints: [{ txHash: coin.txHash, index: coin.index }],
          since: coin.height,
        });
        assert.deepEqual(tx.reservations, [{
          kind: "coins",
          chain: "doge",
          outpoints: [{ txHash: coin.txHash, index: coin.index }],
        }]);
        const accept = await node.call<{ allowed: boolean; txid: string }[]>("testmempoolaccept", [[tx.raw]]);
        assert.equal(accept[0].allowed, true, JSON.stringify(accept));
        assert.equal(accept[0].txid, tx.txHash);
        await payer.broadcast(tx);
        assert.equal((await reader.txStatus(tx.txHash, own(tx))).state, "pending");
        await node.mine(1);
        const status = await reader.txStatus(tx.txHash, own(tx));
        assert.equal(status.state, "included");
        const transfers = (await reader.transfersOf(tx.txHash))!;
        assert.deepEqual(transfers.map((x) => [x.index, x.to, x.amount]), [
          [0, wallet, 2n * DOGE],
          [1, payer.changeAddress, 3n * DOGE - fee],
        ]);
        // The change coin is ours too: spent with the change key.
        const changeCoin = {
          txHash: tx.txHash,
          index: 1,
          amount: 3n * DOGE - fee,
          address: payer.changeAddress!,
          derivationIndex: 0,
          height: (status as { blockNumber: number }).blockNumber,
        };
        const next = await payer.preparePayout({
          orderId: "p2",
          to: doge.address(5),
          amount: DOGE,
          memo: null,
          coins: [changeCoin],
        });
        await payer.broadcast(next);
        await node.mine(1);
        assert.equal((await reader.txStatus(next.txHash)).state, "included");
      },
    );

    await t.step("bad payouts are refused before signing", async () => {
      const coin = await doge.depositCoin(6, 2n * DOGE);
      const req = { orderId: "bad", to: wallet, amount: DOGE, memo: null };
      await assert.rejects(payer.preparePayout({ ...req, coins: [] }), /no coins/);
      await assert.rejects(
        payer.preparePayout({ ...req, coins: [coin], to: "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L" }),
        /not a doge regtest/,
      );
      await assert.rejects(
        payer.preparePayout({ ...req, coins: [{ ...coin, derivationIndex: 7 }] }),
        /refusing to sign/,
      );
      await assert.rejects(payer.preparePayout({ ...req, coins: [coin], amount: 2n * DOGE }), /cannot pay/);
      await assert.rejects(payer.preparePayout({ ...req, coins: [coin], amount: 999_999n }), /dust limit/);
    });

    await t.step("a double spend proves the first payout dead by conflict only once buried", async () => {
      const coin = await doge.depositCoin(8, 3n * DOGE);
      const first = await payer.preparePayout({ orderId: "d1", to: wallet, amount: DOGE, memo: null, coins: [coin] });
      const rival = await payer.preparePayout({
        orderId: "d2",
        to: wallet,
        amount: 2n * DOGE,
        memo: null,
        coins: [coin],
      });
      assert.notEqual(first.txHash, rival.txHash);
      await payer.broadcast(rival);
      assert.deepEqual(
        await reader.txStatus(first.txHash, own(first)),
        { state: "unknown" },
        "mempool facts prove nothing",
      );
      await assert.rejects(payer.broadcast(first), RpcError, "the node refuses the conflicting bytes");
      await payer.nudge!(first, 0); // a refused rebroadcast is not an error for the actor
      for (let depth = 1; depth < doge.settings.confirmations; depth++) {
        await node.mine(1);
        assert.deepEqual(await reader.txStatus(first.txHash, own(first)), { state: "unknown" }, `at depth ${depth}`);
      }
      await node.mine(1);
      const dead = await reader.txStatus(first.txHash, own(first));
      assert.equal(dead.state, "dead", JSON.stringify(dead));
      // The proof names the inputs the rival took (here its only one), not where our payout's coins start.
      const { since: _since, ...taken } = first.consumes as Extract<typeof first.consumes, { kind: "outpoints" }>;
      assert.deepEqual(dead.state === "dead" && dead.proof, {
        kind: "conflict",
        consumed: taken,
        spentBy: rival.txHash,
      });
      assert.equal((await reader.txStatus(first.txHash)).state, "unknown", "never dead without our transaction");
    });

    await t.step("a malleated copy of our payout mined is our payout included under the other txid", async () => {
      const coin = await doge.depositCoin(9, 3n * DOGE);
      const tx = await payer.preparePayout({ orderId: "m1", to: wallet, amount: DOGE, memo: null, coins: [coin] });
      const malleated = malleate(tx.raw);
      assert.notEqual(malleated.txid, tx.txHash);
      const accept = await node.call<{ allowed: boolean; "reject-reason"?: string }[]>("testmempoolaccept", [[
        malleated.raw,
      ]]);
      assert.equal(accept[0].allowed, false, "non-standard: the node's mempool refuses it");
      await node.call("generateblock", [node.minerAddress, [malleated.raw]]);
      const status = await reader.txStatus(tx.txHash, own(tx));
      assert.equal(status.state, "included", JSON.stringify(status));
      assert.equal(status.state === "included" && status.txHash, malleated.txid);
      assert.equal(status.state === "included" && status.confirmations, 1);
      assert.equal((await reader.txStatus(tx.txHash)).state, "unknown", "the recorded txid itself is nowhere");
    });

    await t.step("a crash between record and broadcast: the same bytes sent again and again land once", async () => {
      const coin = await doge.depositCoin(10, 3n * DOGE);
      const tx = await payer.preparePayout({ orderId: "c1", to: wallet, amount: DOGE, memo: null, coins: [coin] });
      assert.deepEqual(await reader.txStatus(tx.txHash, own(tx)), { state: "unknown" }, "recorded, never sent");
      await payer.broadcast(tx);
      await payer.broadcast(tx); // already in the mempool: success
      await node.mine(1);
      await payer.broadcast(tx); // already in a block: success
      await payer.nudge!(tx, 0);
      const status = await reader.txStatus(tx.txHash, own(tx));
      assert.equal(status.state, "included");
      assert.equal(status.state === "included" && status.txHash, undefined);
    });
  } finally {
    await node.stop();
  }
});

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!.map((b) => parseInt(b, 16)));
}

function toSats(amount: string | number): bigint {
  const [whole, frac = ""] = String(amount).split(".");
  return BigInt(whole) * DOGE + BigInt(frac.padEnd(8, "0"));
}

/** The same transaction with input 0's signature pushed by OP_PUSHDATA1: consensus-valid, non-standard, a new txid. */
function malleate(raw: string): { raw: string; txid: string } {
  const tx = Transaction.fromHex(raw);
  const script = tx.ins[0].script;
  const sigLen = script[0];
  const patched = Uint8Array.of(0x4c, sigLen, ...script.subarray(1));
  tx.setInputScript(0, patched);
  return { raw: tx.toHex(), txid: tx.getId() };
}

Deno.test({
  name: `doge adapter ${NAME} without -txindex: says so instead of calling mined transactions unknown`,
  ignore: !RUN,
}, async () => {
  const node = await startLitecoind({ txindex: false });
  try {
    const doge = dogeOnLitecoind(node);
    const txid = await node.send(doge.address(0), DOGE);
    assert.equal((await doge.reader.txStatus(txid)).state, "pending", "the mempool needs no index");
    await node.mine(1);
    await assert.rejects(doge.reader.txStatus(txid), /run it with -txindex/);
    // Scanning needs no index: blocks are read whole (getblock with verbose false, chains/utxo/raw_block.ts).
    const tip = (await doge.reader.tip()).number;
    const [block] = await doge.reader.scan(tip, tip);
    assert.ok(block.transfers.some((t) => t.txHash === txid), "the mined transaction is in the scanned block");
  } finally {
    await node.stop();
  }
});
