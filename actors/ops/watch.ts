/** Watcher instructions (kv/pipeline.ts `WatchResume`): restart a watcher halted by a reorg deeper than its memory. */
import { z } from "zod";
import { EVM_CHAINS, NATIVE_CHAINS } from "../../chains/catalog.ts";
import { appendAudit } from "../../kv/audit.ts";
import { type WatchResume, watchResumeKey } from "../../kv/pipeline.ts";
import { defineOp, OpError } from "./op.ts";

const WATCHED = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;

export const watchResume = defineOp({
  name: "watch resume",
  summary: "Restarts a watcher halted by a deep reorg: it forgets its recent blocks and rescans from a block below " +
    "the fork that the operator checked (rescanning is harmless: every transfer is recorded once)",
  scope: "operate",
  http: { method: "post", path: "/watch/{chain}/resume" },
  input: z.object({
    chain: z.enum(WATCHED, { error: `must be one of ${WATCHED.join(", ")}` }),
    from: z.string({
      error: (issue) =>
        issue.input === undefined ? "is required: a block number below the fork, which you have checked" : undefined,
    }).regex(/^\d{1,12}$/, "must be a block number below the fork (decimal digits), which you have checked")
      .describe("A block number below the fork, which the operator has checked"),
  }),
  positionals: ["chain"],
  output: z.object({ chain: z.enum(WATCHED), fromBlock: z.number().int(), by: z.string(), auditId: z.string() }),
  run: async (ctx, { chain, from }) => {
    const at = ctx.now();
    const resume: WatchResume = { fromBlock: Number(from), by: ctx.by, at: at.toISOString() };
    const op = ctx.kv.atomic().set(watchResumeKey(chain), resume);
    const audit = appendAudit(
      op,
      { by: ctx.by, action: "watch.resume", subject: chain, before: null, after: resume },
      at,
    );
    if (!(await op.commit()).ok) {
      throw new OpError(409, `watcher ${chain}: the instruction was not recorded; try again`);
    }
    return { chain, fromBlock: resume.fromBlock, by: ctx.by, auditId: audit.id };
  },
  text: (r) => [`watcher ${r.chain} will rescan from block ${r.fromBlock} at its next tick (audit ${r.auditId})`],
});

export const WATCH_OPS = [watchResume];
