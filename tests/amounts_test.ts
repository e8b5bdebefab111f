/** model/amounts.ts: exact human units from base units, on edge cases (0, one base unit, huge, negative). */
import assert from "node:assert/strict";
import { displayAmount, displayAssetAmount, formatCount, formatUnits, nativeUnit, unitOf } from "../model/amounts.ts";

Deno.test("formatUnits: exact decimals, thousands separated, trailing zeros dropped", () => {
  assert.equal(formatUnits(0n, 9), "0");
  assert.equal(formatUnits(1n, 9), "0.000000001");
  assert.equal(formatUnits(1n, 18), "0.000000000000000001");
  assert.equal(formatUnits(1_500_000_000n, 9), "1.5");
  assert.equal(formatUnits(890_880n, 9), "0.00089088");
  assert.equal(formatUnits(1_000_000_000n, 9), "1");
  assert.equal(formatUnits(1_234_567_000_000_000n, 9), "1,234,567");
  assert.equal(formatUnits(999n, 0), "999");
  assert.equal(formatUnits(1000n, 0), "1,000");
  assert.equal(formatUnits(-1_500_000_000n, 9), "-1.5");
  assert.equal(formatUnits(-1n, 8), "-0.00000001");
  // The treasury page's 31-digit sim balance in wei: every digit kept, none rounded (a float would lose the tail).
  assert.equal(formatUnits(9999999999999999999998999109120n, 18), "9,999,999,999,999.99999999899910912");
  assert.equal(formatUnits(2n ** 255n, 18).replaceAll(",", "").replace(".", ""), (2n ** 255n).toString());
  assert.throws(() => formatUnits(1n, -1), /decimals/);
  assert.throws(() => formatUnits(1n, 1.5), /decimals/);
});

Deno.test("displayAmount: the unit of a native coin, a uAsset, ETH; anything else shown as given", () => {
  assert.equal(displayAmount("1500000000", "SOL"), "1.5 SOL");
  assert.equal(displayAmount("890880", nativeUnit("sol"), "reserve"), "0.00089088 SOL reserve");
  assert.equal(displayAmount("1500000000000000000", "uSOL"), "1.5 uSOL");
  assert.equal(displayAmount(1n, "XRP"), "0.000001 XRP");
  assert.equal(displayAmount("100000000", "DOGE"), "1 DOGE");
  assert.equal(displayAmount("0", "ZEC"), "0 ZEC");
  assert.equal(displayAmount("-250000000", "ZEC"), "-2.5 ZEC");
  assert.equal(displayAmount("1000000000000000000", "ETH"), "1 ETH");
  assert.equal(displayAmount("12", "FOO"), "12 FOO");
  assert.equal(displayAmount("1.5", "SOL"), "1.5 SOL", "not a base-unit integer: as given");
  assert.equal(displayAmount("", "SOL"), " SOL");
  assert.deepEqual(unitOf("uDOGE"), { symbol: "uDOGE", decimals: 18 });
  assert.equal(unitOf("sol"), null, "symbols are case-sensitive: a chain name is not a unit");
  assert.equal(
    displayAssetAmount("150000000", "native", "doge"),
    "1.5 DOGE",
    "a held native deposit: the chain's coin",
  );
  assert.equal(displayAssetAmount("1000", "uSOL", "base"), "0.000000000000001 uSOL");
  assert.equal(displayAssetAmount("7", "native", "base"), "7 native", "no coin known: as given");
  assert.equal(formatCount(1234567), "1,234,567");
  assert.equal(formatCount(0), "0");
});
