/**
 * The watcher after a reorg (sim ledgers, real KV file, watcher and order steps driven by hand): it walks back
 * through the block hashes it remembers to the common ancestor and rescans from there, however deep within the
 * window (doge needs 40 confirmations); a reorg deeper than the window stops the chain with an operator alert and
 * records nothing.
 */
import assert from "node:assert/strict";
import { stepOrder } from "../actors/order_actor.ts";
import { watchOnce } from "../actors/watcher.ts";
import { NATIVE, type NativeChain, REORG_WINDOW_BLOCKS } from "../chains/catalog.ts";
import type { SimLedger } from "../chains/sim/ledger.ts";
import { getAlert } from "../kv/alerts.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { type Order } from "../model/order.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { countKeys, handPipeline, watchToTip } from "./support/watch.ts";
import { runTask } from "./support/cli.ts";
import { listAudit } from "../kv/audit.ts";

const OWNER = "0x" + "ab".repeat(20);

async function depositAddress(kv: Deno.Kv, chain: NativeChain): Promise<string> {
  await ensureUserWallet(kv, OWNER, "test-partner");
  const res = await createMintWallet(kv, OWNER, chain, "base", (c, i) => `${c}-deposit-${i}`);
  assert.ok(res.ok);
  return res.wallet.address;
}

async function sealTo(ledger: SimLedger, height: number) {
  while ((await ledger.head()).number < height) await ledger.sealBlock();
}

async function orders(kv: Deno.Kv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const e of kv.list<Order>({ prefix: ["order"] })) out.push(e.value);
  return out;
}

const sourceOf = (o: Order) => o.details.source;

Deno.test("reorg of 40 blocks changing doge deposits 35-40 deep: exactly the canonical deposits are recorded", async () => {
  const p = await handPipeline();
  try {
    const doge = NATIVE.doge.finality;
    assert.ok(doge.kind === "depth" && REORG_WINDOW_BLOCKS > doge.confirmations, "the window exceeds doge's depth");
    const ledger = p.sim.ledger("doge");
    const address = await depositAddress(p.kv, "doge");
    const min = NATIVE.doge.minimumDeposit;
    await sealTo(ledger, 20);
    // A deposit that the reorg will take away, 38 blocks under the tip when it happens.
    const gone = await ledger.submitNativeTransfer({ from: "doge-outsider", to: address, amount: min });
    await ledger.sealBlock(); // block 21
    await sealTo(ledger, 58);
    assert.equal(await watchToTip(p.ctx, "doge"), 1);

    // The competing branch: 40 new blocks, whose first six (35 to 40 deep) hold six other deposits.
    const fresh: { txHash: string }[] = [];
    for (let i = 0; i < 6; i++) {
      fresh.push(await ledger.submitNativeTransfer({ from: `doge-payer-${i}`, to: address, amount: min + BigInt(i) }));
    }
    const head = await ledger.reorg(40, { pendingPerBlock: 1 });
    assert.equal(head.number, 58);
    const depths = [];
    for (const f of fresh) {
      const s = await ledger.txStatus(f.txHash);
      depths.push(s.state === "included" ? s.confirmations : s.state);
    }
    assert.deepEqual(depths.sort(), [35, 36, 37, 38, 39, 40], "one new deposit per block, 35 to 40 deep");
    assert.deepEqual(await ledger.txStatus(gone.txHash), { state: "unknown" });

    assert.equal(await watchToTip(p.ctx, "doge"), 6);
    assert.ok(p.logs.some((l) => /block 58 changed \(reorg\); rescanning from 18/.test(l)), p.logs.join("\n"));
    const all = await orders(p.kv);
    const canonical = all.filter((o) => fresh.some((f) => f.txHash === sourceOf(o).txHash));
    assert.equal(canonical.length, 6, "one order per deposit of the canonical chain");
    assert.deepEqual(
      canonical.map((o) => o.amount).sort(),
      fresh.map((_, i) => (min + BigInt(i)).toString()).sort(),
    );
    // The only other order is the reorganised-out deposit: it never confirms and times out.
    const stale = all.filter((o) => !canonical.includes(o));
    assert.deepEqual(stale.map((o) => sourceOf(o).txHash), [gone.txHash]);
    assert.equal(await stepOrder(p.ctx, stale[0].id), "waiting");
    p.advance(601_000);
    assert.equal(await stepOrder(p.ctx, stale[0].id), "moved");
    const timedOut = (await orders(p.kv)).find((o) => o.id === stale[0].id)!;
    assert.equal(timedOut.status, "failed");
    assert.equal(timedOut.errorMessage, "Blockchain confirmation timeout");

    // A rescan of the same blocks adds nothing.
    assert.equal(await watchToTip(p.ctx, "doge"), 0);
  } finally {
    await p.close();
  }
});

Deno.test("reorg deeper than the window: the chain halts with a deep_reorg alert per tick, records nothing, and resumes where an operator says", async () => {
  const p = await handPipeline();
  try {
    const ledger = p.sim.ledger("sol");
    const address = await depositAddress(p.kv, "sol");
    const min = NATIVE.sol.minimumDeposit;
    await sealTo(ledger, 100);
    assert.equal(await watchToTip(p.ctx, "sol"), 0);
    const cursor = (await p.kv.get(cursorKey("sol"))).value;

    // Deposits on the new branch: one 90 blocks deep (below the window), one near the tip.
    await ledger.submitNativeTransfer({ from: "sol-payer-deep", to: address, amount: min });
    const depth = REORG_WINDOW_BLOCKS + 10;
    await ledger.reorg(depth, { pendingPerBlock: 1 });
    await ledger.submitNativeTransfer({ from: "sol-payer-new", to: address, amount: min });
    await ledger.sealBlock();

    for (let tick = 1; tick <= 3; tick++) {
      const res = await watchOnce(p.ctx, "sol", "test-watcher", 60_000);
      assert.deepEqual(res, { scannedTo: null, recorded: 0, halted: true });
      const alert = await getAlert(p.kv, "deep_reorg", "sol");
      assert.ok(alert, "an operator alert");
      assert.equal(alert.count, tick, "counted on every tick it is still stuck");
      assert.equal(alert.chain, "sol");
      assert.match(alert.message, new RegExp(`deeper than ${REORG_WINDOW_BLOCKS} blocks`));
    }
    assert.deepEqual((await p.kv.get(cursorKey("sol"))).value, cursor, "the cursor did not move");
    assert.equal(await countKeys(p.kv, ["order"]), 0, "nothing recorded");
    assert.equal(await countKeys(p.kv, ["transfer_seen"]), 0);
    assert.ok(p.logs.some((l) => /deeper than/.test(l)));

    // The operator checks the chain and resumes from a block below the fork (the CLI, as a separate process).
    const fork = 100 - depth;
    const resumed = await runTask("admin", { KV_PATH: p.kvPath }, [
      "watch",
      "resume",
      "sol",
      "--from",
      String(fork - 5),
      "--by",
      "ops-on-call",
    ]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await watchOnce(p.ctx, "sol", "test-watcher", 60_000), { scannedTo: fork - 5, recorded: 0 });
    assert.equal(await getAlert(p.kv, "deep_reorg", "sol"), null, "the alert is cleared");
    assert.equal(await watchToTip(p.ctx, "sol"), 2, "both deposits of the new branch, the deep one included");
    const audit = await listAudit(p.kv);
    assert.deepEqual(audit.map((a) => [a.action, a.subject, a.by]), [["watch.resume", "sol", "ops-on-call"]]);
    // Done once: the instruction is consumed, and a rescan records nothing twice.
    assert.equal(await countKeys(p.kv, ["watch_resume"]), 0);
    assert.equal(await watchToTip(p.ctx, "sol"), 0);
  } finally {
    await p.close();
  }
});
