/**
 * The dashboard's views (routes/admin_ui/views.ts) on the reports the `treasury` and `held list` operations return,
 * (docs/dashboard.md): a UTXO treasury report renders its balances, any `held list` shape with
 * `id`-carrying records gives its rows, and every value is escaped.
 */
import assert from "node:assert/strict";
import { treasuryReport } from "../actors/treasury_report.ts";
import { heldItems, heldSection, heldTotal, treasurySection, units } from "../routes/admin_ui/views.ts";
import { withKv } from "./support/kv.ts";

Deno.test("treasury section: a UTXO treasury report shows its balances and payouts; absent and refused are said", async () => {
  await withKv("admin-ui-views-", async (kv) => {
    const report = await treasuryReport(kv, "doge");
    const page = String(await treasurySection("doge", { kind: "ok", result: report }));
    assert.match(page, /Treasury balances/);
    for (const field of Object.keys(report.balances)) assert.match(page, new RegExp(`<th>${field}</th>`));
    assert.match(page, /Payouts waiting: 0/);
    assert.match(String(await treasurySection("sol", { kind: "absent" })), /not available/);
    assert.match(String(await treasurySection("sol", { kind: "refused", message: "no <node>" })), /no &lt;node&gt;/);
  });
});

Deno.test("held section: records from any held list shape, escaped, with release and refund forms", async () => {
  const items = heldItems({ held: [{ id: "order:1", reason: "<b>cap</b>" }, { nope: 1 }], count: 1 });
  assert.deepEqual(items.map((i) => i.id), ["order:1"]);
  assert.deepEqual(heldItems([{ id: "transfer:sol:tx:0" }]).map((i) => i.id), ["transfer:sol:tx:0"]);
  assert.deepEqual(heldItems(null), []);
  const page = String(await heldSection({ kind: "ok", items }, "tok", true, true));
  assert.match(page, /&lt;b&gt;cap&lt;\/b&gt;/);
  assert.doesNotMatch(page, /<b>cap/);
  assert.match(page, /name="op" value="held release"/);
  assert.match(page, /name="op" value="held refund"/);
  assert.match(page, /name="csrf" value="tok"/);
  assert.match(String(await heldSection({ kind: "absent" }, "tok", false, false)), /not available/);
});

Deno.test("held section: how many of how many held records it shows, from the held list's total", async () => {
  const result = { held: [{ id: "transfer:sol:tx:0" }, { id: "transfer:sol:tx:1" }], total: 7 };
  assert.equal(heldTotal(result), 7);
  assert.equal(heldTotal({ held: [] }), null);
  const page = String(await heldSection({ kind: "ok", items: heldItems(result), total: 7 }, "tok", true, true));
  assert.match(page, /2 of 7 held record\(s\), newest first/);
  assert.match(page, /held list --limit N<\/code> lists more/);
  const whole = String(await heldSection({ kind: "ok", items: heldItems(result), total: 2 }, "tok", true, true));
  assert.match(whole, /2 of 2 held record\(s\), newest first<\/p>/);
});

Deno.test("amounts are shown in whole units exactly, from their decimal strings", () => {
  assert.equal(units("1000000003", 9), "1.000000003");
  assert.equal(units("1000000000000000000", 18), "1");
  assert.equal(units("5", 8), "0.00000005");
  assert.equal(units("123456789012345678901234567890", 18), "123456789012.34567890123456789");
  assert.equal(units("0", 9), "0");
  assert.equal(units("7", 0), "7");
});
