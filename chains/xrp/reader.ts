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
 * with the transaction's fields inline and the metadata under `metaData` (`meta` in v1 `tx` answers). Every answer is
 * read through its schema (chains/xrp/answers.ts) first: a malformed one is refused by name and nothing is read from it.
 */
import { decode } from "xrpl";
import type { BlockRef, ChainReader, Finality, ObservedTransfer, OwnTx, ScannedBlock, TxStatus } from "../adapter.ts";
import { SKIPPED, TransientChainError } from "../adapter.ts";
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

export interface XrpReaderOptions {
  rpc: XrplRpc;
  confirmations: number;
}

export function xrpReader(opts: XrpReaderOptions): ChainReader {
  const { rpc } = opts;
  const finality: Finality = { kind: "flag", flag: "validated" };

  async function tip(): Promise<BlockRef> {
    const r = readAnswer("ledger", ledgerTip, await rpc.call("ledger", { ledger_index: "validated" }));
    return { number: r.ledger_index, hash: r.ledger_hash };
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
      const r = await validatedLedger(n, false);
      if (!r) return null;
      const a = readAnswer("ledger", ledgerAnswer, r);
      return a.ledger_hash ?? a.ledger.ledger_hash ?? missing("ledger", "ledger_hash");
    },
    async scan(from, to) {
      const blocks: ScannedBlock[] = [];
      for (let n = Math.max(1, from); n <= to; n++) {
        const r = await validatedLedger(n, true);
        if (!r) break; // not validated yet: the watcher asks again later
        const { ledger, ...top } = readAnswer("ledger", ledgerAnswer, r);
        // Asked with `transactions: true`: a ledger without the list would read as a ledger without deposits.
        const txs = ledger.transactions ?? missing("ledger", "ledger.transactions");
        blocks.push({
          number: ledger.ledger_index ?? top.ledger_index ?? missing("ledger", "ledger_index"),
          hash: ledger.ledger_hash ?? top.ledger_hash ?? missing("ledger", "ledger_hash"),
          parentHash: ledger.parent_hash,
          transfers: txs.flatMap((t, i) => {
            if (typeof t === "string") {
              throw malformed("ledger", `ledger.transactions[${i}]`, `of ledger ${n} is not expanded`);
            }
            return transfersOfEntry(txEntry("ledger", t, ["ledger", "transactions", i], true));
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
  };
}
