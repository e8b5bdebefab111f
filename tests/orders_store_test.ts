import assert from "node:assert/strict";
import { withKv as withTempKv } from "./support/kv.ts";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import {
  addOrderCreate,
  addOrderUpdate,
  createOrder,
  getOrder,
  listOrderIdsByStatus,
  listOrders,
  updateOrder,
} from "../kv/orders.ts";
import {
  newOrderId,
  type Order,
  ORDER_STATUSES,
  ORDER_TYPES,
  type OrderStatus,
  type OrderType,
  toOrderView,
  withDetails,
} from "../model/order.ts";
import { inStatus } from "./support/orders.ts";

const OWNER_A = "0x" + "ab".repeat(20);
const OWNER_B = "0x" + "cd".repeat(20);
const STRANGER = "0x" + "ef".repeat(20);

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("orders_store_", fn);

let serial = 0;
/** A valid order; the partner wallet is written in upper case to prove `owner` is its lowercase form. */
function makeOrder(owner: string, type: OrderType, status: OrderStatus = "pending"): Order {
  const n = serial++;
  const native = NATIVE_CHAINS[n % NATIVE_CHAINS.length];
  const evm = EVM_CHAINS[n % EVM_CHAINS.length];
  const partner = "0x" + owner.slice(2).toUpperCase();
  const mint = type === "mint";
  const order: Order = {
    id: newOrderId(),
    type: "mint",
    status: "pending",
    sourceChain: mint ? native : evm,
    destinationChain: mint ? evm : native,
    token: mint ? NATIVE[native].token.symbol : NATIVE[native].uAsset.symbol,
    amount: String(1_000_000_000n + BigInt(n)),
    sourceWallet: mint ? `native-deposit-${n}` : partner,
    destinationWallet: mint ? partner : `native-destination-${n}`,
    workflowId: `wf-${n}`,
    transactionHash: null,
    errorMessage: null,
    createdAt: new Date(Date.UTC(2030, 0, 1, 0, 0, n)).toISOString(),
    updatedAt: null,
    owner,
    details: {
      source: { chain: mint ? native : evm, txHash: `tx-${n}`, index: n, blockNumber: n },
      depositId: `0x${n.toString(16).padStart(64, "0")}`,
      confirmBy: new Date(Date.UTC(2030, 0, 1, 1, 0, n)).toISOString(),
    },
  };
  return inStatus(mint ? order : { ...order, type, details: { ...order.details, memo: null } }, status);
}

/** Every key and its versionstamp: any write anywhere changes this. */
async function snapshot(kv: Deno.Kv): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for await (const e of kv.list({ prefix: [] })) all.set(JSON.stringify(e.key), e.versionstamp);
  return all;
}

const FILTER_TYPES = [undefined, ...ORDER_TYPES];
const FILTER_STATUSES = [undefined, ...ORDER_STATUSES];

function expected(model: Order[], owner: string, type?: OrderType, status?: OrderStatus): Order[] {
  // `model` is in creation order, so newest first is simply its reverse: independent of ids and keys.
  return model.filter((o) => o.owner === owner && (!type || o.type === type) && (!status || o.status === status))
    .reverse();
}

/** Every owner x filter combination: exact total and exact full page (values included), plus the status sweep. */
async function assertStoreMatches(kv: Deno.Kv, model: Order[]) {
  for (const owner of [OWNER_A, OWNER_B, STRANGER]) {
    for (const type of FILTER_TYPES) {
      for (const status of FILTER_STATUSES) {
        const want = expected(model, owner, type, status);
        const got = await listOrders(kv, owner, { type, status, limit: 100, offset: 0 });
        const label = `${owner} ${type ?? "*"} ${status ?? "*"}`;
        assert.equal(got.total, want.length, `total ${label}`);
        assert.deepEqual(got.orders, want, `page ${label}`);
      }
    }
  }
  for (const status of ORDER_STATUSES) {
    const want = model.filter((o) => o.status === status).map((o) => o.id);
    assert.deepEqual(await listOrderIdsByStatus(kv, status), want, `status sweep ${status}`);
  }
}

Deno.test("newOrderId makes strictly increasing UUIDv7s", () => {
  const before = Date.now();
  const ids = Array.from({ length: 5000 }, () => newOrderId());
  const after = Date.now();
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  for (const id of ids) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(id.replaceAll("-", "").slice(0, 12), 16);
    assert.ok(ms >= before && ms <= after + 2, `timestamp ${ms} outside [${before}, ${after}]`);
  }
  // A clock that steps back must not break the order.
  const last = ids[ids.length - 1];
  assert.ok(newOrderId(before - 60_000) > last);
});

Deno.test("toOrderView has exactly the spec 2.4 fields, in order", () => {
  const order = { ...makeOrder(OWNER_A, "burn", "completed"), transactionHash: "0xhash", updatedAt: null };
  const view = toOrderView(order);
  assert.deepEqual(Object.keys(view), [
    "id",
    "type",
    "status",
    "sourceChain",
    "destinationChain",
    "token",
    "amount",
    "sourceWallet",
    "destinationWallet",
    "workflowId",
    "transactionHash",
    "errorMessage",
    "createdAt",
    "updatedAt",
  ]);
  const { owner: _owner, details: _details, ...publicFields } = order;
  assert.deepEqual(view, publicFields);
});

Deno.test("the store refuses orders that are mis-scoped or malformed, writing nothing", async () => {
  await withKv(async (kv) => {
    const good = makeOrder(OWNER_A, "mint");
    const bad: Order[] = [
      { ...good, owner: OWNER_B }, // not the mint's destination wallet
      { ...good, owner: OWNER_A.toUpperCase().replace("0X", "0x") },
      { ...good, token: "uSOL" },
      { ...good, amount: "1.5" },
      { ...good, amount: "007" },
      { ...good, id: crypto.randomUUID() }, // v4: not time-sortable
      { ...good, sourceChain: "base" },
    ];
    for (const order of bad) await assert.rejects(() => createOrder(kv, order));
    assert.equal((await snapshot(kv)).size, 0);
    assert.equal(await createOrder(kv, good), true);
  });
});

Deno.test("listOrders over 60 orders of two owners", async (t) => {
  await withKv(async (kv) => {
    const model: Order[] = [];
    const mintStatuses: OrderStatus[] = ["pending", "processing", "minting", "completed", "failed", "cancelled"];
    const burnStatuses: OrderStatus[] = ["pending", "processing", "burning", "completed", "failed", "cancelled"];
    for (let i = 0; i < 60; i++) {
      const type: OrderType = i % 2 === 0 ? "mint" : "burn";
      const status = (type === "mint" ? mintStatuses : burnStatuses)[Math.floor(i / 2) % 6];
      const order = makeOrder(i % 3 === 0 ? OWNER_B : OWNER_A, type, status);
      assert.equal(await createOrder(kv, order), true);
      model.push(order);
    }
    assert.equal(model.filter((o) => o.owner === OWNER_A).length, 40);

    await t.step("newest first", async () => {
      const { orders } = await listOrders(kv, OWNER_A, { limit: 100, offset: 0 });
      const createdA = model.filter((o) => o.owner === OWNER_A).map((o) => o.id);
      assert.deepEqual(orders.map((o) => o.id), createdA.reverse());
      assert.equal(orders[0].id, model.findLast((o) => o.owner === OWNER_A)?.id);
    });

    await t.step("total and page exact for every filter combination", () => assertStoreMatches(kv, model));

    await t.step("offset and limit edges", async () => {
      for (const owner of [OWNER_A, OWNER_B]) {
        for (const type of FILTER_TYPES) {
          for (const status of [undefined, "pending", "completed"] as const) {
            const all = expected(model, owner, type, status);
            const total = all.length;
            const page = (limit: number, offset: number) => listOrders(kv, owner, { type, status, limit, offset });
            assert.deepEqual(await page(100, 0), { orders: all, total });
            assert.deepEqual(await page(1, 0), { orders: all.slice(0, 1), total });
            if (total > 0) assert.deepEqual(await page(1, total - 1), { orders: all.slice(-1), total });
            assert.deepEqual(await page(20, total), { orders: [], total });
            assert.deepEqual(await page(20, total + 50), { orders: [], total });
            assert.deepEqual(await page(0, 0), { orders: [], total });
            const walked: Order[] = [];
            for (let offset = 0; offset < total; offset += 7) walked.push(...(await page(7, offset)).orders);
            assert.deepEqual(walked, all);
          }
        }
      }
      await assert.rejects(() => listOrders(kv, OWNER_A, { limit: -1, offset: 0 }), RangeError);
      await assert.rejects(() => listOrders(kv, OWNER_A, { limit: 10, offset: 1.5 }), RangeError);
    });

    await t.step("owners never see each other's orders", async () => {
      const a = await listOrders(kv, OWNER_A, { limit: 100, offset: 0 });
      const b = await listOrders(kv, OWNER_B, { limit: 100, offset: 0 });
      assert.equal(a.total + b.total, model.length);
      assert.ok(a.orders.every((o) => o.owner === OWNER_A));
      assert.ok(b.orders.every((o) => o.owner === OWNER_B));
      const bIds = new Set(b.orders.map((o) => o.id));
      assert.ok(a.orders.every((o) => !bIds.has(o.id)));
      assert.deepEqual(await listOrders(kv, STRANGER, { limit: 100, offset: 0 }), { orders: [], total: 0 });
      // The JWT `sub` may arrive checksummed.
      assert.deepEqual(await listOrders(kv, OWNER_A.toUpperCase().replace("0X", "0x"), { limit: 100, offset: 0 }), a);
    });

    await t.step("status sweep honours its limit, oldest first", async () => {
      const pending = model.filter((o) => o.status === "pending").map((o) => o.id);
      assert.deepEqual(await listOrderIdsByStatus(kv, "pending", 3), pending.slice(0, 3));
      assert.deepEqual(await listOrderIdsByStatus(kv, "pending", 0), []);
    });
  });
});

Deno.test("updates keep indexes and counters exact", async (t) => {
  await withKv(async (kv) => {
    let tick = 0;
    /** A fixed, distinct instant per update, so concurrent updates can each be checked. */
    const nextInstant = () => new Date(Date.UTC(2031, 0, 1, 0, 0, tick++));
    const model: Order[] = [];
    const add = async (owner: string, type: OrderType) => {
      const order = makeOrder(owner, type);
      assert.equal(await createOrder(kv, order), true);
      model.push(order);
      return order;
    };
    /** Moves an order in the store and in the model; checks what came back against what was asked for. */
    const move = async (
      id: string,
      status: OrderStatus,
      extra: Pick<Partial<Order>, "transactionHash" | "errorMessage"> = {},
    ) => {
      const at = nextInstant();
      const expectedAt = at.toISOString();
      const stored = await updateOrder(kv, id, (o) => inStatus({ ...o, ...extra }, status), () => at);
      assert.ok(stored);
      assert.equal(stored.status, status);
      assert.equal(stored.updatedAt, expectedAt);
      const i = model.findIndex((o) => o.id === id);
      model[i] = { ...inStatus({ ...model[i], ...extra }, status), updatedAt: expectedAt };
      assert.deepEqual(stored, model[i]);
      assert.deepEqual((await getOrder(kv, id)).value, model[i]);
    };

    const mintOk = await add(OWNER_A, "mint");
    const mintBad = await add(OWNER_A, "mint");
    const burnOk = await add(OWNER_A, "burn");
    const other = await add(OWNER_B, "mint");
    const crowd: Order[] = [];
    for (let i = 0; i < 12; i++) crowd.push(await add(OWNER_A, i % 2 ? "burn" : "mint"));
    await assertStoreMatches(kv, model);

    await t.step("pending -> processing -> minting -> completed", async () => {
      await move(mintOk.id, "processing");
      await assertStoreMatches(kv, model);
      await move(mintOk.id, "minting");
      await assertStoreMatches(kv, model);
      await move(mintOk.id, "completed", { transactionHash: "0xminted" });
      await assertStoreMatches(kv, model);
    });

    await t.step("-> failed, and burns through burning", async () => {
      await move(mintBad.id, "processing");
      await move(mintBad.id, "failed", { errorMessage: "Minting contract error" });
      await move(burnOk.id, "processing");
      await move(burnOk.id, "burning");
      await move(burnOk.id, "completed");
      await assertStoreMatches(kv, model);
      const a = await listOrders(kv, OWNER_A, { status: "completed", limit: 100, offset: 0 });
      assert.deepEqual(a.orders.map((o) => o.id), [burnOk.id, mintOk.id]);
      // Owner B's counters never moved.
      assert.deepEqual(await listOrders(kv, OWNER_B, { status: "pending", limit: 100, offset: 0 }), {
        orders: [other],
        total: 1,
      });
    });

    await t.step("a change that keeps the status still refreshes every index copy", async () => {
      await updateOrder(kv, other.id, (o) => withDetails(o, { heldReason: "seen" }), () => nextInstant());
      const i = model.findIndex((o) => o.id === other.id);
      model[i] = (await getOrder(kv, other.id)).value!;
      assert.equal(model[i].details.heldReason, "seen");
      await assertStoreMatches(kv, model);
    });

    await t.step("concurrent updates of different orders of one owner", async () => {
      await Promise.all(crowd.map((o) => move(o.id, "processing")));
      await assertStoreMatches(kv, model);
      await Promise.all(
        crowd.map((o, i) => move(o.id, i % 3 === 0 ? "failed" : o.type === "mint" ? "minting" : "burning")),
      );
      await assertStoreMatches(kv, model);
    });

    await t.step("concurrent updates of one order all land", async () => {
      const id = crowd[1].id;
      const results = await Promise.all(
        [0, 1, 2, 3, 4].map(() =>
          updateOrder(kv, id, (o) => withDetails(o, { transientErrors: (o.details.transientErrors ?? 0) + 1 }))
        ),
      );
      assert.ok(results.every((r) => r !== null));
      const stored = (await getOrder(kv, id)).value;
      assert.equal(stored?.details.transientErrors, 5, "each update read the one before it");
      const i = model.findIndex((o) => o.id === id);
      model[i] = stored!;
      await assertStoreMatches(kv, model);
    });

    await t.step("a write between read and commit makes updateOrder retry on fresh data", async () => {
      const id = crowd[2].id;
      let interfered = false;
      const racing = new Proxy(kv, {
        get(target, prop) {
          if (prop === "get") {
            return async (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
              const entry = await target.get(key, options);
              if (!interfered) {
                interfered = true;
                await updateOrder(target, id, (o) => withDetails(o, { heldReason: "interloper" }));
              }
              return entry;
            };
          }
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const seen: Order[] = [];
      const stored = await updateOrder(racing, id, (o) => {
        seen.push(o);
        return inStatus({ ...o, errorMessage: "Transaction failed on destination chain" }, "failed");
      });
      assert.equal(seen.length, 2);
      assert.equal(seen[0].details.heldReason, undefined);
      assert.equal(seen[1].details.heldReason, "interloper");
      assert.equal(stored?.details.heldReason, "interloper");
      const i = model.findIndex((o) => o.id === id);
      model[i] = stored!;
      await assertStoreMatches(kv, model);
    });

    await t.step("a stale versionstamp fails and changes nothing", async () => {
      const stale = await getOrder(kv, crowd[4].id);
      assert.ok(stale.versionstamp);
      await move(crowd[4].id, "completed");
      const before = await snapshot(kv);
      assert.ok(stale.value);
      const result = await addOrderUpdate(kv.atomic(), stale, inStatus(stale.value, "cancelled")).commit();
      assert.equal(result.ok, false);
      assert.deepEqual(await snapshot(kv), before);
      await assertStoreMatches(kv, model);
    });

    await t.step("no write when change declines or the order is missing", async () => {
      const before = await snapshot(kv);
      assert.equal(await updateOrder(kv, other.id, () => null), null);
      assert.equal(await updateOrder(kv, newOrderId(), (o) => o), null);
      // Mutating the argument in place and declining must not leak into the store either.
      assert.equal(
        await updateOrder(kv, other.id, (o) => {
          o.status = "cancelled";
          return null;
        }),
        null,
      );
      assert.deepEqual(await snapshot(kv), before);
    });

    await t.step("a change that mutates in place still moves the indexes", async () => {
      const at = nextInstant();
      const expectedAt = at.toISOString();
      await updateOrder(kv, other.id, (o) => {
        o.status = "cancelled";
        o.details.cancelReason = "in place";
        return o;
      }, () => at);
      const i = model.findIndex((o) => o.id === other.id);
      model[i] = withDetails(model[i], { cancelReason: "in place" }, { status: "cancelled", updatedAt: expectedAt });
      await assertStoreMatches(kv, model);
    });

    await t.step("id, owner and type are fixed", async () => {
      const entry = await getOrder(kv, mintOk.id);
      assert.ok(entry.versionstamp);
      assert.ok(entry.value);
      const changed: Order[] = [
        { ...entry.value, id: newOrderId() },
        { ...entry.value, owner: OWNER_B, destinationWallet: OWNER_B },
        { ...makeOrder(OWNER_A, "burn"), id: entry.value.id },
      ];
      for (const next of changed) assert.throws(() => addOrderUpdate(kv.atomic(), entry, next), /cannot change/);
      const before = await snapshot(kv);
      await assert.rejects(() => updateOrder(kv, mintOk.id, (o) => ({ ...o, owner: OWNER_B })));
      assert.deepEqual(await snapshot(kv), before);
    });
  });
});

Deno.test("addOrderCreate composes into the caller's atomic", async (t) => {
  await withKv(async (kv) => {
    const first = makeOrder(OWNER_A, "mint");
    assert.equal(await createOrder(kv, first), true);
    const model = [first];
    const dedupeKey = (txid: string): Deno.KvKey => ["test_deposit_seen", "sol", txid, 0];

    await t.step("a duplicate id is refused and nothing changes", async () => {
      const before = await snapshot(kv);
      assert.equal(await createOrder(kv, { ...first, amount: "1" }), false);
      assert.equal(await createOrder(kv, inStatus(first, "failed")), false);
      assert.deepEqual(await snapshot(kv), before);
      assert.equal((await getOrder(kv, first.id)).value?.amount, first.amount);
      await assertStoreMatches(kv, model);
    });

    await t.step("the caller's failing check aborts everything", async () => {
      await kv.set(dedupeKey("tx-seen"), true);
      const before = await snapshot(kv);
      const order = makeOrder(OWNER_A, "mint", "failed");
      const atomic = kv.atomic().check({ key: dedupeKey("tx-seen"), versionstamp: null });
      const result = await addOrderCreate(atomic, order).commit();
      assert.equal(result.ok, false);
      assert.deepEqual(await snapshot(kv), before);
      assert.equal((await getOrder(kv, order.id)).value, null);
      await assertStoreMatches(kv, model);
    });

    await t.step("the caller's passing check commits order and dedupe record together", async () => {
      const order = makeOrder(OWNER_A, "mint");
      const atomic = kv.atomic().check({ key: dedupeKey("tx-new"), versionstamp: null }).set(dedupeKey("tx-new"), {
        orderId: order.id,
      });
      assert.equal((await addOrderCreate(atomic, order).commit()).ok, true);
      model.push(order);
      assert.deepEqual((await kv.get(dedupeKey("tx-new"))).value, { orderId: order.id });
      await assertStoreMatches(kv, model);
    });
  });
});
