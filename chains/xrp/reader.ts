/**
 * The XRP Ledger reader: validated ledgers only (a validated ledger never changes, so every answer here is final).
 *
 * What counts as a deposit (docs/architecture.md "XRP Ledger"): a `Payment` whose result is `tesSUCCESS` and whose
 * `meta.delivered_amount` is a string (drops). Never `Amount`: with `tfPartialPayment` it can exceed what arrived.
 * Everything else that raises an account's XRP balance in a successful transaction (an `AccountDelete` to it,
 * `EscrowFinish`, `CheckCash`, `PaymentChannelClaim`, ...) and an issued-currency payment to an address is reported
 * with a `heldReason`, so the watcher holds it for an operator instead of crediting it. `tec` results sit in validated
 * ledgers, claim the fee and deliver nothing: ignored.
 *
 * Ledger responses come in two shapes and both are read: API v2 entries `{tx_json, meta, hash, ...}` and v1 entries
 * with the transaction's fields inline and the metadata under `metaData` (`meta` in v1 `tx` answers). Every answer is
 * read through its schema (chains/xrp/answers.ts) first: a malformed one is refused by name and nothing is read from it.
 *
 * Scans are bounded by bytes (docs/scan-budget.md, "XRP Ledger"): ledgers are asked for one per `ledger` call, up to
 * `MAX_IN_FLIGHT` at once as its `BatchSizer` (chains/shared/batch_sizer.ts) allows from the bytes the last one brought back, read in order, and the scan
 * stops at a ledger boundary once the watcher's `maxBytes` is reached. With the watcher's `ours`, a ledger's
 * transaction is checked in place (chains/xrp/ledger_scan.ts `isPlainLedgerTx`) and only one that touches an address
 * of ours is read through its schema and made into transfers. A provider's refusal (`refusalOf`): over its load limit,
 * the ledger is asked again after a growing wait, one ledger at a time; too big an answer, the ledger is read as its
 * list of hashes plus one `tx` per transaction. A ledger a provider still refuses ends the scan before it (the ledgers
 * before it are returned, else the error is thrown); any other failure is thrown: either way the watcher's cursor
 * stays before that ledger and asks again next tick.
 */
import { BatchSizer } from "../shared/batch_sizer.ts";
import { decode } from "xrpl";
import type {
  BlockRef,
  BlockScanStats,
  ChainReader,
  Finality,
  ObservedTransfer,
  OwnTx,
  ScannedBlock,
  ScanOptions,
  TxStatus,
} from "../adapter.ts";
import { SKIPPED, TransientChainError } from "../adapter.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import { isPlainLedgerTx, MAX_IN_FLIGHT, refusalOf, TARGET_IN_FLIGHT_BYTES, touchesOurs } from "./ledger_scan.ts";
import { NATIVE } from "../catalog.ts";
import {
  accountInfo,
  type DeliveredAmount,
  ledgerAnswer,
  ledgerTip,
  ledgerValidated,
  malformed,
  readAnswer,
  signedFields,
  txEntry,
  txPlace,
  type XrplMeta,
  type XrplTxEntry,
} from "./answers.ts";
import { isXrplError, type XrplResult, type XrplRpc } from "./rpc.ts";

export type { XrplTxEntry };

/** What the transaction moved to accounts, as the watcher sees it (see the module comment for the rules). */
export function transfersOfEntry(entry: XrplTxEntry): ObservedTransfer[] {
  const { tx, meta, hash } = entry;
  if (!meta || meta.TransactionResult !== "tesSUCCESS") return [];
  const from = tx.Account;
  const out: ObservedTransfer[] = [];
  let credited: string | null = null;
  if (tx.TransactionType === "Payment" && tx.Destination !== undefined) {
    const delivered = meta.delivered_amount;
    if (delivered?.kind === "drops") {
      out.push({ txHash: hash, index: 0, from, to: tx.Destination, amount: delivered.drops, asset: "native" });
      credited = tx.Destination;
    } else {
      out.push({
        txHash: hash,
        index: 0,
        from,
        to: tx.Destination,
        amount: 0n,
        asset: "native",
        heldReason: delivered?.kind === "unavailable"
          // rippled answers "unavailable" for a Payment in a ledger from before DeliveredAmount was recorded (January
          // 2014): XRP may have arrived, but how much the ledger does not say, and Amount is never credited.
          ? `XRPL XRP payment whose delivered amount the ledger did not record (delivered_amount "unavailable"): ` +
            `it cannot be credited automatically; held for an operator`
          : `XRPL issued-currency payment (delivered ${describeAmount(delivered)}), not XRP: never credited`,
      });
      credited = tx.Destination;
    }
  }
  // Any other XRP that reached an account in this transaction: held with what it is. Numbered after the payment by
  // its place in AffectedNodes, which a validated ledger never changes.
  meta.AffectedNodes.forEach((node, i) => {
    const rise = accountRootRise(node);
    if (!rise || rise.account === credited || rise.account === from || rise.amount <= 0n) return;
    out.push({
      txHash: hash,
      index: i + 1,
      from,
      to: rise.account,
      amount: rise.amount,
      asset: "native",
      heldReason: `XRPL ${tx.TransactionType} raised the account's XRP balance by ${rise.amount} drops ` +
        `(not a Payment: never credited automatically)`,
    });
  });
  return out;
}

function describeAmount(a: DeliveredAmount | undefined): string {
  if (a?.kind !== "issued") return String(a);
  const unit = a.currency ?? (a.mpt_issuance_id !== undefined ? `MPT ${a.mpt_issuance_id}` : "undefined");
  return `${a.value} ${unit}${a.issuer ? `.${a.issuer}` : ""}`;
}

/** An AccountRoot whose XRP Balance rose in this transaction (modified, or created with a balance). */
function accountRootRise(node: XrplMeta["AffectedNodes"][number]): { account: string; amount: bigint } | null {
  const modified = node.ModifiedNode;
  if (modified) {
    const before = modified.PreviousFields?.Balance;
    if (before === undefined) return null;
    return { account: modified.FinalFields.Account, amount: modified.FinalFields.Balance - before };
  }
  const created = node.CreatedNode;
  if (created) return { account: created.NewFields.Account, amount: created.NewFields.Balance };
  return null;
}

/** The fields of a signed blob this reader needs to prove it dead. */
export interface SignedFacts {
  account: string;
  sequence: number;
  lastLedger: number;
}

export function signedFacts(raw: string): SignedFacts {
  const tx = signedFields.safeParse(decode(raw));
  if (!tx.success) {
    throw new Error(
      `xrp: a recorded transaction must carry Account, Sequence and LastLedgerSequence ` +
        `(${tx.error.issues[0].path.join(".")} ${tx.error.issues[0].message})`,
    );
  }
  return { account: tx.data.Account, sequence: tx.data.Sequence, lastLedger: tx.data.LastLedgerSequence };
}

/** How far below LastLedgerSequence our transactions are searched for: twice the window they are signed with. */
export const SEARCH_BACK = 2 * (NATIVE.xrp.expiry.kind === "height" ? NATIVE.xrp.expiry.window : 20);

/** Refuses an answer that lacks `field` in every place the documented shapes put it. */
function missing(method: string, field: string): never {
  throw malformed(method, field, "is missing");
}

/** Waits after a provider's rate refusal of one ledger: the first, doubled each time, this many times at most. */
export const RATE_BACKOFF_MS = 500;
export const RATE_RETRIES = 4;

/**
 * What this reader's scans read and built: requests are `ledger` calls, and `tx` calls when a ledger is read in parts
 * (`fallbacks`: ledgers read so, after their whole answer was refused as too big or timed out).
 */
export interface XrpScanStats extends BlockScanStats {
  /** Rate refusals (`slowDown`, `tooBusy`, HTTP 503/429) waited out. */
  rateRefusals: number;
}

export interface XrpReaderOptions {
  rpc: XrplRpc;
  confirmations: number;
  /** Bytes of answers in flight at once (default `TARGET_IN_FLIGHT_BYTES`). */
  targetInFlightBytes?: number;
  /** Where refusals and fallbacks are reported (default `console.warn`). */
  log?: (message: string) => void;
  /** The first wait after a rate refusal (default `RATE_BACKOFF_MS`). */
  backoffMs?: number;
}

/** The xrp reader, with what its scans read. */
export type XrpReader = ChainReader & { readonly stats: XrpScanStats };

/** A ledger asked for: read (null when not validated yet) with the bytes it cost, or the reason it was not. */
type Fetched = { ok: true; block: ScannedBlock | null; bytes: number } | { ok: false; err: unknown };

export function xrpReader(opts: XrpReaderOptions): XrpReader {
  const { rpc } = opts;
  const finality: Finality = { kind: "flag", flag: "validated" };
  const window = new BatchSizer(opts.targetInFlightBytes ?? TARGET_IN_FLIGHT_BYTES, MAX_IN_FLIGHT);
  const stats: XrpScanStats = {
    requests: 0,
    bytes: 0,
    largestResponse: 0,
    blocks: 0,
    transfersBuilt: 0,
    fallbacks: 0,
    rateRefusals: 0,
  };
  const log = opts.log ?? ((message: string) => console.warn(message));
  const backoffMs = opts.backoffMs ?? RATE_BACKOFF_MS;

  async function tip(): Promise<BlockRef> {
    const r = readAnswer("ledger", ledgerTip, await rpc.call("ledger", { ledger_index: "validated" }));
    return { number: r.ledger_index, hash: r.ledger_hash };
  }

  /**
   * Validated ledger `n`, or null when it is not validated yet. `transactions`: none, their hashes, or expanded with
   * their metadata.
   */
  async function validatedLedger(
    n: number,
    transactions: "none" | "hashes" | "expanded",
    meter?: ByteMeter,
  ): Promise<XrplResult | null> {
    let r: XrplResult;
    try {
      r = await rpc.call(
        "ledger",
        transactions === "none"
          ? { ledger_index: n }
          : { ledger_index: n, transactions: true, ...(transactions === "expanded" ? { expand: true } : {}) },
        meter,
      );
    } catch (err) {
      if (!isXrplError(err, "lgrNotFound")) throw err;
      if (n > (await tip()).number) return null;
      throw new TransientChainError(`xrp: the node has no ledger ${n} (history not kept), though it is validated`);
    }
    if (readAnswer("ledger", ledgerValidated, r).validated !== true) return null;
    return r;
  }

  async function status(txHash: string, own?: OwnTx): Promise<TxStatus> {
    let found: XrplResult | null = null;
    try {
      found = await rpc.call("tx", { transaction: txHash, binary: false });
    } catch (err) {
      if (!isXrplError(err, "txnNotFound")) throw err;
    }
    if (found) {
      const place = readAnswer("tx", txPlace, found);
      // In a ledger (validated or not), a transaction has its metadata: without it nothing says whether it succeeded.
      const entry = txEntry("tx", found, [], place.ledger_index !== undefined);
      if (place.ledger_index === undefined || !entry.meta) return { state: "pending" };
      const ledger = place.ledger_index;
      const validated = place.validated === true;
      const result = entry.meta.TransactionResult;
      const top = validated ? (await tip()).number : ledger;
      return {
        state: "included",
        blockNumber: ledger,
        confirmations: Math.max(1, top - ledger + 1),
        success: result === "tesSUCCESS",
        ...(result === "tesSUCCESS" ? {} : { reason: result }),
        final: validated,
      };
    }
    if (!own) return { state: "unknown" };
    return await proveDead(txHash, own);
  }

  /** Our transaction is unknown to the node: dead only from validated facts over a range the node searched whole. */
  async function proveDead(txHash: string, own: OwnTx): Promise<TxStatus> {
    const facts = signedFacts(own.raw);
    const validated = (await tip()).number;
    const minLedger = Math.max(1, facts.lastLedger - SEARCH_BACK);
    const searched = async (maxLedger: number): Promise<boolean> => {
      if (maxLedger < minLedger) return true;
      try {
        await rpc.call("tx", { transaction: txHash, binary: false, min_ledger: minLedger, max_ledger: maxLedger });
        return false; // found after all (it landed between the two calls): not dead
      } catch (err) {
        if (!isXrplError(err, "txnNotFound")) throw err;
        return err.result.searched_all === true;
      }
    };
    if (validated > facts.lastLedger) {
      if (!(await searched(facts.lastLedger))) return { state: "unknown" };
      const expiry = own.expiry ?? { kind: "ledger" as const, value: facts.lastLedger };
      return {
        state: "dead",
        proof: { kind: "expired", expiry, reached: validated },
        detail: `validated ledger ${validated} is past LastLedgerSequence ${facts.lastLedger} and the node searched ` +
          `ledgers ${minLedger}..${facts.lastLedger} without finding ${txHash}`,
      };
    }
    const sequence = await validatedSequence(facts.account);
    if (sequence === null || sequence <= facts.sequence) return { state: "unknown" };
    if (!(await searched(validated))) return { state: "unknown" };
    const consumed = own.consumes ?? { kind: "nonce" as const, account: facts.account, nonce: facts.sequence };
    return {
      state: "dead",
      proof: { kind: "conflict", consumed, spentBy: null },
      detail: `Sequence ${facts.sequence} of ${facts.account} is used (validated Sequence is ${sequence}) by a ` +
        `transaction other than ${txHash}, which the node did not find in ledgers ${minLedger}..${validated}`,
    };
  }

  /** A counted answer of a scan's request. */
  function counted(bytes: number) {
    stats.requests++;
    stats.bytes += bytes;
    stats.largestResponse = Math.max(stats.largestResponse, bytes);
  }

  /** The header of validated ledger `n`'s answer and its transaction list (asked with `transactions: true`). */
  function ledgerOf(n: number, r: XrplResult) {
    const { ledger, ...top } = readAnswer("ledger", ledgerAnswer, r);
    const number = ledger.ledger_index ?? top.ledger_index ?? missing("ledger", "ledger_index");
    if (number !== n) throw malformed("ledger", "ledger_index", `is ${number}, not the ledger ${n} asked for`);
    return {
      number,
      hash: ledger.ledger_hash ?? top.ledger_hash ?? missing("ledger", "ledger_hash"),
      parentHash: ledger.parent_hash,
      // Asked with `transactions: true`: a ledger without the list would read as a ledger without deposits.
      txs: ledger.transactions ?? missing("ledger", "ledger.transactions"),
    };
  }

  /** The transfers of `entry` that `ours` accepts (all without it). */
  function keep(entry: XrplTxEntry, ours: ScanOptions["ours"], into: ObservedTransfer[]) {
    for (const t of transfersOfEntry(entry)) if (!ours || ours(t.to)) into.push(t);
  }

  /**
   * Validated ledger `n` read whole (one `ledger` call, transactions expanded), or null when not validated yet. Every
   * transaction is checked before the block is returned: a malformed one refuses the ledger, nothing of it recorded.
   */
  async function wholeLedger(n: number, ours: ScanOptions["ours"]): Promise<Fetched> {
    const meter: ByteMeter = { bytes: 0 };
    try {
      const r = await validatedLedger(n, "expanded", meter);
      counted(meter.bytes);
      if (!r) return { ok: true, block: null, bytes: meter.bytes };
      const { txs, ...header } = ledgerOf(n, r);
      const transfers: ObservedTransfer[] = [];
      for (let i = 0; i < txs.length; i++) {
        const t = txs[i];
        if (typeof t === "string") {
          throw malformed("ledger", `ledger.transactions[${i}]`, `of ledger ${n} is not expanded`);
        }
        // Someone else's (nearly all of a ledger): checked in place, nothing built. Anything else through the schema.
        if (ours && isPlainLedgerTx(t) && !touchesOurs(t, ours)) continue;
        keep(txEntry("ledger", t, ["ledger", "transactions", i], true), ours, transfers);
      }
      return { ok: true, block: blockOf(header, transfers), bytes: meter.bytes };
    } catch (err) {
      return { ok: false, err };
    }
  }

  /**
   * Validated ledger `n` in small answers, when its whole answer was too big for the provider: its list of transaction
   * hashes, then each transaction with `tx` (`MAX_IN_FLIGHT` at once), every one checked to be in that ledger.
   */
  async function ledgerInParts(n: number, ours: ScanOptions["ours"]): Promise<Fetched> {
    let bytes = 0;
    const call = async (method: string, params: Record<string, unknown>) => {
      const meter: ByteMeter = { bytes: 0 };
      try {
        return method === "ledger" ? await validatedLedger(n, "hashes", meter) : await rpc.call(method, params, meter);
      } finally {
        counted(meter.bytes);
        bytes += meter.bytes;
      }
    };
    try {
      const r = await call("ledger", {});
      if (!r) return { ok: true, block: null, bytes };
      const { txs, ...header } = ledgerOf(n, r);
      const hashes = txs.map((h, i) => {
        if (typeof h !== "string") throw malformed("ledger", `ledger.transactions[${i}]`, "is not a transaction hash");
        return h;
      });
      const transfers: ObservedTransfer[] = [];
      for (let i = 0; i < hashes.length; i += MAX_IN_FLIGHT) {
        const answers = await Promise.all(
          hashes.slice(i, i + MAX_IN_FLIGHT).map((h) => call("tx", { transaction: h, binary: false })),
        );
        for (const a of answers) {
          const place = readAnswer("tx", txPlace, a);
          if (place.ledger_index !== n || place.validated !== true) {
            throw malformed("tx", "ledger_index", `is ${place.ledger_index}, not validated ledger ${n} that lists it`);
          }
          keep(txEntry("tx", a, [], true), ours, transfers);
        }
      }
      return { ok: true, block: blockOf(header, transfers), bytes };
    } catch (err) {
      return { ok: false, err };
    }
  }

  function blockOf(
    header: { number: number; hash: string; parentHash: string },
    transfers: ObservedTransfer[],
  ): ScannedBlock {
    return { number: header.number, hash: header.hash, parentHash: header.parentHash, transfers };
  }

  /** `got` for ledger `n` once the provider's refusals are dealt with (module comment): read, or why it was not. */
  async function retried(n: number, got: Fetched, ours: ScanOptions["ours"]): Promise<Fetched> {
    let waits = 0;
    let split = false;
    while (!got.ok) {
      const kind = refusalOf(got.err);
      const why = got.err instanceof Error ? got.err.message : String(got.err);
      if (kind === "rate" && waits < RATE_RETRIES) {
        const wait = backoffMs * 2 ** waits++;
        window.slowDown();
        stats.rateRefusals++;
        log(
          `xrp: ledger ${n} refused by the provider's load limit (${why}); asking again in ${wait} ms, one ledger at a time`,
        );
        await new Promise((r) => setTimeout(r, wait));
        got = split ? await ledgerInParts(n, ours) : await wholeLedger(n, ours);
      } else if (kind === "size" && !split) {
        split = true;
        stats.fallbacks++;
        log(`xrp: ledger ${n} in one answer failed (${why}); reading it as its hashes and one tx call per transaction`);
        got = await ledgerInParts(n, ours);
      } else {
        return got;
      }
    }
    return got;
  }

  async function scan(from: number, to: number, opts: ScanOptions = {}): Promise<ScannedBlock[]> {
    const first = Math.max(1, from);
    const blocks: ScannedBlock[] = [];
    let consumed = 0;
    // The byte budget ends the scan at a ledger boundary, never before one ledger is in hand: an empty answer would
    // tell the watcher the whole range is empty.
    const within = () => opts.maxBytes === undefined || blocks.length === 0 || consumed < opts.maxBytes;
    const pending = new Map<number, Promise<Fetched>>();
    let next = first;
    const launch = () => {
      while (next <= to && pending.size < window.size && within()) pending.set(next, wholeLedger(next++, opts.ours));
    };
    for (let n = first; n <= to; n++) {
      // Ledgers asked for before the budget was reached are read too (already in flight); no more are asked.
      if (!pending.has(n)) {
        if (!within()) break;
        launch();
      }
      const got = await retried(n, await pending.get(n)!, opts.ours);
      pending.delete(n);
      if (!got.ok) {
        const why = got.err instanceof Error ? got.err.message : String(got.err);
        log(`xrp: ledger ${n} could not be read (${why}); the watcher stays before it and asks again`);
        // A provider that still refuses: the ledgers in hand are kept (the watcher goes on after them). Anything else
        // (a malformed answer, the node's own error) refuses the scan, as a ledger read alone would.
        if (blocks.length > 0 && refusalOf(got.err) !== "other") break;
        throw got.err;
      }
      if (!got.block) break; // not validated yet: the watcher asks again later
      window.answered(1, got.bytes);
      consumed += got.bytes;
      if (opts.meter) opts.meter.bytes += got.bytes;
      stats.blocks++;
      stats.transfersBuilt += got.block.transfers.length;
      blocks.push(got.block);
      launch();
    }
    return blocks;
  }

  async function validatedSequence(account: string): Promise<number | null> {
    try {
      const r = await rpc.call("account_info", { account, ledger_index: "validated" });
      return readAnswer("account_info", accountInfo, r).account_data.Sequence;
    } catch (err) {
      if (isXrplError(err, "actNotFound")) return null;
      throw err;
    }
  }

  return {
    chain: "xrp",
    finality,
    tip,
    async blockHash(n) {
      // The XRP Ledger starts at ledger 1: below it there is no ledger, which is not "above the tip" either.
      if (n < 1) return SKIPPED;
      const r = await validatedLedger(n, "none");
      if (!r) return null;
      const a = readAnswer("ledger", ledgerAnswer, r);
      return a.ledger_hash ?? a.ledger.ledger_hash ?? missing("ledger", "ledger_hash");
    },
    scan,
    txStatus: status,
    async transfersOf(txHash) {
      let r: XrplResult;
      try {
        r = await rpc.call("tx", { transaction: txHash, binary: false });
      } catch (err) {
        if (isXrplError(err, "txnNotFound")) return null;
        throw err;
      }
      if (readAnswer("tx", txPlace, r).validated !== true) return null;
      return transfersOfEntry(txEntry("tx", r, [], true));
    },
    async balance(address) {
      try {
        const r = await rpc.call("account_info", { account: address, ledger_index: "validated" });
        return readAnswer("account_info", accountInfo, r).account_data.Balance;
      } catch (err) {
        if (isXrplError(err, "actNotFound")) return 0n;
        throw err;
      }
    },
    stats,
  };
}
