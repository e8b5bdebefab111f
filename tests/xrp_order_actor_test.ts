/**
 * A burn paid out in XRP by the real order actor through the xrp adapter on a rippled-shaped server (no rippled runs
 * here; the other chains are the sim's): the payout waits while the hot wallet cannot fund it, carries the registered
 * memo as DestinationTag, is recorded (the order schema accepts its intent), lost once, proven dead by its
 * LastLedgerSequence, re-signed with the same Sequence, and paid exactly once.
 */
import assert from "node:assert/strict";
import { decode } from "xrpl";
import { type DeadIntent, intentOf } from "../actors/transition.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { stored } from "./support/chain_facts.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { elsewhere, hotWallet, XRP, xrpHandPipeline } from "./support/xrp_env.ts";

const OWNER = "0x" + "0f".repeat(20);

Deno.test("xrp burn on a rippled-shaped server: the order actor waits for funds, pays with the DestinationTag, re-signs a lost payout once", async () => {
  const server = startRippledServer();
  const { p } = await xrpHandPipeline(server);
  try {
    const h = server.hooks;
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    assert.ok((await createBurnConfig(p.kv, OWNER, "xrp", elsewhere, "3141592")).ok);
    const { ids: [id], payout } = await simBurnOrders(p, "xrp", OWNER);
    assert.equal(payout, 25n * XRP);
    const step = () => stepNow(p, id);

    // The hot wallet does not exist yet: the payout waits, visibly, with nothing signed.
    for (let i = 0; i < 3; i++) await step();
    const waiting = await stored(p.kv, id);
    assert.equal(intentOf(waiting), undefined, JSON.stringify(waiting.details));
    assert.equal(waiting.status, "processing");
    assert.match(String(waiting.details.heldReason), /XRP hot wallet r\w+ does not exist yet/);
    assert.equal(h.submissions.length, 0);

    // Funded: the payout is signed, recorded and sent; the node loses it.
    h.fund(hotWallet, 100n * XRP);
    h.validateThrough(h.closedIndex + 1);
    h.loseNextSubmissions(1);
    for (let i = 0; i < 3 && !intentOf(await stored(p.kv, id)); i++) await step();
    const first = intentOf(await stored(p.kv, id))!;
    assert.ok(first, "recorded");
    const tx = decode(first.raw) as Record<string, unknown>;
    assert.deepEqual(first.expiry, { kind: "ledger", value: tx.LastLedgerSequence });
    assert.deepEqual(first.consumes, { kind: "nonce", account: hotWallet, nonce: tx.Sequence });
    assert.equal(tx.DestinationTag, 3141592, "the registered memo");
    assert.equal(tx.Amount, String(25n * XRP));
    assert.equal(tx.Destination, elsewhere);
    assert.deepEqual(h.submissions.map((s) => [s.hash, s.engineResult]), [[first.txHash, "tesSUCCESS"]]);

    // Ledgers go by: never in one; once a validated ledger passes its LastLedgerSequence it is dead, and re-signed.
    let dead: DeadIntent[] | undefined;
    for (let i = 0; i < 60 && !dead; i++) {
      h.closeLedgers(1);
      await step();
      const now = await stored(p.kv, id);
      if (now.details.deadIntents?.length) dead = now.details.deadIntents as DeadIntent[];
      else assert.ok(h.validatedIndex <= (first.expiry!.value) + 1, `still not dead at ${h.validatedIndex}`);
    }
    assert.ok(dead, "proven dead");
    assert.equal(dead.length, 1);
    assert.equal(dead[0].txHash, first.txHash);
    assert.equal(dead[0].proof.kind, "expired");
    for (let i = 0; i < 10 && (await stored(p.kv, id)).status !== "completed"; i++) {
      await step();
      h.closeLedgers(1);
    }
    const done = await stored(p.kv, id);
    assert.equal(done.status, "completed", JSON.stringify(done.details));
    assert.notEqual(done.transactionHash, first.txHash);
    assert.equal(h.ledgerOf(first.txHash), null, "the lost one never landed");
    assert.ok(h.ledgerOf(done.transactionHash!) !== null);
    assert.equal(
      h.account(hotWallet)?.sequence,
      Number(tx.Sequence) + 1,
      "the re-signed payout took the same Sequence",
    );
    assert.equal(h.account(elsewhere)?.balance, 25n * XRP, "paid exactly once");
  } finally {
    await p.close();
    await server.close();
  }
});
