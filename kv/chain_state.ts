/**
 * The only KV code chain adapters need (docs/architecture.md "Where the chain code goes"): nonce counters, mint notes,
 * coin locks, and the versions of a recorded transaction (EVM fee-bumped replacements). Adapters never write KV to
 * reserve: they return `Reservation`s as data, and `addReservations` turns them into checks and writes of the atomic
 * that records the transaction, so a transaction is recorded together with all it reserves, or not at all.
 * `addReleases` gives back what a transaction proven dead held, in the atomic that records its death.
 */
import type { ChainSymbol, EvmChain } from "../chains/catalog.ts";
import type { Consumed, Outpoint, PreparedTx, Reservation } from "../chains/adapter.ts";
import { addHotWalletHold } from "./hot_wallet.ts";
import { raiseAlert } from "./alerts.ts";
import type { EvmState, MintNote, NonceCounter, Replacement } from "../chains/evm/state.ts";

export type { MintNote, NonceCounter, Replacement };

/** The EVM adapter's state (chains/evm/state.ts) kept in `kv`, under the keys below. */
export function evmKvState(kv: Deno.Kv): EvmState {
  return {
    readNonceCounter: (chain, account) => readNonceCounter(kv, chain, account),
    readMintNote: (chain, depositId) => readMintNote(kv, chain, depositId),
    readReplacements: (chain, originalHash) => readReplacements(kv, chain, originalHash),
    recordReplacements: (entry, chain, originalHash, replacements) =>
      recordReplacements(kv, entry, chain, originalHash, replacements),
    async raiseFeeCapReached(chain, originalHash, message, at) {
      if (!(await claimFeeCapReached(kv, chain, originalHash, at))) return false;
      await raiseAlert(kv, { kind: "fee_cap_reached", subject: originalHash, chain, message, now: new Date(at) });
      return true;
    },
  };
}

/** The next nonce of a minter account, consumed in the same atomic that records the transaction using it. */
export function nonceKey(chain: EvmChain, address: string): Deno.KvKey {
  return ["evm_nonce", chain, address.toLowerCase()];
}

/**
 * An XRPL account's `Sequence` held by the recorded transaction using it (`sequence` reservation): one transaction per
 * (account, Sequence) until it is proven dead. Addresses are case-sensitive base58: kept as given.
 */
export function sequenceLockKey(chain: "xrp", account: string, sequence: number): Deno.KvKey {
  return ["account_sequence_lock", chain, account, sequence];
}

export function mintNoteKey(chain: EvmChain, depositId: string): Deno.KvKey {
  return ["evm_mint_note", chain, depositId.toLowerCase()];
}

/** Replacements of `originalHash`, oldest first; written before each replacement is broadcast. */
export function replacementsKey(chain: EvmChain, originalHash: string): Deno.KvKey {
  return ["evm_replacements", chain, originalHash.toLowerCase()];
}

export async function readReplacements(
  kv: Deno.Kv,
  chain: EvmChain,
  originalHash: string,
): Promise<Deno.KvEntryMaybe<Replacement[]>> {
  return await kv.get<Replacement[]>(replacementsKey(chain, originalHash));
}

/**
 * Records the versions of `originalHash` (the list read as `entry`, plus a new one) before the new one is sent; false
 * when another writer changed the list since it was read (nothing written).
 */
export async function recordReplacements(
  kv: Deno.Kv,
  entry: Deno.KvEntryMaybe<Replacement[]>,
  chain: EvmChain,
  originalHash: string,
  replacements: Replacement[],
): Promise<boolean> {
  return (await kv.atomic().check(entry).set(replacementsKey(chain, originalHash), replacements).commit()).ok;
}

/** Set once the fee cap (or the version limit) stopped the replacements of `originalHash`: one alert, not one a tick. */
export function feeCapReachedKey(chain: EvmChain, originalHash: string): Deno.KvKey {
  return ["evm_fee_cap_reached", chain, originalHash.toLowerCase()];
}

/** Claims the fee-cap marker of `originalHash`: true the first time only. */
export async function claimFeeCapReached(
  kv: Deno.Kv,
  chain: EvmChain,
  originalHash: string,
  at: number,
): Promise<boolean> {
  const key = feeCapReachedKey(chain, originalHash);
  return (await kv.atomic().check({ key, versionstamp: null }).set(key, at).commit()).ok;
}

/** A coin (UTXO) locked to the recorded transaction that spends it; absent while the coin is free. */
export function coinLockKey(chain: ChainSymbol, outpoint: Outpoint): Deno.KvKey {
  return ["chain_coin_lock", chain, outpoint.txHash, outpoint.index];
}

export interface CoinLock {
  txHash: string;
}

export async function readNonceCounter(kv: Deno.Kv, chain: EvmChain, account: string): Promise<NonceCounter> {
  const entry = await kv.get<bigint>(nonceKey(chain, account));
  return { next: entry.value, versionstamp: entry.versionstamp };
}

export async function readMintNote(kv: Deno.Kv, chain: EvmChain, depositId: string): Promise<MintNote | null> {
  return (await kv.get<MintNote>(mintNoteKey(chain, depositId))).value;
}

/** Who holds each coin now (null: free). */
export async function coinLocks(kv: Deno.Kv, chain: ChainSymbol, outpoints: Outpoint[]): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < outpoints.length; i += 10) {
    const entries = await kv.getMany<CoinLock[]>(outpoints.slice(i, i + 10).map((o) => coinLockKey(chain, o)));
    out.push(...entries.map((e) => e.value?.txHash ?? null));
  }
  return out;
}

/** Adds `tx`'s reservations to the atomic that records it: the commit fails if any of them is taken. */
export function addReservations(atomic: Deno.AtomicOperation, tx: PreparedTx): Deno.AtomicOperation {
  for (const r of tx.reservations ?? []) addReservation(atomic, r, tx.txHash);
  return atomic;
}

function addReservation(atomic: Deno.AtomicOperation, r: Reservation, txHash: string): void {
  switch (r.kind) {
    case "nonce": {
      const key = nonceKey(r.chain, r.account);
      atomic.check({ key, versionstamp: r.expectVersion }).set(key, r.nonce + 1n);
      return;
    }
    case "mintNote":
      atomic.set(mintNoteKey(r.chain, r.depositId), { asset: r.asset, txHash: r.txHash } satisfies MintNote);
      return;
    case "coins":
      for (const o of r.outpoints) {
        const key = coinLockKey(r.chain, o);
        atomic.check({ key, versionstamp: null }).set(key, { txHash } satisfies CoinLock);
      }
      return;
    case "sequence": {
      const key = sequenceLockKey(r.chain, r.account, r.sequence);
      atomic.check({ key, versionstamp: null }).set(key, { txHash } satisfies CoinLock);
      return;
    }
    case "hotWallet":
      addHotWalletHold(atomic, r.chain, r.epoch, r.epochValue, txHash, r.amount, r.hotIndex ?? 0);
      return;
  }
}

/**
 * Gives back what a transaction proven dead consumed, in the atomic that records its death (checked against the
 * order's version, so it runs once): its coins are free again. An EVM nonce is never given back: the transaction that
 * proved it dead used it. An XRPL Sequence lock is: an expired transaction did not use its Sequence, and one used by
 * another transaction (or by our own failed one) is past the account's Sequence, so no new transaction can take it.
 */
export function addReleases(
  atomic: Deno.AtomicOperation,
  chain: ChainSymbol,
  consumes: Consumed | undefined,
): Deno.AtomicOperation {
  if (consumes?.kind === "outpoints") { for (const o of consumes.outpoints) atomic.delete(coinLockKey(chain, o)); }
  if (consumes?.kind === "nonce" && chain === "xrp") {
    atomic.delete(sequenceLockKey(chain, consumes.account, consumes.nonce));
  }
  return atomic;
}
