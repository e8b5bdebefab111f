/**
 * The watchers' looks (actors/watcher_looks.ts, kv/watcher_looks.ts) on a real KV file: what they cost (one set per
 * period, none while nothing was looked at, one more when a chain is looked at for the first time), what a reader
 * gets (the newest look per chain across processes), and cron mode storing only when its run ends.
 */
import assert from "node:assert/strict";
import { lookRecordMs, WatcherLookRecorder } from "../actors/watcher_looks.ts";
import { listWatcherLooks, newestLooks, writeWatcherLooks } from "../kv/watcher_looks.ts";
import { withKv } from "./support/kv.ts";

function counted(kv: Deno.Kv) {
  const sets: Deno.KvKey[] = [];
  const set = kv.set.bind(kv);
  kv.set = (key, value, options) => {
    sets.push(key);
    return set(key, value, options);
  };
  return sets;
}

Deno.test("looks: one record per period per process, a first look stored at once, nothing when nothing was looked at", async () => {
  await withKv("watcher-looks-", async (kv) => {
    const sets = counted(kv);
    const r = new WatcherLookRecorder(kv, "proc-a", 60_000, () => {});
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    await r.flush(t0);
    assert.equal(sets.length, 0, "nothing looked at: no commit");
    r.note("sol", t0, 10, 0);
    await r.flush(t0);
    assert.equal(sets.length, 1, "the first look is stored at once");
    for (let s = 1; s < 60; s++) {
      r.note("sol", t0 + s * 1000, 10, 0);
      await r.flush(t0 + s * 1000);
    }
    assert.equal(sets.length, 1, "a tick per second for a minute at rest: no other commit");
    r.note("doge", t0 + 30_500, 7, 0);
    await r.flush(t0 + 30_500);
    assert.equal(sets.length, 2, "a chain in no record yet is stored at its first look");
    r.note("sol", t0 + 61_000, 11, 0);
    await r.flush(t0 + 61_000);
    assert.equal(sets.length, 2, "the period runs from the last record (the doge one)");
    r.note("sol", t0 + 91_000, 11, 0);
    await r.flush(t0 + 91_000);
    assert.equal(sets.length, 3, "a period after the last record");
    const [record] = await listWatcherLooks(kv);
    assert.equal(record.owner, "proc-a");
    assert.deepEqual(Object.keys(record.chains).sort(), ["doge", "sol"]);
    assert.deepEqual(record.chains.sol, { at: new Date(t0 + 91_000).toISOString(), scannedTo: 11, lag: 0 });
    assert.equal(record.chains.doge?.scannedTo, 7);
    assert.deepEqual(sets.map((k) => k[0]), ["watcher_looks", "watcher_looks", "watcher_looks"]);
  });
});

Deno.test("looks: cron mode stores only when forced (once per run); a reader gets each chain's newest look", async () => {
  await withKv("watcher-looks-", async (kv) => {
    const sets = counted(kv);
    const r = new WatcherLookRecorder(kv, "cron", 60_000, () => {});
    r.onlyWhenForced = true;
    r.note("xrp", 1_000, 5, 0);
    await r.flush(1_000);
    assert.equal(sets.length, 0);
    await r.flush(1_000, true);
    assert.equal(sets.length, 1);
    await writeWatcherLooks(kv, {
      owner: "other",
      at: new Date(5_000).toISOString(),
      chains: { xrp: { at: new Date(5_000).toISOString(), scannedTo: 9, lag: 2 } },
    });
    const newest = newestLooks(await listWatcherLooks(kv));
    assert.deepEqual(newest.get("xrp"), { at: new Date(5_000).toISOString(), scannedTo: 9, lag: 2, owner: "other" });
    assert.equal(newest.get("sol"), undefined);
  });
});

Deno.test("looks: the period is a third of the unwatched time, at most a minute", () => {
  assert.equal(lookRecordMs(180_000), 60_000);
  assert.equal(lookRecordMs(3_000), 1_000);
  assert.equal(lookRecordMs(86_400_000), 60_000);
});

Deno.test("looks: ride on a commit made anyway, and then need no write of their own until a renewal fails to come", async () => {
  await withKv("watcher-looks-", async (kv) => {
    const sets = counted(kv);
    const r = new WatcherLookRecorder(kv, "proc-b", 60_000, () => {});
    r.note("base", 0, 100, 0);
    await r.flush(0);
    assert.equal(sets.length, 1);
    assert.equal(r.rideAlong(20_000), undefined, "nothing looked at since the record");
    r.note("base", 40_000, 140, 1);
    const ride = r.rideAlong(40_000)!;
    const op = kv.atomic().set(["lease", "watch:base"], { owner: "proc-b", expiresAt: 160_000 });
    ride.add(op);
    assert.ok((await op.commit()).ok);
    ride.committed();
    const [record] = await listWatcherLooks(kv);
    assert.deepEqual(record.chains.base, { at: new Date(40_000).toISOString(), scannedTo: 140, lag: 1 });
    r.note("base", 70_000, 170, 0);
    await r.flush(70_000);
    assert.equal(sets.length, 1, "the ride reset the period: no write of its own a minute after the first");
    await r.flush(100_000);
    assert.equal(sets.length, 1, "riding: a write of its own waits 1.5 periods for the next renewal");
    await r.flush(130_000);
    assert.equal(sets.length, 2, "no renewal came: its own write, 1.5 periods after the ride");
    r.note("base", 140_000, 180, 0);
    await r.flush(190_000);
    assert.equal(sets.length, 3, "the ride long past: the usual period again");
  });
});
