/**
 * A Sui-GraphQL-shaped server: a local Deno.serve endpoint that answers exactly the documents in chains/sui/graphql.ts
 * (matched by operation name, and refused unless the text is the same), executed with graphql-js against the schema
 * shipped in `@mysten/sui` (src/graphql/generated/schema.graphql), so every answer has the schema's shape: BigInt
 * scalars as strings, UInt53 as numbers, null where the schema allows it. No Sui node runs on this machine kind
 * (docs/architecture.md): the sui tests talk to this and say so in their names.
 *
 * - An in-memory chain of checkpoints (digest, previous digest, epoch) and epochs (id, reference gas price), and owned
 *   SUI coin objects per address (object id, version, digest, balance).
 * - `executeTransaction` decodes our bytes with @mysten/sui (`Transaction.from`), verifies the signature with its
 *   verifier against the sender, refuses an expiration epoch already past, gas coins that are not the sender's current
 *   versions or already used by a pending transaction (equivocation), a gas price below the reference, and a budget
 *   above the coins; then the transaction waits for the next checkpoint, where it is applied: a payout (split from the
 *   gas coin, transfer) or a sweep (the whole gas coin transferred). The same bytes again answer the same effects.
 * - Like the indexer behind Sui GraphQL, a transaction is visible (`transaction`, `transactionEffects`) once it is in
 *   a checkpoint. Pending transactions whose expiration epoch has passed are dropped at the epoch change.
 * - Traps: `failedTransfer` (a failed transaction naming our address: real Sui lists only the gas charge of a failed
 *   transaction; this server also lists the credit it attempted, so a reader that ignores `status` is caught),
 *   `deposit` to several addresses in one transaction, the coin type in its short or long form, a non-SUI coin credit,
 *   checkpoints and transactions big enough to need pagination (pages of 50).
 * - Limits as the service enforces them before running a query (sui-indexer-alt-graphql, src/extensions/query_limits/
 *   {input,output,payload}.rs; the defaults in chains/sui/graphql.ts `SUI_GRAPHQL_LIMITS`): depth, query nodes, the
 *   output-node estimate, page sizes and the request's size, refused with the service's messages; `limits` lowers them
 *   as a provider may. A provider's caps: `maxResponseBytes` (HTTP 413 above it) and `bytesPerSecond` (a slow one).
 * - `mainnetCheckpoints`: every sealed checkpoint holds mainnet-shaped transactions made from its sequence number when
 *   asked (tests/support/sui_mainnet_checkpoints.ts), never stored; injected transactions follow them.
 * - Hooks: `mine(n)` (seal checkpoints; an epoch ends every `checkpointsPerEpoch`), `advanceEpoch()`, `drop(digest)`
 *   (a submitted transaction that is never included), `calls` (operation names, counted), `served` (requests, bytes,
 *   refusals).
 */
import { bcs } from "@mysten/sui/bcs";
import { Transaction, TransactionDataBuilder } from "@mysten/sui/transactions";
import { verifyTransactionSignature } from "@mysten/sui/verify";
import { base58, base64 } from "@scure/base";
import {
  buildSchema,
  type DocumentNode,
  type FieldNode,
  graphql,
  type GraphQLScalarType,
  type GraphQLSchema,
  parse,
  type SelectionSetNode,
} from "graphql";
import { normalizeSuiAddress } from "../../chains/sui/client.ts";
import { operationName, SUI_DOCUMENTS, SUI_GRAPHQL_LIMITS } from "../../chains/sui/graphql.ts";
import {
  checkpointDigest,
  generatedAt,
  generatedTransaction,
  type MainnetCheckpointShape,
  transactionCount,
} from "./sui_mainnet_checkpoints.ts";
import { NODE_IDENTITY } from "../../config/chain_mode.ts";
import { jsonAt, responseTooLarge } from "./provider_limits.ts";

/** The node-identity question the service asks at start (config/chain_mode.ts `NODE_IDENTITY`). */
const IDENTITY_QUERY = (NODE_IDENTITY.sui.body as { query: string }).query;
/** Sui GraphQL's default `maxOutputNodes`. */
export const MAX_OUTPUT_NODES = SUI_GRAPHQL_LIMITS.maxOutputNodes;
const SHORT_SUI = "0x2::sui::SUI";
const LONG_SUI = "0x" + "2".padStart(64, "0") + "::sui::SUI";
/** Gas this server charges per transaction: 1,000 computation units at the reference price plus a storage cost. */
const STORAGE_COST = 988_000n;

interface Coin {
  objectId: string;
  owner: string;
  version: number;
  digest: string;
  balance: bigint;
}

interface BalanceChange {
  owner: string;
  coinType: string;
  amount: bigint;
}

interface ChainTx {
  digest: string;
  sender: string;
  status: "SUCCESS" | "FAILURE";
  error: string | null;
  balanceChanges: BalanceChange[];
  checkpoint: number | null;
  /** Our transactions: applied when sealed into a checkpoint. */
  apply?: () => void;
  expiration?: number;
  gasCoins?: string[];
}

interface Checkpoint {
  sequenceNumber: number;
  digest: string;
  previous: string | null;
  epoch: number;
  txs: ChainTx[];
}

export interface SuiGraphqlServerOptions {
  /** Checkpoints sealed per epoch by `mine` (an epoch change after every this many). */
  checkpointsPerEpoch?: number;
  referenceGasPrice?: bigint;
  /**
   * What `chainIdentifier` answers (the service's NODE_IDENTITY question, config/chain_mode.ts): by default, like Sui's,
   * the first four bytes of the genesis checkpoint's digest in hex (a random genesis is never mainnet's "35834a8a", as
   * devnet requires); `SUI_MAINNET_CHAIN_IDENTIFIER` for `CHAIN_MODE=live`.
   */
  chainIdentifier?: string;
  /**
   * Mainnet-shaped checkpoints (tests/support/sui_mainnet_checkpoints.ts): every checkpoint `mine` seals holds its
   * generated transactions, made from its sequence number when asked and never stored, before any injected one.
   */
  mainnetCheckpoints?: MainnetCheckpointShape;
  /**
   * The limits enforced (default: the service's, chains/sui/graphql.ts `SUI_GRAPHQL_LIMITS`); lower ones model a
   * provider's stricter configuration (the old sui-graphql-rpc's 100,000 output nodes, say).
   */
  limits?: Partial<typeof SUI_GRAPHQL_LIMITS>;
  /** A provider's cap on an answer's size in bytes: a longer answer is refused with HTTP 413. */
  maxResponseBytes?: number;
  /** A slow provider: answers sent no faster than this. */
  bytesPerSecond?: number;
}

export interface SuiGraphqlServer {
  url: string;
  /** Sequence number of the latest checkpoint. */
  readonly tip: number;
  readonly epoch: number;
  readonly referenceGasPrice: bigint;
  /** Operation names answered, in order. */
  readonly calls: string[];
  /** Requests answered, bytes of answers sent, and requests refused for a limit or a provider's cap. */
  readonly served: { requests: number; bytes: number; refused: number };
  /**
   * A transaction from a made-up sender paying each recipient a new SUI coin, sealed in the next checkpoint. Balance
   * changes list the sender first (negative), then each recipient in order.
   */
  deposit(
    to: string | { to: string; amount: bigint }[],
    amount?: bigint,
    opts?: { coinType?: "short" | "long" },
  ): string;
  /** A failed transaction that names `to` with a positive SUI change (see the trap above). */
  failedTransfer(to: string, amount: bigint): string;
  /** A successful transaction crediting `to` with a coin that is not SUI. */
  otherCoinTransfer(to: string, amount: bigint): string;
  /** Seals `n` checkpoints; pending transactions go into the first. */
  mine(n?: number): void;
  advanceEpoch(): void;
  /** A submitted transaction (now or later) is never included. */
  drop(digest: string): void;
  /** SUI coins `address` owns now. */
  coins(address: string): Coin[];
  balance(address: string): bigint;
  /** Whether `digest` is in a checkpoint. */
  included(digest: string): boolean;
  /** Every successful SUI credit of `address` in a checkpoint, oldest first: its transaction and the amount. */
  paymentsTo(address: string): { digest: string; checkpoint: number; amount: bigint }[];
  /** Whether `digest` was accepted by `executeTransaction` and waits for the next checkpoint. */
  isPending(digest: string): boolean;
  readonly chainIdentifier: string;
  /**
   * Every later answer to operation `op` carries what `edit` makes of its `data` (a copy; `variables` as sent), to
   * serve a malformed answer; `null` serves the true answers again.
   */
  tamper(
    op: string,
    edit: ((data: Record<string, unknown>, variables: Record<string, unknown>) => unknown) | null,
  ): void;
  close(): Promise<void>;
}

let schemaPromise: Promise<GraphQLSchema> | null = null;

function loadSchema(): Promise<GraphQLSchema> {
  schemaPromise ??= (async () => {
    const root = new URL("../../node_modules/", import.meta.url);
    const candidates = [
      new URL("@mysten/sui/src/graphql/generated/schema.graphql", root),
      new URL(".deno/@mysten+sui@2.33.1/node_modules/@mysten/sui/src/graphql/generated/schema.graphql", root),
    ];
    for (const c of candidates) {
      try {
        return withStrictUInt53(buildSchema(await Deno.readTextFile(c)));
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    throw new Error("The Sui GraphQL schema of @mysten/sui is not in node_modules: run `deno install`");
  })();
  return schemaPromise;
}

type Limits = typeof SUI_GRAPHQL_LIMITS;

/** Why the service refuses a query before running it (its messages: query_limits/error.rs), or null. */
export function limitRefusal(
  doc: DocumentNode,
  variables: Record<string, unknown> = {},
  limits: Limits = SUI_GRAPHQL_LIMITS,
): string | null {
  const input = inputUsage(doc);
  if (input.depth > limits.maxQueryDepth) return `Query nesting is over ${limits.maxQueryDepth}`;
  if (input.nodes > limits.maxQueryNodes) return `Query has over ${limits.maxQueryNodes} nodes`;
  try {
    const nodes = outputNodes(doc, variables, limits);
    if (nodes > limits.maxOutputNodes) {
      return `Query is estimated to produce over ${limits.maxOutputNodes} output nodes. Try fetching fewer fields or ` +
        `fetching fewer items per page in paginated or multi-get fields.`;
    }
  } catch (err) {
    return (err as Error).message;
  }
  return null;
}

function fragmentsOf(doc: DocumentNode): Map<string, SelectionSetNode> {
  const out = new Map<string, SelectionSetNode>();
  for (const d of doc.definitions) if (d.kind === "FragmentDefinition") out.set(d.name.value, d.selectionSet);
  return out;
}

/**
 * Input nodes and depth as the service counts them (crates/sui-indexer-alt-graphql/src/extensions/query_limits/
 * input.rs): level by level, every selection (a field, an inline fragment, a fragment spread) one node, a fragment's
 * selections counted where it is spread, one level deeper.
 */
export function inputUsage(doc: DocumentNode): { nodes: number; depth: number } {
  const fragments = fragmentsOf(doc);
  let level = doc.definitions.flatMap((d) => d.kind === "OperationDefinition" ? [...d.selectionSet.selections] : []);
  let nodes = 0;
  let depth = 0;
  while (level.length > 0) {
    depth++;
    const next: typeof level = [];
    for (const sel of level) {
      nodes++;
      const set = sel.kind === "FragmentSpread" ? fragments.get(sel.name.value) : sel.selectionSet;
      if (set) next.push(...set.selections);
    }
    level = next;
  }
  return { nodes, depth };
}

/**
 * The output nodes a query may produce, estimated as the service does (crates/sui-indexer-alt-graphql/src/extensions/
 * query_limits/output.rs): every field costs its multiplicity; a connection's `nodes` or `edges` costs it once more per
 * element of the page (its `first` or `last`, a variable resolved, else `defaultPageSize`), and everything under it is
 * multiplied by the page; a `multiGet` field multiplies by its keys. A page above `maxPageSize` is refused.
 */
export function outputNodes(
  doc: DocumentNode,
  variables: Record<string, unknown> = {},
  limits: Limits = SUI_GRAPHQL_LIMITS,
): number {
  const fragments = fragmentsOf(doc);
  const argValue = (sel: FieldNode, name: string): unknown => {
    const arg = sel.arguments?.find((a) => a.name.value === name);
    if (!arg) return undefined;
    if (arg.value.kind === "IntValue") return Number(arg.value.value);
    if (arg.value.kind === "Variable") return variables[arg.value.name.value];
    if (arg.value.kind === "ListValue") return arg.value.values;
    return undefined;
  };
  let total = 0;
  const walk = (set: SelectionSetNode, multiplicity: number, page: number | null) => {
    for (const sel of set.selections) {
      if (sel.kind === "FragmentSpread") {
        const frag = fragments.get(sel.name.value);
        if (frag) walk(frag, multiplicity, page);
        continue;
      }
      if (sel.kind === "InlineFragment") {
        walk(sel.selectionSet, multiplicity, page);
        continue;
      }
      total += multiplicity;
      let m = multiplicity;
      let p = page;
      const name = sel.name.value;
      if (name === "nodes" || name === "edges") {
        if (p !== null) {
          m = multiplicity * p;
          p = null;
          total += m;
        }
      } else if (name.startsWith("multiGet")) {
        const keys = argValue(sel, "keys");
        const n = Array.isArray(keys) ? keys.length : 0;
        m = multiplicity * n;
        p = null;
        total += m;
      } else if (sel.selectionSet && isConnection(sel)) {
        const first = argValue(sel, "first");
        const last = argValue(sel, "last");
        const size = typeof first === "number" && typeof last === "number"
          ? Math.max(first, last)
          : typeof first === "number"
          ? first
          : typeof last === "number"
          ? last
          : limits.defaultPageSize;
        if (size > limits.maxPageSize) throw new Error(`Page size is too large: ${size} > ${limits.maxPageSize}`);
        p = size;
      }
      if (sel.selectionSet) walk(sel.selectionSet, m, p);
    }
  };
  /** Connections are the fields whose type is a `...Connection`: here, those selecting `nodes` or `edges`. */
  const isConnection = (sel: FieldNode) =>
    sel.selectionSet!.selections.some((c) =>
      c.kind === "Field" && (c.name.value === "nodes" || c.name.value === "edges")
    );
  for (const d of doc.definitions) if (d.kind === "OperationDefinition") walk(d.selectionSet, 1, null);
  return total;
}

/** UInt53 as Sui GraphQL parses it: a non-negative safe integer, else an error (buildSchema's scalars take anything). */
function withStrictUInt53(schema: GraphQLSchema): GraphQLSchema {
  const scalar = schema.getType("UInt53") as GraphQLScalarType;
  const strict = (v: unknown) => {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw new TypeError(`Invalid UInt53: ${v}`);
    return v;
  };
  // graphql-js 17 coerces variables with `coerceInputValue` (16 with `parseValue`).
  Object.assign(scalar, { parseValue: strict, coerceInputValue: strict });
  return schema;
}

function randomDigest(): string {
  return base58.encode(crypto.getRandomValues(new Uint8Array(32)));
}

function randomAddress(): string {
  return "0x" + [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A connection page of `items` as the schema has it (`first` at most 50, cursors are positions). */
function connection<T, R>(items: T[], args: { first?: number | null; after?: string | null }, map: (t: T) => R) {
  return lazyConnection(items.length, (i) => items[i], args, map);
}

/** `connection` over `count` items made by `item` when a page asks for them. */
function lazyConnection<T, R>(
  count: number,
  item: (i: number) => T,
  args: { first?: number | null; after?: string | null },
  map: (t: T) => R,
) {
  const first = args.first ?? SUI_GRAPHQL_LIMITS.defaultPageSize;
  if (first > SUI_GRAPHQL_LIMITS.maxPageSize) {
    throw new Error(`Page size is too large: ${first} > ${SUI_GRAPHQL_LIMITS.maxPageSize}`);
  }
  const start = args.after ? Number(atob(args.after)) + 1 : 0;
  const items = count;
  const page = Array.from({ length: Math.max(0, Math.min(first, count - start)) }, (_, i) => item(start + i));
  const end = start + page.length - 1;
  return {
    pageInfo: {
      hasNextPage: start + page.length < items,
      hasPreviousPage: start > 0,
      startCursor: page.length ? btoa(String(start)) : null,
      endCursor: page.length ? btoa(String(end)) : null,
    },
    nodes: page.map(map),
    edges: page.map((t, i) => ({ cursor: btoa(String(start + i)), node: map(t) })),
  };
}

export async function startSuiGraphqlServer(opts: SuiGraphqlServerOptions = {}): Promise<SuiGraphqlServer> {
  const schema = await loadSchema();
  const perEpoch = opts.checkpointsPerEpoch ?? 5;
  let referenceGasPrice = opts.referenceGasPrice ?? 750n;
  let epoch = 0;
  const limits: Limits = { ...SUI_GRAPHQL_LIMITS, ...opts.limits };
  const mainnet = opts.mainnetCheckpoints;
  /** Checkpoints sealed; every one is stored, except mainnet-shaped ones without an injected transaction. */
  let height = 0;
  const stored = new Map<number, Checkpoint>();
  /** The first checkpoint of each epoch after the first (mainnet-shaped checkpoints read their epoch from it). */
  const epochStarts: number[] = [];
  const txs = new Map<string, ChainTx>();
  const pending: ChainTx[] = [];
  const dropped = new Set<string>();
  const coins = new Map<string, Coin>();
  const calls: string[] = [];
  const documents = new Map(Object.values(SUI_DOCUMENTS).map((d) => [operationName(d), d]));

  /** Checkpoint `seq` if sealed: stored, or made from its sequence number (mainnet-shaped). */
  function checkpointAt(seq: number): Checkpoint | undefined {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= height) return undefined;
    return stored.get(seq) ?? {
      sequenceNumber: seq,
      digest: checkpointDigest(seq, mainnet),
      previous: seq === 0 ? null : stored.get(seq - 1)?.digest ?? checkpointDigest(seq - 1, mainnet),
      epoch: epochAt(seq),
      txs: [],
    };
  }

  function epochAt(seq: number): number {
    let lo = 0;
    let hi = epochStarts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (epochStarts[mid] <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Transactions of `cp`: the generated ones first (mainnet-shaped), then those sealed into it. */
  function transactionsOf(cp: Checkpoint): { count: number; at: (i: number) => ChainTx } {
    const generated = mainnet && cp.sequenceNumber > 0 ? transactionCount(cp.sequenceNumber, mainnet) : 0;
    return {
      count: generated + cp.txs.length,
      at: (i) => i < generated ? generatedTx(cp.sequenceNumber, i) : cp.txs[i - generated],
    };
  }

  function generatedTx(seq: number, index: number): ChainTx {
    const g = generatedTransaction(seq, index, mainnet);
    return {
      digest: g.digest,
      sender: g.sender,
      status: g.status,
      error: g.status === "FAILURE" ? "InsufficientCoinBalance in command 0" : null,
      balanceChanges: g.balanceChanges,
      checkpoint: seq,
    };
  }

  /** A transaction in a checkpoint, by digest. */
  function txByDigest(digest: string): ChainTx | undefined {
    const known = txs.get(digest);
    if (known || !mainnet) return known;
    const at = generatedAt(digest, mainnet);
    if (!at || at[0] >= height || at[0] === 0 || at[1] >= transactionCount(at[0], mainnet)) return undefined;
    return generatedTx(at[0], at[1]);
  }

  function seal(): void {
    const previous = height === 0 ? null : checkpointAt(height - 1)!;
    const cp: Checkpoint = {
      sequenceNumber: height,
      digest: mainnet ? checkpointDigest(height, mainnet) : randomDigest(),
      previous: previous?.digest ?? null,
      epoch,
      txs: [],
    };
    for (const tx of pending.splice(0)) {
      if (dropped.has(tx.digest)) continue;
      tx.apply?.();
      tx.checkpoint = cp.sequenceNumber;
      cp.txs.push(tx);
      txs.set(tx.digest, tx);
    }
    height++;
    if (!mainnet || cp.txs.length > 0 || cp.sequenceNumber === 0) stored.set(cp.sequenceNumber, cp);
  }

  function advanceEpoch(): void {
    epoch++;
    epochStarts.push(height);
    // A pending transaction whose expiration epoch has passed can never execute.
    for (let i = pending.length - 1; i >= 0; i--) {
      const exp = pending[i].expiration;
      if (exp !== undefined && exp < epoch) pending.splice(i, 1);
    }
  }

  function mine(n = 1): void {
    for (let i = 0; i < n; i++) {
      seal();
      if (height % perEpoch === 0) advanceEpoch();
    }
  }

  function newCoin(owner: string, balance: bigint): Coin {
    const coin = { objectId: randomAddress(), owner, version: 1, digest: randomDigest(), balance };
    coins.set(coin.objectId, coin);
    return coin;
  }

  function ownedCoins(address: string): Coin[] {
    const owner = normalizeSuiAddress(address);
    return [...coins.values()].filter((c) => c.owner === owner && c.balance >= 0n);
  }

  function deposit(
    to: string | { to: string; amount: bigint }[],
    amount?: bigint,
    o: { coinType?: "short" | "long" } = {},
  ): string {
    const recipients = typeof to === "string" ? [{ to, amount: amount! }] : to;
    const coinType = o.coinType === "short" ? SHORT_SUI : LONG_SUI;
    const sender = randomAddress();
    const total = recipients.reduce((s, r) => s + r.amount, 0n);
    const gas = referenceGasPrice * 1000n + STORAGE_COST;
    const tx: ChainTx = {
      digest: randomDigest(),
      sender,
      status: "SUCCESS",
      error: null,
      balanceChanges: [
        { owner: sender, coinType, amount: -(total + gas) },
        ...recipients.map((r) => ({ owner: normalizeSuiAddress(r.to), coinType, amount: r.amount })),
      ],
      checkpoint: null,
      apply: () => recipients.forEach((r) => newCoin(normalizeSuiAddress(r.to), r.amount)),
    };
    pending.push(tx);
    return tx.digest;
  }

  function failedTransfer(to: string, amount: bigint): string {
    const sender = randomAddress();
    const tx: ChainTx = {
      digest: randomDigest(),
      sender,
      status: "FAILURE",
      error: "InsufficientCoinBalance in command 0",
      balanceChanges: [
        { owner: sender, coinType: LONG_SUI, amount: -(referenceGasPrice * 1000n) },
        { owner: normalizeSuiAddress(to), coinType: LONG_SUI, amount },
      ],
      checkpoint: null,
    };
    pending.push(tx);
    return tx.digest;
  }

  function otherCoinTransfer(to: string, amount: bigint): string {
    const sender = randomAddress();
    const usdc = "0x" + "dba3".padStart(64, "0") + "::usdc::USDC";
    const tx: ChainTx = {
      digest: randomDigest(),
      sender,
      status: "SUCCESS",
      error: null,
      balanceChanges: [
        { owner: sender, coinType: LONG_SUI, amount: -(referenceGasPrice * 1000n) },
        { owner: sender, coinType: usdc, amount: -amount },
        { owner: normalizeSuiAddress(to), coinType: usdc, amount },
      ],
      checkpoint: null,
    };
    pending.push(tx);
    return tx.digest;
  }

  /** Checks our signed bytes as a validator would and queues the transaction for the next checkpoint. */
  async function execute(bytesB64: string, signatures: string[]): Promise<ChainTx | null> {
    const bytes = base64.decode(bytesB64);
    const digest = TransactionDataBuilder.getDigestFromBytes(bytes);
    const known = txs.get(digest) ?? pending.find((t) => t.digest === digest);
    if (known) return known.checkpoint === null ? null : known;
    const data = Transaction.from(bytes).getData();
    const sender = normalizeSuiAddress(data.sender!);
    if (signatures.length !== 1) throw new Error("Expected exactly one signature from the sender");
    await verifyTransactionSignature(bytes, signatures[0], { address: sender });
    const expiration = data.expiration?.$kind === "Epoch" ? Number(data.expiration.Epoch) : undefined;
    if (expiration !== undefined && expiration < epoch) {
      throw new Error(`Transaction Expired: expiration epoch ${expiration}, current epoch ${epoch}`);
    }
    if (dropped.has(digest)) return null;
    const gasOwner = normalizeSuiAddress(data.gasData.owner ?? sender);
    if (gasOwner !== sender) throw new Error("Sponsored transactions are not served here");
    const price = BigInt(data.gasData.price!);
    const budget = BigInt(data.gasData.budget!);
    if (price < referenceGasPrice) throw new Error(`Gas price ${price} under reference gas price ${referenceGasPrice}`);
    const payment = data.gasData.payment ?? [];
    if (payment.length === 0) throw new Error("No gas payment");
    const locked = new Set(pending.flatMap((t) => t.gasCoins ?? []));
    let sum = 0n;
    for (const ref of payment) {
      const coin = coins.get(normalizeSuiAddress(ref.objectId));
      if (
        !coin || coin.owner !== sender || String(coin.version) !== String(ref.version) || coin.digest !== ref.digest
      ) {
        throw new Error(`Object ${ref.objectId} version ${ref.version} is not available for consumption by ${sender}`);
      }
      if (locked.has(coin.objectId)) {
        throw new Error(`Object ${ref.objectId} is already locked by a different transaction (equivocation)`);
      }
      sum += coin.balance;
    }
    const gas = price * 1000n + STORAGE_COST;
    if (budget < gas) throw new Error(`Gas budget ${budget} is below the ${gas} this transaction costs`);
    if (sum < budget) throw new Error(`Gas balance ${sum} is less than the budget ${budget}`);
    const { to, amount } = decodeTransfer(data, sum - gas);
    if (amount + gas > sum) throw new Error(`Gas balance ${sum} cannot pay ${amount} and ${gas} of gas`);
    const gasCoins = payment.map((p) => normalizeSuiAddress(p.objectId));
    const tx: ChainTx = {
      digest,
      sender,
      status: "SUCCESS",
      error: null,
      balanceChanges: to === sender ? [] : [
        { owner: sender, coinType: LONG_SUI, amount: -(amount + gas) },
        { owner: to, coinType: LONG_SUI, amount },
      ],
      checkpoint: null,
      expiration,
      gasCoins,
      apply: () => {
        // Gas smashing: every payment coin merges into the first, which pays gas and, in a sweep, moves whole.
        const [primary, ...rest] = gasCoins.map((id) => coins.get(id)!);
        const version = Math.max(...gasCoins.map((id) => coins.get(id)!.version)) + 1;
        for (const c of rest) coins.delete(c.objectId);
        if (data.commands.length === 1) {
          Object.assign(primary, { owner: to, balance: amount, version, digest: randomDigest() });
        } else {
          Object.assign(primary, { balance: sum - amount - gas, version, digest: randomDigest() });
          newCoin(to, amount);
        }
      },
    };
    pending.push(tx);
    return null;
  }

  const root = {
    chainIdentifier: () => chainIdentifier(),
    checkpoint: (args: { sequenceNumber?: number | null }) => {
      const cp = args.sequenceNumber === undefined || args.sequenceNumber === null
        ? checkpointAt(height - 1)
        : checkpointAt(args.sequenceNumber);
      return cp ? checkpointValue(cp) : null;
    },
    checkpoints: (args: {
      first?: number;
      after?: string;
      filter?: { afterCheckpoint?: number | null; beforeCheckpoint?: number | null };
    }) => {
      const lo = Math.max(-1, args.filter?.afterCheckpoint ?? -1);
      const hi = Math.min(height, args.filter?.beforeCheckpoint ?? height);
      return lazyConnection(Math.max(0, hi - lo - 1), (i) => checkpointAt(lo + 1 + i)!, args, checkpointValue);
    },
    multiGetCheckpoints: (args: { keys: number[] }) =>
      args.keys.map((k) => {
        const cp = checkpointAt(k);
        return cp ? checkpointValue(cp) : null;
      }),
    transactionEffects: (args: { digest: string }) => {
      const tx = txByDigest(args.digest);
      return tx ? effectsValue(tx) : null;
    },
    transaction: (args: { digest: string }) => {
      const tx = txByDigest(args.digest);
      return tx ? transactionValue(tx) : null;
    },
    epoch: (args: { epochId?: number | null }) =>
      args.epochId === undefined || args.epochId === null || args.epochId === epoch
        ? { epochId: epoch, referenceGasPrice: String(referenceGasPrice) }
        : null,
    address: (args: { address: string }) => addressValue(normalizeSuiAddress(args.address)),
    executeTransaction: async (args: { transactionDataBcs: string; signatures: string[] }) => {
      const tx = await execute(args.transactionDataBcs, args.signatures);
      return { effects: tx ? effectsValue(tx) : null };
    },
  };

  function checkpointValue(cp: Checkpoint) {
    return {
      sequenceNumber: cp.sequenceNumber,
      digest: cp.digest,
      previousCheckpointDigest: cp.previous,
      epoch: () => ({ epochId: cp.epoch, referenceGasPrice: String(referenceGasPrice) }),
      transactions: (args: { first?: number; after?: string }) => {
        const list = transactionsOf(cp);
        return lazyConnection(list.count, list.at, args, transactionValue);
      },
    };
  }

  function transactionValue(tx: ChainTx) {
    return { digest: tx.digest, sender: { address: tx.sender }, effects: () => effectsValue(tx) };
  }

  function effectsValue(tx: ChainTx) {
    return {
      digest: tx.digest,
      status: tx.status,
      executionError: tx.error === null ? null : { message: tx.error },
      checkpoint: () => tx.checkpoint === null ? null : checkpointValue(checkpointAt(tx.checkpoint)!),
      balanceChanges: (args: { first?: number; after?: string }) =>
        connection(tx.balanceChanges, args, (c) => ({
          owner: { address: c.owner },
          coinType: { repr: c.coinType },
          amount: String(c.amount),
        })),
    };
  }

  function addressValue(address: string) {
    return {
      address,
      balance: (args: { coinType: string }) => {
        if (args.coinType !== SHORT_SUI && args.coinType !== LONG_SUI) return null;
        const total = String(ownedCoins(address).reduce((s, c) => s + c.balance, 0n));
        return { coinType: { repr: LONG_SUI }, totalBalance: total, coinBalance: total, addressBalance: "0" };
      },
      objects: (args: { first?: number; after?: string; filter?: { type?: string } }) => {
        if (args.filter?.type !== "0x2::coin::Coin<0x2::sui::SUI>") throw new Error("only SUI coins are served here");
        const owned = ownedCoins(address).sort((a, b) => a.objectId < b.objectId ? -1 : 1);
        return connection(owned, args, (c) => ({
          address: c.objectId,
          version: c.version,
          digest: c.digest,
          contents: { json: { id: c.objectId, balance: String(c.balance) } },
        }));
      },
    };
  }

  const tampered = new Map<string, (data: Record<string, unknown>, variables: Record<string, unknown>) => unknown>();
  const served = { requests: 0, bytes: 0, refused: 0 };
  const encoder = new TextEncoder();

  /** Refused before it runs: the service answers its validation errors as GraphQL errors (query_limits/error.rs). */
  function refuse(message: string): Response {
    served.refused++;
    return Response.json({ data: null, errors: [{ message, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }] });
  }

  /** `value` as the answer, refused with 413 above `maxResponseBytes`, sent at `bytesPerSecond` when set. */
  function answer(value: unknown): Response {
    const bytes = encoder.encode(JSON.stringify(value));
    if (opts.maxResponseBytes !== undefined && bytes.length > opts.maxResponseBytes) {
      served.refused++;
      return responseTooLarge(opts.maxResponseBytes);
    }
    served.bytes += bytes.length;
    return jsonAt(bytes, opts.bytesPerSecond);
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST") return new Response("POST GraphQL requests here", { status: 405 });
    served.requests++;
    const raw = await req.text();
    const body = JSON.parse(raw) as { query?: string; variables?: Record<string, unknown> };
    const query = body.query ?? "";
    const variables = body.variables ?? {};
    // The one anonymous document: the service's network check at start (NODE_IDENTITY in config/chain_mode.ts).
    if (query === IDENTITY_QUERY) {
      calls.push("chainIdentifier");
      const result = await graphql({ schema, source: query, rootValue: root });
      return Response.json({ data: result.data, ...(result.errors ? { errors: result.errors } : {}) });
    }
    let op: string;
    try {
      op = operationName(query);
    } catch {
      return Response.json({ errors: [{ message: "not one of chains/sui/graphql.ts's documents" }] });
    }
    if (documents.get(op) !== query) {
      return Response.json({ errors: [{ message: `${op} is not exactly one of chains/sui/graphql.ts's documents` }] });
    }
    calls.push(op);
    // The request's size, transaction bytes and signatures aside (query_limits/payload.rs).
    const txPayload = op === "SuiExecuteTransaction"
      ? JSON.stringify(variables.transactionDataBcs ?? "").length + JSON.stringify(variables.signatures ?? []).length
      : 0;
    const payload = encoder.encode(raw).length - txPayload;
    if (payload > limits.maxQueryPayloadSize) {
      return refuse(`Query payload too large: ${payload}B > ${limits.maxQueryPayloadSize}B`);
    }
    const refusal = limitRefusal(parse(query), variables, limits);
    if (refusal) return refuse(refusal);
    const result = await graphql({ schema, source: query, rootValue: root, variableValues: variables });
    const edit = tampered.get(op);
    return answer(
      result.errors ? { data: result.data ?? null, errors: result.errors.map((e) => ({ message: e.message })) } : {
        data: edit ? edit(structuredClone(result.data) as Record<string, unknown>, variables) : result.data,
      },
    );
  });
  const { port } = server.addr as Deno.NetAddr;
  seal(); // genesis
  const chainIdentifier = () =>
    opts.chainIdentifier ??
      Array.from(base58.decode(checkpointAt(0)!.digest).slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("");

  return {
    url: `http://127.0.0.1:${port}/graphql`,
    get tip() {
      return height - 1;
    },
    get epoch() {
      return epoch;
    },
    get referenceGasPrice() {
      return referenceGasPrice;
    },
    set referenceGasPrice(v: bigint) {
      referenceGasPrice = v;
    },
    calls,
    served,
    deposit,
    failedTransfer,
    otherCoinTransfer,
    mine,
    advanceEpoch,
    drop(digest) {
      dropped.add(digest);
      const i = pending.findIndex((t) => t.digest === digest);
      if (i >= 0) pending.splice(i, 1);
    },
    coins: ownedCoins,
    balance: (address) => ownedCoins(address).reduce((s, c) => s + c.balance, 0n),
    included: (digest) => txs.has(digest),
    paymentsTo(address) {
      const owner = normalizeSuiAddress(address);
      return [...stored.values()].flatMap((cp) =>
        cp.txs.filter((t) => t.status === "SUCCESS").flatMap((t) =>
          t.balanceChanges.filter((c) =>
            c.owner === owner && c.amount > 0n && (c.coinType === SHORT_SUI || c.coinType === LONG_SUI)
          ).map((c) => ({ digest: t.digest, checkpoint: cp.sequenceNumber, amount: c.amount }))
        )
      );
    },
    isPending: (digest) => pending.some((t) => t.digest === digest),
    get chainIdentifier() {
      return chainIdentifier();
    },
    tamper(op, edit) {
      if (edit) tampered.set(op, edit);
      else tampered.delete(op);
    },
    close: () => server.shutdown(),
  };
}

/**
 * The two shapes our payer builds: a payout (`SplitCoins(GasCoin, [u64])` then `TransferObjects([result], address)`)
 * and a sweep (`TransferObjects([GasCoin], address)`, the whole gas coin less gas). Anything else is refused.
 */
function decodeTransfer(
  data: ReturnType<Transaction["getData"]>,
  wholeGasCoin: bigint,
): { to: string; amount: bigint } {
  const pure = (arg: { $kind: string; Input?: number }) => {
    if (arg.$kind !== "Input") throw new Error("expected an input argument");
    const input = data.inputs[arg.Input!];
    if (input.$kind !== "Pure") throw new Error("expected a pure input");
    return base64.decode(input.Pure.bytes);
  };
  const cmds = data.commands;
  if (cmds.length === 1 && cmds[0].$kind === "TransferObjects") {
    const t = cmds[0].TransferObjects;
    if (t.objects.length !== 1 || t.objects[0].$kind !== "GasCoin") throw new Error("unsupported TransferObjects");
    return { to: normalizeSuiAddress(bcs.Address.parse(pure(t.address))), amount: wholeGasCoin };
  }
  if (cmds.length === 2 && cmds[0].$kind === "SplitCoins" && cmds[1].$kind === "TransferObjects") {
    const s = cmds[0].SplitCoins;
    const t = cmds[1].TransferObjects;
    if (s.coin.$kind !== "GasCoin" || s.amounts.length !== 1) throw new Error("unsupported SplitCoins");
    if (t.objects.length !== 1 || t.objects[0].$kind !== "NestedResult") throw new Error("unsupported transfer");
    return {
      to: normalizeSuiAddress(bcs.Address.parse(pure(t.address))),
      amount: BigInt(bcs.u64().parse(pure(s.amounts[0]))),
    };
  }
  throw new Error("This test server executes only our payout and sweep transaction shapes");
}
