/**
 * The live Solana reader: everything it answers is read at the `finalized` commitment (a finalized slot is never
 * rolled back), so the watcher never sees a Solana reorg.
 *
 * - Deposits are credited by balance change, not by instruction: for every successful transaction (`meta.err` null),
 *   each account whose `postBalances[i]` exceeds `preBalances[i]` received `post - pre` lamports. This also sees SOL
 *   moved inside another program (a CPI transfer), and accounts loaded from address lookup tables, which
 *   `transactionDetails: "accounts"` (and `jsonParsed`) list in `accountKeys` with `source: "lookupTable"`. A failed
 *   transaction only charges its fee payer: it is never credited. The deposit id is (signature, account index).
 * - Skipped slots: `getBlock` answers -32007 ("Slot N was skipped, or missing due to ledger jump to recent snapshot")
 *   or -32009 (the same from a node backed by long-term storage). Both are taken as SKIPPED: the "missing" half of
 *   those messages only happens on a node whose ledger starts after the slot, and `getBlocks` (what `scan` reads) on
 *   that node lists no block there either. -32001 (block cleaned up: the node keeps no such history) and -32004 (not
 *   yet stored) are not skips: they throw, transient for -32004, a clear operator error for -32001.
 * - Expiry: a transaction is dead once the FINALIZED block height is above its `lastValidBlockHeight` and the node,
 *   searching its history, still does not know its signature. The height is read before the signature status, so a
 *   transaction included at or below its last valid height is necessarily visible when the status is read.
 *   Limitation: a node without transaction history for that range (no `searchTransactionHistory` coverage) would not
 *   find an old included transaction; use RPC providers that keep history back to the oldest recorded payout.
 * - Scans are bounded by bytes (docs/scan-budget.md): getBlock requests sized by `BatchSizer` (chains/shared/batch_sizer.ts) from the bytes the
 *   last ones brought back (one block first, then as many as fit `TARGET_RESPONSE_BYTES`), a request a provider refuses
 *   asked again in halves down to one block, a scan that stops at the watcher's byte budget after a whole block, and
 *   with the watcher's `ours` a transfer built only for an account of ours.
 * - Answers: every answer is read through its schema (chains/sol/answers.ts) before anything of it is used; a block is
 *   read whole before any of it is credited, so a malformed one is refused (`MalformedAnswerError`, transient) and the
 *   watcher's cursor stays before it.
 */
import {
  type BlockRef,
  type BlockScanStats,
  type ChainReader,
  type Detection,
  type ObservedTransfer,
  type OwnTx,
  type ScannedBlock,
  type ScanOptions,
  SKIPPED,
  type Skipped,
  TransientChainError,
  type TxStatus,
} from "../adapter.ts";
import type { z } from "zod";
import {
  balanceAnswer,
  blockHashAnswer,
  scanBlockAnswer,
  signatureStatusAnswer,
  slotAnswer,
  slotsAnswer,
  solAnswer,
  type SolTransaction,
  transactionAnswer,
  transactionOrNullAnswer,
} from "./answers.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import { BatchSizer } from "../shared/batch_sizer.ts";
import { MAX_BATCH, SOL_RPC_CODES, type SolRpc, SolRpcError, unwrap } from "./rpc.ts";
import { type CreditableTx, creditsTo } from "./credits.ts";
import { DETECTION_DEFAULT, pollDeferred, polls, pollScan, pollState, type PollStats } from "./poll.ts";

export { type CreditableTx, creditsTo };

const FINALIZED = { commitment: "finalized" } as const;

/** `getBlock` options of a scan: account keys and balances only, v0 transactions included. */
export const SCAN_BLOCK_OPTIONS = {
  commitment: "finalized",
  encoding: "json",
  transactionDetails: "accounts",
  maxSupportedTransactionVersion: 0,
  rewards: false,
} as const;

/** `getBlock` options when only the hash matters. */
const HASH_ONLY = { ...FINALIZED, transactionDetails: "none", rewards: false, maxSupportedTransactionVersion: 0 };

/** The lamports each account of a successful transaction received (balance rose), as scan and transfersOf report. */
export function creditsOf(tx: SolTransaction): ObservedTransfer[] {
  return creditsTo(tx);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isLamports = (v: unknown) =>
  (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) || (typeof v === "string" && /^\d+$/.test(v));
const isKeys = (v: unknown) =>
  Array.isArray(v) && v.every((k) => isObject(k) && typeof k.pubkey === "string" && typeof k.signer === "boolean");

/**
 * Whether a scan's getBlock answer is, field by field, one `scanBlockAnswer` (chains/sol/answers.ts) accepts with the
 * same values: checked in place, without the copy the schema makes of every transaction, key and balance (that copy
 * was most of what a mainnet block cost in memory: docs/scan-budget.md). Stricter where that is simpler: anything it
 * refuses is read through the schema, which accepts it or refuses it naming the field, as before.
 */
export function isPlainScanBlock(
  v: unknown,
): v is { blockhash: string; previousBlockhash: string; transactions: CreditableTx[] } {
  if (!isObject(v) || typeof v.blockhash !== "string" || typeof v.previousBlockhash !== "string") return false;
  if (!Array.isArray(v.transactions)) return false;
  for (const tx of v.transactions) {
    if (!isObject(tx) || !isObject(tx.transaction)) return false;
    const t = tx.transaction;
    if (!Array.isArray(t.signatures) || !t.signatures.every((s) => typeof s === "string")) return false;
    if (t.accountKeys !== undefined && !isKeys(t.accountKeys)) return false;
    if (t.message !== undefined && !(isObject(t.message) && isKeys(t.message.accountKeys))) return false;
    const meta = tx.meta;
    if (meta === null) continue;
    if (!isObject(meta) || meta.err === undefined) return false;
    if (!Array.isArray(meta.preBalances) || !meta.preBalances.every(isLamports)) return false;
    if (!Array.isArray(meta.postBalances) || !meta.postBalances.every(isLamports)) return false;
  }
  return true;
}

/** `creditsOf` a transaction as a node answered it (`getTransaction` at jsonParsed), read through its schema. */
export function transfersIn(tx: unknown, method = "getTransaction"): ObservedTransfer[] {
  return creditsOf(solAnswer(method, transactionAnswer, tx));
}

function isSkip(err: unknown): boolean {
  return err instanceof SolRpcError &&
    (err.code === SOL_RPC_CODES.slotSkipped || err.code === SOL_RPC_CODES.longTermStorageSlotSkipped);
}

/** A getBlock error that is not a skip, as the caller should see it. */
function blockError(slot: number, err: SolRpcError): Error {
  if (err.code === SOL_RPC_CODES.blockNotAvailable) {
    return new TransientChainError(`sol: block ${slot} is not available on the node yet (${err.message})`, {
      chain: "sol",
      cause: err,
    });
  }
  if (err.code === SOL_RPC_CODES.blockCleanedUp) {
    return new Error(
      `sol: the RPC node no longer keeps block ${slot} (${err.message}); point SOL_RPC_URLS at a node with history`,
      { cause: err },
    );
  }
  return err;
}

/** A getBlock error that is the node's answer about that block (not a refusal of the request carrying it). */
function isBlockAnswer(err: SolRpcError): boolean {
  return isSkip(err) || err.code === SOL_RPC_CODES.blockNotAvailable || err.code === SOL_RPC_CODES.blockCleanedUp;
}

/**
 * Bytes one getBlock request should bring back (docs/scan-budget.md). The answer is held as text and parsed whole, so
 * this, not a count of blocks, bounds what a scan holds: a mainnet block in `accounts` mode is about 3 MB of JSON (two
 * or three per request), a quiet chain's few KB (up to `MAX_BATCH` per request).
 */
export const TARGET_RESPONSE_BYTES = 8 * 1024 * 1024;

/** What this reader's scans read and built (getBlock requests). */
export type SolScanStats = BlockScanStats;

export interface SolReaderOptions {
  /** Confirmations on top of `finalized` (counted in slots). */
  confirmations: number;
  /** Bytes one getBlock request should bring back (default `TARGET_RESPONSE_BYTES`). */
  targetResponseBytes?: number;
  /** Where a refused or failed getBlock request is reported (default `console.warn`). */
  log?: (message: string) => void;
  /** Reading every block, or polling our addresses (chains/sol/poll.ts); default `DETECTION_DEFAULT` (blocks). */
  detection?: Detection;
  /** The clock a polling reader spaces its polls by (default `Date.now`). */
  now?: () => number;
}

/** The sol reader, with what its scans read (`poll`: what polling read). */
export type SolReader = ChainReader & { readonly stats: SolScanStats; readonly poll: PollStats };

export function solReader(rpc: SolRpc, opts: SolReaderOptions): SolReader {
  const sizer = new BatchSizer(opts.targetResponseBytes ?? TARGET_RESPONSE_BYTES, MAX_BATCH);
  const stats: SolScanStats = { requests: 0, bytes: 0, largestResponse: 0, blocks: 0, transfersBuilt: 0, fallbacks: 0 };
  const log = opts.log ?? ((message: string) => console.warn(message));
  const detection = opts.detection ?? DETECTION_DEFAULT;
  const now = opts.now ?? Date.now;
  const polling = pollState();
  let unlisted = false;

  /** `method` called with `params`, its answer read through `schema`. */
  async function read<S extends z.ZodType>(method: string, params: unknown[], schema: S): Promise<z.output<S>> {
    return solAnswer(method, schema, await rpc.call(method, params));
  }

  async function finalizedSlot(): Promise<number> {
    return await read("getSlot", [FINALIZED], slotAnswer);
  }

  async function tip(): Promise<BlockRef> {
    const slot = await finalizedSlot();
    try {
      const block = await read("getBlock", [slot, HASH_ONLY], blockHashAnswer);
      if (block) return { number: slot, hash: block.blockhash };
    } catch (err) {
      if (!isSkip(err)) throw err instanceof SolRpcError ? blockError(slot, err) : err;
    }
    // The root is a block on every node seen; should a node answer a skip, take the newest block at or below it.
    const blocks = await read("getBlocks", [Math.max(0, slot - 1000), slot, FINALIZED], slotsAnswer);
    const newest = blocks.at(-1);
    if (newest === undefined) throw new TransientChainError(`sol: no finalized block in the 1000 slots below ${slot}`);
    // Listed as a block: a null answer here is not "no block", it is malformed.
    const block = await read("getBlock", [newest, HASH_ONLY], blockHashAnswer.unwrap());
    return { number: newest, hash: block.blockhash };
  }

  async function blockHash(slot: number): Promise<string | Skipped | null> {
    const [top, block] = await rpc.batch<unknown>([
      { method: "getSlot", params: [FINALIZED] },
      { method: "getBlock", params: [slot, HASH_ONLY] },
    ]);
    if (slot > solAnswer("getSlot", slotAnswer, unwrap(top))) return null; // not finalized yet: "above the tip"
    if (block instanceof SolRpcError) {
      if (isSkip(block)) return SKIPPED;
      throw blockError(slot, block);
    }
    return solAnswer("getBlock", blockHashAnswer, block)?.blockhash ?? null;
  }

  async function scan(from: number, to: number, opts: ScanOptions = {}): Promise<ScannedBlock[]> {
    if (to < from) return [];
    if (opts.addresses && polls(detection, opts.addresses.size)) {
      const deps = {
        rpc,
        state: polling,
        log,
        now,
        lastBlockIn: async (a: number, b: number) => (await provenGap(a, b)).at(-1) ?? null,
      };
      const before = polling.stats.bytes;
      const blocks = await pollScan(deps, from, to, opts.addresses, opts.ours);
      if (opts.meter) opts.meter.bytes += polling.stats.bytes - before;
      return blocks;
    }
    if (!opts.addresses && detection.mode === "addresses" && !unlisted) {
      unlisted = true;
      log("sol: SOL_DETECTION=addresses but the scan was given no address list; reading every block instead");
    }
    // getBlocks at finalized lists only finalized blocks (the node caps `to` at its root): skipped slots are absent.
    let slots = await read("getBlocks", [from, to, FINALIZED], slotsAnswer);
    if (slots.length === 0 || slots[0] > from) slots = await provenGap(from, to);
    const blocks: ScannedBlock[] = [];
    const meter: ByteMeter = { bytes: 0 };
    let i = 0;
    while (i < slots.length) {
      // The byte budget ends the scan at a block boundary, never before one block is in hand: an empty answer would
      // tell the watcher the whole range is empty.
      if (opts.maxBytes !== undefined && blocks.length > 0 && meter.bytes >= opts.maxBytes) break;
      const chunk = slots.slice(i, i + sizer.size);
      const before = meter.bytes;
      let answers: unknown[];
      try {
        answers = await rpc.batch(
          chunk.map((slot) => ({ method: "getBlock", params: [slot, SCAN_BLOCK_OPTIONS] })),
          meter,
        );
        const refusal = chunk.length > 1
          ? answers.find((a) => a instanceof SolRpcError && !isBlockAnswer(a))
          : undefined;
        if (refusal) throw refusal;
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (chunk.length === 1) {
          log(`sol: getBlock ${chunk[0]} failed on its own (${why}); the watcher stays before it and asks again`);
          throw err;
        }
        // A provider that caps batches or answer sizes (413, "response too large", a timeout on a huge answer): the
        // same blocks again in smaller requests, down to one block each. Never a stall on the batch itself.
        sizer.refused(chunk.length);
        stats.fallbacks++;
        log(
          `sol: getBlock of ${chunk.length} slots (${chunk[0]}..${chunk.at(-1)}) in one request failed (${why}); ` +
            `asking ${sizer.size} at a time`,
        );
        continue;
      }
      const got = meter.bytes - before;
      if (opts.meter) opts.meter.bytes += got;
      sizer.answered(chunk.length, got);
      stats.requests++;
      stats.bytes += got;
      stats.largestResponse = Math.max(stats.largestResponse, got);
      for (let k = 0; k < chunk.length; k++) {
        const slot = chunk[k];
        const entry = answers[k];
        answers[k] = undefined; // one block at a time: each is released once read, before the next
        if (entry instanceof SolRpcError) {
          if (isSkip(entry)) continue; // listed, then skipped: the node's own answer wins
          throw blockError(slot, entry);
        }
        // The whole block is read before any of it is credited: a malformed one is refused, nothing of it recorded.
        // Checked in place when it is plainly well formed, else through the schema (which names what is wrong).
        const answer = isPlainScanBlock(entry) ? entry : solAnswer("getBlock", scanBlockAnswer, entry);
        if (answer === null) throw new TransientChainError(`sol: getBlock ${slot} answered null for a listed block`);
        const transfers = answer.transactions.flatMap((tx) => creditsTo(tx, opts.ours));
        stats.blocks++;
        stats.transfersBuilt += transfers.length;
        blocks.push({ number: slot, hash: answer.blockhash, parentHash: answer.previousBlockhash, transfers });
      }
      i += chunk.length;
    }
    return blocks;
  }

  /**
   * `getBlocks` again, with the answering node's finalized slot and first available block in the same HTTP request
   * (so from the same node, whatever the failover does), when the range starts with slots that hold no block: the
   * watcher moves past an empty range (chains/adapter.ts `scan`), so absence must be the node's statement. Agave's
   * `getBlocks` caps the range at the node's root and starts it at its first available block without saying so: a
   * lagging node or one whose history was purged would otherwise make real blocks look skipped.
   */
  async function provenGap(from: number, to: number): Promise<number[]> {
    const [listed, root, first] = await rpc.batch<unknown>([
      { method: "getBlocks", params: [from, to, FINALIZED] },
      { method: "getSlot", params: [FINALIZED] },
      { method: "getFirstAvailableBlock", params: [] },
    ]);
    const slots = solAnswer("getBlocks", slotsAnswer, unwrap(listed));
    const firstAvailable = solAnswer("getFirstAvailableBlock", slotAnswer, unwrap(first));
    if (from < firstAvailable) {
      throw new Error(
        `sol: the RPC node keeps no block below slot ${firstAvailable} (getFirstAvailableBlock); slots ${from} to ` +
          `${Math.min(to, firstAvailable - 1)} cannot be read there; point SOL_RPC_URLS at a node with that history`,
      );
    }
    const finalized = solAnswer("getSlot", slotAnswer, unwrap(root));
    if (slots.length === 0 && finalized < to) {
      throw new TransientChainError(
        `sol: the answering node's finalized slot is ${finalized}, below the range's end ${to}: slots ${from} to ` +
          `${to} are not proven empty yet`,
      );
    }
    return slots;
  }

  async function txStatus(signature: string, ours?: OwnTx): Promise<TxStatus> {
    const expiry = ours?.expiry?.kind === "height" ? ours.expiry : undefined;
    // Read before the status: see the module comment (an included transaction is then always visible).
    const height = expiry ? await read("getBlockHeight", [FINALIZED], slotAnswer) : undefined;
    const [statuses, top] = await rpc.batch<unknown>([
      { method: "getSignatureStatuses", params: [[signature], { searchTransactionHistory: true }] },
      { method: "getSlot", params: [FINALIZED] },
    ]);
    const status = solAnswer("getSignatureStatuses", signatureStatusAnswer, unwrap(statuses)).value[0];
    if (status === null) {
      if (expiry && height !== undefined && height > expiry.value) {
        return {
          state: "dead",
          proof: { kind: "expired", expiry, reached: height },
          detail: `finalized block height ${height} is above the transaction's lastValidBlockHeight ${expiry.value} ` +
            `and the node does not know signature ${signature}`,
        };
      }
      return { state: "unknown" };
    }
    const slot = status.slot;
    const final = status.confirmationStatus === "finalized";
    const confirmations = final
      ? Math.max(1, solAnswer("getSlot", slotAnswer, unwrap(top)) - slot + 1)
      : (status.confirmations ?? 0) + 1;
    return {
      state: "included",
      blockNumber: slot,
      confirmations,
      success: status.err === null,
      ...(status.err === null ? {} : { reason: `transaction failed: ${JSON.stringify(status.err)}` }),
      final,
    };
  }

  async function transfersOf(signature: string): Promise<ObservedTransfer[] | null> {
    const tx = await read("getTransaction", [
      signature,
      { commitment: "finalized", encoding: "jsonParsed", maxSupportedTransactionVersion: 0 },
    ], transactionOrNullAnswer);
    return tx === null ? null : creditsOf(tx);
  }

  async function balance(address: string): Promise<bigint> {
    return (await read("getBalance", [address, FINALIZED], balanceAnswer)).value ?? 0n;
  }

  return {
    chain: "sol",
    finality: { kind: "flag", flag: "finalized" },
    tip,
    blockHash,
    scan,
    txStatus,
    transfersOf,
    balance,
    stats,
    poll: polling.stats,
    deferScan: (from, to, addresses) =>
      polls(detection, addresses) && pollDeferred(detection, polling, from, to, now()),
  };
}
