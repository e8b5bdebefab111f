/**
 * Malformed Solana answers are named refusals (chains/sol/answers.ts), on a Solana-RPC-shaped server
 * (tests/support/solana_rpc_server.ts; no validator runs here) that serves one on demand: the error names the method
 * and the field, and nothing moves: the watcher's cursor stays, no order is recorded, no payout is proven dead or
 * prepared. Served well again, the same deposit is credited once.
 */
import assert from "node:assert/strict";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { parseExactJson } from "../chains/shared/http_failover.ts";
import { balanceAnswer, latestBlockhashAnswer, solAnswer, transactionAnswer } from "../chains/sol/answers.ts";
import { transfersIn } from "../chains/sol/reader.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { ours, solOn, solWatcherByHand, stranger } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";

/** Asserts `err` is the named refusal of `method` at `field`. */
function refused(method: string, field: string, problem: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof MalformedAnswerError, `a MalformedAnswerError, not ${err}`);
    assert.equal(err.method, method);
    assert.equal(err.field, field);
    assert.match(err.problem, problem);
    assert.equal(err.name, "MalformedAnswerError");
    assert.ok(err.message.startsWith(`sol ${method}: ${field} `), err.message);
    return true;
  };
}

Deno.test("sol answers: lamports are exact bigints from safe integers or digits; floats, negatives, exponents and signs are refused", () => {
  // chains/shared/http_failover.ts hands over every number that is not a safe integer as its exact text.
  const balance = (json: string) => solAnswer("getBalance", balanceAnswer, parseExactJson(json)).value;
  assert.equal(balance('{"value": 5000}'), 5000n);
  assert.equal(balance('{"value": 9007199254740993}'), 9_007_199_254_740_993n, "above 2^53, exact");
  assert.equal(balance('{"value": "18446744073709551615"}'), 18_446_744_073_709_551_615n);
  assert.equal(balance('{"value": null}'), null);
  for (const bad of ["1.5", "-1", "1e20", '"-5"', '"+5"', '"0x10"', '" 5"', '"5.0"', "true", "{}"]) {
    assert.throws(
      () => balance(`{"value": ${bad}}`),
      refused("getBalance", "value", /is not a whole number of lamports/),
      bad,
    );
  }
  assert.throws(() => balance("{}"), refused("getBalance", "value", /is missing/));
  assert.throws(
    () => solAnswer("getLatestBlockhash", latestBlockhashAnswer, { value: { blockhash: "x" } }),
    refused("getLatestBlockhash", "value.lastValidBlockHeight", /is missing/),
  );
  const tx = {
    transaction: { signatures: ["sig1"], accountKeys: [{ pubkey: ours(0), signer: true, writable: true }] },
    meta: { err: null, preBalances: [0], postBalances: [7] },
  };
  assert.equal(solAnswer("getTransaction", transactionAnswer, tx).meta!.postBalances[0], 7n);
  assert.throws(
    () => transfersIn({ ...tx, transaction: { ...tx.transaction, accountKeys: [{ signer: true }] } }),
    refused("getTransaction", "transaction.accountKeys[0].pubkey", /is missing/),
  );
  assert.throws(
    () => transfersIn({ ...tx, meta: { preBalances: [0], postBalances: [7] } }),
    refused("getTransaction", "meta.err", /is missing/),
    "a missing err is neither a failure nor a success",
  );
});

Deno.test("sol watcher on a Solana-RPC-shaped server: a malformed block is refused by name; the cursor stays, nothing is recorded, and the deposit is credited once when served well", async (t) => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  const h = await solWatcherByHand(sol); // the sol watcher below runs by hand
  try {
    const { kv, ctx, wallet, address, cursor } = h;
    const signature = sol.inject({ payer: stranger(3), credits: [{ to: address, lamports: 2_000_000_000n }] });
    sol.produce(1);
    sol.finalize();
    const slot = sol.landedAt(signature)!;
    const orders = async () => (await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;

    /** Serves `edit` of the deposit's transaction in getBlock "accounts" answers. */
    const tamperDeposit = (edit: (tx: Record<string, Record<string, unknown>>) => void) =>
      sol.tamper("getBlock", (block, [, cfg]) => {
        const b = block as { transactions?: Record<string, Record<string, unknown>>[] };
        if ((cfg as { transactionDetails?: string }).transactionDetails === "accounts") {
          for (const tx of b.transactions ?? []) {
            if ((tx.transaction.signatures as string[])[0] === signature) edit(tx);
          }
        }
        return b;
      });

    const malformed: [string, (tx: Record<string, Record<string, unknown>>) => void, string, RegExp][] = [
      [
        "a balance as a float",
        (tx) => (tx.meta.postBalances as unknown[])[1] = "2000000000.5",
        "transactions[0].meta.postBalances[1]",
        /is not a whole number of lamports \("2000000000\.5"\)/,
      ],
      [
        "a negative balance",
        (tx) => (tx.meta.preBalances as unknown[])[1] = -1,
        "transactions[0].meta.preBalances[1]",
        /is not a whole number of lamports \(-1\)/,
      ],
      // Read as before this schema, a missing err was "not null": the deposit counted as failed, never credited,
      // while the cursor moved past its block. A lost deposit.
      ["no meta.err", (tx) => delete tx.meta.err, "transactions[0].meta.err", /is missing/],
      [
        "an account key without its pubkey",
        (tx) => delete (tx.transaction.accountKeys as Record<string, unknown>[])[1].pubkey,
        "transactions[0].transaction.accountKeys[1].pubkey",
        /is missing/,
      ],
    ];
    for (const [name, edit, field, problem] of malformed) {
      await t.step(name, async () => {
        tamperDeposit(edit);
        await assert.rejects(() => watchOnce(ctx, "sol", "by-hand", 60_000), refused("getBlock", field, problem));
        assert.deepEqual((await kv.get<Cursor>(cursorKey("sol"))).value, cursor, "the cursor did not move");
        assert.deepEqual(await orders(), [], "nothing recorded");
      });
    }
    await t.step("a block answered without its transaction list", async () => {
      // Read as before this schema, it was a block without deposits, and the cursor moved past it.
      sol.tamper("getBlock", (block, [, cfg]) => {
        if ((cfg as { transactionDetails?: string }).transactionDetails === "accounts") {
          delete (block as { transactions?: unknown }).transactions;
        }
        return block;
      });
      await assert.rejects(
        () => watchOnce(ctx, "sol", "by-hand", 60_000),
        refused("getBlock", "transactions", /is missing/),
      );
      assert.deepEqual((await kv.get<Cursor>(cursorKey("sol"))).value, cursor);
      assert.deepEqual(await orders(), []);
    });
    await t.step("served well again: credited once", async () => {
      sol.tamper("getBlock", null);
      const r = await watchOnce(ctx, "sol", "by-hand", 60_000);
      assert.ok(r.scannedTo !== null && r.scannedTo >= slot, `scanned to ${r.scannedTo}, past ${slot}`);
      assert.deepEqual((await orders()).map((o) => [o.type, o.amount]), [["mint", "2000000000"]]);
      await watchOnce(ctx, "sol", "by-hand", 60_000);
      assert.equal((await orders()).length, 1);
    });
  } finally {
    await h.close();
    await sol.close();
  }
});

Deno.test("sol reader and payer on a Solana-RPC-shaped server: a malformed status, blockhash or rent answer is refused by name, never read as dead or as a number", async (t) => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { reader, payer } = solOn(sol);
    const landed = sol.inject({ payer: stranger(1), credits: [{ to: ours(0), lamports: 5_000_000n }] });
    sol.produce(3);
    sol.finalize();
    // Recorded with a lastValidBlockHeight the finalized height is above: only the node's "unknown" proves it dead.
    const ours_ = { raw: "", expiry: { kind: "height" as const, value: 1 } };
    assert.equal((await reader.txStatus(landed, ours_)).state, "included");

    await t.step("getSignatureStatuses with no entry", async () => {
      // Read as before this schema, an empty list was "unknown": with the height past its expiry, a landed payout
      // was proven dead and would have been signed again.
      sol.tamper("getSignatureStatuses", (r) => ({ ...(r as object), value: [] }));
      await assert.rejects(
        () => reader.txStatus(landed, ours_),
        refused("getSignatureStatuses", "value", /one status for the one signature asked/),
      );
      sol.tamper("getSignatureStatuses", null);
    });
    await t.step("getSignatureStatuses with a fractional slot", async () => {
      sol.tamper("getSignatureStatuses", (r) => {
        const v = (r as { value: Record<string, unknown>[] }).value;
        v[0].slot = 3.5;
        return r;
      });
      await assert.rejects(
        () => reader.txStatus(landed, ours_),
        refused("getSignatureStatuses", "value[0].slot", /is not a whole number \("3\.5"\)/),
      );
      sol.tamper("getSignatureStatuses", null);
    });
    await t.step("getSlot and getBalance", async () => {
      sol.tamper("getSlot", () => "tip");
      await assert.rejects(() => reader.tip(), refused("getSlot", "the answer", /is not a whole number \("tip"\)/));
      sol.tamper("getSlot", null);
      sol.tamper("getBalance", () => ({ context: { slot: 1 }, value: 1.25 }));
      await assert.rejects(() => reader.balance!(ours(0)), refused("getBalance", "value", /lamports \("1\.25"\)/));
      sol.tamper("getBalance", null);
      assert.equal(await reader.balance!(ours(0)), 5_000_000n);
    });
    await t.step("the payer: rent as a float, a blockhash without its last valid height", async () => {
      sol.fund(payer.hotWallet!, 10_000_000_000n);
      sol.produce(1);
      sol.finalize();
      const req = { orderId: "o1", to: ours(5), amount: 1_000_000_000n, memo: null };
      assert.equal((await payer.checkPayout!(req)).ok, true);
      sol.tamper("getMinimumBalanceForRentExemption", () => 890_880.5);
      await assert.rejects(
        () => payer.checkPayout!(req),
        refused("getMinimumBalanceForRentExemption", "the answer", /lamports \("890880\.5"\)/),
      );
      sol.tamper("getMinimumBalanceForRentExemption", null);
      sol.tamper("getLatestBlockhash", (r) => {
        delete (r as { value: Record<string, unknown> }).value.lastValidBlockHeight;
        return r;
      });
      await assert.rejects(
        () => payer.preparePayout(req),
        refused("getLatestBlockhash", "value.lastValidBlockHeight", /is missing/),
      );
      sol.tamper("getLatestBlockhash", null);
      const prepared = await payer.preparePayout(req);
      assert.equal(prepared.expiry?.kind, "height");
      assert.equal(sol.sends(prepared.txHash), 0, "prepared, never sent");
    });
  } finally {
    await sol.close();
  }
});
