/**
 * The Sui GraphQL answers the sui reader and payer read, one zod schema per document of chains/sui/graphql.ts
 * (chains/shared/answers.ts says what a refusal is and how amounts become bigint). Each holds what the document asks
 * for and the adapter reads, in the types of the schema shipped in `@mysten/sui`
 * (`src/graphql/generated/schema.graphql`, which tests/support/sui_graphql_server.ts serves): `UInt53` sequence
 * numbers, epochs and versions as numbers, `BigInt` amounts as decimal strings (read as bigint; a balance change is
 * signed), `ExecutionStatus` as SUCCESS or FAILURE and nothing else, so a status the adapter does not know is refused
 * rather than read as a failure (which would leave a deposit uncredited).
 */
import { z } from "zod";
import { missingOr, readAnswer, text, units, whole } from "../shared/answers.ts";
import type { SuiGraphql } from "./client.ts";
import { isSuiCoinType, normalizeSuiAddress } from "./client.ts";
import { operationName } from "./graphql.ts";
import type { ByteMeter } from "../shared/http_failover.ts";

/** `document` sent with `variables`, its `data` read through `schema`; else a `MalformedAnswerError` naming both. */
export async function suiRequest<S extends z.ZodType>(
  gql: SuiGraphql,
  document: string,
  schema: S,
  variables?: Record<string, unknown>,
  meter?: ByteMeter,
): Promise<z.output<S>> {
  return readAnswer("sui GraphQL", operationName(document), schema, await gql.request(document, variables, meter));
}

export const mist = units("MIST");

/** A Sui address, in the canonical form the adapter compares (`0x` and 64 lowercase hex digits). */
const address = text.transform((a, ctx) => {
  try {
    return normalizeSuiAddress(a);
  } catch {
    ctx.addIssue({ code: "custom", message: `is not a Sui address (${JSON.stringify(a)})`, input: a });
    return z.NEVER;
  }
});

const pageInfo = z.object({ hasNextPage: z.boolean(), endCursor: text.nullable() }, {
  error: missingOr("a page's info"),
});

/**
 * A balance change. Only the SUI change of an address is credited, so only its amount must be there: another coin's,
 * or one owned by an object, is not read.
 */
const balanceChange = z.object({
  owner: z.object({ address }).nullable(),
  coinType: z.object({ repr: text }).nullable(),
  amount: units("MIST", { signed: true }).nullable(),
}, { error: missingOr("a balance change") }).superRefine((change, ctx) => {
  if (change.owner && change.coinType && isSuiCoinType(change.coinType.repr) && change.amount === null) {
    ctx.addIssue({ code: "custom", message: "is missing on a SUI change of an address", path: ["amount"] });
  }
});
export type SuiBalanceChange = z.output<typeof balanceChange>;

const balanceChanges = z.object({ pageInfo, nodes: z.array(balanceChange) }, {
  error: missingOr("a page of balance changes"),
});
export type SuiBalanceChanges = z.output<typeof balanceChanges>;

const status = z.enum(["SUCCESS", "FAILURE"], { error: missingOr("SUCCESS or FAILURE") });

/** A transaction as TRANSACTION_FIELDS (and the scan's fragment) asks for it. */
export const transaction = z.object({
  digest: text,
  sender: z.object({ address }).nullable(),
  effects: z.object({ status: status.nullable(), balanceChanges: balanceChanges.nullable() }).nullable(),
}, { error: missingOr("a transaction") });
export type SuiTransaction = z.output<typeof transaction>;

const checkpointRef = z.object({ sequenceNumber: whole }, { error: missingOr("a checkpoint") });

/** LATEST_CHECKPOINT. */
export const latestCheckpointAnswer = z.object({
  checkpoint: z.object({ sequenceNumber: whole, digest: text }, { error: missingOr("a checkpoint") }).nullable(),
});

/** CHECKPOINT_DIGEST: null above the tip. */
export const checkpointDigestAnswer = z.object({
  checkpoint: z.object({ digest: text }, { error: missingOr("a checkpoint") }).nullable(),
});

/**
 * A scan's answer, checkpoint by checkpoint: the checkpoints with their transactions as answered (each transaction is
 * checked in place or read through `transaction` by the reader, one at a time, so a page of others' transactions is
 * never copied whole).
 */
const rawTransactions = z.object({ pageInfo, nodes: z.array(z.unknown()) }, {
  error: missingOr("a page of transactions"),
});
export type SuiRawTransactions = z.output<typeof rawTransactions>;

/** SCAN_CHECKPOINTS, its transactions left as answered. */
export const scanCheckpointsRawAnswer = z.object({
  checkpoints: z.object({
    nodes: z.array(
      z.object({
        sequenceNumber: whole,
        digest: text,
        previousCheckpointDigest: text.nullable(),
        transactions: rawTransactions.nullable(),
      }, { error: missingOr("a checkpoint") }),
    ),
  }, { error: missingOr("checkpoints") }).nullable(),
});

const furtherPage = z.object({ transactions: rawTransactions.nullable() }, { error: missingOr("a checkpoint") })
  .nullable();
const furtherPages = (k: number) =>
  z.object(Object.fromEntries(Array.from({ length: k }, (_, i) => [`p${i}`, furtherPage])));
const furtherPagesAnswers = new Map<number, ReturnType<typeof furtherPages>>();

/** `transactionPagesDocument(k)`: each aliased checkpoint (`p0`..) with a further page of its transactions. */
export function transactionPagesAnswer(k: number): ReturnType<typeof furtherPages> {
  let schema = furtherPagesAnswers.get(k);
  if (!schema) furtherPagesAnswers.set(k, schema = furtherPages(k));
  return schema;
}

/** BALANCE_CHANGES_PAGE: a further page of one transaction's balance changes. */
export const balanceChangesAnswer = z.object({
  transactionEffects: z.object({ balanceChanges: balanceChanges.nullable() }, { error: missingOr("effects") })
    .nullable(),
});

/** TX_STATUS: the transaction's effects (null when unknown), the latest checkpoint and the current epoch. */
export const txStatusAnswer = z.object({
  transactionEffects: z.object({
    status: status.nullable(),
    executionError: z.object({ message: text }).nullable(),
    checkpoint: checkpointRef.nullable(),
  }, { error: missingOr("effects") }).nullable(),
  checkpoint: checkpointRef.nullable(),
  epoch: z.object({ epochId: whole }, { error: missingOr("an epoch") }).nullable(),
});

/** TRANSACTION: the transaction and the checkpoint its effects are in. */
export const transactionAnswer = z.object({
  transaction: transaction.nullable(),
  transactionEffects: z.object({ checkpoint: checkpointRef.nullable() }, { error: missingOr("effects") }).nullable(),
});

/** BALANCE. */
export const balanceAnswer = z.object({
  address: z.object({
    balance: z.object({ totalBalance: mist.nullable() }, { error: missingOr("a balance") }).nullable(),
  }, { error: missingOr("an address") }).nullable(),
});

/** GAS_COINS: a page of SUI coin objects; a coin without a digest or a balance is not usable as gas (skipped). */
export const gasCoinsAnswer = z.object({
  address: z.object({
    objects: z.object({
      pageInfo,
      nodes: z.array(
        z.object({
          address,
          version: whole,
          digest: text.nullable(),
          contents: z.object({ json: z.object({ balance: mist.optional() }).nullable() }).nullable(),
        }, { error: missingOr("a coin object") }),
      ),
    }, { error: missingOr("a page of objects") }).nullable(),
  }, { error: missingOr("an address") }).nullable(),
});

export type SuiGasCoinsAnswer = z.output<typeof gasCoinsAnswer>;

/** EPOCH. */
export const epochAnswer = z.object({
  epoch: z.object({ epochId: whole, referenceGasPrice: mist.nullable() }, { error: missingOr("an epoch") })
    .nullable(),
});

const furtherChanges = z.object({ balanceChanges: balanceChanges.nullable() }, { error: missingOr("effects") })
  .nullable();
const furtherChangePages = (k: number) =>
  z.object(Object.fromEntries(Array.from({ length: k }, (_, i) => [`b${i}`, furtherChanges])));
const furtherChangePagesAnswers = new Map<number, ReturnType<typeof furtherChangePages>>();

/** `balanceChangePagesDocument(k)`: each aliased transaction's effects (`b0`..) with a further page of changes. */
export function balanceChangePagesAnswer(k: number): ReturnType<typeof furtherChangePages> {
  let schema = furtherChangePagesAnswers.get(k);
  if (!schema) furtherChangePagesAnswers.set(k, schema = furtherChangePages(k));
  return schema;
}
