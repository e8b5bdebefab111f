/**
 * `Deno.cron` as the pipeline's backbone: one job per tick group (actors/ticks.ts), each running its group's ticks
 * once a minute with a time budget, so a process that lost every timer (Deno Deploy, where an isolate lives only
 * while it serves a request or a cron run) still finishes every order. In a long-running process the same jobs run
 * beside the sub-second loops, as a backstop; a tick already running in its loop is awaited, never run twice.
 *
 * Deno's rules: jobs are registered at the module top level of the entry point, before `Deno.serve` (Deno Deploy
 * discovers them when the deployment starts, and refuses a `Deno.cron` call made later), so the job list is fixed
 * (one job per group, whatever chains are enabled) and each handler waits for the services to be built. The
 * shortest schedule is one minute; Deno never runs a job while its previous run is still going.
 *
 * `registerCronJobs` takes the registration function: `Deno.cron` in main.ts, a recorder in tests.
 */
import type { PipelineRuntime } from "./runtime.ts";
import { TICK_GROUPS, type TickGroup } from "./ticks.ts";

export interface CronJob {
  /** "pipeline-watch", ...: letters, digits, hyphens (Deno's cron names). */
  name: string;
  schedule: string;
  handler: () => Promise<void>;
}

export type CronRegister = (name: string, schedule: string, handler: () => Promise<void>) => unknown;

/** The cron period: every schedule below is once a minute except housekeeping. */
export const CRON_PERIOD_MS = 60_000;
/**
 * What one cron run of a group may spend before it leaves the rest for the next run, unless `CRON_RUN_MS` says
 * (config/watch_plan.ts); a watcher's run also stops at its byte budget (`WATCH_BYTES_PER_RUN`).
 */
export const CRON_BUDGET_MS = 45_000;
/**
 * The lease a cron run takes (deploy mode): longer than its budget, shorter than the period, so the next minute's
 * run, in whatever isolate, finds it expired and takes it with one commit.
 */
export const CRON_LEASE_MS = 55_000;

const SCHEDULES: Record<TickGroup, string> = {
  blocks: "* * * * *",
  watch: "* * * * *",
  treasury: "* * * * *",
  orders: "* * * * *",
  events: "* * * * *",
  checks: "* * * * *",
  housekeeping: "*/10 * * * *",
};

/** The job list: one job per tick group, each running that group of `runtime` (built later: awaited per run). */
export function cronJobs(
  runtime: PipelineRuntime | null | Promise<PipelineRuntime | null>,
  opts: { budgetMs?: number } = {},
): CronJob[] {
  return TICK_GROUPS.map((group) => ({
    name: `pipeline-${group}`,
    schedule: SCHEDULES[group],
    handler: async () => {
      const r = await runtime;
      // The runtime's own budget (`CRON_RUN_MS`) is known only once the configuration is read.
      if (r) await r.runGroup(group, opts.budgetMs ?? r.cronRunMs ?? CRON_BUDGET_MS);
    },
  }));
}

/** Registers every job with `register` (`Deno.cron`, or a test's recorder). */
export function registerCronJobs(register: CronRegister, jobs: CronJob[]): void {
  for (const job of jobs) register(job.name, job.schedule, job.handler);
}
