/**
 * The dashboard's views (routes/admin_ui/views.ts) on the reports the `treasury` and `held list` operations return,
 * (docs/dashboard.md): a UTXO treasury report renders its balances, any `held list` shape with
 * `id`-carrying records gives its rows, and every value is escaped.
 */
import assert from "node:assert/strict";
import { treasuryReport } from "../actors/treasury_report.ts";
import { heldItems, heldSection, heldTotal, treasurySection } from "../routes/admin_ui/views.ts";
import { TREASURY_AMOUNT_KEYS } from "../actors/ops/treasury.ts";
import { displayPaths, nativeUnit } from "../model/amounts.ts";
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
  // Amounts in the unit of the record's token or asset, the exact integer after it.
  const amounts = String(
    await heldSection(
      {
        kind: "ok",
        items: [
          { id: "transfer:doge:t:0", transfer: { chain: "doge", asset: "native", amount: "150000000" } },
          { id: "transfer:base:t:1", transfer: { chain: "base", asset: "uSOL", amount: "2500000000000000000" } },
          { id: "order:x", order: { token: "XRP", amount: "1000001" } },
        ],
      },
      "tok",
      true,
      true,
    ),
  );
  assert.match(amounts, /amount 1\.5 DOGE \(150000000\)/);
  assert.match(amounts, /amount 2\.5 uSOL \(2500000000000000000\)/);
  assert.match(amounts, /amount 1\.000001 XRP \(1000001\)/);
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

Deno.test("treasury section: amounts in the chain's coin from `display`, the exact integer in the title, no JSON in a cell", async () => {
  const result = {
    chain: "sol",
    hotWallet: {
      address: "Hot1<x>",
      balance: "9999999999999999999998999109120",
      reserve: "890880",
      held: { count: 0, amount: "0" },
      index: 0,
    },
    custody: { hot: "1500000000", hotError: undefined, cold: null, coldError: "no <cold> node", inFlight: null },
  };
  const shown = { ...result, display: displayPaths(result, nativeUnit("sol"), TREASURY_AMOUNT_KEYS) };
  assert.equal(shown.display["hotWallet.reserve"], "0.00089088 SOL");
  assert.equal(shown.display["hotWallet.held.amount"], "0 SOL");
  assert.equal(shown.display["hotWallet.index"], undefined, "not an amount");
  const page = String(await treasurySection("sol", { kind: "ok", result: shown }));
  assert.match(page, /<span class="amount" title="890880 smallest units">0\.00089088 SOL<\/span>/);
  assert.match(
    page,
    /title="9999999999999999999998999109120 smallest units">9,999,999,999,999,999,999,998\.99910912 SOL</,
  );
  assert.match(page, /1\.5 SOL/);
  assert.match(page, /<span class="muted">count<\/span> 0 · <span class="muted">amount<\/span> <span class="amount"/);
  const cells = [...page.matchAll(/<td class="num">([\s\S]*?)<\/td>/g)].map((m) => m[1]);
  assert.ok(cells.length >= 6);
  for (const c of cells) assert.doesNotMatch(c, /[{}]|&quot;/, `no JSON in a cell: ${c}`);
  assert.match(page, /no &lt;cold&gt; node/);
});
