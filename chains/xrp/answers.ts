/**
 * The rippled/Clio JSON-RPC answers the xrp adapter reads, as zod schemas: `ledger`, `tx`, `account_info`,
 * `server_state`, `fee` and `submit`, in the shapes xrpl.org documents for them (tests/support/rippled_rpc_server.ts
 * answers the same shapes).
 *
 * A malformed answer is refused by name (`MalformedAnswerError`, chains/shared/answers.ts: `xrp server_state: state.validated_ledger.reserve_base is
 * not a whole number of drops`) before anything is read from it, rather than a `SyntaxError` from `BigInt` or a
 * `TypeError` from a missing object half way through. It is transient: it says nothing about our request, the node (or
 * another one) may answer well next time, and meanwhile nothing moves: the watcher's cursor stays, nothing is
 * recorded, no payout is prepared.
 *
 * Units: XRP amounts are drops, written by rippled as strings of digits (`Balance`, `delivered_amount`, `fee`'s
 * `drops`), except `server_state`'s `validated_ledger` reserves and base fee, which are JSON integers of drops
 * (`server_info` gives the same as decimal XRP in `*_xrp` fields: not read here). Both become `bigint`; a float, a
 * negative, an exponent or any non-digit is refused, never rounded.
 *
 * Ledger transactions come in two shapes (docs/live-chains.md, "Live Solana, XRP Ledger and Sui"): API v2 `{tx_json,
 * meta, hash}` and v1 with the fields inline and the metadata under `metaData` (`meta` in v1 `tx` answers). `txEntry`
 * reads both into one `XrplTxEntry`.
 */
import { z } from "zod";
import {
  fieldOf,
  flag,
  MalformedAnswerError,
  missingOr,
  readAnswer as readNodeAnswer,
  text,
  units,
  whole,
} from "../shared/answers.ts";

export { whole };

type Path = readonly PropertyKey[];

/** The node's answer to `method` is malformed at `field` (chains/shared/answers.ts), as this adapter names it. */
export function malformed(method: string, field: string, problem: string): MalformedAnswerError {
  return new MalformedAnswerError("xrp", method, field, problem);
}

/** `answer` (or the part of it at `at`) read through `schema`; else a `MalformedAnswerError` naming the first problem. */
export function readAnswer<S extends z.ZodType>(
  method: string,
  schema: S,
  answer: unknown,
  at: Path = [],
): z.output<S> {
  return readNodeAnswer("xrp", method, schema, answer, at);
}

/** An object, its fields beyond `shape` kept (rippled adds fields over time; only `shape` is read). */
const object = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject(shape, { error: missingOr("an object") });

/** Drops: a string of decimal digits, or a safe JSON integer (server_state). Never a float, a sign or an exponent. */
export const drops = units("drops");

/** A transaction or ledger hash: 256 bits in hex, upper-cased as the rest of the adapter compares them. */
const hash = text.regex(/^[0-9A-Fa-f]{64}$/, { error: "is not a 256-bit hex hash" }).transform((h) => h.toUpperCase());

// ------------------------------------------------------------------------------------------------ transactions

/**
 * `delivered_amount`: drops (a string), an issued currency or MPT amount (an object), or "unavailable" (a Payment
 * from a ledger before DeliveredAmount was recorded, January 2014). Only drops are ever credited.
 */
const deliveredAmount = z.union([
  z.string(),
  object({
    value: text,
    currency: z.string().optional(),
    issuer: z.string().optional(),
    mpt_issuance_id: z.string().optional(),
  }),
], { error: missingOr('drops, an issued amount or "unavailable"') }).transform((v, ctx) => {
  if (typeof v !== "string") return { kind: "issued" as const, ...v };
  if (v === "unavailable") return { kind: "unavailable" as const };
  if (/^\d+$/.test(v)) return { kind: "drops" as const, drops: BigInt(v) };
  ctx.addIssue({
    code: "custom",
    message: `is not drops, an issued amount or "unavailable" (${JSON.stringify(v)})`,
    input: v,
  });
  return z.NEVER;
});
export type DeliveredAmount = z.output<typeof deliveredAmount>;

/** Reads `value` with `schema` inside a transform, its problems reported at their place in the outer answer. */
function inner<S extends z.ZodType>(schema: S, value: unknown, ctx: z.RefinementCtx): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  return z.NEVER;
}

/** An AccountRoot's XRP balance before (when it changed) and after, in `AffectedNodes`; other entries are not read. */
const modifiedRoot = object({
  FinalFields: object({ Account: text, Balance: drops }),
  PreviousFields: object({ Balance: drops.optional() }).optional(),
});
const createdRoot = object({ NewFields: object({ Account: text, Balance: drops }) });

const affectedNode = object({
  ModifiedNode: object({ LedgerEntryType: text }).transform((n, ctx) =>
    n.LedgerEntryType === "AccountRoot" ? inner(modifiedRoot, n, ctx) : null
  ).optional(),
  CreatedNode: object({ LedgerEntryType: text }).transform((n, ctx) =>
    n.LedgerEntryType === "AccountRoot" ? inner(createdRoot, n, ctx) : null
  ).optional(),
});

const meta = object({
  TransactionResult: text,
  delivered_amount: deliveredAmount.optional(),
  AffectedNodes: z.array(affectedNode, { error: missingOr("a list") }),
});
export type XrplMeta = z.output<typeof meta>;

const txFields = object({
  TransactionType: text,
  Account: text,
  Destination: z.string({ error: "is not a string" }).optional(),
  hash: hash.optional(),
});
export type XrplTxFields = z.output<typeof txFields>;

/** A transaction with its metadata, whichever API version shaped it. */
export interface XrplTxEntry {
  hash: string;
  tx: XrplTxFields;
  meta: XrplMeta | null;
}

const metas = { meta: meta.optional(), metaData: meta.optional() };
const v2Entry = object({ tx_json: txFields, hash: hash.optional(), ...metas });
const v1Entry = txFields.extend(metas);

/**
 * A ledger `transactions` entry or a `tx` answer (`at` is its place in the answer), v1 or v2, as one entry. `needMeta`:
 * the transaction is in a ledger, so its metadata must be there (without it, nothing says what it did).
 */
export function txEntry(method: string, raw: unknown, at: Path, needMeta: boolean): XrplTxEntry {
  const refuse = (field: string, problem: string): never => {
    throw malformed(method, fieldOf([...at, field]), problem);
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw malformed(method, fieldOf(at), "is not a transaction object");
  }
  const v2 = "tx_json" in raw;
  let tx: XrplTxFields;
  let e: z.output<typeof v2Entry> | z.output<typeof v1Entry>;
  if (v2) {
    const entry = readAnswer(method, v2Entry, raw, at);
    [tx, e] = [entry.tx_json, entry];
  } else {
    const entry = readAnswer(method, v1Entry, raw, at);
    [tx, e] = [entry, entry];
  }
  const txField = v2 ? "tx_json." : "";
  const found = e.meta ?? e.metaData;
  const metaField = !e.meta && e.metaData ? "metaData" : "meta";
  const txHash = e.hash ?? tx.hash ?? refuse("hash", "is missing");
  if (!found && needMeta) refuse("meta", "is missing (a transaction in a ledger always has its metadata)");
  const m = found ?? null;
  if (tx.TransactionType === "Payment" && m?.TransactionResult === "tesSUCCESS") {
    if (tx.Destination === undefined) refuse(`${txField}Destination`, "is missing from a successful Payment");
    if (m.delivered_amount === undefined) {
      refuse(`${metaField}.delivered_amount`, "is missing from a successful Payment");
    }
  }
  return { hash: txHash, tx, meta: m };
}

// ------------------------------------------------------------------------------------------------ answers

/** `ledger` for "validated": its index and hash. */
export const ledgerTip = object({ ledger_index: whole, ledger_hash: hash });

/** `ledger` for one index: whether it is validated, then its header and (when asked) its expanded transactions. */
export const ledgerValidated = object({ validated: flag.optional() });
export const ledgerAnswer = object({
  ledger_index: whole.optional(),
  ledger_hash: hash.optional(),
  ledger: object({
    ledger_index: whole.optional(),
    ledger_hash: hash.optional(),
    parent_hash: hash,
    transactions: z.array(z.unknown(), { error: missingOr("a list") }).optional(),
  }),
});

/** `tx`: where the transaction is (no `ledger_index` while it waits in the open ledger) and whether that is final. */
export const txPlace = object({ ledger_index: whole.optional(), validated: flag.optional() });

/** `account_info`'s `account_data`: an AccountRoot. */
export const accountInfo = object({
  account_data: object({
    Balance: drops,
    OwnerCount: whole.optional(),
    Sequence: whole,
  }),
});

/** `server_state`: reserves and the base fee in drops (JSON integers); no `validated_ledger` before the first one. */
export const serverState = object({
  state: object({
    validated_ledger: object({ seq: whole, reserve_base: drops, reserve_inc: drops, base_fee: drops })
      .optional(),
  }),
});

/** `fee`: the open ledger's fee in drops, when the node gives it. */
export const feeAnswer = object({
  drops: object({ open_ledger_fee: drops.optional() }).optional(),
});

/** `submit`: the engine's preliminary result. */
export const submitAnswer = object({
  engine_result: text,
  engine_result_message: z.string().optional(),
});

/** The fields of one of our signed blobs (decoded by xrpl) that prove it dead: who, which Sequence, until when. */
export const signedFields = object({
  Account: text,
  Sequence: z.number({ error: missingOr("a number") }).int().nonnegative(),
  LastLedgerSequence: z.number({ error: missingOr("a number") }).int().nonnegative(),
});
