/**
 * What `deno task admin treasury --chain doge|zec` shows, read from KV alone (no node is asked, so it works on a live
 * KV read-only and in sim mode alike): balances (confirmed, locked, spendable, held, coinbase, and pending deposits
 * seen but not yet confirmed), the coins an operator must look at, the payouts waiting for funds and whether each is
 * fundable now (coin selection under the chain's fee rule, oldest first, each taking its coins from the pool), the
 * payouts recorded but not yet counted (stuck payouts) with their age and last status, and any open consolidation.
 */
import { type NativeChain, type UtxoChain, weiToNative } from "../chains/catalog.ts";
import { MAX_TX_INPUTS, selectCoins } from "../chains/shared/coin_select.ts";
import { changeDustLimit, utxoFee } from "../chains/shared/utxo_fee.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { type Consolidation, openConsolidation } from "../kv/consolidations.ts";
import { InvalidRecordError } from "../model/sent_tx.ts";
import { displayAmount, nativeUnit } from "../model/amounts.ts";
import { getOrder, listOrderIdsByStatus } from "../kv/orders.ts";
import { type Order, type OrderStatus } from "../model/order.ts";
import { coinStates, isSpendable, type PayoutObservation, readPayoutObservation } from "../kv/treasury.ts";

export interface TreasuryReport {
  chain: UtxoChain;
  at: string;
  /** Smallest units, decimal strings. */
  balances: {
    confirmed: string;
    locked: string;
    spendable: string;
    held: string;
    coinbase: string;
    pending: string;
  };
  utxoCount: number;
  spendableCount: number;
  /** Coins not spendable for a reason an operator must look at: held after a reorg, or coinbase. */
  heldCoins: { outpoint: string; amount: string; height: number; coinbase: boolean; reason: string }[];
  pendingDeposits: { orderId: string; amount: string; outpoint: string; blockNumber: number; note?: string }[];
  pendingPayouts: {
    orderId: string;
    status: OrderStatus;
    amount: string;
    heldReason?: string;
    fundable: boolean;
    /** When fundable: the coins it would spend and the fee; else why not. */
    inputs?: number;
    fee?: string;
    why?: string;
  }[];
  stuckPayouts: {
    orderId: string;
    txHash: string;
    outpoints: string[];
    amount: string;
    recordedAt: string;
    ageMs: number;
    age: string;
    lastStatus: PayoutObservation | null;
  }[];
  consolidation: Consolidation | null;
  /** The open consolidation's stored record fails its schema (its key and bad fields): shown, never acted on. */
  consolidationInvalid?: string;
}

const outpointText = (o: { txHash: string; index: number }) => `${o.txHash}:${o.index}`;

/** The orders in `status` that `keep` accepts, in creation order (both treasury reports list orders this way). */
export async function ordersIn(kv: Deno.Kv, status: OrderStatus, keep: (o: Order) => boolean): Promise<Order[]> {
  const out: Order[] = [];
  for (const id of await listOrderIdsByStatus(kv, status)) {
    const entry = await getOrder(kv, id);
    if (entry.versionstamp !== null && !entry.invalid && keep(entry.value)) out.push(entry.value);
  }
  return out.sort((a, b) => a.id < b.id ? -1 : 1); // UUIDv7: creation order
}

export async function treasuryReport(
  kv: Deno.Kv,
  chain: UtxoChain,
  fee: FeeFunction = utxoFee(chain),
  now = new Date(),
): Promise<TreasuryReport> {
  const states = await coinStates(kv, chain);
  let confirmed = 0n, locked = 0n, spendable = 0n, held = 0n, coinbase = 0n;
  const heldCoins: TreasuryReport["heldCoins"] = [];
  for (const s of states) {
    const a = s.coin.amount;
    confirmed += a;
    if (s.lockedBy !== null) locked += a;
    else if (isSpendable(s)) spendable += a;
    if (s.hold) held += a;
    if (s.coin.coinbase) coinbase += a;
    if (s.hold || s.coin.coinbase) {
      heldCoins.push({
        outpoint: outpointText(s.coin.outpoint),
        amount: a.toString(),
        height: s.coin.height,
        coinbase: s.coin.coinbase,
        reason: s.hold?.reason ?? "coinbase output: never spent by payouts",
      });
    }
  }
  const pool = states.filter(isSpendable).map((s) => s.coin);

  const deposits = await ordersIn(kv, "pending", (o) => o.type === "mint" && o.sourceChain === chain);
  const pendingDeposits = deposits.map((o) => ({
    orderId: o.id,
    amount: o.amount,
    outpoint: outpointText(o.details.source),
    blockNumber: o.details.source.blockNumber,
    ...(o.details.heldReason ? { note: o.details.heldReason } : {}),
  }));
  const pending = deposits.reduce((sum, o) => sum + BigInt(o.amount), 0n);

  const pendingPayouts: TreasuryReport["pendingPayouts"] = [];
  for (const o of await ordersIn(kv, "processing", (o) => o.type === "burn" && o.destinationChain === chain)) {
    const amount = weiToNative(chain, BigInt(o.amount)).native;
    const base = {
      orderId: o.id,
      status: o.status,
      amount: amount.toString(),
      ...(o.details.heldReason ? { heldReason: o.details.heldReason } : {}),
    };
    let selection;
    try {
      selection = selectCoins(pool, amount, fee, changeDustLimit(chain));
    } catch (e) {
      pendingPayouts.push({ ...base, fundable: false, why: e instanceof Error ? e.message : String(e) });
      continue;
    }
    if (!selection.ok) {
      const why = selection.reason === "too_many_inputs"
        ? `${selection.short} short within ${MAX_TX_INPUTS} coins, with the fee: consolidate the treasury`
        : `${selection.short} short, with the fee`;
      pendingPayouts.push({ ...base, fundable: false, why });
      continue;
    }
    // The next payout in line cannot count on these coins.
    for (const c of selection.inputs) pool.splice(pool.indexOf(c), 1);
    pendingPayouts.push({ ...base, fundable: true, inputs: selection.inputs.length, fee: selection.fee.toString() });
  }

  const stuckPayouts: TreasuryReport["stuckPayouts"] = (await stuckPayoutsOf(kv, chain, now)).map(
    ({ consumes, ...p }) => ({
      ...p,
      outpoints: consumes?.kind === "outpoints" ? consumes.outpoints.map(outpointText) : [],
    }),
  );

  return {
    chain,
    at: now.toISOString(),
    balances: {
      confirmed: confirmed.toString(),
      locked: locked.toString(),
      spendable: spendable.toString(),
      held: held.toString(),
      coinbase: coinbase.toString(),
      pending: pending.toString(),
    },
    utxoCount: states.length,
    spendableCount: states.filter(isSpendable).length,
    heldCoins,
    pendingDeposits,
    pendingPayouts,
    stuckPayouts,
    ...(await openConsolidationShown(kv, chain)),
  };
}

/** The open consolidation, or why its stored record cannot be shown (it fails its schema: model/sent_tx.ts). */
async function openConsolidationShown(
  kv: Deno.Kv,
  chain: UtxoChain,
): Promise<{ consolidation: Consolidation | null; consolidationInvalid?: string }> {
  try {
    return { consolidation: await openConsolidation(kv, chain) };
  } catch (err) {
    if (err instanceof InvalidRecordError) return { consolidation: null, consolidationInvalid: err.message };
    throw err;
  }
}

/** "3d 4h", "2h 5m", "7m 12s", "40s": how long, for people. */
/** Milliseconds from `iso` to `now`, never negative (a clock behind a record's time). */
export const ageSince = (iso: string, now: Date): number => Math.max(0, now.getTime() - Date.parse(iso));

/**
 * The burn orders of `chain` whose payout is recorded and not yet counted (`burning`), with the payout's age and the
 * last status the pipeline saw: what both treasury reports list as stuck payouts. `consumes` is what it spends.
 */
export async function stuckPayoutsOf(kv: Deno.Kv, chain: NativeChain, now: Date) {
  const out = [];
  for (const o of await ordersIn(kv, "burning", (o) => o.type === "burn" && o.destinationChain === chain)) {
    const intent = o.details.intent;
    if (!intent || o.type !== "burn") continue;
    const ageMs = ageSince(intent.preparedAt, now);
    out.push({
      orderId: o.id,
      txHash: intent.txHash,
      consumes: intent.consumes,
      amount: o.details.nativeAmount ?? "",
      recordedAt: intent.preparedAt,
      ageMs,
      age: formatAge(ageMs),
      lastStatus: await readPayoutObservation(kv, o.id),
    });
  }
  return out;
}

export function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60, sec = s % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${sec}s`;
  return `${sec}s`;
}

/** The report as lines for people. */
export function treasuryText(r: TreasuryReport): string[] {
  const b = r.balances;
  // Human units (model/amounts.ts); the exact integers are in `--json`.
  const $ = (v: string) => displayAmount(v, nativeUnit(r.chain));
  const lines = [
    `treasury ${r.chain} at ${r.at} (read from KV; no node was asked; exact smallest units with --json)`,
    `confirmed ${$(b.confirmed)} in ${r.utxoCount} coin(s); spendable ${$(b.spendable)} in ${r.spendableCount}; ` +
    `locked ${$(b.locked)}; held ${$(b.held)}; coinbase ${$(b.coinbase)}`,
    `pending deposits (seen, not yet confirmed): ${$(b.pending)} in ${r.pendingDeposits.length}`,
  ];
  for (const d of r.pendingDeposits) {
    lines.push(
      `  deposit ${d.orderId}\t${$(d.amount)}\t${d.outpoint}\tblock ${d.blockNumber}${d.note ? `\t${d.note}` : ""}`,
    );
  }
  lines.push(`held coins (not spent until an operator looks): ${r.heldCoins.length}`);
  for (const c of r.heldCoins) lines.push(`  coin ${c.outpoint}\t${$(c.amount)}\theight ${c.height}\t${c.reason}`);
  lines.push(`pending payouts (processing): ${r.pendingPayouts.length}`);
  for (const p of r.pendingPayouts) {
    const funding = p.fundable
      ? `fundable now (${p.inputs} input(s), fee ${p.fee === undefined ? "?" : $(p.fee)})`
      : `NOT fundable now: ${p.why}`;
    lines.push(`  payout ${p.orderId}\t${$(p.amount)}\t${funding}${p.heldReason ? `\theld: ${p.heldReason}` : ""}`);
  }
  lines.push(`stuck payouts (recorded, not yet counted): ${r.stuckPayouts.length}`);
  for (const p of r.stuckPayouts) {
    const last = p.lastStatus
      ? `${p.lastStatus.state}${
        p.lastStatus.confirmations !== undefined ? ` (${p.lastStatus.confirmations} conf)` : ""
      }` +
        ` at ${p.lastStatus.at}`
      : "not looked at yet";
    lines.push(
      `  payout ${p.orderId}\ttx ${p.txHash}\tage ${p.age} (since ${p.recordedAt})\tlast status ${last}\t` +
        `spends ${p.outpoints.join(", ")}`,
    );
  }
  const c = r.consolidation;
  if (r.consolidationInvalid) lines.push(`INVALID open consolidation record, not driven: ${r.consolidationInvalid}`);
  lines.push(
    c
      ? `open consolidation ${c.id}: tx ${c.txHash}, ${c.inputs.length} input(s) -> ${$(c.output.amount)} at ` +
        `${c.output.address}, fee ${$(c.fee)}, recorded ${c.preparedAt} by ${c.by}`
      : "no open consolidation",
  );
  return lines;
}
