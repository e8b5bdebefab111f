/**
 * Reading one busy Solana block as the sol reader does (chains/sol/reader.ts `scan`): the `getBlock` answer
 * (`transactionDetails: "accounts"`) parsed as JSON, read through its schema (chains/sol/answers.ts) and credited by
 * balance change. Prints ms per block for the JSON parse alone (plain, and keeping big numbers' text as the transport
 * does) and for the whole read (through the schema, every credit built or only those to our addresses; or checked in
 * place as a scan reads it now), so each share shows.
 * Figures only.
 * Run: deno run --allow-env bench/sol_block.ts   (BENCH_TRANSACTIONS=5000, BENCH_KEYS=6)
 */
import { scanBlockAnswer, solAnswer } from "../chains/sol/answers.ts";
import { creditsOf, creditsTo, isPlainScanBlock } from "../chains/sol/reader.ts";
import { parseExactJson } from "../chains/shared/http_failover.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const TRANSACTIONS = num("BENCH_TRANSACTIONS", 5_000);
const KEYS = num("BENCH_KEYS", 6);
const ROUNDS = 20;

const key = (t: number, i: number) => ({
  pubkey: `${t}`.padStart(8, "1") + `${i}`.padStart(36, "1"),
  signer: i === 0,
  writable: i < 2,
  source: "transaction",
});
const answer = JSON.stringify({
  blockhash: "1".repeat(44),
  previousBlockhash: "2".repeat(44),
  parentSlot: 1,
  blockHeight: 1,
  transactions: Array.from({ length: TRANSACTIONS }, (_, t) => ({
    transaction: {
      signatures: [`${t}`.padStart(88, "1")],
      accountKeys: Array.from({ length: KEYS }, (_, i) => key(t, i)),
    },
    meta: {
      // One in ten failed, as on mainnet: read, never credited.
      err: t % 10 === 0 ? { InstructionError: [0, { Custom: 1 }] } : null,
      fee: 5_000,
      preBalances: Array.from({ length: KEYS }, (_, i) => (i === 0 ? 10_000_000_000 : 1_000 * i)),
      postBalances: Array.from(
        { length: KEYS },
        (_, i) => (i === 0 ? 9_000_000_000 : i === 1 ? 1_001_000_000 : 1_000 * i),
      ),
      status: { Ok: null },
    },
    version: 0,
  })),
});

function time(label: string, fn: () => number) {
  fn(); // warm up
  const start = performance.now();
  let n = 0;
  for (let r = 0; r < ROUNDS; r++) n += fn();
  console.log(`${label}: ${((performance.now() - start) / ROUNDS).toFixed(1)} ms per block (${n / ROUNDS} credits)`);
}

console.log(`a block of ${TRANSACTIONS} transactions, ${KEYS} account keys each, ${answer.length} bytes of JSON`);
time("JSON.parse only", () => (JSON.parse(answer), 0));
// What the transport does (chains/shared/http_failover.ts): big numbers kept as their text.
time("parseExactJson only", () => (parseExactJson(answer), 0));
time("JSON.parse + schema + credits", () => {
  const block = solAnswer("getBlock", scanBlockAnswer, JSON.parse(answer))!;
  return block.transactions.flatMap(creditsOf).length;
});
// What a scan does with the watcher's address set (chains/sol/reader.ts `scan` with `ours`): nothing built for others.
const none = new Set<string>();
time("parseExactJson + schema + credits to our addresses only", () => {
  const block = solAnswer("getBlock", scanBlockAnswer, parseExactJson(answer))!;
  return block.transactions.flatMap((tx) => creditsTo(tx, (a) => none.has(a))).length;
});
// What a scan does now: the answer checked in place (no copy), the schema only for what is not plainly well formed.
time("parseExactJson + checked in place + credits to our addresses only", () => {
  const block = parseExactJson(answer);
  if (!isPlainScanBlock(block)) throw new Error("the bench's block is not plainly well formed");
  return block.transactions.flatMap((tx) => creditsTo(tx, (a) => none.has(a))).length;
});
