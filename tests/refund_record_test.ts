/**
 * The stored refund record (model/refund.ts) on real KV files, checked on every read and write like the other records
 * of transactions we send: a refund as the code before this schema wrote it reads unchanged; a malformed write is
 * refused naming the field, and nothing is committed; a malformed stored refund is never stepped (nothing sent, the
 * record untouched), held with one `invalid_record` alert naming its key and field, and listed as invalid rather than
 * counted.
 */
import assert from "node:assert/strict";
import { stepRefund } from "../actors/refunds.ts";
import { getAlert } from "../kv/alerts.ts";
import { getRefund, listRefunds, type Refund, refundDueKey, refundKey, validRefund } from "../kv/refunds.ts";
import { InvalidRecordError } from "../model/sent_tx.ts";
import { handPipeline } from "./support/watch.ts";

const AT = "2026-01-02T03:04:05.000Z";
const intent = { chain: "sol" as const, txHash: "5".repeat(88), raw: "AQID", preparedAt: AT };

/** Shapes actors/refunds.ts and actors/refund_create.ts wrote before the schema, as plain JSON. */
const pending: Refund = {
  id: "r1",
  heldId: `transfer:sol:${"4".repeat(88)}:0`,
  kind: "native",
  chain: "sol",
  asset: "SOL",
  to: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  amount: "2000000000",
  createdBy: "alice",
  createdAt: AT,
  status: "pending",
  attempts: [],
  updatedAt: AT,
};

Deno.test("refund record: every shape the refund actor writes reads back unchanged", async () => {
  const p = await handPipeline();
  try {
    const shapes: Refund[] = [
      pending,
      { ...pending, id: "r2", status: "sending", intent },
      { ...pending, id: "r3", status: "completed", intent, transactionHash: intent.txHash },
      { ...pending, id: "r4", status: "failed", failedIntent: intent },
      {
        ...pending,
        id: "r5",
        waitingReason: "hot wallet short",
        attempts: [{
          ...intent,
          proof: { kind: "expired", expiry: { kind: "height", value: 9 }, reached: 10 },
          detail: "expired",
          deadAt: AT,
        }],
      },
    ];
    for (const r of shapes) await p.kv.set(refundKey(r.id), JSON.parse(JSON.stringify(r)));
    for (const r of shapes) assert.deepEqual((await getRefund(p.kv, r.id)).value, r, r.id);
    const listed = await listRefunds(p.kv);
    assert.deepEqual(listed.invalid, []);
    assert.equal(listed.refunds.length, shapes.length);
  } finally {
    await p.close();
  }
});

Deno.test("refund record: a malformed write is refused naming the field", () => {
  assert.throws(() => validRefund({ ...pending, status: "sending" }), (err: unknown) => {
    assert.ok(err instanceof InvalidRecordError);
    assert.match(err.message, /refund\/r1 is invalid: intent: required for a sending refund/);
    return true;
  });
  assert.throws(() => validRefund({ ...pending, amount: "-5" }), /amount/);
  assert.throws(() => validRefund({ ...pending, status: "completed", intent }), /transactionHash/);
  assert.throws(
    () => validRefund({ ...pending, status: "sending", intent: { ...intent, chain: "xrp" } }),
    /on the refund's chain, sol/,
  );
});

Deno.test("refund record: a malformed stored refund is held untouched with one invalid_record alert, never sent", async () => {
  const p = await handPipeline();
  try {
    const bad = { ...pending, status: "sending" }; // no transaction recorded: stepping it would sign a second one
    await p.kv.set(refundKey("r1"), bad);
    await p.kv.set(refundDueKey("r1"), 0);
    const before = await p.kv.get(refundKey("r1"));
    assert.equal(await stepRefund(p.ctx, "r1"), "waiting");
    assert.equal((await p.kv.get(refundKey("r1"))).versionstamp, before.versionstamp, "the record is untouched");
    const alert = await getAlert(p.kv, "invalid_record", "refund/r1");
    assert.ok(alert);
    assert.match(alert.message, /intent: required for a sending refund/);
    // Looked at again later: still held, the same alert counted.
    p.advance(11 * 60_000);
    assert.equal(await stepRefund(p.ctx, "r1"), "waiting");
    assert.equal((await getAlert(p.kv, "invalid_record", "refund/r1"))?.count, 2);
    const listed = await listRefunds(p.kv);
    assert.deepEqual(listed.refunds, []);
    assert.match(listed.invalid[0].message, /refund\/r1/);
  } finally {
    await p.close();
  }
});
