/**
 * Malformed rippled answers (chains/xrp/answers.ts) on a rippled-shaped server (tests/support/rippled_rpc_server.ts; no
 * rippled runs here): a reserve as a float, a Balance missing, a ledger transaction without its metadata, a `submit`
 * without its engine result. Each is refused with an error naming the method and the field, and nothing moves: the
 * watcher's cursor stays, no order is created, no payout is signed or sent. The same answers, well-formed again, are
 * read as before.
 */
import assert from "node:assert/strict";
import { watchOnce } from "../actors/watcher.ts";
import { intentOf } from "../actors/transition.ts";
import { TransientChainError } from "../chains/adapter.ts";
import { accountInfo, drops, readAnswer, serverState } from "../chains/xrp/answers.ts";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, simBurnOrders, stepNow } from "./support/burns.ts";
import { stored } from "./support/chain_facts.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { watchToTip } from "./support/watch.ts";
import {
  depositAddress,
  elsewhere,
  hotWallet,
  signer,
  withRippled,
  XRP,
  xrpHandPipeline,
  xrpOn,
} from "./support/xrp_env.ts";

const OWNER = "0x" + "a7".repeat(20);

/** Asserts `p` rejects with an MalformedAnswerError (transient: the caller waits) whose message matches `message`. */
async function refused(p: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(p, (err) => {
    assert.ok(err instanceof MalformedAnswerError, String(err));
    assert.ok(err instanceof TransientChainError, "a malformed answer is transient: nothing is decided from it");
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("xrp answers: drops are whole numbers only (digits, or a safe JSON integer), never a float, sign or exponent", () => {
  for (
    const [input, want] of [["0", 0n], ["1000000", 1_000_000n], [10, 10n], [
      "99999999999999999999",
      99999999999999999999n,
    ]] as const
  ) {
    assert.equal(drops.parse(input), want);
  }
  for (const bad of ["1.5", "-1", "1e6", " 1", "", "0x10", 1.5, -1, 2 ** 53, Number.NaN, null, true, {}]) {
    assert.equal(drops.safeParse(bad).success, false, JSON.stringify(bad));
  }
  const state = (v: Record<string, unknown>) => ({
    state: { validated_ledger: { seq: 7, reserve_base: 1_000_000, reserve_inc: 200_000, base_fee: 10, ...v } },
  });
  assert.equal(readAnswer("server_state", serverState, state({})).state.validated_ledger?.reserve_base, 1_000_000n);
  assert.throws(
    () => readAnswer("server_state", serverState, state({ reserve_base: 1_000_000.5 })),
    /^MalformedAnswerError: xrp server_state: state\.validated_ledger\.reserve_base is not a whole number of drops \(1000000\.5\)$/,
  );
  assert.throws(
    () => readAnswer("server_state", serverState, state({ base_fee: "-10" })),
    /xrp server_state: state\.validated_ledger\.base_fee is not a whole number of drops/,
  );
  assert.throws(
    () => readAnswer("account_info", accountInfo, { account_data: { Sequence: 4 } }),
    /^MalformedAnswerError: xrp account_info: account_data\.Balance is missing$/,
  );
  assert.throws(
    () => readAnswer("account_info", accountInfo, { account_data: { Balance: "12", Sequence: 4.5 } }),
    /xrp account_info: account_data\.Sequence is not a whole number \(4\.5\)/,
  );
  assert.throws(() => readAnswer("account_info", accountInfo, {}), /xrp account_info: account_data is missing/);
});

Deno.test("xrp payer on a rippled-shaped server: a reserve as a float, a Balance missing, a bad fee or submit answer is refused by name; nothing is sent", async () => {
  await withRippled({}, async (server) => {
    const h = server.hooks;
    const { payer, reader } = xrpOn(server);
    h.fund(hotWallet, 100n * XRP);
    h.fund(depositAddress(5), 20n * XRP);
    h.validateThrough(h.closedIndex + 1);
    const payout = { orderId: "o1", to: elsewhere, amount: 5n * XRP, memo: "77" };

    h.tamper("server_state", (r) => {
      ((r.state as Record<string, unknown>).validated_ledger as Record<string, unknown>).reserve_base = 1_000_000.5;
    });
    const floatReserve = /xrp server_state: state\.validated_ledger\.reserve_base is not a whole number of drops/;
    await refused(payer.checkPayout(payout), floatReserve);
    await refused(payer.preparePayout(payout), floatReserve);
    await refused(payer.prepareSweep({ sweepId: "s1", from: depositAddress(5), derivationIndex: 5 }), floatReserve);
    h.tamper("server_state", null);

    h.tamper("account_info", (r) => delete (r.account_data as Record<string, unknown>).Balance);
    await refused(reader.balance!(hotWallet), /^xrp account_info: account_data\.Balance is missing$/);
    await refused(payer.checkPayout(payout), /xrp account_info: account_data\.Balance is missing/);
    await refused(
      payer.prepareSweep({ sweepId: "s1", from: depositAddress(5), derivationIndex: 5 }),
      /xrp account_info: account_data\.Balance is missing/,
    );
    h.tamper("account_info", null);

    h.tamper("fee", (r) => ((r.drops as Record<string, unknown>).open_ledger_fee = "12.5"));
    await refused(payer.preparePayout(payout), /xrp fee: drops\.open_ledger_fee is not a whole number of drops/);
    h.tamper("fee", null);
    assert.equal(h.submissions.length, 0, "nothing was sent");

    // Well-formed again: the same payout is prepared, and a submit answer without its engine result is refused too.
    const tx = await payer.preparePayout(payout);
    h.tamper("submit", (r) => delete r.engine_result);
    await refused(payer.broadcast(tx), /^xrp submit: engine_result is missing$/);
    h.tamper("submit", null);
    await payer.broadcast(tx);
    h.validateThrough(h.closedIndex + 1);
    assert.equal(h.account(elsewhere)?.balance, 5n * XRP);
    assert.equal(await reader.balance!(elsewhere), 5n * XRP);

    // A `tx` answer for a transaction in a validated ledger but without its metadata: not "failed", refused. (Read
    // without the schema, a missing TransactionResult was a final failure: a payout that landed would look failed.)
    for (const version of [1, 2] as const) {
      h.apiVersion(version);
      h.tamper("tx", (r) => {
        delete r.meta;
        delete r.metaData;
      });
      await refused(reader.txStatus(tx.txHash), /^xrp tx: meta is missing/);
      await refused(reader.transfersOf!(tx.txHash), /^xrp tx: meta is missing/);
      h.tamper("tx", null);
    }
    const status = await reader.txStatus(tx.txHash);
    assert.equal(status.state, "included");
    assert.ok(status.state === "included" && status.success && status.final);
  });
});

for (const version of [1, 2] as const) {
  Deno.test(`xrp watcher on a rippled-shaped server (API v${version}): a ledger whose transaction has no metadata is refused, the cursor stays, nothing is recorded`, async () => {
    const server = startRippledServer({ apiVersion: version });
    const h = server.hooks;
    const { p } = await xrpHandPipeline(server, { live: { xrp: { startBlock: "tip" } } });
    try {
      await ensureUserWallet(p.kv, OWNER, "test-partner");
      const wallet = await createMintWallet(p.kv, OWNER, "xrp", "base", (_c, i) => signer.address("xrp", i));
      assert.ok(wallet.ok);
      assert.equal(await watchToTip(p.ctx, "xrp"), 0);
      const before = await p.kv.get(cursorKey("xrp"));
      assert.ok(before.value, "the watcher stored its cursor");

      const deposit = h.fund(wallet.wallet.address, 30n * XRP);
      h.validateThrough(h.closedIndex + 1);
      const ledgerOfDeposit = h.ledgerOf(deposit)!;
      h.tamper("ledger", (r) => {
        const txs = (r.ledger as Record<string, unknown>).transactions;
        if (!Array.isArray(txs)) return;
        for (const t of txs) {
          delete t.meta;
          delete t.metaData;
        }
      });
      for (let i = 0; i < 2; i++) {
        await refused(
          watchOnce(p.ctx, "xrp", "test-watcher", 60_000),
          new RegExp(`^xrp ledger: ledger\\.transactions\\[0\\]\\.meta is missing`),
        );
      }
      const after = await p.kv.get(cursorKey("xrp"));
      assert.deepEqual(after.value, before.value, "the cursor did not move past the ledger it could not read");
      assert.equal(after.versionstamp, before.versionstamp, "nor was it written");
      assert.deepEqual(await allOrders(p.kv), [], "nothing was recorded");

      // Well-formed again: the deposit is found and minted once.
      h.tamper("ledger", null);
      assert.equal(await watchToTip(p.ctx, "xrp"), 1);
      const [order] = await allOrders(p.kv);
      assert.equal(order.details.source?.txHash, deposit);
      assert.equal(order.amount, (30n * XRP).toString());
      assert.ok(ledgerOfDeposit > 0);
    } finally {
      await p.close();
      await server.close();
    }
  });
}

Deno.test("xrp burn on a rippled-shaped server: a float reserve in server_state leaves the payout unsigned and unsent until the node answers well", async () => {
  const server = startRippledServer();
  const { p } = await xrpHandPipeline(server);
  try {
    const h = server.hooks;
    h.fund(hotWallet, 100n * XRP);
    h.validateThrough(h.closedIndex + 1);
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    assert.ok((await createBurnConfig(p.kv, OWNER, "xrp", elsewhere, "2718")).ok);
    const { ids: [id] } = await simBurnOrders(p, "xrp", OWNER);

    h.tamper("server_state", (r) => {
      ((r.state as Record<string, unknown>).validated_ledger as Record<string, unknown>).reserve_base = 1.5;
    });
    for (let i = 0; i < 3; i++) await stepNow(p, id);
    const waiting = await stored(p.kv, id);
    assert.equal(intentOf(waiting), undefined, "nothing signed or recorded");
    assert.equal(waiting.status, "processing");
    assert.equal(h.submissions.length, 0, "nothing sent");

    h.tamper("server_state", null);
    for (let i = 0; i < 10 && (await stored(p.kv, id)).status !== "completed"; i++) {
      await stepNow(p, id);
      h.closeLedgers(1);
    }
    assert.equal((await stored(p.kv, id)).status, "completed");
    assert.equal(h.account(elsewhere)?.balance, 25n * XRP, "paid once");
  } finally {
    await p.close();
    await server.close();
  }
});

Deno.test("xrp reader on a rippled-shaped server: a ledger without its transaction list, a successful Payment without delivered_amount, a balance change in a float are refused by name", async () => {
  for (const version of [1, 2] as const) {
    await withRippled({ apiVersion: version }, async (server) => {
      const h = server.hooks;
      const { reader } = xrpOn(server);
      const from = h.closedIndex + 1;
      const deposit = h.fund(depositAddress(6), 30n * XRP);
      h.validateThrough(from);
      const scan = () => reader.scan(from, from);
      const entries = (r: Record<string, unknown>): Record<string, unknown>[] => {
        const txs = (r.ledger as Record<string, unknown>).transactions;
        return Array.isArray(txs) ? txs : [];
      };
      const metaOf = (t: Record<string, unknown>) => (t.meta ?? t.metaData) as Record<string, unknown>;

      h.tamper("ledger", (r) => delete (r.ledger as Record<string, unknown>).transactions);
      await refused(scan(), /^xrp ledger: ledger\.transactions is missing$/);
      h.tamper("ledger", (r) => entries(r).forEach((t) => delete metaOf(t).delivered_amount));
      await refused(
        scan(),
        /^xrp ledger: ledger\.transactions\[0\]\.(meta|metaData)\.delivered_amount is missing from a successful Payment$/,
      );
      h.tamper("ledger", (r) => entries(r).forEach((t) => (metaOf(t).delivered_amount = "30.5")));
      await refused(
        scan(),
        /(meta|metaData)\.delivered_amount is not drops, an issued amount or "unavailable" \("30\.5"\)/,
      );
      h.tamper("ledger", (r) =>
        entries(r).forEach((t) => {
          const node = (metaOf(t).AffectedNodes as Record<string, Record<string, unknown>>[])[0];
          (node.ModifiedNode.FinalFields as Record<string, unknown>).Balance = 1.5;
        }));
      await refused(
        scan(),
        new RegExp(
          `^xrp ledger: ledger\\.transactions\\[0\\]\\.${
            version === 1 ? "metaData" : "meta"
          }\\.AffectedNodes\\[0\\]\\.ModifiedNode\\.FinalFields\\.Balance is not a whole number of drops`,
        ),
      );
      h.tamper("ledger", null);
      const [block] = await scan();
      assert.deepEqual(block.transfers.map((t) => [t.txHash, t.amount]), [[deposit, 30n * XRP]]);
    });
  }
});
