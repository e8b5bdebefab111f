/**
 * A cron run drains its group until nothing is left or its budget (45 s) is spent. `PipelineRuntime.stop()` (SIGTERM)
 * must end such a run at once: a drain loop that kept going after stop would keep reading and writing KV for the rest
 * of its budget (a watcher scanning and recording, the sweep re-listing due orders it may no longer wake) and hold the
 * graceful shutdown past its bound, so the process would exit 1 with its cursors unflushed and its leases held.
 */
import assert from "node:assert/strict";
import { buildServices, pipelineRuntime } from "../app.ts";
import { addReschedule, dueAtKey } from "../kv/pipeline.ts";
import { deployModeConfig } from "./support/deploy.ts";

Deno.test("runtime stop ends a cron run's drain at once (the sweep of due orders stops listing)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stop-drain-" });
  const services = await buildServices(await deployModeConfig(`${dir}/kv.sqlite3`));
  const kv = services.kv;
  services.pipeline!.log = () => {};
  try {
    // An entry that stays due whatever a step does (its order does not exist): the sweep keeps finding work.
    const orderId = "01900000-0000-7000-8000-000000000000";
    const none = { key: dueAtKey(orderId), value: null, versionstamp: null };
    assert.ok((await addReschedule(kv.atomic(), orderId, none, 0).commit()).ok);
    let dueListings = 0;
    const list = kv.list.bind(kv);
    kv.list = ((selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
      if ("prefix" in selector && selector.prefix[0] === "pipeline_due") dueListings++;
      return list(selector, options);
    }) as typeof kv.list;

    const runtime = pipelineRuntime(services)!;
    runtime.startCronOnly();
    const run = runtime.runGroup("orders", 4_000);
    while (dueListings < 1) await new Promise((r) => setTimeout(r, 1));
    const atStop = dueListings;
    await runtime.stop();
    const afterStop = dueListings - atStop;
    await run;
    // The listing in progress may finish, and one more may start before the loop sees the stop; never a drain.
    assert.ok(afterStop <= 2, `the sweep listed due orders ${afterStop} times after stop() was called`);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
