/**
 * The idle cost: KV commits per minute of a service with no deposits and no burns, the real service in process
 * (tests/support/server.ts, default timings: SIM_BLOCK_MS and SWEEP_MS unset), in two set-ups:
 * - `sim`: every chain simulated (`deno task dev`);
 * - `anvil`: CHAIN_MODE=devnet, base live on a local anvil that mines a block every second (a live chain keeps making
 *   blocks while nothing happens), the other chains simulated.
 *
 * Commits are counted by wrapping the service's KV handle: `kv.atomic().commit()`, `kv.set` and `kv.delete`, each call
 * once (ok or not; kv/open.ts's lock retries sit below, so a retried commit counts once), grouped by the first key the
 * commit writes. SQLite's file change counter would not do: in WAL mode the header is not rewritten per transaction.
 * After a warm-up (the first cursors, the sim genesis) the commits of a quiet window are counted and printed per
 * minute, in total and per enabled chain.
 * Run: deno task bench:idle   (BENCH_IDLE_SECONDS=120, BENCH_WARMUP_SECONDS=10, BENCH_IDLE_MODES=sim,anvil)
 */
import { startTestServer } from "../tests/support/server.ts";
import { liveBase } from "../tests/support/live_base.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const SECONDS = num("BENCH_IDLE_SECONDS", 120);
const WARMUP = num("BENCH_WARMUP_SECONDS", 10);
const MODES = (Deno.env.get("BENCH_IDLE_MODES") ?? "sim,anvil").split(",").map((m) => m.trim());

class CommitCounter {
  readonly byHead = new Map<string, number>();
  total = 0;
  counting = false;

  #count(key: Deno.KvKey | undefined) {
    if (!this.counting) return;
    const head = key === undefined ? "(none)" : key.slice(0, key[0] === "lease" || key[0] === "sim" ? 2 : 1).join(":");
    this.byHead.set(head, (this.byHead.get(head) ?? 0) + 1);
    this.total++;
  }

  install(kv: Deno.Kv) {
    const atomic = kv.atomic.bind(kv);
    const set = kv.set.bind(kv);
    const del = kv.delete.bind(kv);
    kv.atomic = () => {
      const op = atomic();
      let first: Deno.KvKey | undefined;
      for (const name of ["set", "delete", "sum", "min", "max"] as const) {
        const original = (op[name] as (...a: unknown[]) => Deno.AtomicOperation).bind(op);
        (op[name] as unknown) = (key: Deno.KvKey, ...rest: unknown[]) => {
          first ??= key;
          return original(key, ...rest);
        };
      }
      const commit = op.commit.bind(op);
      op.commit = async () => {
        const res = await commit();
        this.#count(first);
        return res;
      };
      return op;
    };
    kv.set = async (key, value, options) => {
      const res = await set(key, value, options);
      this.#count(key);
      return res;
    };
    kv.delete = async (key) => {
      await del(key);
      this.#count(key);
    };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(mode: string, env: Record<string, string>) {
  const server = await startTestServer({ PIPELINE: "on", ...env });
  const counter = new CommitCounter();
  counter.install(server.services.kv);
  try {
    await sleep(WARMUP * 1000);
    counter.counting = true;
    const began = performance.now();
    await sleep(SECONDS * 1000);
    counter.counting = false;
    const minutes = (performance.now() - began) / 60_000;
    const chains = server.services.chainPlan.enabled.length;
    const perMinute = counter.total / minutes;
    console.log(
      `${mode}: ${counter.total} commits in ${(minutes * 60).toFixed(0)} s idle = ${perMinute.toFixed(1)}/min, ` +
        `${(perMinute / chains).toFixed(2)}/min per chain (${chains} chains)`,
    );
    const rows = [...counter.byHead].sort((a, b) => b[1] - a[1]);
    for (const [head, n] of rows) console.log(`  ${head.padEnd(40)} ${(n / minutes).toFixed(1)}/min`);
  } finally {
    await server.close();
  }
}

/**
 * Recorded on main at 681a839, before the idle-cost work (30 s windows, this machine): a past measurement, printed for
 * comparison only.
 */
const BEFORE: Record<string, string> = {
  sim: "1,712/min (171 per chain): cursors 600, sim blocks 600, watch leases 240, sim-block leases 200, sweepers 72",
  anvil: "1,630/min (163 per chain), the same mix",
};
console.log(
  `recorded before the idle-cost work (main at 681a839, not measured by this run): sim ${BEFORE.sim}; anvil ${BEFORE.anvil}`,
);

for (const mode of MODES) {
  if (mode === "sim") {
    await measure("sim (every chain simulated)", {});
  } else if (mode === "anvil") {
    const base = await liveBase();
    const stopMining = base.mineEvery(1000);
    try {
      await measure(
        "anvil (base live on anvil mining a block per second, the rest simulated)",
        base.env({
          BASE_BLOCK_MS: "1000",
          BASE_CONFIRMATIONS: "2",
        }),
      );
    } finally {
      await stopMining();
      await base.close();
    }
  } else {
    throw new Error(`unknown mode ${mode}: sim or anvil`);
  }
}
