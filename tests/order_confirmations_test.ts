/**
 * Confirmations on pending orders (docs/order-reads.md) over real HTTP: a simulated doge deposit (3 confirmations
 * required) shows them rising block by block in GET /orders and GET /orders/:id, never above the requirement, and loses
 * both fields once the order moves on. The chain's own block producer is stalled; the test seals each block itself, so
 * every value is waited for, not timed.
 */
import assert from "node:assert/strict";
import { NATIVE } from "../chains/catalog.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { call } from "./support/server.ts";
import { depositAddress, FAST_PIPELINE, type Json, partner, sim } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a sim deposit shows confirmations rising to the requirement, then none once processing", async () => {
  const server = await startTestServer({ ...FAST_PIPELINE, SIM_CONFIRMATION_TIMEOUT_MS: "120000" });
  try {
    const { token } = await partner(server);
    const required = server.services.pipeline!.settings.confirmations("doge");
    assert.equal(required, NATIVE.doge.simConfirmations);
    assert.ok(required >= 2, "the test needs a chain that requires more than one confirmation");
    // The producer stands still; this ledger's clock is past the stall, so only the test seals doge blocks.
    await sim(server, "faults", { chain: "doge", stallMs: 3_600_000 });
    const sealer = new SimLedger(server.services.kv, "doge", { now: () => Date.now() + 7_200_000 });
    const address = await depositAddress(server, token, "doge", "base");
    await sim(server, "deposits", { chain: "doge", address, amount: NATIVE.doge.minimumDeposit.toString() });

    /** Every view of the order seen, in order, from the listing and by id. */
    const seen: Json[] = [];
    const look = async (): Promise<Json | null> => {
      const list = await call(server, "GET", "/orders", { token });
      assert.equal(list.status, 200);
      const listed = list.body.data.orders[0] ?? null;
      if (listed === null) return null;
      const one = await call(server, "GET", `/orders/${listed.id}`, { token });
      assert.equal(one.status, 200);
      seen.push(listed, one.body.data);
      return one.body.data;
    };
    const until = async (what: string, done: (o: Json) => boolean) => {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const o = await look();
        if (o !== null && done(o)) return o;
        await sleep(10);
      }
      throw new Error(`timed out waiting for ${what}; seen: ${JSON.stringify(seen.slice(-4))}`);
    };

    for (let n = 1; n < required; n++) {
      await sealer.sealBlock();
      const o = await until(`${n} confirmation(s)`, (o) => o.confirmations === n);
      assert.equal(o.status, "pending");
      assert.equal(o.requiredConfirmations, required);
    }
    await sealer.sealBlock();
    await until("the order to complete", (o) => o.status === "completed");

    // Pending views carry both fields, as integers, never decreasing, never above the requirement; no other does.
    let last = 0;
    for (const o of seen) {
      if (o.status !== "pending") {
        assert.equal("confirmations" in o, false, JSON.stringify(o));
        assert.equal("requiredConfirmations" in o, false, JSON.stringify(o));
        continue;
      }
      assert.equal(o.requiredConfirmations, required);
      assert.ok(Number.isInteger(o.confirmations) && o.confirmations >= last && o.confirmations <= required);
      last = o.confirmations;
    }
    if (Deno.env.get("TEST_LOG")) console.log(seen.map((o) => `${o.status}:${o.confirmations ?? "-"}`).join(" "));
    const statuses = [...new Set(seen.map((o) => o.status))];
    assert.equal(statuses[0], "pending");
    assert.equal(statuses.at(-1), "completed");
    // The last block counts only once it is sealed: pending until then, and it never showed more than it had.
    assert.ok(last >= required - 1);
  } finally {
    await server.close();
  }
});
