/**
 * The parts of an XRP Ledger scan that bound it (docs/scan-budget.md, "XRP Ledger"): the in-place check of a ledger's
 * transactions, the test of whether one touches an address of ours before anything is built of it, how many ledgers
 * are asked for at once, and what a failed request says about the provider.
 */
import { TransientChainError } from "../adapter.ts";
import { XrplRpcError } from "./rpc.ts";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const HASH = /^[0-9A-Fa-f]{64}$/;
const DIGITS = /^\d+$/;
const isDrops = (v: unknown) =>
  (typeof v === "string" && DIGITS.test(v)) || (typeof v === "number" && Number.isSafeInteger(v) && v >= 0);
const isOptionalString = (v: unknown) => v === undefined || typeof v === "string";

/** The two shapes of a ledger's transaction entry (chains/xrp/answers.ts `txEntry`): its fields and its metadata. */
function partsOf(raw: Obj): { tx: Obj; meta: unknown } | null {
  const meta = raw.meta !== undefined ? raw.meta : raw.metaData;
  if ("tx_json" in raw) return isObject(raw.tx_json) ? { tx: raw.tx_json, meta } : null;
  return { tx: raw, meta };
}

function isPlainRoot(node: unknown, fields: "FinalFields" | "NewFields"): boolean {
  if (!isObject(node) || typeof node.LedgerEntryType !== "string") return false;
  if (node.LedgerEntryType !== "AccountRoot") return true;
  const f = node[fields];
  if (!isObject(f) || typeof f.Account !== "string" || !isDrops(f.Balance)) return false;
  if (fields === "NewFields") return true;
  const prev = node.PreviousFields;
  return prev === undefined || (isObject(prev) && (prev.Balance === undefined || isDrops(prev.Balance)));
}

/**
 * Whether a ledger's `transactions` entry is, field by field, one `txEntry` (chains/xrp/answers.ts) reads in a ledger
 * (metadata required) with the same values: checked in place, without the copy its schema makes. Stricter where that
 * is simpler: anything it refuses is read through the schema, which accepts it or refuses it naming the field.
 */
export function isPlainLedgerTx(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  const parts = partsOf(raw);
  if (!parts) return false;
  const { tx, meta } = parts;
  if (typeof tx.TransactionType !== "string" || typeof tx.Account !== "string") return false;
  if (!isOptionalString(tx.Destination)) return false;
  const hash = raw.hash ?? tx.hash;
  if (typeof hash !== "string" || !HASH.test(hash) || (tx.hash !== undefined && typeof tx.hash !== "string")) {
    return false;
  }
  if (tx.hash !== undefined && !HASH.test(tx.hash as string)) return false;
  if (!isObject(meta) || typeof meta.TransactionResult !== "string") return false;
  if (raw.meta !== undefined && raw.metaData !== undefined) return false; // both read by the schema: let it
  const delivered = meta.delivered_amount;
  if (delivered !== undefined) {
    if (typeof delivered === "string") {
      if (delivered !== "unavailable" && !DIGITS.test(delivered)) return false;
    } else if (
      !isObject(delivered) || typeof delivered.value !== "string" || !isOptionalString(delivered.currency) ||
      !isOptionalString(delivered.issuer) || !isOptionalString(delivered.mpt_issuance_id)
    ) return false;
  }
  if (tx.TransactionType === "Payment" && meta.TransactionResult === "tesSUCCESS") {
    if (tx.Destination === undefined || delivered === undefined) return false;
  }
  if (!Array.isArray(meta.AffectedNodes)) return false;
  for (const node of meta.AffectedNodes) {
    if (!isObject(node)) return false;
    if (node.ModifiedNode !== undefined && !isPlainRoot(node.ModifiedNode, "FinalFields")) return false;
    if (node.CreatedNode !== undefined && !isPlainRoot(node.CreatedNode, "NewFields")) return false;
  }
  return true;
}

/**
 * Whether a successful transaction, checked by `isPlainLedgerTx`, pays or raises the XRP balance of an address `ours`
 * accepts: the Payment's Destination, or an AccountRoot whose balance it touched. Only such a transaction is read
 * through the schema and made into transfers (chains/xrp/reader.ts `transfersOfEntry`, which holds the rules); the
 * others of a ledger cost no object.
 */
export function touchesOurs(raw: unknown, ours: (address: string) => boolean): boolean {
  const { tx, meta } = partsOf(raw as Obj)!;
  const m = meta as Obj;
  if (m.TransactionResult !== "tesSUCCESS") return false; // tec and the like deliver nothing
  if (tx.TransactionType === "Payment" && ours(tx.Destination as string)) return true;
  for (const node of m.AffectedNodes as Obj[]) {
    const modified = node.ModifiedNode as Obj | undefined;
    if (modified?.LedgerEntryType === "AccountRoot" && ours((modified.FinalFields as Obj).Account as string)) {
      return true;
    }
    const created = node.CreatedNode as Obj | undefined;
    if (created?.LedgerEntryType === "AccountRoot" && ours((created.NewFields as Obj).Account as string)) return true;
  }
  return false;
}

/** Ledgers asked for at once at most: rippled answers each `ledger` call alone (one ledger per request). */
export const MAX_IN_FLIGHT = 4;

/**
 * Bytes of answers a scan may have in flight at once: 4 mainnet ledgers (~220 KB each) fit many times over; a ledger
 * of several MB (a burst of NFT or AMM traffic) is asked for alone.
 */
export const TARGET_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

/**
 * What a failed `ledger` request says:
 * - `rate`: the provider is over its load limit: rippled's `slowDown`/`tooBusy` (chains/xrp/rpc.ts, transient), its
 *   JSON-RPC's HTTP 503 "Server is overloaded", a provider's 429. Wait and ask again, one at a time.
 * - `size`: the answer was too big for the provider: HTTP 413, "response too large", or a timeout while it was sent.
 *   Ask for the same ledger in smaller answers (its hashes, then each transaction).
 * - `other`: anything else (the node's answer about the request, a malformed answer): not retried here.
 */
export function refusalOf(err: unknown): "rate" | "size" | "other" {
  if (!(err instanceof TransientChainError)) return "other";
  const cause = err.cause;
  if (cause instanceof XrplRpcError) return cause.code === "slowDown" || cause.code === "tooBusy" ? "rate" : "other";
  const message = err.message;
  if (/HTTP (429|503)\b/.test(message)) return "rate";
  if (/HTTP 413\b|too large|timed out|timeout/i.test(message)) return "size";
  return "other";
}
