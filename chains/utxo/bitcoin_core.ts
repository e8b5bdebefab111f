/**
 * `UtxoNode` for the Bitcoin Core family: Dogecoin Core 1.14 in production, Debian's litecoind 0.21 regtest in tests.
 *
 * Why this shape: Dogecoin Core 1.14 has no `getblock` verbosity 2 (its verbose flag is a boolean), and the `value` of
 * its verbose transactions is a JSON float. So a range of blocks is read as
 *   1. `getblockhash(h)` for each height (one batched request),
 *   2. `getblock(hash, false)` for each (one batched request): the raw block, read by chains/utxo/raw_block.ts (its
 *      AuxPoW header skipped, every transaction decoded with bitcoinjs-lib, bigint values): the node's floats are never
 *      read. Two calls per block whatever its size, and the fewest bytes the node can answer a block in (its
 *      transactions' hex once, no per-transaction JSON); `getblock(hash, true)` plus `getrawtransaction` per txid took
 *      2 + txs calls per block.
 * How many heights one call reads is the caller's (chains/utxo/reader.ts sizes them by the bytes answered), at most
 * `MAX_BLOCKS_PER_CALL`. Nothing depends on how many addresses are ours: the watcher matches outputs against its own KV
 * index afterwards.
 *
 * Needs `-txindex` on the node: `getrawtransaction` of a mined transaction (`findTx`: a deposit's sender, a payout's
 * place) answers "No such mempool or blockchain transaction" (-5) without it, except for mempool transactions.
 *
 * Litecoin's MWEB: litecoind 0.21 activates MWEB on regtest at height 432; from then each block carries a HogEx
 * transaction and MWEB transactions serialised with a flag bitcoinjs cannot decode (and mining stops with
 * `bad-txns-vin-empty` until something pegs in). Dogecoin has no MWEB: tests start litecoind with
 * `-vbparams=mweb:-2:0` (never active), and a transaction this module cannot decode is an error naming it, never
 * skipped (skipping could miss a deposit).
 */
import { type Outpoint, TransientChainError } from "../adapter.ts";
import type { UtxoNetwork } from "./network.ts";
import { decodeCoreTx, decodeRawBlock } from "./raw_block.ts";
import type { UtxoBlockView, UtxoNode, UtxoTxPlace } from "./node.ts";
import { RpcError, type UtxoRpc } from "./rpc.ts";
import {
  coreBlockHashAnswer,
  coreChainInfoAnswer,
  coreHeaderAnswer,
  coreRawBlockAnswer,
  coreTxOutAnswer,
  coreVerboseTxAnswer,
  utxoAnswer,
} from "./answers.ts";

/** Most heights one `blocks` call reads (a watcher asks for more: it gets a prefix and asks again). */
const MAX_BLOCKS_PER_CALL = 100;

/** Bitcoin Core's RPC error codes used here. */
const RPC_INVALID_ADDRESS_OR_KEY = -5; // unknown transaction or block
const RPC_INVALID_PARAMETER = -8; // getblockhash: height out of range
const RPC_VERIFY_ALREADY_IN_CHAIN = -27;

function unwrap<T>(r: T | RpcError): T {
  if (r instanceof RpcError) throw r;
  return r;
}

export function bitcoinCoreNode(rpc: UtxoRpc, network: UtxoNetwork): UtxoNode {
  const chain = network.chain;

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

    async blocks(from, to, meter) {
      if (from < 0 || to < from) return [];
      const last = Math.min(to, from + MAX_BLOCKS_PER_CALL - 1);
      const heights = Array.from({ length: last - from + 1 }, (_, i) => from + i);
      const hashes: string[] = [];
      for (const r of await rpc.batch(heights.map((h) => ({ method: "getblockhash", params: [h] })), meter)) {
        if (r instanceof RpcError && r.code === RPC_INVALID_PARAMETER) break; // above the tip: stop there
        hashes.push(utxoAnswer(chain, "getblockhash", coreBlockHashAnswer, unwrap(r)));
      }
      if (hashes.length === 0) return [];
      const raws: unknown[] = await rpc.batch(hashes.map((h) => ({ method: "getblock", params: [h, false] })), meter);
      const out: UtxoBlockView[] = [];
      for (let i = 0; i < raws.length; i++) {
        const hex = utxoAnswer(chain, "getblock", coreRawBlockAnswer, unwrap(raws[i]));
        raws[i] = undefined; // one block at a time: each answer is released once read
        const block = decodeRawBlock(network, hex, from + i, hashes[i]);
        // A reorg between the two requests: the blocks no longer link. Retry later rather than return a chain that
        // never existed (a last block that left the chain since is the watcher's to see: its hash no longer matches).
        if (i > 0 && block.parentHash !== out[i - 1].hash) {
          throw new TransientChainError(`${chain}: the chain changed while blocks ${from}..${last} were read`);
        }
        out.push(block);
      }
      return out;
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
