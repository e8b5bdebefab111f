/**
 * The service's Prometheus metrics (every metric is described in docs/metrics.md): one prom-client registry
 * per service, served by `GET /metrics` (routes/metrics.ts).
 *
 * Two kinds of numbers:
 * - what this process saw happen (counters and histograms): orders moved by its pipeline (`orderMoved`, the order
 *   actor's `PipelineContext.onOrderMoved` hook) and its RPC calls and endpoint failures (`rpcHook`, passed to every
 *   live chain's clients). Each process counts its own; sum them across instances.
 * - what the records say now (gauges), read from KV (and from the chains, for tips and hot-wallet balances) when a
 *   scrape asks, in parts that are each kept a few seconds (`KV_REFRESH_MS`, `CHAIN_REFRESH_MS`), so a scrape is cheap
 *   however often it comes and however many processes serve it. Every process reports the same records: take the
 *   max across instances, never the sum.
 *
 * Labels are bounded by construction: types, statuses, chains, alert and mismatch kinds, configured RPC endpoints
 * (their origins only, chains/shared/redact.ts). Never an order id, an address or an amount.
 */
import { withTimeout } from "./timeout.ts";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Chains, RpcHook } from "../chains/adapter.ts";
import {
  chainsOf,
  type ChainSymbol,
  isEvmChain,
  isNativeChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  type UtxoChain,
  weiToNative,
} from "../chains/catalog.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { depositPoolSize } from "../kv/mint_wallets.ts";
import { redactUrls } from "../chains/shared/redact.ts";
import { ALERT_KINDS, listAlerts } from "../kv/alerts.ts";
import { ChainTips } from "../kv/chain_tips.ts";
import { readHotWalletHolds } from "../kv/hot_wallet.ts";
import { payerAtHotIndex } from "./hot_wallet_in_effect.ts";
import { countOrdersByTypeAndStatus, listOrderIdsByStatus, orderKey } from "../kv/orders.ts";
import { type Order, ORDER_STATUSES, type OrderStatus, type OrderType } from "../model/order.ts";
import { listHeld, listOrderHolds } from "../kv/pipeline.ts";
import { lastReconciliation } from "../kv/reconciliation.ts";
import { type CoinState, coinStates, isSpendable } from "../kv/treasury.ts";
import { selectCoins } from "../chains/shared/coin_select.ts";
import { changeDustLimit } from "../chains/shared/utxo_fee.ts";
import { ordersIn } from "./treasury_report.ts";

/** An outgoing transaction (minting, burning) recorded longer ago than this is counted as stuck. */
export const STUCK_TX_MINUTES = 60;
/** How long a scrape reuses what it read from KV. */
export const KV_REFRESH_MS = 5_000;
/** How long a scrape reuses what it asked the chains (tips, hot-wallet balances). */
export const CHAIN_REFRESH_MS = 15_000;
/** How long a scrape waits for the chains before it answers with the last values (the read goes on behind it). */
export const CHAIN_WAIT_MS = 2_000;
/** One chain read (a tip, a balance) that takes longer than this counts as failed. */
export const CHAIN_READ_TIMEOUT_MS = 5_000;
/** Seconds: from a sim chain's fractions of a second to a live doge payout's 40 confirmations and beyond. */
export const STEP_BUCKETS_SECONDS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];

/** The steps of an order's happy path, by its move; `end_to_end` is observed besides when it completes. */
const STEPS: Record<string, string> = {
  "pending>processing": "pending_to_processing",
  "processing>minting": "processing_to_minting",
  "processing>burning": "processing_to_burning",
  "minting>completed": "minting_to_completed",
  "burning>completed": "burning_to_completed",
};

/** The statuses an order takes in its life, by type (a mint is never burning): the series always exported. */
const STATUSES_OF: Record<OrderType, readonly OrderStatus[]> = {
  mint: ORDER_STATUSES.filter((s) => s !== "burning"),
  burn: ORDER_STATUSES.filter((s) => s !== "minting"),
};
const IN_FLIGHT: readonly OrderStatus[] = ["pending", "processing", "minting", "burning"];
const MAX_GET_MANY = 10; // Deno KV refuses more keys in one getMany

/** What a scrape reads: the service's KV, the chains it runs, and their adapters when this process has them. */
export interface MetricsSources {
  kv: Deno.Kv;
  /** The chains this service runs (watched, paid out on). */
  enabled: readonly ChainSymbol[];
  /** For chain tips and hot-wallet balances; null where this process has no adapters (PIPELINE=off): not exported. */
  chains: Chains | null;
  /** A UTXO chain's fee rule, as its payouts use it (coin selection in the treasury report). */
  utxoFee(chain: UtxoChain): FeeFunction;
  now(): Date;
  log?: (msg: string, err?: unknown) => void;
}

const seconds = (ms: number) => Math.max(0, ms) / 1000;
/** A bigint amount as a gauge value: exact up to 2^53 smallest units (docs/metrics.md). */
const gaugeValue = (n: bigint) => Number(n);

export class Metrics {
  readonly registry = new Registry();
  readonly #endpoints = new Map<string, string>();
  #parts: Parts | null = null;
  #scraping: Promise<string> | null = null;

  // What this process saw.
  readonly #transitions: Counter<"type" | "from" | "to">;
  readonly #steps: Histogram<"type" | "source_chain" | "destination_chain" | "step">;
  readonly #rpcCalls: Counter<"chain" | "endpoint">;
  readonly #rpcErrors: Counter<"chain" | "endpoint" | "reason">;

  constructor(opts: { processDefaults?: boolean } = {}) {
    const registers = [this.registry];
    this.#transitions = new Counter({
      name: "issuance_order_transitions_total",
      help: "Orders this process moved from one status to another.",
      labelNames: ["type", "from", "to"],
      registers,
    });
    this.#steps = new Histogram({
      name: "issuance_order_step_seconds",
      help: "How long orders took per step (time in the step's first status) and end to end, as this process saw " +
        "them move.",
      labelNames: ["type", "source_chain", "destination_chain", "step"],
      buckets: STEP_BUCKETS_SECONDS,
      registers,
    });
    this.#rpcCalls = new Counter({
      name: "issuance_rpc_requests_total",
      help: "RPC calls this process sent, per chain and endpoint (URL origin).",
      labelNames: ["chain", "endpoint"],
      registers,
    });
    this.#rpcErrors = new Counter({
      name: "issuance_rpc_errors_total",
      help: "RPC calls an endpoint failed (no answer, timeout, HTTP error, refused credentials, rate limit, not " +
        "JSON-RPC), per chain, endpoint (URL origin) and reason.",
      labelNames: ["chain", "endpoint", "reason"],
      registers,
    });
    if (opts.processDefaults ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** The Content-Type of `scrape`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** `PipelineContext.onOrderMoved`: counts the move and observes its step. Never throws. */
  readonly orderMoved = (before: Order, after: Order, at: Date): void => {
    try {
      if (before.status === after.status) return;
      this.#transitions.inc({ type: after.type, from: before.status, to: after.status });
      const labels = { type: after.type, source_chain: after.sourceChain, destination_chain: after.destinationChain };
      const step = STEPS[`${before.status}>${after.status}`];
      // `updatedAt` changes with every status (actors/transition.ts) and operator action: when the step began.
      const since = Date.parse(before.updatedAt ?? before.createdAt);
      if (step && Number.isFinite(since)) this.#steps.observe({ ...labels, step }, seconds(at.getTime() - since));
      if (after.status === "completed") {
        const created = Date.parse(after.createdAt);
        if (Number.isFinite(created)) {
          this.#steps.observe({ ...labels, step: "end_to_end" }, seconds(at.getTime() - created));
        }
      }
    } catch { /* metrics never stop an order */ }
  };

  /** The RPC hook of `chain`'s live clients: calls and endpoint failures, per endpoint origin. */
  readonly rpcHook = (chain: ChainSymbol): RpcHook => {
    const hook: RpcHook = ({ url }) => this.#rpcCalls.inc({ chain, endpoint: this.#endpoint(url) });
    hook.failed = ({ url, reason }) => this.#rpcErrors.inc({ chain, endpoint: this.#endpoint(url), reason });
    return hook;
  };

  /** The URL's origin (no credentials, path or query: providers put keys there), once per URL. */
  #endpoint(url: string): string {
    let origin = this.#endpoints.get(url);
    if (origin === undefined) {
      try {
        origin = new URL(url).origin;
      } catch {
        origin = redactUrls(url);
      }
      if (origin === "null" || origin.includes("@")) origin = "<url>";
      this.#endpoints.set(url, origin);
    }
    return origin;
  }

  /**
   * The registry as Prometheus text, with the gauges refreshed from `sources` where their part is older than its
   * refresh period. Concurrent scrapes share one.
   */
  scrape(sources: MetricsSources): Promise<string> {
    return this.#scraping ??= this.#scrape(sources).finally(() => (this.#scraping = null));
  }

  async #scrape(sources: MetricsSources): Promise<string> {
    const parts = this.#parts ??= new Parts(this.registry, sources);
    await parts.refresh();
    return await this.registry.metrics();
  }
}

/** A part of the gauges: read at most once per `maxAgeMs`, one read at a time, the last good value kept. */
class Part<T> {
  #value: { value: T; at: number } | null = null;
  #running: Promise<void> | null = null;

  constructor(
    readonly name: string,
    readonly maxAgeMs: number,
    /** How long a scrape waits for a read; null: until it ends. */
    readonly waitMs: number | null,
    private readonly read: () => Promise<T>,
    private readonly report: (part: string, ms: number, err?: unknown) => void,
  ) {}

  /** The last value read, refreshed first when older than `maxAgeMs` (waiting at most `waitMs` for it). */
  async get(nowMs: number): Promise<{ value: T; at: number } | null> {
    if (this.#value && nowMs - this.#value.at < this.maxAgeMs) return this.#value;
    const running = this.#running ??= this.#read().finally(() => (this.#running = null));
    if (this.waitMs === null) await running;
    else await within(running, this.waitMs);
    return this.#value;
  }

  async #read(): Promise<void> {
    const start = performance.now();
    try {
      const value = await this.read();
      this.#value = { value, at: Date.now() };
      this.report(this.name, performance.now() - start);
    } catch (err) {
      this.report(this.name, performance.now() - start, err);
    }
  }
}

/** Waits for `p` at most `ms` (its timer cleared either way); true when `p` settled in time. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface InFlight {
  /** Orders with a recorded transaction older than STUCK_TX_MINUTES, by type and the transaction's chain. */
  stuck: Map<string, number>;
  /** The oldest recorded, not yet final transaction's age (seconds), by type and chain. */
  oldestTx: Map<string, number>;
  /** Orders that wait with a `heldReason`, by type and status. */
  withReason: Map<string, number>;
}

interface Records {
  heldTransfers: Map<ChainSymbol, number>;
  orderHolds: number;
  alerts: Map<string, number>;
  /**
   * Pre-derived deposit addresses waiting per enabled native chain (docs/operations.md "Roles"; 0 unless a worker fills
   * it).
   */
  depositPool: Map<NativeChain, number>;
  reconciliation: { at: number; ok: boolean; mismatches: Map<string, number> } | null;
}

interface ChainTip {
  chain: ChainSymbol;
  tip: number | null;
  cursor: number | null;
}

interface PayoutFunds {
  chain: NativeChain;
  /** Null when it could not be read (a hot-wallet balance). */
  available: bigint | null;
  pendingAmount: bigint;
  pending: number;
  unfundable: number | null;
}

/** The scrape-time gauges, their parts and how each part is read. */
class Parts {
  readonly #sources: MetricsSources;
  readonly #orders: Part<Record<OrderType, Record<OrderStatus, number>>>;
  readonly #inFlight: Part<InFlight>;
  readonly #records: Part<Records>;
  readonly #tips: Part<ChainTip[]>;
  readonly #funds: Part<PayoutFunds[]>;

  readonly #g: ReturnType<typeof gauges>;
  readonly #partErrors: Counter<"part">;
  readonly #partSeconds: Gauge<"part">;

  constructor(registry: Registry, sources: MetricsSources) {
    this.#sources = sources;
    this.#g = gauges(registry);
    this.#partErrors = new Counter({
      name: "issuance_metrics_part_errors_total",
      help: "Reads of a part of the gauges that failed (its last values are served meanwhile).",
      labelNames: ["part"],
      registers: [registry],
    });
    this.#partSeconds = new Gauge({
      name: "issuance_metrics_part_read_seconds",
      help: "How long the last read of each part of the gauges took.",
      labelNames: ["part"],
      registers: [registry],
    });
    const report = (part: string, ms: number, err?: unknown) => {
      this.#partSeconds.set({ part }, ms / 1000);
      if (err !== undefined) {
        this.#partErrors.inc({ part });
        sources.log?.(`metrics: reading ${part} failed; serving its last values`, err);
      }
    };
    this.#orders = new Part("orders", KV_REFRESH_MS, null, () => countOrdersByTypeAndStatus(sources.kv), report);
    this.#inFlight = new Part("in_flight", KV_REFRESH_MS, null, () => this.#readInFlight(), report);
    this.#records = new Part("records", KV_REFRESH_MS, null, () => this.#readRecords(), report);
    this.#tips = new Part("chain_tips", CHAIN_REFRESH_MS, CHAIN_WAIT_MS, () => this.#readTips(), report);
    this.#funds = new Part("payout_funds", CHAIN_REFRESH_MS, CHAIN_WAIT_MS, () => this.#readFunds(), report);
  }

  async refresh(): Promise<void> {
    const now = Date.now();
    const [orders, inFlight, records, tips, funds] = await Promise.all([
      this.#orders.get(now),
      this.#inFlight.get(now),
      this.#records.get(now),
      this.#tips.get(now),
      this.#funds.get(now),
    ]);
    const g = this.#g;
    const age = (part: string, at: number | undefined) =>
      at === undefined ? undefined : g.partAge.set({ part }, seconds(Date.now() - at));
    age("orders", orders?.at);
    age("in_flight", inFlight?.at);
    age("records", records?.at);
    age("chain_tips", tips?.at);
    age("payout_funds", funds?.at);
    if (orders) this.#setOrders(orders.value);
    if (inFlight) this.#setInFlight(inFlight.value);
    if (records) this.#setRecords(records.value);
    if (tips) this.#setTips(tips.value);
    if (funds) this.#setFunds(funds.value);
  }

  #setOrders(counts: Record<OrderType, Record<OrderStatus, number>>) {
    this.#g.orders.reset();
    for (const type of ["mint", "burn"] as const) {
      for (const status of ORDER_STATUSES) {
        const n = counts[type][status];
        if (n > 0 || STATUSES_OF[type].includes(status)) this.#g.orders.set({ type, status }, n);
      }
    }
  }

  #setInFlight(f: InFlight) {
    const g = this.#g;
    g.stuck.reset();
    g.oldestTx.reset();
    g.withReason.reset();
    const enabled = this.#sources.enabled;
    // Zeros for every chain a type sends on, so a graph starts at 0 rather than at the first stuck transaction.
    for (const chain of enabled) {
      const type = isEvmChain(chain) ? "mint" : "burn";
      g.stuck.set({ type, chain }, 0);
    }
    for (const [key, n] of f.stuck) {
      const [type, chain] = key.split("|");
      g.stuck.set({ type, chain }, n);
    }
    for (const [key, s] of f.oldestTx) {
      const [type, chain] = key.split("|");
      g.oldestTx.set({ type, chain }, s);
    }
    for (const [key, n] of f.withReason) {
      const [type, status] = key.split("|");
      g.withReason.set({ type, status }, n);
    }
  }

  #setRecords(r: Records) {
    const g = this.#g;
    g.held.reset();
    g.held.set({ kind: "order_hold" }, r.orderHolds);
    let transfers = 0;
    g.heldTransfers.reset();
    for (const [chain, n] of r.heldTransfers) {
      g.heldTransfers.set({ chain }, n);
      transfers += n;
    }
    g.held.set({ kind: "transfer" }, transfers);
    g.alerts.reset();
    for (const kind of ALERT_KINDS) g.alerts.set({ kind }, 0);
    for (const [kind, n] of r.alerts) g.alerts.set({ kind }, n);
    g.depositPool.reset();
    for (const [chain, n] of r.depositPool) g.depositPool.set({ chain }, n);
    g.reconMismatches.reset();
    g.reconOk.reset();
    g.reconAt.set(r.reconciliation ? r.reconciliation.at / 1000 : 0);
    if (r.reconciliation) {
      g.reconOk.set(r.reconciliation.ok ? 1 : 0);
      for (const [kind, n] of r.reconciliation.mismatches) g.reconMismatches.set({ kind }, n);
    }
  }

  #setTips(tips: ChainTip[]) {
    const g = this.#g;
    for (const gauge of [g.tip, g.cursor, g.lag, g.tipUp]) gauge.reset();
    for (const t of tips) {
      g.tipUp.set({ chain: t.chain }, t.tip === null ? 0 : 1);
      if (t.tip !== null) g.tip.set({ chain: t.chain }, t.tip);
      if (t.cursor !== null) g.cursor.set({ chain: t.chain }, t.cursor);
      if (t.tip !== null && t.cursor !== null) g.lag.set({ chain: t.chain }, Math.max(0, t.tip - t.cursor));
    }
  }

  #setFunds(funds: PayoutFunds[]) {
    const g = this.#g;
    for (const gauge of [g.fundsAvailable, g.fundsUp, g.payoutsPending, g.payoutsPendingAmount, g.payoutsUnfundable]) {
      gauge.reset();
    }
    for (const f of funds) {
      const chain = f.chain;
      g.fundsUp.set({ chain }, f.available === null ? 0 : 1);
      if (f.available !== null) g.fundsAvailable.set({ chain }, gaugeValue(f.available));
      g.payoutsPending.set({ chain }, f.pending);
      g.payoutsPendingAmount.set({ chain }, gaugeValue(f.pendingAmount));
      if (f.unfundable !== null) g.payoutsUnfundable.set({ chain }, f.unfundable);
    }
  }

  /** Every order not yet final, read raw (no schema check: a scrape must stay cheap; the actor checks). */
  async #readInFlight(): Promise<InFlight> {
    const { kv } = this.#sources;
    const now = this.#sources.now().getTime();
    const stuckBefore = now - STUCK_TX_MINUTES * 60_000;
    const f: InFlight = { stuck: new Map(), oldestTx: new Map(), withReason: new Map() };
    const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
    for (const status of IN_FLIGHT) {
      const ids = await listOrderIdsByStatus(kv, status);
      for (let i = 0; i < ids.length; i += MAX_GET_MANY) {
        const entries = await kv.getMany<Order[]>(ids.slice(i, i + MAX_GET_MANY).map(orderKey));
        for (const { value: o } of entries) {
          if (!o || o.status !== status || (o.type !== "mint" && o.type !== "burn")) continue;
          if (o.details?.heldReason) bump(f.withReason, `${o.type}|${status}`);
          const intent = o.details?.intent;
          if ((status !== "minting" && status !== "burning") || !intent) continue;
          const prepared = Date.parse(intent.preparedAt);
          if (!Number.isFinite(prepared)) continue;
          const key = `${o.type}|${intent.chain}`;
          if (prepared < stuckBefore) bump(f.stuck, key);
          f.oldestTx.set(key, Math.max(f.oldestTx.get(key) ?? 0, seconds(now - prepared)));
        }
      }
    }
    return f;
  }

  async #readRecords(): Promise<Records> {
    const { kv } = this.#sources;
    const natives = this.#sources.enabled.filter(isNativeChain);
    const [held, holds, alerts, recon, pools] = await Promise.all([
      listHeld(kv),
      listOrderHolds(kv),
      listAlerts(kv),
      lastReconciliation(kv),
      Promise.all(natives.map((chain) => depositPoolSize(kv, chain))),
    ]);
    const depositPool = new Map(natives.map((chain, i) => [chain, pools[i]]));
    const heldTransfers = new Map<ChainSymbol, number>();
    for (const h of held) heldTransfers.set(h.chain, (heldTransfers.get(h.chain) ?? 0) + 1);
    const byKind = new Map<string, number>();
    for (const a of alerts) byKind.set(a.kind, (byKind.get(a.kind) ?? 0) + 1);
    let reconciliation: Records["reconciliation"] = null;
    const at = recon ? Date.parse(recon.at) : NaN;
    if (recon && Number.isFinite(at)) {
      const mismatches = new Map<string, number>();
      for (const m of recon.mismatches ?? []) mismatches.set(m.kind, (mismatches.get(m.kind) ?? 0) + 1);
      reconciliation = { at, ok: recon.ok === true, mismatches };
    }
    return { heldTransfers, orderHolds: holds.length, alerts: byKind, depositPool, reconciliation };
  }

  /** Each enabled chain's tip (asked of its reader) and watcher cursor (kv/chain_tips.ts). */
  async #readTips(): Promise<ChainTip[]> {
    const { chains, enabled, kv } = this.#sources;
    if (!chains) return [];
    const cursors = (await new ChainTips(kv, 0).snapshot()).tips;
    return await Promise.all(enabled.map(async (chain): Promise<ChainTip> => {
      const cursor = cursors.get(chain) ?? null;
      try {
        const tip = await withTimeout(chains.reader(chain).tip(), CHAIN_READ_TIMEOUT_MS, `${chain} tip`);
        return { chain, tip: tip.number, cursor };
      } catch {
        return { chain, tip: null, cursor }; // counted in issuance_rpc_errors_total where an endpoint failed
      }
    }));
  }

  /**
   * Per enabled native chain: what payouts can spend against what waiting payouts (burns in `processing`) need, read
   * as the admin treasury reports read them, without what a scrape does not need (measured in bench/metrics.ts: the
   * UTXO report's pending-deposit list read every pending order twice over, 600 ms with 3,334 pending). UTXO chains:
   * the spendable coins, and each waiting payout's fundability by coin selection under the chain's fee rule, oldest
   * first, each taking its coins (`utxoFundability`, as actors/treasury_report.ts). Account chains: the hot wallet's
   * balance (its reader) less the chain's reserve and what recorded payouts hold (kv/hot_wallet.ts), as
   * actors/account_treasury_report.ts, without its per-payout `checkPayout` (one RPC per waiting payout): the waiting
   * payouts are counted unfundable oldest first, by amount, without fees.
   */
  async #readFunds(): Promise<PayoutFunds[]> {
    const { chains, enabled, kv } = this.#sources;
    const natives = NATIVE_CHAINS.filter((c) => enabled.includes(c));
    const out: PayoutFunds[] = [];
    // One read of the burns waiting for their payout, for every chain.
    const waiting = natives.length === 0 ? [] : await ordersIn(
      kv,
      "processing",
      (o) => o.type === "burn" && (natives as readonly string[]).includes(o.destinationChain),
    );
    const owed = (chain: NativeChain) =>
      waiting.filter((o) => o.destinationChain === chain).map((o) => weiToNative(chain, BigInt(o.amount)).native);
    for (const chain of chainsOf("utxo", natives)) {
      const amounts = owed(chain);
      out.push({
        chain,
        ...utxoFundability(await coinStates(kv, chain), amounts, this.#sources.utxoFee(chain), chain),
        pendingAmount: amounts.reduce((sum, a) => sum + a, 0n),
        pending: amounts.length,
      });
    }
    const accounts = chainsOf("account", natives);
    if (!chains || accounts.length === 0) return out;
    out.push(
      ...await Promise.all(accounts.map(async (chain): Promise<PayoutFunds> => {
        const amounts = owed(chain);
        const pendingAmount = amounts.reduce((sum, a) => sum + a, 0n);
        const reader = chains.reader(chain);
        let available: bigint | null = null;
        if (chains.payer(chain).hotWallet && reader.balance) {
          try {
            // The wallet in effect (docs/operations.md "Rotating a hot wallet"), and its holds only.
            const holds = await readHotWalletHolds(kv, chain);
            const hot = payerAtHotIndex(chains, chain, holds.hotIndex).hotWallet!;
            const balance = await withTimeout(
              reader.balance(hot),
              CHAIN_READ_TIMEOUT_MS,
              `${chain} hot-wallet balance`,
            );
            available = balance - NATIVE[chain].reserve - holds.held;
          } catch {
            available = null;
          }
        }
        let left = available;
        let unfundable: number | null = null;
        if (left !== null) {
          unfundable = 0;
          for (const a of amounts) {
            if (a <= left) left -= a;
            else unfundable++;
          }
        }
        return { chain, available, pendingAmount, pending: amounts.length, unfundable };
      })),
    );
    return out;
  }
}

/**
 * The spendable total and how many of `amounts` (oldest first) coin selection cannot fund, each payout taking its
 * coins from the pool: the pending-payout loop of actors/treasury_report.ts `treasuryReport`, which the treasury test
 * checks this against (tests/metrics_test.ts).
 */
export function utxoFundability(
  states: CoinState[],
  amounts: readonly bigint[],
  fee: FeeFunction,
  chain: UtxoChain,
): { available: bigint; unfundable: number } {
  const pool = states.filter(isSpendable).map((s) => s.coin);
  const available = pool.reduce((sum, c) => sum + c.amount, 0n);
  let unfundable = 0;
  for (const amount of amounts) {
    let selection;
    try {
      selection = selectCoins(pool, amount, fee, changeDustLimit(chain));
    } catch {
      unfundable++; // below the dust limit: the report says why, the metric counts it
      continue;
    }
    if (!selection.ok) {
      unfundable++;
      continue;
    }
    for (const c of selection.inputs) pool.splice(pool.indexOf(c), 1);
  }
  return { available, unfundable };
}

function gauges(registry: Registry) {
  const registers = [registry];
  const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Gauge<L>({ name, help, labelNames, registers });
  return {
    orders: gauge("issuance_orders", "Orders by type and status (all owners).", ["type", "status"]),
    stuck: gauge(
      "issuance_stuck_transactions",
      `Orders in minting or burning whose outgoing transaction was recorded more than ${STUCK_TX_MINUTES} minutes ` +
        "ago, by type and the transaction's chain.",
      ["type", "chain"],
    ),
    oldestTx: gauge(
      "issuance_outgoing_tx_oldest_age_seconds",
      "Age of the oldest recorded, not yet final outgoing transaction (minting, burning), by type and chain.",
      ["type", "chain"],
    ),
    withReason: gauge(
      "issuance_orders_waiting_with_reason",
      "Orders not yet final that wait with a recorded reason (heldReason: funds, a paused chain, an operator hold, a " +
        "disabled chain), by type and status.",
      ["type", "status"],
    ),
    held: gauge(
      "issuance_held_records",
      "Held records an operator resolves: held transfers and order holds (kind transfer, order_hold).",
      ["kind"],
    ),
    heldTransfers: gauge("issuance_held_transfers", "Held transfers by the chain they arrived on.", ["chain"]),
    alerts: gauge("issuance_alerts_open", "Open operator alerts by kind (kv/alerts.ts).", ["kind"]),
    depositPool: gauge(
      "issuance_deposit_pool_available",
      'Pre-derived deposit addresses waiting for ROLE=api processes, by native chain (docs/operations.md "Roles").',
      ["chain"],
    ),
    reconMismatches: gauge(
      "issuance_reconciliation_mismatches",
      "Mismatches in the last stored reconciliation report, by kind.",
      ["kind"],
    ),
    reconOk: gauge("issuance_reconciliation_ok", "1 when the last stored reconciliation added up, 0 when not.", []),
    reconAt: gauge(
      "issuance_reconciliation_last_run_timestamp_seconds",
      "When the last stored reconciliation ran (Unix seconds); 0 when none was ever stored.",
      [],
    ),
    tip: gauge("issuance_chain_tip_block", "The chain's tip as its reader reports it.", ["chain"]),
    tipUp: gauge("issuance_chain_tip_up", "1 when the chain's tip could be read at the last look, 0 when not.", [
      "chain",
    ]),
    cursor: gauge("issuance_watcher_cursor_block", "The last block the chain's watcher scanned.", ["chain"]),
    lag: gauge("issuance_watcher_lag_blocks", "Blocks between the chain's tip and its watcher's cursor.", ["chain"]),
    fundsAvailable: gauge(
      "issuance_payout_funds_available",
      "What payouts on a native chain can spend now, in its smallest units: spendable treasury coins (UTXO), or " +
        "the hot wallet's balance less its reserve and what recorded payouts hold (account chains).",
      ["chain"],
    ),
    fundsUp: gauge(
      "issuance_payout_funds_up",
      "1 when the chain's payout funds could be read at the last look (a hot-wallet balance), 0 when not.",
      ["chain"],
    ),
    payoutsPending: gauge("issuance_payouts_pending", "Burns waiting for their payout (processing).", ["chain"]),
    payoutsPendingAmount: gauge(
      "issuance_payouts_pending_amount",
      "What burns waiting for their payout (processing) will pay, in the chain's smallest units.",
      ["chain"],
    ),
    payoutsUnfundable: gauge(
      "issuance_payouts_unfundable",
      "Waiting payouts the funds cannot cover now, oldest first (UTXO: by coin selection with fees; account " +
        "chains: by amount).",
      ["chain"],
    ),
    partAge: gauge(
      "issuance_metrics_part_age_seconds",
      "Age of the values each part of the gauges serves (KV parts are re-read every few seconds, chain parts less " +
        "often).",
      ["part"],
    ),
  };
}
