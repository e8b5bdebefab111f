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

/**
 * What the Sui GraphQL service refuses, at its defaults (sui-indexer-alt-graphql, the service behind Sui's public
 * GraphQL endpoints: crates/sui-indexer-alt-graphql/src/config.rs `impl Default for Limits`, read at commit 022bac8f,
 * and src/extensions/query_limits/{input,output,payload}.rs for how each is counted). One place for these numbers:
 * the reader sizes its queries under them and the test server (tests/support/sui_graphql_server.ts) enforces them.
 */
export const SUI_GRAPHQL_LIMITS: Readonly<
  Record<
    | "maxPageSize"
    | "defaultPageSize"
    | "maxOutputNodes"
    | "maxQueryNodes"
    | "maxQueryDepth"
    | "maxQueryPayloadSize"
    | "queryTimeoutMs",
    number
  >
> = {
  /** `max_page_size`: a connection's `first` above this is refused ("Page size is too large: N > 50"). */
  maxPageSize: 50,
  /** `default_page_size`: a connection asked without `first`. */
  defaultPageSize: 20,
  /**
   * `max_output_nodes`: the output estimate (every field once per parent; a connection's `nodes` once, then once per
   * element of its page, multiplying down the tree) above this is refused before the query runs.
   */
  maxOutputNodes: 1_000_000,
  /** `max_query_nodes`: fields (fragments inlined) in the document. */
  maxQueryNodes: 300,
  /** `max_query_depth`: nesting of the document. */
  maxQueryDepth: 20,
  /** `max_query_payload_size`: bytes of the request body (transaction bytes aside). */
  maxQueryPayloadSize: 5_000,
  /** `query_timeout_ms`: a read that takes longer answers a timeout error. */
  queryTimeoutMs: 40_000,
};

/** Page size of the transaction and coin connections we page through: the service's maximum. */
export const PAGE = SUI_GRAPHQL_LIMITS.maxPageSize;
/**
 * Balance changes asked with each transaction in a scan: the service's maximum page. Most transactions have 1 to 4
 * (gas, a transfer's two sides, a swap's coins), so this leaves a further page only to the rare large multi-send;
 * a 50-checkpoint query is then estimated at 777,952 output nodes (`scanOutputNodes`), under `maxOutputNodes`.
 */
export const SCAN_BALANCE_CHANGES = SUI_GRAPHQL_LIMITS.maxPageSize;
/** Checkpoints asked for in one scan query at most (a connection's page). */
export const SCAN_MAX_CHECKPOINTS = SUI_GRAPHQL_LIMITS.maxPageSize;
/**
 * Further pages (of checkpoints' transactions, or of transactions' balance changes) asked for in one query at most,
 * as aliases of one field: 8 further pages of transactions are 176 query nodes (of 300) and about 2.3 KB of request
 * with their variables (of 5,000).
 */
export const MAX_FURTHER_PAGES = 8;

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

/** A scan's transaction, as a fragment: the scan and the further pages of transactions read the same fields. */
const SCAN_TRANSACTION = `fragment SuiScanTransaction on Transaction {
  digest
  sender { address }
  effects {
    status
    balanceChanges(first: ${SCAN_BALANCE_CHANGES}) {
      pageInfo { hasNextPage endCursor }
      nodes { owner { address } coinType { repr } amount }
    }
  }
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
 * Checkpoints strictly between `after` and `before`, `first` of them (at most `SCAN_MAX_CHECKPOINTS`), oldest first,
 * each with its first page of transactions and their first balance changes: one request for many checkpoints, within
 * `SUI_GRAPHQL_LIMITS` (`scanOutputNodes` is the estimate the service makes of it). A connection, not
 * `multiGetCheckpoints`: Sui numbers every checkpoint, so a range is a page.
 */
export const SCAN_CHECKPOINTS = `query SuiScanCheckpoints($after: UInt53, $before: UInt53, $first: Int!) {
  checkpoints(first: $first, filter: { afterCheckpoint: $after, beforeCheckpoint: $before }) {
    nodes {
      sequenceNumber
      digest
      previousCheckpointDigest
      transactions(first: ${PAGE}) {
        pageInfo { hasNextPage endCursor }
        nodes { ...SuiScanTransaction }
      }
    }
  }
}
${SCAN_TRANSACTION}`;

/**
 * The service's output estimate of SCAN_CHECKPOINTS for `checkpoints` (crates/sui-indexer-alt-graphql/src/extensions/
 * query_limits/output.rs): per balance change 6 nodes (`nodes` element, owner, address, coinType, repr, amount), per
 * transaction 12 more, per checkpoint 8 more, and the connections' own fields.
 */
export function scanOutputNodes(checkpoints: number): number {
  // digest, sender, address, effects, status, balanceChanges, pageInfo, hasNextPage, endCursor, nodes; per change its
  // element and owner, address, coinType, repr, amount.
  const tx = 10 + SCAN_BALANCE_CHANGES * 6;
  // sequenceNumber, digest, previousCheckpointDigest, transactions, pageInfo, hasNextPage, endCursor, nodes; per
  // transaction its element.
  const checkpoint = 8 + PAGE * (1 + tx);
  return 2 + checkpoints * (1 + checkpoint); // checkpoints, nodes; per checkpoint its element
}

/**
 * Further pages of `k` checkpoints' transactions in one request (`k` from 1 to `MAX_FURTHER_PAGES`): one aliased
 * `checkpoint` field per page, `$s<i>` its sequence number and `$a<i>` the cursor its last page ended at. A mainnet
 * checkpoint often holds more than a page of 50 transactions; asking for their next pages together keeps a scan near
 * one request per many checkpoints.
 */
export function transactionPagesDocument(k: number): string {
  if (!Number.isInteger(k) || k < 1 || k > MAX_FURTHER_PAGES) {
    throw new RangeError(`transaction pages: ${k} is not between 1 and ${MAX_FURTHER_PAGES}`);
  }
  const ids = Array.from({ length: k }, (_, i) => i);
  return `query SuiTransactionPages${k}(${ids.map((i) => `$s${i}: UInt53!, $a${i}: String`).join(", ")}) {
${
    ids.map((i) =>
      `  p${i}: checkpoint(sequenceNumber: $s${i}) {
    transactions(first: ${PAGE}, after: $a${i}) {
      pageInfo { hasNextPage endCursor }
      nodes { ...SuiScanTransaction }
    }
  }`
    ).join("\n")
  }
}
${SCAN_TRANSACTION}`;
}

/**
 * Further pages of `k` transactions' balance changes in one request (`k` from 1 to `MAX_FURTHER_PAGES`): a transaction
 * with more than a page of them (a large multi-send) is rare, but one request each was a quarter of a scan's requests.
 */
export function balanceChangePagesDocument(k: number): string {
  if (!Number.isInteger(k) || k < 1 || k > MAX_FURTHER_PAGES) {
    throw new RangeError(`balance change pages: ${k} is not between 1 and ${MAX_FURTHER_PAGES}`);
  }
  const ids = Array.from({ length: k }, (_, i) => i);
  return `query SuiBalanceChangePages${k}(${ids.map((i) => `$d${i}: String!, $a${i}: String`).join(", ")}) {
${
    ids.map((i) =>
      `  b${i}: transactionEffects(digest: $d${i}) {
    balanceChanges(first: ${PAGE}, after: $a${i}) {
      pageInfo { hasNextPage endCursor }
      nodes { owner { address } coinType { repr } amount }
    }
  }`
    ).join("\n")
  }
}`;
}

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

function furtherPageDocuments(name: string, document: (k: number) => string): Record<string, string> {
  return Object.fromEntries(Array.from({ length: MAX_FURTHER_PAGES }, (_, i) => [`${name}_${i + 1}`, document(i + 1)]));
}

/** Every document above, for the schema test and the test server. */
export const SUI_DOCUMENTS: Readonly<Record<string, string>> = {
  LATEST_CHECKPOINT,
  CHECKPOINT_DIGEST,
  SCAN_CHECKPOINTS,
  ...furtherPageDocuments("TRANSACTION_PAGES", transactionPagesDocument),
  ...furtherPageDocuments("BALANCE_CHANGE_PAGES", balanceChangePagesDocument),
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
