/** GET /orders (spec 4.7) over real HTTP: filters, pagination, exact totals, scoping, query validation. */
import assert from "node:assert/strict";
import { createOrder, updateOrder } from "../kv/orders.ts";
import { ORDER_STATUSES, ORDER_TYPES, type OrderStatus, type OrderType } from "../model/order.ts";
import { makeOrder } from "./support/orders.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";
import { withFailingOrderStore } from "./support/failing_store.ts";

Deno.test("GET /orders", async (t) => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const alice = randomWallet();
    const bob = randomWallet();
    const aliceToken = await tokenFor(server, alice);
    const bobToken = await tokenFor(server, bob);
    // 45 orders for alice across every type and status, created in sequence (so id order = creation order).
    const created: { id: string; type: OrderType; status: OrderStatus }[] = [];
    for (let i = 0; i < 45; i++) {
      const type = ORDER_TYPES[i % 2];
      const statuses = ORDER_STATUSES.filter((s) => s !== (type === "mint" ? "burning" : "minting"));
      const status = statuses[i % statuses.length];
      const order = makeOrder(alice, type, status, i);
      assert.ok(await createOrder(kv, order));
      created.push({ id: order.id, type, status });
    }
    for (let i = 0; i < 3; i++) await createOrder(kv, makeOrder(bob, "burn", "pending", i));
    const newestFirst = [...created].reverse();

    await t.step("defaults: newest first, 20 per page, exact pagination", async () => {
      const res = await call(server, "GET", "/orders", { token: aliceToken });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      assert.deepEqual(res.body.data.pagination, { limit: 20, offset: 0, total: 45, hasMore: true });
      assert.deepEqual(
        res.body.data.orders.map((o: { id: string }) => o.id),
        newestFirst.slice(0, 20).map((o) => o.id),
      );
      assert.deepEqual(Object.keys(res.body.data.orders[0]), [
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
    });

    await t.step("every filter combination has exact totals and pages", async () => {
      const filters: { type?: OrderType; status?: OrderStatus }[] = [{}];
      for (const type of ORDER_TYPES) filters.push({ type });
      for (const status of ORDER_STATUSES) {
        filters.push({ status });
        for (const type of ORDER_TYPES) filters.push({ type, status });
      }
      for (const f of filters) {
        const expected = newestFirst.filter((o) =>
          (f.type === undefined || o.type === f.type) && (f.status === undefined || o.status === f.status)
        );
        for (const [limit, offset] of [[100, 0], [3, 2], [1, expected.length - 1], [5, expected.length]]) {
          if (offset < 0) continue;
          const qs = new URLSearchParams({ limit: String(limit), offset: String(offset), ...f });
          const res = await call(server, "GET", `/orders?${qs}`, { token: aliceToken });
          assert.equal(res.status, 200, qs.toString());
          const ids = res.body.data.orders.map((o: { id: string }) => o.id);
          assert.deepEqual(ids, expected.slice(offset, offset + limit).map((o) => o.id), qs.toString());
          assert.deepEqual(res.body.data.pagination, {
            limit,
            offset,
            total: expected.length,
            hasMore: offset + limit < expected.length,
          });
        }
      }
    });

    await t.step("status moves are reflected in filters and totals", async () => {
      const pending = newestFirst.find((o) => o.status === "pending" && o.type === "mint")!;
      await updateOrder(kv, pending.id, (o) => ({ ...o, status: "processing" }));
      const before = newestFirst.filter((o) => o.type === "mint" && o.status === "pending").length;
      const res = await call(server, "GET", "/orders?type=mint&status=pending", { token: aliceToken });
      assert.equal(res.body.data.pagination.total, before - 1);
      assert.ok(!res.body.data.orders.some((o: { id: string }) => o.id === pending.id));
      const moved = await call(server, "GET", "/orders?status=processing&limit=100", { token: aliceToken });
      const hit = moved.body.data.orders.find((o: { id: string }) => o.id === pending.id);
      assert.equal(hit.status, "processing");
      assert.notEqual(hit.updatedAt, null);
    });

    await t.step("orders are scoped to the caller", async () => {
      const res = await call(server, "GET", "/orders?limit=100", { token: bobToken });
      assert.equal(res.body.data.pagination.total, 3);
      const aliceIds = new Set(created.map((o) => o.id));
      assert.ok(
        res.body.data.orders.every((o: { id: string; sourceWallet: string }) =>
          !aliceIds.has(o.id) && o.sourceWallet === bob.toLowerCase()
        ),
      );
    });

    await t.step("out-of-range and invalid query values are validation errors", async () => {
      for (
        const qs of [
          "limit=0",
          "limit=101",
          "limit=-1",
          "limit=abc",
          "limit=1.5",
          "offset=-1",
          "offset=x",
          "type=swap",
          "status=done",
          "limit=",
        ]
      ) {
        const res = await call(server, "GET", `/orders?${qs}`, { token: aliceToken });
        assert.equal(res.status, 400, qs);
        assert.equal(res.body.success, false);
        assert.equal(res.body.message, "Validation error", qs);
        assert.equal(res.body.error.issues.length, 1, qs);
        assert.equal(res.body.error.issues[0].path[0], qs.split("=")[0]);
      }
      const edge = await call(server, "GET", "/orders?limit=100&offset=1000", { token: aliceToken });
      assert.deepEqual(edge.body.data, {
        orders: [],
        pagination: { limit: 100, offset: 1000, total: 45, hasMore: false },
      });
    });
  } finally {
    await server.close();
  }
});

Deno.test("GET /orders answers 500 'Failed to retrieve orders' when the store fails", async () => {
  await withFailingOrderStore(async (url) => {
    const res = await fetch(`${url}/orders`);
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { success: false, message: "Failed to retrieve orders" });
  });
});
