/**
 * The span of a scan's `eth_getLogs` (chains/evm/log_range.ts): which provider answers are a refusal of the span,
 * what span a refusal names, and how the sizer moves. The answers are the providers' own words as quoted in that
 * module; the errors are viem's, as its HTTP transport raises them. tests/evm_catchup_test.ts runs the reader behind
 * such providers in front of anvil.
 */
import assert from "node:assert/strict";
import { HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";
import { rangeRefusal } from "../chains/evm/log_range.ts";
import { BatchSizer, CAP_RECOVERY_REQUESTS } from "../chains/shared/batch_sizer.ts";

const answered = (code: number, message: string) =>
  new RpcRequestError({ body: {}, error: { code, message }, url: "http://127.0.0.1:1" });

Deno.test("eth_getLogs refusals in the providers' own words are told apart from rate limits and dead nodes", () => {
  const refusals: [string, unknown, number | undefined][] = [
    ["Infura, results", answered(-32005, "query returned more than 10000 results"), undefined],
    ["Infura, duration", answered(-32005, "query timeout exceeded"), undefined],
    ["Infura, live range cap", answered(-32602, "range 1000000 exceeds limit of 10000"), 10_000],
    [
      "Alchemy, with a range",
      answered(
        -32602,
        "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on " +
          "the response size, or you can request any block range with a cap of 10K logs in the response. Based on " +
          "your parameters, this block range should work: [0x10, 0x2f]",
      ),
      32,
    ],
    ["reth, results", answered(-32602, "query exceeds max results 20000, retry with the range 24383075-24383096"), 22],
    ["reth, span", answered(-32602, "query exceeds max block range 100000"), 100_000],
    ["erigon, span", answered(-32000, "query block range exceeds server limit, narrow your filter"), undefined],
    ["erigon, results", answered(-32000, "query returns too many logs, narrow your filter"), undefined],
    ["Tenderly", answered(-32602, "range 9009594 is bigger than range limit 2000"), 2_000],
    ["Frontier", answered(-32603, "block range is too wide (maximum 10)"), 10],
    ["QuickNode-style", answered(-32614, "eth_getLogs is limited to a 10,000 range"), 10_000],
    ["zkSync", answered(-32008, "Response is too big"), undefined],
    [
      "HTTP 413",
      new HttpRequestError({ body: {}, details: "Request Entity Too Large", status: 413, url: "http://x" }),
      undefined,
    ],
    ["a timeout", new TimeoutError({ body: {}, url: "http://x" }), undefined],
    ["our own answer cap", new ResponseBodyTooLargeError({ maxSize: 10, size: 11 }), undefined],
  ];
  for (const [who, err, suggested] of refusals) {
    const refusal = rangeRefusal(err);
    assert.ok(refusal, `${who}: a refusal`);
    assert.equal(refusal.suggested, suggested, `${who}: suggested span`);
  }
  const notRefusals: [string, unknown][] = [
    ["Infura rate limit", answered(-32005, "daily request count exceeded, request rate limited")],
    ["a bare limit", answered(-32005, "limit exceeded")],
    ["header not found", answered(-32000, "header not found")],
    ["a dead node", new HttpRequestError({ body: {}, details: "fetch failed", url: "http://x" })],
    ["HTTP 503", new HttpRequestError({ body: {}, details: "unavailable", status: 503, url: "http://x" })],
    ["not viem's", new Error("query returned more than 10000 results")],
  ];
  for (const [who, err] of notRefusals) assert.equal(rangeRefusal(err), null, who);
});

Deno.test("the log span starts at its maximum, halves or takes a named span on refusal, grows back", () => {
  const sizer = new BatchSizer(1_000_000, 1_000, 1_000);
  assert.equal(sizer.size, 1_000);
  sizer.refused(1_000);
  assert.deepEqual([sizer.size, sizer.cap], [500, 500]);
  sizer.refused(500, 40); // the provider named 40
  assert.deepEqual([sizer.size, sizer.cap], [40, 40]);
  sizer.refused(40, 400); // a named span no smaller than the refused one is not believed
  assert.deepEqual([sizer.size, sizer.cap], [20, 20]);
  sizer.refused(2);
  sizer.refused(1);
  assert.equal(sizer.size, 1, "never below one block");
  // Dense answers keep it small: 100,000 bytes per block fit 10 blocks of the 1 MB target.
  for (let i = 0; i < 5; i++) sizer.answered(sizer.size, sizer.size * 100_000);
  assert.ok(sizer.size <= 10, `dense: ${sizer.size}`);
  // Sparse answers: it doubles per answer up to the cap, and the cap doubles after the recovery count.
  for (let i = 0; i < 3 * CAP_RECOVERY_REQUESTS; i++) sizer.answered(sizer.size, 50);
  assert.ok(sizer.cap >= 8, `the cap recovers: ${sizer.cap}`);
  for (let i = 0; i < 20 * CAP_RECOVERY_REQUESTS; i++) sizer.answered(sizer.size, 50);
  assert.deepEqual([sizer.size, sizer.cap], [1_000, 1_000], "back to the maximum, never above");
  assert.throws(() => new BatchSizer(1_000_000, 0), /whole number >= 1/);
});
