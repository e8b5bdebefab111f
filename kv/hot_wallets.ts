/**
 * The hot wallet in effect per account chain and the wallets it retired (model/hot_wallet.ts): key layout, reads and
 * the version-checked write. Absent means index 0 (chains/derivation.ts `HOT_WALLET_PATHS`), so a deployment from
 * before rotations keeps its address without a migration.
 */
import type { AccountChain, UtxoChain } from "../chains/catalog.ts";
import {
  type ChangeAddressState,
  ChangeAddressStateSchema,
  type HotWalletState,
  HotWalletStateSchema,
} from "../model/hot_wallet.ts";
import { parseRecord, validRecord } from "../model/sent_tx.ts";

export type { ChangeAddressState, HotWalletState } from "../model/hot_wallet.ts";

export function hotWalletStateKey(chain: AccountChain): Deno.KvKey {
  return ["hot_wallet_state", chain];
}

/** How a hot-wallet record is named in errors and alerts: its key. */
export function hotWalletSubject(chain: AccountChain): string {
  return hotWalletStateKey(chain).join("/");
}

export interface HotWalletStateEntry {
  /** Null: never rotated, index 0 in effect. */
  state: HotWalletState | null;
  versionstamp: string | null;
}

/** The stored record, checked; throws InvalidRecordError (naming the key and the bad fields) for a malformed one. */
export async function readHotWalletState(kv: Deno.Kv, chain: AccountChain): Promise<HotWalletStateEntry> {
  const entry = await kv.get<unknown>(hotWalletStateKey(chain), { consistency: "strong" });
  if (entry.versionstamp === null) return { state: null, versionstamp: null };
  const parsed = parseRecord(HotWalletStateSchema, hotWalletSubject(chain), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { state: parsed.value, versionstamp: entry.versionstamp };
}

/** The derivation index of the hot wallet in effect: 0 until the first rotation. */
export function hotIndexOf(state: HotWalletState | null): number {
  return state?.current.index ?? 0;
}

/** The index in effect on `chain`, read from KV. */
export async function readHotIndex(kv: Deno.Kv, chain: AccountChain): Promise<number> {
  return hotIndexOf((await readHotWalletState(kv, chain)).state);
}

/**
 * Adds to `atomic` the write of `state`, checked against the versionstamp it was read at: of two writers only one
 * commits. Refuses (throws InvalidRecordError, before any commit) a state failing its schema.
 */
export function addHotWalletState(
  atomic: Deno.AtomicOperation,
  read: HotWalletStateEntry,
  state: HotWalletState,
): Deno.AtomicOperation {
  const valid = validRecord(HotWalletStateSchema, hotWalletSubject(state.chain), state);
  const key = hotWalletStateKey(state.chain);
  return atomic.check({ key, versionstamp: read.versionstamp }).set(key, valid);
}

// ---------------------------------------------------------------- UTXO change addresses

export function changeAddressStateKey(chain: UtxoChain): Deno.KvKey {
  return ["change_address_state", chain];
}

export interface ChangeAddressStateEntry {
  /** Null: never rotated, change index 0 in effect. */
  state: ChangeAddressState | null;
  versionstamp: string | null;
}

/** The stored record, checked; throws InvalidRecordError for a malformed one. */
export async function readChangeAddressState(kv: Deno.Kv, chain: UtxoChain): Promise<ChangeAddressStateEntry> {
  const entry = await kv.get<unknown>(changeAddressStateKey(chain), { consistency: "strong" });
  if (entry.versionstamp === null) return { state: null, versionstamp: null };
  const parsed = parseRecord(ChangeAddressStateSchema, changeAddressStateKey(chain).join("/"), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { state: parsed.value, versionstamp: entry.versionstamp };
}

/** Adds the version-checked write of `state`; refuses (InvalidRecordError, before any commit) a malformed one. */
export function addChangeAddressState(
  atomic: Deno.AtomicOperation,
  read: ChangeAddressStateEntry,
  state: ChangeAddressState,
): Deno.AtomicOperation {
  const key = changeAddressStateKey(state.chain);
  const valid = validRecord(ChangeAddressStateSchema, key.join("/"), state);
  return atomic.check({ key, versionstamp: read.versionstamp }).set(key, valid);
}
