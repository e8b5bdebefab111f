/**
 * `reconcile` (GET /admin/reconciliation): does every coin add up, per uAsset and EVM chain (actors/reconciliation.ts,
 * docs/reconciliation.md). The report is stored (kv/reconciliation.ts) for `/metrics` and the dashboard. Mismatches do
 * not make it fail, unless `--fail-on-mismatch` asks (the CLI, for cron): then a report that is not ok (a mismatch or a
 * part that could not be read) is stored, printed (stderr) and the CLI exits 2. API clients read `ok`.
 */
import { z } from "zod";
import { EVM_CHAINS, NATIVE_CHAINS, UASSETS } from "../../chains/catalog.ts";
import { storeReconciliation } from "../../kv/reconciliation.ts";
import { MISMATCH_KINDS, type ReconciliationReport, runReconciliation } from "../reconciliation.ts";
import { defineOp, OpError } from "./op.ts";

const dec = z.string().regex(/^-?\d+$/);
const decOrUnknown = dec.nullable();

const MismatchSchema = z.object({
  kind: z.enum(MISMATCH_KINDS),
  asset: z.string(),
  chain: z.string().nullable(),
  message: z.string(),
  records: z.array(z.string()),
});

const ChainSchema = z.object({
  chain: z.enum(EVM_CHAINS),
  ok: z.boolean(),
  mint: z.object({
    completedOrders: z.number().int(),
    completedWei: dec,
    mintedOnChainWei: decOrUnknown,
    mintedEvents: z.number().int().nullable(),
    inFlightOrders: z.array(z.string()),
    inFlightWei: dec,
  }),
  redeem: z.object({
    completedOrders: z.number().int(),
    paidOutWei: dec,
    feesWei: dec,
    remainderWei: dec,
    heldWei: dec,
    heldRecords: z.number().int(),
    inFlightOrders: z.array(z.string()),
    inFlightWei: dec,
    failedHoldingWei: dec,
    failedHoldingOrders: z.array(z.string()),
    dustWei: dec,
    recordsWei: dec,
    transferAddressWei: decOrUnknown,
    burnedOnChainWei: dec,
    refundedWei: dec,
  }),
  totalSupplyWei: decOrUnknown,
  unknown: z.array(z.string()),
});

const PARTS = z.object({
  treasury: decOrUnknown,
  hotWallet: decOrUnknown,
  unsweptDeposits: decOrUnknown,
  reserves: decOrUnknown,
  /** What the cold addresses hold, read from the chain (docs/reconciliation.md "Cold"). */
  cold: decOrUnknown,
});

const ReportSchema = z.object({
  at: z.string(),
  ok: z.boolean(),
  assets: z.array(z.object({
    asset: z.enum(UASSETS),
    nativeChain: z.enum(NATIVE_CHAINS),
    ok: z.boolean(),
    chains: z.array(ChainSchema),
    supply: z.object({
      ok: z.boolean(),
      totalSupplyWei: decOrUnknown,
      redeemedAtTransferWei: decOrUnknown,
      outstandingWei: decOrUnknown,
      outstandingNative: decOrUnknown,
      outstandingRemainderWei: decOrUnknown,
      controlled: PARTS,
      controlledNative: decOrUnknown,
      sweepFees: decOrUnknown,
      payoutFees: decOrUnknown,
      unknown: z.array(z.string()),
    }),
  })),
  mismatches: z.array(MismatchSchema),
  unknown: z.array(z.string()),
  skipped: z.array(z.string()),
});

export const reconcileOp = defineOp({
  name: "reconcile",
  summary: "Reconciliation: deposits = minted (on chain), redeemed = paid + fees + remainders + held, " +
    "supply <= native coins we control; every mismatch named with its records",
  scope: "read",
  http: { method: "get", path: "/reconciliation" },
  input: z.object({
    failOnMismatch: z.boolean().optional().describe(
      "CLI (`--fail-on-mismatch`, for cron): exit 2 when the report is not ok; API clients read `ok`",
    ),
  }),
  output: ReportSchema,
  run: async (ctx, input) => {
    const settings = ctx.settings();
    const report = await runReconciliation({
      kv: ctx.kv,
      chains: await ctx.chains(),
      transferAddress: (await ctx.transferAddress()).toLowerCase(),
      enabledChains: settings.enabledChains,
      now: () => ctx.now(),
    });
    await storeReconciliation(ctx.kv, forStorage(report));
    if (input.failOnMismatch && !report.ok) throw new OpError(409, reportText(report).join("\n"));
    return report;
  },
  text: (r) => reportText(r),
});

/** A KV value holds at most 64 KiB: a report above this is stored trimmed (the answer itself is whole). */
const STORED_MAX_BYTES = 60_000;

/**
 * The stored copy (kv/reconciliation.ts, read by /metrics and the dashboard): the whole report when it fits in one KV
 * value; else the order id lists are emptied and at most 100 mismatches kept, each with at most 20 records, and
 * `trimmed` says so. `ok` and the mismatch count are never trimmed.
 */
export function forStorage(report: ReconciliationReport) {
  const whole = { at: report.at, ok: report.ok, mismatches: report.mismatches, report };
  if (new TextEncoder().encode(JSON.stringify(whole)).length <= STORED_MAX_BYTES) return whole;
  const mismatches = report.mismatches.slice(0, 100).map((m) => ({
    ...m,
    message: m.message.slice(0, 400),
    records: m.records.slice(0, 20),
  }));
  const assets = report.assets.map((a) => ({
    ...a,
    chains: a.chains.map((c) => ({
      ...c,
      mint: { ...c.mint, inFlightOrders: [] },
      redeem: { ...c.redeem, inFlightOrders: [], failedHoldingOrders: [] },
    })),
  }));
  const trimmed = {
    ...report,
    assets,
    mismatches,
    unknown: report.unknown.slice(0, 100),
    mismatchCount: report.mismatches.length,
    trimmed: "order id lists emptied, mismatches and records cut: run `deno task admin reconcile` for all of it",
  };
  return { at: report.at, ok: report.ok, mismatches, report: trimmed };
}

/** Columns padded to their widest cell; the first left-aligned, the others right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd());
}

const cell = (v: string | number | null) => (v === null ? "unknown" : String(v));

/**
 * Three tables (mint, redeem, supply; an asset and chain with nothing recorded and nothing on chain is left out and
 * counted), then what is unknown, then the mismatches; the last line says OK, UNKNOWN or MISMATCH.
 */
export function reportText(r: ReconciliationReport): string[] {
  const lines = [`reconciliation at ${r.at}`];
  const idle = (c: ReconciliationReport["assets"][number]["chains"][number]) =>
    c.ok && c.mint.completedOrders === 0 && c.mint.inFlightOrders.length === 0 && c.mint.mintedOnChainWei === "0" &&
    c.redeem.recordsWei === "0" && c.redeem.transferAddressWei === "0" && c.totalSupplyWei === "0";
  const active = r.assets.flatMap((a) => a.chains.filter((c) => !idle(c)).map((c) => ({ a, c })));
  const quiet = r.assets.reduce((n, a) => n + a.chains.filter(idle).length, 0);
  const status = (c: { ok: boolean }, known: boolean) => (!known ? "UNKNOWN" : c.ok ? "ok" : "MISMATCH");

  lines.push("", "mint (wei): completed deposits = Minted events on chain");
  lines.push(...table([
    ["asset/chain", "orders", "completed", "minted on chain", "in flight", "status"],
    ...active.map(({ a, c }) => [
      `${a.asset}/${c.chain}`,
      cell(c.mint.completedOrders),
      c.mint.completedWei,
      cell(c.mint.mintedOnChainWei),
      c.mint.inFlightWei,
      status(c, c.mint.mintedOnChainWei !== null),
    ]),
  ]));
  lines.push(
    "",
    "redeem (wei): the transfer address received (holds + burned on chain + sent back by refunds) = paid + fees (0) + " +
      "remainders + held + in flight + failed",
  );
  lines.push(...table([
    [
      "asset/chain",
      "orders",
      "paid out",
      "remainders",
      "held",
      "in flight",
      "failed",
      "records",
      "holds",
      "burned",
      "refunded",
      "status",
    ],
    ...active.map(({ a, c }) => [
      `${a.asset}/${c.chain}`,
      cell(c.redeem.completedOrders),
      c.redeem.paidOutWei,
      c.redeem.remainderWei,
      (BigInt(c.redeem.heldWei) + BigInt(c.redeem.dustWei)).toString(),
      c.redeem.inFlightWei,
      c.redeem.failedHoldingWei,
      c.redeem.recordsWei,
      cell(c.redeem.transferAddressWei),
      c.redeem.burnedOnChainWei,
      c.redeem.refundedWei,
      status(c, c.redeem.transferAddressWei !== null),
    ]),
  ]));
  if (quiet > 0) lines.push(`(${quiet} asset/chain pairs with nothing recorded and nothing on chain: ok)`);
  lines.push(
    "",
    "supply: outstanding across EVM chains (native units) <= native coins we control + fees sweeps and payouts paid",
  );
  lines.push(...table([
    [
      "asset",
      "total supply (wei)",
      "outstanding",
      "controlled",
      "treasury",
      "hot wallet",
      "unswept",
      "reserves",
      "cold",
      "sweep fees",
      "payout fees",
      "status",
    ],
    ...r.assets.map((a) => {
      const sp = a.supply;
      const rest = sp.outstandingRemainderWei && sp.outstandingRemainderWei !== "0"
        ? ` +${sp.outstandingRemainderWei}wei`
        : "";
      return [
        a.asset,
        cell(sp.totalSupplyWei),
        sp.outstandingNative === null ? "unknown" : `${sp.outstandingNative}${rest}`,
        cell(sp.controlledNative),
        cell(sp.controlled.treasury),
        cell(sp.controlled.hotWallet),
        cell(sp.controlled.unsweptDeposits),
        cell(sp.controlled.reserves),
        cell(sp.controlled.cold),
        cell(sp.sweepFees),
        cell(sp.payoutFees),
        status(sp, sp.unknown.length === 0),
      ];
    }),
  ]));
  if (r.skipped.length > 0) lines.push("", `skipped: ${r.skipped.join("; ")}`);
  if (r.unknown.length > 0) {
    lines.push("", `UNKNOWN (${r.unknown.length}): these parts could not be read and are not reported as ok`);
    for (const u of r.unknown) lines.push(`  ${u}`);
  }
  if (r.mismatches.length > 0) {
    lines.push("", `MISMATCH (${r.mismatches.length}):`);
    for (const m of r.mismatches) {
      lines.push(`  ${m.kind} ${m.asset} ${m.chain ?? "(all chains)"}: ${m.message}`);
      lines.push(`    records: ${m.records.join(", ")}`);
    }
  }
  lines.push(
    "",
    r.ok
      ? "OK: every coin adds up"
      : r.mismatches.length > 0
      ? `MISMATCH: ${r.mismatches.length} mismatch(es)${r.unknown.length > 0 ? `, ${r.unknown.length} unknown` : ""}`
      : `UNKNOWN: ${r.unknown.length} part(s) could not be read`,
  );
  return lines;
}

export const RECONCILE_OPS = [reconcileOp];
