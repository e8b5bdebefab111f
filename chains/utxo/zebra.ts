/**
 * The UtxoNode of Zcash, over Zebra's JSON-RPC (zcashd is retired; Zebra has no wallet and no `gettxout`).
 *
 * Fields relied on, and where Zebra documents them (ZcashFoundation/zebra, zebra-rpc/src/methods.rs and
 * zebra-rpc/src/methods/types/transaction.rs `TransactionObject`; response shapes pinned by the snapshot tests in
 * zebra-rpc/src/methods/tests/snapshots/):
 * - `getblockchaininfo` (get_blockchain_info@mainnet_10.snap): `chain` ("main", "test", "regtest"), `blocks` (tip
 *   height), `bestblockhash`, `consensus.nextblock` (the next block's consensus branch id, 8 hex digits, no 0x).
 * - `getblockhash(height)`: the hash; a height above the tip is an error: -1 "Provided index is greater than the
 *   current tip" (jsonrpsee's -32602 rewritten by zebra-rpc/src/server/rpc_call_compatibility.rs), -32602 in older
 *   releases, -8 in zcashd's: null here (`aboveTip`). -1 is also Zebra's code for any other failure, so only with
 *   that message.
 * - `getblock(height as a string, 2)` (get_block_verbose_height_verbosity_2@mainnet_10.snap): `hash`, `height`,
 *   `previousblockhash` (absent for genesis), `tx[]` as TransactionObjects: `txid`, `vin[]` (`coinbase` for the
 *   coinbase input, else `txid` + `vout`), `vout[]` with `n`, `valueZat` (integer zatoshis) and `scriptPubKey.hex`.
 *   The float `value` is never read; addresses come from the script bytes (network.ts `scriptAddress`), never from
 *   the node's `addresses`. Verbosity 2 rather than 0 (the raw block, about half the bytes: each TransactionObject
 *   carries its `hex` beside the decoded fields) because a raw Zcash block holds v4 (Sapling) and v5 transactions
 *   whose shielded parts this service would have to parse only to skip them; the reader bounds either by bytes
 *   (chains/utxo/reader.ts, docs/scan-budget.md).
 * - `getrawtransaction(txid, 1)` (get_raw_transaction_verbosity_1@mainnet_10.snap, getrawtransaction_unknown_txid):
 *   `height` and `confirmations` present only when the transaction is in a best-chain block (absent in the mempool),
 *   `blockhash` in recent releases (else looked up by height), `vin`/`vout` as above; unknown: code -5 "Transaction
 *   not found in mempool or best chain".
 * - `sendrawtransaction(hex)`: the txid. Zebra's error codes for "already known" changed between releases, so any
 *   rejection is followed by a lookup: bytes the node already has (mempool or best chain) are success.
 */
import { type Outpoint, TransientChainError } from "../adapter.ts";
import type { UtxoBlockView, UtxoNode, UtxoTxPlace, UtxoTxView } from "./node.ts";
import { scriptAddress, type UtxoNetwork } from "./network.ts";
import { RpcError, type UtxoRpc } from "./rpc.ts";
import { fromHex, isCoinbase, parseZecV5, toHex, zecTxid } from "./zec_zip244.ts";
import {
  blockAnswer,
  blockHashAnswer,
  chainInfoAnswer,
  rawTransactionAnswer,
  utxoAnswer,
  zatoshi,
  type ZebraBlock,
  type ZebraChainInfo,
  type ZebraTx,
} from "./answers.ts";

const NULL_HASH = "0".repeat(64);
/** zebra-rpc/src/methods.rs `height_from_signed_int`, for a height above the tip (docs/toolchain-notes.md). */
const ABOVE_TIP_MESSAGE = "Provided index is greater than the current tip";

/** Whether `getblockhash`'s error says the height is above the node's tip: no block there yet. */
function aboveTip(e: unknown): boolean {
  if (!(e instanceof RpcError)) return false;
  return e.code === -8 || e.code === -32602 || (e.code === -1 && e.message.includes(ABOVE_TIP_MESSAGE));
}

/** A zatoshi amount as Zebra's `valueZat`: a non-negative safe integer, nothing else (never the float `value`). */
export function zatoshis(value: unknown, where: string): bigint {
  const read = zatoshi.safeParse(value);
  if (!read.success) {
    throw new Error(`zec: Zebra's valueZat ${JSON.stringify(value)} at ${where} is not a whole number of zatoshis`);
  }
  return read.data;
}

function txView(network: UtxoNetwork, tx: ZebraTx, txid: string): UtxoTxView {
  if (!tx.vin || !tx.vout) {
    // Releases without vin/vout in the verbose object: decode the bytes (v5 only; older formats predate NU5).
    if (!tx.hex) throw new Error(`zec: Zebra gave neither vin/vout nor hex for ${txid}`);
    return decodedView(network, tx.hex);
  }
  const coinbase = tx.vin.length > 0 && tx.vin[0].coinbase !== undefined;
  // Every input but the coinbase's names its outpoint (answers.ts).
  const inputs: Outpoint[] = coinbase ? [] : tx.vin.map((vin) => ({ txHash: vin.txid!, index: vin.vout! }));
  const outputs = tx.vout.map((out) => ({
    index: out.n,
    address: scriptAddress(network, fromHex(out.scriptPubKey.hex)),
    amount: out.valueZat,
  }));
  return { txid, coinbase, inputs, outputs };
}

function decodedView(network: UtxoNetwork, hex: string): UtxoTxView {
  const tx = parseZecV5(fromHex(hex));
  const coinbase = isCoinbase(tx);
  return {
    txid: zecTxid(tx),
    coinbase,
    inputs: coinbase ? [] : tx.inputs.map((i) => ({ txHash: toHex(i.prevHash.slice().reverse()), index: i.prevIndex })),
    outputs: tx.outputs.map((o, index) => ({ index, address: scriptAddress(network, o.script), amount: o.value })),
  };
}

export function zebraNode(rpc: UtxoRpc, network: UtxoNetwork): UtxoNode {
  if (network.chain !== "zec") throw new Error(`zebraNode serves zec, not ${network.chain}`);
  let chainChecked = false;

  async function info(): Promise<ZebraChainInfo> {
    const i = utxoAnswer("zec", "getblockchaininfo", chainInfoAnswer, await rpc.call("getblockchaininfo"));
    if (!chainChecked) {
      if (!network.nodeChainNames.includes(i.chain)) {
        throw new Error(
          `zec: the Zebra node is on chain "${i.chain}", but this service is configured for ${network.name} ` +
            `(expects ${network.nodeChainNames.join(" or ")}): check ZEC_RPC_URLS and CHAIN_MODE`,
        );
      }
      chainChecked = true;
    }
    return i;
  }

  async function blockHash(height: number): Promise<string | null> {
    try {
      return utxoAnswer("zec", "getblockhash", blockHashAnswer, await rpc.call("getblockhash", [height]));
    } catch (e) {
      if (aboveTip(e)) return null;
      throw e;
    }
  }

  function blockView(b: ZebraBlock): UtxoBlockView {
    return {
      number: b.height,
      hash: b.hash,
      parentHash: b.previousblockhash ?? NULL_HASH,
      txs: b.tx.map((tx) => txView(network, tx, tx.txid)),
    };
  }

  async function findTx(txid: string): Promise<UtxoTxPlace> {
    let answer: unknown;
    try {
      answer = await rpc.call("getrawtransaction", [txid, 1]);
    } catch (e) {
      if (e instanceof RpcError && e.code === -5) return { where: "nowhere" };
      throw e;
    }
    const tx = utxoAnswer("zec", "getrawtransaction", rawTransactionAnswer, answer);
    const view = txView(network, tx, txid);
    if (typeof tx.height !== "number") return { where: "mempool", tx: view };
    const hash = tx.blockhash ?? await blockHash(tx.height);
    // The block was reorganised away between the two calls: the next look will say where it is now.
    if (hash === null) return { where: "mempool", tx: view };
    return { where: "block", height: tx.height, blockHash: hash, confirmations: tx.confirmations ?? 1, tx: view };
  }

  return {
    network,
    async tip() {
      const i = await info();
      return { number: i.blocks, hash: i.bestblockhash };
    },
    blockHash,
    async blocks(from, to, meter) {
      if (from < 0 || to < from) return [];
      const heights = Array.from({ length: to - from + 1 }, (_, k) => from + k);
      // Zebra's getblock takes the height as a string ("hash_or_height"); a height above the tip answers -8, so no
      // tip is read first (one request per range, not two).
      const replies: unknown[] = await rpc.batch(
        heights.map((h) => ({ method: "getblock", params: [String(h), 2] })),
        meter,
      );
      const out: UtxoBlockView[] = [];
      for (let k = 0; k < replies.length; k++) {
        const r = replies[k];
        replies[k] = undefined; // one block at a time: each answer is released once read
        if (r instanceof RpcError) {
          if (r.code === -8) break; // above the tip (or the tip moved back in a reorg): stop at what exists
          throw r;
        }
        // Each block is read whole before any of it is returned: a malformed one refuses the range.
        const block = blockView(utxoAnswer("zec", "getblock", blockAnswer, r));
        if (k > 0 && block.parentHash !== out[k - 1].hash) {
          throw new TransientChainError(`zec: the chain changed while blocks ${from}..${to} were read`);
        }
        out.push(block);
      }
      return out;
    },
    findTx,
    async send(rawHex) {
      try {
        await rpc.call("sendrawtransaction", [rawHex]);
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        let txid: string;
        try {
          txid = zecTxid(parseZecV5(fromHex(rawHex)));
        } catch {
          throw e;
        }
        const place = await findTx(txid);
        if (place.where === "nowhere") throw e;
        // Already in the mempool or the best chain: the same bytes, sent before.
      }
    },
    async addressUtxos(address) {
      // zebra-rpc `getaddressutxos({addresses})`: [{address, txid, outputIndex, script, satoshis, height}].
      const answer = await rpc.call("getaddressutxos", [{ addresses: [address] }]);
      if (!Array.isArray(answer)) throw new Error(`zec: getaddressutxos answered ${typeof answer}, not a list`);
      return answer.map((u) => {
        const ok = typeof u === "object" && u !== null && typeof u.txid === "string" &&
          /^[0-9a-f]{64}$/i.test(u.txid) && Number.isSafeInteger(u.outputIndex) && u.outputIndex >= 0;
        if (!ok) throw new Error(`zec: getaddressutxos answered an entry without txid and outputIndex`);
        return { txHash: (u.txid as string).toLowerCase(), index: u.outputIndex as number };
      });
    },
    async nextBranchId() {
      const next = (await info()).consensus?.nextblock;
      if (typeof next !== "string" || !/^[0-9a-fA-F]{8}$/.test(next)) {
        throw new Error(`zec: Zebra's getblockchaininfo has no consensus.nextblock branch id (got ${next})`);
      }
      return parseInt(next, 16);
    },
  };
}
