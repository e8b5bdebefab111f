/**
 * Order events (kv/order_events.ts): every order creation and status change gets exactly one event, in commit order,
 * with a gapless per-owner seq; two sequencers on one KV file never duplicate or skip one; a crash before or during
 * sequencing loses nothing; what an event sink writes commits with the log or not at all. Real KV files; the pipeline
 * test runs the sim pipeline of a real server.
 */
import assert from "node:assert/strict";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { openKv } from "../kv/open.ts";
import {
  type EventSink,
  listOutbox,
  listOwnerEvents,
  type OrderEvent,
  ownerLastSeq,
  sequenceOrderEvents,
} from "../kv/order_events.ts";
import { createOrder, orderKey, updateOrder } from "../kv/orders.ts";
import { type Order, type OrderStatus } from "../model/order.ts";
import { withKv } from "./support/kv.ts";
import { inStatus, makeOrder } from "./support/orders.ts";
import { depositAddress, FAST_PIPELINE, partner, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";

const OWNERS = ["0x" + "a1".repeat(20), "0x" + "b2".repeat(20), "0x" + "c3".repeat(20)];
const MINT_PATH: OrderStatus[] = ["pending", "processing", "minting", "completed"];

/** The committed status changes, as seen by recording every successful commit that writes an order record. */
class StatusChangeRecorder {
  readonly commits: { versionstamp: string; orders: Order[] }[] = [];

  install(kv: Deno.Kv) {
    const atomic = kv.atomic.bind(kv);
    kv.atomic = () => {
      const op = atomic();
      const written: Order[] = [];
      const set = op.set.bind(op);
      op.set = (key, value, options) => {
        if (key.length === 2 && key[0] === "order") written.push(value as Order);
        return set(key, value, options);
      };
      const commit = op.commit.bind(op);
      op.commit = async () => {
        const res = await commit();
        if (res.ok && written.length > 0) this.commits.push({ versionstamp: res.versionstamp, orders: written });
        return res;
      };
      return op;
    };
  }

  /** Per owner, `orderId:status` of each creation and status change in commit order. */
  expected(): Map<string, string[]> {
    const last = new Map<string, string>();
    const byOwner = new Map<string, string[]>();
    const sorted = [...this.commits].sort((a, b) => (a.versionstamp < b.versionstamp ? -1 : 1));
    for (const { orders } of sorted) {
      for (const o of orders) {
        if (last.get(o.id) === o.status) continue;
        last.set(o.id, o.status);
        byOwner.set(o.owner, [...byOwner.get(o.owner) ?? [], `${o.id}:${o.status}`]);
      }
    }
    return byOwner;
  }
}

const changeOf = (e: OrderEvent) => `${e.order.id}:${e.order.status}`;

/** Asserts the owner's log is seq 1..n, each event well formed, and returns it. */
async function gaplessLog(kv: Deno.Kv, owner: string): Promise<OrderEvent[]> {
  const events = await listOwnerEvents(kv, owner, 0, 10_000);
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), `${owner}: seq is 1..n`);
  const created = new Set<string>();
  for (const e of events) {
    assert.equal(e.owner, owner);
    if (e.type === "order.confirmations") {
      // A pending order's new count (actors/confirmation_events.ts), between its status events.
      assert.equal(e.order.status, "pending");
      assert.ok(e.order.confirmations! >= 0 && e.order.confirmations! <= e.order.requiredConfirmations!);
      continue;
    }
    assert.equal(e.type, `order.${e.order.status}`);
    assert.match(e.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The time of the change: the order's creation for its first event, its updatedAt for the others.
    assert.equal(e.createdAt, created.has(e.order.id) ? e.order.updatedAt : e.order.createdAt);
    created.add(e.order.id);
  }
  assert.equal(await ownerLastSeq(kv, owner), events.length);
  assert.equal(new Set(events.map((e) => e.id)).size, events.length, "event ids are unique");
  return events;
}

/** Runs the sequencer until the outbox is empty (one process, no lease needed). */
async function drain(kv: Deno.Kv, sinks: EventSink[] = []) {
  while ((await listOutbox(kv)).length > 0) await sequenceOrderEvents(kv, sinks);
}

/** Creates `n` orders per owner and moves each along the mint path, interleaving owners, with `between` run between. */
async function churn(kv: Deno.Kv, n: number, between: () => Promise<unknown> = async () => {}) {
  const orders: Order[] = [];
  for (let i = 0; i < n; i++) {
    for (const [k, owner] of OWNERS.entries()) {
      const o = makeOrder(owner, "mint", "pending", i * OWNERS.length + k);
      assert.ok(await createOrder(kv, o));
      orders.push(o);
    }
    await between();
  }
  for (const status of MINT_PATH.slice(1)) {
    for (const o of orders) {
      await updateOrder(kv, o.id, (cur) => inStatus(cur, status));
      // A change that keeps the status makes no event.
      await updateOrder(kv, o.id, (cur) => ({ ...cur, updatedAt: new Date().toISOString() }));
    }
    await between();
  }
  return orders;
}

Deno.test("a real sim pipeline run: each status change of each order is one event, in commit order, gapless", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  const recorder = new StatusChangeRecorder();
  recorder.install(server.services.kv);
  try {
    const partners = [await partner(server), await partner(server)];
    for (const [p, { token }] of partners.entries()) {
      for (const [i, chain] of NATIVE_CHAINS.slice(0, 3).entries()) {
        const address = await depositAddress(server, token, chain, EVM_CHAINS[(i + p) % EVM_CHAINS.length]);
        await sim(server, "deposits", { chain, address, amount: (NATIVE[chain].minimumDeposit * 2n).toString() });
      }
    }
    for (const { token } of partners) await waitForOrders(server, token, (o) => o.length === 3 && o.every(terminal));
    const kv = server.services.kv;
    const expected = recorder.expected();
    assert.equal(expected.size, 2);
    // The runtime's sequencer catches up on its own; wait for it (no assertion on how fast).
    for (let i = 0; i < 500 && (await listOutbox(kv)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    for (const { wallet } of partners) {
      const owner = wallet.toLowerCase();
      const events = (await gaplessLog(kv, owner)).filter((e) => e.type !== "order.confirmations");
      assert.deepEqual(events.map(changeOf), expected.get(owner), "exactly the committed changes, in commit order");
      const orderIds = new Set(events.map((e) => e.order.id));
      assert.equal(orderIds.size, 3);
      for (const id of orderIds) {
        const path = events.filter((e) => e.order.id === id).map((e) => e.order.status);
        assert.equal(path[0], "pending", `${id}: ${path}`);
        assert.equal(path.at(-1), "completed", `${id}: ${path}`);
        const stored = (await kv.get<Order>(orderKey(id))).value!;
        assert.deepEqual(events.filter((e) => e.order.id === id).at(-1)!.order.updatedAt, stored.updatedAt);
      }
    }
  } finally {
    await server.close();
  }
});

Deno.test("two sequencers on two KV handles of one file, racing writers: no event duplicated or skipped", async () => {
  await withKv("order-events-", async (kv, path) => {
    const other = await openKv(path); // a second "process": its own handle on the same file
    const recorder = new StatusChangeRecorder();
    recorder.install(kv);
    try {
      let stop = false;
      const sequencer = async (handle: Deno.Kv) => {
        while (!stop) {
          await sequenceOrderEvents(handle, [], { limit: 7 });
          await new Promise((r) => setTimeout(r, 1));
        }
      };
      const running = [sequencer(kv), sequencer(other), sequencer(other)];
      await churn(kv, 8, () => new Promise((r) => setTimeout(r, 2)));
      stop = true;
      await Promise.all(running);
      await drain(other);
      const expected = recorder.expected();
      let total = 0;
      for (const owner of OWNERS) {
        const events = await gaplessLog(kv, owner);
        assert.deepEqual(events.map(changeOf), expected.get(owner));
        assert.equal(events.length, 8 * MINT_PATH.length);
        total += events.length;
      }
      assert.equal(total, OWNERS.length * 8 * MINT_PATH.length);
      assert.deepEqual(await listOutbox(kv), []);
    } finally {
      other.close();
    }
  });
});

Deno.test("a crash after the order write and one during sequencing lose nothing: the next run sequences all once", async () => {
  await withKv("order-events-", async (kv, path) => {
    const recorder = new StatusChangeRecorder();
    recorder.install(kv);
    await churn(kv, 3);
    // The writing process "dies" here: the changes are committed, nothing is sequenced yet.
    assert.equal((await listOutbox(kv)).length, OWNERS.length * 3 * MINT_PATH.length);
    const restarted = await openKv(path);
    try {
      // The sequencer "dies" after reading everything and before its commit.
      const dying: EventSink = {
        prepare: () => Promise.reject(new Error("killed before the commit")),
      };
      await assert.rejects(sequenceOrderEvents(restarted, [dying]), /killed before the commit/);
      for (const owner of OWNERS) assert.deepEqual(await listOwnerEvents(restarted, owner, 0, 100), []);
      assert.equal(await sequenceOrderEvents(restarted, []), OWNERS.length * 3 * MINT_PATH.length);
      assert.equal(await sequenceOrderEvents(restarted, []), 0, "a second run finds nothing");
      const expected = recorder.expected();
      for (const owner of OWNERS) {
        assert.deepEqual((await gaplessLog(restarted, owner)).map(changeOf), expected.get(owner));
      }
    } finally {
      restarted.close();
    }
  });
});

/** A sink like the webhook one: reads each owner's endpoint in `prepare`, writes a delivery per event, checks it. */
function deliverySink(opts: { changeEndpointOnce?: Deno.Kv } = {}): EventSink & { prepared: number } {
  let changed = false;
  const sink = {
    prepared: 0,
    async prepare(kv: Deno.Kv, events: readonly OrderEvent[]) {
      sink.prepared++;
      const owners = [...new Set(events.map((e) => e.owner))];
      const endpoints = new Map<string, Deno.KvEntryMaybe<number>>();
      for (const owner of owners) endpoints.set(owner, await kv.get<number>(["test_endpoint", owner]));
      if (opts.changeEndpointOnce && !changed) {
        changed = true; // another request changes an endpoint after the sink read it
        await opts.changeEndpointOnce.set(["test_endpoint", owners[0]], 2);
      }
      return (atomic: Deno.AtomicOperation, event: OrderEvent) => {
        const endpoint = endpoints.get(event.owner)!;
        atomic.check(endpoint).set(["test_delivery", event.owner, event.seq], {
          eventId: event.id,
          endpointVersion: endpoint.value,
        });
      };
    },
  };
  return sink;
}

Deno.test("a sink's writes commit with the log: a change to what it read makes the batch retry, all or nothing", async () => {
  await withKv("order-events-", async (kv) => {
    for (const owner of OWNERS) await kv.set(["test_endpoint", owner], 1);
    await churn(kv, 2);
    const sink = deliverySink({ changeEndpointOnce: kv });
    assert.equal(await sequenceOrderEvents(kv, [sink]), OWNERS.length * 2 * MINT_PATH.length);
    assert.ok(sink.prepared >= 2, "the refused batch was prepared again");
    for (const owner of OWNERS) {
      const events = await gaplessLog(kv, owner);
      const deliveries: Deno.KvEntry<{ eventId: string; endpointVersion: number }>[] = [];
      for await (
        const d of kv.list<{ eventId: string; endpointVersion: number }>({ prefix: ["test_delivery", owner] })
      ) {
        deliveries.push(d);
      }
      assert.deepEqual(deliveries.map((d) => d.value.eventId), events.map((e) => e.id), "one delivery per event");
      // Written in the same commit as the event, with what the sink read in that batch.
      const expectedVersion = owner === OWNERS[0] ? 2 : 1;
      for (const d of deliveries) assert.equal(d.value.endpointVersion, expectedVersion);
    }
  });
});

Deno.test("a backlog beyond one atomic's limits is cut into atomics Deno accepts, still gapless and in order", async () => {
  await withKv("order-events-", async (kv) => {
    const recorder = new StatusChangeRecorder();
    recorder.install(kv);
    await churn(kv, 30); // 360 events
    // A sink adding a check per event: 100 checks per atomic at most, so at least 4 commits.
    const perEventCheck: EventSink = {
      prepare: () =>
        Promise.resolve((atomic, event) => {
          atomic.check({ key: ["test_never_written", event.id], versionstamp: null });
          atomic.set(["test_delivery", event.owner, event.seq], event.id);
        }),
    };
    let commits = 0;
    const atomic = kv.atomic.bind(kv);
    kv.atomic = () => {
      commits++;
      return atomic();
    };
    assert.equal(await sequenceOrderEvents(kv, [perEventCheck]), 360);
    kv.atomic = atomic;
    assert.ok(commits >= 4, `${commits} commits`);
    const expected = recorder.expected();
    for (const owner of OWNERS) assert.deepEqual((await gaplessLog(kv, owner)).map(changeOf), expected.get(owner));
    // `limit` bounds one call; readers page with afterSeq.
    await churn(kv, 1);
    assert.equal(await sequenceOrderEvents(kv, [], { limit: 5 }), 5);
    await drain(kv);
    const page = await listOwnerEvents(kv, OWNERS[1], 100, 3);
    assert.deepEqual(page.map((e) => e.seq), [101, 102, 103]);
    assert.deepEqual(await listOwnerEvents(kv, OWNERS[1], 124, 10), []);
  });
});
