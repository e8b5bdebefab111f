import { indexOrderChanges } from "./orders.ts";
import { indexHeldTransfers } from "./pipeline.ts";

/**
 * Opens the KV file, creating its folder. Always a path in a process: `Deno.openKv()` without one is in-memory when
 * compiled. The empty path is Deno Deploy's own KV (`Deno.openKv()` with no argument; config/env.ts sets it in deploy
 * mode without KV_PATH): nothing is created on disk.
 *
 * `queues: false` (deploy mode, where KV has no queues): `atomic().enqueue` adds nothing, so the commits that ring
 * an order's doorbell (actors/order_actor.ts, watcher.ts, operator.ts) work unchanged; the cron sweep of due orders
 * drives everything, as the design has it (the queue is only a doorbell).
 *
 * Two processes writing one local KV file (the server and `deno task admin`, or two servers) make SQLite refuse a
 * commit now and then with `TypeError: database is locked` instead of waiting. Nothing was written when that
 * happens, so the handle returned here retries such commits: callers then read `ok: false` only for a failed
 * check, never for a lost race on the file lock (a create that took a lock failure for a duplicate would drop data).
 */
export async function openKv(path: string, opts: { queues?: boolean } = {}): Promise<Deno.Kv> {
  let kv: Deno.Kv;
  if (path === "") kv = withoutQueues(await Deno.openKv(), opts.queues ?? false);
  else {
    const dir = path.slice(0, path.lastIndexOf("/"));
    if (dir && !/^https?:/.test(path)) await Deno.mkdir(dir, { recursive: true });
    kv = withoutQueues(retryingLockedCommits(await Deno.openKv(path)), opts.queues ?? true);
  }
  // Before anything lists or resolves held transfers: those stored before their index get it (one read afterwards).
  await indexHeldTransfers(kv);
  // Before anything serves incremental sync: orders stored before the change index get their entry.
  await indexOrderChanges(kv);
  return kv;
}

function withoutQueues(kv: Deno.Kv, queues: boolean): Deno.Kv {
  if (queues) return kv;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    op.enqueue = () => op;
    return op;
  };
  return kv;
}

const MAX_LOCK_RETRIES = 200;

function isLocked(err: unknown): boolean {
  return err instanceof Error && /database is locked/i.test(err.message);
}

async function retryLocked<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isLocked(err) || attempt >= MAX_LOCK_RETRIES) throw err;
      await new Promise((r) => setTimeout(r, 1 + Math.random() * Math.min(50, attempt * 2)));
    }
  }
}

export function retryingLockedCommits(kv: Deno.Kv): Deno.Kv {
  const atomic = kv.atomic.bind(kv);
  const set = kv.set.bind(kv);
  const del = kv.delete.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => retryLocked(commit);
    return op;
  };
  kv.set = (key, value, options) => retryLocked(() => set(key, value, options));
  kv.delete = (key) => retryLocked(() => del(key));
  return kv;
}
