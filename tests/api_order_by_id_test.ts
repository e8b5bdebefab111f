/**
 * GET /orders/:id (docs/order-reads.md) over real HTTP: the order as GET /orders shows it, 404 alike for unknown and
 * foreign.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { createOrder } from "../kv/orders.ts";
import { newOrderId } from "../model/order.ts";
import { API_ERRORS } from "../messages.ts";
import { onError } from "../routes/errors.ts";
import type { AuthVariables } from "../routes/jwt.ts";
import { okEnvelope } from "../routes/openapi.ts";
import { OrderViewSchema } from "../routes/order_view.ts";
import { orderRoutes } from "../routes/orders.ts";
import { makeOrder } from "./support/orders.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";
import { withFailingOrderStore } from "./support/failing_store.ts";

const NOT_FOUND = { success: false, message: API_ERRORS.orderNotFound.message };

Deno.test("GET /orders/:id", async (t) => {
  const server = await startTestServer();
  const kv = server.services.kv;
  try {
    const alice = randomWallet();
    const bob = randomWallet();
    const aliceToken = await tokenFor(server, alice);
    const pending = makeOrder(alice, "mint", "pending", 0);
    const completed = makeOrder(alice, "burn", "completed", 1);
    const bobs = makeOrder(bob, "burn", "pending", 2);
    for (const o of [pending, completed, bobs]) assert.ok(await createOrder(kv, o));
    const listed = (await call(server, "GET", "/orders", { token: aliceToken })).body.data.orders;

    await t.step("answers the order exactly as GET /orders shows it", async () => {
      for (const order of [pending, completed]) {
        const res = await call(server, "GET", `/orders/${order.id}`, { token: aliceToken });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { success: true, data: listed.find((o: { id: string }) => o.id === order.id) });
        okEnvelope(OrderViewSchema).parse(res.body);
      }
      const one = await call(server, "GET", `/orders/${pending.id}`, { token: aliceToken });
      assert.equal(one.body.data.status, "pending");
      assert.equal(typeof one.body.data.confirmations, "number");
      const other = await call(server, "GET", `/orders/${completed.id}`, { token: aliceToken });
      assert.equal("confirmations" in other.body.data, false);
      assert.equal("requiredConfirmations" in other.body.data, false);
    });

    await t.step("an id in upper case is the same order", async () => {
      const res = await call(server, "GET", `/orders/${completed.id.toUpperCase()}`, { token: aliceToken });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.id, completed.id);
    });

    await t.step("unknown ids and another wallet's order answer the same 404", async () => {
      for (const id of [newOrderId(), bobs.id, crypto.randomUUID(), "00000000-0000-0000-0000-000000000000"]) {
        const res = await call(server, "GET", `/orders/${id}`, { token: aliceToken });
        assert.equal(res.status, 404, id);
        assert.deepEqual(res.body, NOT_FOUND);
      }
    });

    await t.step("an id that is not a UUID is an unknown order; a deeper path is no order route", async () => {
      for (const path of ["/orders/not-an-id", `/orders/${completed.id}x`, "/orders/%20", "/orders/42"]) {
        const res = await call(server, "GET", path, { token: aliceToken });
        assert.equal(res.status, 404, path);
        assert.deepEqual(res.body, NOT_FOUND, path);
      }
      const deeper = await call(server, "GET", `/orders/${completed.id}/more`, { token: aliceToken });
      assert.equal(deeper.status, 404);
      assert.deepEqual(deeper.body, { success: false, message: API_ERRORS.notFound.message });
      const gated = await call(server, "GET", "/orders/not-an-id");
      assert.equal(gated.status, 401, "the JWT gate answers before the id is looked at");
    });

    await t.step("the JWT gate comes first", async () => {
      const res = await call(server, "GET", `/orders/${pending.id}`);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { success: false, message: API_ERRORS.missingAuthorization.message });
      const forged = await call(server, "GET", `/orders/${pending.id}`, { token: "a.b.c" });
      assert.equal(forged.status, 401);
    });
  } finally {
    await server.close();
  }
});

Deno.test("GET /orders/:id never takes a word such as 'stream' for an id, whatever the mounting order", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  const app = new Hono<{ Variables: AuthVariables }>();
  app.onError(onError(() => {}));
  app.use("*", async (c, next) => {
    c.set("wallet", "0x" + "a".repeat(40));
    await next();
  });
  // The order routes first, then another router's /orders/stream: the id route must let it through.
  app.route("/orders", orderRoutes(kv, () => {}));
  app.get("/orders/stream", (c) => c.text("stream"));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/orders/stream`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "stream");
  } finally {
    await server.shutdown();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /orders/:id answers 500 'Failed to retrieve order' when the store fails", async () => {
  await withFailingOrderStore(async (url) => {
    const res = await fetch(`${url}/orders/${newOrderId()}`);
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { success: false, message: API_ERRORS.orderUnavailable.message });
  });
});
