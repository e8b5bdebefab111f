/**
 * Finding our Solana deposits by asking per address instead of reading every block (docs/scan-budget.md, "Solana:
 * polling addresses"). Reading blocks costs the same whatever the number of our addresses (about 2.9 MiB per slot); a
 * poll costs per address and per deposit, so a deployment with few addresses pays far less.
 *
 * A scan of the finalized slots `from..to`:
 * - For each of our addresses, `getSignaturesForAddress` at `finalized` with `minContextSlot: to` (a node whose root is
 *   below `to` refuses, -32016, instead of answering a shorter list), newest first, paged with `before` until an entry
 *   is below `from`. The first page asks for one entry (an idle address answers its newest, below the range: done);
 *   later pages ask four times as many, up to Agave's 1,000 (`MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT`). Once
 *   an address was polled, its newest signature at or below the range's end is kept in memory and the next scan asks
 *   only what is newer (`until`): an idle address then answers `[]`. Kept only while its slot is below the next `from`,
 *   so a range read again (after a failure) is asked in full.
 * - Entries with `err` are failed transactions: never credited, never fetched. The others' signatures are fetched with
 *   `getTransaction` (`encoding: "json"`, `maxSupportedTransactionVersion: 0`, `finalized`), each transaction once even
 *   when it pays several of our addresses, and credited by chains/sol/credits.ts `creditsTo`, the rule the block
 *   scanner uses, over the same account order (static keys, then lookup-table keys writable then read-only: the order
 *   of a block's `accountKeys` in `transactionDetails: "accounts"`). So a deposit has the same signature, index, amount
 *   and sender, hence the same deposit id, whichever way it was found: switching modes never credits twice.
 * - The answer: a block (hash and parent from `getBlock` with `transactionDetails: "none"`) for every slot holding a
 *   transfer of ours, plus the range's last block, so the watcher's cursor moves to it and its reorg and skip checks
 *   read real hashes. A range whose last slot was skipped ends at the newest block in it (`getBlocks`, proven as the
 *   block scanner proves a gap); a range with no block at all answers empty, as the block scanner does.
 *
 * Bounded: at most `IN_FLIGHT` requests of `MAX_BATCH` calls at a time, addresses taken from the watcher's list as
 * requests go out (never copied), and only the signatures inside the range are held. A provider that refuses a batch
 * (a cap on calls, 413) is asked again with half as many calls per request, down to one, with a log line (raised
 * again after 20 answered requests). A poll reads a few bytes per address (about 4 MiB for 100,000), so it does not
 * stop at the watcher's byte budget (`ScanOptions.maxBytes`): the range is read whole. A crash
 * mid-scan reads the range again: the watcher's cursor is still before it, and every transfer's dedupe key is
 * permanent.
 */
import {
  type AddressList,
  type Detection,
  type ObservedTransfer,
  type ScannedBlock,
  TransientChainError,
} from "../adapter.ts";
import { NATIVE } from "../catalog.ts";
import {
  blockHeaderAnswer,
  type JsonTransaction,
  jsonTransactionOrNullAnswer,
  signaturesAnswer,
  slotAnswer,
  solAnswer,
} from "./answers.ts";
import { creditsTo } from "./credits.ts";
import { MAX_BATCH, SOL_RPC_CODES, type SolRpc, SolRpcError } from "./rpc.ts";
import type { JsonRpcCall } from "../shared/json_rpc.ts";
import type { ByteMeter } from "../shared/http_failover.ts";

/** Agave's cap on `limit` (rpc-client-api request.rs `MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT`). */
export const SIGNATURES_LIMIT_MAX = 1000;

/**
 * `auto` polls while we hold at most this many Solana deposit addresses, and reads blocks above: where polling every
 * `POLL_EVERY_MS_DEFAULT` starts to cost more HTTP requests a day than reading every block (bench/sol_detection.ts,
 * figures in docs/scan-budget.md). Polling costs far fewer bytes up to about 100,000 addresses.
 */
export const POLL_MAX_ADDRESSES_DEFAULT = 500;

/** At the tip, a poll at most this often (a deposit waits up to this much longer than Solana's finality). */
export const POLL_EVERY_MS_DEFAULT = 10_000;

/** Detection when none is configured: read every block, as before polling existed. */
export const DETECTION_DEFAULT: Detection = {
  mode: "blocks",
  maxAddresses: POLL_MAX_ADDRESSES_DEFAULT,
  pollEveryMs: POLL_EVERY_MS_DEFAULT,
};

/** Requests in flight at once during a poll. */
const IN_FLIGHT = 4;
/** getTransaction calls per request (a deposit's answer is 1 to 3 KB). */
const TRANSACTIONS_PER_REQUEST = 20;
/** Addresses whose newest signature is remembered (`until`) at most: about 200 bytes each. */
const REMEMBERED_MAX = 100_000;

const HEADER_ONLY = {
  commitment: "finalized",
  transactionDetails: "none",
  rewards: false,
  maxSupportedTransactionVersion: 0,
} as const;

/** `getTransaction` options of a poll: the compact `json` encoding, v0 transactions included. */
export const POLL_TRANSACTION_OPTIONS = {
  commitment: "finalized",
  encoding: "json",
  maxSupportedTransactionVersion: 0,
} as const;

/** What polls read, for tests and benches (never used to decide anything). */
export interface PollStats {
  polls: number;
  requests: number;
  bytes: number;
  signatureCalls: number;
  transactionCalls: number;
  fallbacks: number;
}

/** What a reader keeps between polls. */
export interface PollState {
  /** Per address, its newest signature seen at or below a polled range's end. */
  readonly newest: Map<string, { signature: string; slot: number }>;
  lastPollAt: number | null;
  callsPerRequest: number;
  /** Requests answered since a refusal lowered `callsPerRequest`. */
  sinceRefusal: number;
  readonly stats: PollStats;
}

export function pollState(): PollState {
  return {
    newest: new Map(),
    lastPollAt: null,
    callsPerRequest: MAX_BATCH,
    sinceRefusal: 0,
    stats: { polls: 0, requests: 0, bytes: 0, signatureCalls: 0, transactionCalls: 0, fallbacks: 0 },
  };
}

/** Whether `detection` polls for `addresses` addresses. */
export function polls(detection: Detection, addresses: number): boolean {
  return detection.mode === "addresses" || (detection.mode === "auto" && addresses <= detection.maxAddresses);
}

/**
 * Whether a polling reader would rather read `from..to` later: it polled less than `pollEveryMs` ago and the range is
 * shorter than what the chain makes in that time (a watcher behind the tip is never held back).
 */
export function pollDeferred(detection: Detection, state: PollState, from: number, to: number, now: number): boolean {
  if (state.lastPollAt === null || now - state.lastPollAt >= detection.pollEveryMs) return false;
  return to - from + 1 < Math.ceil(detection.pollEveryMs / NATIVE.sol.blockMs);
}

export interface PollDeps {
  rpc: SolRpc;
  state: PollState;
  log: (message: string) => void;
  now: () => number;
  /** The newest block in `from..to` as the block scanner proves it (chains/sol/reader.ts `provenGap`), or null. */
  lastBlockIn(from: number, to: number): Promise<number | null>;
}

interface Query {
  address: string;
  limit: number;
  before?: string;
  until?: string;
  /** Not the first page: its newest entry at or below `to` was seen already. */
  later?: boolean;
}

/** The scan of `from..to` by polling `addresses` (see the module comment). */
export async function pollScan(
  deps: PollDeps,
  from: number,
  to: number,
  addresses: AddressList,
  ours?: (address: string) => boolean,
): Promise<ScannedBlock[]> {
  const meter: ByteMeter = { bytes: 0 };
  const end = await rangeEnd(deps, from, to, meter);
  if (end === null) return finish(deps, meter, []);
  const listed = await signaturesIn(deps, from, to, addresses, meter);
  const mine = ours ?? setOf(addresses);
  const bySlot = new Map<number, ObservedTransfer[]>();
  for (const tx of await transactions(deps, listed, meter)) {
    const transfers = creditsTo(asCreditable(tx), mine);
    if (transfers.length > 0) bySlot.set(tx.slot, [...(bySlot.get(tx.slot) ?? []), ...transfers]);
  }
  const slots = [...bySlot.keys()].filter((s) => s !== end.number).sort((a, b) => a - b);
  const headers = await blockHeaders(deps, slots, meter);
  const blocks: ScannedBlock[] = slots.map((slot, i) => ({
    number: slot,
    ...headers[i],
    transfers: bySlot.get(slot)!,
  }));
  blocks.push({ ...end, transfers: bySlot.get(end.number) ?? [] });
  for (const b of blocks) {
    b.transfers.sort((x, y) => x.txHash < y.txHash ? -1 : x.txHash > y.txHash ? 1 : x.index - y.index);
  }
  return finish(deps, meter, blocks);
}

function finish(deps: PollDeps, meter: ByteMeter, blocks: ScannedBlock[]): ScannedBlock[] {
  deps.state.lastPollAt = deps.now();
  deps.state.stats.polls++;
  deps.state.stats.bytes += meter.bytes;
  return blocks;
}

function setOf(addresses: AddressList): (address: string) => boolean {
  const set = new Set(addresses.values());
  return (a) => set.has(a);
}

/**
 * The range's last block (`to` itself unless skipped), and the node keeps the range's history: a node whose first
 * available block is above `from` would list fewer signatures without saying so.
 */
async function rangeEnd(
  deps: PollDeps,
  from: number,
  to: number,
  meter: ByteMeter,
): Promise<{ number: number; hash: string; parentHash: string } | null> {
  const [block, first] = await send(deps, [
    { method: "getBlock", params: [to, HEADER_ONLY] },
    { method: "getFirstAvailableBlock", params: [] },
  ], meter);
  const firstAvailable = solAnswer("getFirstAvailableBlock", slotAnswer, unwrapped(first));
  if (from < firstAvailable) {
    throw new Error(
      `sol: the RPC node keeps no history below slot ${firstAvailable} (getFirstAvailableBlock); slots ${from} to ` +
        `${Math.min(to, firstAvailable - 1)} cannot be polled there; point SOL_RPC_URLS at a node with that history`,
    );
  }
  let slot = to;
  let header = block;
  if (isSkip(block)) {
    const last = await deps.lastBlockIn(from, to);
    if (last === null) return null;
    slot = last;
    [header] = await send(deps, [{ method: "getBlock", params: [last, HEADER_ONLY] }], meter);
  }
  const read = solAnswer("getBlock", blockHeaderAnswer, unwrapped(header));
  if (read === null) throw new TransientChainError(`sol: getBlock ${slot} answered null for a finalized block`);
  return { number: slot, hash: read.blockhash, parentHash: read.previousBlockhash };
}

/** The successful signatures of our addresses in `from..to`, each once, with its slot. */
async function signaturesIn(
  deps: PollDeps,
  from: number,
  to: number,
  addresses: AddressList,
  meter: ByteMeter,
): Promise<Map<string, number>> {
  const { state } = deps;
  const found = new Map<string, number>();
  const pending: Query[] = [];
  const source = addresses.values()[Symbol.iterator]();
  let sourceDone = false;
  const nextQueries = (n: number): Query[] => {
    const out = pending.splice(0, n);
    while (out.length < n && !sourceDone) {
      const step = source.next();
      if (step.done) {
        sourceDone = true;
        break;
      }
      const known = state.newest.get(step.value);
      out.push(
        known && known.slot < from
          ? { address: step.value, limit: SIGNATURES_LIMIT_MAX, until: known.signature }
          : { address: step.value, limit: 1 },
      );
    }
    return out;
  };
  const read = (q: Query, answer: unknown) => {
    const entries = solAnswer("getSignaturesForAddress", signaturesAnswer, unwrapped(answer));
    let newestSeen = q.later === true;
    for (const e of entries) {
      if (e.slot > to) continue; // finalized after the range: the next scan's
      if (!newestSeen) {
        newestSeen = true;
        if (state.newest.has(q.address) || state.newest.size < REMEMBERED_MAX) {
          state.newest.set(q.address, { signature: e.signature, slot: e.slot });
        }
      }
      if (e.slot < from) return; // below the range: this address is done
      if (e.err !== null) continue; // failed: it credited nothing
      const at = found.get(e.signature);
      if (at !== undefined && at !== e.slot) {
        throw new TransientChainError(`sol: signature ${e.signature} listed at slots ${at} and ${e.slot}`);
      }
      found.set(e.signature, e.slot);
    }
    if (entries.length >= q.limit) {
      pending.push({
        address: q.address,
        limit: Math.min(SIGNATURES_LIMIT_MAX, q.limit * 4),
        before: entries.at(-1)!.signature,
        ...(q.until ? { until: q.until } : {}),
        later: newestSeen,
      });
    }
  };
  const worker = async () => {
    for (;;) {
      const batch = nextQueries(state.callsPerRequest);
      if (batch.length === 0) return;
      const calls = batch.map((q) => ({
        method: "getSignaturesForAddress",
        params: [q.address, {
          commitment: "finalized",
          limit: q.limit,
          minContextSlot: to,
          ...(q.before ? { before: q.before } : {}),
          ...(q.until ? { until: q.until } : {}),
        }],
      }));
      let answers: unknown[];
      try {
        answers = await send(deps, calls, meter);
      } catch (err) {
        if (batch.length === 1) throw err;
        pending.unshift(...batch);
        refused(deps, batch.length, err);
        continue;
      }
      state.stats.signatureCalls += batch.length;
      answered(state);
      batch.forEach((q, i) => read(q, answers[i]));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return found;
}

/** The finalized transactions of `listed`, read `TRANSACTIONS_PER_REQUEST` at a time. */
async function transactions(deps: PollDeps, listed: Map<string, number>, meter: ByteMeter): Promise<JsonTransaction[]> {
  const out: JsonTransaction[] = [];
  const signatures = [...listed.keys()];
  let size = Math.min(TRANSACTIONS_PER_REQUEST, deps.state.callsPerRequest);
  for (let i = 0; i < signatures.length;) {
    const chunk = signatures.slice(i, i + size);
    let answers: unknown[];
    try {
      answers = await send(
        deps,
        chunk.map((s) => ({ method: "getTransaction", params: [s, POLL_TRANSACTION_OPTIONS] })),
        meter,
      );
    } catch (err) {
      if (chunk.length === 1) throw err;
      refused(deps, chunk.length, err);
      size = deps.state.callsPerRequest;
      continue;
    }
    deps.state.stats.transactionCalls += chunk.length;
    answered(deps.state);
    chunk.forEach((signature, k) => {
      const tx = solAnswer("getTransaction", jsonTransactionOrNullAnswer, unwrapped(answers[k]));
      const slot = listed.get(signature)!;
      // Listed at finalized, so kept by any node of that history: null is a node behind, not "no such transaction".
      if (tx === null) {
        throw new TransientChainError(`sol: getTransaction ${signature} answered null for a finalized signature`);
      }
      if (tx.slot !== slot) {
        throw new TransientChainError(`sol: ${signature} listed at slot ${slot} but getTransaction says ${tx.slot}`);
      }
      out.push(tx);
    });
    i += chunk.length;
  }
  return out;
}

/**
 * A `json` transaction as crediting reads it: its keys in balance order (static, then loaded writable, then loaded
 * read-only), the first `numRequiredSignatures` signers, as a block's `accountKeys` lists them.
 */
export function asCreditable(tx: JsonTransaction) {
  const message = tx.transaction.message;
  const loaded = tx.meta?.loadedAddresses;
  if ((message.addressTableLookups?.length ?? 0) > 0 && !loaded) {
    throw new TransientChainError(
      `sol: getTransaction ${tx.transaction.signatures[0]} uses lookup tables but lists no loadedAddresses`,
    );
  }
  const keys = [...message.accountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
  const signers = message.header.numRequiredSignatures;
  return {
    transaction: {
      signatures: tx.transaction.signatures,
      accountKeys: keys.map((pubkey, i) => ({ pubkey, signer: i < signers })),
    },
    meta: tx.meta,
  };
}

async function blockHeaders(deps: PollDeps, slots: number[], meter: ByteMeter) {
  if (slots.length === 0) return [];
  const answers = await send(deps, slots.map((s) => ({ method: "getBlock", params: [s, HEADER_ONLY] })), meter);
  return slots.map((slot, i) => {
    const read = solAnswer("getBlock", blockHeaderAnswer, unwrapped(answers[i]));
    if (read === null) throw new TransientChainError(`sol: getBlock ${slot} answered null for a block with a deposit`);
    return { hash: read.blockhash, parentHash: read.previousBlockhash };
  });
}

async function send(deps: PollDeps, calls: JsonRpcCall[], meter: ByteMeter): Promise<unknown[]> {
  const answers = await deps.rpc.batch<unknown>(calls, meter);
  deps.state.stats.requests += Math.ceil(calls.length / MAX_BATCH);
  return answers;
}

function refused(deps: PollDeps, calls: number, err: unknown) {
  const { state } = deps;
  state.callsPerRequest = Math.max(1, Math.floor(calls / 2));
  state.sinceRefusal = 0;
  state.stats.fallbacks++;
  const why = err instanceof Error ? err.message : String(err);
  deps.log(`sol: a poll of ${calls} calls in one request failed (${why}); asking ${state.callsPerRequest} at a time`);
}

/** Successful requests after which calls per request lowered by a refusal are raised again (a bad minute passes). */
const RECOVERY_REQUESTS = 20;

function answered(state: PollState) {
  if (state.callsPerRequest >= MAX_BATCH || ++state.sinceRefusal < RECOVERY_REQUESTS) return;
  state.callsPerRequest = Math.min(MAX_BATCH, state.callsPerRequest * 2);
  state.sinceRefusal = 0;
}

function isSkip(answer: unknown): boolean {
  return answer instanceof SolRpcError &&
    (answer.code === SOL_RPC_CODES.slotSkipped || answer.code === SOL_RPC_CODES.longTermStorageSlotSkipped);
}

/** A batch entry's result, or its error thrown as transient (the watcher stays before the range and asks again). */
function unwrapped(answer: unknown): unknown {
  if (answer instanceof SolRpcError) {
    throw new TransientChainError(`sol: a poll's ${answer.message}`, { chain: "sol", cause: answer });
  }
  return answer;
}
