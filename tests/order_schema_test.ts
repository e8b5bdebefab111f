/**
 * The order schema (model/order.ts): `details` typed per order type and step. Bad details are refused on write with the
 * field named; a stored order that fails the schema is never stepped on a guess (real KV file, sim chains, the order
 * actor driven by hand); and orders as the watcher and the actors write them today pass it at every step.
 */
import { withKv as withTempKv } from "./support/kv.ts";
import assert from "node:assert/strict";
import { applyOperatorEvent } from "../actors/operator.ts";
import { INVALID_RECORD_RECHECK_MS, stepOrder } from "../actors/order_actor.ts";
import { EVM_CHAINS, NATIVE } from "../chains/catalog.ts";
import { getAlert } from "../kv/alerts.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { createOrder, getOrder, orderKey, updateOrder } from "../kv/orders.ts";
import { InvalidOrderError, type Order, OrderSchema, type OrderStatus } from "../model/order.ts";
import { addReschedule, dueAtKey } from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { makeOrder } from "./support/orders.ts";
import { outside } from "./support/pipeline.ts";
import { runTask } from "./support/cli.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "ab".repeat(20);

/** A plain-JSON copy of `o` to break on purpose: what a bad write or a corrupted record would hold. */
function copy(o: Order) {
  return JSON.parse(JSON.stringify(o));
}

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("order_schema_", fn);

Deno.test("details that are missing, malformed or wrong for the step are refused on write, naming the field", async () => {
  // sol -> base mints and base -> sol burns (i = 0): amounts in lamports and in 18-decimal wei.
  const order = (type: "mint" | "burn", status: OrderStatus) => makeOrder(OWNER, type, status, 0);
  const cases: [string, () => Order, string][] = [
    ["no source transfer", () => {
      const o = copy(order("mint", "pending"));
      delete o.details.source;
      return o;
    }, "details.source"],
    ["a source on another chain", () => {
      const o = copy(order("mint", "pending"));
      o.details.source.chain = "xrp";
      return o;
    }, "details.source.chain"],
    ["a deposit id that is not 32 bytes", () => {
      const o = copy(order("mint", "pending"));
      o.details.depositId = "0x1234";
      return o;
    }, "details.depositId"],
    ["a deadline that is not a time", () => {
      const o = copy(order("burn", "pending"));
      o.details.confirmBy = "soon";
      return o;
    }, "details.confirmBy"],
    ["a field no step writes", () => {
      const o = copy(order("mint", "pending"));
      o.details.note = "typo";
      return o;
    }, 'Unrecognized key: "note"'],
    ["a memo on a mint", () => {
      const o = copy(order("mint", "pending"));
      o.details.memo = "42";
      return o;
    }, 'Unrecognized key: "memo"'],
    ["a burn without its memo field", () => {
      const o = copy(order("burn", "pending"));
      delete o.details.memo;
      return o;
    }, "details.memo"],
    ["minting with no recorded transaction", () => {
      const o = copy(order("mint", "minting"));
      delete o.details.intent;
      return o;
    }, "details.intent: required for a minting order"],
    ["a transaction recorded while pending", () => {
      const o = copy(order("mint", "pending"));
      o.details.intent = copy(order("mint", "minting")).details.intent;
      return o;
    }, "details.intent: a pending order has no current transaction"],
    ["a recorded transaction with no bytes field", () => {
      const o = copy(order("mint", "minting"));
      delete o.details.intent.raw;
      return o;
    }, "details.intent.raw"],
    ["a recorded transaction on another chain", () => {
      const o = copy(order("burn", "burning"));
      o.details.intent.chain = "xrp";
      return o;
    }, "details.intent.chain"],
    ["burning without its payout amounts", () => {
      const o = copy(order("burn", "burning"));
      delete o.details.remainderWei;
      return o;
    }, "details.remainderWei: required for a burning burn"],
    ["an amount as a JS number", () => {
      const o = copy(order("burn", "burning"));
      o.details.nativeAmount = Number(o.details.nativeAmount);
      return o;
    }, "details.nativeAmount"],
    ["an amount with a leading zero", () => {
      const o = copy(order("burn", "burning"));
      o.details.remainderWei = "0" + o.details.remainderWei;
      return o;
    }, "details.remainderWei"],
    ["payout amounts that do not add up to the burned wei", () => {
      const o = copy(order("burn", "burning"));
      o.details.remainderWei = (BigInt(o.details.remainderWei) + 1n).toString();
      return o;
    }, "details.nativeAmount: nativeAmount and remainderWei must add up to amount"],
    ["a dead transaction without its proof", () => {
      const o = copy(order("mint", "processing"));
      o.details.deadIntents = [{ ...copy(order("mint", "minting")).details.intent, deadAt: o.createdAt }];
      return o;
    }, "details.deadIntents.0.proof"],
    ["an error count that is not a positive integer", () => {
      const o = copy(order("mint", "processing"));
      o.details.transientErrors = 1.5;
      return o;
    }, "details.transientErrors"],
    ["a mint that is burning", () => {
      const o = copy(order("mint", "minting"));
      o.status = "burning";
      return o;
    }, "status: a mint is never burning"],
    [
      "completed without its hash",
      () => ({ ...copy(order("mint", "completed")), transactionHash: null }),
      "transactionHash",
    ],
    ["failed without its message", () => ({ ...copy(order("burn", "failed")), errorMessage: null }), "errorMessage"],
    ["cancelled without its reason", () => {
      const o = copy(order("mint", "cancelled"));
      delete o.details.cancelReason;
      return o;
    }, "details.cancelReason"],
  ];
  await withKv(async (kv) => {
    for (const status of ["pending", "processing", "burning", "completed", "failed", "cancelled"] as const) {
      assert.ok(OrderSchema.safeParse(order("burn", status)).success, `the valid ${status} burn passes`);
    }
    for (const [what, build, field] of cases) {
      const bad = build();
      await assert.rejects(() => createOrder(kv, bad), (e) => {
        assert.ok(e instanceof InvalidOrderError, what);
        assert.ok(e.message.includes(field), `${what}: "${e.message}" names ${field}`);
        return true;
      });
    }
    let keys = 0;
    for await (const _ of kv.list({ prefix: [] })) keys++;
    assert.equal(keys, 0, "nothing was written");
  });
});

Deno.test("a stored order that fails the schema is held untouched with an invalid_record alert, never stepped", async () => {
  const p = await handPipeline();
  try {
    const order = makeOrder(OWNER, "burn", "pending", 0);
    assert.ok(await createOrder(p.kv, order));
    await addReschedule(p.kv.atomic(), order.id, { key: dueAtKey(order.id), value: null, versionstamp: null }, 0)
      .commit();
    // Corrupted behind the store's back: a deadline no code can compare against.
    const corrupt = copy(order);
    corrupt.details.confirmBy = "soon";
    await p.kv.set(orderKey(order.id), corrupt);
    const stored = await p.kv.get(orderKey(order.id));

    const entry = await getOrder(p.kv, order.id);
    assert.equal(entry.value, null, "never handed out as an order");
    assert.ok(entry.invalid);
    assert.ok(entry.invalid.message.includes("details.confirmBy"), entry.invalid.message);
    assert.deepEqual(entry.raw, corrupt, "the stored value is shown as stored, for the operator");

    assert.equal(await stepOrder(p.ctx, order.id), "waiting");
    const alert = await getAlert(p.kv, "invalid_record", order.id);
    assert.ok(alert, "an operator alert names the order");
    assert.match(alert.message, /details\.confirmBy/);
    assert.equal(alert.count, 1);
    assert.ok(p.logs.some((l) => l.includes(order.id) && l.includes("details.confirmBy")), p.logs.join("\n"));
    const due = (await p.kv.get<number>(dueAtKey(order.id))).value!;
    assert.ok(due >= p.ctx.now().getTime() + INVALID_RECORD_RECHECK_MS - 1_000, "looked at again only much later");

    // A doorbell before then does nothing; once due, it is looked at (and counted) again, still untouched.
    assert.equal(await stepOrder(p.ctx, order.id), "waiting");
    assert.equal((await getAlert(p.kv, "invalid_record", order.id))?.count, 1);
    p.advance(INVALID_RECORD_RECHECK_MS);
    assert.equal(await stepOrder(p.ctx, order.id), "waiting");
    assert.equal((await getAlert(p.kv, "invalid_record", order.id))?.count, 2);
    assert.equal((await p.kv.get(orderKey(order.id))).versionstamp, stored.versionstamp, "the record is untouched");

    // Operators and store updates refuse it too, naming the field, rather than write over a guess.
    const cancel = await applyOperatorEvent(p.kv, order.id, { type: "cancel", reason: "x" });
    assert.ok(!cancel.ok && cancel.error.includes("details.confirmBy"), JSON.stringify(cancel));
    await assert.rejects(() => updateOrder(p.kv, order.id, (o) => o), /details\.confirmBy/);
    assert.equal((await p.kv.get(orderKey(order.id))).versionstamp, stored.versionstamp, "the record is untouched");
    const show = await runTask("admin", { KV_PATH: p.kvPath }, ["order", "show", order.id]);
    assert.equal(show.code, 2, show.stderr);
    assert.equal(JSON.parse(show.stdout).details.confirmBy, "soon", "shown as stored");
    assert.match(show.stderr, /details\.confirmBy/);
    const retry = await runTask("admin", { KV_PATH: p.kvPath }, ["order", "retry", order.id]);
    assert.equal(retry.code, 2, retry.stderr);
    assert.match(retry.stderr, /details\.confirmBy/);
    assert.equal((await p.kv.get(orderKey(order.id))).versionstamp, stored.versionstamp, "the record is untouched");

    // Not even an object: held and alerted under the id it is stored at.
    const garbled = makeOrder(OWNER, "mint", "pending", 1).id;
    await p.kv.set(orderKey(garbled), "garbled");
    assert.equal(await stepOrder(p.ctx, garbled), "waiting");
    assert.ok(await getAlert(p.kv, "invalid_record", garbled));
    assert.equal((await p.kv.get(orderKey(garbled))).value, "garbled");
  } finally {
    await p.close();
  }
});

Deno.test("sim pipeline: orders as the watcher and the actors write them pass the schema at every step", async () => {
  const p = await handPipeline();
  try {
    const evm = EVM_CHAINS[0];
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const wallet = await createMintWallet(p.kv, OWNER, "xrp", evm, (c, i) => `${c}-deposit-${i}`);
    assert.ok(wallet.ok);
    assert.ok((await createBurnConfig(p.kv, OWNER, "xrp", outside.depositAddress("xrp", 3), "4242")).ok);
    const xrp = p.sim.ledger("xrp");
    const base = p.sim.ledger(evm);
    // A mint, a deposit below the minimum (fails in processing), and a burn that pays with a remainder.
    const min = NATIVE.xrp.minimumDeposit;
    await xrp.submitNativeTransfer({ from: "rOutsider1", to: wallet.wallet.address, amount: min * 3n });
    await xrp.submitNativeTransfer({ from: "rOutsider2", to: wallet.wallet.address, amount: min - 1n });
    const burned = NATIVE.xrp.uAsset.minimumBurnAmount * 2n + 123n;
    await base.faucet({ address: OWNER, asset: "uXRP", amount: burned });
    await base.sealBlock();
    assert.ok(
      (await base.submitErc20Transfer({ from: OWNER, to: SIM_TRANSFER_ADDRESS, asset: "uXRP", amount: burned }))
        .ok,
    );
    await xrp.sealBlock();
    await base.sealBlock();
    assert.equal(await watchToTip(p.ctx, "xrp") + await watchToTip(p.ctx, evm), 3);

    const ids: string[] = [];
    for await (const e of p.kv.list({ prefix: orderKey("").slice(0, 1) })) ids.push(String(e.key[1]));
    assert.equal(ids.length, 3);
    const seen = new Set<string>();
    /** Reads the order raw, as stored, and parsed: the schema accepts it and changes nothing of it. */
    const check = async (id: string) => {
      const raw = (await p.kv.get(orderKey(id))).value;
      const parsed = OrderSchema.safeParse(raw);
      assert.ok(parsed.success, `${JSON.stringify(raw)}: ${parsed.error}`);
      assert.deepEqual(parsed.data, raw);
      seen.add(`${parsed.data.type} ${parsed.data.status}`);
    };
    for (const id of ids) await check(id); // as the watcher wrote them
    for (let round = 0; round < 500; round++) {
      for (const id of ids) {
        await stepOrder(p.ctx, id);
        await check(id);
      }
      await xrp.sealBlock();
      await base.sealBlock();
      p.advance(1_000);
      const ended = await Promise.all(ids.map(async (id) => (await getOrder(p.kv, id)).value?.status));
      if (ended.every((s) => s === "completed" || s === "failed")) break;
    }
    const final = await Promise.all(ids.map(async (id) => (await getOrder(p.kv, id)).value!));
    for (const step of ["pending", "processing", "minting", "completed", "failed"]) {
      assert.ok(seen.has(`mint ${step}`), `${step}: ${[...seen]}`);
    }
    for (const step of ["pending", "processing", "burning", "completed"]) assert.ok(seen.has(`burn ${step}`), step);
    assert.deepEqual(final.map((o) => `${o.type} ${o.status}`).sort(), [
      "burn completed",
      "mint completed",
      "mint failed",
    ]);
    const burn = final.find((o) => o.type === "burn");
    assert.ok(burn?.type === "burn");
    assert.equal(burn.details.memo, "4242");
    assert.equal(burn.details.remainderWei, "123");
    assert.ok(burn.details.intent && burn.transactionHash);
  } finally {
    await p.close();
  }
});
