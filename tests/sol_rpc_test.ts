/**
 * The sol JSON-RPC client (chains/sol/rpc.ts) on a Solana-RPC-shaped server: failover past a dead URL, a JSON-RPC
 * error answered as the node's (typed, with its code, never failed over), transport failure as TransientChainError,
 * batches answered in order, and a clear error for a missing SOL_RPC_URLS.
 */
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { solRpc, SolRpcError } from "../chains/sol/rpc.ts";
import { signer } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";

/** A URL nothing listens on: a port that was free a moment ago. */
function deadUrl(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}/`;
}

Deno.test("sol RPC on a Solana-RPC-shaped server: failover, typed node errors, batches in order", async () => {
  const server = startSolanaRpcServer();
  try {
    const seen: string[] = [];
    const rpc = solRpc({ urls: [deadUrl(), server.url], onRpc: ({ url }) => seen.push(url) });
    assert.equal(await rpc.call<number>("getSlot", [{ commitment: "processed" }]), server.slot);
    assert.equal(seen.length, 2, "the dead URL first, then the live one");
    server.skip(1);
    server.produce(1);
    server.finalize();
    const err = await rpc.call("getBlock", [server.slot - 1, { commitment: "finalized" }]).catch((e) => e);
    assert.ok(err instanceof SolRpcError && err.code === -32007, String(err));
    const answers = await rpc.batch<unknown>([
      { method: "getBlockHeight", params: [{ commitment: "finalized" }] },
      { method: "noSuchMethod" },
      { method: "getSlot", params: [{ commitment: "finalized" }] },
    ]);
    assert.equal(answers[0], server.finalizedHeight);
    assert.ok(answers[1] instanceof SolRpcError && answers[1].code === -32601);
    assert.equal(answers[2], server.finalizedSlot);
  } finally {
    await server.close();
  }
});

Deno.test("sol RPC: every URL down is a TransientChainError; no URL is a clear configuration error", async () => {
  const { reader } = solAdapters({ urls: [deadUrl()], signer, confirmations: 1, timeoutMs: 2_000 });
  await assert.rejects(() => reader.tip(), TransientChainError);
  assert.throws(() => solAdapters({ urls: [], signer, confirmations: 1 }), /SOL_RPC_URLS: no RPC URL configured/);
  assert.throws(() => solAdapters({ urls: ["ftp://x"], signer, confirmations: 1 }), /must be http or https/);
});
