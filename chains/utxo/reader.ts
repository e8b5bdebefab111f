/**
 * The shared UTXO `ChainReader` (doge, zec) over a `UtxoNode` (bitcoin_core.ts or zebra.ts). Finality is depth: the
 * catalog's confirmations alone decide.
 *
 * - `scan`: every output paying a P2PKH/P2SH address becomes a transfer (txHash, output index, amount); P2PK, bare
 *   multisig, OP_RETURN and other scripts have no address and are ignored. `from` is empty (a transaction has inputs,
 *   not a sender: `senderOf` answers it for the transfers that pay us). Coinbase outputs carry `coinbase: true`.
 *   Bounded by bytes (docs/scan-budget.md, "Dogecoin and Zcash"): blocks asked in requests sized by `BatchSizer` (chains/shared/batch_sizer.ts)
 *   from the bytes the last ones brought back, a request a provider refuses asked again in halves down to one block,
 *   and the scan stops at `ScanOptions.maxBytes` after a whole request. `ours` is not used: these blocks may still be
 *   replaced by a reorg, so every transfer is kept for the watcher to match.
 * - `txStatus`: in a block -> included; in the mempool -> pending; nowhere -> with our recorded transaction:
 *   (a) expired (zec): the final height (tip - confirmations + 1) is past its `nExpiryHeight`: no canonical block can
 *       hold it any more;
 *   (b) one of its inputs spent in the best chain: the spender is looked for (see `findSpender`). When its outputs
 *       and inputs are exactly ours it IS our payout under another txid (Dogecoin txids are malleable: anyone relaying
 *       it can re-encode the signature) -> included, `txHash` the mined one. Otherwise a conflict, dead once the
 *       spender has `confirmations` confirmations, unknown before. Mempool facts never prove anything.
 */
import type {
  BlockScanStats,
  ChainReader,
  ObservedTransfer,
  Outpoint,
  OwnTx,
  ScannedBlock,
  ScanOptions,
  TxStatus,
} from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import { decodeCoreTx } from "./raw_block.ts";
import type { UtxoBlockView, UtxoNode, UtxoTxView } from "./node.ts";
import { MAX_SCAN_BATCH, UTXO_TARGET_RESPONSE_BYTES } from "./scan_sizer.ts";
import { BatchSizer } from "../shared/batch_sizer.ts";

/**
 * How far below the tip a conflicting spend of our input is looked for, at most. The search goes from the tip down to
 * the block the coin was created in (read from the node; `consumes.since`, the lowest of our coins' heights, is the
 * recorded floor): no spend of it can be older. It stops at the first spender found, and never goes more
 * than this many blocks (Dogecoin, 1-minute blocks: two days; Zcash, 75 s: two and a half), so a payout spending a months-old coin costs a
 * bounded number of RPC calls per status check. A spender older than this is not found: the payout stays `unknown`,
 * visible to operators as stuck with its age, never wrongly dead.
 */
export const CONFLICT_SEARCH_BLOCKS = 2_880;
/** Blocks read per node request while searching (newest first: the spender is nearly always recent). */
const SEARCH_STEP = 20;

export interface UtxoReaderOptions {
  chain: UtxoChain;
  confirmations: number;
  /** Bytes one block request should bring back (default `UTXO_TARGET_RESPONSE_BYTES`). */
  targetResponseBytes?: number;
  /** Where a refused or failed block request is reported (default `console.warn`). */
  log?: (message: string) => void;
}

/**
 * What this reader's scans read and built: a Dogecoin block request is two HTTP requests (the hashes, then the
 * blocks); every output paying a P2PKH/P2SH address is a transfer built (a reorg may replace these blocks: none is
 * dropped).
 */
export type UtxoScanStats = BlockScanStats;

/** The UTXO reader, with what its scans read. */
export type UtxoReader = ChainReader & { readonly stats: UtxoScanStats };

export function transfersOfTx(tx: UtxoTxView): ObservedTransfer[] {
  const transfers: ObservedTransfer[] = [];
  for (const out of tx.outputs) {
    if (out.address === null) continue;
    transfers.push({
      txHash: tx.txid,
      index: out.index,
      from: "",
      to: out.address,
      amount: out.amount,
      asset: "native",
      ...(tx.coinbase ? { coinbase: true as const } : {}),
    });
  }
  return transfers;
}

/**
 * Whether `mined` is the transaction `raw` under another txid: same inputs in the same order, same outputs (address
 * and amount) in the same order. Only doge needs it: a zec v5 txid (ZIP-244) does not commit to signatures, so it
 * cannot be malleated and another txid is another transaction.
 */
function sameEffects(node: UtxoNode, raw: string, mined: UtxoTxView): boolean {
  if (node.network.chain !== "doge") return false;
  const ours = decodeCoreTx(node.network, raw);
  const key = (o: Outpoint) => `${o.txHash}:${o.index}`;
  return ours.inputs.length === mined.inputs.length &&
    ours.inputs.every((o, i) => key(o) === key(mined.inputs[i])) &&
    ours.outputs.length === mined.outputs.length &&
    ours.outputs.every((o, i) =>
      o.address !== null && o.address === mined.outputs[i].address && o.amount === mined.outputs[i].amount
    );
}

export function utxoReader(node: UtxoNode, opts: UtxoReaderOptions): UtxoReader {
  const { chain, confirmations } = opts;
  const sizer = new BatchSizer(opts.targetResponseBytes ?? UTXO_TARGET_RESPONSE_BYTES, MAX_SCAN_BATCH);
  const stats: UtxoScanStats = {
    requests: 0,
    bytes: 0,
    largestResponse: 0,
    blocks: 0,
    transfersBuilt: 0,
    fallbacks: 0,
  };
  const log = opts.log ?? ((message: string) => console.warn(message));
  if (!Number.isSafeInteger(confirmations) || confirmations < 1) {
    throw new Error(`${chain}: confirmations must be a positive integer, got ${confirmations}`);
  }

  /**
   * The canonical transaction spending `spent`, searched from the tip down to `since` (bounded, see
   * CONFLICT_SEARCH_BLOCKS), with its height; null when not found.
   */
  async function findSpender(
    spent: Outpoint,
    since: number | undefined,
    tip: number,
  ): Promise<{ tx: UtxoTxView; height: number } | null> {
    // The coin's own transaction bounds the search from below, tighter than `since` for all but the oldest coin;
    // when it is in no canonical block any more (a reorg took it), nothing can spend it and nothing is searched.
    const origin = await node.findTx(spent.txHash);
    if (origin.where !== "block") return null;
    const floor = Math.max(origin.height, since ?? 0, tip - CONFLICT_SEARCH_BLOCKS + 1, 0);
    for (let top = tip; top >= floor; top -= SEARCH_STEP) {
      const blocks = await node.blocks(Math.max(floor, top - SEARCH_STEP + 1), top);
      for (const b of blocks.reverse()) {
        for (const tx of b.txs) {
          if (tx.inputs.some((i) => i.txHash === spent.txHash && i.index === spent.index)) {
            return { tx, height: b.number };
          }
        }
      }
    }
    return null;
  }

  /**
   * The first input of each transaction of the last scanned range: the watcher asks `senderOf` for the deposits it
   * just found in that range, so the deposit transaction itself need not be fetched again (one lookup per deposit,
   * the spent output's transaction, instead of two). Replaced at every scan, so it never outgrows one range.
   */
  let firstInputs = new Map<string, Outpoint | null>();

  async function statusOfNowhere(txHash: string, ours: OwnTx): Promise<TxStatus> {
    const tip = (await node.tip()).number;
    const finalHeight = tip - confirmations + 1;
    if (ours.expiry && finalHeight > ours.expiry.value) {
      return {
        state: "dead",
        proof: { kind: "expired", expiry: ours.expiry, reached: finalHeight },
        detail: `${chain} ${txHash}: not in the chain, and the final height ${finalHeight} is past its expiry ` +
          `height ${ours.expiry.value}`,
      };
    }
    const consumed = ours.consumes;
    if (consumed?.kind !== "outpoints" || !node.isUnspent) return { state: "unknown" };
    for (const outpoint of consumed.outpoints) {
      if (await node.isUnspent(outpoint) !== false) continue;
      const spender = await findSpender(outpoint, consumed.since, tip);
      if (!spender) continue; // reorganised away since, or older than the search bound: nothing proven
      const spenderConfirmations = tip - spender.height + 1;
      if (sameEffects(node, ours.raw, spender.tx)) {
        return {
          state: "included",
          blockNumber: spender.height,
          confirmations: spenderConfirmations,
          success: true,
          txHash: spender.tx.txid,
        };
      }
      if (spenderConfirmations < confirmations) return { state: "unknown" };
      // The proof names the inputs of ours this spender took, and only those: they are gone for good (the treasury
      // marks them spent by it, model/sent_tx_effects.ts), while our other inputs are still unspent and only released.
      const taken = consumed.outpoints.filter((o) =>
        spender.tx.inputs.some((i) => i.txHash === o.txHash && i.index === o.index)
      );
      return {
        state: "dead",
        proof: { kind: "conflict", consumed: { kind: "outpoints", outpoints: taken }, spentBy: spender.tx.txid },
        detail: `${chain} ${txHash}: its input${taken.length > 1 ? "s" : ""} ` +
          `${taken.map((o) => `${o.txHash}:${o.index}`).join(", ")} ${taken.length > 1 ? "are" : "is"} spent by ` +
          `${spender.tx.txid} at height ${spender.height}, ${spenderConfirmations} confirmations deep`,
      };
    }
    return { state: "unknown" };
  }

  return {
    chain,
    finality: { kind: "depth" },

    tip: () => node.tip(),

    blockHash: (number) => node.blockHash(number),

    async scan(from, to, scanOpts: ScanOptions = {}) {
      const out: ScannedBlock[] = [];
      const inputs = new Map<string, Outpoint | null>();
      const meter: ByteMeter = { bytes: 0 };
      let next = Math.max(0, from);
      while (next <= to) {
        // The byte budget ends the scan at a block boundary, never before one block is in hand: an empty answer
        // would say the range is above the tip.
        if (scanOpts.maxBytes !== undefined && out.length > 0 && meter.bytes >= scanOpts.maxBytes) break;
        const want = Math.min(sizer.size, to - next + 1);
        const before = meter.bytes;
        let blocks: UtxoBlockView[];
        try {
          blocks = await node.blocks(next, next + want - 1, meter);
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          if (want === 1) {
            log(`${chain}: block ${next} failed on its own (${why}); the watcher stays before it and asks again`);
            throw err;
          }
          // A provider that caps batches or answer sizes (one error object, 413, "response too large", a timeout on
          // a large answer, Dogecoin Core's full work queue): the same blocks again in smaller requests, down to one
          // block each. Never a stall on the batch itself.
          sizer.refused(want);
          stats.fallbacks++;
          log(
            `${chain}: blocks ${next}..${
              next + want - 1
            } in one request failed (${why}); asking ${sizer.size} at a time`,
          );
          continue;
        }
        const got = meter.bytes - before;
        stats.requests++;
        stats.bytes += got;
        stats.largestResponse = Math.max(stats.largestResponse, got);
        if (scanOpts.meter) scanOpts.meter.bytes += got;
        if (blocks.length === 0) break; // above the tip
        sizer.answered(blocks.length, got);
        for (let k = 0; k < blocks.length; k++) {
          const b = blocks[k];
          blocks[k] = undefined as unknown as UtxoBlockView; // one block at a time: released once read
          for (const tx of b.txs) inputs.set(tx.txid, tx.coinbase ? null : tx.inputs[0] ?? null);
          // Every transfer is kept (ours is not used): a reorg may still replace these blocks, and the watcher matches
          // against an address set refreshed after the read (docs/scan-budget.md, "Catch-up").
          const transfers = b.txs.flatMap(transfersOfTx);
          stats.blocks++;
          stats.transfersBuilt += transfers.length;
          out.push({ number: b.number, hash: b.hash, parentHash: b.parentHash, transfers });
        }
        next = out.at(-1)!.number + 1;
      }
      firstInputs = inputs;
      return out;
    },

    async txStatus(txHash, ours) {
      const place = await node.findTx(txHash);
      if (place.where === "block") {
        return { state: "included", blockNumber: place.height, confirmations: place.confirmations, success: true };
      }
      if (place.where === "mempool") return { state: "pending" };
      return ours ? await statusOfNowhere(txHash, ours) : { state: "unknown" };
    },

    async transfersOf(txHash) {
      const place = await node.findTx(txHash);
      return place.where === "block" ? transfersOfTx(place.tx) : null;
    },

    async unspent(address, outpoints) {
      const out: boolean[] = [];
      let atAddress: Set<string> | null = null;
      for (const o of outpoints) {
        const answer = node.isUnspent ? await node.isUnspent(o) : null;
        if (answer !== null) {
          out.push(answer);
          continue;
        }
        if (!node.addressUtxos) throw new Error(`${chain}: the node cannot say whether an output is unspent`);
        atAddress ??= new Set((await node.addressUtxos(address)).map((u) => `${u.txHash}:${u.index}`));
        out.push(atAddress.has(`${o.txHash}:${o.index}`));
      }
      return out;
    },

    stats,

    async senderOf(txHash) {
      let first = firstInputs.get(txHash);
      if (first === undefined) {
        const place = await node.findTx(txHash);
        if (place.where === "nowhere" || place.tx.coinbase) return null;
        first = place.tx.inputs[0] ?? null;
      }
      if (first === null) return null;
      const prev = await node.findTx(first.txHash);
      if (prev.where === "nowhere") return null;
      return prev.tx.outputs[first.index]?.address ?? null;
    },
  };
}
