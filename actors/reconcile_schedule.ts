/**
 * Reconciliation on a schedule (docs/reconciliation.md): the pipeline runs the operators' reconciliation
 * (actors/reconciliation.ts) once every `RECONCILE_EVERY_MS`, under a lease so one process runs it, and stores the
 * report where `/metrics` and the dashboard read it (kv/reconciliation.ts). A report with mismatches raises one
 * `reconciliation_mismatch` alert; the next clean report clears it. Parts that could not be read (a node down) make the
 * report not ok, which the metrics show, but raise no alert here: the RPC error metrics and the watcher alerts already
 * speak for them. Idle: one read of the stored report's time, no commit, until the next run is due.
 */
import { clearAlert, raiseAlert } from "../kv/alerts.ts";
import { acquireLease } from "../kv/pipeline.ts";
import { lastReconciliation, storeReconciliation } from "../kv/reconciliation.ts";
import type { PipelineContext } from "./context.ts";
import { forStorage } from "./ops/reconcile.ts";
import { runReconciliation } from "./reconciliation.ts";

/** How often the pipeline reconciles (an operator may run `deno task admin reconcile` any time besides). */
export const RECONCILE_EVERY_MS = 60 * 60_000;
/** A run reads every order and the contracts' events: the lease outlasts a slow one. */
const RECONCILE_LEASE_MS = 10 * 60_000;

export type ScheduledReconcile = "not due" | "taken" | "ok" | "mismatch" | "unknown";

export async function scheduledReconcile(ctx: PipelineContext, owner: string): Promise<ScheduledReconcile> {
  const last = await lastReconciliation(ctx.kv);
  const now = ctx.now().getTime();
  if (last && now - Date.parse(last.at) < RECONCILE_EVERY_MS) return "not due";
  if (!(await acquireLease(ctx.kv, "reconcile", owner, RECONCILE_LEASE_MS, now))) return "taken";
  const report = await runReconciliation({
    kv: ctx.kv,
    chains: ctx.chains,
    transferAddress: ctx.settings.transferAddress,
    enabledChains: ctx.settings.enabledChains,
    now: () => ctx.now(),
  });
  await storeReconciliation(ctx.kv, forStorage(report));
  if (report.mismatches.length > 0) {
    await raiseAlert(ctx.kv, {
      kind: "reconciliation_mismatch",
      subject: "scheduled",
      message: `the scheduled reconciliation found ${report.mismatches.length} mismatch(es) (` +
        `${[...new Set(report.mismatches.map((m) => m.kind))].join(", ")}); deno task admin reconcile names the ` +
        "records that cause them",
      now: ctx.now(),
    });
    return "mismatch";
  }
  await clearAlert(ctx.kv, "reconciliation_mismatch", "scheduled");
  return report.ok ? "ok" : "unknown";
}
