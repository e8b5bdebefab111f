/**
 * Reads an EVM chain for the watcher and the order actors. `scan` asks `eth_getLogs` for uAsset `Transfer`s to the
 * transfer address (the node filters by the recipient topic, so the answer holds ours only, whatever the chain's
 * activity) and fetches headers only for the blocks that hold such a log, plus the last block it read, which the
 * watcher keeps as its cursor.
 *
 * A scan is bounded by bytes (docs/scan-budget.md, "EVM log ranges"): the span of each `eth_getLogs` adapts to the
 * bytes answered and to a provider's refusal (chains/evm/log_range.ts), and with `ScanOptions.maxBytes` the scan stops
 * after the request that reaches it, returning the blocks up to that request's last one. It never drops a transfer by
 * `ScanOptions.ours`: EVM blocks reorganise, and the watcher matches what a scan returns itself.
 *
 * A scan is pinned to one node and to block hashes. An empty `eth_getLogs` answer cannot be told apart from "this node
 * does not have those blocks yet", and the watcher moves its cursor past whatever the scan did not return: if the last
 * header came from one node and the logs from another that lags (failover picks a node per call), the burns in the
 * blocks the laggard lacks would be skipped for good. So every call of one scan goes to the same node; that node must
 * report a `latest` at or above the range's end; the range's last header is read before and after the logs and must
 * not change (the logs, and the headers of the blocks up to where a byte budget stopped the scan, were answered from
 * the chain that header ends); and every log must carry the hash of its block's header. Anything short of that is a
 * `TransientChainError` with no partial result. Only a transient failure of a whole attempt moves the scan to the
 * next URL, which then starts over. A span the provider refuses even for one block is such a failure, logged: the
 * watcher's cursor stays before that block and the next tick asks again.
 */
import {
  type Address,
  decodeEventLog,
  type Hash,
  type Hex,
  isHex,
  numberToHex,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerialized,
} from "viem";
import type {
  BlockRef,
  ChainReader,
  ObservedTransfer,
  OwnTx,
  ScannedBlock,
  ScanOptions,
  ScanStats,
  TxStatus,
} from "../adapter.ts";
import { TransientChainError } from "../adapter.ts";
import { EVM, type EvmChain, type UAsset } from "../catalog.ts";
import { TRANSFER_EVENT } from "./abi.ts";
import { describeRpcError, type EvmClient, type EvmNodeClient, isTransientRpcError, rpc } from "./client.ts";
import type { EvmState } from "./state.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import { rangeRefusal, TARGET_LOG_ANSWER_BYTES } from "./log_range.ts";
import { BatchSizer } from "../shared/batch_sizer.ts";

export interface EvmReaderOptions {
  chain: EvmChain;
  client: EvmClient;
  /** The five uAsset contracts on this chain. */
  uAssets: Record<UAsset, Address>;
  transferAddress: Address;
  /**
   * Most blocks one `eth_getLogs` may span. Providers cap it (10 to 10,000; chains/evm/log_range.ts): a refused span
   * is asked again smaller, so this is where the span starts and the most it grows back to.
   */
  maxRange: number;
  /** Bytes one `eth_getLogs` answer should bring back (default `TARGET_LOG_ANSWER_BYTES`). */
  targetAnswerBytes?: number;
  /** Where a refused span is reported (default `console.warn`). */
  log?: (message: string) => void;
  /** Where the minter records fee-bumped replacements; without it `txStatus` looks only at the hash asked. */
  state?: EvmState;
  /** Headers fetched at once while scanning. */
  concurrency?: number;
  /** The block tag our transactions and burns are confirmed against; the catalog's unless overridden. */
  finalityTag?: FinalityTag;
}

type FinalityTag = "safe" | "finalized";

/** Who signed a recorded transaction and at which nonce: what a proof of death is about. */
async function senderOf(raw: string): Promise<{ from: Address; nonce: number } | null> {
  if (!isHex(raw)) return null;
  const tx = parseTransaction(raw);
  if (tx.nonce === undefined) return null;
  return {
    from: await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized }),
    nonce: tx.nonce,
  };
}

/** What this reader's scans read: requests are logs and headers, `largestResponse` the largest `eth_getLogs` answer. */
export interface EvmScanStats extends ScanStats {
  /** `eth_getLogs` requests answered. */
  logRequests: number;
  /** Blocks one `eth_getLogs` spans now. */
  range: number;
  /** Spans a provider refused (each asked again smaller). */
  refusals: number;
}

/** The EVM reader, with what its scans read. */
export type EvmReader = ChainReader & { readonly stats: EvmScanStats };

interface Header {
  number: number;
  hash: string;
  parentHash: string;
}

interface RpcHeader {
  number: Hex;
  hash: Hash;
  parentHash: Hash;
}

interface RpcLog {
  address: Address;
  topics: [Hex, ...Hex[]];
  data: Hex;
  logIndex: Hex;
  blockNumber: Hex;
  blockHash: Hash;
  removed?: boolean;
}

interface RpcReceipt {
  blockNumber: Hex;
  blockHash: Hash;
  status: Hex;
  transactionHash: Hash;
}

export function evmReader(opts: EvmReaderOptions): EvmReader {
  const { chain, client } = opts;
  if (!Number.isInteger(opts.maxRange) || opts.maxRange < 1) throw new Error(`${chain}: maxRange must be >= 1`);
  const sizer = new BatchSizer(opts.targetAnswerBytes ?? TARGET_LOG_ANSWER_BYTES, opts.maxRange, opts.maxRange);
  const log = opts.log ?? ((message: string) => console.warn(message));
  const stats: EvmScanStats = {
    requests: 0,
    logRequests: 0,
    bytes: 0,
    largestResponse: 0,
    range: sizer.size,
    refusals: 0,
  };
  const concurrency = opts.concurrency ?? 8;
  const finalityTag = opts.finalityTag ?? EVM[chain].finalityTag;
  const assetOf = new Map<string, UAsset>(
    Object.entries(opts.uAssets).map(([asset, address]) => [address.toLowerCase(), asset as UAsset]),
  );
  const addresses = Object.values(opts.uAssets) as Address[];
  const call = <T>(what: string, f: () => Promise<T>) => rpc(chain, what, f);

  // Scans go to one node at a time, in the order of preference (see the module comment).
  const nodes: readonly EvmNodeClient[] = client.nodes ?? [client];
  const meters: readonly (ByteMeter | undefined)[] = client.meters ?? [];

  async function header(
    number: number | "latest" | FinalityTag,
    on: EvmNodeClient = client,
  ): Promise<Header | null> {
    const tag = typeof number === "number" ? numberToHex(number) : number;
    const block = await call(
      `eth_getBlockByNumber(${number})`,
      () => on.request({ method: "eth_getBlockByNumber", params: [tag, false] }),
    ) as RpcHeader | null;
    if (!block) return null;
    return { number: Number(BigInt(block.number)), hash: block.hash, parentHash: block.parentHash };
  }

  /**
   * Our transfers from block `from` on, in one `eth_getLogs` spanning what the sizer allows (at most up to `to`), and
   * the last block it covered. A span the provider refuses is asked again smaller, with a log line; one refused even
   * for a single block fails the scan (the cursor stays before it).
   */
  async function nextLogs(
    on: EvmNodeClient,
    meter: ByteMeter | undefined,
    from: number,
    to: number,
  ): Promise<{ end: number; found: ObservedTransferAt[] }> {
    let timedOut = false;
    for (;;) {
      const end = Math.min(to, from + sizer.size - 1);
      const before = meter?.bytes ?? 0;
      let logs;
      try {
        logs = await on.getLogs({
          address: addresses,
          event: TRANSFER_EVENT,
          args: { to: opts.transferAddress },
          fromBlock: BigInt(from),
          toBlock: BigInt(end),
          strict: true,
        });
      } catch (err) {
        const refusal = rangeRefusal(err);
        const span = end - from + 1;
        if (refusal && span > 1 && !(refusal.timeout && timedOut)) {
          timedOut ||= refusal.timeout === true;
          sizer.refused(span, refusal.suggested);
          stats.refusals++;
          stats.range = sizer.size;
          log(
            `${chain}: eth_getLogs of ${span} blocks (${from}..${end}) refused (${refusal.reason}); ` +
              `asking ${sizer.size} at a time`,
          );
          continue;
        }
        const what = `${chain}: eth_getLogs(${from}..${end})`;
        if (refusal && span === 1) {
          const message = `${what}: refused even for one block (${refusal.reason}); the watcher stays before it ` +
            `and asks again; a provider that serves whole blocks' logs is needed if this lasts`;
          log(message);
          throw new TransientChainError(message, { chain, cause: err });
        }
        if (isTransientRpcError(err)) {
          throw new TransientChainError(`${what}: ${describeRpcError(err)}`, { chain, cause: err });
        }
        throw err;
      }
      const got = (meter?.bytes ?? 0) - before;
      sizer.answered(end - from + 1, got);
      stats.logRequests++;
      stats.largestResponse = Math.max(stats.largestResponse, got);
      stats.range = sizer.size;
      const found: ObservedTransferAt[] = [];
      for (const l of logs) {
        if (l.removed) continue;
        const asset = assetOf.get(l.address.toLowerCase());
        if (!asset) continue;
        found.push({
          logIndex: l.logIndex,
          blockNumber: Number(l.blockNumber),
          blockHash: l.blockHash,
          transfer: {
            txHash: l.transactionHash.toLowerCase(),
            index: l.logIndex,
            from: l.args.from.toLowerCase(),
            to: l.args.to.toLowerCase(),
            amount: l.args.value,
            asset,
          },
        });
      }
      return { end, found };
    }
  }

  async function receipt(hash: string): Promise<RpcReceipt | null> {
    return await call(
      "eth_getTransactionReceipt",
      () => client.request({ method: "eth_getTransactionReceipt", params: [hash as Hash] }),
    ) as RpcReceipt | null;
  }

  async function knownToNode(hash: string): Promise<boolean> {
    const tx = await call(
      "eth_getTransactionByHash",
      () => client.request({ method: "eth_getTransactionByHash", params: [hash as Hash] }),
    );
    return tx !== null;
  }

  async function transactionCount(address: Address, tag: FinalityTag): Promise<number> {
    const count = await call(
      `eth_getTransactionCount(${tag})`,
      () => client.request({ method: "eth_getTransactionCount", params: [address, tag] }),
    ) as Hex;
    return Number(BigInt(count));
  }

  async function tagged(tag: "latest" | FinalityTag): Promise<Header> {
    const h = await header(tag);
    if (!h) throw new TransientChainError(`${chain}: node returned no "${tag}" block`);
    return h;
  }

  /**
   * Final means at or below the tag's block AND still the canonical block at that height: a receipt from a block
   * the node has since abandoned (or a lagging node behind failover) never counts.
   */
  async function includedStatus(asked: string, mined: RpcReceipt): Promise<TxStatus> {
    const blockNumber = Number(BigInt(mined.blockNumber));
    const [tip, final] = await Promise.all([tagged("latest"), tagged(finalityTag)]);
    const canonical = final.number >= blockNumber ? await header(blockNumber) : null;
    const success = BigInt(mined.status) === 1n;
    const status: TxStatus = {
      state: "included",
      blockNumber,
      confirmations: Math.max(0, tip.number - blockNumber + 1),
      success,
      final: canonical !== null && canonical.hash.toLowerCase() === mined.blockHash.toLowerCase(),
    };
    if (!success) status.reason = "reverted";
    if (mined.transactionHash.toLowerCase() !== asked.toLowerCase()) status.txHash = mined.transactionHash;
    return status;
  }

  /** A mined transaction's matching Transfer logs, read from its receipt and numbered as `scan` numbers them. */
  async function receiptTransfers(hash: string): Promise<ObservedTransfer[] | null> {
    const r = await call(
      "eth_getTransactionReceipt",
      () => client.request({ method: "eth_getTransactionReceipt", params: [hash as Hash] }),
    ) as (RpcReceipt & { logs: RpcLog[] }) | null;
    if (!r) return null;
    if (BigInt(r.status) !== 1n) return [];
    const found: ObservedTransferAt[] = [];
    for (const log of r.logs) {
      const asset = assetOf.get(log.address.toLowerCase());
      if (!asset || log.removed) continue;
      let args;
      try {
        ({ args } = decodeEventLog({ abi: [TRANSFER_EVENT], topics: log.topics, data: log.data, strict: true }));
      } catch {
        continue; // another event of the uAsset contract
      }
      if (args.to.toLowerCase() !== opts.transferAddress.toLowerCase()) continue;
      found.push({
        logIndex: Number(BigInt(log.logIndex)),
        blockNumber: Number(BigInt(log.blockNumber)),
        blockHash: log.blockHash,
        transfer: {
          txHash: r.transactionHash.toLowerCase(),
          index: 0,
          from: args.from.toLowerCase(),
          to: args.to.toLowerCase(),
          amount: args.value,
          asset,
        },
      });
    }
    numberWithinTransaction(found);
    return found.sort((a, b) => a.logIndex - b.logIndex).map((f) => f.transfer);
  }

  /**
   * One whole scan against one node; see the module comment for what it verifies. With `maxBytes` it ends after the
   * `eth_getLogs` whose answer reached it, at that request's last block (`end`): headers up to `end` are read between
   * the two reads of `to`'s header, so they are of the chain the logs were answered from too.
   */
  async function scanOn(
    node: EvmNodeClient,
    meter: ByteMeter | undefined,
    from: number,
    to: number,
    maxBytes: number | undefined,
  ): Promise<ScannedBlock[]> {
    const startBytes = meter?.bytes ?? 0;
    const requestsBefore = stats.logRequests;
    let headerRequests = 0;
    const headerOn = (n: number | "latest") => {
      headerRequests++;
      return header(n, node);
    };
    try {
      const tip = await headerOn("latest");
      if (!tip) throw new TransientChainError(`${chain}: node returned no latest block`);
      if (tip.number < to) {
        throw new TransientChainError(
          `${chain}: node is at block ${tip.number}, behind the scanned range ${from}..${to}`,
        );
      }
      const last = tip.number === to ? tip : await headerOn(to);
      if (!last) throw new TransientChainError(`${chain}: node has no block ${to} below its tip ${tip.number}`);
      const found: ObservedTransferAt[] = [];
      let end = from - 1;
      while (end < to) {
        const step = await nextLogs(node, meter, end + 1, to);
        for (const t of step.found) found.push(t);
        end = step.end;
        if (maxBytes !== undefined && (meter?.bytes ?? 0) - startBytes >= maxBytes) break;
      }
      const lastRead = end === to ? last : await headerOn(end);
      if (!lastRead) throw new TransientChainError(`${chain}: block ${end} vanished during a scan (reorg)`);
      const checkpoints = await mapLimit(checkpointsOf(from, end), concurrency, async (n) => {
        const h = await headerOn(n);
        if (!h) throw new TransientChainError(`${chain}: block ${n} vanished during a scan (reorg)`);
        return h;
      });
      numberWithinTransaction(found);
      const byBlock = new Map<number, ObservedTransferAt[]>();
      for (const t of found) {
        if (t.blockNumber < from || t.blockNumber > end) {
          throw new TransientChainError(`${chain}: node answered a log of block ${t.blockNumber} for ${from}..${end}`);
        }
        const list = byBlock.get(t.blockNumber);
        if (list) list.push(t);
        else byBlock.set(t.blockNumber, [t]);
      }
      const known = new Map(checkpoints.map((h) => [h.number, h]));
      const numbers = [...byBlock.keys()].filter((n) => n !== end && !known.has(n));
      const headers = await mapLimit(numbers, concurrency, async (n) => {
        const h = await headerOn(n);
        if (!h) throw new TransientChainError(`${chain}: block ${n} vanished during a scan (reorg)`);
        return h;
      });
      // The same node still ends the range with the same block: the logs and every header above were answered from
      // that chain, not from a reorganised one in between (its hash would differ) and not from one that ends earlier.
      const after = await headerOn(to);
      if (!after || after.hash.toLowerCase() !== last.hash.toLowerCase()) {
        throw new TransientChainError(`${chain}: block ${to} changed during a scan (reorg)`);
      }
      headers.push(...checkpoints, lastRead);
      headers.sort((a, b) => a.number - b.number);
      return headers.map((h) => {
        const entries = byBlock.get(h.number) ?? [];
        for (const e of entries) {
          if (e.blockHash.toLowerCase() !== h.hash.toLowerCase()) {
            throw new TransientChainError(`${chain}: block ${h.number} changed during a scan (reorg)`);
          }
        }
        const transfers = entries.sort((a, b) => a.logIndex - b.logIndex).map((e) => e.transfer);
        return { number: h.number, hash: h.hash, parentHash: h.parentHash, transfers };
      });
    } finally {
      stats.requests += headerRequests + stats.logRequests - requestsBefore;
      stats.bytes += (meter?.bytes ?? 0) - startBytes;
    }
  }

  return {
    chain,

    // The tag is a flag: `included.final` is always set.
    finality: { kind: "flag", flag: finalityTag },

    transfersOf: receiptTransfers,

    async tip(): Promise<BlockRef> {
      const h = await header("latest");
      if (!h) throw new TransientChainError(`${chain}: node returned no latest block`);
      return { number: h.number, hash: h.hash };
    },

    async blockHash(number: number): Promise<string | null> {
      return (await header(number))?.hash ?? null;
    },

    stats,

    async scan(from: number, to: number, scanOpts: ScanOptions = {}): Promise<ScannedBlock[]> {
      if (to < from) return [];
      let failure: TransientChainError | undefined;
      for (const [i, node] of nodes.entries()) {
        try {
          const before = meters[i]?.bytes ?? 0;
          try {
            return await scanOn(node, meters[i], from, to, scanOpts.maxBytes);
          } finally {
            if (scanOpts.meter) scanOpts.meter.bytes += (meters[i]?.bytes ?? 0) - before;
          }
        } catch (err) {
          if (!(err instanceof TransientChainError)) throw err;
          failure = nodes.length > 1
            ? new TransientChainError(`${err.message} (RPC ${i + 1} of ${nodes.length})`, { chain, cause: err })
            : err;
        }
      }
      throw failure!;
    },

    async txStatus(txHash: string, ours?: OwnTx): Promise<TxStatus> {
      const raw = ours?.raw;
      const replacements = opts.state ? (await opts.state.readReplacements(chain, txHash)).value ?? [] : [];
      const hashes = [txHash, ...replacements.map((r) => r.txHash)];
      // The account's count at finality is read BEFORE the receipts: a version mined in a final block is then
      // certain to show its receipt below, so "no receipt" together with this count proves the nonce went elsewhere.
      const sender = raw ? await senderOf(raw) : null;
      const usedAtFinality = sender ? await transactionCount(sender.from, finalityTag) : null;
      const receipts = await Promise.all(hashes.map(receipt));
      const mined = receipts.find((r) => r !== null);
      if (mined) return await includedStatus(txHash, mined);
      if (sender && usedAtFinality !== null && usedAtFinality > sender.nonce) {
        return {
          state: "dead",
          proof: {
            kind: "conflict",
            consumed: { kind: "nonce", account: sender.from, nonce: sender.nonce },
            spentBy: null,
          },
          detail: `${chain}: nonce ${sender.nonce} of ${sender.from} is used at the "${finalityTag}" block ` +
            `(transaction count ${usedAtFinality} there) and none of our ${hashes.length} version(s) ` +
            `(${hashes.join(", ")}) has a receipt`,
        };
      }
      const known = await Promise.all(hashes.map(knownToNode));
      return known.some(Boolean) ? { state: "pending" } : { state: "unknown" };
    },
  };
}

/**
 * Blocks below the end of a scanned range whose headers a scan returns even without logs, at doubling depths: the
 * watcher remembers every block a scan returns, and after a reorg rescans from the newest one still canonical. Log
 * scans return only blocks with our logs plus the last, so after a long quiet catch-up it would remember the last
 * block alone, and a reorg of even one block would look deeper than its memory (and halt the chain). These few
 * headers (at most seven a scan, read between the two reads of the range's last header, so from the same chain) give
 * it an ancestor at every depth up to 64.
 */
const CHECKPOINT_DEPTHS = [1, 2, 4, 8, 16, 32, 64];

function checkpointsOf(from: number, to: number): number[] {
  return CHECKPOINT_DEPTHS.map((d) => to - d).filter((n) => n >= from);
}

/**
 * A log's `logIndex` is its position in the BLOCK: if a reorg re-mines the same transaction in another block, the same
 * transfer comes back with another log index, and a dedupe keyed on it would record (and pay) it twice. The identity
 * must be stable across blocks, so `index` becomes the transfer's position among this transaction's matching logs.
 */
function numberWithinTransaction(found: ObservedTransferAt[]): void {
  const byTx = new Map<string, ObservedTransferAt[]>();
  for (const t of found) {
    const list = byTx.get(t.transfer.txHash);
    if (list) list.push(t);
    else byTx.set(t.transfer.txHash, [t]);
  }
  for (const list of byTx.values()) {
    list.sort((a, b) => a.logIndex - b.logIndex);
    list.forEach((t, i) => (t.transfer.index = i));
  }
}

interface ObservedTransferAt {
  /** The log's position in its block, used only to order a transaction's logs. */
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  transfer: ObservedTransfer;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
