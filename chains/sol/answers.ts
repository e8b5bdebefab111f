/**
 * The Solana JSON-RPC answers the sol reader and payer read, as zod schemas (chains/shared/answers.ts says what a
 * refusal is and how amounts become bigint). Each schema holds only the fields the adapter uses, so a block of
 * thousands of transactions is checked in one pass over what is credited from it (per transaction: its signatures,
 * its account keys' `pubkey` and `signer`, `meta.err`, `meta.preBalances` and `meta.postBalances`) and nothing else.
 * A scan checks a block in place first (chains/sol/reader.ts `isPlainScanBlock`, accepting only what `scanBlockAnswer`
 * accepts, without its copy) and reads it through `scanBlockAnswer` when that check refuses it.
 *
 * Shapes are Agave's, as solana.com's RPC reference documents them (tests/support/solana_rpc_server.ts answers the
 * same): lamports are JSON integers (a balance above 2^53 arrives as digits, never rounded: chains/sol/rpc.ts);
 * `meta.err` and a signature status's `err` are null on success, else a `TransactionError` (an object or a string);
 * both are always present, and an answer without them is refused rather than read as a failure (which would leave a
 * deposit uncredited) or a success.
 */
import { z } from "zod";
import { flag, missingOr, readAnswer, text, units, whole } from "../shared/answers.ts";

/** `answer` to `method` read through `schema`; else a `MalformedAnswerError` naming the method and the field. */
export function solAnswer<S extends z.ZodType>(method: string, schema: S, answer: unknown): z.output<S> {
  return readAnswer("sol", method, schema, answer);
}

export const lamports = units("lamports");

/** A value that must be present, whatever it is (`null` included): a transaction error. */
const present = z.unknown().refine((v) => v !== undefined, { error: "is missing" });

/** `getSlot`, `getBlockHeight`, `getFirstAvailableBlock`. */
export const slotAnswer = whole;

/** `getBlocks`: the slots holding a block, ascending. */
export const slotsAnswer = z.array(whole, { error: missingOr("a list of slots") });

/** An account key as `transactionDetails: "accounts"` and `jsonParsed` list it; `writable` and `source` are unread. */
const accountKey = z.object({ pubkey: text, signer: flag }, { error: missingOr("an account key") });
const accountKeys = z.array(accountKey, { error: missingOr("a list of account keys") });

/** A transaction with `transactionDetails: "accounts"` (in a block) or `encoding: "jsonParsed"` (getTransaction). */
export const transactionAnswer = z.object({
  transaction: z.object({
    signatures: z.array(text, { error: missingOr("a list of signatures") }),
    /** "accounts" mode puts the keys here. */
    accountKeys: accountKeys.optional(),
    /** jsonParsed mode puts them in the message. */
    message: z.object({ accountKeys }).optional(),
  }, { error: missingOr("a transaction") }),
  /** Null for a transaction without status metadata (never credited). */
  meta: z.object({
    err: present,
    preBalances: z.array(lamports, { error: missingOr("a list of balances") }),
    postBalances: z.array(lamports, { error: missingOr("a list of balances") }),
  }, { error: missingOr("transaction metadata") }).nullable(),
}, { error: missingOr("a transaction") });
export type SolTransaction = z.output<typeof transactionAnswer>;

/** `getTransaction` at finalized: null when the node has no such finalized transaction. */
export const transactionOrNullAnswer = transactionAnswer.nullable();

/** `getBlock` with `transactionDetails: "none"`: only the hash is read; null is "no block" where the node says so. */
export const blockHashAnswer = z.object({ blockhash: text }, { error: missingOr("a block") }).nullable();

/**
 * `getBlock` with `transactionDetails: "accounts"`: a scan reads its hash, its parent's and every transaction; the
 * list is required, since a block answered without it would be scanned as holding no deposit.
 */
export const scanBlockAnswer = z.object({
  blockhash: text,
  previousBlockhash: text,
  transactions: z.array(transactionAnswer, { error: missingOr("a list of transactions") }),
}, { error: missingOr("a block") }).nullable();

/**
 * `getSignatureStatuses` for one signature: exactly one entry, null when the node does not know it. An empty list is
 * refused: read as "unknown", it could prove a landed payout dead and have it signed again.
 */
export const signatureStatusAnswer = z.object({
  value: z.array(
    z.object({
      slot: whole,
      confirmations: whole.nullable(),
      err: present,
      // Agave always answers it; a node that does not is read as not finalized (the payout waits), as before.
      confirmationStatus: z.enum(["processed", "confirmed", "finalized"]).nullish(),
    }, { error: missingOr("a signature status") }).nullable(),
    { error: missingOr("a list of signature statuses") },
  ).length(1, { error: "is not one status for the one signature asked" }),
}, { error: missingOr("signature statuses") });

/** `getBalance`: lamports in `value`. */
export const balanceAnswer = z.object({ value: lamports.nullable() }, { error: missingOr("a balance") });

/** `getMinimumBalanceForRentExemption`. */
export const rentAnswer = lamports;

/** `getLatestBlockhash`: the blockhash a transaction carries and the height past which it can no longer land. */
export const latestBlockhashAnswer = z.object({
  value: z.object({ blockhash: text, lastValidBlockHeight: whole }, { error: missingOr("a blockhash") }),
}, { error: missingOr("a blockhash") });

/**
 * `getSignaturesForAddress`: newest first, at most the `limit` asked. A polling scan reads each entry's signature, slot
 * and `err` (a failed transaction is listed too, and never credited); `memo` and `blockTime` are unread.
 */
export const signaturesAnswer = z.array(
  z.object({
    signature: text,
    slot: whole,
    err: present,
    confirmationStatus: z.enum(["processed", "confirmed", "finalized"]).nullish(),
  }, { error: missingOr("a signature entry") }),
  { error: missingOr("a list of signatures") },
);
export type SignatureEntry = z.output<typeof signaturesAnswer>[number];

/**
 * `getTransaction` at `encoding: "json"`: the message's static keys as strings, the first
 * `header.numRequiredSignatures` of them signers, then the keys loaded from lookup tables (`meta.loadedAddresses`,
 * writable then read-only). That order is the order of the balances, and of `accountKeys` in a block read with
 * `transactionDetails: "accounts"`, so an account's index is the same either way (chains/sol/poll.ts). Null: the node
 * has no such transaction at that commitment.
 */
export const jsonTransactionOrNullAnswer = z.object({
  slot: whole,
  transaction: z.object({
    signatures: z.array(text, { error: missingOr("a list of signatures") }),
    message: z.object({
      header: z.object({ numRequiredSignatures: whole }, { error: missingOr("a message header") }),
      accountKeys: z.array(text, { error: missingOr("a list of account keys") }),
      addressTableLookups: z.array(z.unknown()).nullish(),
    }, { error: missingOr("a message") }),
  }, { error: missingOr("a transaction") }),
  meta: z.object({
    err: present,
    preBalances: z.array(lamports, { error: missingOr("a list of balances") }),
    postBalances: z.array(lamports, { error: missingOr("a list of balances") }),
    loadedAddresses: z.object({
      writable: z.array(text, { error: missingOr("a list of addresses") }),
      readonly: z.array(text, { error: missingOr("a list of addresses") }),
    }, { error: missingOr("loaded addresses") }).nullish(),
  }, { error: missingOr("transaction metadata") }).nullable(),
}, { error: missingOr("a transaction") }).nullable();
export type JsonTransaction = NonNullable<z.output<typeof jsonTransactionOrNullAnswer>>;

/** `getBlock` with `transactionDetails: "none"` where the parent matters too (a block a polling scan returns). */
export const blockHeaderAnswer = z.object({ blockhash: text, previousBlockhash: text }, { error: missingOr("a block") })
  .nullable();
