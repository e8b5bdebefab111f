/**
 * The XRP Ledger reader: validated ledgers only (a validated ledger never changes, so every answer here is final).
 *
 * What counts as a deposit (DESIGN.md "XRP Ledger"): a `Payment` whose result is `tesSUCCESS` and whose
 * `meta.delivered_amount` is a string (drops). Never `Amount`: with `tfPartialPayment` it can exceed what arrived.
 * Everything else that raises an account's XRP balance in a successful transaction (an `AccountDelete` to it,
 * `EscrowFinish`, `CheckCash`, `PaymentChannelClaim`, ...) and an issued-currency payment to an address is reported
 * with a `heldReason`, so the watcher holds it for an operator instead of crediting it. `tec` results sit in validated
 * ledgers, claim the fee and deliver nothing: ignored.
 *
 * Ledger responses come in two shapes and both are read: API v2 entries `{tx_json, meta, hash, ...}` and v1 entries
 * with the transaction's fields inline and the metadata under `metaData` (`meta` in v1 `tx` answers).
 */
import { decode } from "xrpl";
import type { BlockRef, ChainReader, Finality, ObservedTransfer, OwnTx, ScannedBlock, TxStatus } from "../adapter.ts";
import { SKIPPED, TransientChainError } from "../adapter.ts";
import { NATIVE } from "../catalog.ts";
import { isXrplError, type XrplResult, type XrplRpc } from "./rpc.ts";

/** A transaction with its metadata, whichever API version shaped it. */
export interface XrplTxEntry {
  hash: string;
  tx: Record<string, unknown>;
  meta: Record<string, unknown> | null;
}

/** Normalises a ledger `transactions` entry or a `tx` answer (v1 or v2) to `XrplTxEntry`. */
export function txEntryOf(raw: unknown): XrplTxEntry {
  if (typeof raw !== "object" || raw === null) {
    throw new TransientChainError("xrp: a transaction entry is not an object");
  }
  const e = raw as Record<string, unknown>;
  const tx = (typeof e.tx_json === "object" && e.tx_json !== null ? e.tx_json : e) as Record<string, unknown>;
  const metaRaw = e.meta ?? e.metaData;
  const meta = typeof metaRaw === "object" && metaRaw !== null ? metaRaw as Record<string, unknown> : null;
  const hash = typeof e.hash === "string" ? e.hash : typeof tx.hash === "string" ? tx.hash : "";
  if (hash === "") throw new TransientChainError("xrp: a transaction entry has no hash");
  return { hash: hash.toUpperCase(), tx, meta };
}

const DROPS = /^\d+$/;

/** What the transaction moved to accounts, as the watcher sees it (see the module comment for the rules). */
export function transfersOfEntry(entry: XrplTxEntry): ObservedTransfer[] {
  const { tx, meta, hash } = entry;
  if (!meta || meta.TransactionResult !== "tesSUCCESS") return [];
  const from = String(tx.Account ?? "");
  const out: ObservedTransfer[] = [];
  let credited: string | null = null;
  if (tx.TransactionType === "Payment" && typeof tx.Destination === "string") {
    const delivered = meta.delivered_amount;
    if (typeof delivered === "string" && DROPS.test(delivered)) {
      out.push({ txHash: hash, index: 0, from, to: tx.Destination, amount: BigInt(delivered), asset: "native" });
      credited = tx.Destination;
    } else {
      out.push({
        txHash: hash,
        index: 0,
        from,
        to: tx.Destination,
        amount: 0n,
        asset: "native",
        heldReason: delivered === "unavailable"
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
  const nodes = Array.isArray(meta.AffectedNodes) ? meta.AffectedNodes : [];
  nodes.forEach((node, i) => {
    const rise = accountRootRise(node);
    if (!rise || rise.account === credited || rise.account === from || rise.amount <= 0n) return;
    out.push({
      txHash: hash,
      index: i + 1,
      from,
      to: rise.account,
      amount: rise.amount,
      asset: "native",
      heldReason: `XRPL ${String(tx.TransactionType)} raised the account's XRP balance by ${rise.amount} drops ` +
        `(not a Payment: never credited automatically)`,
    });
  });
  return out;
}

function describeAmount(a: unknown): string {
  if (typeof a === "object" && a !== null) {
    const { value, currency, issuer } = a as Record<string, unknown>;
    return `${String(value)} ${String(currency)}${issuer ? `.${String(issuer)}` : ""}`;
  }
  return String(a);
}

/** An AccountRoot whose XRP Balance rose in this transaction (modified, or created with a balance). */
function accountRootRise(node: unknown): { account: string; amount: bigint } | null {
  if (typeof node !== "object" || node === null) return null;
  const n = node as Record<string, Record<string, unknown> | undefined>;
  const modified = n.ModifiedNode;
  if (modified?.LedgerEntryType === "AccountRoot") {
    const final = modified.FinalFields as Record<string, unknown> | undefined;
    const previous = modified.PreviousFields as Record<string, unknown> | undefined;
    if (typeof final?.Balance !== "string" || typeof previous?.Balance !== "string") return null;
    if (!DROPS.test(final.Balance) || !DROPS.test(previous.Balance)) return null;
    return { account: String(final.Account), amount: BigInt(final.Balance) - BigInt(previous.Balance) };
  }
  const created = n.CreatedNode;
  if (created?.LedgerEntryType === "AccountRoot") {
    const fields = created.NewFields as Record<string, unknown> | undefined;
    if (typeof fields?.Balance !== "string" || !DROPS.test(fields.Balance)) return null;
    return { account: String(fields.Account), amount: BigInt(fields.Balance) };
  }
  return null;
}

/** The fields of a signed blob this reader needs to prove it dead. */
export interface SignedFacts {
  account: string;
  sequence: number;
  lastLedger: number;
}

export function signedFacts(raw: string): SignedFacts {
  const tx = decode(raw) as Record<string, unknown>;
  if (typeof tx.Account !== "string" || typeof tx.Sequence !== "number" || typeof tx.LastLedgerSequence !== "number") {
    throw new Error("xrp: a recorded transaction must carry Account, Sequence and LastLedgerSequence");
  }
  return { account: tx.Account, sequence: tx.Sequence, lastLedger: tx.LastLedgerSequence };
}

/** How far below LastLedgerSequence our transactions are searched for: twice the window they are signed with. */
export const SEARCH_BACK = 2 * (NATIVE.xrp.expiry.kind === "height" ? NATIVE.xrp.expiry.window : 20);

export function ledgerIndexOf(value: unknown): number {
  const n = typeof value === "string" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new TransientChainError(`xrp: ledger index ${String(value)} is not a number`);
  }
  return n;
}

export interface XrpReaderOptions {
  rpc: XrplRpc;
  confirmations: number;
}

export function xrpReader(opts: XrpReaderOptions): ChainReader {
  const { rpc } = opts;
  const finality: Finality = { kind: "flag", flag: "validated" };

  async function tip(): Promise<BlockRef> {
    const r = await rpc.call("ledger", { ledger_index: "validated" });
    return { number: ledgerIndexOf(r.ledger_index), hash: String(r.ledger_hash).toUpperCase() };
  }

  /** Validated ledger `n`, or null when it is not validated yet. */
  async function validatedLedger(n: number, transactions: boolean): Promise<XrplResult | null> {
    let r: XrplResult;
    try {
      r = await rpc.call(
        "ledger",
        transactions ? { ledger_index: n, transactions: true, expand: true } : { ledger_index: n },
      );
    } catch (err) {
      if (!isXrplError(err, "lgrNotFound")) throw err;
      if (n > (await tip()).number) return null;
      throw new TransientChainError(`xrp: the node has no ledger ${n} (history not kept), though it is validated`);
    }
    if (r.validated !== true) return null;
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
      const entry = txEntryOf(found);
      if (found.ledger_index === undefined) return { state: "pending" };
      const ledger = ledgerIndexOf(found.ledger_index);
      const validated = found.validated === true;
      const result = String(entry.meta?.TransactionResult ?? "");
      const top = validated ? (await tip()).number : ledger;
      return {
        state: "included",
        blockNumber: ledger,
        confirmations: Math.max(1, top - ledger + 1),
        success: result === "tesSUCCESS",
        ...(result === "tesSUCCESS" ? {} : { reason: result || "no result in the metadata" }),
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

  async function validatedSequence(account: string): Promise<number | null> {
    try {
      const r = await rpc.call("account_info", { account, ledger_index: "validated" });
      return ledgerIndexOf((r.account_data as Record<string, unknown>).Sequence);
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
      const r = await validatedLedger(n, false);
      if (!r) return null;
      return String(r.ledger_hash ?? (r.ledger as Record<string, unknown>).ledger_hash).toUpperCase();
    },
    async scan(from, to) {
      const blocks: ScannedBlock[] = [];
      for (let n = Math.max(1, from); n <= to; n++) {
        const r = await validatedLedger(n, true);
        if (!r) break; // not validated yet: the watcher asks again later
        const ledger = r.ledger as Record<string, unknown>;
        const txs = Array.isArray(ledger.transactions) ? ledger.transactions : [];
        blocks.push({
          number: ledgerIndexOf(ledger.ledger_index ?? r.ledger_index),
          hash: String(ledger.ledger_hash ?? r.ledger_hash).toUpperCase(),
          parentHash: String(ledger.parent_hash).toUpperCase(),
          transfers: txs.flatMap((t) => {
            if (typeof t === "string") {
              throw new TransientChainError(`xrp: ledger ${n} came without expanded transactions`);
            }
            return transfersOfEntry(txEntryOf(t));
          }),
        });
      }
      return blocks;
    },
    txStatus: status,
    async transfersOf(txHash) {
      let r: XrplResult;
      try {
        r = await rpc.call("tx", { transaction: txHash, binary: false });
      } catch (err) {
        if (isXrplError(err, "txnNotFound")) return null;
        throw err;
      }
      if (r.validated !== true) return null;
      return transfersOfEntry(txEntryOf(r));
    },
    async balance(address) {
      try {
        const r = await rpc.call("account_info", { account: address, ledger_index: "validated" });
        return BigInt(String((r.account_data as Record<string, unknown>).Balance));
      } catch (err) {
        if (isXrplError(err, "actNotFound")) return 0n;
        throw err;
      }
    },
  };
}
