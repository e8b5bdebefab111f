/**
 * UTXO deposits through the real pipeline (sim doge/zec ledgers in UTXO mode, real KV file, watcher and order steps
 * driven by hand): a coinbase output paying us is held, never credited; a deposit's sender comes from `senderOf`
 * (scans leave `from` empty, as a live UTXO reader does), asked only for our deposits, and a failure of it stops the
 * cursor before the block instead of losing the deposit; a deposit reorganised out before its confirmations never
 * mints and its order says why; a reorg deeper than the required confirmations raises `reorg_past_finality`, holds
 * the confirmed orders it touched that have not moved value and the treasury coins confirmed in the replaced blocks,
 * until an operator releases them (the CLI, in its own process).
 */
import assert from "node:assert/strict";
import { stepOrder } from "../actors/order_actor.ts";
import { COINBASE_SENDER, UNKNOWN_SENDER } from "../actors/watcher.ts";
import { type ChainReader, type Chains, TransientChainError } from "../chains/adapter.ts";
import { NATIVE, type UtxoChain } from "../chains/catalog.ts";
import type { SimLedger } from "../chains/sim/ledger.ts";
import { getAlert, listAlerts } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { cursorKey, listDust, listHeld, listOrderHolds } from "../kv/pipeline.ts";
import { coinKey, readCoin, spendableCoins } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, stepNow } from "./support/burns.ts";
import { stored } from "./support/chain_facts.ts";
import { runTask } from "./support/cli.ts";
import { type HandPipeline, handPipeline, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "0e".repeat(20);

async function depositAddress(kv: Deno.Kv, chain: UtxoChain, n = 0): Promise<string> {
  await ensureUserWallet(kv, OWNER, "test-partner");
  const res = await createMintWallet(kv, OWNER, chain, "base", (c, i) => `sim-${c}-deposit-${i}-${n}`);
  assert.ok(res.ok);
  return res.wallet.address;
}

async function seal(ledger: SimLedger, blocks: number) {
  for (let i = 0; i < blocks; i++) await ledger.sealBlock();
}

for (const chain of ["doge", "zec"] as const) {
  Deno.test(`${chain}: a coinbase output paying our deposit address is held for an operator, never credited`, async () => {
    const p = await handPipeline({ utxoGenesis: 0n });
    try {
      const address = await depositAddress(p.kv, chain);
      const ledger = p.sim.ledger(chain);
      const { txHash } = await ledger.mineCoinbase({ to: address, amount: 50n * NATIVE[chain].minimumDeposit });
      // Below the dust limit and still held: only miners make coinbase outputs, so the dust rule is not for them.
      const small = await ledger.mineCoinbase({ to: address, amount: NATIVE[chain].dustDeposit - 1n });
      await seal(ledger, NATIVE[chain].simConfirmations + 2);
      assert.equal(await watchToTip(p.ctx, chain), 2, "one record each");
      assert.deepEqual(await allOrders(p.kv), [], "no order");
      assert.deepEqual(await listDust(p.kv), [], "no dust");
      const held = (await listHeld(p.kv)).sort((a, b) => Number(BigInt(b.amount) - BigInt(a.amount)));
      assert.deepEqual(held.map((h) => h.txHash), [txHash, small.txHash]);
      assert.equal(held[0].txHash, txHash);
      assert.equal(held[0].to, address);
      assert.equal(held[0].from, COINBASE_SENDER);
      assert.match(held[0].reason, /coinbase output/);
      assert.match(held[0].reason, /maturity/);
      if (chain === "zec") assert.match(held[0].reason, /only be spent to shielded outputs/);
      assert.equal(await readCoin(p.kv, chain, { txHash, index: 0 }), null, "no treasury coin");
      assert.deepEqual(await spendableCoins(p.kv, chain), []);
      assert.equal(await watchToTip(p.ctx, chain), 0, "a rescan records nothing twice");
    } finally {
      await p.close();
    }
  });
}

/** The sim chains with a doge reader whose `senderOf` is counted and fails while `failing` is set. */
function countingSenders(state: { calls: string[]; failing: boolean }) {
  return (_kv: Deno.Kv, sim: Chains): Chains => ({
    ...sim,
    reader(chain) {
      const inner = sim.reader(chain);
      if (chain !== "doge") return inner;
      return {
        ...inner,
        senderOf: async (txHash: string) => {
          state.calls.push(txHash);
          if (state.failing) throw new TransientChainError("node timed out");
          return await inner.senderOf!(txHash);
        },
      } satisfies ChainReader;
    },
  });
}

Deno.test("doge: the sender of a deposit comes from senderOf, asked only for our deposits; a failure of it loses nothing", async () => {
  const state = { calls: [] as string[], failing: true };
  const p = await handPipeline({ chains: countingSenders(state) });
  try {
    const address = await depositAddress(p.kv, "doge");
    const ledger = p.sim.ledger("doge");
    const min = NATIVE.doge.minimumDeposit;
    await seal(ledger, 2);
    // A block with our deposit among outsiders' transfers.
    for (let i = 0; i < 5; i++) {
      await ledger.submitNativeTransfer({ from: `other-${i}`, to: `someone-${i}`, amount: min });
    }
    const ours = await ledger.submitNativeTransfer({ from: "doge-sender-alice", to: address, amount: min });
    const block = (await ledger.sealBlock()).number;
    await seal(ledger, 2);
    const scanned = await p.ctx.chains.reader("doge").scan(block, block);
    assert.ok(scanned[0].transfers.length >= 6 && scanned[0].transfers.every((t) => t.from === ""), "like a live scan");

    // senderOf fails: the cursor stops before the deposit's block, nothing is recorded or lost.
    const first = await import("../actors/watcher.ts").then((w) => w.watchOnce(p.ctx, "doge", "test-watcher", 60_000));
    assert.equal(first.scannedTo, block - 1);
    assert.equal(first.recorded, 0);
    assert.deepEqual((await p.kv.get<{ number: number }>(cursorKey("doge"))).value?.number, block - 1);
    assert.deepEqual(await allOrders(p.kv), []);
    assert.ok(p.logs.some((l) => /block \d+ not recorded yet \(node timed out\)/.test(l)), p.logs.join("\n"));

    state.failing = false;
    state.calls.length = 0;
    assert.equal(await watchToTip(p.ctx, "doge"), 1);
    assert.deepEqual(state.calls, [ours.txHash], "asked once, for our deposit only");
    const [order] = await allOrders(p.kv);
    assert.equal(order.sourceWallet, "doge-sender-alice");
  } finally {
    await p.close();
  }
});

Deno.test("doge: a deposit whose sender cannot be told gets a clear placeholder", async () => {
  const p = await handPipeline({
    chains: (_kv, sim) => ({
      ...sim,
      reader: (chain) => ({ ...sim.reader(chain), senderOf: () => Promise.resolve(null) }),
    }),
  });
  try {
    const address = await depositAddress(p.kv, "doge");
    const ledger = p.sim.ledger("doge");
    await ledger.submitNativeTransfer({ from: "x", to: address, amount: NATIVE.doge.minimumDeposit });
    await seal(ledger, 3);
    assert.equal(await watchToTip(p.ctx, "doge"), 1);
    assert.equal((await allOrders(p.kv))[0].sourceWallet, UNKNOWN_SENDER);
  } finally {
    await p.close();
  }
});

Deno.test("doge: a deposit reorganised out before its confirmations never mints, and its order says it left the chain", async () => {
  const p = await handPipeline();
  try {
    const address = await depositAddress(p.kv, "doge");
    const ledger = p.sim.ledger("doge");
    await seal(ledger, 3);
    const { txHash } = await ledger.submitNativeTransfer({
      from: "x",
      to: address,
      amount: NATIVE.doge.minimumDeposit,
    });
    const block = (await ledger.sealBlock()).number;
    assert.equal(await watchToTip(p.ctx, "doge"), 1);
    const [order] = await allOrders(p.kv);
    assert.equal(await stepOrder(p.ctx, order.id), "waiting", "one confirmation of three");
    assert.equal((await stored(p.kv, order.id)).details.heldReason, undefined);

    await ledger.reorg(1); // the block leaves the chain, its transaction with it
    await seal(ledger, 5);
    assert.equal(await watchToTip(p.ctx, "doge"), 0);
    p.advance(1_000);
    assert.equal(await stepOrder(p.ctx, order.id), "waiting");
    const waiting = await stored(p.kv, order.id);
    assert.equal(waiting.status, "pending");
    assert.match(
      waiting.details.heldReason ?? "",
      new RegExp(`reorg: transaction ${txHash} was seen in block ${block}`),
    );
    assert.match(waiting.details.heldReason ?? "", /left the canonical chain/);

    p.advance(601_000);
    assert.equal(await stepOrder(p.ctx, order.id), "moved");
    const failed = await stored(p.kv, order.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.errorMessage, "Blockchain confirmation timeout");
    assert.match(failed.details.heldReason ?? "", /left the canonical chain/, "the failure says why");
    assert.equal(await p.sim.ledger("base").mintedBy(order.details.depositId), null, "never minted");
    assert.equal(await readCoin(p.kv, "doge", { txHash, index: 0 }), null, "never a treasury coin");
  } finally {
    await p.close();
  }
});

/** A doge deposit to `address` confirmed (its order processing, its coin in the treasury); returns its order. */
async function confirmedDeposit(p: HandPipeline, address: string, from: string): Promise<Order> {
  const ledger = p.sim.ledger("doge");
  const before = new Set((await allOrders(p.kv)).map((o) => o.id));
  await ledger.submitNativeTransfer({ from, to: address, amount: NATIVE.doge.minimumDeposit * 2n });
  await seal(ledger, NATIVE.doge.simConfirmations);
  assert.equal(await watchToTip(p.ctx, "doge"), 1);
  const [order] = (await allOrders(p.kv)).filter((o) => !before.has(o.id));
  assert.equal(await stepNow(p, order.id), "moved");
  assert.equal((await stored(p.kv, order.id)).status, "processing");
  return order;
}

Deno.test("doge: a reorg deeper than the required confirmations raises reorg_past_finality and holds what it touched", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    const ledger = p.sim.ledger("doge");
    const address = await depositAddress(p.kv, "doge");
    await seal(ledger, 2);
    // An old deposit, below the fork: untouched. Then one that minted, and one confirmed but not yet minted.
    const old = await confirmedDeposit(p, address, "old-sender");
    await seal(ledger, 5);
    const fork = (await ledger.head()).number;
    const minted = await confirmedDeposit(p, address, "minted-sender");
    assert.equal(await stepNow(p, minted.id), "moved");
    assert.equal((await stored(p.kv, minted.id)).status, "minting");
    const unmoved = await confirmedDeposit(p, address, "unmoved-sender");
    const pendingOne = await ledger.submitNativeTransfer({
      from: "late",
      to: address,
      amount: NATIVE.doge.minimumDeposit,
    });
    await ledger.sealBlock();
    assert.equal(await watchToTip(p.ctx, "doge"), 1);
    const depth = (await ledger.head()).number - fork;
    assert.ok(depth > NATIVE.doge.simConfirmations, `a reorg of ${depth} is past the sim's finality`);

    await ledger.reorg(depth); // back to the fork: the last three deposits leave the chain
    await ledger.sealBlock();
    assert.equal(await watchToTip(p.ctx, "doge"), 0);

    const [alert] = await listAlerts(p.kv, "reorg_past_finality");
    assert.ok(alert, "an operator alert");
    assert.equal(alert.chain, "doge");
    assert.match(alert.message, new RegExp(`replaced doge blocks ${fork + 1} to`));
    assert.deepEqual(
      alert.touched?.orders.map((o) => [o.id, o.status, o.held]).sort(),
      [[minted.id, "minting", false], [unmoved.id, "processing", true]].sort(),
      "confirmed orders in the replaced blocks; the pending one and the old one are not",
    );
    const coinOf = (o: Order) => `${o.details.source.txHash}:${o.details.source.index}`;
    assert.deepEqual(alert.touched?.coins.sort(), [coinOf(minted), coinOf(unmoved)].sort());
    assert.ok(!alert.touched?.orders.some((o) => o.id === old.id));
    assert.ok(
      !(await allOrders(p.kv)).some((o) => o.details.source.txHash === pendingOne.txHash && o.status !== "pending"),
    );

    // The held order does not mint; the held coins are not spendable, not deleted.
    assert.equal(await stepNow(p, unmoved.id), "waiting");
    const held = await stored(p.kv, unmoved.id);
    assert.equal(held.status, "processing");
    assert.equal(held.details.intent, undefined, "nothing signed");
    assert.match(held.details.heldReason ?? "", /a reorg on doge replaced blocks/);
    assert.deepEqual((await spendableCoins(p.kv, "doge")).map((c) => c.outpoint.txHash), [old.details.source.txHash]);
    assert.ok((await p.kv.get(coinKey("doge", unmoved.details.source))).value, "held, not deleted");

    // Seen again, the same reorg changes nothing: one alert, holds set once.
    assert.equal((await getAlert(p.kv, "reorg_past_finality", alert.subject))?.count, 1);

    // The operator: cancels nothing here, releases the order and forgets a coin the node does not have (CLI).
    const env = { KV_PATH: p.kvPath };
    const release = await runTask("admin", env, ["order", "release", unmoved.id, "--by", "ops"]);
    assert.equal(release.code, 0, release.stderr);
    assert.deepEqual(await listOrderHolds(p.kv), []);
    const forget = await runTask("admin", env, [
      "utxo",
      "forget-coin",
      "--chain",
      "doge",
      coinOf(unmoved),
      "--by",
      "ops",
    ]);
    assert.equal(forget.code, 0, forget.stderr);
    const again = await runTask("admin", env, ["utxo", "forget-coin", "--chain", "doge", coinOf(unmoved)]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /is not held/);
    const releaseCoin = await runTask("admin", env, ["utxo", "release-coin", "--chain", "doge", coinOf(minted)]);
    assert.equal(releaseCoin.code, 0, releaseCoin.stderr);
    assert.equal(await readCoin(p.kv, "doge", unmoved.details.source), null, "forgotten");
    assert.equal((await spendableCoins(p.kv, "doge")).length, 2, "the old coin and the released one");
    assert.deepEqual(
      (await listAudit(p.kv)).map((a) => [a.action, a.by]),
      [["order.release", "ops"], ["utxo.forget-coin", "ops"], ["utxo.release-coin", Deno.env.get("USER") || "unknown"]]
        .map(([a, b]) => [a, b]),
    );
  } finally {
    await p.close();
  }
});
