/**
 * UTXO change-address rotation (docs/operations.md "Rotating a hot wallet", UTXO change): after `change rotate`, new
 * payouts and consolidations send their change to the next index of the change branch, and coins at every earlier
 * change address stay spendable treasury coins, each signed by the key its `derivationIndex` names.
 * - On litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core): the node accepts a payout from the
 *   rotated payer spending a coin at the old change address, and one from a payer rotated once more spending the coin
 *   at the second change address.
 * - On sim doge (hand-driven pipeline, verified before record): after a rotation a burn's payout records its change at
 *   the new address with its index, the change coin lands in the treasury with that index, the rotation is audited
 *   and alerted; a consolidation merges into the new address; reconciliation is ok.
 */
import assert from "node:assert/strict";
import { rotateChangeAddress } from "../actors/hot_wallet_rotation.ts";
import { runReconciliation } from "../actors/reconciliation.ts";
import { consolidate, treasuryTick } from "../actors/sweeper.ts";
import { CHAIN_SYMBOLS, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { defaultSimOperatorAddress, simHotWallet } from "../chains/sim/adapters.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { getAlert, listAlerts } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { readChangeAddressState } from "../kv/hot_wallets.ts";
import { coinStates } from "../kv/treasury.ts";
import { stored } from "./support/chain_facts.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { dogeOnLitecoind } from "./support/doge_regtest.ts";

const RUN = litecoindAvailable("tests/change_rotation_test.ts");
const DOGE = 100_000_000n;
const OWNER = "0x" + "6c".repeat(20);

Deno.test({
  name:
    "change rotation on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core): old and new change coins are signed by their own change keys and accepted",
  ignore: !RUN,
}, async () => {
  const node = await startLitecoind();
  try {
    const doge = dogeOnLitecoind(node, { confirmations: 1 });
    const base = doge.payer;
    const wallet = await node.call<string>("getnewaddress", ["", "legacy"]);
    // A payout before the rotation: its change at change index 0.
    const coin = await doge.depositCoin(3, 5n * DOGE);
    const first = await base.preparePayout({ orderId: "c1", to: wallet, amount: DOGE, memo: null, coins: [coin] });
    assert.equal(first.change?.address, base.changeAddress);
    assert.equal(first.change?.derivationIndex, undefined, "index 0: recorded as before rotations");
    await base.broadcast(first);
    await node.mine(1);
    const oldChange = {
      txHash: first.txHash,
      index: first.change!.index,
      amount: first.change!.amount,
      address: first.change!.address,
      derivationIndex: 0,
      height: await node.call<number>("getblockcount", []),
    };

    // Rotated: the new payer spends the old change coin (its key, index 0) and sends change to index 1.
    const rotated = base.atChangeIndex!(1);
    assert.notEqual(rotated.changeAddress, base.changeAddress);
    const second = await rotated.preparePayout({
      orderId: "c2",
      to: wallet,
      amount: DOGE,
      memo: null,
      coins: [oldChange],
    });
    assert.deepEqual(
      [second.change?.address, second.change?.derivationIndex],
      [rotated.changeAddress, 1],
    );
    const accepted = await node.call<{ allowed: boolean }[]>("testmempoolaccept", [[second.raw]]);
    assert.equal(accepted[0].allowed, true, JSON.stringify(accepted));
    await rotated.broadcast(second);
    await node.mine(1);

    // Rotated again: the coin at change index 1 is signed by change key 1.
    const newChange = {
      txHash: second.txHash,
      index: second.change!.index,
      amount: second.change!.amount,
      address: second.change!.address,
      derivationIndex: 1,
      height: await node.call<number>("getblockcount", []),
    };
    const third = await base.atChangeIndex!(2).preparePayout({
      orderId: "c3",
      to: wallet,
      amount: DOGE,
      memo: null,
      coins: [newChange],
    });
    const accepted3 = await node.call<{ allowed: boolean }[]>("testmempoolaccept", [[third.raw]]);
    assert.equal(accepted3[0].allowed, true, JSON.stringify(accepted3));
    // A change coin claimed under another index is refused before signing: never a coin we cannot prove ours.
    await assert.rejects(
      rotated.preparePayout({
        orderId: "c4",
        to: wallet,
        amount: DOGE,
        memo: null,
        coins: [{ ...newChange, derivationIndex: 2 }],
      }),
      /refusing to sign a coin we cannot prove ours/,
    );
  } finally {
    await node.stop();
  }
});

Deno.test("change rotation on sim doge: the next payout's change goes to the new change address with its index, a treasury coin; audited, alerted, reconciliation ok", async () => {
  const all = new Set([...EVM_CHAINS, ...NATIVE_CHAINS]);
  const p = await handPipeline({
    chains: (kv, sim) =>
      verifyingChains(sim, {
        explainer: explainerOf({ simulated: all, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set() }),
        evm: evmFactsOf({ simulated: all, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      }),
  });
  try {
    const doge = p.sim.ledger("doge");
    const old = defaultSimOperatorAddress("doge");
    const next = simHotWallet(old, 1);
    const rotated = await rotateChangeAddress(p.ctx, "doge", "ops@test", p.ctx.now());
    assert.deepEqual([rotated.from, rotated.to], [{ index: 0, address: old }, { index: 1, address: next }]);
    assert.equal((await listAudit(p.kv)).find((e) => e.id === rotated.auditId)?.action, "change.rotate");
    assert.match((await getAlert(p.kv, "hot_wallet_rotation", "doge"))!.message, /rotated the doge change address/);
    assert.equal((await readChangeAddressState(p.kv, "doge")).state?.current.index, 1);

    // A burn paid from the treasury's genesis coins (at the old change address, index 0): change to the new one.
    const { ids: [burn] } = await simBurnOrders(p, "doge", OWNER);
    for (let i = 0; i < 20 && (await stored(p.kv, burn)).status !== "completed"; i++) {
      await stepNow(p, burn);
      await doge.sealBlock();
    }
    const paid = await stored(p.kv, burn);
    assert.equal(paid.status, "completed", JSON.stringify(paid.details));
    assert.deepEqual(
      [paid.details.intent?.change?.address, paid.details.intent?.change?.derivationIndex],
      [next, 1],
    );
    const changeCoin = (await coinStates(p.kv, "doge")).find((s) =>
      s.coin.outpoint.txHash === paid.details.intent!.txHash
    );
    assert.ok(changeCoin, "the change is a treasury coin");
    assert.deepEqual([changeCoin.coin.address, changeCoin.coin.derivationIndex], [next, 1]);
    // A consolidation merges into the new change address too, its output a coin of change key 1.
    const merged = await consolidate(p.kv, p.ctx.chains, "doge", p.ctx.settings.confirmations("doge"), {
      maxInputs: 3,
      minInputs: 2,
      by: "ops",
      now: p.ctx.now(),
      fee: p.ctx.settings.utxoFee("doge"),
    });
    assert.equal(merged.kind, "started", JSON.stringify(merged));
    if (merged.kind === "started") {
      assert.deepEqual([merged.consolidation.output.address, merged.consolidation.output.derivationIndex], [next, 1]);
    }
    const ticks = [];
    for (let i = 0; i < 10 && ticks.at(-1) !== "completed"; i++) {
      await doge.sealBlock();
      ticks.push(await treasuryTick(p.ctx, "doge", "test", 60_000));
    }
    assert.equal(ticks.at(-1), "completed", ticks.join(", "));
    assert.deepEqual(await listAlerts(p.kv, "transaction_mismatch"), []);
    const report = await runReconciliation({
      kv: p.kv,
      chains: p.ctx.chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: CHAIN_SYMBOLS,
      now: () => p.ctx.now(),
    });
    assert.ok(report.ok, JSON.stringify(report.mismatches));
  } finally {
    await p.close();
  }
});
