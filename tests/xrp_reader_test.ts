/**
 * The xrp reader on a rippled-shaped server (tests/support/rippled_rpc_server.ts; no rippled runs here): validated
 * ledgers only, both API shapes, and the traps: a partial payment credits what was delivered, never Amount; a tec
 * payment delivers nothing; an IOU payment and an AccountDelete to us are held for an operator; RPC errors typed.
 */
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { XrplRpcError } from "../chains/xrp/rpc.ts";
import { xrpAdapters } from "../chains/xrp/index.ts";
import type { RippledServer } from "./support/rippled_rpc_server.ts";
import { depositAddress, elsewhere, hotWallet, signer, withRippled, XRP, xrpOn } from "./support/xrp_env.ts";

async function scanned(server: RippledServer, hashes: string[]) {
  const { reader } = xrpOn(server);
  const from = server.hooks.closedIndex + 1;
  server.hooks.validateThrough(from);
  const tip = await reader.tip();
  const blocks = await reader.scan(from, tip.number);
  const transfers = blocks.flatMap((b) => b.transfers).filter((t) => hashes.includes(t.txHash));
  return { blocks, transfers, tip };
}

for (const version of [1, 2] as const) {
  Deno.test(`xrp reader on a rippled-shaped server (API v${version}): every trap in validated ledgers`, async () => {
    await withRippled({ apiVersion: version }, async (server) => {
      const us = depositAddress(3);
      const h = server.hooks;
      const plain = h.fund(us, 30n * XRP);
      const partial = h.partialPayment(us, 500n * XRP, 2n * XRP);
      const tec = h.failedPayment(depositAddress(4), 1000n, "tecNO_DST_INSUF_XRP");
      const iou = h.iouPayment(us, "125.5");
      const deleted = h.accountDelete("rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", us, 7n * XRP);
      const hashes = [plain, partial, tec, iou, deleted];
      const { blocks, transfers } = await scanned(server, hashes);
      assert.equal(blocks.length, 1);
      const byHash = (h: string) => transfers.filter((t) => t.txHash === h);
      assert.deepEqual(byHash(plain), [{
        txHash: plain,
        index: 0,
        from: "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh",
        to: us,
        amount: 30n * XRP,
        asset: "native",
      }]);
      const [p] = byHash(partial);
      assert.equal(p.amount, 2n * XRP, "delivered_amount, never Amount (500 XRP)");
      assert.equal(p.heldReason, undefined);
      assert.equal(byHash(partial).length, 1);
      assert.deepEqual(byHash(tec), [], "a tec result delivers nothing");
      const [i] = byHash(iou);
      assert.equal(i.amount, 0n);
      assert.equal(i.to, us);
      assert.match(i.heldReason!, /issued-currency payment \(delivered 125\.5 USD/);
      assert.equal(byHash(iou).length, 1);
      const d = byHash(deleted);
      assert.equal(d.length, 1, JSON.stringify(d, (_k, v) => typeof v === "bigint" ? String(v) : v));
      assert.equal(d[0].to, us);
      assert.equal(d[0].amount, 7n * XRP);
      assert.match(d[0].heldReason!, /AccountDelete/);
      // The block is the validated ledger, linked to its parent.
      const b = blocks[0];
      assert.equal(await xrpOn(server).reader.blockHash(b.number), b.hash);
      assert.equal(b.parentHash, await xrpOn(server).reader.blockHash(b.number - 1));
    });
  });
}

Deno.test("xrp reader on a rippled-shaped server: one scan across ledgers of both API versions", async () => {
  await withRippled({ apiVersion: 1 }, async (server) => {
    const a = server.hooks.fund(depositAddress(1), 2n * XRP);
    server.hooks.closeLedgers(1);
    server.hooks.apiVersion(2);
    const b = server.hooks.fund(depositAddress(2), 3n * XRP);
    const { reader } = xrpOn(server);
    const from = server.hooks.closedIndex;
    server.hooks.validateThrough(from + 1);
    const blocks = await reader.scan(from, from + 1);
    assert.deepEqual(blocks.map((x) => x.number), [from, from + 1]);
    assert.deepEqual(blocks.flatMap((x) => x.transfers).map((t) => [t.txHash, t.amount]), [[a, 2n * XRP], [
      b,
      3n * XRP,
    ]]);
    assert.equal(blocks[1].parentHash, blocks[0].hash);
  });
});

Deno.test("xrp reader on a rippled-shaped server: only validated ledgers are read", async () => {
  await withRippled({ validatedLag: 2 }, async (server) => {
    const { reader } = xrpOn(server);
    const hash = server.hooks.fund(depositAddress(1), 2n * XRP);
    server.hooks.closeLedgers(1);
    const closed = server.hooks.closedIndex;
    const tip = await reader.tip();
    assert.equal(tip.number, closed - 2, "the tip is the validated ledger, not the last closed");
    assert.equal(await reader.blockHash(closed), null, "closed but not validated: above the tip");
    assert.equal(await reader.blockHash(closed + 5), null, "not closed at all");
    assert.deepEqual(await reader.scan(tip.number + 1, closed), [], "nothing past the validated ledger");
    assert.equal(await reader.transfersOf(hash), null, "in a closed ledger, not validated");
    const before = await reader.txStatus(hash);
    assert.ok(before.state === "included" && before.final === false, JSON.stringify(before));
    server.hooks.closeLedgers(2);
    const after = await reader.txStatus(hash);
    assert.ok(after.state === "included" && after.final === true && after.success, JSON.stringify(after));
    assert.equal(after.blockNumber, closed);
    assert.equal((await reader.transfersOf(hash))?.[0].amount, 2n * XRP);
  });
});

Deno.test("xrp reader on a rippled-shaped server: balances, and errors typed", async () => {
  await withRippled({}, async (server) => {
    const { reader, rpc } = xrpOn(server);
    server.hooks.fund(depositAddress(9), 4n * XRP);
    assert.equal(await reader.balance!(depositAddress(9)), 0n, "not validated yet");
    server.hooks.validateThrough(server.hooks.closedIndex + 1);
    assert.equal(await reader.balance!(depositAddress(9)), 4n * XRP);
    assert.equal(await reader.balance!(elsewhere), 0n, "actNotFound is an empty account");
    assert.equal((await reader.txStatus("AB".repeat(32))).state, "unknown");
    assert.equal(await reader.transfersOf("AB".repeat(32)), null);
    await assert.rejects(
      rpc.call("account_info", { account: hotWallet, ledger_index: "validated" }),
      (e) => e instanceof XrplRpcError && e.code === "actNotFound",
    );
    await assert.rejects(rpc.call("no_such_method"), (e) => e instanceof XrplRpcError && e.code === "unknownCmd");
    // Overloaded nodes and dead URLs are transient.
    const busy = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => Response.json({ result: { status: "error", error: "slowDown" } }),
    );
    try {
      const url = `http://127.0.0.1:${(busy.addr as Deno.NetAddr).port}/`;
      const { reader: slow } = xrpOn({ ...server, url });
      await assert.rejects(slow.tip(), TransientChainError);
    } finally {
      await busy.shutdown();
    }
    const { reader: gone } = xrpOn({ ...server, url: "http://127.0.0.1:9/" });
    await assert.rejects(gone.tip(), TransientChainError);
  });
});

Deno.test("xrp adapters on a rippled-shaped server: the factory checks its settings; one RPC call per scanned ledger", async () => {
  assert.throws(() => xrpAdapters({ urls: [], signer, confirmations: 1 }), /XRP_RPC_URLS: no RPC URL configured/);
  assert.throws(
    () => xrpAdapters({ urls: ["ftp://x"], signer, confirmations: 1 }),
    /XRP_RPC_URLS: .* must be http or https/,
  );
  assert.throws(() => xrpAdapters({ urls: ["http://x"], signer, confirmations: 0 }), /XRP_CONFIRMATIONS/);
  await withRippled({}, async (server) => {
    const methods: string[] = [];
    const { reader, payer } = xrpAdapters({
      urls: [server.url],
      signer,
      confirmations: 1,
      onRpc: (i) => methods.push(i.method),
    });
    assert.equal(reader.chain, "xrp");
    assert.deepEqual(reader.finality, { kind: "flag", flag: "validated" });
    assert.equal(payer.hotWallet, hotWallet);
    for (let i = 0; i < 10; i++) server.hooks.fund(depositAddress(i), XRP);
    server.hooks.closeLedgers(3);
    const tip = await reader.tip();
    methods.length = 0;
    const blocks = await reader.scan(tip.number - 2, tip.number);
    assert.equal(blocks.length, 3);
    assert.deepEqual(methods, ["ledger", "ledger", "ledger"], "one call per validated ledger, whatever it holds");
  });
});

Deno.test('xrp reader on a rippled-shaped server: a Payment whose delivered amount is "unavailable" is held as XRP the ledger did not measure, not as an issued currency', async () => {
  await withRippled({}, async (server) => {
    const us = depositAddress(5);
    const old = server.hooks.unrecordedPartialPayment(us, 900n * XRP, 3n * XRP);
    const { transfers } = await scanned(server, [old]);
    assert.equal(transfers.length, 1, "one record: the payment, held; never credited");
    const [held] = transfers;
    assert.equal(held.to, us);
    assert.equal(held.asset, "native");
    assert.equal(held.amount, 0n, "the ledger did not record what was delivered: never Amount (900 XRP)");
    assert.doesNotMatch(held.heldReason!, /issued-currency/);
    assert.match(held.heldReason!, /XRP payment whose delivered amount the ledger did not record/);
    assert.match(held.heldReason!, /held for an operator/);
  });
});
