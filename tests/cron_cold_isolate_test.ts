/**
 * Deploy mode as Deno Deploy runs it: an isolate lives only for a cron run, so each minute's run may start in a fresh
 * isolate with nothing in memory (a new runtime, a new lease owner). A watcher that scanned blocks and recorded nothing
 * keeps its cursor in memory (batched, actors/watcher.ts): unless a run stores it before it ends, the next cold run
 * starts again from the old stored cursor, and on a quiet chain the stored cursor never moves, so every run rescans a
 * range that grows by the chain's block rate each minute.
 */
import assert from "node:assert/strict";
import { buildServices, pipelineRuntime } from "../app.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { deployModeConfig } from "./support/deploy.ts";

const MINUTE = 60_000;

Deno.test("deploy mode, a fresh isolate per cron run: a quiet chain's watcher stores the cursor it scanned to", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cron-cold-" });
  const services = await buildServices(await deployModeConfig(`${dir}/kv.sqlite3`));
  const kv = services.kv;
  const ctx = services.pipeline!;
  let clock = Date.now();
  ctx.now = () => new Date(clock);
  ctx.log = () => {};
  const chain = "sol";
  const ledger = new SimLedger(kv, chain);
  /** One cron minute of the watch group in a fresh isolate: a new runtime, nothing remembered from the last one. */
  const coldWatchRun = async () => {
    clock += MINUTE;
    const runtime = pipelineRuntime(services)!;
    runtime.startCronOnly();
    await runtime.runGroup("watch", 10_000);
  };
  const stored = async () => (await kv.get<Cursor>(cursorKey(chain))).value?.number;
  try {
    await coldWatchRun(); // the first run stores the cursor it starts from
    for (let minute = 0; minute < 3; minute++) {
      // Empty blocks: nothing to record, the chain just moves on.
      for (let i = 0; i < 5; i++) await ledger.sealBlock();
      const tip = (await ledger.sealBlock()).number;
      await coldWatchRun();
      assert.equal(await stored(), tip, `minute ${minute}: the stored cursor of ${chain} after a cold run`);
    }
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
