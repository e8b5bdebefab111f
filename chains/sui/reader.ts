/**
 * The Sui reader over GraphQL (never the retired JSON-RPC): block number = checkpoint sequence number, hash = its
 * digest, parent = the previous checkpoint's digest. A certified checkpoint is final (Sui has no reorgs), so every
 * `included` answer carries `final: true`. Deposits are the positive SUI balance changes of address owners in
 * successful transactions: a failed transaction charges gas and credits no one. A balance change is numbered by its
 * position in its transaction's balance changes, so (digest, index) names a deposit for ever.
 *
 * Scans are bounded by bytes (docs/scan-budget.md, "Sui"): one SCAN_CHECKPOINTS request covers up to 50 checkpoints
 * with their first 50 transactions and each one's first 50 balance changes (within the service's limits,
 * chains/sui/graphql.ts `SUI_GRAPHQL_LIMITS`); the checkpoints per request grow from one to fit
 * `TARGET_RESPONSE_BYTES` at the bytes the last request brought back; the further pages of checkpoints holding more
 * than 50 transactions, then of transactions with more than 50 balance changes, are asked for together, up to
 * `MAX_FURTHER_PAGES` in one request. A request a provider
 * refuses (a limit's GraphQL error, HTTP 413, a timeout) is asked again smaller, with a log line. A transaction is
 * checked in place and, with the watcher's `ours`, a balance change's owner is looked up before anything is built.
 */
import {
  type ChainReader,
  type ObservedTransfer,
  type ScannedBlock,
  type ScanOptions,
  type ScanStats,
  TransientChainError,
  type TxStatus,
} from "../adapter.ts";
import { MalformedAnswerError, readAnswer } from "../shared/answers.ts";
import type { ByteMeter } from "../shared/http_failover.ts";
import {
  balanceAnswer,
  balanceChangePagesAnswer,
  balanceChangesAnswer,
  checkpointDigestAnswer,
  latestCheckpointAnswer,
  scanCheckpointsRawAnswer,
  type SuiBalanceChange,
  type SuiBalanceChanges,
  type SuiRawTransactions,
  suiRequest,
  type SuiTransaction,
  transaction as transactionSchema,
  transactionAnswer,
  transactionPagesAnswer,
  txStatusAnswer,
} from "./answers.ts";
import { isSuiCoinType, normalizeSuiAddress, type SuiGraphql } from "./client.ts";
import {
  BALANCE,
  BALANCE_CHANGES_PAGE,
  balanceChangePagesDocument,
  CHECKPOINT_DIGEST,
  LATEST_CHECKPOINT,
  MAX_FURTHER_PAGES,
  SCAN_CHECKPOINTS,
  SCAN_MAX_CHECKPOINTS,
  TRANSACTION,
  transactionPagesDocument,
  TX_STATUS,
} from "./graphql.ts";
import { BatchSizer } from "../shared/batch_sizer.ts";

/**
 * Bytes one scan request should bring back. A mainnet checkpoint is about 25 KB of this answer (docs/scan-budget.md),
 * so the service's page of 50 checkpoints, not this, is what bounds a request there; a burst of large checkpoints
 * (hundreds of transactions each) is read fewer per request.
 */
export const TARGET_RESPONSE_BYTES = 4 * 1024 * 1024;

/** What this reader's scans read and built: requests are checkpoints and further pages of transactions and changes. */
export interface SuiScanStats extends ScanStats {
  checkpoints: number;
  /** Transfers built (with `ours`, only those to our addresses). */
  transfersBuilt: number;
  /** Requests asked again smaller after a provider refused or failed them. */
  fallbacks: number;
}

export interface SuiReaderOptions {
  /** Bytes one scan request should bring back (default `TARGET_RESPONSE_BYTES`). */
  targetResponseBytes?: number;
  /** Where a refused or failed scan request is reported (default `console.warn`). */
  log?: (message: string) => void;
}

/** The sui reader, with what its scans read. */
export type SuiReader = ChainReader & { readonly stats: SuiScanStats };

const CANONICAL_ADDRESS = /^0x[0-9a-f]{64}$/;
const INTEGER = /^-?\d+$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** A balance change as answered, checked in place. */
interface PlainChange {
  owner: { address: string } | null;
  coinType: { repr: string } | null;
  amount: string | null;
}

/** A scan's transaction as answered, checked in place (`isPlainTransaction`). */
interface PlainTransaction {
  digest: string;
  sender: { address: string } | null;
  effects: {
    status: "SUCCESS" | "FAILURE" | null;
    balanceChanges: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: PlainChange[] } | null;
  } | null;
}

/**
 * Whether a transaction as answered is, field by field, one the `transaction` schema (chains/sui/answers.ts) accepts
 * with the same values: addresses already canonical, amounts integer strings, a SUI change of an address with its
 * amount. Checked in place, without the copy the schema makes; anything refused here is read through the schema,
 * which accepts it or refuses it naming the field.
 */
export function isPlainTransaction(v: unknown): v is PlainTransaction {
  if (!isObject(v) || typeof v.digest !== "string") return false;
  if (v.sender !== null && !(isObject(v.sender) && isCanonical(v.sender.address))) return false;
  const fx = v.effects;
  if (fx === null) return true;
  if (!isObject(fx) || !(fx.status === "SUCCESS" || fx.status === "FAILURE" || fx.status === null)) return false;
  const bc = fx.balanceChanges;
  if (bc === null) return true;
  if (!isObject(bc) || !isObject(bc.pageInfo) || typeof bc.pageInfo.hasNextPage !== "boolean") return false;
  if (!(bc.pageInfo.endCursor === null || typeof bc.pageInfo.endCursor === "string")) return false;
  if (!Array.isArray(bc.nodes)) return false;
  for (const c of bc.nodes) {
    if (!isObject(c)) return false;
    if (c.owner !== null && !(isObject(c.owner) && isCanonical(c.owner.address))) return false;
    if (c.coinType !== null && !(isObject(c.coinType) && typeof c.coinType.repr === "string")) return false;
    if (c.amount === null) {
      if (c.owner !== null && c.coinType !== null && isSuiCoinType((c.coinType as { repr: string }).repr)) return false;
    } else if (typeof c.amount !== "string" || !INTEGER.test(c.amount)) return false;
  }
  return true;
}

function isCanonical(v: unknown): v is string {
  return typeof v === "string" && CANONICAL_ADDRESS.test(v);
}

/** A scan's transaction read: in place when plain, else through its schema (named at `at` in the answer). */
function readTransaction(op: string, tx: unknown, at: (string | number)[]): PlainTransaction | SuiTransaction {
  return isPlainTransaction(tx) ? tx : readAnswer("sui GraphQL", op, transactionSchema, tx, at);
}

type AnyChange = PlainChange | SuiBalanceChange;

/**
 * The SUI credits among `changes` (numbered from `offset`) of a successful transaction: an address owner's positive
 * SUI change. With `ours`, the owner is looked up before anything is built.
 */
function creditsIn(
  digest: string,
  from: string,
  changes: readonly AnyChange[],
  offset: number,
  ours?: (address: string) => boolean,
): ObservedTransfer[] {
  const out: ObservedTransfer[] = [];
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    if (!c.owner || !c.coinType || (ours && !ours(c.owner.address)) || !isSuiCoinType(c.coinType.repr)) continue;
    const amount = typeof c.amount === "bigint" ? c.amount : BigInt(c.amount!); // present on a SUI change of an address
    if (amount <= 0n) continue;
    out.push({ txHash: digest, index: offset + i, from, to: c.owner.address, amount, asset: "native" });
  }
  return out;
}

export function suiReader(gql: SuiGraphql, opts: SuiReaderOptions = {}): SuiReader {
  const sizer = new BatchSizer(opts.targetResponseBytes ?? TARGET_RESPONSE_BYTES, SCAN_MAX_CHECKPOINTS);
  /** Further pages per request: halved by a refusal, like the checkpoints. */
  const transactionPager = new BatchSizer(Number.MAX_SAFE_INTEGER, MAX_FURTHER_PAGES, MAX_FURTHER_PAGES);
  const changePager = new BatchSizer(Number.MAX_SAFE_INTEGER, MAX_FURTHER_PAGES, MAX_FURTHER_PAGES);
  const stats: SuiScanStats = {
    requests: 0,
    bytes: 0,
    largestResponse: 0,
    checkpoints: 0,
    transfersBuilt: 0,
    fallbacks: 0,
  };
  const log = opts.log ?? ((message: string) => console.warn(message));

  /** Counts one answered scan request of `bytes`. */
  function counted(bytes: number) {
    stats.requests++;
    stats.bytes += bytes;
    stats.largestResponse = Math.max(stats.largestResponse, bytes);
  }

  /** Every balance change of a transaction, following pages past the first. */
  async function allBalanceChanges(digest: string, first: SuiBalanceChanges | null): Promise<SuiBalanceChange[]> {
    const nodes = [...(first?.nodes ?? [])];
    let page = first?.pageInfo;
    while (page?.hasNextPage) {
      const data = await suiRequest(gql, BALANCE_CHANGES_PAGE, balanceChangesAnswer, { digest, after: page.endCursor });
      const next = data.transactionEffects?.balanceChanges;
      if (!next) break;
      nodes.push(...next.nodes);
      page = next.pageInfo;
    }
    return nodes;
  }

  /** The SUI credits of one transaction: none when it failed. */
  async function transfersOfNode(tx: SuiTransaction): Promise<ObservedTransfer[]> {
    if (tx.effects?.status !== "SUCCESS") return [];
    const changes = await allBalanceChanges(tx.digest, tx.effects.balanceChanges);
    return creditsIn(tx.digest, tx.sender?.address ?? "", changes, 0);
  }

  /** A checkpoint being read: its credits so far and where its transactions' next page starts (null: all read). */
  interface Reading {
    block: ScannedBlock;
    next: string | null;
  }

  /** A transaction whose balance changes go on past the page read: where the next page starts (null: all read). */
  interface MoreChanges {
    block: ScannedBlock;
    digest: string;
    from: string;
    /** Position of the next page's first change in the transaction's balance changes. */
    offset: number;
    next: string | null;
  }

  /** What one scan request (and the further pages it leads to) reads, credits and still has to ask for. */
  interface Batch {
    meter: ByteMeter;
    ours?: (address: string) => boolean;
    changes: MoreChanges[];
  }

  /** Where a page ends: its end cursor when there is a next page (refused when missing), else null. */
  function nextOf(op: string, page: { pageInfo: { hasNextPage: boolean; endCursor: string | null } }, at: string) {
    if (!page.pageInfo.hasNextPage) return null;
    if (page.pageInfo.endCursor === null) {
      throw new MalformedAnswerError(
        "sui GraphQL",
        op,
        `${at}.pageInfo.endCursor`,
        "is missing on a page with a next page",
      );
    }
    return page.pageInfo.endCursor;
  }

  /**
   * The credits of one page of a checkpoint's transactions, one transaction at a time (each read in place or through
   * its schema, and released); a transaction with more balance changes than the page is left to `batch.changes`.
   */
  function readPage(op: string, r: Reading, page: SuiRawTransactions | null, at: (string | number)[], batch: Batch) {
    const nodes = page?.nodes ?? [];
    for (let i = 0; i < nodes.length; i++) {
      const tx = readTransaction(op, nodes[i], [...at, "transactions", "nodes", i]);
      nodes[i] = undefined; // one transaction at a time: each is released once read
      if (tx.effects?.status !== "SUCCESS") continue; // failed: it charged gas and credited no one
      const from = tx.sender?.address ?? "";
      const changes = tx.effects.balanceChanges;
      for (const t of creditsIn(tx.digest, from, changes?.nodes ?? [], 0, batch.ours)) r.block.transfers.push(t);
      const next = changes
        ? nextOf(op, changes, [...at, "transactions", "nodes", i, "effects", "balanceChanges"].join("."))
        : null;
      if (next !== null) {
        batch.changes.push({ block: r.block, digest: tx.digest, from, offset: changes!.nodes.length, next });
      }
    }
    r.next = page ? nextOf(op, page, [...at, "transactions"].join(".")) : null;
  }

  /**
   * Asks for the further pages of `items` (those whose `next` is not null) `pager.size` at a time, one request per
   * group (`request`), reads each answered group (`read`, which moves `next`), until none is left. A group the provider
   * refuses is asked again with fewer, down to one page, with a log line; a malformed answer is refused at once.
   */
  async function furtherPages<T extends { next: string | null }, A>(
    items: T[],
    pager: BatchSizer,
    what: string,
    batch: Batch,
    request: (group: T[]) => Promise<A>,
    read: (group: T[], answer: A) => void,
  ) {
    let pending = items.filter((t) => t.next !== null);
    while (pending.length > 0) {
      const group = pending.slice(0, pager.size);
      const before = batch.meter.bytes;
      let answer: A;
      try {
        answer = await request(group);
      } catch (err) {
        if (group.length === 1 || err instanceof MalformedAnswerError) {
          log(`sui: a further page of ${what} failed (${why(err)}); the watcher stays before it and asks again`);
          throw err;
        }
        pager.refused(group.length);
        stats.fallbacks++;
        log(
          `sui: ${group.length} further pages of ${what} in one request failed (${why(err)}); asking ${pager.size} ` +
            `at a time`,
        );
        continue;
      }
      counted(batch.meter.bytes - before);
      pager.answered(group.length, batch.meter.bytes - before);
      read(group, answer);
      pending = pending.filter((t) => t.next !== null);
    }
  }

  /** The further pages of transactions of `open` checkpoints, several checkpoints per request. */
  async function readFurtherTransactions(open: Reading[], batch: Batch) {
    await furtherPages(open, transactionPager, "transactions", batch, async (group) => {
      const vars = Object.fromEntries(group.flatMap((r, i) => [[`s${i}`, r.block.number], [`a${i}`, r.next]]));
      const schema = transactionPagesAnswer(group.length);
      return await suiRequest(gql, transactionPagesDocument(group.length), schema, vars, batch.meter);
    }, (group, data) => {
      const op = `SuiTransactionPages${group.length}`;
      for (let i = 0; i < group.length; i++) {
        const page = data[`p${i}`];
        if (!page) {
          const why = `is missing: checkpoint ${group[i].block.number} was in the scan`;
          throw new MalformedAnswerError("sui GraphQL", op, `p${i}`, why);
        }
        readPage(op, group[i], page.transactions, [`p${i}`], batch);
        data[`p${i}`] = null;
      }
    });
  }

  /** The further pages of balance changes of the transactions that have more, several per request. */
  async function readFurtherChanges(batch: Batch) {
    await furtherPages(batch.changes, changePager, "balance changes", batch, async (group) => {
      const vars = Object.fromEntries(group.flatMap((c, i) => [[`d${i}`, c.digest], [`a${i}`, c.next]]));
      const schema = balanceChangePagesAnswer(group.length);
      return await suiRequest(gql, balanceChangePagesDocument(group.length), schema, vars, batch.meter);
    }, (group, data) => {
      const op = `SuiBalanceChangePages${group.length}`;
      for (let i = 0; i < group.length; i++) {
        const c = group[i];
        const page = data[`b${i}`]?.balanceChanges;
        if (!page) {
          const why = `is missing: transaction ${c.digest} is in checkpoint ${c.block.number}`;
          throw new MalformedAnswerError("sui GraphQL", op, `b${i}`, why);
        }
        for (const t of creditsIn(c.digest, c.from, page.nodes, c.offset, batch.ours)) c.block.transfers.push(t);
        c.offset += page.nodes.length;
        c.next = nextOf(op, page, `b${i}.balanceChanges`);
      }
    });
  }

  async function scan(from: number, to: number, scanOpts: ScanOptions = {}): Promise<ScannedBlock[]> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
      throw new RangeError(`sui scan: bad checkpoint range ${from}..${to}`);
    }
    const { ours, maxBytes } = scanOpts;
    const blocks: ScannedBlock[] = [];
    const meter: ByteMeter = { bytes: 0 };
    let next = from;
    while (next <= to) {
      // The byte budget ends the scan at a checkpoint boundary, never before one checkpoint is in hand: an empty answer
      // would tell the watcher the whole range is empty.
      if (maxBytes !== undefined && blocks.length > 0 && meter.bytes >= maxBytes) break;
      const want = Math.min(sizer.size, to - next + 1);
      const before = meter.bytes;
      let nodes;
      try {
        const data = await suiRequest(gql, SCAN_CHECKPOINTS, scanCheckpointsRawAnswer, {
          after: next === 0 ? null : next - 1,
          before: next + want,
          first: want,
        }, meter);
        nodes = data.checkpoints?.nodes ?? [];
      } catch (err) {
        if (want === 1 || err instanceof MalformedAnswerError) {
          log(`sui: checkpoints from ${next} failed (${why(err)}); the watcher stays before them and asks again`);
          throw err;
        }
        // A provider that caps a query's size (a limit's GraphQL error, HTTP 413, "response too large", a timeout on a
        // large answer): the same checkpoints again in smaller requests, down to one each. Never a stall on the batch.
        sizer.refused(want);
        stats.fallbacks++;
        log(
          `sui: ${want} checkpoints (${next}..${next + want - 1}) in one request failed (${why(err)}); asking ` +
            `${sizer.size} at a time`,
        );
        continue;
      }
      counted(meter.bytes - before);
      const batch: Batch = { meter, ours, changes: [] };
      const open: Reading[] = [];
      for (let i = 0; i < nodes.length; i++) {
        const cp = nodes[i];
        if (cp.sequenceNumber !== next + i) {
          throw new MalformedAnswerError(
            "sui GraphQL",
            "SuiScanCheckpoints",
            `checkpoints.nodes[${i}].sequenceNumber`,
            `is ${cp.sequenceNumber}, not ${next + i}: the answer skipped or repeated a checkpoint`,
          );
        }
        const r: Reading = {
          block: {
            number: cp.sequenceNumber,
            hash: cp.digest,
            parentHash: cp.previousCheckpointDigest ?? "",
            transfers: [],
          },
          next: null,
        };
        readPage("SuiScanCheckpoints", r, cp.transactions, ["checkpoints", "nodes", i], batch);
        open.push(r);
      }
      nodes.length = 0;
      await readFurtherTransactions(open, batch);
      await readFurtherChanges(batch);
      sizer.answered(Math.max(1, open.length), meter.bytes - before);
      if (scanOpts.meter) scanOpts.meter.bytes += meter.bytes - before;
      for (const r of open) {
        stats.checkpoints++;
        stats.transfersBuilt += r.block.transfers.length;
        blocks.push(r.block);
      }
      // Sui numbers every checkpoint: fewer than asked means the rest is above the tip.
      if (open.length < want) break;
      next += want;
    }
    if (blocks.length === 0) {
      // Never "the range is empty" (the watcher would pass it): every checkpoint exists, so this node (or its indexer)
      // is behind the tip the watcher read, perhaps from another URL. The cursor stays; the next tick asks again.
      throw new TransientChainError(
        `sui: the GraphQL node serves no checkpoint from ${from} yet (behind the tip read)`,
        {
          chain: "sui",
        },
      );
    }
    return blocks;
  }

  async function tipRef() {
    const data = await suiRequest(gql, LATEST_CHECKPOINT, latestCheckpointAnswer);
    if (!data.checkpoint) throw new Error("sui GraphQL: the node knows no checkpoint");
    return { number: data.checkpoint.sequenceNumber, hash: data.checkpoint.digest };
  }

  return {
    chain: "sui",
    stats,
    finality: { kind: "flag", flag: "checkpointed" },

    tip: tipRef,

    async blockHash(number) {
      const data = await suiRequest(gql, CHECKPOINT_DIGEST, checkpointDigestAnswer, { sequenceNumber: number });
      return data.checkpoint?.digest ?? null;
    },

    scan,

    async txStatus(txHash, ours): Promise<TxStatus> {
      const data = await suiRequest(gql, TX_STATUS, txStatusAnswer, { digest: txHash });
      const effects = data.transactionEffects;
      if (effects?.checkpoint) {
        const blockNumber = effects.checkpoint.sequenceNumber;
        const tip = data.checkpoint ? data.checkpoint.sequenceNumber : blockNumber;
        const success = effects.status === "SUCCESS";
        return {
          state: "included",
          blockNumber,
          confirmations: Math.max(1, tip - blockNumber + 1),
          success,
          ...(success ? {} : { reason: effects.executionError?.message ?? "the transaction failed" }),
          final: true,
        };
      }
      if (effects) return { state: "pending" }; // executed, not yet in a checkpoint this node serves
      const expiry = ours?.expiry;
      const epoch = data.epoch ? data.epoch.epochId : null;
      if (expiry?.kind === "epoch" && epoch !== null && epoch > expiry.value) {
        return {
          state: "dead",
          proof: { kind: "expired", expiry, reached: epoch },
          detail:
            `Sui epoch ${epoch} is past the transaction's expiration epoch ${expiry.value} and the node does not know ` +
            `its digest ${txHash}: it can never execute.`,
        };
      }
      return { state: "unknown" };
    },

    async transfersOf(txHash) {
      const data = await suiRequest(gql, TRANSACTION, transactionAnswer, { digest: txHash });
      if (!data.transaction || !data.transactionEffects?.checkpoint) return null;
      return await transfersOfNode(data.transaction);
    },

    async balance(address) {
      const data = await suiRequest(gql, BALANCE, balanceAnswer, { address: normalizeSuiAddress(address) });
      return data.address?.balance?.totalBalance ?? 0n;
    },
  };
}

function why(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
