/**
 * Every GraphQL document the Sui adapter sends, as named constants: one place to read what we ask a Sui GraphQL node,
 * and what tests/sui_graphql_schema_test.ts validates against the schema shipped in `@mysten/sui`
 * (src/graphql/generated/schema.graphql), so a field that does not exist fails CI, never production. The local test
 * server (tests/support/sui_graphql_server.ts) answers exactly these documents, matched by operation name.
 *
 * Schema facts relied on: `checkpoint` without arguments is the latest; `epoch` without arguments is the current one;
 * amounts (`BalanceChange.amount`, `Balance.totalBalance`, `Epoch.referenceGasPrice`) are `BigInt` scalars sent as
 * strings; `UInt53` numbers are JSON numbers; `BalanceChange.owner` is an `Address`; a coin's value is in its Move
 * contents' JSON (`{id, balance}`, u64 as a string).
 */

/** Page size of the transaction and coin connections we page through (Sui GraphQL's default maximum is 50). */
export const PAGE = 50;
/** Balance changes asked with each transaction in a scan (most have 2 to 4); more are paged for. */
export const SCAN_BALANCE_CHANGES = 10;
/** Checkpoints asked for in one scan query. */
export const SCAN_BATCH = 20;

/** The SUI coin type in the form `ObjectFilter.type` and `Address.balance` take. */
export const SUI_COIN_TYPE = "0x2::sui::SUI";
export const SUI_COIN_OBJECT_TYPE = "0x2::coin::Coin<0x2::sui::SUI>";

const BALANCE_CHANGES = `
  balanceChanges(first: ${SCAN_BALANCE_CHANGES}) {
    pageInfo { hasNextPage endCursor }
    nodes { owner { address } coinType { repr } amount }
  }`;

const TRANSACTION_FIELDS = `
  digest
  sender { address }
  effects {
    status
    ${BALANCE_CHANGES}
  }`;

/** The latest checkpoint and the epoch it is in. */
export const LATEST_CHECKPOINT = `query SuiLatestCheckpoint {
  checkpoint { sequenceNumber digest previousCheckpointDigest epoch { epochId } }
}`;

/** One checkpoint's digest, by sequence number (null above the tip). */
export const CHECKPOINT_DIGEST = `query SuiCheckpointDigest($sequenceNumber: UInt53!) {
  checkpoint(sequenceNumber: $sequenceNumber) { sequenceNumber digest previousCheckpointDigest }
}`;

/**
 * Checkpoints strictly between `after` and `before` (at most `SCAN_BATCH`), oldest first, each with its first page of
 * transactions and their first balance changes. A connection, not `multiGetCheckpoints`: Sui GraphQL estimates a
 * query's output nodes multiplying connection page sizes (limit 100,000 by default), and a connection's is its
 * `first`: 20 x 50 x 10 balance changes x 6 fields stays near 70,000.
 */
export const SCAN_CHECKPOINTS = `query SuiScanCheckpoints($after: UInt53, $before: UInt53) {
  checkpoints(first: ${SCAN_BATCH}, filter: { afterCheckpoint: $after, beforeCheckpoint: $before }) {
    nodes {
      sequenceNumber
      digest
      previousCheckpointDigest
      transactions(first: ${PAGE}) {
        pageInfo { hasNextPage endCursor }
        nodes { ${TRANSACTION_FIELDS} }
      }
    }
  }
}`;

/** The next page of one checkpoint's transactions (a checkpoint can hold many). */
export const CHECKPOINT_TRANSACTIONS = `query SuiCheckpointTransactions($sequenceNumber: UInt53!, $after: String) {
  checkpoint(sequenceNumber: $sequenceNumber) {
    transactions(first: ${PAGE}, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { ${TRANSACTION_FIELDS} }
    }
  }
}`;

/** The next page of one transaction's balance changes. */
export const BALANCE_CHANGES_PAGE = `query SuiBalanceChanges($digest: String!, $after: String) {
  transactionEffects(digest: $digest) {
    balanceChanges(first: ${PAGE}, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { owner { address } coinType { repr } amount }
    }
  }
}`;

/**
 * A transaction's status and checkpoint, with the latest checkpoint and the current epoch read in the same query: one
 * consistent view, so "the epoch is past its expiration and the digest is unknown" is never read across two states.
 */
export const TX_STATUS = `query SuiTxStatus($digest: String!) {
  transactionEffects(digest: $digest) {
    status
    executionError { message }
    checkpoint { sequenceNumber }
  }
  checkpoint { sequenceNumber }
  epoch { epochId }
}`;

/** A transaction with its checkpoint and first page of balance changes (transfersOf). */
export const TRANSACTION = `query SuiTransaction($digest: String!) {
  transaction(digest: $digest) {
    ${TRANSACTION_FIELDS}
  }
  transactionEffects(digest: $digest) { checkpoint { sequenceNumber } }
}`;

/** An address's SUI balance (coins and address balance). */
export const BALANCE = `query SuiBalance($address: SuiAddress!) {
  address(address: $address) { balance(coinType: "${SUI_COIN_TYPE}") { totalBalance } }
}`;

/** A page of an address's SUI coin objects: the references a transaction's gas payment names, and their values. */
export const GAS_COINS = `query SuiGasCoins($owner: SuiAddress!, $after: String) {
  address(address: $owner) {
    objects(first: ${PAGE}, after: $after, filter: { type: "${SUI_COIN_OBJECT_TYPE}" }) {
      pageInfo { hasNextPage endCursor }
      nodes { address version digest contents { json } }
    }
  }
}`;

/** The current epoch and its reference gas price (what a transaction signed now pays per unit). */
export const EPOCH = `query SuiEpoch {
  epoch { epochId referenceGasPrice }
}`;

/** Executes signed transaction bytes; answers its effects (again, for a transaction already executed). */
export const EXECUTE_TRANSACTION =
  `mutation SuiExecuteTransaction($transactionDataBcs: Base64!, $signatures: [Base64!]!) {
  executeTransaction(transactionDataBcs: $transactionDataBcs, signatures: $signatures) {
    effects { digest status executionError { message } }
  }
}`;

/** Every document above, for the schema test and the test server. */
export const SUI_DOCUMENTS: Readonly<Record<string, string>> = {
  LATEST_CHECKPOINT,
  CHECKPOINT_DIGEST,
  SCAN_CHECKPOINTS,
  CHECKPOINT_TRANSACTIONS,
  BALANCE_CHANGES_PAGE,
  TX_STATUS,
  TRANSACTION,
  BALANCE,
  GAS_COINS,
  EPOCH,
  EXECUTE_TRANSACTION,
};

/** The operation name of a document (`query SuiEpoch {` -> `SuiEpoch`): how the client names calls and the server matches. */
export function operationName(document: string): string {
  const m = /^\s*(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(document);
  if (!m) throw new Error(`GraphQL document without an operation name: ${document.slice(0, 60)}`);
  return m[1];
}
