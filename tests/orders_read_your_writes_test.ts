/**
 * Read your writes through the order read caches (docs/order-reads.md "Freshness"): two servers on one KV file (this
 * process and a child `main.ts`) are polled without pause, so their page caches are warm and their JWT gates' shared
 * reads are always running; an order changed by this process or by a third process must show its new state in the very
 * next GET /orders, filtered GET /orders and GET /orders/:id of either server. No stale page, ever.
 */
import assert from "node:assert/strict";
import { createOrder } from "../kv/orders.ts";
import { type Order, type OrderStatus } from "../model/order.ts";
import { inStatus, makeOrder } from "./support/orders.ts";
import { ChildServer } from "./support/child_server.ts";
import { call, randomWallet, startTestServer, TEST_BASE_URL, tokenFor } from "./support/server.ts";
import type { Json } from "./support/pipeline.ts";
import { updateOrder } from "../kv/orders.ts";
import { CoalescedReads } from "../routes/jwt.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The order writer in its own process (tests/support/order_writer.ts). */
class Writer {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;

  constructor(kvPath: string) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "tests/support/order_writer.ts", kvPath],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#lines = lines(this.#child.stdout.pipeThrough(new TextDecoderStream()))[Symbol.asyncIterator]();
  }

  async move(id: string, status: OrderStatus): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(`${id} ${status}\n`));
    const answer = await this.#lines.next();
    assert.equal(answer.value, `done ${id}`);
  }

  async close() {
    await this.#writer.close();
    await this.#child.status;
  }
}

async function* lines(stream: ReadableStream<string>) {
  let buffered = "";
  for await (const chunk of stream) {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
}

Deno.test("a write is seen by the next read of either server, caches warm and gate reads shared", async () => {
  const a = await startTestServer();
  const b = await ChildServer.start(a.dir, { KV_PATH: a.kvPath, BASE_URL: TEST_BASE_URL, PIPELINE: "off" });
  const writer = new Writer(a.kvPath);
  let polling = true;
  const pollers: Promise<void>[] = [];
  try {
    const wallet = randomWallet();
    const token = await tokenFor(a, wallet);
    const orders: Order[] = [];
    for (let i = 0; i < 4; i++) {
      const order = makeOrder(wallet, i % 2 ? "mint" : "burn", "pending", i);
      assert.ok(await createOrder(a.services.kv, order));
      orders.push(order);
    }
    const servers = [
      { name: "this process", get: (path: string) => call(a, "GET", path, { token }) },
      { name: "the child process", get: (path: string) => b.call("GET", path, { token }) },
    ];
    // Without pause, several at a time: the same pages stay cached and a gate read is nearly always running.
    for (const s of servers) {
      for (let i = 0; i < 6; i++) {
        pollers.push((async () => {
          while (polling) {
            for (const path of ["/orders", "/orders?status=pending", `/orders/${orders[i % orders.length].id}`]) {
              assert.equal((await s.get(path)).status, 200);
            }
          }
        })());
      }
    }

    const state = new Map(orders.map((o) => [o.id, "pending" as OrderStatus]));
    for (let round = 0; round < 24; round++) {
      const order = orders[round % orders.length];
      const next: OrderStatus = state.get(order.id) === "pending" ? "processing" : "pending";
      if (round % 2 === 0) {
        await updateOrder(a.services.kv, order.id, (o) => inStatus(o, next));
      } else {
        await writer.move(order.id, next);
      }
      state.set(order.id, next);
      const pendingIds = orders.filter((o) => state.get(o.id) === "pending").map((o) => o.id).reverse();
      for (const s of servers) {
        const where = `round ${round}, written by ${
          round % 2 ? "a third process" : "this process"
        }, read from ${s.name}`;
        const list = await s.get("/orders");
        const seen = new Map(list.body.data.orders.map((o: Json) => [o.id, o.status]));
        assert.equal(seen.get(order.id), next, where);
        const pending = await s.get("/orders?status=pending");
        assert.deepEqual(pending.body.data.orders.map((o: Json) => o.id), pendingIds, where);
        assert.equal(pending.body.data.pagination.total, pendingIds.length, where);
        const one = await s.get(`/orders/${order.id}`);
        assert.equal(one.body.data.status, next, where);
        assert.equal("confirmations" in one.body.data, next === "pending", where);
      }
    }
  } finally {
    polling = false;
    await Promise.allSettled(pollers);
    await writer.close();
    await b.stop();
    await a.close();
  }
});

Deno.test("the JWT gate's shared read never serves a request a read that started before it arrived", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  try {
    // The real KV, with each read's answer held back until released: a read stays "running" as long as the test likes.
    const held: (() => void)[] = [];
    const slow = new Proxy(kv, {
      get(target, prop) {
        if (prop === "getMany") {
          return async (keys: Deno.KvKey[]) => {
            const entries = await target.getMany(keys);
            await new Promise<void>((release) => held.push(release));
            return entries;
          };
        }
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const reads = new CoalescedReads(slow);
    const readStarted = async (why: string) => {
      for (let i = 0; i < 2_000 && held.length < 1; i++) await new Promise((r) => setTimeout(r, 1));
      assert.ok(held.length > 0, why);
    };
    const key = ["version", "0xabc"];
    await kv.set(key, 1);
    const keys = () => [key];
    const first = reads.getMany("0xabc|key", keys);
    const joined = reads.getMany("0xabc|key", keys); // arrived while `first` runs: waits for the next read
    await readStarted("the first request reads");
    await kv.set(key, 2); // committed before the next request arrives
    const after = reads.getMany("0xabc|key", keys);
    assert.equal(joined, after, "requests arriving during one read share the next one");
    held.shift()!();
    assert.equal((await first)[0].value, 1);
    await readStarted("requests that arrived during a read get a read of their own after it");
    held.shift()!();
    assert.equal((await after)[0].value, 2, "a request must see a write committed before it arrived");
    assert.equal((await joined)[0].value, 2);
    // Other keys are other groups: never joined to this one.
    const other = reads.getMany("0xdef|key", () => [["version", "0xdef"]]);
    await readStarted("another group reads at once");
    held.shift()!();
    assert.equal((await other)[0].value, null);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
