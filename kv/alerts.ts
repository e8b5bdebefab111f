/**
 * Operator alerts: conditions the service cannot resolve alone and will not guess about (a fee cap reached, a reorg
 * deeper than the watcher's window, a reorg deeper than a chain's required confirmations, a nonce taken outside the pipeline, errors that persist). One record per
 * (kind, subject), so a condition that repeats every tick raises one alert with a count, never a growing list.
 * `deno task admin alerts` lists them; `alerts clear` acknowledges one. Key layout lives here and nowhere else.
 */
import type { ChainSymbol } from "../chains/catalog.ts";

export const ALERT_KINDS = [
  "fee_cap_reached",
  "deep_reorg",
  "nonce_used_elsewhere",
  "persistent_errors",
  "chain_disabled",
  "invalid_record",
  "reorg_past_finality",
  "cap_exceeded",
  // On-chain burns (docs/onchain-burn.md): the transfer address's key is not ours; it holds too little.
  "burn_disabled",
  "burn_balance_short",
  "transfer_address_unfunded",
  "burn_source_missing",
  // docs/reconciliation.md: the scheduled reconciliation (actors/reconcile_schedule.ts) found coins that do not add up.
  "reconciliation_mismatch",
  // Refunds of held records (docs/refunds.md): a refund waits for an operator; one failed on chain.
  "refund_waiting",
  "refund_failed",
  // Verify before record (chains/effects.ts): a prepared transaction whose own bytes do not do what was asked was
  // refused, never recorded nor broadcast; the message names each difference.
  "transaction_mismatch",
  // The minter key's allowance on a uAsset (docs/live-chains.md "Minter allowance") is running out: the admin tops it
  // up.
  "minter_allowance_low",
  // A chain's watcher stayed behind its lag threshold for WATCHER_LAG_ALERT_MINUTES (actors/watcher_lag.ts); cleared
  // when it catches up.
  "watcher_lagging",
  // docs/operations.md "Roles": a deposit address was asked of an api process while the chain's pool (filled by the
  // worker) was empty; the partner was answered 503 and nothing was written.
  "deposit_pool_empty",
  // A chain's cold address was changed or a change was cancelled (kv/cold_addresses.ts): raised at once, whoever did
  // it, so a stolen operator key cannot redirect reserves unseen during the delay before the change takes effect.
  "cold_address_change",
  // A chain's hot wallet is below its band's floor, or its waiting payouts exceed what is hot (actors/hot_band.ts):
  // the message says how much to send from cold; cleared when the hot wallet is back within its band.
  "hot_wallet_refill",
  // A chain's hot funds are above its band's ceiling and the surplus cannot go to cold (actors/cold_sweep.ts): no cold
  // address in effect, a change of it waiting for its delay, or the cold account cannot be created by the amount;
  // cleared once a cold sweep is recorded or the hot funds are back under the ceiling.
  "cold_sweep_blocked",
  // docs/operations.md "Roles", the signer process (actors/signer/service.ts): it refused to sign (an unknown or
  // missing purpose, bytes that do not do what the purpose's record says, a digest that is not the bytes', the hourly
  // outflow limit); subject: the purpose (`order:<id>`), the message names the chain and the reason. Nothing was
  // signed.
  "signer_refused",
  // A chain's hot wallet was rotated to a new derivation index (docs/operations.md "Rotating a hot wallet"): raised at
  // once, like a cold address change, then counted again as the old wallet's drain is recorded and settles.
  "hot_wallet_rotation",
] as const;
export type AlertKind = typeof ALERT_KINDS[number];

export interface Alert {
  kind: AlertKind;
  /** What the alert is about, unique within its kind: an order id, a chain, a transaction hash. */
  subject: string;
  chain: ChainSymbol | null;
  message: string;
  /** How often it was raised since it was first seen (or last cleared). */
  count: number;
  firstAt: string;
  lastAt: string;
  /**
   * `reorg_past_finality`: what the replaced blocks touched, recorded for the operator: confirmed orders whose source
   * transfer was in them (with their status then, and whether they were held) and treasury coins confirmed in them.
   */
  touched?: Touched;
}

export interface Touched {
  orders: { id: string; status: string; held: boolean }[];
  coins: string[];
}

const alertKey = (kind: AlertKind, subject: string): Deno.KvKey => ["alert", kind, subject];

export interface RaiseAlert {
  kind: AlertKind;
  subject: string;
  chain?: ChainSymbol | null;
  message: string;
  now?: Date;
  touched?: Touched;
}

/** The alert `a` makes of what is stored under its key (`stored`): a first record, or the stored one counted again. */
function nextAlert(stored: Alert | null, a: RaiseAlert): Alert {
  const at = (a.now ?? new Date()).toISOString();
  return stored
    ? {
      ...stored,
      message: a.message,
      count: stored.count + 1,
      lastAt: at,
      ...(a.touched ? { touched: a.touched } : {}),
    }
    : {
      kind: a.kind,
      subject: a.subject,
      chain: a.chain ?? null,
      message: a.message,
      count: 1,
      firstAt: at,
      lastAt: at,
      ...(a.touched ? { touched: a.touched } : {}),
    };
}

/** Records (or counts again) an alert. Returns the stored alert; never throws on a lost race, it retries. */
export async function raiseAlert(kv: Deno.Kv, a: RaiseAlert): Promise<Alert> {
  const key = alertKey(a.kind, a.subject);
  for (;;) {
    const entry = await kv.get<Alert>(key);
    const next = nextAlert(entry.value, a);
    if ((await kv.atomic().check(entry).set(key, next).commit()).ok) return next;
  }
}

/** The alert's current entry, for `addAlert` (read before the atomic it joins). */
export async function readAlert(kv: Deno.Kv, kind: AlertKind, subject: string): Promise<Deno.KvEntryMaybe<Alert>> {
  return await kv.get<Alert>(alertKey(kind, subject));
}

/**
 * Raises an alert inside another atomic (checked against `entry`, read with `readAlert`), so the condition and its
 * alert are written together: a crash can never leave one without the other.
 */
export function addAlert(op: Deno.AtomicOperation, entry: Deno.KvEntryMaybe<Alert>, a: RaiseAlert): void {
  op.check(entry).set(alertKey(a.kind, a.subject), nextAlert(entry.value, a));
}

export async function getAlert(kv: Deno.Kv, kind: AlertKind, subject: string): Promise<Alert | null> {
  return (await kv.get<Alert>(alertKey(kind, subject))).value;
}

export async function listAlerts(kv: Deno.Kv, kind?: AlertKind): Promise<Alert[]> {
  const out: Alert[] = [];
  const prefix: Deno.KvKey = kind ? ["alert", kind] : ["alert"];
  for await (const e of kv.list<Alert>({ prefix })) out.push(e.value);
  return out;
}

/**
 * Clears an alert (an operator acknowledges it, or the watcher saw its condition end); it comes back if the condition
 * is raised again. `audit` adds the operator's audit entry to the same atomic. False when there is no such alert.
 */
export async function clearAlert(
  kv: Deno.Kv,
  kind: AlertKind,
  subject: string,
  audit?: (op: Deno.AtomicOperation, alert: Alert) => void,
): Promise<boolean> {
  for (;;) {
    const entry = await kv.get<Alert>(alertKey(kind, subject));
    if (!entry.value) return false;
    const op = kv.atomic().check(entry).delete(alertKey(kind, subject));
    audit?.(op, entry.value);
    if ((await op.commit()).ok) return true;
  }
}
