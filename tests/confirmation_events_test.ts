/**
 * `order.confirmations` events (actors/confirmation_events.ts, docs/streaming.md): a pending order's new count of
 * confirmations becomes one event when a watcher's cursor moves (real KV file; cursors written as the watcher writes
 * them), none when nothing moved or the count did not change, none after the order left pending or on a chain final by
 * a flag, and one per count however many processes run the tick.
 */
import assert from "node:assert/strict";
import type { ChainSymbol } from "../chains/catalog.ts";
import { ConfirmationEvents } from "../actors/confirmation_events.ts";
import type { PipelineSettings } from "../actors/context.ts";
import { listOutbox, listOwnerEvents, sequenceOrderEvents } from "../kv/order_events.ts";
import { createOrder, updateOrder } from "../kv/orders.ts";
import { cursorKey } from "../kv/pipeline.ts";
import type { Order } from "../model/order.ts";
import { withKv } from "./support/kv.ts";
import { inStatus, makeOrder } from "./support/orders.ts";

const REQUIRED = 3;
const settings = {
  enabledChains: ["sol", "xrp", "base"],
  confirmations: () => REQUIRED,
  finality: (chain: ChainSymbol) => chain === "xrp" ? { kind: "flag", flag: "validated" } : { kind: "depth" },
} as unknown as PipelineSettings;

const pendingAt = (owner: string, chain: "sol" | "xrp", block: number, i: number): Order => {
  const o = makeOrder(owner, "mint", "pending", i);
  return {
    ...o,
    sourceChain: chain,
    details: { ...o.details, source: { ...o.details.source, chain, blockNumber: block } },
  } as Order;
};
const tipAt = (kv: Deno.Kv, chain: ChainSymbol, n: number) => kv.set(cursorKey(chain), { number: n, hash: `h${n}` });

Deno.test("confirmation events: one per new count while pending, none at rest, none after pending, once across processes", async () => {
  await withKv("confirmations-", async (kv) => {
    const owner = "0x" + "ab".repeat(20);
    const sol = pendingAt(owner, "sol", 100, 0);
    const xrp = pendingAt(owner, "xrp", 50, 1);
    assert.ok(await createOrder(kv, sol));
    assert.ok(await createOrder(kv, xrp));
    await sequenceOrderEvents(kv, []);
    const ticker = new ConfirmationEvents(kv, settings);
    const confirmationsEvents = async () =>
      (await listOutbox(kv)).map((e) => e.value).filter((e) => e.type === "order.confirmations");

    await tipAt(kv, "sol", 100);
    await tipAt(kv, "xrp", 60);
    assert.equal(await ticker.tick(), 1, "sol's first count; xrp is final by a flag: nothing to announce");
    const [first] = await confirmationsEvents();
    assert.deepEqual([first.order.id, first.order.confirmations, first.order.requiredConfirmations], [sol.id, 1, 3]);
    assert.equal(first.order.status, "pending");

    // At rest: nothing moved, nothing read beyond the cursors, nothing committed.
    const before = (await kv.get(cursorKey("sol"))).versionstamp;
    assert.equal(await ticker.tick(), 0);
    assert.equal((await confirmationsEvents()).length, 1);
    assert.equal((await kv.get(cursorKey("sol"))).versionstamp, before);

    // Two processes see the next block: one event between them.
    await tipAt(kv, "sol", 101);
    const other = new ConfirmationEvents(kv, settings);
    const counts = await Promise.all([ticker.tick(), other.tick()]);
    assert.equal(counts[0] + counts[1], 1, `one event, got ${counts}`);
    // Several blocks at once: one event with the count reached (capped at the requirement), then no more at the cap.
    await tipAt(kv, "sol", 110);
    assert.equal(await ticker.tick(), 1);
    await tipAt(kv, "sol", 111);
    assert.equal(await ticker.tick(), 0, "the count stays at the requirement");
    assert.deepEqual((await confirmationsEvents()).map((e) => e.order.confirmations), [1, 2, 3]);

    // A reorg below the block: the count falls to 0 and that is news too; after pending, nothing.
    await tipAt(kv, "sol", 99);
    assert.equal(await ticker.tick(), 1);
    await updateOrder(kv, sol.id, (o) => inStatus(o, "processing"));
    await tipAt(kv, "sol", 120);
    assert.equal(await ticker.tick(), 0);

    // Sequenced with the status events, in commit order, on the wallet's log (what SSE and webhooks send).
    await sequenceOrderEvents(kv, []);
    const log = (await listOwnerEvents(kv, owner, 0, 100)).filter((e) => e.order.id === sol.id);
    assert.deepEqual(log.map((e) => [e.type, e.order.confirmations ?? null]), [
      ["order.pending", null],
      ["order.confirmations", 1],
      ["order.confirmations", 2],
      ["order.confirmations", 3],
      ["order.confirmations", 0],
      ["order.processing", null],
    ]);
  });
});
