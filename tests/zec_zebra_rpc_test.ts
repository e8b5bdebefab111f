/**
 * How Zebra's RPC server takes our requests, against the Zebra-shaped RPC server (tests/support/zebra_rpc_server.ts;
 * no Zebra runs on this machine kind). The server behaves as Zebra's source says (Zebra 1c9b24503 with jsonrpsee
 * 0.24.10): `zebra-rpc/src/server/http_request_compatibility.rs` rewrites one "1.0" request to 2.0 but passes a batch
 * through unchanged, jsonrpsee's `TwoPointZero` (types/src/params.rs) accepts only "2.0" entries and answers every
 * other one -32600 "Invalid request", and `getblockhash` above the tip answers -1 "Provided index is greater than the
 * current tip" (zebra-rpc/src/methods.rs `height_from_signed_int`, the code rewritten by
 * zebra-rpc/src/server/rpc_call_compatibility.rs). The zec watcher must read blocks through that, and take a height
 * above the tip as "no block yet".
 */
import assert from "node:assert/strict";
import { watchOnce } from "../actors/watcher.ts";
import type { Chains } from "../chains/adapter.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { utxoAdapters, type UtxoSettings } from "../chains/utxo/index.ts";
import { p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { RpcError, utxoRpc } from "../chains/utxo/rpc.ts";
import { zebraNode } from "../chains/utxo/zebra.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders } from "./support/burns.ts";
import { handPipeline, watchToTip } from "./support/watch.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const network = utxoNetwork("zec", "regtest");
/** Test-only mnemonic (public): never fund its keys anywhere real. */
const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const OWNER = "0x" + "5e".repeat(20);

async function withZebra(fn: (server: ZebraShapedServer) => Promise<void>): Promise<void> {
  const server = ZebraShapedServer.start({ network, initialBlocks: 3 });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** POSTs `body` to the server as a client would; the parsed answer. */
async function post(server: ZebraShapedServer, body: unknown): Promise<unknown> {
  const url = new URL(server.url);
  const res = await fetch(`${url.protocol}//${url.host}/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Basic " + btoa(`${url.username}:${url.password}`) },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return await res.json();
}

/** The sim chains, with zec read from the Zebra-shaped server through the live adapter (chains/utxo). */
function zecOnZebra(server: ZebraShapedServer) {
  return (_kv: Deno.Kv, sim: Chains): Chains => {
    const rpc = utxoRpc({ chain: "zec", urls: [server.url] });
    // Only the reader is used: the payer's settings do not matter here.
    const settings: UtxoSettings = { confirmations: 1, fee: utxoFee("zec"), expiryWindow: 40 };
    const zec = utxoAdapters({ chain: "zec", network, rpc, signer, settings });
    return { ...sim, reader: (chain) => chain === "zec" ? zec.reader : sim.reader(chain) };
  };
}

async function ourDepositAddress(kv: Deno.Kv): Promise<string> {
  await ensureUserWallet(kv, OWNER, "test-partner");
  const address = p2pkhAddress(network, signer.publicKey("zec", 0));
  const res = await createMintWallet(kv, OWNER, "zec", "base", () => address);
  assert.ok(res.ok);
  return res.wallet.address;
}

Deno.test("Zebra-shaped RPC server answers as Zebra's source does: one 1.0 request rewritten, 1.0 batch entries refused, above the tip -1", async () => {
  await withZebra(async (server) => {
    // One request in lightwalletd's dialect ("1.0", params, id): rewritten to 2.0, answered in 1.0's shape.
    assert.deepEqual(await post(server, { jsonrpc: "1.0", id: 7, method: "getblockcount", params: [] }), {
      jsonrpc: "1.0",
      result: server.tipHeight,
      error: null,
      id: 7,
    });
    // bitcoind's dialect (no jsonrpc): answered without one.
    assert.deepEqual(await post(server, { id: 8, method: "getblockcount", params: [] }), {
      result: server.tipHeight,
      error: null,
      id: 8,
    });
    // "1.0" without params is no dialect Zebra knows: jsonrpsee sees "1.0" and refuses it.
    assert.deepEqual(await post(server, { jsonrpc: "1.0", id: 9, method: "getblockcount" }), {
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid request" },
      id: 9,
    });
    // A batch is not rewritten: only its "2.0" entries are calls; the others are refused with their own ids.
    const calls = server.calls.length;
    assert.deepEqual(
      await post(server, [
        { jsonrpc: "1.0", id: 1, method: "getblockcount", params: [] },
        { jsonrpc: "2.0", id: 2, method: "getblockcount", params: [] },
        { id: 3, method: "getblockcount", params: [] },
      ]),
      [
        { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id: 1 },
        { jsonrpc: "2.0", result: server.tipHeight, id: 2 },
        { jsonrpc: "2.0", error: { code: -32600, message: "Invalid request" }, id: 3 },
      ],
    );
    assert.deepEqual(server.calls.slice(calls), ["getblockcount"], "refused entries call nothing");
    // Above the tip: jsonrpsee's invalid params, rewritten to zcashd's -1 with the message kept; in a batch too.
    const above = { code: -1, message: "Provided index is greater than the current tip" };
    assert.deepEqual(
      await post(server, { jsonrpc: "2.0", id: 4, method: "getblockhash", params: [server.tipHeight + 1] }),
      { jsonrpc: "2.0", error: above, id: 4 },
    );
    assert.deepEqual(
      await post(server, [{ jsonrpc: "2.0", id: 5, method: "getblockhash", params: [server.tipHeight + 1] }]),
      [{ jsonrpc: "2.0", error: above, id: 5 }],
    );
    assert.deepEqual(await post(server, { jsonrpc: "2.0", id: 6, method: "getblockhash", params: [-1] }), {
      jsonrpc: "2.0",
      result: server.tipHash,
      id: 6,
    });
  });
});

Deno.test("zec RPC client on a Zebra-shaped RPC server: a batch of getblock is answered, not refused entry by entry", async () => {
  await withZebra(async (server) => {
    const rpc = utxoRpc({ chain: "zec", urls: [server.url] });
    const blocks = await rpc.batch<{ hash: string; height: number }>(
      [0, 1, 2].map((h) => ({ method: "getblock", params: [String(h), 1] })),
    );
    for (const b of blocks) assert.ok(!(b instanceof RpcError), String(b));
    assert.deepEqual(blocks.map((b) => (b as { hash: string }).hash), server.blocks.map((b) => b.hash));
    assert.equal(await rpc.call<number>("getblockcount"), server.tipHeight);
  });
});

Deno.test("zec watcher on a Zebra-shaped RPC server: a transparent deposit is read from Zebra's blocks and recorded", async () => {
  await withZebra(async (server) => {
    const p = await handPipeline({ chains: zecOnZebra(server), live: { zec: { startBlock: server.tipHeight } } });
    try {
      const address = await ourDepositAddress(p.kv);
      const deposit = server.deposit(address, 123_456_789n);
      server.mine(2);
      assert.equal(await watchToTip(p.ctx, "zec"), 1, "one deposit recorded");
      const orders: Order[] = await allOrders(p.kv);
      assert.equal(orders.length, 1);
      assert.equal(orders[0].details.source.txHash, deposit.txid);
      assert.equal(orders[0].details.source.index, deposit.index);
      assert.equal(orders[0].sourceChain, "zec");
    } finally {
      await p.close();
    }
  });
});

Deno.test("zec on a Zebra-shaped RPC server: a height above the tip is no block yet, and the watcher follows a reorg to a shorter chain", async () => {
  await withZebra(async (server) => {
    const node = zebraNode(utxoRpc({ chain: "zec", urls: [server.url] }), network);
    assert.equal(await node.blockHash(server.tipHeight + 1), null);
    assert.equal(await node.blockHash(server.tipHeight), server.tipHash);

    const p = await handPipeline({ chains: zecOnZebra(server), live: { zec: { startBlock: 1 } } });
    try {
      server.mine(3);
      await watchToTip(p.ctx, "zec");
      const at = server.tipHeight;
      assert.equal((await p.kv.get<{ number: number }>(cursorKey("zec"))).value?.number, at);
      // A heavier branch one block shorter: the cursor's height is above the node's tip now.
      server.reorg(2);
      server.mine(1);
      assert.equal(server.tipHeight, at - 1);
      const tick = await watchOnce(p.ctx, "zec", "test-watcher", 60_000);
      assert.equal(tick.scannedTo, at - 1, JSON.stringify(tick));
      assert.deepEqual((await p.kv.get<{ number: number; hash: string }>(cursorKey("zec"))).value, {
        number: at - 1,
        hash: server.tipHash,
      });
      assert.ok(
        p.logs.some((l) => l.includes(`block ${at} changed (reorg); rescanning from ${at - 2}`)),
        p.logs.join("\n"),
      );
    } finally {
      await p.close();
    }
  });
});

Deno.test("zec Zebra node on a local server standing in for a failing Zebra: another -1 from getblockhash is an error, not no block", async () => {
  // Zebra answers -1 for its own failures too: zebra-rpc/src/methods.rs `best_chain_tip_height` says "No blocks in
  // state" (`ok_or_misc_error`) before any height is looked at.
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const { id } = await req.json();
    return Response.json({ jsonrpc: "2.0", error: { code: -1, message: "No blocks in state" }, id });
  });
  try {
    const node = zebraNode(utxoRpc({ chain: "zec", urls: [`http://127.0.0.1:${server.addr.port}/`] }), network);
    await assert.rejects(
      node.blockHash(5),
      (e: unknown) => e instanceof RpcError && e.code === -1 && /No blocks in state/.test(e.message),
    );
  } finally {
    await server.shutdown();
  }
});
