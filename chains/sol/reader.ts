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
 * - Answers: every answer is read through its schema (chains/sol/answers.ts) before anything of it is used; a block is
 *   read whole before any of it is credited, so a malformed one is refused (`MalformedAnswerError`, transient) and the
 *   watcher's cursor stays before it.
 */
import {
  type BlockRef,
  type ChainReader,
  type ObservedTransfer,
  type OwnTx,
  type ScannedBlock,
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
import { SOL_RPC_CODES, type SolRpc, SolRpcError, unwrap } from "./rpc.ts";

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
  const meta = tx.meta;
  if (meta === null || meta.err !== null) return []; // failed: only its fee payer was charged
  const keys = tx.transaction.accountKeys ?? tx.transaction.message?.accountKeys;
  const signature = tx.transaction.signatures[0];
  if (!keys || keys.length === 0 || signature === undefined) {
    throw new Error(`sol: transaction ${signature ?? "?"} has no account keys: request accounts or jsonParsed details`);
  }
  if (meta.preBalances.length !== keys.length || meta.postBalances.length !== keys.length) {
    throw new Error(`sol: transaction ${signature}: ${keys.length} account keys but balances for another count`);
  }
  const from = keys.find((k) => k.signer)?.pubkey ?? keys[0].pubkey; // the fee payer is the first signer
  const out: ObservedTransfer[] = [];
  for (let i = 0; i < keys.length; i++) {
    const pre = meta.preBalances[i];
    const post = meta.postBalances[i];
    if (post > pre) {
      out.push({ txHash: signature, index: i, from, to: keys[i].pubkey, amount: post - pre, asset: "native" });
    }
  }
  return out;
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

export interface SolReaderOptions {
  /** Confirmations on top of `finalized` (counted in slots). */
  confirmations: number;
}

export function solReader(rpc: SolRpc, _opts: SolReaderOptions): ChainReader {
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

  async function scan(from: number, to: number): Promise<ScannedBlock[]> {
    if (to < from) return [];
    // getBlocks at finalized lists only finalized blocks (the node caps `to` at its root): skipped slots are absent.
    let slots = await read("getBlocks", [from, to, FINALIZED], slotsAnswer);
    if (slots.length === 0 || slots[0] > from) slots = await provenGap(from, to);
    const answers = await rpc.batch(
      slots.map((slot) => ({ method: "getBlock", params: [slot, SCAN_BLOCK_OPTIONS] })),
    );
    const blocks: ScannedBlock[] = [];
    answers.forEach((entry, i) => {
      const slot = slots[i];
      if (entry instanceof SolRpcError) {
        if (isSkip(entry)) return; // listed, then skipped: the node's own answer wins
        throw blockError(slot, entry);
      }
      // The whole block is read before any of it is credited: a malformed one is refused, nothing of it recorded.
      const answer = solAnswer("getBlock", scanBlockAnswer, entry);
      if (answer === null) throw new TransientChainError(`sol: getBlock ${slot} answered null for a listed block`);
      blocks.push({
        number: slot,
        hash: answer.blockhash,
        parentHash: answer.previousBlockhash,
        transfers: answer.transactions.flatMap(creditsOf),
      });
    });
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
  };
}
