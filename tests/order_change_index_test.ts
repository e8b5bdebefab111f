/**
 * The change index behind incremental sync (kv/orders.ts, docs/order-reads.md): kept in each order's own commits, and
 * built once at KV open for orders stored before it existed (kv/open.ts), each order exactly once even while another
 * process changes orders meanwhile. Real KV files.
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/open.ts";
import { changedAt, createOrder, indexOrderChanges, listOrderChanges, updateOrder } from "../kv/orders.ts";
import { withKv } from "./support/kv.ts";
import { inStatus, makeOrder } from "./support/orders.ts";

const owner = "0x" + "cd".repeat(20);
const FAR = "9999-12-31T23:59:59.999Z";
const START = { at: "1970-01-01T00:00:00.000Z", id: "" };
const all = async (kv: Deno.Kv) =>
  (await listOrderChanges(kv, owner, { limit: 1_000, after: START, settledBefore: FAR })).orders;

Deno.test("change index: each order once under its last change; built at open for older orders, racing writers included", async () => {
  await withKv("change-index-", async (kv, path) => {
    const orders = Array.from({ length: 30 }, (_, i) => makeOrder(owner, i % 2 ? "mint" : "burn", "pending", i));
    for (const o of orders) assert.ok(await createOrder(kv, o));
    await updateOrder(kv, orders[3].id, (o) => inStatus(o, "processing"));
    const listed = await all(kv);
    assert.equal(listed.length, 30, "each order once, a changed one too");
    assert.equal(listed.at(-1)!.id, orders[3].id, "the changed order last");
    assert.deepEqual(listed.map(changedAt), [...listed.map(changedAt)].sort());

    // As a KV written before the index existed: no entries, no ready mark.
    for await (const e of kv.list({ prefix: ["order_by_change"] })) await kv.delete(e.key);
    await kv.delete(["order_by_change_ready"]);
    assert.equal((await all(kv)).length, 0);

    // Another process changes orders while this one opens the file and builds the index.
    const writer = await openKv(path);
    try {
      const changing = (async () => {
        for (const o of orders.slice(10, 20)) await updateOrder(writer, o.id, (x) => inStatus(x, "processing"));
      })();
      const opened = await openKv(path); // kv/open.ts runs indexOrderChanges
      await changing;
      const rebuilt = await all(opened);
      assert.deepEqual(rebuilt.map((o) => o.id).sort(), orders.map((o) => o.id).sort(), "every order exactly once");
      const changed = new Set([orders[3].id, ...orders.slice(10, 20).map((o) => o.id)]);
      for (const o of rebuilt) assert.equal(o.status, changed.has(o.id) ? "processing" : "pending", "as stored now");
      assert.equal((await opened.get(["order_by_change_ready"])).value, true);
      // Later opens only read the mark.
      await indexOrderChanges(opened);
      assert.equal((await all(opened)).length, 30);
      opened.close();
    } finally {
      writer.close();
    }
  });
});
