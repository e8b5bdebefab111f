/**
 * `UtxoNode` for the Bitcoin Core family: Dogecoin Core 1.14 in production, Debian's litecoind 0.21 regtest in tests.
 *
 * Why this shape: Dogecoin Core 1.14 has no `getblock` verbosity 2 (its verbose flag is a boolean), and the `value` of
 * its verbose transactions is a JSON float. So a block is read as
 *   1. `getblockhash(h)` for each height (one batched request for the range),
 *   2. `getblock(hash, true)` for `previousblockhash` and the txids (one batched request),
 *   3. `getrawtransaction(txid, false)` for every txid (batched, `TX_BATCH` per request), the hex decoded here with
 *      bitcoinjs-lib (`Transaction.fromHex`, bigint values in v7): the node's floats are never read.
 * RPC calls per block: 2 + the block's transaction count (coinbase included), in 2 + ceil(txs / TX_BATCH) HTTP
 * requests per scanned range. Nothing depends on how many addresses are ours: the watcher matches outputs against its
 * own KV index afterwards. Parsing raw blocks would need one call per block but an AuxPoW header parser
 * (`nVersion & 0x100`, which bitcoinjs's `Block.fromHex` cannot read); the txid route reuses the node's parser.
 *
 * Needs `-txindex` on the node: `getrawtransaction` of a mined transaction (every scanned one, and `findTx`) answers
 * "No such mempool or blockchain transaction" (-5) without it, except for mempool transactions.
 *
 * Litecoin's MWEB: litecoind 0.21 activates MWEB on regtest at height 432; from then each block carries a HogEx
 * transaction and MWEB transactions serialised with a flag bitcoinjs cannot decode (and mining stops with
 * `bad-txns-vin-empty` until something pegs in). Dogecoin has no MWEB: tests start litecoind with
 * `-vbparams=mweb:-2:0` (never active), and a transaction this module cannot decode is an error naming it, never
 * skipped (skipping could miss a deposit).
 */
import { Transaction } from "bitcoinjs-lib";
import { type Outpoint, TransientChainError } from "../adapter.ts";
import { scriptAddress, type UtxoNetwork } from "./network.ts";
import type { UtxoBlockView, UtxoNode, UtxoTxPlace, UtxoTxView } from "./node.ts";
import { RpcError, type UtxoRpc } from "./rpc.ts";
import {
  coreBlockAnswer,
  coreBlockHashAnswer,
  coreChainInfoAnswer,
  coreHeaderAnswer,
  coreRawTxAnswer,
  coreTxOutAnswer,
  coreVerboseTxAnswer,
  utxoAnswer,
} from "./answers.ts";

/** getrawtransaction calls per HTTP request: a block with thousands of transactions is read in a few requests. */
const TX_BATCH = 500;
/** Most heights one `blocks` call reads (a watcher asks for more: it gets a prefix and asks again). */
const MAX_BLOCKS_PER_CALL = 100;

/** Bitcoin Core's RPC error codes used here. */
const RPC_INVALID_ADDRESS_OR_KEY = -5; // unknown transaction or block
const RPC_INVALID_PARAMETER = -8; // getblockhash: height out of range
const RPC_VERIFY_ALREADY_IN_CHAIN = -27;

function hexOf(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

/** A transaction's hex as the node serialises it, decoded to the shared view (legacy or segwit serialisation). */
export function decodeCoreTx(network: UtxoNetwork, hex: string, expectTxid?: string): UtxoTxView {
  let tx: Transaction;
  try {
    tx = Transaction.fromHex(hex);
  } catch (err) {
    throw new Error(
      `${network.chain}: cannot decode transaction ${expectTxid ?? "(unnamed)"} (${
        err instanceof Error ? err.message : String(err)
      }); not a Bitcoin-style serialisation (a Litecoin MWEB transaction?)`,
    );
  }
  const txid = tx.getId();
  if (expectTxid !== undefined && txid !== expectTxid) {
    throw new Error(`${network.chain}: the node's bytes for ${expectTxid} hash to ${txid}`);
  }
  const coinbase = tx.isCoinbase();
  return {
    txid,
    coinbase,
    inputs: coinbase ? [] : tx.ins.map((i) => ({ txHash: hexOf(Uint8Array.from(i.hash).reverse()), index: i.index })),
    outputs: tx.outs.map((o, index) => ({ index, address: scriptAddress(network, o.script), amount: o.value })),
  };
}

function unwrap<T>(r: T | RpcError): T {
  if (r instanceof RpcError) throw r;
  return r;
}

export function bitcoinCoreNode(rpc: UtxoRpc, network: UtxoNetwork): UtxoNode {
  const chain = network.chain;

  async function rawTxs(txids: readonly string[]): Promise<UtxoTxView[]> {
    const out: UtxoTxView[] = [];
    for (let i = 0; i < txids.length; i += TX_BATCH) {
      const part = txids.slice(i, i + TX_BATCH);
      const hexes = await rpc.batch(part.map((txid) => ({ method: "getrawtransaction", params: [txid, false] })));
      hexes.forEach((r, j) => {
        if (r instanceof RpcError && r.code === RPC_INVALID_ADDRESS_OR_KEY) throw txindexMissing(chain, r, part[j]);
        out.push(decodeCoreTx(network, utxoAnswer(chain, "getrawtransaction", coreRawTxAnswer, unwrap(r)), part[j]));
      });
    }
    return out;
  }

  return {
    network,

    async tip() {
      // One call, consistent: the node answers both under one lock.
      const info = utxoAnswer(chain, "getblockchaininfo", coreChainInfoAnswer, await rpc.call("getblockchaininfo"));
      return { number: info.blocks, hash: info.bestblockhash };
    },

    async blockHash(height) {
      if (!Number.isSafeInteger(height) || height < 0) return null;
      try {
        return utxoAnswer(chain, "getblockhash", coreBlockHashAnswer, await rpc.call("getblockhash", [height]));
      } catch (err) {
        if (err instanceof RpcError && err.code === RPC_INVALID_PARAMETER) return null;
        throw err;
      }
    },

    async blocks(from, to) {
      if (from < 0 || to < from) return [];
      const last = Math.min(to, from + MAX_BLOCKS_PER_CALL - 1);
      const heights = Array.from({ length: last - from + 1 }, (_, i) => from + i);
      const hashes: string[] = [];
      for (const r of await rpc.batch(heights.map((h) => ({ method: "getblockhash", params: [h] })))) {
        if (r instanceof RpcError && r.code === RPC_INVALID_PARAMETER) break; // above the tip: stop there
        hashes.push(utxoAnswer(chain, "getblockhash", coreBlockHashAnswer, unwrap(r)));
      }
      if (hashes.length === 0) return [];
      const blocks = (await rpc.batch(hashes.map((h) => ({ method: "getblock", params: [h, true] }))))
        .map((r) => utxoAnswer(chain, "getblock", coreBlockAnswer, unwrap(r)));
      blocks.forEach((b, i) => {
        // A reorg between the two requests: the hash read for a height is no longer canonical, or the blocks no
        // longer link. Retry later rather than return a chain that never existed.
        if (b.confirmations < 1 || (i > 0 && b.previousblockhash !== blocks[i - 1].hash)) {
          throw new TransientChainError(`${chain}: the chain changed while blocks ${from}..${last} were read`);
        }
      });
      const txs = await rawTxs(blocks.flatMap((b) => b.tx));
      let at = 0;
      return blocks.map((b): UtxoBlockView => {
        const mine = txs.slice(at, at + b.tx.length);
        at += b.tx.length;
        return { number: b.height, hash: b.hash, parentHash: b.previousblockhash ?? "0".repeat(64), txs: mine };
      });
    },

    async findTx(txid): Promise<UtxoTxPlace> {
      let answer: unknown;
      try {
        // Mempool first, then the transaction index (-txindex): only `hex`, `blockhash` and `confirmations` are read.
        answer = await rpc.call("getrawtransaction", [txid, true]);
      } catch (err) {
        if (err instanceof RpcError && err.code === RPC_INVALID_ADDRESS_OR_KEY) {
          // Without the index the node only knows its mempool, and says so ("Use -txindex to enable blockchain
          // transaction queries"): every mined transaction would look unknown, so that is an error, not an answer.
          if (/-txindex/.test(err.message)) throw txindexMissing(chain, err);
          return { where: "nowhere" };
        }
        throw err;
      }
      const verbose = utxoAnswer(chain, "getrawtransaction", coreVerboseTxAnswer, answer);
      const tx = decodeCoreTx(network, verbose.hex, txid);
      if (!verbose.blockhash) return { where: "mempool", tx };
      // The index keeps transactions of blocks that left the best chain: the node then says 0 confirmations.
      if (!verbose.confirmations || verbose.confirmations < 1) return { where: "nowhere" };
      const header = utxoAnswer(
        chain,
        "getblockheader",
        coreHeaderAnswer,
        await rpc.call("getblockheader", [verbose.blockhash]),
      );
      if (header.confirmations < 1) return { where: "nowhere" };
      return {
        where: "block",
        height: header.height,
        blockHash: verbose.blockhash,
        confirmations: header.confirmations,
        tx,
      };
    },

    async send(rawHex) {
      try {
        await rpc.call("sendrawtransaction", [rawHex]);
      } catch (err) {
        if (err instanceof RpcError && isAlreadyKnown(err)) return;
        throw err;
      }
    },

    async isUnspent(outpoint: Outpoint) {
      // include_mempool = false: a spend only in the mempool proves nothing.
      const out = await rpc.call("gettxout", [outpoint.txHash, outpoint.index, false]);
      return utxoAnswer(chain, "gettxout", coreTxOutAnswer, out) !== null;
    },
  };
}

function txindexMissing(chain: string, err: RpcError, txid?: string): Error {
  return new Error(
    `${chain}: the node cannot look up mined transactions${txid ? ` (${txid}, in a block it served)` : ""}: ` +
      `run it with -txindex (and -reindex once if it ran without): ${err.message}`,
    { cause: err },
  );
}

/** The node already has these bytes: mined, or in its mempool (Dogecoin Core 1.14 and Bitcoin Core 0.21 wordings). */
function isAlreadyKnown(err: RpcError): boolean {
  return err.code === RPC_VERIFY_ALREADY_IN_CHAIN ||
    /already in block chain|txn-already-in-mempool|txn-already-known/i.test(err.message);
}
