/**
 * The operator's overview reads (the dashboard's data; docs/dashboard.md): `chains` (each chain's mode, tip,
 * watcher cursor and lag, lease holder, open alerts, pause and health), `orders` (recent orders across every partner,
 * newest first, bounded) and `stuck` (recorded transactions not counted after a threshold, and orders waiting with a
 * held reason). Read only: nothing here writes to KV. The API, the CLI and the dashboard run these same operations.
 *
 * Health of a chain, the first rule that holds:
 * 1. `disabled`: the chain plan does not run it (CHAIN_MODE=live without its RPC configuration).
 * 2. `erroring`: its tip could not be read (within CHAIN_TIP_TIMEOUT_MS), or an open alert names it with a kind that
 *    means its work stopped or fails (`ERRORING_ALERTS`: a reorg deeper than the watcher's memory halted it, a fee cap
 *    was reached, a nonce was used elsewhere, steps keep failing).
 * 3. `paused`: an operator paused it (kv/controls.ts).
 * 4. `unwatched`: no process has looked at the chain (read its tip: kv/watcher_looks.ts) for longer than
 *    WATCHER_UNWATCHED_SECONDS (config/watch_plan.ts, default 180) and none holds its watcher lease. An idle watcher
 *    holds no lease and commits nothing per tick; its process stores its looks at most once a minute
 *    (actors/watcher_looks.ts), which is what says "watched" at rest.
 * 5. `lagging`: the watcher is more than `lagThreshold` blocks behind the tip: the blocks of LAG_BUDGET_MS at the
 *    chain's block time (SIM_BLOCK_MS for a simulated chain), at least MIN_LAG_THRESHOLD. The lag is the watcher's own
 *    at its last look (the tip it read minus what it had scanned), or, with no recent look (a live lease only), the
 *    tip read now minus the stored cursor. A stored cursor alone is not compared with the tip read now: a watcher
 *    stores it at most once a minute (actors/watcher.ts `batchCursorMs`), so on a busy chain it trails by design.
 * 6. `ok`: watched and within its threshold, whether or not blocks arrive.
 */
import { withTimeout } from "../timeout.ts";
import { z } from "zod";
import { CHAIN_SYMBOLS, type ChainSymbol, EVM, isEvmChain, isNativeChain, NATIVE } from "../../chains/catalog.ts";
import { chainPlan } from "../../config/chain_mode.ts";
import { type AlertKind, listAlerts } from "../../kv/alerts.ts";
import { ChainTips } from "../../kv/chain_tips.ts";
import { getControls } from "../../kv/controls.ts";
import { orderKey } from "../../kv/orders.ts";
import { type Order, ORDER_STATUSES, ORDER_TYPES, type OrderStatus, parseOrder } from "../../model/order.ts";
import { type OrderHold, orderHoldKey, readLease } from "../../kv/pipeline.ts";
import { readPayoutObservation } from "../../kv/treasury.ts";
import { listWatcherLooks, newestLooks } from "../../kv/watcher_looks.ts";
import { displayAmount } from "../../model/amounts.ts";
import { ageSince, formatAge } from "../treasury_report.ts";
import { defineOp, type OpContext } from "./op.ts";

/** How long the tip of one chain may take to read before the chain counts as erroring. */
export const CHAIN_TIP_TIMEOUT_MS = 5_000;
/** A watcher further behind than this much chain time is lagging. */
export const LAG_BUDGET_MS = 60_000;
export const MIN_LAG_THRESHOLD = 3;
/** Open alerts of these kinds naming a chain make it erroring. */
export const ERRORING_ALERTS: readonly AlertKind[] = [
  "deep_reorg",
  "fee_cap_reached",
  "nonce_used_elsewhere",
  "persistent_errors",
];
/** A transaction recorded longer ago than this and not yet counted is stuck (`stuck`), unless `--older-than` says. */
export const STUCK_AFTER_MINUTES = 15;
/** Most orders `orders` returns, and its default. */
export const MAX_ORDERS = 500;
export const DEFAULT_ORDERS = 50;
/** Most order records one `orders` or `stuck` read scans: the reads stay bounded on any history. */
export const MAX_SCAN = 5_000;

const MODES = ["live", "sim", "disabled"] as const;
const HEALTH = ["ok", "lagging", "unwatched", "erroring", "paused", "disabled"] as const;
const GET_MANY = 10; // Deno KV refuses more keys in one getMany

const PauseSchema = z.object({ by: z.string(), at: z.string(), reason: z.string() });

const ChainRowSchema = z.object({
  chain: z.enum(CHAIN_SYMBOLS),
  kind: z.enum(["native", "evm"]),
  mode: z.enum(MODES),
  /** The chain's newest block as its node (or sim ledger) reports it; null when not read (disabled) or unreadable. */
  tip: z.number().int().nullable(),
  tipError: z.string().nullable(),
  /** The last block the watcher scanned (kv/pipeline.ts cursor); null before its first scan. */
  cursor: z.number().int().nullable(),
  /** tip - cursor in blocks, never negative; null when either is unknown. */
  lag: z.number().int().nullable(),
  /** The lag as chain time: blocks times the chain's block time (SIM_BLOCK_MS for a simulated chain), in ms. */
  lagMs: z.number().int().nullable(),
  lagThreshold: z.number().int(),
  /** The newest look of any process's watcher at this chain (kv/watcher_looks.ts), or null when none is recorded. */
  lookedAt: z.string().nullable(),
  lookedBy: z.string().nullable(),
  /** The process holding the watcher lease now, or null when no live lease is held (an idle watcher holds none). */
  leaseHolder: z.string().nullable(),
  leaseExpiresAt: z.string().nullable(),
  alerts: z.array(z.object({ kind: z.string(), subject: z.string(), message: z.string(), lastAt: z.string() })),
  paused: PauseSchema.nullable(),
  health: z.enum(HEALTH),
  /** Why the health is what it is, in words. */
  why: z.string(),
});
export type ChainRow = z.infer<typeof ChainRowSchema>;

function modeOf(ctx: OpContext) {
  const c = ctx.config;
  const plan = chainPlan(c.chainMode, c.evm, c.utxo, c.account);
  return (chain: ChainSymbol): typeof MODES[number] =>
    plan.simulated.includes(chain) ? "sim" : plan.enabled.includes(chain) ? "live" : "disabled";
}

function blockMsOf(ctx: OpContext, chain: ChainSymbol, mode: typeof MODES[number]): number {
  if (mode === "sim") return ctx.config.simBlockMs;
  return isEvmChain(chain) ? EVM[chain].blockMs : isNativeChain(chain) ? NATIVE[chain].blockMs : 1000;
}

/** Blocks behind the tip beyond which a watcher is lagging. */
export function lagThreshold(blockMs: number): number {
  return Math.max(MIN_LAG_THRESHOLD, Math.ceil(LAG_BUDGET_MS / Math.max(1, blockMs)));
}

async function readTip(ctx: OpContext, chain: ChainSymbol): Promise<{ tip: number | null; tipError: string | null }> {
  try {
    const chains = await ctx.chains();
    const tip = await withTimeout(chains.reader(chain).tip(), CHAIN_TIP_TIMEOUT_MS, `${chain} tip`);
    return { tip: tip.number, tipError: null };
  } catch (e) {
    return { tip: null, tipError: (e instanceof Error ? e.message : String(e)).split("\n")[0].slice(0, 300) };
  }
}

/** Every chain's row, in catalog order (natives first). */
export async function chainRows(ctx: OpContext): Promise<ChainRow[]> {
  const mode = modeOf(ctx);
  const now = ctx.now();
  const [{ controls }, alerts, cursors, lookRecords] = await Promise.all([
    getControls(ctx.kv),
    listAlerts(ctx.kv),
    new ChainTips(ctx.kv, 0).snapshot(),
    listWatcherLooks(ctx.kv),
  ]);
  const looks = newestLooks(lookRecords);
  const unwatchedAfterMs = ctx.config.watch.unwatchedAfterMs;
  return await Promise.all(CHAIN_SYMBOLS.map(async (chain): Promise<ChainRow> => {
    const m = mode(chain);
    const blockMs = blockMsOf(ctx, chain, m);
    const threshold = lagThreshold(blockMs);
    const cursor = cursors.tips.get(chain) ?? null;
    const { tip, tipError } = m === "disabled" ? { tip: null, tipError: null } : await readTip(ctx, chain);
    const lease = (await readLease(ctx.kv, `watch:${chain}`)).value;
    const live = lease && lease.expiresAt > now.getTime() ? lease : null;
    const mine = alerts.filter((a) => a.chain === chain || (a.kind === "deep_reorg" && a.subject === chain));
    const paused = controls.pausedChains[chain] ?? null;
    const seen = looks.get(chain) ?? null;
    const recent = seen && now.getTime() - Date.parse(seen.at) <= unwatchedAfterMs ? seen : null;
    const lag = recent ? recent.lag : tip !== null && cursor !== null ? Math.max(0, tip - cursor) : null;
    const stopping = mine.filter((a) => ERRORING_ALERTS.includes(a.kind));
    const [health, why] = ((): [typeof HEALTH[number], string] => {
      if (m === "disabled") return ["disabled", "not in the chain plan: no RPC configured for it in live mode"];
      if (tipError !== null) return ["erroring", `the tip could not be read: ${tipError}`];
      if (stopping.length > 0) return ["erroring", `open ${stopping.map((a) => a.kind).join(", ")} alert`];
      if (paused) return ["paused", `paused by ${paused.by} at ${paused.at}: ${paused.reason}`];
      if (!recent && !live) {
        const none = seen
          ? `no process has looked at this chain since ${seen.at} (${
            formatAge(now.getTime() - Date.parse(seen.at))
          } ago)`
          : "no process has ever looked at this chain";
        return ["unwatched", `${none}; unwatched after ${unwatchedAfterMs / 1000} s (WATCHER_UNWATCHED_SECONDS)`];
      }
      if (lag === null) return ["lagging", "the watcher has stored no cursor yet"];
      if (lag > threshold) return ["lagging", `${lag} blocks behind the tip (threshold ${threshold})`];
      const by = recent ? `, looked ${formatAge(Math.max(0, now.getTime() - Date.parse(recent.at)))} ago` : "";
      return ["ok", `${lag} blocks behind the tip${by}`];
    })();
    return {
      chain,
      kind: isNativeChain(chain) ? "native" : "evm",
      mode: m,
      tip,
      tipError,
      cursor,
      lag,
      lagMs: lag === null ? null : lag * blockMs,
      lagThreshold: threshold,
      lookedAt: seen?.at ?? null,
      lookedBy: seen?.owner ?? null,
      leaseHolder: live?.owner ?? null,
      leaseExpiresAt: live ? new Date(live.expiresAt).toISOString() : null,
      alerts: mine.map((a) => ({ kind: a.kind, subject: a.subject, message: a.message, lastAt: a.lastAt })),
      paused,
      health,
      why,
    };
  }));
}

export const chainsOverview = defineOp({
  name: "chains",
  summary: "Every chain: mode, tip, watcher cursor and lag, lease holder, open alerts, paused, health",
  scope: "read",
  http: { method: "get", path: "/chains" },
  input: z.object({}),
  output: z.object({ at: z.string(), chains: z.array(ChainRowSchema) }),
  run: async (ctx) => ({ at: ctx.now().toISOString(), chains: await chainRows(ctx) }),
  text: ({ chains }) => [
    "chain\tmode\thealth\ttip\tcursor\tlag\tlooked\tlease\talerts\twhy",
    ...chains.map((c) =>
      [
        c.chain,
        c.mode,
        c.health,
        c.tip ?? "-",
        c.cursor ?? "-",
        c.lag ?? "-",
        c.lookedAt ? `${c.lookedAt} (${c.lookedBy})` : "-",
        c.leaseHolder ?? "-",
        c.alerts.length,
        c.why,
      ].join("\t")
    ),
  ],
});

// ---- orders ----

/** `amount` for people (model/amounts.ts): `1.5 SOL`, `1.5 uSOL`; the `amount` field keeps the exact smallest units. */
const DisplayAmountSchema = z.object({ amount: z.string() });
const shown = (amount: string, token: string) => ({ amount: displayAmount(amount, token) });

const OrderRowSchema = z.object({
  id: z.string(),
  type: z.enum(ORDER_TYPES),
  status: z.enum(ORDER_STATUSES),
  owner: z.string(),
  sourceChain: z.string(),
  destinationChain: z.string(),
  token: z.string(),
  /** Smallest units of `token` (a burn's amount is in uAsset wei), a decimal string. */
  amount: z.string(),
  createdAt: z.string(),
  updatedAt: z.string().nullable(),
  transactionHash: z.string().nullable(),
  errorMessage: z.string().nullable(),
  /** Why it waits for a chain this process does not run (details.heldReason). */
  heldReason: z.string().nullable(),
  /** An operator hold (kv/pipeline.ts orderHoldKey: a reorg past finality, a cap): it does not move until released. */
  hold: z.object({ reason: z.string(), at: z.string() }).nullable(),
  display: DisplayAmountSchema,
});
export type OrderRow = z.infer<typeof OrderRowSchema>;

/** The values of `keys`, read 10 at a time. */
async function readMany<T>(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<(T | null)[]> {
  const out: (T | null)[] = [];
  for (let i = 0; i < keys.length; i += GET_MANY) {
    for (const e of await kv.getMany<T[]>(keys.slice(i, i + GET_MANY))) out.push(e.value);
  }
  return out;
}

async function rowsOf(kv: Deno.Kv, orders: Order[]): Promise<OrderRow[]> {
  const holds = await readMany<OrderHold>(kv, orders.map((o) => orderHoldKey(o.id)));
  return orders.map((o, i) => orderRow(o, holds[i]));
}

/** An order as operators read it: a row of the lists, and the head of its detail page (actors/ops/order_detail.ts). */
export function orderRow(o: Order, hold: OrderHold | null): OrderRow {
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    owner: o.owner,
    sourceChain: o.sourceChain,
    destinationChain: o.destinationChain,
    token: o.token,
    amount: o.amount,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    transactionHash: o.transactionHash,
    errorMessage: o.errorMessage,
    heldReason: o.details.heldReason ?? null,
    hold: hold ? { reason: hold.reason, at: hold.at } : null,
    display: shown(o.amount, o.token),
  };
}

/** Orders in `status` (every status when unset), newest first, that `keep` accepts: at most `limit`, scanning at most MAX_SCAN. */
async function recentOrders(
  kv: Deno.Kv,
  opts: { status?: OrderStatus; keep?: (o: Order) => boolean; limit: number; oldestFirst?: boolean },
): Promise<{ orders: Order[]; scanned: number; truncated: boolean }> {
  const orders: Order[] = [];
  let scanned = 0;
  const reverse = !opts.oldestFirst;
  const take = (o: Order) => (!opts.keep || opts.keep(o)) && orders.push(o);
  if (opts.status === undefined) {
    // ["order", <UUIDv7>]: key order is creation order.
    for await (const e of kv.list<unknown>({ prefix: ["order"] }, { reverse, limit: MAX_SCAN, batchSize: 500 })) {
      scanned++;
      const parsed = parseOrder(e.value);
      if (parsed.ok) take(parsed.order);
      if (orders.length >= opts.limit) break;
    }
    return { orders, scanned, truncated: orders.length < opts.limit && scanned >= MAX_SCAN };
  }
  // The status index (kv/orders.ts) holds ids; its keys end with the id, so it lists in creation order too.
  const ids: string[] = [];
  for await (
    const e of kv.list<string>({ prefix: ["order_by_status", opts.status] }, {
      reverse,
      limit: MAX_SCAN,
      batchSize: 500,
    })
  ) ids.push(e.value);
  for (let i = 0; i < ids.length && orders.length < opts.limit; i += GET_MANY) {
    const batch = ids.slice(i, i + GET_MANY);
    const values = await readMany<unknown>(kv, batch.map(orderKey));
    for (const v of values) {
      scanned++;
      const parsed = v === null ? null : parseOrder(v);
      if (parsed?.ok && parsed.order.status === opts.status) take(parsed.order);
      if (orders.length >= opts.limit) break;
    }
  }
  return { orders, scanned, truncated: orders.length < opts.limit && ids.length >= MAX_SCAN };
}

const limitInput = z.string().regex(/^[1-9]\d{0,2}$/, `Must be a whole number from 1 to ${MAX_ORDERS}`)
  .refine((v) => Number(v) <= MAX_ORDERS, `Must be a whole number from 1 to ${MAX_ORDERS}`);

export const ordersOverview = defineOp({
  name: "orders",
  summary: "Recent orders across every partner, newest first, with owner, chains, amount, status and holds",
  scope: "read",
  http: { method: "get", path: "/orders" },
  input: z.object({
    status: z.enum(ORDER_STATUSES).optional().describe("Only orders in this status"),
    type: z.enum(ORDER_TYPES).optional().describe("Only mint or only burn orders"),
    limit: limitInput.optional().describe(`At most this many orders (default ${DEFAULT_ORDERS})`),
  }),
  output: z.object({
    orders: z.array(OrderRowSchema),
    /** Order records read to answer; at most MAX_SCAN. */
    scanned: z.number().int(),
    /** True when the scan stopped at its bound before `limit` orders matched: older matches may exist. */
    truncated: z.boolean(),
  }),
  run: async (ctx, input) => {
    const limit = input.limit ? Number(input.limit) : DEFAULT_ORDERS;
    const type = input.type;
    const r = await recentOrders(ctx.kv, {
      status: input.status,
      keep: type ? (o) => o.type === type : undefined,
      limit,
    });
    return { orders: await rowsOf(ctx.kv, r.orders), scanned: r.scanned, truncated: r.truncated };
  },
  text: ({ orders, truncated }) => [
    ...orders.map((o) =>
      [
        o.id,
        o.type,
        o.status,
        `${o.sourceChain}->${o.destinationChain}`,
        o.display.amount,
        o.owner,
        o.createdAt,
        o.hold ? `HOLD: ${o.hold.reason}` : o.heldReason ? `held: ${o.heldReason}` : "",
      ].join("\t")
    ),
    `${orders.length} order(s)${truncated ? ` (scan stopped after ${MAX_SCAN} records: older ones not shown)` : ""}`,
  ],
});

// ---- stuck ----

const StuckTxSchema = z.object({
  orderId: z.string(),
  type: z.enum(ORDER_TYPES),
  status: z.enum(ORDER_STATUSES),
  owner: z.string(),
  /** The chain the transaction is on (the order's destination). */
  chain: z.string(),
  txHash: z.string(),
  recordedAt: z.string(),
  ageMs: z.number().int(),
  age: z.string(),
  amount: z.string(),
  token: z.string(),
  /** The last status the pipeline saw of a payout (kv/treasury.ts), when one was stored. */
  lastStatus: z.unknown().nullable(),
  display: DisplayAmountSchema,
});

const WaitingSchema = z.object({
  orderId: z.string(),
  type: z.enum(ORDER_TYPES),
  status: z.enum(ORDER_STATUSES),
  owner: z.string(),
  sourceChain: z.string(),
  destinationChain: z.string(),
  amount: z.string(),
  token: z.string(),
  heldReason: z.string(),
  since: z.string(),
  age: z.string(),
  display: DisplayAmountSchema,
});

export const stuckOverview = defineOp({
  name: "stuck",
  summary: "Payouts to look at: transactions recorded long ago and not yet counted, and orders waiting with a reason",
  scope: "read",
  http: { method: "get", path: "/stuck" },
  input: z.object({
    olderThanMinutes: z.string().regex(/^[1-9]\d{0,5}$/, "Must be a whole number of minutes from 1").optional()
      .describe(`A recorded transaction older than this is stuck (default ${STUCK_AFTER_MINUTES})`),
  }),
  output: z.object({
    thresholdMinutes: z.number().int(),
    transactions: z.array(StuckTxSchema),
    waiting: z.array(WaitingSchema),
    /** True when a scan stopped at its bound (MAX_SCAN orders per status): more may exist. */
    truncated: z.boolean(),
  }),
  run: async (ctx, input) => {
    const minutes = input.olderThanMinutes ? Number(input.olderThanMinutes) : STUCK_AFTER_MINUTES;
    const now = ctx.now();
    let truncated = false;
    const transactions: z.infer<typeof StuckTxSchema>[] = [];
    for (const status of ["minting", "burning"] as const) {
      const r = await recentOrders(ctx.kv, { status, limit: MAX_SCAN, oldestFirst: true });
      truncated ||= r.truncated;
      for (const o of r.orders) {
        const intent = o.details.intent;
        if (!intent) continue;
        const ageMs = ageSince(intent.preparedAt, now);
        if (ageMs <= minutes * 60_000) continue;
        const payout = o.type === "burn";
        const amount = payout && o.type === "burn" ? o.details.nativeAmount ?? o.amount : o.amount;
        const token = payout && isNativeChain(o.destinationChain) ? NATIVE[o.destinationChain].token.symbol : o.token;
        transactions.push({
          orderId: o.id,
          type: o.type,
          status: o.status,
          owner: o.owner,
          chain: intent.chain,
          txHash: intent.txHash,
          recordedAt: intent.preparedAt,
          ageMs,
          age: formatAge(ageMs),
          amount,
          token,
          lastStatus: payout ? await readPayoutObservation(ctx.kv, o.id) : null,
          display: shown(amount, token),
        });
      }
    }
    const waiting: z.infer<typeof WaitingSchema>[] = [];
    for (const status of ["pending", "processing"] as const) {
      const r = await recentOrders(ctx.kv, {
        status,
        keep: (o) => o.details.heldReason !== undefined,
        limit: MAX_SCAN,
        oldestFirst: true,
      });
      truncated ||= r.truncated;
      for (const o of r.orders) {
        const since = o.updatedAt ?? o.createdAt;
        waiting.push({
          orderId: o.id,
          type: o.type,
          status: o.status,
          owner: o.owner,
          sourceChain: o.sourceChain,
          destinationChain: o.destinationChain,
          amount: o.amount,
          token: o.token,
          heldReason: o.details.heldReason!,
          since,
          age: formatAge(ageSince(since, now)),
          display: shown(o.amount, o.token),
        });
      }
    }
    return { thresholdMinutes: minutes, transactions, waiting, truncated };
  },
  text: (r) => [
    `recorded transactions not counted after ${r.thresholdMinutes} min: ${r.transactions.length}`,
    ...r.transactions.map((t) =>
      `  ${t.orderId}\t${t.type}\t${t.chain}\t${t.txHash}\t${t.display.amount}\trecorded ${t.recordedAt} (${t.age} ago)`
    ),
    `orders waiting with a reason: ${r.waiting.length}`,
    ...r.waiting.map((w) =>
      `  ${w.orderId}\t${w.type}\t${w.status}\t${w.sourceChain}->${w.destinationChain}\t${w.display.amount}\t${w.heldReason}`
    ),
    ...(r.truncated ? [`(a scan stopped after ${MAX_SCAN} orders of one status: more may exist)`] : []),
  ],
});

export const OVERVIEW_OPS = [chainsOverview, ordersOverview, stuckOverview];
