/**
 * The simulated ledger of one chain, kept in the service's own Deno KV under `["sim", chain, ...]`
 * (docs/architecture.md "Sim mode"). It behaves like a chain where it matters to custody code: transactions take effect
 * when submitted, sit pending until a block seals them, gain confirmations with every block, can fail, can be
 * reorganised out, and the simulated uAsset contract refuses a deposit id it has minted. A payout may carry an expiry
 * (a height, a ledger index, or an epoch of SIM_EPOCH_BLOCKS blocks, as sol, xrp, zec and sui payouts do): it is never
 * included above it, a pending one is dropped (its effects undone) by the first block past it, and the reader then
 * proves it dead. Solana's sim can skip slots: a height with no block. Every state change is one `kv.atomic()` checked
 * by versionstamp and retried on conflict, so concurrent requests, the block producer and other processes sharing the
 * KV file never lose or double an effect.
 */
import { z } from "zod";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58, hex } from "@scure/base";
import {
  type ChainSymbol,
  isEvmChain,
  isUtxoChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  type UAsset,
} from "../catalog.ts";
import { utxoFee } from "../shared/utxo_fee.ts";
import { outputOf, type SimOutput, type SpendRefusal, spendRefusal } from "./utxo.ts";
import { encodeSimTx, parseSimTx, type SimTx } from "./tx.ts";
import {
  type BlockRef,
  type Expiry,
  type ObservedTransfer,
  type Outpoint,
  type OwnTx,
  type ScannedBlock,
  SKIPPED,
  type Skipped,
  TransientChainError,
  type TxStatus,
} from "../adapter.ts";

/** The `from` of minted and faucet uAssets, as in an ERC-20 `Transfer` log of a mint. */
export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
/**
 * What an operator hot wallet is credited at its first payout unless the process sets another genesis
 * (`SIM_HOT_WALLET_GENESIS`): large, so `deno task dev` and the tests whose burns the faucet funds pay every burn. With
 * a small genesis (0) the hot wallet is finite and only sweeps of deposits fund it, as on a live chain.
 */
export const HOT_WALLET_GENESIS = 10n ** 30n;
/**
 * Most transactions one block takes (the rest wait for the next, like a full block). It bounds the sealing commit
 * (two mutations per transaction, KV allows 1000) and the block value, which embeds its transfers (KV allows 64 KiB).
 */
export const MAX_TXS_PER_BLOCK = 64;
const MAX_CHECKS = 100; // Deno KV's limit per atomic operation
const MAX_MUTATIONS = 1000;
const GET_MANY_MAX = 10; // Deno KV's limit per getMany

// ---- transactions ----
/** Blocks per epoch of the simulated Sui: what a Sui payout's epoch expiration counts in. */
export const SIM_EPOCH_BLOCKS = 20;

/**
 * How long a sim payout stays includable, per chain: the catalog's expiry rule (chains/catalog.ts), the one its live
 * chain follows (a Solana blockhash lives about 150 blocks, an XRPL payout sets LastLedgerSequence about 20 ledgers
 * ahead, a Zcash transaction an expiry height 40 blocks ahead, Sui an expiration at the next epoch). Dogecoin
 * transactions never expire: they are dead only by a conflicting spend.
 */
export const SIM_PAYOUT_EXPIRY: Readonly<Record<NativeChain, { kind: Expiry["kind"]; window: number } | null>> = Object
  .fromEntries(NATIVE_CHAINS.map((c) => {
    const rule = NATIVE[c].expiry;
    if (rule.kind === "none") return [c, null];
    return [c, { kind: rule.unit === "block" ? "height" : rule.unit, window: rule.window }];
  })) as Record<NativeChain, { kind: Expiry["kind"]; window: number } | null>;

/** The expiry a payout prepared with the chain at `head` carries. */
export function simPayoutExpiry(chain: NativeChain, head: number): Expiry | undefined {
  const rule = SIM_PAYOUT_EXPIRY[chain];
  if (!rule) return undefined;
  const now = rule.kind === "epoch" ? epochOf(head) : head;
  return { kind: rule.kind, value: now + rule.window };
}

function epochOf(height: number): number {
  return Math.floor(height / SIM_EPOCH_BLOCKS);
}

/** Where the chain at `height` stands in the expiry's own unit (an epoch for Sui). */
function reachedIn(e: Expiry, height: number): number {
  return e.kind === "epoch" ? epochOf(height) : height;
}

/** The expiry a transaction carries: payouts and sweeps, our outgoing native transactions, may have one. */
function expiryOfTx(tx: SimTx): Expiry | null {
  return tx.kind === "payout" || tx.kind === "sweep" ? tx.expiry ?? null : null;
}

/**
 * What an account must keep on a native account chain (catalog `reserve`): a payout or a sweep never takes it. (A
 * payout too small to create its destination is refused before signing, by the payer's `checkPayout`; the ledger
 * itself does not fail one.)
 */
function reserveOf(chain: ChainSymbol): bigint {
  return isEvmChain(chain) ? 0n : NATIVE[chain as NativeChain].reserve;
}

/** Whether a block at `height` is past the expiry: the transaction can never be in it or any later one. */
function isPast(e: Expiry, height: number): boolean {
  return reachedIn(e, height) > e.value;
}

/** A fresh nonce from `random`, 16 bytes of hex. */
export function simNonce(random: () => number): string {
  return randomHex(random, 16);
}

// ---- hashes ----

const encoder = new TextEncoder();

function digest(...parts: (string | number)[]): Uint8Array {
  // NUL never occurs in a chain symbol or a decimal number, so the first parts cannot run into the last.
  return sha256(encoder.encode(parts.join("\0")));
}

/** The hash of a raw transaction: a pure function of (chain, raw), in the chain's own format. */
export function simTxHash(chain: ChainSymbol, raw: string): string {
  const d = digest("sim-tx", chain, raw);
  if (isEvmChain(chain)) return "0x" + hex.encode(d);
  if (chain === "sol") {
    // A Solana transaction id is a base58 64-byte signature.
    const sig = new Uint8Array(64);
    sig.set(d);
    sig.set(sha256(d), 32);
    return base58.encode(sig);
  }
  return hex.encode(d);
}

function formatBlockHash(chain: ChainSymbol, d: Uint8Array): string {
  if (isEvmChain(chain)) return "0x" + hex.encode(d);
  if (chain === "sol") return base58.encode(d);
  return hex.encode(d);
}

function genesisHash(chain: ChainSymbol): string {
  return formatBlockHash(chain, digest("sim-genesis", chain));
}

function randomHex(random: () => number, bytes: number): string {
  let s = "";
  for (let i = 0; i < bytes; i++) s += Math.min(255, Math.floor(random() * 256)).toString(16).padStart(2, "0");
  return s;
}

// ---- stored records ----

interface HeadRecord {
  number: number;
  hash: string;
  /**
   * A lazy producer keeps making blocks up to this height (`SIM_ACTIVE_TAIL_BLOCKS` past the last block that carried
   * a transaction, or past a reorg), so what was just included keeps gaining confirmations for whoever watches it.
   */
  activeUntil?: number;
}

/** Blocks a lazy producer still makes after the last activity on a simulated chain. */
export const SIM_ACTIVE_TAIL_BLOCKS = 10;

/**
 * A sealed block embeds its transfers, so `blocks()` reads one key per block (ten per getMany) instead of one per
 * transaction. That is safe because a sealed block never changes: a reorg writes a whole new block at that height.
 */
interface BlockRecord {
  number: number;
  hash: string;
  parentHash: string;
  txHashes: string[];
  transfers: ObservedTransfer[];
  /** A skipped slot (sol): no block at this height; `hash` is the last real block's, the parent of the next one. */
  skipped?: boolean;
}

interface TxRecord {
  hash: string;
  raw: string;
  tx: SimTx;
  /** Decided at submission, when the effects are applied; a failed transaction has none. */
  success: boolean;
  reason: string | null;
  /** `dropped`: reorganised out; reported as unknown, and re-executed if its raw is submitted again. */
  status: "pending" | "included" | "dropped";
  submittedAt: number;
  blockNumber: number | null;
  /** Held out of every block by the `stallPayouts` fault: it stays pending until its expiry drops it. */
  stalled?: boolean;
}

export interface SimFaults {
  /** Probability (0..1) that an adapter call throws `TransientChainError` before reaching the ledger. */
  rpcErrorRate: number;
  /** How many of the next submitted mints are included as failed ("execution reverted"). */
  revertNextMint: number;
  /** How many of the next submitted payouts are included as failed ("transaction failed"). */
  failNextPayout: number;
  /** Epoch ms before which `sealBlock` produces nothing. */
  stalledUntil: number;
  /**
   * How many of the next submitted payouts no block includes: they stay pending until their expiry passes, then are
   * dropped (a payout stuck behind a congested network). A payout without expiry would stay pending for ever.
   */
  stallPayouts: number;
  /**
   * How many of the next submitted uAsset burns are included as failed ("execution reverted"); optional, so a ledger
   * that never set it reports the same faults as before burns existed.
   */
  revertNextBurn?: number;
}

export const NO_FAULTS: Readonly<SimFaults> = {
  rpcErrorRate: 0,
  revertNextMint: 0,
  failNextPayout: 0,
  stalledUntil: 0,
  stallPayouts: 0,
};

const FaultsPatchSchema = z.object({
  rpcErrorRate: z.number().min(0).max(1),
  revertNextMint: z.number().int().min(0),
  failNextPayout: z.number().int().min(0),
  stalledUntil: z.number().finite().min(0),
  stallPayouts: z.number().int().min(0),
  revertNextBurn: z.number().int().min(0),
}).partial().strict();

export type AssetId = "native" | UAsset;

/** UTXO mode: an input that is not an output of a live transaction, or one a live transaction already spends. */
export type InputRefusal = "missing_input" | "spent_input";

export interface Submitted {
  txHash: string;
  /** The block the transaction is in, or the next block when it is pending (a full block may push it later). */
  blockNumber: number;
}

export type Erc20TransferResult = ({ ok: true } & Submitted) | { ok: false; reason: "insufficient_balance" };

// ---- key layout: the only place these keys are built ----

const headKey = (c: ChainSymbol): Deno.KvKey => ["sim", c, "head"];
const blockKey = (c: ChainSymbol, n: number): Deno.KvKey => ["sim", c, "block", n];
const txKey = (c: ChainSymbol, hash: string): Deno.KvKey => ["sim", c, "tx", hash];
// Submission time first, so blocks take pending transactions first come, first served.
const pendingKey = (c: ChainSymbol, submittedAt: number, hash: string): Deno.KvKey => [
  "sim",
  c,
  "pending",
  submittedAt,
  hash,
];
const pendingPrefix = (c: ChainSymbol): Deno.KvKey => ["sim", c, "pending"];
const balanceKey = (c: ChainSymbol, addr: string, asset: AssetId): Deno.KvKey => ["sim", c, "balance", addr, asset];
const mintedKey = (c: ChainSymbol, id: string): Deno.KvKey => ["sim", c, "minted", id];
/** Marks an address funded with HOT_WALLET_GENESIS at its first payout. */
const hotWalletKey = (c: ChainSymbol, addr: string): Deno.KvKey => ["sim", c, "hot_wallet", addr];
const faultsKey = (c: ChainSymbol): Deno.KvKey => ["sim", c, "faults"];
/** UTXO mode: which transaction spent an output. One pointing at a dropped transaction is free again. */
const spentKey = (c: ChainSymbol, o: Outpoint): Deno.KvKey => ["sim", c, "spent", o.txHash, o.index];

// ---- effects ----

interface Delta {
  address: string;
  asset: AssetId;
  amount: bigint;
}

/** Balance changes of a successful transaction, merged per (address, asset). */
function deltasOf(tx: SimTx): Delta[] {
  const raw: Delta[] = [];
  switch (tx.kind) {
    case "transfer":
    case "genesis":
    case "coinbase":
      raw.push({ address: tx.to, asset: "native", amount: tx.amount });
      break;
    case "payout":
    case "sweep":
      if (tx.kind === "payout" && tx.inputs) {
        // UTXO mode: the spent outputs leave their addresses; the fee leaves the ledger.
        for (const i of tx.inputs) raw.push({ address: i.address, asset: "native", amount: -i.amount });
        if (tx.change) raw.push({ address: tx.change.address, asset: "native", amount: tx.change.amount });
      } else {
        raw.push({ address: tx.from, asset: "native", amount: -tx.amount });
      }
      raw.push({ address: tx.to, asset: "native", amount: tx.amount });
      break;
    case "mint":
    case "faucet":
      raw.push({ address: tx.to, asset: tx.asset, amount: tx.amount });
      break;
    case "erc20":
      raw.push({ address: tx.from, asset: tx.asset, amount: -tx.amount });
      raw.push({ address: tx.to, asset: tx.asset, amount: tx.amount });
      break;
    case "burn":
      // Nobody is credited: the total supply (the sum of balances, `totalSupply`) goes down by the amount.
      raw.push({ address: tx.from, asset: tx.asset, amount: -tx.amount });
      break;
  }
  return mergeDeltas(raw);
}

function mergeDeltas(deltas: Delta[]): Delta[] {
  const merged = new Map<string, Delta>();
  for (const d of deltas) {
    const id = `${d.address}\0${d.asset}`;
    const prev = merged.get(id);
    merged.set(id, prev ? { ...prev, amount: prev.amount + d.amount } : { ...d });
  }
  return [...merged.values()];
}

/** The one transfer a successful transaction shows a watcher, at index 0. */
function transfersOf(t: TxRecord): ObservedTransfer[] {
  if (!t.success) return [];
  const tx = t.tx;
  // A burn is an ERC-20 Transfer to the zero address, as ERC20Burnable logs it.
  if (tx.kind === "burn") {
    return [{ txHash: t.hash, index: 0, from: tx.from, to: ZERO_ADDRESS, amount: tx.amount, asset: tx.asset }];
  }
  const base = { txHash: t.hash, index: 0, to: tx.to, amount: tx.amount };
  switch (tx.kind) {
    case "transfer":
    case "payout":
    case "sweep":
      return [{ ...base, from: tx.from, asset: "native" }];
    case "mint":
    case "faucet":
      return [{ ...base, from: ZERO_ADDRESS, asset: tx.asset }];
    case "erc20":
      return [{ ...base, from: tx.from, asset: tx.asset }];
    case "coinbase":
      return [{ ...base, from: "", asset: "native", coinbase: true }];
    case "genesis":
      return []; // in no block: nothing to scan
  }
}

// ---- the ledger ----

export class SimLedger {
  readonly kv: Deno.Kv;
  readonly chain: ChainSymbol;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly hotWalletGenesis: bigint;

  constructor(
    kv: Deno.Kv,
    chain: ChainSymbol,
    opts: { random?: () => number; now?: () => number; hotWalletGenesis?: bigint } = {},
  ) {
    this.kv = kv;
    this.chain = chain;
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    this.hotWalletGenesis = opts.hotWalletGenesis ?? HOT_WALLET_GENESIS;
    if (this.hotWalletGenesis < 0n) throw new RangeError("the hot wallet genesis must not be negative");
  }

  // ---- reads ----

  /**
   * Whether the chain wants a block: a transaction waits for one (pending, stalled ones included: only blocks past
   * their expiry drop them), or the last activity is fewer than `SIM_ACTIVE_TAIL_BLOCKS` blocks deep. A lazy block
   * producer seals blocks while this holds, or while the pipeline waits for confirmations.
   */
  async hasPending(): Promise<boolean> {
    for await (const _ of this.kv.list({ prefix: pendingPrefix(this.chain) }, { limit: 1 })) return true;
    const head = (await this.kv.get<HeadRecord>(headKey(this.chain))).value;
    return head !== null && head.number < (head.activeUntil ?? 0);
  }

  async head(): Promise<BlockRef> {
    return this.headOf(await this.kv.get<HeadRecord>(headKey(this.chain)));
  }

  /** Hash of the canonical block at `number`, `SKIPPED` for a skipped slot, or null above the tip. */
  async blockHash(number: number): Promise<string | Skipped | null> {
    if (!Number.isSafeInteger(number) || number < 0) return null;
    if (number === 0) return genesisHash(this.chain);
    // Blocks are never deleted and a reorg keeps the tip's height, so a stored block is always canonical.
    const block = (await this.kv.get<BlockRecord>(blockKey(this.chain, number))).value;
    if (block?.skipped) return SKIPPED;
    return block?.hash ?? null;
  }

  /**
   * Canonical blocks `from..to` (inclusive, clipped to the tip). Batches are separate reads: a reorg landing mid-call
   * can mix old and new blocks, which a watcher detects by `parentHash` as it would on a real chain.
   */
  async blocks(from: number, to: number): Promise<ScannedBlock[]> {
    const head = await this.head();
    const first = Math.max(0, Math.ceil(from));
    const last = Math.min(Math.floor(to), head.number);
    const out: ScannedBlock[] = [];
    let n = first;
    if (n === 0 && last >= 0) {
      out.push({
        number: 0,
        hash: genesisHash(this.chain),
        parentHash: formatBlockHash(this.chain, new Uint8Array(32)),
        transfers: [],
      });
      n = 1;
    }
    const numbers: number[] = [];
    for (; n <= last; n++) numbers.push(n);
    const entries = await getManyBatched<BlockRecord>(this.kv, numbers.map((k) => blockKey(this.chain, k)));
    for (const e of entries) {
      if (!e.value) throw new Error(`sim ${this.chain}: block ${String(e.key[3])} missing below the tip`);
      if (e.value.skipped) continue;
      const { number, hash, parentHash, transfers } = e.value;
      out.push({ number, hash, parentHash, transfers });
    }
    return out;
  }

  /**
   * With `ours` (a recorded transaction of ours), a transaction the chain does not know is proven dead once the tip
   * is past the expiry its raw carries: no block above its expiry may include it and `submit` refuses it.
   */
  async txStatus(txHash: string, ours?: OwnTx): Promise<TxStatus> {
    const [txEntry, headEntry] = await this.kv.getMany<[TxRecord, HeadRecord]>([
      txKey(this.chain, txHash),
      headKey(this.chain),
    ]);
    const t = txEntry.value;
    if (!t || t.status === "dropped") {
      const e = ours ? expiryOf(this.chain, ours.raw) : null;
      const tip = this.headOf(headEntry).number;
      if (e && isPast(e, tip)) {
        const reached = reachedIn(e, tip);
        return {
          state: "dead",
          proof: { kind: "expired", expiry: e, reached },
          detail: `sim ${this.chain}: ${txHash} expires at ${e.kind} ${e.value}, the chain is at ${e.kind} ` +
            `${reached}, and no block has it`,
        };
      }
      return (ours && await this.conflictOf(txHash, ours.raw)) ?? { state: "unknown" };
    }
    if (t.status === "pending") return { state: "pending" };
    const blockNumber = t.blockNumber!;
    const confirmations = this.headOf(headEntry).number - blockNumber + 1;
    return t.success
      ? { state: "included", blockNumber, confirmations, success: true }
      : { state: "included", blockNumber, confirmations, success: false, reason: t.reason ?? "failed" };
  }

  /**
   * UTXO mode: our unknown transaction is dead when another transaction spending one of its inputs is included at
   * the chain's required depth (the sim's confirmations): no block can ever include both. Null otherwise.
   */
  private async conflictOf(txHash: string, raw: string): Promise<TxStatus | null> {
    const c = this.chain;
    let tx: SimTx;
    try {
      tx = parseSimTx(c, raw);
    } catch {
      return null;
    }
    if (tx.kind !== "payout" || !tx.inputs || isEvmChain(c)) return null;
    const tip = (await this.head()).number;
    const outpoints = tx.inputs.map((i) => ({ txHash: i.txHash, index: i.index }));
    const spenders = (await getManyBatched<string>(this.kv, outpoints.map((o) => spentKey(c, o)))).map((e) => e.value);
    for (const spender of spenders) {
      if (spender === null || spender === txHash) continue;
      const other = (await this.kv.get<TxRecord>(txKey(c, spender))).value;
      if (other?.status !== "included" || tip - other.blockNumber! + 1 < NATIVE[c as NativeChain].simConfirmations) {
        continue;
      }
      // The proof names the inputs this spender took: those are gone for good; the others may be spent again.
      const taken = outpoints.filter((_, i) => spenders[i] === spender);
      return {
        state: "dead",
        proof: { kind: "conflict", consumed: { kind: "outpoints", outpoints: taken }, spentBy: spender },
        detail: `sim ${c}: ${taken.map((o) => `${o.txHash}:${o.index}`).join(", ")} of ${txHash} spent by ` +
          `${spender}, buried at block ${other.blockNumber}`,
      };
    }
    return null;
  }

  /** UTXO mode: output `o` while its transaction is live and nothing live spends it, else null. */
  async unspentOutput(o: Outpoint): Promise<SimOutput | null> {
    const [creator, marker] = await this.kv.getMany<[TxRecord, string]>([
      txKey(this.chain, o.txHash),
      spentKey(this.chain, o),
    ]);
    const t = creator.value;
    const out = t && t.status !== "dropped" && t.success ? outputOf(t.tx, o.index) : null;
    if (!out) return null;
    if (marker.value !== null) {
      const spender = (await this.kv.get<TxRecord>(txKey(this.chain, marker.value))).value;
      if (spender && spender.status !== "dropped") return null;
    }
    return out;
  }

  /**
   * UTXO mode: the address a transaction's first input spent, as a live UTXO reader answers `senderOf`: a deposit's
   * outside sender, a spend's first input address; null for a coinbase or a genesis output (no input), and for a
   * transaction the ledger does not know.
   */
  async senderOf(txHash: string): Promise<string | null> {
    const t = (await this.kv.get<TxRecord>(txKey(this.chain, txHash))).value;
    if (!t) return null;
    switch (t.tx.kind) {
      case "transfer":
      case "sweep":
        return t.tx.from;
      case "payout":
        return t.tx.inputs?.[0].address ?? t.tx.from;
      default:
        return null;
    }
  }

  /** The transfers a scan shows for an included transaction, or null when it is pending, dropped or unknown. */
  async txTransfers(txHash: string): Promise<ObservedTransfer[] | null> {
    const t = (await this.kv.get<TxRecord>(txKey(this.chain, txHash))).value;
    return t?.status === "included" ? transfersOf(t) : null;
  }

  async balance(address: string, asset: AssetId): Promise<bigint> {
    return (await this.kv.get<bigint>(balanceKey(this.chain, this.normalizeAddress(address), asset))).value ?? 0n;
  }

  /**
   * What a payout from the hot wallet `address` may take now: its balance (with its genesis, when its first payout is
   * still to come) less the chain's reserve. The sim charges no fee.
   */
  async payable(address: string): Promise<bigint> {
    this.requireNative("payable");
    const [bal, funded] = await this.kv.getMany<[bigint, boolean]>([
      balanceKey(this.chain, address, "native"),
      hotWalletKey(this.chain, address),
    ]);
    const total = (bal.value ?? 0n) + (funded.value === null ? this.hotWalletGenesis : 0n);
    const free = total - reserveOf(this.chain);
    return free > 0n ? free : 0n;
  }

  /**
   * The total supply of `asset` on this EVM chain: the sum of every balance of it (mints and faucets add, burns take
   * away; pending transactions included, as their effects are applied at submission). Reads every balance: for tests
   * and the sim's uAsset view, never a hot path.
   */
  async totalSupply(asset: UAsset): Promise<bigint> {
    this.requireEvm("totalSupply");
    let sum = 0n;
    for await (const e of this.kv.list<bigint>({ prefix: ["sim", this.chain, "balance"] })) {
      if (e.key[4] === asset) sum += e.value;
    }
    return sum;
  }

  /** The transaction that minted `depositId` on the canonical chain (pending included), or null. */
  async mintedBy(depositIdHex: string): Promise<string | null> {
    return (await this.kv.get<string>(mintedKey(this.chain, depositIdHex.toLowerCase()))).value;
  }

  /**
   * EVM chains: the successful, included `mint` transactions of `asset` (the contract's `Minted` events), oldest block
   * first. A faucet credit is no mint: it has no event, as an outside mint would have none on a real contract.
   */
  async mintTransactions(
    asset: UAsset,
  ): Promise<{ depositId: string; to: string; amount: bigint; txHash: string; blockNumber: number }[]> {
    this.requireEvm("mintTransactions");
    const hashes: string[] = [];
    for await (const e of this.kv.list<string>({ prefix: ["sim", this.chain, "minted"] })) hashes.push(e.value);
    const records = await getManyBatched<TxRecord>(this.kv, hashes.map((h) => txKey(this.chain, h)));
    const out = [];
    for (const r of records) {
      const t = r.value;
      if (!t || t.tx.kind !== "mint" || t.tx.asset !== asset || !t.success || t.status !== "included") continue;
      out.push({
        depositId: t.tx.depositId,
        to: t.tx.to,
        amount: t.tx.amount,
        txHash: t.hash,
        blockNumber: t.blockNumber ?? 0,
      });
    }
    return out.sort((a, b) => a.blockNumber - b.blockNumber);
  }

  // ---- faults ----

  async getFaults(): Promise<SimFaults> {
    return { ...NO_FAULTS, ...(await this.kv.get<SimFaults>(faultsKey(this.chain))).value };
  }

  async setFaults(patch: Partial<SimFaults>): Promise<SimFaults> {
    const valid = FaultsPatchSchema.parse(patch);
    for (let attempt = 0;; attempt++) {
      const entry = await this.kv.get<SimFaults>(faultsKey(this.chain));
      const next: SimFaults = { ...NO_FAULTS, ...entry.value, ...valid };
      if (await commit(this.kv.atomic().check(entry).set(faultsKey(this.chain), next))) return next;
      await backoff(attempt);
    }
  }

  // ---- submissions ----

  /** A native-chain deposit from an outside sender (never debited). */
  async submitNativeTransfer(
    args: { from: string; to: string; amount: bigint; memo?: string | null },
  ): Promise<Submitted> {
    this.requireNative("submitNativeTransfer");
    return await this.submitOwn({
      kind: "transfer",
      from: args.from,
      to: args.to,
      amount: args.amount,
      memo: args.memo ?? null,
      nonce: simNonce(this.random),
    });
  }

  /**
   * UTXO mode, for tests and `deno task sim`: a miner's coinbase output paying `to` (one of our deposit addresses, say)
   * in the next sealed block. Scans show it with `coinbase: true`.
   */
  async mineCoinbase(args: { to: string; amount: bigint }): Promise<Submitted> {
    if (!isUtxoChain(this.chain)) throw new Error(`sim ${this.chain}: mineCoinbase needs a UTXO chain (doge, zec)`);
    if (args.amount <= 0n) throw new RangeError(`sim ${this.chain}: a coinbase output must be positive`);
    return await this.submitOwn({ kind: "coinbase", to: args.to, amount: args.amount, nonce: simNonce(this.random) });
  }

  /**
   * UTXO mode: the operator's genesis coin, an output paying `address` in the genesis block (no scan shows it),
   * credited to its balance. Idempotent: the same (address, amount, n) is one output, whoever asks first.
   */
  async ensureGenesisOutput(address: string, amount: bigint, n = 0): Promise<Outpoint> {
    this.requireNative("ensureGenesisOutput");
    if (amount <= 0n) throw new RangeError(`sim ${this.chain}: a genesis output must be positive`);
    const nonce = `genesis-${n}`;
    const tx: SimTx = { kind: "genesis", to: address, amount, nonce };
    const raw = encodeSimTx(tx);
    const hash = simTxHash(this.chain, raw);
    for (let attempt = 0;; attempt++) {
      const key = balanceKey(this.chain, address, "native");
      const [txEntry, bal] = await this.kv.getMany<[TxRecord, bigint]>([txKey(this.chain, hash), key]);
      if (txEntry.value) return { txHash: hash, index: 0 };
      const record: TxRecord = {
        hash,
        raw,
        tx,
        success: true,
        reason: null,
        status: "included",
        submittedAt: 0,
        blockNumber: 0,
      };
      const op = this.kv.atomic().check(txEntry, bal).set(txKey(this.chain, hash), record)
        .set(key, (bal.value ?? 0n) + amount);
      if (await commit(op)) return { txHash: hash, index: 0 };
      await backoff(attempt);
    }
  }

  /**
   * UTXO mode, for tests: someone holding our key spends `outpoints` (all but the fee to `to`), e.g. a second signer
   * racing our payout. Refused like any spend of a missing or spent output.
   */
  async submitConflictingSpend(outpoints: Outpoint[], to: string): Promise<Submitted> {
    this.requireNative("submitConflictingSpend");
    const inputs = [];
    for (const o of outpoints) {
      const out = await this.unspentOutput(o);
      if (!out) throw new Error(`sim ${this.chain}: ${o.txHash}:${o.index} is not an unspent output`);
      inputs.push({ txHash: o.txHash, index: o.index, ...out });
    }
    const total = inputs.reduce((sum, i) => sum + i.amount, 0n);
    const fee = isUtxoChain(this.chain) ? utxoFee(this.chain)(inputs.length, 1) : 0n;
    return await this.submitOwn({
      kind: "payout",
      from: inputs[0].address,
      to,
      amount: total - fee,
      memo: null,
      orderId: "conflicting-spend",
      nonce: simNonce(this.random),
      expiry: null,
      inputs,
      change: null,
    });
  }

  /** Credits `asset` to `address` on an EVM chain, seen by scans as a Transfer from the zero address. */
  async faucet(args: { address: string; asset: UAsset; amount: bigint }): Promise<Submitted> {
    this.requireEvm("faucet");
    return await this.submitOwn({
      kind: "faucet",
      to: args.address,
      asset: args.asset,
      amount: args.amount,
      nonce: simNonce(this.random),
    });
  }

  /** An ERC-20 uAsset transfer; refused with nothing changed when `from` lacks the balance. */
  async submitErc20Transfer(
    args: { from: string; to: string; asset: UAsset; amount: bigint },
  ): Promise<Erc20TransferResult> {
    this.requireEvm("submitErc20Transfer");
    const raw = encodeSimTx({ kind: "erc20", ...args, nonce: simNonce(this.random) });
    const res = await this.submit(raw, parseSimTx(this.chain, raw));
    if (!("refused" in res)) return { ok: true, ...res };
    if (res.refused !== "insufficient_balance") throw new Error(`sim ${this.chain}: transfer refused: ${res.refused}`);
    return { ok: false, reason: res.refused };
  }

  /**
   * Submits a raw transaction. Submitting the same raw again is a no-op returning the same hash, unless it was
   * reorganised out: then it executes again, as a rebroadcast dropped transaction would on a real chain.
   */
  async submitRaw(raw: string): Promise<Submitted> {
    const res = await this.submit(raw, parseSimTx(this.chain, raw));
    if ("refused" in res && res.refused === "expired") {
      // As a node refuses an expired blockhash or ledger sequence: nothing to do but wait for its proof of death.
      throw new TransientChainError(`sim ${this.chain}: transaction refused: past its expiry`);
    }
    if ("refused" in res && res.refused === "insufficient_balance" && !isEvmChain(this.chain)) {
      // A payout or sweep the account cannot fund now: refused, nothing changed; funds may arrive, or it expires.
      throw new TransientChainError(`sim ${this.chain}: transaction refused: insufficient funds`);
    }
    if ("refused" in res && res.refused === "spent_input") {
      // As a node refuses a double spend: it is dead once the other spend is buried, which the reader proves.
      throw new TransientChainError(`sim ${this.chain}: transaction refused: an input is already spent`);
    }
    if ("refused" in res) throw new Error(`sim ${this.chain}: transaction refused: ${res.refused}`);
    return res;
  }

  private async submitOwn(tx: SimTx): Promise<Submitted> {
    const raw = encodeSimTx(tx);
    const res = await this.submit(raw, parseSimTx(this.chain, raw));
    if ("refused" in res) throw new Error(`sim ${this.chain}: transaction refused: ${res.refused}`);
    return res;
  }

  /**
   * Applies a transaction's effects and puts it in the pending set, in one commit that checks everything it read:
   * the transaction record (idempotency), the head (so `blockNumber` is the next block), the balances it changes, the
   * minted record and the fault counters it consumes.
   */
  private async submit(
    raw: string,
    tx: SimTx,
  ): Promise<Submitted | { refused: "insufficient_balance" | "expired" | SpendRefusal | InputRefusal }> {
    const reserve = reserveOf(this.chain);
    const c = this.chain;
    const hash = simTxHash(c, raw);
    for (let attempt = 0;; attempt++) {
      const [txEntry, headEntry] = await this.kv.getMany<[TxRecord, HeadRecord]>([txKey(c, hash), headKey(c)]);
      const head = this.headOf(headEntry);
      const existing = txEntry.value;
      if (existing && existing.status !== "dropped") {
        return { txHash: hash, blockNumber: existing.blockNumber ?? head.number + 1 };
      }
      const e = expiryOfTx(tx);
      if (e && isPast(e, head.number + 1)) return { refused: "expired" };
      const op = this.kv.atomic().check(txEntry).check(headEntry);
      let failure: string | null = null;
      let stalled = false;

      if (tx.kind === "burn") {
        const entry = await this.kv.get<SimFaults>(faultsKey(c));
        const left = entry.value?.revertNextBurn ?? 0;
        if (left > 0) {
          failure = "execution reverted";
          op.check(entry).set(faultsKey(c), { ...NO_FAULTS, ...entry.value, revertNextBurn: left - 1 });
        }
      }
      if (tx.kind === "mint" || tx.kind === "payout") {
        const entry = await this.kv.get<SimFaults>(faultsKey(c));
        const faults = { ...NO_FAULTS, ...entry.value };
        const counter = tx.kind === "mint" ? "revertNextMint" : "failNextPayout";
        const next = { ...faults };
        if (faults[counter] > 0) {
          next[counter] = faults[counter] - 1;
          failure = tx.kind === "mint" ? "execution reverted" : "transaction failed";
        }
        if (tx.kind === "payout" && faults.stallPayouts > 0) {
          next.stallPayouts = faults.stallPayouts - 1;
          stalled = true;
        }
        if (next[counter] !== faults[counter] || stalled) op.check(entry).set(faultsKey(c), next);
      }
      if (failure === null && tx.kind === "mint") {
        const minted = await this.kv.get<string>(mintedKey(c, tx.depositId));
        op.check(minted);
        if (minted.value !== null) failure = "deposit already minted";
        else op.set(mintedKey(c, tx.depositId), hash);
      }
      const utxo = tx.kind === "payout" && tx.inputs !== undefined;
      if (failure === null && tx.kind === "payout" && utxo) {
        const refusal = spendRefusal(c, tx) ?? await this.addSpends(op, hash, tx.inputs!);
        if (refusal) return { refused: refusal };
      }
      if (failure === null) {
        const deltas = deltasOf(tx);
        const keys = deltas.map((d) => balanceKey(c, d.address, d.asset));
        // A UTXO-mode payout is funded by its inputs, checked above, not by the hot wallet's balance.
        const hotWallet = tx.kind === "payout" && !utxo ? hotWalletKey(c, tx.from) : null;
        // A UTXO payout's inputs can come from more addresses than one getMany may read (10).
        const entries = await getManyBatched<unknown>(this.kv, hotWallet ? [...keys, hotWallet] : keys);
        const funded = hotWallet ? entries.pop()! : null;
        const balances = entries.map((e) => (e.value as bigint | null) ?? 0n);
        const source =
          tx.kind === "erc20" || tx.kind === "burn" || (tx.kind === "payout" && !utxo) || tx.kind === "sweep"
            ? tx.from
            : null;
        const debit = source === null ? -1 : deltas.findIndex((d) => d.address === source);
        // A hot wallet is funded with its genesis allocation in the commit of its first payout.
        const genesis = funded !== null && funded.value === null;
        if (debit >= 0 && genesis) balances[debit] += this.hotWalletGenesis;
        // A payout or a sweep never overdraws nor takes the account's reserve: the node refuses it, nothing changes.
        const keep = tx.kind === "payout" || tx.kind === "sweep" ? reserve : 0n;
        if (debit >= 0 && balances[debit] - keep < tx.amount) {
          // The reads above are not one snapshot: the same raw submitted meanwhile by another sender (a rebroadcast
          // racing the first broadcast) has debited the balance already. That is the same transaction, known, as a
          // node answers "already known": look again rather than refuse it.
          if ((await this.kv.get(txKey(c, hash))).versionstamp !== txEntry.versionstamp) continue;
          return { refused: "insufficient_balance" };
        } else {
          deltas.forEach((d, i) => op.check(entries[i]).set(keys[i], balances[i] + d.amount));
          if (funded) op.check(funded);
          if (genesis) op.set(funded.key, true);
        }
      }

      const submittedAt = this.now();
      const record: TxRecord = {
        hash,
        raw,
        tx,
        success: failure === null,
        reason: failure,
        status: "pending",
        submittedAt,
        blockNumber: null,
      };
      if (stalled) record.stalled = true;
      op.set(txKey(c, hash), record).set(pendingKey(c, submittedAt, hash), record);
      if (await commit(op)) return { txHash: hash, blockNumber: head.number + 1 };
      await backoff(attempt);
    }
  }

  /**
   * UTXO mode: adds to `op` the spend of each input by `hash`, checked: the output exists (its transaction is not
   * dropped, succeeded, and pays that address that amount) and no live transaction spent it. Returns why not, or null.
   */
  private async addSpends(
    op: Deno.AtomicOperation,
    hash: string,
    inputs: { txHash: string; index: number; address: string; amount: bigint }[],
  ): Promise<InputRefusal | null> {
    const c = this.chain;
    const markers = await getManyBatched<string>(this.kv, inputs.map((i) => spentKey(c, i)));
    const creators = await getManyBatched<TxRecord>(this.kv, inputs.map((i) => txKey(c, i.txHash)));
    for (const [n, i] of inputs.entries()) {
      const creator = creators[n].value;
      const out = creator && creator.status !== "dropped" && creator.success ? outputOf(creator.tx, i.index) : null;
      if (!out || out.address !== i.address || out.amount !== i.amount) return "missing_input";
      op.check(creators[n]);
      const spender = markers[n].value;
      if (spender !== null && spender !== hash) {
        const other = await this.kv.get<TxRecord>(txKey(c, spender));
        if (other.value && other.value.status !== "dropped") return "spent_input";
        op.check(other);
      }
      op.check(markers[n]).set(spentKey(c, i), hash);
    }
    return null;
  }

  // ---- blocks ----

  /**
   * Seals the pending transactions (oldest first, at most MAX_TXS_PER_BLOCK) into block head+1 and returns the new
   * head; an empty block is normal. While stalled it returns the unchanged head. The commit checks the head, so two
   * sealers (or a sealer and a reorg) never both extend it, and a transaction submitted meanwhile stays pending for
   * the next block.
   */
  async sealBlock(opts: { skipSlots?: number } = {}): Promise<BlockRef> {
    const c = this.chain;
    const skip = opts.skipSlots ?? 0;
    if (skip !== 0 && (c !== "sol" || !Number.isSafeInteger(skip) || skip < 0 || skip > MAX_TXS_PER_BLOCK)) {
      throw new RangeError(`sim ${c}: only Solana skips slots, 0 to ${MAX_TXS_PER_BLOCK} at a time`);
    }
    for (let attempt = 0;; attempt++) {
      const [headEntry, faultsEntry] = await this.kv.getMany<[HeadRecord, SimFaults]>([headKey(c), faultsKey(c)]);
      const head = this.headOf(headEntry);
      if (this.now() < (faultsEntry.value?.stalledUntil ?? 0)) return head;
      const number = head.number + skip + 1;
      // Stalled payouts wait in the pending set without taking a block's room; expired ones leave it.
      const pending: TxRecord[] = [];
      const expired: TxRecord[] = [];
      for await (const e of this.kv.list<TxRecord>({ prefix: pendingPrefix(c) }, { limit: MAX_TXS_PER_BLOCK * 2 })) {
        const t = e.value;
        const x = expiryOfTx(t.tx);
        if (x && isPast(x, number)) expired.push(t);
        else if (!t.stalled && pending.length < MAX_TXS_PER_BLOCK) pending.push(t);
      }
      const txHashes = pending.map((t) => t.hash);
      const hash = this.newBlockHash(number, head.hash, txHashes);
      const block: BlockRecord = {
        number,
        hash,
        parentHash: head.hash,
        txHashes,
        transfers: pending.flatMap(transfersOf),
      };
      const op = this.kv.atomic().check(headEntry);
      for (const t of pending) {
        op.delete(pendingKey(c, t.submittedAt, t.hash));
        op.set(txKey(c, t.hash), { ...t, status: "included", blockNumber: number } satisfies TxRecord);
      }
      if (expired.length > 0) {
        await this.addReverts(op, expired);
        for (const t of expired) {
          op.delete(pendingKey(c, t.submittedAt, t.hash));
          op.set(txKey(c, t.hash), { ...t, status: "dropped", blockNumber: null } satisfies TxRecord);
        }
      }
      for (let n = head.number + 1; n < number; n++) {
        const marker: BlockRecord = { number: n, hash: head.hash, parentHash: head.hash, txHashes: [], transfers: [] };
        op.set(blockKey(c, n), { ...marker, skipped: true });
      }
      const active = pending.length > 0 || expired.length > 0
        ? number + SIM_ACTIVE_TAIL_BLOCKS
        : headEntry.value?.activeUntil;
      op.set(blockKey(c, number), block).set(headKey(c), { number, hash, activeUntil: active } satisfies HeadRecord);
      if (await commit(op)) return { number, hash };
      await backoff(attempt);
    }
  }

  /**
   * Undoes the effects of transactions leaving the chain (reorganised out, or expired while pending): balance checks
   * and writes, and the minted records of their mints. Returns how many balances it touches.
   */
  private async addReverts(op: Deno.AtomicOperation, txs: TxRecord[]): Promise<number> {
    const c = this.chain;
    const succeeded = txs.filter((t) => t.success);
    const reverts = mergeDeltas(succeeded.flatMap((t) => deltasOf(t.tx)).map((x) => ({ ...x, amount: -x.amount })))
      .filter((x) => x.amount !== 0n);
    if (1 + reverts.length > MAX_CHECKS) {
      throw new Error(`sim ${c}: undoing ${txs.length} transactions touches too many balances for one commit`);
    }
    const keys = reverts.map((x) => balanceKey(c, x.address, x.asset));
    const balances = await getManyBatched<bigint>(this.kv, keys);
    reverts.forEach((x, i) => op.check(balances[i]).set(keys[i], (balances[i].value ?? 0n) + x.amount));
    for (const t of succeeded) if (t.tx.kind === "mint") op.delete(mintedKey(c, t.tx.depositId));
    return reverts.length;
  }

  /**
   * Drops the last `depth` sealed blocks (capped at the tip's height): their transactions' effects are undone (minted
   * records included) and they become unknown; empty blocks with new hashes take the same heights. Pending
   * transactions are untouched, so a pending spend of reverted funds can leave a balance negative, which a real chain
   * would never show; sim tests should not rely on that case.
   * One commit does it all, so a reorg may touch at most 99 distinct balances; a larger one throws.
   *
   * `pendingPerBlock` > 0: the replacement blocks are not empty but take the pending transactions (oldest first, that
   * many per block, from the deepest replacement block up), as a competing branch that saw them first would: a reorg
   * that puts new transfers deep under the tip.
   */
  async reorg(depth: number, opts: { pendingPerBlock?: number } = {}): Promise<BlockRef> {
    const perBlock = opts.pendingPerBlock ?? 0;
    if (!Number.isSafeInteger(perBlock) || perBlock < 0 || perBlock > MAX_TXS_PER_BLOCK) {
      throw new RangeError(`pendingPerBlock must be an integer from 0 to ${MAX_TXS_PER_BLOCK}`);
    }
    if (!Number.isSafeInteger(depth) || depth < 0) throw new RangeError(`reorg depth must be a non-negative integer`);
    const c = this.chain;
    for (let attempt = 0;; attempt++) {
      const headEntry = await this.kv.get<HeadRecord>(headKey(c));
      const head = this.headOf(headEntry);
      const d = Math.min(depth, head.number);
      if (d === 0) return head;
      const base = head.number - d;
      const heights = Array.from({ length: d }, (_, i) => base + 1 + i);
      const blocks = (await getManyBatched<BlockRecord>(this.kv, heights.map((n) => blockKey(c, n)))).map((e) => {
        if (!e.value) throw new Error(`sim ${c}: block ${String(e.key[3])} missing below the tip`);
        return e.value;
      });
      const parentHash = base === 0 ? genesisHash(c) : (await this.kv.get<BlockRecord>(blockKey(c, base))).value?.hash;
      if (!parentHash) throw new Error(`sim ${c}: block ${base} missing below the tip`);
      const txs = (await getManyBatched<TxRecord>(this.kv, blocks.flatMap((b) => b.txHashes).map((h) => txKey(c, h))))
        .map((e) => e.value!);

      // The included transaction records are written only by sealing and reorgs, which both check the head, and so
      // is a successful mint's record: reading them needs no check. Balances change with every submission.
      const op = this.kv.atomic().check(headEntry);
      const reverted = await this.addReverts(op, txs);
      const mutations = d + 1 + txs.length + reverted + txs.filter((t) => t.success).length;
      if (mutations > MAX_MUTATIONS) {
        throw new Error(`sim ${c}: a reorg of depth ${d} touches too much state for one commit; use a smaller depth`);
      }
      for (const t of txs) op.set(txKey(c, t.hash), { ...t, status: "dropped", blockNumber: null } satisfies TxRecord);
      const pending: TxRecord[] = [];
      if (perBlock > 0) {
        const limit = Math.min(perBlock * d, Math.floor((MAX_MUTATIONS - mutations) / 2));
        // Stalled payouts and payouts expiring below the tip stay out of the competing branch too.
        for await (const e of this.kv.list<TxRecord>({ prefix: pendingPrefix(c) }, { limit })) {
          const x = expiryOfTx(e.value.tx);
          if (!e.value.stalled && !(x && isPast(x, head.number))) pending.push(e.value);
        }
      }
      let parent = parentHash;
      for (const [i, n] of heights.entries()) {
        const included = pending.slice(i * perBlock, (i + 1) * perBlock);
        const txHashes = included.map((t) => t.hash);
        const hash = this.newBlockHash(n, parent, txHashes);
        // Pending records change only by sealing, which checks the head as this commit does.
        for (const t of included) {
          op.delete(pendingKey(c, t.submittedAt, t.hash));
          op.set(txKey(c, t.hash), { ...t, status: "included", blockNumber: n } satisfies TxRecord);
        }
        op.set(
          blockKey(c, n),
          {
            number: n,
            hash,
            parentHash: parent,
            txHashes,
            transfers: included.flatMap(transfersOf),
          } satisfies BlockRecord,
        );
        parent = hash;
      }
      op.set(
        headKey(c),
        {
          number: head.number,
          hash: parent,
          activeUntil: head.number + SIM_ACTIVE_TAIL_BLOCKS,
        } satisfies HeadRecord,
      );
      if (await commit(op)) return { number: head.number, hash: parent };
      await backoff(attempt);
    }
  }

  // ---- helpers ----

  private headOf(entry: Deno.KvEntryMaybe<HeadRecord>): BlockRef {
    return entry.value
      ? { number: entry.value.number, hash: entry.value.hash }
      : { number: 0, hash: genesisHash(this.chain) };
  }

  private newBlockHash(number: number, parentHash: string, txHashes: string[]): string {
    const salt = randomHex(this.random, 16);
    return formatBlockHash(this.chain, digest("sim-block", this.chain, number, parentHash, txHashes.join(","), salt));
  }

  private normalizeAddress(addr: string): string {
    return isEvmChain(this.chain) ? addr.toLowerCase() : addr;
  }

  private requireEvm(what: string): void {
    if (!isEvmChain(this.chain)) throw new Error(`sim ${this.chain}: ${what} needs an EVM chain`);
  }

  private requireNative(what: string): void {
    if (isEvmChain(this.chain)) throw new Error(`sim ${this.chain}: ${what} needs a native chain`);
  }
}

/** The expiry a raw payout or sweep of `chain` carries, or null (no expiry, not a payout, not ours to parse). */
function expiryOf(chain: ChainSymbol, raw: string): Expiry | null {
  try {
    return expiryOfTx(parseSimTx(chain, raw));
  } catch {
    return null;
  }
}

async function getManyBatched<T>(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
  const out: Deno.KvEntryMaybe<T>[] = [];
  for (let i = 0; i < keys.length; i += GET_MANY_MAX) {
    out.push(...await kv.getMany<T[]>(keys.slice(i, i + GET_MANY_MAX)));
  }
  return out;
}

/**
 * Commits `op`; false when it lost a race. Besides a failed check, that includes SQLite's "database is locked": with
 * two handles (processes) on one local KV file, a commit with checks throws it instead of waiting (measured here).
 */
async function commit(op: Deno.AtomicOperation): Promise<boolean> {
  try {
    return (await op.commit()).ok;
  } catch (e) {
    if (e instanceof TypeError && e.message.includes("database is locked")) return false;
    throw e;
  }
}

/** Jittered pause after a lost commit race, so many writers of one key do not retry in lockstep. */
function backoff(attempt: number): Promise<void> {
  if (attempt < 2) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 50)));
}
