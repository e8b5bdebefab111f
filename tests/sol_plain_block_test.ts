/**
 * A scan's getBlock answer checked in place (chains/sol/reader.ts `isPlainScanBlock`) must accept only what the schema
 * (chains/sol/answers.ts `scanBlockAnswer`) accepts, and credit exactly what the schema's reading credits: anything
 * it refuses goes through the schema, which names the field.
 */
import assert from "node:assert/strict";
import { scanBlockAnswer, solAnswer } from "../chains/sol/answers.ts";
import { creditsTo, isPlainScanBlock } from "../chains/sol/reader.ts";

const key = (pubkey: string, signer = false) => ({ pubkey, signer, source: "transaction", writable: true });
const tx = (over: Record<string, unknown> = {}, meta: Record<string, unknown> | null = {}) => ({
  transaction: { signatures: ["sig1"], accountKeys: [key("payer", true), key("ours"), key("other")] },
  meta: meta === null ? null : {
    err: null,
    fee: 5000,
    preBalances: [10_000_000_000, 5, "900719925474099300"],
    postBalances: [8_000_000_000, 1_000_000_005, "900719925474099301"],
    ...meta,
  },
  version: 0,
  ...over,
});
const block = (transactions: unknown[]) => ({ blockhash: "h", previousBlockhash: "p", transactions });

Deno.test("sol block checked in place: what it accepts, it credits exactly as the schema's reading does", () => {
  const variants = [
    block([tx()]),
    block([tx({}, null)]), // no status metadata: never credited
    block([tx({}, { err: { InstructionError: [0, { Custom: 1 }] } })]), // failed
    block([tx({ transaction: { signatures: ["sig2"], message: { accountKeys: [key("payer", true), key("ours")] } } }, {
      preBalances: [3_000_000_000, 0],
      postBalances: [1_000_000_000, 2_000_000_000],
    })]), // keys in the message, as jsonParsed puts them
    block([]),
  ];
  for (const ours of [undefined, (a: string) => a === "ours"]) {
    for (const v of variants) {
      assert.ok(isPlainScanBlock(v), JSON.stringify(v));
      const plain = v.transactions.flatMap((t) => creditsTo(t as Parameters<typeof creditsTo>[0], ours));
      const read = solAnswer("getBlock", scanBlockAnswer, v)!.transactions.flatMap((t) => creditsTo(t, ours));
      assert.deepEqual(plain, read);
    }
  }
  // A balance above 2^53 arrives as its digits (chains/shared/http_failover.ts) and is credited exactly.
  const big = block([tx()]);
  assert.ok(isPlainScanBlock(big));
  assert.deepEqual(big.transactions.flatMap((t) => creditsTo(t)).map((c) => [c.to, c.amount]), [
    ["ours", 1_000_000_000n],
    ["other", 1n],
  ]);
});

Deno.test("sol block checked in place: whatever the schema refuses, it refuses too", () => {
  const malformed: unknown[] = [
    null,
    [],
    { ...block([tx()]), blockhash: 7 },
    { blockhash: "h", transactions: [tx()] },
    { ...block([tx()]), transactions: null },
    block([tx({ transaction: { signatures: [1], accountKeys: [key("a", true)] } })]),
    block([tx({ transaction: { signatures: ["s"], accountKeys: [{ pubkey: "a" }] } })]),
    block([tx({ transaction: { signatures: ["s"], accountKeys: null } })]),
    block([tx({ transaction: { signatures: ["s"], message: {} } })]),
    block([tx({ meta: undefined })]),
    block([tx({}, { err: undefined })]),
    block([tx({}, { preBalances: [1.5, 2, 3] })]),
    block([tx({}, { postBalances: [-1, 2, 3] })]),
    block([tx({}, { postBalances: ["1e3", 2, 3] })]),
    block([tx({}, { preBalances: null })]),
    block([null]),
  ];
  for (const m of malformed) {
    assert.equal(isPlainScanBlock(m), false, JSON.stringify(m));
    if (m !== null) assert.throws(() => solAnswer("getBlock", scanBlockAnswer, m), JSON.stringify(m));
  }
});
