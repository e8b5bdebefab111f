/**
 * A Sui-GraphQL-shaped server: a local Deno.serve endpoint that answers exactly the documents in chains/sui/graphql.ts
 * (matched by operation name, and refused unless the text is the same), executed with graphql-js against the schema
 * shipped in `@mysten/sui` (src/graphql/generated/schema.graphql), so every answer has the schema's shape: BigInt
 * scalars as strings, UInt53 as numbers, null where the schema allows it. No Sui node runs on this machine kind
 * (DESIGN.md): the sui tests talk to this and say so in their names.
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
 * - Hooks: `mine(n)` (seal checkpoints; an epoch ends every `checkpointsPerEpoch`), `advanceEpoch()`, `drop(digest)`
 *   (a submitted transaction that is never included), `calls` (operation names, counted).
 */
import { bcs } from "@mysten/sui/bcs";
import { Transaction, TransactionDataBuilder } from "@mysten/sui/transactions";
import { verifyTransactionSignature } from "@mysten/sui/verify";
import { base58, base64 } from "@scure/base";
import {
  buildSchema,
  type DocumentNode,
  graphql,
  type GraphQLScalarType,
  type GraphQLSchema,
  parse,
  type SelectionSetNode,
} from "graphql";
import { normalizeSuiAddress } from "../../chains/sui/client.ts";
import { operationName, SUI_DOCUMENTS } from "../../chains/sui/graphql.ts";
import { NODE_IDENTITY } from "../../config/chain_mode.ts";

const PAGE_MAX = 50;
/** The node-identity question the service asks at start (config/chain_mode.ts `NODE_IDENTITY`). */
const IDENTITY_QUERY = (NODE_IDENTITY.sui.body as { query: string }).query;
/** Sui GraphQL's default `maxOutputNodes`. */
export const MAX_OUTPUT_NODES = 100_000;
/** Sui GraphQL's default page size, for a connection asked without `first`. */
const DEFAULT_PAGE = 20;
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
}

export interface SuiGraphqlServer {
  url: string;
  /** Sequence number of the latest checkpoint. */
  readonly tip: number;
  readonly epoch: number;
  readonly referenceGasPrice: bigint;
  /** Operation names answered, in order. */
  readonly calls: string[];
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

/**
 * The output nodes a query may produce, estimated as Sui GraphQL does (ServiceConfig.maxOutputNodes): every field
 * counts once per parent, and a connection's `nodes`/`edges` count `first` times (20 without it), multiplying down
 * the tree. A scan asking too much at once is refused here as a Sui node would refuse it.
 */
export function outputNodes(doc: DocumentNode): number {
  const walk = (set: SelectionSetNode, multiplier: number): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind !== "Field") continue;
      total += multiplier;
      if (!sel.selectionSet) continue;
      const first = sel.arguments?.find((a) => a.name.value === "first");
      const page = first?.value.kind === "IntValue" ? Number(first.value.value) : DEFAULT_PAGE;
      const isConnection = sel.selectionSet.selections.some((c) =>
        c.kind === "Field" && (c.name.value === "nodes" || c.name.value === "edges")
      );
      if (!isConnection) {
        total += walk(sel.selectionSet, multiplier);
        continue;
      }
      for (const child of sel.selectionSet.selections) {
        if (child.kind !== "Field") continue;
        const inner = child.name.value === "nodes" || child.name.value === "edges" ? multiplier * page : multiplier;
        total += inner + (child.selectionSet ? walk(child.selectionSet, inner) : 0);
      }
    }
    return total;
  };
  return doc.definitions.reduce(
    (sum, d) => sum + (d.kind === "OperationDefinition" ? walk(d.selectionSet, 1) : 0),
    0,
  );
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
  const first = args.first ?? PAGE_MAX;
  if (first > PAGE_MAX) throw new Error(`Connection's page size of ${first} exceeds max of ${PAGE_MAX}`);
  const start = args.after ? Number(atob(args.after)) + 1 : 0;
  const page = items.slice(start, start + first);
  const end = start + page.length - 1;
  return {
    pageInfo: {
      hasNextPage: start + page.length < items.length,
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
  const checkpoints: Checkpoint[] = [];
  const txs = new Map<string, ChainTx>();
  const pending: ChainTx[] = [];
  const dropped = new Set<string>();
  const coins = new Map<string, Coin>();
  const calls: string[] = [];
  const documents = new Map(Object.values(SUI_DOCUMENTS).map((d) => [operationName(d), d]));

  function seal(): void {
    const previous = checkpoints.at(-1) ?? null;
    const cp: Checkpoint = {
      sequenceNumber: checkpoints.length,
      digest: randomDigest(),
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
    checkpoints.push(cp);
  }

  function advanceEpoch(): void {
    epoch++;
    // A pending transaction whose expiration epoch has passed can never execute.
    for (let i = pending.length - 1; i >= 0; i--) {
      const exp = pending[i].expiration;
      if (exp !== undefined && exp < epoch) pending.splice(i, 1);
    }
  }

  function mine(n = 1): void {
    for (let i = 0; i < n; i++) {
      seal();
      if (checkpoints.length % perEpoch === 0) advanceEpoch();
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
        ? checkpoints.at(-1)
        : checkpoints[args.sequenceNumber];
      return cp ? checkpointValue(cp) : null;
    },
    checkpoints: (args: {
      first?: number;
      after?: string;
      filter?: { afterCheckpoint?: number | null; beforeCheckpoint?: number | null };
    }) => {
      const lo = args.filter?.afterCheckpoint ?? -1;
      const hi = args.filter?.beforeCheckpoint ?? Infinity;
      const inRange = checkpoints.filter((c) => c.sequenceNumber > lo && c.sequenceNumber < hi);
      return connection(inRange, args, checkpointValue);
    },
    multiGetCheckpoints: (args: { keys: number[] }) =>
      args.keys.map((k) => checkpoints[k] ? checkpointValue(checkpoints[k]) : null),
    transactionEffects: (args: { digest: string }) => {
      const tx = txs.get(args.digest);
      return tx ? effectsValue(tx) : null;
    },
    transaction: (args: { digest: string }) => {
      const tx = txs.get(args.digest);
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
      transactions: (args: { first?: number; after?: string }) => connection(cp.txs, args, transactionValue),
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
      checkpoint: () => tx.checkpoint === null ? null : checkpointValue(checkpoints[tx.checkpoint]),
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
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST") return new Response("POST GraphQL requests here", { status: 405 });
    const body = await req.json() as { query?: string; variables?: Record<string, unknown> };
    const query = body.query ?? "";
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
    const nodes = outputNodes(parse(query));
    if (nodes > MAX_OUTPUT_NODES) {
      return Response.json({ errors: [{ message: `Estimated output nodes ${nodes} exceed ${MAX_OUTPUT_NODES}` }] });
    }
    const result = await graphql({ schema, source: query, rootValue: root, variableValues: body.variables ?? {} });
    const edit = tampered.get(op);
    return Response.json(
      result.errors ? { data: result.data ?? null, errors: result.errors.map((e) => ({ message: e.message })) } : {
        data: edit ? edit(structuredClone(result.data) as Record<string, unknown>, body.variables ?? {}) : result.data,
      },
    );
  });
  const { port } = server.addr as Deno.NetAddr;
  seal(); // genesis
  const chainIdentifier = () =>
    opts.chainIdentifier ??
      Array.from(base58.decode(checkpoints[0].digest).slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("");

  return {
    url: `http://127.0.0.1:${port}/graphql`,
    get tip() {
      return checkpoints.length - 1;
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
      return checkpoints.flatMap((cp) =>
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
