/**
 * A Solana-RPC-shaped server: a local `Deno.serve` speaking the JSON-RPC 2.0 methods the sol adapter uses, with the
 * shapes Solana's RPC documents (https://solana.com/docs/rpc), over an in-memory ledger. It is not a validator: it
 * runs only System Program transfers (and memos), which is all our transactions contain.
 *
 * Ledger: slots, some skipped (no block: `getBlock` answers -32007); `finalized` lags the tip by `finalityLag`
 * blocks; balances are kept per block, so `getBalance` at `finalized` reads the finalized state.
 *
 * Methods and shapes:
 * - `getGenesisHash()`: the `genesisHash` option (a made-up hash unless a test asks for mainnet's).
 * - `getSlot({commitment})`, `getBlockHeight({commitment})`: numbers (finalized, or the tip for confirmed/processed).
 * - `getBlocks(start, end, {commitment})`: slots with a block in [max(start, first available), min(end, that
 *   commitment's slot)], silently capped on both sides as Agave's `getBlocks` (rpc/src/rpc.rs) does: it lists the
 *   rooted slots from the blockstore's lowest slot up to the commitment's slot.
 * - `getFirstAvailableBlock()`: the lowest slot whose block is still kept (0 until `purgeBelow`); `getBlock` below
 *   it answers -32001 "Block N cleaned up, does not exist on node. First available block: M" (Agave's
 *   `RpcCustomError::BlockCleanedUp`, rpc-client-api/src/custom_error.rs).
 * - `getBlock(slot, {commitment, encoding: "json", transactionDetails: "accounts"|"none", ...})`: {blockhash,
 *   previousBlockhash, parentSlot, blockHeight, blockTime, transactions?: [{transaction: {accountKeys: [{pubkey,
 *   signer, source: "transaction"|"lookupTable", writable}], signatures}, meta: {err, fee, preBalances,
 *   postBalances, status}, version}]}; -32007 for a skipped slot; -32004 above the commitment's slot.
 * - `getTransaction(sig, {commitment, encoding: "json"|"jsonParsed", maxSupportedTransactionVersion})` and
 *   `getSignaturesForAddress(address, {limit, before, until, commitment, minContextSlot})`: as Agave answers them,
 *   errors included (see each function).
 * - `getSignatureStatuses([sig], {searchTransactionHistory})`: {context, value: [{slot, confirmations, err, status,
 *   confirmationStatus} | null]}.
 * - `getBalance(address, {commitment})`: {context: {slot}, value}; `getMinimumBalanceForRentExemption(0)`: 890880.
 * - `getLatestBlockhash({commitment})`: {context, value: {blockhash, lastValidBlockHeight}} (that block's height +
 *   `blockhashValidity`, 150 on mainnet).
 * - `sendTransaction(base64, {encoding: "base64", skipPreflight})`: decodes the wire transaction (@solana/kit),
 *   verifies every signature (-32003 otherwise), and queues it for the next block. A blockhash that is unknown or
 *   past its last valid height: with preflight, -32002 "Blockhash not found"; with `skipPreflight`, accepted and never
 *   included (as a real leader drops it). A signature already seen: its signature again.
 *   Executing it charges 5,000 lamports per signature to the fee payer; a transfer beyond the source's balance fails
 *   with `{InstructionError: [i, {Custom: 1}]}`, one leaving an account between 0 and the rent-exempt minimum with
 *   `{InsufficientFundsForRent: {account_index}}`: failed transactions are included with `meta.err` and charge only
 *   the fee, as on chain. A fee payer the fee alone would leave between 0 and the rent-exempt minimum fails fee
 *   validation: not included at all.
 *
 * - `getGenesisHash`: a hash of this server's own (never mainnet-beta's), so `CHAIN_MODE=devnet` accepts it.
 *
 * Mainnet-sized blocks (`mainnetBlocks`): every block's `getBlock` answer in `accounts` mode also lists about 2,000
 * transactions of other people's (tests/support/solana_mainnet_blocks.ts), generated from the slot when asked and
 * never stored, so a test can serve hundreds of 3 MB blocks with flat memory on both sides. A batch's answer is
 * streamed one entry at a time, so the server never holds a whole batch either.
 *
 * Limits, as a validator and as providers set them:
 * - A request body above 50 KiB is refused with HTTP 413: Agave's `MAX_REQUEST_BODY_SIZE` (`50 * (1 << 10)`,
 *   rpc/src/rpc.rs, agave master at workspace version 4.4.0-alpha), which rpc/src/rpc_service.rs hands to
 *   jsonrpc-http-server 18 as `max_request_body_size`. Agave sets no limit on the number of calls in a batch nor on
 *   the size of an answer: a validator answers 50 getBlock calls with one 150 MB body.
 * - Providers in front of validators do cap both, each its own way; `maxBatch` refuses a batch longer than that with
 *   one JSON-RPC error object (-32600) instead of a list, `maxResponseBytes` answers HTTP 413 "response too large"
 *   when the answer would be longer, and `bytesPerSecond` sends the answer no faster than that (a slow provider).
 *
 * Hooks: `inject` (a transaction of someone else's, with the traps: failed, v0 with lookup-table accounts, several
 * recipients, a transfer inside another program), `produce`, `produceEvery` (a block every few ms, as a validator
 * would, until stopped), `skip`, `finalize`, `drop` (a sent transaction is never included, so it expires),
 * `dropNextSent` (the next matching transaction sent is accepted and never included, as a leader may drop it), `fund`.
 * Reads for assertions: `balance`, `landedAt`, `paymentsTo` (every successful credit of an address), `memosOf`,
 * `sends` (sendTransaction calls per signature).
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58, base64 } from "@scure/base";
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import { sha256 } from "@noble/hashes/sha2.js";
import { type MainnetBlockShape, mainnetTransactionsJson } from "./solana_mainnet_blocks.ts";

export const RENT_EXEMPT_MINIMUM_0 = 890_880n;
export const FEE_PER_SIGNATURE = 5_000n;
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);

interface AccountKey {
  pubkey: string;
  signer: boolean;
  writable: boolean;
  source: "transaction" | "lookupTable";
}

interface StoredTx {
  signature: string;
  keys: AccountKey[];
  pre: bigint[];
  post: bigint[];
  err: unknown;
  fee: bigint;
  version: "legacy" | 0;
  recentBlockhash: string;
  /** Memo program texts, in instruction order (our transactions only). */
  memos?: string[];
}

interface Block {
  slot: number;
  parentSlot: number;
  height: number;
  blockhash: string;
  previousBlockhash: string;
  txs: StoredTx[];
  balances: Map<string, bigint>;
}

/** A transaction of someone else's that the ledger executes as given: balance deltas per account. */
export interface InjectedTx {
  /** Fee payer (first signer); funded as needed. */
  payer: string;
  /** Lamports each account receives (from the payer). */
  credits: { to: string; lamports: bigint; source?: "transaction" | "lookupTable" }[];
  /** Failed on chain: included with this `meta.err`, only the fee charged. */
  err?: unknown;
  version?: "legacy" | 0;
  /** A program the transfer runs inside (listed as a read-only key): only balances show the move. */
  viaProgram?: string;
}

interface Pending {
  tx: StoredTx;
  /** Our transactions: executed at inclusion (transfers in order); injected ones carry fixed deltas. */
  transfers?: { from: number; to: number; lamports: bigint }[];
  deltas?: bigint[];
  lastValidBlockHeight?: number;
}

export interface SolanaRpcServerOptions {
  /** Blocks between the tip and the finalized block. */
  finalityLag?: number;
  /** Blocks a blockhash stays valid (lastValidBlockHeight = its height + this). */
  blockhashValidity?: number;
  /** Blocks made at start (slot 0 included). */
  initialBlocks?: number;
  /** What `getGenesisHash` answers; a test ledger's own by default (never mainnet-beta's). */
  genesisHash?: string;
  /** Every block also carries this many generated transactions of other people's (see the module comment). */
  mainnetBlocks?: MainnetBlockShape;
  /** A provider's cap on calls per batch: a longer batch is refused with one error object. */
  maxBatch?: number;
  /** A provider's cap on an answer's size in bytes: a longer answer is refused with HTTP 413. */
  maxResponseBytes?: number;
  /** A slow provider: answers are sent at this rate. */
  bytesPerSecond?: number;
}

/** Agave's request body limit (rpc/src/rpc.rs `MAX_REQUEST_BODY_SIZE`, see the module comment). */
export const MAX_REQUEST_BODY_SIZE = 50 * 1024;

/** A successful credit of an address in a landed transaction: `post - pre` of its balance. */
export interface Payment {
  signature: string;
  slot: number;
  lamports: bigint;
}

export interface SolanaRpcServer {
  url: string;
  /** The tip slot (may be a skipped slot right after `skip`). */
  readonly slot: number;
  readonly finalizedSlot: number;
  readonly finalizedHeight: number;
  /** Calls received, by method. */
  readonly calls: Map<string, number>;
  /** HTTP requests answered, and the bytes of their bodies. */
  readonly served: { requests: number; bytes: number; refused: number };
  fund(address: string, lamports: bigint): void;
  balance(address: string): bigint;
  inject(tx: InjectedTx): string;
  produce(blocks?: number): void;
  /** A block every `ms` until the returned stop is called. */
  produceEvery(ms: number): () => void;
  skip(slots?: number): void;
  /** The node drops every block below `slot` (ledger cleanup): `getFirstAvailableBlock` answers the first kept one. */
  purgeBelow(slot: number): void;
  finalize(): void;
  drop(signature: string): void;
  /**
   * The next transaction sent (first time) that `match` accepts is answered with its signature and never included,
   * nor any later copy of it. Resolves with that signature.
   */
  dropNextSent(match?: (tx: { signature: string; accounts: string[] }) => boolean): Promise<string>;
  /** Where a signature landed, if it did. */
  landedAt(signature: string): number | null;
  /** Every successful credit of `address` in a landed transaction, in ledger order. */
  paymentsTo(address: string): Payment[];
  /** The memo texts of a landed or pending transaction of ours. */
  memosOf(signature: string): string[] | null;
  /** sendTransaction calls that carried `signature`. */
  sends(signature: string): number;
  /**
   * Every later answer to `method` is what `edit` makes of the served result (a copy; `params` as called), to serve a
   * malformed answer; `null` serves the true answers again.
   */
  tamper(method: string, edit: ((result: unknown, params: unknown[]) => unknown) | null): void;
  close(): Promise<void>;
}

class RpcFailure extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/** Agave's `check_is_at_least_confirmed` (rpc/src/rpc.rs): history methods refuse `processed`. */
function atLeastConfirmed(cfg: unknown) {
  if ((cfg as { commitment?: string } | undefined)?.commitment === "processed") {
    throw new RpcFailure(-32602, "Method does not support commitment below `confirmed`");
  }
}

/** Agave's `verify_pubkey` / `verify_signature`: base58 of 32 (a key) or 64 (a signature) bytes, else -32602. */
function verifyBase58(text: unknown, bytes: number): string {
  let decoded: Uint8Array | null = null;
  try {
    decoded = typeof text === "string" ? base58.decode(text) : null;
  } catch {
    decoded = null;
  }
  if (decoded === null) throw new RpcFailure(-32602, "Invalid param: Invalid");
  if (decoded.length !== bytes) throw new RpcFailure(-32602, "Invalid param: WrongSize");
  return text as string;
}

/** Agave's `MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT` (rpc-client-api/src/request.rs). */
export const SIGNATURES_LIMIT_MAX = 1000;

const FILLER_PREFIX = "@@mainnet-transactions:";

/** Stands for a mainnet block's generated transactions in an answer until it is written out. */
function fillerMarker(slot: number): string {
  return `${FILLER_PREFIX}${slot}`;
}

function hashOf(text: string): string {
  return base58.encode(sha256(new TextEncoder().encode(text)));
}

export function startSolanaRpcServer(opts: SolanaRpcServerOptions = {}): SolanaRpcServer {
  const finalityLag = opts.finalityLag ?? 2;
  const validity = opts.blockhashValidity ?? 150;
  const blocks = new Map<number, Block>();
  const order: number[] = []; // slots with a block, ascending
  let tipSlot = -1;
  let finalizedSlot = 0;
  let purgedBelow = 0;
  /** The lowest slot with a block the node still keeps. */
  const firstAvailable = () => order.find((s) => s >= purgedBelow) ?? purgedBelow;
  const current = new Map<string, bigint>(); // balances after everything executed so far (the tip's state)
  let pending: Pending[] = [];
  const dropped = new Set<string>();
  const seen = new Set<string>();
  const landed = new Map<string, { slot: number; tx: StoredTx }>();
  /** Per account key (static or loaded), the landed transactions naming it, oldest first: Agave's address index. */
  const byAddress = new Map<string, { signature: string; slot: number; position: number }[]>();
  const calls = new Map<string, number>();
  const sendCounts = new Map<string, number>();
  const memos = new Map<string, string[]>();
  let dropRules: { match: (tx: { signature: string; accounts: string[] }) => boolean; resolve: (s: string) => void }[] =
    [];
  let injected = 0;
  const genesisHash = opts.genesisHash ?? hashOf("issuance test ledger genesis");

  const blockAt = (slot: number) => blocks.get(slot);
  const tipBlock = () => blocks.get(order.at(-1)!)!;
  const finalizedBlock = () => blocks.get(finalizedSlot)!;

  function refreshFinality() {
    const i = Math.max(0, order.length - 1 - finalityLag);
    finalizedSlot = Math.max(finalizedSlot, order[i]);
  }

  /** The block a commitment reads. */
  function commitmentBlock(cfg: unknown): Block {
    const c = (cfg as { commitment?: string } | undefined)?.commitment ?? "finalized";
    return c === "finalized" ? finalizedBlock() : tipBlock();
  }

  function validBlockhash(hash: string, atHeight: number): number | null {
    for (let i = order.length - 1; i >= 0; i--) {
      const b = blocks.get(order[i])!;
      if (b.blockhash === hash) return atHeight <= b.height + validity ? b.height + validity : null;
      if (b.height + validity < atHeight) return null;
    }
    return null;
  }

  function execute(p: Pending, balances: Map<string, bigint>): StoredTx {
    const tx = p.tx;
    const get = (i: number) => balances.get(tx.keys[i].pubkey) ?? 0n;
    tx.pre = tx.keys.map((_, i) => get(i));
    const after = [...tx.pre];
    after[0] -= tx.fee;
    let err: unknown = tx.err ?? null;
    if (err === null && p.deltas) p.deltas.forEach((d, i) => after[i] += d);
    if (err === null && p.transfers) {
      for (const [n, t] of p.transfers.entries()) {
        if (after[t.from] < t.lamports) {
          err = { InstructionError: [n, { Custom: 1 }] };
          break;
        }
        after[t.from] -= t.lamports;
        after[t.to] += t.lamports;
      }
      if (err === null) {
        const poor = after.findIndex((v, i) => tx.keys[i].writable && v > 0n && v < RENT_EXEMPT_MINIMUM_0);
        if (poor >= 0) err = { InsufficientFundsForRent: { account_index: poor } };
      }
    }
    if (err !== null) {
      after.splice(0, after.length, ...tx.pre);
      after[0] -= tx.fee;
    }
    tx.err = err;
    tx.post = after;
    tx.keys.forEach((k, i) => balances.set(k.pubkey, after[i]));
    return tx;
  }

  function seal(slot: number) {
    const parent = order.length ? tipBlock() : null;
    const height = parent ? parent.height + 1 : 0;
    const txs: StoredTx[] = [];
    const keep: Pending[] = [];
    for (const p of pending) {
      if (dropped.has(p.tx.signature)) continue;
      if (p.lastValidBlockHeight !== undefined && height > p.lastValidBlockHeight) continue; // expired: dropped
      // Fee validation, before anything runs: a payer that cannot pay the fee, or that the fee would leave between 0
      // and the rent-exempt minimum, fails it and the transaction is not included (no fee charged).
      const payerAfterFee = (current.get(p.tx.keys[0].pubkey) ?? 0n) - p.tx.fee;
      if (payerAfterFee < 0n || (payerAfterFee > 0n && payerAfterFee < RENT_EXEMPT_MINIMUM_0)) continue;
      txs.push(execute(p, current));
    }
    pending = keep;
    const block: Block = {
      slot,
      parentSlot: parent?.slot ?? 0,
      height,
      blockhash: hashOf(`block ${slot}`),
      previousBlockhash: parent?.blockhash ?? hashOf("genesis parent"),
      txs,
      balances: new Map(current),
    };
    blocks.set(slot, block);
    order.push(slot);
    tipSlot = slot;
    txs.forEach((tx, position) => {
      landed.set(tx.signature, { slot, tx });
      for (const key of new Set(tx.keys.map((k) => k.pubkey))) {
        let list = byAddress.get(key);
        if (!list) byAddress.set(key, list = []);
        list.push({ signature: tx.signature, slot, position });
      }
    });
    refreshFinality();
  }

  function produce(n = 1) {
    for (let i = 0; i < n; i++) seal(tipSlot + 1);
  }

  function fund(address: string, lamports: bigint) {
    current.set(address, (current.get(address) ?? 0n) + lamports);
    // Funding is genesis-like: visible at every commitment at once.
    for (const b of blocks.values()) if (b.slot >= finalizedSlot) b.balances.set(address, current.get(address)!);
  }

  function inject(t: InjectedTx): string {
    // 64 bytes, as every signature is (getSignaturesForAddress refuses a `before` or `until` of another length).
    const signature = base58.encode(
      new Uint8Array([
        ...sha256(new TextEncoder().encode(`injected ${++injected}`)),
        ...new Uint8Array(32).fill(injected % 256),
      ]),
    );
    const fee = FEE_PER_SIGNATURE;
    const total = t.credits.reduce((s, c) => s + c.lamports, 0n) + fee;
    if ((current.get(t.payer) ?? 0n) < total + RENT_EXEMPT_MINIMUM_0) fund(t.payer, total + 10n ** 12n);
    const statics = t.credits.filter((c) => (c.source ?? "transaction") === "transaction");
    const loaded = t.credits.filter((c) => c.source === "lookupTable");
    const keys: AccountKey[] = [
      { pubkey: t.payer, signer: true, writable: true, source: "transaction" },
      ...statics.map((c) => ({ pubkey: c.to, signer: false, writable: true, source: "transaction" as const })),
      { pubkey: t.viaProgram ?? SYSTEM_PROGRAM, signer: false, writable: false, source: "transaction" },
      ...loaded.map((c) => ({ pubkey: c.to, signer: false, writable: true, source: "lookupTable" as const })),
    ];
    const deltas = keys.map((k, i) => {
      if (i === 0) return -(total - fee);
      return [...statics, ...loaded].filter((c) => c.to === k.pubkey && k.writable)
        .reduce((s, c) => s + c.lamports, 0n);
    });
    if (loaded.length > 0 && t.version === "legacy") throw new Error("lookup tables need a v0 transaction");
    pending.push({
      tx: {
        signature,
        keys,
        pre: [],
        post: [],
        err: t.err ?? null,
        fee,
        version: t.version ?? (loaded.length ? 0 : "legacy"),
        recentBlockhash: tipBlock().blockhash,
      },
      deltas,
    });
    seen.add(signature);
    return signature;
  }

  function sendTransaction(params: unknown[]): string {
    const [wire, cfg] = params as [string, { encoding?: string; skipPreflight?: boolean } | undefined];
    if (cfg?.encoding !== "base64") throw new RpcFailure(-32602, "only base64 encoding is served here");
    let decoded;
    let message;
    try {
      decoded = getTransactionDecoder().decode(base64.decode(wire));
      message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
    } catch (err) {
      throw new RpcFailure(-32602, `failed to deserialize transaction: ${(err as Error).message}`);
    }
    const signers = Object.entries(decoded.signatures);
    const msgBytes = new Uint8Array(decoded.messageBytes);
    for (const [addr, sig] of signers) {
      if (!sig || !ed25519.verify(new Uint8Array(sig), msgBytes, base58.decode(addr))) {
        throw new RpcFailure(-32003, "Transaction signature verification failure");
      }
    }
    const signature = base58.encode(new Uint8Array(signers[0][1]!));
    sendCounts.set(signature, (sendCounts.get(signature) ?? 0) + 1);
    if (seen.has(signature)) return signature; // already received: the same transaction
    const blockhash = message.lifetimeToken;
    const lastValid = validBlockhash(blockhash, tipBlock().height + 1);
    if (lastValid === null) {
      if (!cfg.skipPreflight) throw new RpcFailure(-32002, "Transaction simulation failed: Blockhash not found");
      seen.add(signature);
      return signature; // a leader would drop it: never included
    }
    if (message.version !== "legacy") throw new RpcFailure(-32602, "only legacy transactions are executed here");
    const staticAccounts = message.staticAccounts as string[];
    const h = message.header;
    const keys: AccountKey[] = staticAccounts.map((pubkey, i) => ({
      pubkey,
      signer: i < h.numSignerAccounts,
      writable: i < h.numSignerAccounts
        ? i < h.numSignerAccounts - h.numReadonlySignerAccounts
        : i < staticAccounts.length - h.numReadonlyNonSignerAccounts,
      source: "transaction",
    }));
    const transfers: { from: number; to: number; lamports: bigint }[] = [];
    const texts: string[] = [];
    for (const ix of message.instructions) {
      const program = staticAccounts[ix.programAddressIndex];
      const data = new Uint8Array(ix.data ?? []);
      if (MEMO_PROGRAMS.has(program)) {
        texts.push(new TextDecoder("utf-8", { fatal: true }).decode(data));
        continue;
      }
      if (program !== SYSTEM_PROGRAM) throw new RpcFailure(-32602, `program ${program} is not run by this server`);
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      if (data.length !== 12 || view.getUint32(0, true) !== 2) {
        throw new RpcFailure(-32602, "only System Program transfers are run by this server");
      }
      const [from, to] = ix.accountIndices ?? [];
      transfers.push({ from, to, lamports: view.getBigUint64(4, true) });
    }
    seen.add(signature);
    memos.set(signature, texts);
    const rule = dropRules.find((r) => r.match({ signature, accounts: staticAccounts }));
    if (rule) {
      dropRules = dropRules.filter((r) => r !== rule);
      dropped.add(signature);
      rule.resolve(signature);
      return signature; // accepted, never included
    }
    pending.push({
      tx: {
        signature,
        keys,
        pre: [],
        post: [],
        err: null,
        fee: FEE_PER_SIGNATURE * BigInt(signers.length),
        version: "legacy",
        recentBlockhash: blockhash,
      },
      transfers,
      lastValidBlockHeight: lastValid,
    });
    return signature;
  }

  function txJson(tx: StoredTx) {
    return {
      err: tx.err,
      fee: Number(tx.fee),
      preBalances: tx.pre.map(Number),
      postBalances: tx.post.map(Number),
      status: tx.err === null ? { Ok: null } : { Err: tx.err },
    };
  }

  function getBlock(params: unknown[]) {
    const [slot, cfg] = params as [number, { commitment?: string; transactionDetails?: string; encoding?: string }];
    const top = commitmentBlock(cfg);
    if (slot > top.slot) throw new RpcFailure(-32004, `Block not available for slot ${slot}`);
    if (slot < firstAvailable()) {
      throw new RpcFailure(
        -32001,
        `Block ${slot} cleaned up, does not exist on node. First available block: ${firstAvailable()}`,
      );
    }
    const block = blockAt(slot);
    if (!block) {
      throw new RpcFailure(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
    }
    const details = cfg?.transactionDetails ?? "full";
    if (details !== "accounts" && details !== "none") throw new RpcFailure(-32602, `${details} is not served here`);
    const txs: unknown[] = block.txs.map((tx) => ({
      transaction: { accountKeys: tx.keys, signatures: [tx.signature] },
      meta: txJson(tx),
      version: tx.version,
    }));
    // Generated when the answer is written (`replyText`), never held: a marker stands for them until then.
    if (opts.mainnetBlocks) txs.push(fillerMarker(slot));
    return {
      blockhash: block.blockhash,
      previousBlockhash: block.previousBlockhash,
      parentSlot: block.parentSlot,
      blockHeight: block.height,
      blockTime: 1_700_000_000 + slot,
      ...(details === "accounts" ? { transactions: txs } : {}),
    };
  }

  /**
   * Agave's `getTransaction` (rpc/src/rpc.rs `get_transaction`, agave master at workspace version 4.4.0-alpha): refuses
   * `processed`; null when no transaction of that commitment has the signature; a v0 transaction asked without
   * `maxSupportedTransactionVersion` is refused with -32015 (`RpcCustomError::UnsupportedTransactionVersion`,
   * rpc-client-api/src/custom_error.rs); `version` is answered only when that parameter is given. Encodings: `json`
   * (the default; solana-transaction-status `UiRawMessage`: static keys as strings, the header, and the keys loaded
   * from lookup tables in `meta.loadedAddresses`) and `jsonParsed` (every key an object with `source`, no
   * `loadedAddresses`); binary encodings are not served here.
   */
  function getTransaction(params: unknown[]) {
    const [sig, cfg] = params as [
      unknown,
      { commitment?: string; encoding?: string; maxSupportedTransactionVersion?: number },
    ];
    verifyBase58(sig, 64);
    atLeastConfirmed(cfg);
    const encoding = cfg?.encoding ?? "json";
    if (encoding !== "json" && encoding !== "jsonParsed") {
      throw new RpcFailure(-32602, `${encoding} is not served here`);
    }
    const at = landed.get(String(sig));
    if (!at || at.slot > commitmentBlock(cfg).slot || at.slot < firstAvailable()) return null;
    const tx = at.tx;
    const max = cfg?.maxSupportedTransactionVersion;
    if (tx.version === 0 && (max === undefined || max < 0)) {
      throw new RpcFailure(
        -32015,
        "Transaction version (0) is not supported by the requesting client. Please try the request again with the " +
          'following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    const statics = tx.keys.filter((k) => k.source === "transaction");
    const loaded = tx.keys.filter((k) => k.source === "lookupTable");
    const message = encoding === "jsonParsed"
      ? { accountKeys: tx.keys, instructions: [], recentBlockhash: tx.recentBlockhash }
      : {
        header: {
          numRequiredSignatures: statics.filter((k) => k.signer).length,
          numReadonlySignedAccounts: statics.filter((k) => k.signer && !k.writable).length,
          numReadonlyUnsignedAccounts: statics.filter((k) => !k.signer && !k.writable).length,
        },
        accountKeys: statics.map((k) => k.pubkey),
        recentBlockhash: tx.recentBlockhash,
        instructions: [],
        ...(tx.version === 0
          ? {
            addressTableLookups: loaded.length === 0 ? [] : [{
              accountKey: hashOf(`lookup table of ${tx.signature}`),
              writableIndexes: loaded.filter((k) => k.writable).map((_, i) => i),
              readonlyIndexes: loaded.filter((k) => !k.writable).map((_, i) => i),
            }],
          }
          : {}),
      };
    const meta = {
      ...txJson(tx),
      innerInstructions: [],
      logMessages: [],
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      ...(encoding === "json"
        ? {
          loadedAddresses: {
            writable: loaded.filter((k) => k.writable).map((k) => k.pubkey),
            readonly: loaded.filter((k) => !k.writable).map((k) => k.pubkey),
          },
        }
        : {}),
      computeUnitsConsumed: 150,
    };
    return {
      slot: at.slot,
      blockTime: 1_700_000_000 + at.slot,
      transaction: { signatures: [tx.signature], message },
      meta,
      ...(max === undefined ? {} : { version: tx.version }),
    };
  }

  /**
   * Agave's `getSignaturesForAddress` (rpc/src/rpc.rs `verify_and_parse_signatures_for_address_params` and
   * `get_signatures_for_address`; ledger/src/blockstore.rs `get_confirmed_signatures_for_address2`): the address and
   * `before`/`until` must parse (-32602 "Invalid param: ..."); `limit` from 1 to 1,000 (default 1,000; else -32602
   * "Invalid limit; max 1000"); `processed` refused; at `finalized`, a root below `minContextSlot` answers -32016
   * "Minimum context slot has not been reached". Newest first (a slot's transactions last-in-block first), up to the
   * commitment's slot, never below the first available block; `before` starts after that signature (an unknown
   * `before` answers `[]`), `until` stops before it (an unknown `until` searches all). Each entry: {signature, slot,
   * err, memo ("[len] text" per memo, joined by "; ", else null), blockTime, confirmationStatus}. Failed transactions
   * are listed, with their `err`.
   */
  function getSignaturesForAddress(params: unknown[]) {
    const [address, cfg] = params as [
      unknown,
      { limit?: number; before?: string; until?: string; commitment?: string; minContextSlot?: number } | undefined,
    ];
    verifyBase58(address, 32);
    if (cfg?.before !== undefined) verifyBase58(cfg.before, 64);
    if (cfg?.until !== undefined) verifyBase58(cfg.until, 64);
    const limit = cfg?.limit ?? SIGNATURES_LIMIT_MAX;
    if (!Number.isInteger(limit) || limit <= 0 || limit > SIGNATURES_LIMIT_MAX) {
      throw new RpcFailure(-32602, `Invalid limit; max ${SIGNATURES_LIMIT_MAX}`);
    }
    atLeastConfirmed(cfg);
    const highest = commitmentBlock(cfg).slot;
    if (cfg?.minContextSlot !== undefined && highest < cfg.minContextSlot) {
      throw new RpcFailure(-32016, "Minimum context slot has not been reached", { contextSlot: highest });
    }
    const all = byAddress.get(String(address)) ?? [];
    const floor = firstAvailable();
    const newestFirst = (i: number) => all[all.length - 1 - i];
    let i = 0;
    if (cfg?.before !== undefined) {
      const at = all.findIndex((e) => e.signature === cfg.before);
      if (at < 0) {
        if (!landed.has(cfg.before)) return [];
        // A known signature not naming this address: start below its place in the ledger.
        const b = landed.get(cfg.before)!;
        const pos = blocks.get(b.slot)!.txs.indexOf(b.tx);
        i = all.filter((e) => e.slot > b.slot || (e.slot === b.slot && e.position >= pos)).length;
      } else i = all.length - at;
    }
    const out = [];
    for (; i < all.length && out.length < limit; i++) {
      const e = newestFirst(i);
      if (e.signature === cfg?.until) break;
      if (e.slot > highest) continue;
      if (e.slot < floor) break;
      const tx = landed.get(e.signature)!.tx;
      const texts = memos.get(e.signature) ?? [];
      out.push({
        signature: e.signature,
        slot: e.slot,
        err: tx.err,
        memo: texts.length === 0 ? null : texts.map((t) => `[${new TextEncoder().encode(t).length}] ${t}`).join("; "),
        blockTime: 1_700_000_000 + e.slot,
        confirmationStatus: e.slot <= finalizedSlot ? "finalized" : "confirmed",
      });
    }
    return out;
  }

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getGenesisHash: () => genesisHash,
    getSlot: ([cfg]) => commitmentBlock(cfg).slot,
    getBlockHeight: ([cfg]) => commitmentBlock(cfg).height,
    getBlocks: ([start, end, cfg]) => {
      const top = commitmentBlock(cfg).slot;
      const last = Math.min(Number(end ?? top), top);
      const first = Math.max(Number(start), firstAvailable());
      return order.filter((s) => s >= first && s <= last);
    },
    getFirstAvailableBlock: () => firstAvailable(),
    getBlock,
    getTransaction,
    getSignaturesForAddress,
    getSignatureStatuses: ([sigs]) => ({
      context: { slot: tipSlot },
      value: (sigs as string[]).map((sig) => {
        const at = landed.get(sig);
        if (!at) return null;
        const final = at.slot <= finalizedSlot;
        return {
          slot: at.slot,
          confirmations: final ? null : order.filter((s) => s > at.slot).length,
          err: at.tx.err,
          status: at.tx.err === null ? { Ok: null } : { Err: at.tx.err },
          confirmationStatus: final ? "finalized" : "confirmed",
        };
      }),
    }),
    getBalance: ([address, cfg]) => {
      const b = commitmentBlock(cfg);
      return { context: { slot: b.slot }, value: Number(b.balances.get(String(address)) ?? 0n) };
    },
    getMinimumBalanceForRentExemption: ([size]) => {
      if (Number(size) !== 0) throw new RpcFailure(-32602, "only data size 0 is served here");
      return Number(RENT_EXEMPT_MINIMUM_0);
    },
    getLatestBlockhash: ([cfg]) => {
      const b = commitmentBlock(cfg);
      return {
        context: { slot: tipSlot },
        value: { blockhash: b.blockhash, lastValidBlockHeight: b.height + validity },
      };
    },
    sendTransaction,
  };

  function answer(req: { id?: unknown; method?: string; params?: unknown[] }) {
    const id = req.id ?? null;
    const method = String(req.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const fn = methods[method];
    if (!fn) return { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
    try {
      const result = fn(req.params ?? []);
      const edit = tampered.get(method);
      return { jsonrpc: "2.0", id, result: edit ? edit(structuredClone(result), req.params ?? []) : result };
    } catch (err) {
      if (err instanceof RpcFailure) {
        const error = { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) };
        return { jsonrpc: "2.0", id, error };
      }
      return { jsonrpc: "2.0", id, error: { code: -32603, message: String(err) } };
    }
  }

  const tampered = new Map<string, (result: unknown, params: unknown[]) => unknown>();

  /** A reply as JSON text, with a mainnet block's generated transactions written in place of their marker. */
  function replyText(reply: unknown): string {
    const text = JSON.stringify(reply);
    const at = text.indexOf(FILLER_PREFIX);
    if (at < 0 || !opts.mainnetBlocks) return text;
    const end = text.indexOf('"', at + FILLER_PREFIX.length);
    const slot = Number(text.slice(at + FILLER_PREFIX.length, end));
    // The marker is a JSON string: its quotes go with it.
    return text.slice(0, at - 1) + mainnetTransactionsJson(slot, opts.mainnetBlocks) + text.slice(end + 1);
  }

  const served = { requests: 0, bytes: 0, refused: 0 };
  const encoder = new TextEncoder();

  /** Sends `parts` (made one at a time, on demand) as one body, at `bytesPerSecond` when set. */
  function stream(next: () => string | null): Response {
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const part = next();
        if (part === null) return controller.close();
        const bytes = encoder.encode(part);
        served.bytes += bytes.length;
        if (opts.bytesPerSecond) await new Promise((r) => setTimeout(r, (bytes.length / opts.bytesPerSecond!) * 1000));
        controller.enqueue(bytes);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    served.requests++;
    const raw = await req.text();
    if (raw.length > MAX_REQUEST_BODY_SIZE) {
      served.refused++;
      return new Response("Payload Too Large", { status: 413 });
    }
    const body = JSON.parse(raw);
    if (!Array.isArray(body)) {
      let done = false;
      return stream(() => done ? null : (done = true, replyText(answer(body))));
    }
    if (opts.maxBatch !== undefined && body.length > opts.maxBatch) {
      served.refused++;
      const message = `batch of ${body.length} requests is above this provider's limit of ${opts.maxBatch}`;
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32600, message } });
    }
    if (opts.maxResponseBytes !== undefined) {
      // The size is known only once written: held up to the limit, then sent or refused.
      const parts: string[] = [];
      let size = 1;
      for (const call of body) {
        const text = replyText(answer(call));
        size += text.length + 1;
        if (size > opts.maxResponseBytes) {
          served.refused++;
          return new Response(`response too large: above ${opts.maxResponseBytes} bytes`, { status: 413 });
        }
        parts.push(text);
      }
      let sent = false;
      return stream(() => sent ? null : (sent = true, `[${parts.join(",")}]`));
    }
    let i = 0;
    return stream(() => {
      if (i > body.length) return null;
      if (i === body.length) return (i++, "]");
      return (i === 0 ? "[" : ",") + replyText(answer(body[i++]));
    });
  });

  seal(0);
  produce(Math.max(0, (opts.initialBlocks ?? 5) - 1));

  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    get slot() {
      return tipSlot;
    },
    get finalizedSlot() {
      return finalizedSlot;
    },
    get finalizedHeight() {
      return finalizedBlock().height;
    },
    calls,
    served,
    fund,
    balance: (address) => current.get(address) ?? 0n,
    inject,
    produce,
    produceEvery(ms) {
      const timer = setInterval(() => produce(1), ms);
      return () => clearInterval(timer);
    },
    skip(n = 1) {
      tipSlot += n;
    },
    purgeBelow(slot) {
      purgedBelow = Math.max(purgedBelow, slot);
    },
    finalize() {
      finalizedSlot = order.at(-1)!;
    },
    drop(signature) {
      dropped.add(signature);
      pending = pending.filter((p) => p.tx.signature !== signature);
    },
    dropNextSent(match = () => true) {
      return new Promise<string>((resolve) => dropRules.push({ match, resolve }));
    },
    landedAt: (signature) => landed.get(signature)?.slot ?? null,
    paymentsTo(address) {
      const out: Payment[] = [];
      for (const slot of order) {
        for (const tx of blocks.get(slot)!.txs) {
          if (tx.err !== null) continue;
          tx.keys.forEach((k, i) => {
            if (k.pubkey === address && tx.post[i] > tx.pre[i]) {
              out.push({ signature: tx.signature, slot, lamports: tx.post[i] - tx.pre[i] });
            }
          });
        }
      }
      return out;
    },
    memosOf: (signature) => memos.get(signature) ?? null,
    sends: (signature) => sendCounts.get(signature) ?? 0,
    tamper(method, edit) {
      if (edit) tampered.set(method, edit);
      else tampered.delete(method);
    },
    close: () => server.shutdown(),
  };
}
