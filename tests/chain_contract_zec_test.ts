/**
 * The chain contract suite (tests/support/chain_contract.ts) against the zec adapter (chains/utxo: Zebra node, shared
 * reader and payer, ZIP-244 signer) on the Zebra-shaped RPC server (tests/support/zebra_rpc_server.ts; no Zebra runs
 * on this machine kind): deposits to our tm addresses, payouts spending real coins at our addresses, verified by the
 * server as Zebra's mempool would, a reorg replacing blocks by a branch without the deposit, and a payout killed by
 * expiry (sent, never mined, dropped when its nExpiryHeight passes), proven dead only once the final height is past it.
 */
import assert from "node:assert/strict";
import type { PayoutCoin, PreparedTx } from "../chains/adapter.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { utxoAdapters, type UtxoSettings } from "../chains/utxo/index.ts";
import { p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import {
  type ContractHarness,
  runChainContract,
  UTXO_PURPOSES_UNSUPPORTED,
  utxoConsolidation,
} from "./support/chain_contract.ts";
import { withKv } from "./support/kv.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const NAME = "zec adapter on a Zebra-shaped RPC server (no Zebra runs here)";
const ZEC = 100_000_000n;
const network = utxoNetwork("zec", "regtest");
/** Test-only mnemonic (public): never fund its keys anywhere real. */
const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const address = (index: number) => p2pkhAddress(network, signer.publicKey("zec", index));
/** Not ours: a key of another mnemonic. */
const elsewhere = p2pkhAddress(
  network,
  Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow").publicKey(
    "zec",
    0,
  ),
);

function zecOnZebra(server: ZebraShapedServer, settings: UtxoSettings) {
  const rpc = utxoRpc({ chain: "zec", urls: [server.url] });
  const adapters = utxoAdapters({ chain: "zec", network, rpc, signer, settings });
  return {
    ...adapters,
    /** Pays `zats` to our deposit address `index` and mines it: the coin, confirmed once. */
    async depositCoin(index: number, zats: bigint): Promise<PayoutCoin> {
      const { txid, index: n } = server.deposit(address(index), zats);
      server.mine(1);
      const status = await adapters.reader.txStatus(txid);
      if (status.state !== "included") throw new Error(`deposit ${txid} not mined: ${JSON.stringify(status)}`);
      return {
        txHash: txid,
        index: n,
        amount: zats,
        address: address(index),
        derivationIndex: index,
        height: status.blockNumber,
      };
    },
  };
}

Deno.test(`chain contract: ${NAME}`, async (t) => {
  const server = ZebraShapedServer.start({ network, initialBlocks: 5 });
  try {
    await withKv("chain-contract-zec-", async (kv) => {
      const settings: UtxoSettings = { confirmations: 3, fee: utxoFee("zec"), expiryWindow: 10 };
      const zec = zecOnZebra(server, settings);
      let nextIndex = 0;
      let labelNumber = 0;
      const byLabel = new Map<string, PreparedTx[]>();
      const harness: ContractHarness = {
        name: NAME,
        chain: "zec",
        kv,
        reader: zec.reader,
        sender: zec.payer,
        confirmations: settings.confirmations,
        async prepare(label, opts) {
          const coins = opts?.coins ?? [await zec.depositCoin(nextIndex++, 3n * ZEC)];
          const amount = ZEC + BigInt(++labelNumber) * 1_000_000n; // distinct per label
          const tx = await zec.payer.preparePayout({ orderId: label, to: elsewhere, amount, memo: null, coins });
          byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
          return tx;
        },
        coins: async () => [await zec.depositCoin(nextIndex++, 2n * ZEC), await zec.depositCoin(nextIndex++, 2n * ZEC)],
        async landed(label) {
          const landed: string[] = [];
          for (const tx of byLabel.get(label) ?? []) {
            if ((await zec.reader.txStatus(tx.txHash)).state === "included") landed.push(tx.txHash);
          }
          return landed;
        },
        transferToUs() {
          const amount = 123_456_789n + BigInt(nextIndex);
          const { txid } = server.deposit(address(nextIndex++), amount);
          return Promise.resolve({ txHash: txid, amount });
        },
        mine(blocks) {
          server.mine(blocks);
          return Promise.resolve();
        },
        checkpoint() {
          const height = server.tipHeight;
          return Promise.resolve(() => {
            const depth = server.tipHeight - height;
            if (depth < 1) return Promise.resolve();
            server.reorg(depth);
            // A branch as high, of empty blocks: the old branch's transactions stay out of it (in the mempool).
            server.mine(depth, { skip: [...server.mempool.keys()] });
            return Promise.resolve();
          });
        },
        kill: {
          kind: "expired",
          async run(tx) {
            // Sent, but no miner takes it: it waits in the mempool until its expiry height passes, then is dropped.
            await zec.payer.broadcast(tx);
            server.neverMine(tx.txHash);
          },
        },
        purposes: {
          consolidation: utxoConsolidation(zec.payer, settings.fee, (label, tx) => {
            byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
          }),
        },
        unsupported: {
          "skipped block scanned past": "a UTXO chain has a block at every height",
          ...UTXO_PURPOSES_UNSUPPORTED,
        },
        close: () => Promise.resolve(),
      };
      await runChainContract(t, harness);
    });
  } finally {
    await server.close();
  }
});

Deno.test("zec adapter on a Zebra-shaped RPC server: a recorded payout is proven dead only once the final height passes its expiry", async () => {
  const server = ZebraShapedServer.start({ network, initialBlocks: 5 });
  try {
    const settings: UtxoSettings = { confirmations: 3, fee: utxoFee("zec"), expiryWindow: 6 };
    const zec = zecOnZebra(server, settings);
    const coin = await zec.depositCoin(1, ZEC);
    const tx = await zec.payer.preparePayout({
      orderId: "o1",
      to: elsewhere,
      amount: ZEC / 2n,
      memo: null,
      coins: [coin],
    });
    assert.ok(tx.expiry?.kind === "height");
    assert.equal(tx.expiry.value, server.tipHeight + settings.expiryWindow);
    await zec.payer.broadcast(tx);
    server.neverMine(tx.txHash);
    const own = { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes };
    const seen: [number, string][] = [];
    // Final height = tip - confirmations + 1: dead exactly when it is above the expiry height, never before.
    while (server.tipHeight - settings.confirmations + 1 <= tx.expiry.value) {
      const s = await zec.reader.txStatus(tx.txHash, own);
      seen.push([server.tipHeight, s.state]);
      assert.notEqual(s.state, "dead", `tip ${server.tipHeight}: final height not past expiry ${tx.expiry.value}`);
      server.mine(1);
    }
    assert.ok(seen.some(([, s]) => s === "pending"), "it waited in the mempool first");
    assert.ok(seen.some(([, s]) => s === "unknown"), "then, dropped but not yet final past expiry: unknown");
    const dead = await zec.reader.txStatus(tx.txHash, own);
    assert.ok(dead.state === "dead", JSON.stringify(dead));
    assert.equal(dead.proof.kind, "expired");
    assert.ok(dead.proof.kind === "expired" && dead.proof.reached === tx.expiry.value + 1);
    // Never without the recorded transaction.
    assert.equal((await zec.reader.txStatus(tx.txHash)).state, "unknown");
  } finally {
    await server.close();
  }
});
