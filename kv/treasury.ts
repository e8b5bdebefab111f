/**
 * The treasury: the native coins we hold, and the write-ahead record of sweeping a deposit address into the hot
 * wallet. The order pipeline adds and spends UTXO coins (actors/treasury_steps.ts) and the sweeper of the account
 * chains records its sweeps here (actors/sweeper.ts); the per-address account balance records are not used yet.
 *
 * - UTXO chains (doge, zec): one record per unspent output we own, added once it is confirmed, removed by the atomic
 *   that records a final spend of it (which leaves a spent marker, so a rescan cannot add it back). A coin is locked
 *   to a transaction by the `coins` reservation of kv/chain_state.ts (`coinLockKey`), never here: a coin is spendable
 *   when it is recorded, unspent, unlocked and not coinbase.
 * - Account chains (sol, xrp, sui): one balance record per deposit address, what it keeps once its deposits are
 *   swept (written by the sweeper: the sweep's `leave` when one completes, the balance it read when nothing was above
 *   the reserve), with the reserve the address must keep. An address is locked while a sweep of it is open
 *   (`accountLockKey`), created in the atomic that records the sweep: one open sweep per address.
 *
 * Amounts are bigint in code and decimal strings in KV (a record stays plain JSON, readable by the admin tools).
 */
import type { DeathProof, Outpoint, PreparedTx } from "../chains/adapter.ts";
import { type AccountChain, isChainOf, type UtxoChain } from "../chains/catalog.ts";
import { MAX_DEPOSIT_INDEX } from "../chains/derivation.ts";
import {
  InvalidRecordError,
  parseRecord,
  type Sweep,
  SweepSchema,
  type SweepStatus,
  validRecord,
} from "../model/sent_tx.ts";
import { addReservations, coinLockKey, coinLocks } from "./chain_state.ts";
import type { CoinEffect } from "../model/sent_tx_effects.ts";

// ---------------------------------------------------------------- keys

export function coinKey(chain: UtxoChain, outpoint: Outpoint): Deno.KvKey {
  return ["treasury_coin", chain, outpoint.txHash, outpoint.index];
}

/** Left by `addSpent` for ever: the outpoint was spent by `spentBy` and is never added again. */
export function spentCoinKey(chain: UtxoChain, outpoint: Outpoint): Deno.KvKey {
  return ["treasury_coin_spent", chain, outpoint.txHash, outpoint.index];
}

export function balanceKey(chain: AccountChain, address: string): Deno.KvKey {
  return ["treasury_balance", chain, address];
}

export function sweepKey(chain: AccountChain, sweepId: string): Deno.KvKey {
  return ["treasury_sweep", chain, sweepId];
}

/** Set while a sweep of `address` is open (prepared, not yet completed or proven dead): the address's balance. */
export function accountLockKey(chain: AccountChain, address: string): Deno.KvKey {
  return ["treasury_account_lock", chain, address];
}

// ---------------------------------------------------------------- records

/** A confirmed unspent output we own: a coin as settling effects add it (model/sent_tx_effects.ts), and whether it
 * is a coinbase output. */
export interface Coin extends CoinEffect {
  /** A coinbase output; never selected (we do not mine, so one is an anomaly to look at, not money to spend). */
  coinbase: boolean;
}

interface StoredCoin extends Omit<Coin, "amount"> {
  amount: string;
}

export interface SpentMarker {
  spentBy: string;
}

/** The balance of one address we own on an account chain, as last read from the chain. */
export interface AccountBalance {
  chain: AccountChain;
  address: string;
  derivationIndex: number;
  balance: bigint;
  /** What the address must keep (catalog `reserve`, or the node's current value): never spent or swept. */
  reserve: bigint;
}

interface StoredBalance extends Omit<AccountBalance, "balance" | "reserve"> {
  balance: string;
  reserve: string;
}

export interface Totals {
  /** Everything recorded (UTXO: unspent coins; accounts: balances). */
  confirmed: bigint;
  /** Held by a recorded transaction: coins locked to one, addresses with an open sweep. */
  locked: bigint;
  /** What a new transaction may use: unlocked, not coinbase; for accounts, above each address's reserve. */
  spendable: bigint;
}

// The Sweep record's schema and type live in model/sent_tx.ts: checked on every write and read here.
export type { Sweep, SweepStatus } from "../model/sent_tx.ts";

/** What `accountLockKey` holds. */
export interface AccountLock {
  sweepId: string;
  txHash: string;
}

// ---------------------------------------------------------------- validation

function assertDerivationIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) {
    throw new RangeError(`derivation index must be an integer from 0 to ${MAX_DEPOSIT_INDEX}, got ${index}`);
  }
}

function assertOutpoint(o: Outpoint): void {
  if (typeof o?.txHash !== "string" || o.txHash === "" || !Number.isSafeInteger(o.index) || o.index < 0) {
    throw new RangeError(`invalid outpoint ${JSON.stringify(o)}`);
  }
}

function assertCoin(c: Coin): void {
  if (!isChainOf("utxo", c.chain)) throw new RangeError(`${String(c.chain)} is not a UTXO chain`);
  assertOutpoint(c.outpoint);
  if (typeof c.address !== "string" || c.address === "") throw new RangeError("coin address is required");
  assertDerivationIndex(c.derivationIndex);
  if (typeof c.amount !== "bigint" || c.amount <= 0n) throw new RangeError(`coin amount must be positive`);
  if (!Number.isSafeInteger(c.height) || c.height < 0) throw new RangeError(`invalid coin height ${c.height}`);
  if (typeof c.coinbase !== "boolean") throw new RangeError("coin coinbase flag is required");
}

const toStoredCoin = (c: Coin): StoredCoin => ({
  chain: c.chain,
  outpoint: { txHash: c.outpoint.txHash, index: c.outpoint.index },
  address: c.address,
  derivationIndex: c.derivationIndex,
  amount: c.amount.toString(),
  height: c.height,
  coinbase: c.coinbase,
});

const fromStoredCoin = (s: StoredCoin): Coin => ({ ...s, amount: BigInt(s.amount) });

// ---------------------------------------------------------------- UTXO coins

/**
 * Records confirmed coins we own, idempotent by outpoint: a coin already recorded with the same facts, or already
 * spent, is left alone. Returns how many were new. Throws, recording nothing of that coin, for an invalid coin or one
 * recorded with other facts (another amount, address or key: something is wrong and must be looked at).
 */
export async function addCoins(kv: Deno.Kv, coins: readonly Coin[]): Promise<number> {
  for (const c of coins) assertCoin(c);
  let added = 0;
  for (const c of coins) {
    const key = coinKey(c.chain, c.outpoint);
    const spent = spentCoinKey(c.chain, c.outpoint);
    const stored = toStoredCoin(c);
    const res = await kv.atomic().check({ key, versionstamp: null }, { key: spent, versionstamp: null }).set(
      key,
      stored,
    ).commit();
    if (res.ok) {
      added++;
      continue;
    }
    const existing = (await kv.get<StoredCoin>(key)).value;
    if (existing !== null && JSON.stringify(existing) !== JSON.stringify(stored)) {
      throw new Error(
        `coin ${c.chain} ${c.outpoint.txHash}:${c.outpoint.index} is recorded with other facts; not changed`,
      );
    }
  }
  return added;
}

/**
 * Adds a confirmed coin to `atomic`, the commit of the step that confirms it (an order's deposit, a payout's change).
 * That commit is checked against the order's version and runs once, so the coin is new: no check on it, which would
 * only turn an impossible case into an order stuck in commit conflicts.
 */
export function addCoinRecord(atomic: Deno.AtomicOperation, coin: Coin): Deno.AtomicOperation {
  assertCoin(coin);
  return atomic.set(coinKey(coin.chain, coin.outpoint), toStoredCoin(coin));
}

export async function readCoin(kv: Deno.Kv, chain: UtxoChain, outpoint: Outpoint): Promise<Coin | null> {
  const v = (await kv.get<StoredCoin>(coinKey(chain, outpoint))).value;
  return v === null ? null : fromStoredCoin(v);
}

/** Who spent `outpoint`, if a final spend of it was recorded. */
export async function spentBy(kv: Deno.Kv, chain: UtxoChain, outpoint: Outpoint): Promise<string | null> {
  return (await kv.get<SpentMarker>(spentCoinKey(chain, outpoint))).value?.spentBy ?? null;
}

/** A recorded coin with who holds it: the locking transaction (null when free) and an operator hold (null: none). */
export interface CoinState {
  coin: Coin;
  lockedBy: string | null;
  hold: CoinHold | null;
}

/** Every unspent coin recorded on `chain`, each with its lock and hold, oldest outpoint key first. */
export async function coinStates(kv: Deno.Kv, chain: UtxoChain): Promise<CoinState[]> {
  const coins: Coin[] = [];
  for await (const e of kv.list<StoredCoin>({ prefix: ["treasury_coin", chain] })) coins.push(fromStoredCoin(e.value));
  const holds = new Map<string, CoinHold>();
  for await (const e of kv.list<CoinHold>({ prefix: ["treasury_coin_hold", chain] })) {
    holds.set(`${String(e.key[2])}:${String(e.key[3])}`, e.value);
  }
  const locks = await coinLocks(kv, chain, coins.map((c) => c.outpoint));
  return coins.map((coin, i) => ({
    coin,
    lockedBy: locks[i],
    hold: holds.get(`${coin.outpoint.txHash}:${coin.outpoint.index}`) ?? null,
  }));
}

/** The recorded coins at `outpoints` with their lock and hold, null where no unspent coin is recorded. */
export async function coinStatesAt(
  kv: Deno.Kv,
  chain: UtxoChain,
  outpoints: readonly Outpoint[],
): Promise<(CoinState | null)[]> {
  const locks = await coinLocks(kv, chain, [...outpoints]);
  const out: (CoinState | null)[] = [];
  for (const [i, outpoint] of outpoints.entries()) {
    const coin = await readCoin(kv, chain, outpoint);
    const hold = (await kv.get<CoinHold>(coinHoldKey(chain, outpoint))).value;
    out.push(coin && { coin, lockedBy: locks[i], hold });
  }
  return out;
}

/** Whether a new transaction may spend it: not locked by a recorded transaction, not held, not coinbase. */
export function isSpendable(s: CoinState): boolean {
  return s.lockedBy === null && s.hold === null && !s.coin.coinbase;
}

/** Coins a new transaction may spend: confirmed, unspent, not locked, not held for an operator, not coinbase. */
export async function spendableCoins(kv: Deno.Kv, chain: UtxoChain): Promise<Coin[]> {
  return (await coinStates(kv, chain)).filter(isSpendable).map((c) => c.coin);
}

export async function coinTotals(kv: Deno.Kv, chain: UtxoChain): Promise<Totals> {
  const totals: Totals = { confirmed: 0n, locked: 0n, spendable: 0n };
  for (const state of await coinStates(kv, chain)) {
    totals.confirmed += state.coin.amount;
    if (state.lockedBy !== null) totals.locked += state.coin.amount;
    else if (isSpendable(state)) totals.spendable += state.coin.amount;
  }
  return totals;
}

// ---------------------------------------------------------------- coin holds

/**
 * A coin an operator must look at before it is spent: it was confirmed in a block a reorg past finality replaced, so
 * it may not exist on the canonical chain. Held, never deleted: `deno task admin utxo coin release` frees it after
 * the operator checked it on the node, `utxo coin forget` removes it when it is gone.
 */
export interface CoinHold {
  reason: string;
  at: string;
  /** The alert that held it (kv/alerts.ts, kind and subject). */
  alert?: { kind: string; subject: string };
}

export function coinHoldKey(chain: UtxoChain, outpoint: Outpoint): Deno.KvKey {
  return ["treasury_coin_hold", chain, outpoint.txHash, outpoint.index];
}

/**
 * Holds every recorded coin of `chain` confirmed above `height` (an unspent one; spent coins left the treasury).
 * Idempotent: a coin already held keeps its first hold. Returns the outpoints held (now or before).
 */
export async function holdCoinsAbove(
  kv: Deno.Kv,
  chain: UtxoChain,
  height: number,
  hold: CoinHold,
): Promise<Outpoint[]> {
  const held: Outpoint[] = [];
  for (const s of await coinStates(kv, chain)) {
    if (s.coin.height <= height) continue;
    held.push(s.coin.outpoint);
    if (s.hold) continue;
    const key = coinHoldKey(chain, s.coin.outpoint);
    await kv.atomic().check({ key, versionstamp: null }).set(key, hold).commit();
  }
  return held;
}

/**
 * Adds to the atomic that records `spentBy` final: its coins leave the treasury (record deleted) and a spent marker
 * stays, so a rescan that sees the coin again does not add it back. Idempotent. The coin's lock stays too, naming
 * `spentBy`: a payout step that chose its coins before this commit then fails its reservation (kv/chain_state.ts
 * checks the lock absent) instead of recording a transaction over a coin that is gone, which the node would refuse
 * and which would wait to be proven dead for nothing.
 */
export function addSpent(
  atomic: Deno.AtomicOperation,
  chain: UtxoChain,
  outpoints: readonly Outpoint[],
  spentBy: string,
): Deno.AtomicOperation {
  for (const o of outpoints) {
    assertOutpoint(o);
    atomic.delete(coinKey(chain, o)).set(coinLockKey(chain, o), { txHash: spentBy }).delete(coinHoldKey(chain, o))
      .set(spentCoinKey(chain, o), { spentBy });
  }
  return atomic;
}

// ---------------------------------------------------------------- account balances

/** Records the balance the adapter read for an address we own (replacing the previous reading). */
export async function setAccountBalance(kv: Deno.Kv, b: AccountBalance): Promise<void> {
  await addAccountBalance(kv.atomic(), b).commit();
}

/** `setAccountBalance` inside the caller's commit (the sweeper's: with the mark or the sweep it settles). */
export function addAccountBalance(atomic: Deno.AtomicOperation, b: AccountBalance): Deno.AtomicOperation {
  if (!isChainOf("account", b.chain)) throw new RangeError(`${String(b.chain)} is not an account chain`);
  if (typeof b.address !== "string" || b.address === "") throw new RangeError("address is required");
  assertDerivationIndex(b.derivationIndex);
  if (typeof b.balance !== "bigint" || b.balance < 0n) throw new RangeError("balance must not be negative");
  if (typeof b.reserve !== "bigint" || b.reserve < 0n) throw new RangeError("reserve must not be negative");
  return atomic.set(
    balanceKey(b.chain, b.address),
    {
      chain: b.chain,
      address: b.address,
      derivationIndex: b.derivationIndex,
      balance: b.balance.toString(),
      reserve: b.reserve.toString(),
    } satisfies StoredBalance,
  );
}

/** Every balance record of `chain` (what each deposit address keeps, by the sweeper). */
export async function listAccountBalances(kv: Deno.Kv, chain: AccountChain): Promise<AccountBalance[]> {
  const out: AccountBalance[] = [];
  for await (const e of kv.list<StoredBalance>({ prefix: ["treasury_balance", chain] })) {
    out.push(fromStoredBalance(e.value));
  }
  return out;
}

const fromStoredBalance = (s: StoredBalance): AccountBalance => ({
  ...s,
  balance: BigInt(s.balance),
  reserve: BigInt(s.reserve),
});

export async function readAccountBalance(
  kv: Deno.Kv,
  chain: AccountChain,
  address: string,
): Promise<AccountBalance | null> {
  const v = (await kv.get<StoredBalance>(balanceKey(chain, address))).value;
  return v === null ? null : fromStoredBalance(v);
}

export async function accountTotals(kv: Deno.Kv, chain: AccountChain): Promise<Totals> {
  const totals: Totals = { confirmed: 0n, locked: 0n, spendable: 0n };
  const locked = new Set<string>();
  for await (const e of kv.list({ prefix: ["treasury_account_lock", chain] })) locked.add(String(e.key[2]));
  for await (const e of kv.list<StoredBalance>({ prefix: ["treasury_balance", chain] })) {
    const b = fromStoredBalance(e.value);
    totals.confirmed += b.balance;
    if (locked.has(b.address)) totals.locked += b.balance;
    else if (b.balance > b.reserve) totals.spendable += b.balance - b.reserve;
  }
  return totals;
}

// ---------------------------------------------------------------- sweeps

export interface SweepInput {
  sweepId: string;
  chain: AccountChain;
  from: { address: string; derivationIndex: number };
  to: string;
  amount: bigint;
  leave: bigint;
  /** The signed sweep (adapter `prepareSweep`): recorded with its reservations before it is broadcast. */
  tx: PreparedTx;
  at: Date;
  /**
   * Keys that must still be as read (the hot-wallet record the destination was chosen from: a rotation committed
   * since refuses the sweep, which is prepared again into the wallet then in effect).
   */
  checks?: Deno.AtomicCheck[];
}

export type RecordSweepResult =
  | { ok: true; sweep: Sweep }
  /** `address_busy`: another sweep of the address is open (`openSweepId`); `exists`: this sweep id is recorded. */
  | { ok: false; reason: "address_busy"; openSweepId: string }
  | { ok: false; reason: "exists"; sweep: Sweep }
  /** A reservation of the transaction (a coin, a nonce) is taken: nothing was recorded. */
  | { ok: false; reason: "reservation_taken" };

/**
 * Records a prepared sweep, locking the address and the transaction's reservations in the same atomic: either all
 * of it is written, or nothing (and the sweep must not be broadcast). Throws RangeError for bad input.
 */
export async function recordSweep(kv: Deno.Kv, input: SweepInput): Promise<RecordSweepResult> {
  const { chain, from, tx } = input;
  if (!isChainOf("account", chain)) {
    throw new RangeError(`${String(chain)} is not an account chain (UTXO chains need no sweep)`);
  }
  if (typeof input.sweepId !== "string" || input.sweepId === "") throw new RangeError("sweepId is required");
  if (typeof from?.address !== "string" || from.address === "") throw new RangeError("from.address is required");
  assertDerivationIndex(from.derivationIndex);
  if (typeof input.to !== "string" || input.to === "") throw new RangeError("to is required");
  if (input.to === from.address) throw new RangeError("a sweep must move funds to another address");
  if (typeof input.amount !== "bigint" || input.amount <= 0n) throw new RangeError("sweep amount must be positive");
  if (typeof input.leave !== "bigint" || input.leave < 0n) throw new RangeError("sweep leave must not be negative");
  if (!tx?.txHash || typeof tx.raw !== "string") throw new RangeError("the signed sweep transaction is required");

  // Checked before the commit: a record that would fail its schema on read is refused, naming the field, and nothing
  // is written (so nothing is broadcast).
  const sweep: Sweep = validRecord(
    SweepSchema,
    sweepSubject(chain, input.sweepId),
    {
      sweepId: input.sweepId,
      chain,
      from: { address: from.address, derivationIndex: from.derivationIndex },
      to: input.to,
      amount: input.amount.toString(),
      leave: input.leave.toString(),
      txHash: tx.txHash,
      raw: tx.raw,
      preparedAt: input.at.toISOString(),
      ...(tx.expiry ? { expiry: tx.expiry } : {}),
      ...(tx.consumes ? { consumes: tx.consumes } : {}),
      status: "prepared",
    } satisfies Sweep,
  );
  const key = sweepKey(chain, sweep.sweepId);
  const lock = accountLockKey(chain, from.address);
  const atomic = kv.atomic()
    .check({ key, versionstamp: null }, { key: lock, versionstamp: null }, ...(input.checks ?? []))
    .set(key, sweep)
    .set(lock, { sweepId: sweep.sweepId, txHash: tx.txHash } satisfies AccountLock);
  if ((await addReservations(atomic, tx).commit()).ok) return { ok: true, sweep };

  const existing = await readSweep(kv, chain, sweep.sweepId);
  if (existing !== null) return { ok: false, reason: "exists", sweep: existing };
  const holder = await kv.get<AccountLock>(lock);
  if (holder.value !== null) return { ok: false, reason: "address_busy", openSweepId: holder.value.sweepId };
  // A reservation taken, or a key of `checks` changed since read (both: prepare again).
  return { ok: false, reason: "reservation_taken" };
}

/** How a sweep record is named in errors and alerts: its key. */
export function sweepSubject(chain: AccountChain, sweepId: string): string {
  return sweepKey(chain, sweepId).join("/");
}

/**
 * The stored sweep, checked against its schema, or null when none is recorded. Throws InvalidRecordError, naming the
 * key and the bad fields, for a stored record that fails it: never handed out as a Sweep to act on.
 */
async function readSweepEntry(kv: Deno.Kv, chain: AccountChain, sweepId: string): Promise<Deno.KvEntry<Sweep> | null> {
  const entry = await kv.get<unknown>(sweepKey(chain, sweepId));
  if (entry.versionstamp === null) return null;
  const parsed = parseRecord(SweepSchema, sweepSubject(chain, sweepId), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { key: entry.key, value: parsed.value, versionstamp: entry.versionstamp };
}

/** The stored sweep, or null; throws InvalidRecordError for a stored record that fails its schema. */
export async function readSweep(kv: Deno.Kv, chain: AccountChain, sweepId: string): Promise<Sweep | null> {
  return (await readSweepEntry(kv, chain, sweepId))?.value ?? null;
}

/**
 * Every sweep recorded on `chain`, each checked: the valid ones, and the stored ones that fail their schema (for the
 * reader to report, never to count on a guess).
 */
export async function listSweeps(
  kv: Deno.Kv,
  chain: AccountChain,
): Promise<{ sweeps: Sweep[]; invalid: InvalidRecordError[] }> {
  const sweeps: Sweep[] = [], invalid: InvalidRecordError[] = [];
  for await (const e of kv.list<unknown>({ prefix: ["treasury_sweep", chain] })) {
    const parsed = parseRecord(SweepSchema, e.key.map(String).join("/"), e.value);
    if (parsed.ok) sweeps.push(parsed.value);
    else invalid.push(parsed.error);
  }
  return { sweeps, invalid };
}

/** Every open sweep of `chain` (one per locked address): what a retired hot wallet's drain waits for. */
export async function listOpenSweeps(kv: Deno.Kv, chain: AccountChain): Promise<Sweep[]> {
  const open: Sweep[] = [];
  for await (const e of kv.list<AccountLock>({ prefix: ["treasury_account_lock", chain] })) {
    const sweep = await readSweep(kv, chain, e.value.sweepId);
    if (sweep) open.push(sweep);
  }
  return open;
}

/** The open sweep of `address`, if any. */
/**
 * Adds to `atomic` the check that `address` still has no open sweep (no account lock), as read before: a decision
 * taken on "nothing is being swept from here" (clearing a deposit's sweep mark because the address holds only its
 * reserve) must not commit if a sweep was recorded meanwhile. Two ticks may overlap when a lease runs out mid-tick;
 * without this, the one that read no open sweep and then the balance the other's sweep left would clear the mark,
 * and the other's recorded sweep would have no mark left to drive it.
 */
export function checkNoOpenSweep(atomic: Deno.AtomicOperation, chain: AccountChain, address: string): void {
  atomic.check({ key: accountLockKey(chain, address), versionstamp: null });
}

export async function openSweep(kv: Deno.Kv, chain: AccountChain, address: string): Promise<Sweep | null> {
  const lock = (await kv.get<AccountLock>(accountLockKey(chain, address))).value;
  return lock === null ? null : await readSweep(kv, chain, lock.sweepId);
}

export type SettleSweepResult =
  | { ok: true; sweep: Sweep }
  | { ok: false; reason: "not_found" }
  /** It was already settled the other way (completed, or proven dead): nothing changed. */
  | { ok: false; reason: "settled"; sweep: Sweep };

/**
 * The sweep's transaction is final on chain: the sweep is done and the address free for the next one. `delivered`
 * (what the chain says the hot wallet received) is recorded with the fee it implies; in the same commit the address's
 * balance record says it keeps the sweep's `leave`.
 */
export async function completeSweep(
  kv: Deno.Kv,
  chain: AccountChain,
  sweepId: string,
  final: { blockNumber: number; at: Date; delivered?: bigint },
  settling: SettlingWrites = () => {},
): Promise<SettleSweepResult> {
  return await settleSweep(
    kv,
    chain,
    sweepId,
    "completed",
    (s) => ({
      ...s,
      status: "completed",
      blockNumber: final.blockNumber,
      completedAt: final.at.toISOString(),
      ...(final.delivered === undefined ? {} : sweepDelivery(s, final.delivered)),
    }),
    (atomic, s) => {
      settling(atomic);
      addAccountBalance(atomic, {
        chain,
        address: s.from.address,
        derivationIndex: s.from.derivationIndex,
        balance: BigInt(s.leave),
        reserve: BigInt(s.leave),
      });
    },
  );
}

/**
 * What a sweep delivered and the fee it paid, from what the hot wallet received: the fee is what left the address
 * (`amount`) less that. Never negative: a chain that moved more than asked (a coin arriving meanwhile) paid a fee the
 * hot wallet's credit cannot show, recorded as 0.
 */
export function sweepDelivery(s: Pick<Sweep, "amount">, delivered: bigint): { delivered: string; fee: string } {
  const fee = BigInt(s.amount) - delivered;
  return { delivered: delivered.toString(), fee: (fee > 0n ? fee : 0n).toString() };
}

/**
 * Records what a sweep completed before deliveries were recorded delivered, read from the chain once: later reads
 * (reconciliation) find it stored instead of asking the chain again. Only a completed record without it is written,
 * checked against the record as read.
 */
export async function backfillSweepDelivery(
  kv: Deno.Kv,
  chain: AccountChain,
  sweepId: string,
  delivered: bigint,
): Promise<void> {
  const entry = await readSweepEntry(kv, chain, sweepId);
  const s = entry?.value;
  if (!entry || !s || s.status !== "completed" || s.fee !== undefined) return;
  const next = validRecord(SweepSchema, sweepSubject(chain, sweepId), { ...s, ...sweepDelivery(s, delivered) });
  await kv.atomic().check(entry).set(entry.key, next).commit();
}

/**
 * The sweep's transaction is proven never to land (the adapter's `txStatus` answered `dead`): the record keeps the
 * proof, and the address and what the transaction reserved (`settling`) are released in the same atomic, so a new
 * sweep may be signed.
 */
export async function sweepDead(
  kv: Deno.Kv,
  chain: AccountChain,
  sweepId: string,
  dead: { proof: DeathProof; detail: string; at: Date },
  settling: SettlingWrites,
): Promise<SettleSweepResult> {
  return await settleSweep(
    kv,
    chain,
    sweepId,
    "dead",
    (s) => ({ ...s, status: "dead", proof: dead.proof, detail: dead.detail, deadAt: dead.at.toISOString() }),
    settling,
  );
}

/**
 * The writes of a sweep's settling for the same atomic (kv/sent_tx_effects.ts turns the driver's effects into them;
 * that writer reads this store's coin keys, so it is handed in rather than imported here).
 */
export type SettlingWrites = (atomic: Deno.AtomicOperation) => void;

const MAX_SETTLE_ATTEMPTS = 10;

/** Moves a prepared sweep to `to` (idempotent when it is there already), releasing its address lock. */
async function settleSweep(
  kv: Deno.Kv,
  chain: AccountChain,
  sweepId: string,
  to: Exclude<SweepStatus, "prepared">,
  settled: (s: Sweep) => Sweep,
  effects?: (atomic: Deno.AtomicOperation, s: Sweep) => void,
): Promise<SettleSweepResult> {
  const key = sweepKey(chain, sweepId);
  for (let attempt = 1;; attempt++) {
    const entry = await readSweepEntry(kv, chain, sweepId); // throws for a stored record failing its schema
    if (entry === null) return { ok: false, reason: "not_found" };
    const sweep = entry.value;
    if (sweep.status === to) return { ok: true, sweep };
    if (sweep.status !== "prepared") return { ok: false, reason: "settled", sweep };
    const next = validRecord(SweepSchema, sweepSubject(chain, sweepId), settled(sweep));
    const atomic = kv.atomic().check(entry).set(key, next).delete(accountLockKey(chain, sweep.from.address));
    effects?.(atomic, sweep);
    if ((await atomic.commit()).ok) return { ok: true, sweep: next };
    if (attempt >= MAX_SETTLE_ATTEMPTS) throw new Error(`sweep ${chain} ${sweepId}: too many concurrent changes`);
  }
}

// ---------------------------------------------------------------- sweeps due

/**
 * Written by the commit that completes a mint from an account chain: the deposit it minted is to be swept into the
 * hot wallet. Keyed by the mint order (whose id names the sweep), it holds the deposit's transfer, from which the
 * sweeper reads the deposit address. Cleared once a sweep of the address is final or nothing is left to sweep.
 */
export function sweepDueKey(chain: AccountChain, orderId: string): Deno.KvKey {
  return ["treasury_sweep_due", chain, orderId];
}

export interface SweepDue {
  orderId: string;
  /** The minted deposit: where its funds arrived. */
  source: { txHash: string; index: number };
  /** Sweeps of this deposit proven dead so far; the next one is recorded under `sweepIdOf(due)`. */
  deadSweeps: number;
}

/** The id the next sweep of a due deposit is recorded under: one per attempt, the first one the order id. */
export function sweepIdOf(due: SweepDue): string {
  return due.deadSweeps === 0 ? due.orderId : `${due.orderId}#${due.deadSweeps}`;
}

export function addSweepDue(
  atomic: Deno.AtomicOperation,
  chain: AccountChain,
  orderId: string,
  source: SweepDue["source"],
): Deno.AtomicOperation {
  return atomic.set(sweepDueKey(chain, orderId), { orderId, source, deadSweeps: 0 } satisfies SweepDue);
}

export async function listSweepsDue(
  kv: Deno.Kv,
  chain: AccountChain,
  limit: number,
): Promise<Deno.KvEntry<SweepDue>[]> {
  const out: Deno.KvEntry<SweepDue>[] = [];
  for await (const e of kv.list<SweepDue>({ prefix: ["treasury_sweep_due", chain] }, { limit })) out.push(e);
  return out;
}

// ---------------------------------------------------------------- payouts waiting on the chain

/**
 * What the order actor last saw of a UTXO burn's recorded payout while it was not yet counted (pending in a mempool,
 * unknown to the node, or included with too few confirmations), written in the step's own commit: what `deno task
 * admin treasury` shows of a stuck payout without asking a node. Removed when the order leaves `burning`.
 */
export interface PayoutObservation {
  state: "pending" | "unknown" | "included";
  confirmations?: number;
  /** When it was seen so. */
  at: string;
}

export function payoutObservationKey(orderId: string): Deno.KvKey {
  return ["treasury_payout_seen", orderId];
}

export async function readPayoutObservation(kv: Deno.Kv, orderId: string): Promise<PayoutObservation | null> {
  return (await kv.get<PayoutObservation>(payoutObservationKey(orderId))).value;
}
