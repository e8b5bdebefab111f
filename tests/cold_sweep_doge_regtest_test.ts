/**
 * A UTXO cold sweep (actors/cold_sweep.ts) against a real node: litecoind regtest (Bitcoin Core family, standing in
 * for Dogecoin Core), the doge adapter signing with our keys and verified before record as the registry verifies it.
 * Treasury coins above the band go to one output at the cold address (an address of the node's own wallet, watch-only
 * for us), change back to our change address, exactly once although the process dies between record and broadcast;
 * what reconciliation counts cold (actors/cold_balance.ts, `gettxout`) follows the output until the cold wallet spends
 * it.
 */
import assert from "node:assert/strict";
import { readColdHoldings } from "../actors/cold_balance.ts";
import { coldSweepOnce, type ColdSweepStep } from "../actors/cold_sweep.ts";
import type { PipelineContext } from "../actors/context.ts";
import { readHotFunds } from "../actors/hot_band.ts";
import type { Chains } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { listColdSweeps, openColdSweep } from "../kv/cold_sweeps.ts";
import { addCoins, coinTotals } from "../kv/treasury.ts";
import { DOGE_REGTEST, dogeOnLitecoind } from "./support/doge_regtest.ts";
import { coinsText, litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const RUN = litecoindAvailable("tests/cold_sweep_doge_regtest_test.ts");
const DOGE = 100_000_000n;

Deno.test({
  name: "cold sweep of a doge treasury on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core): " +
    "one output to cold, change back, once across a crash between record and broadcast; cold counted while unspent",
  ignore: !RUN,
}, async () => {
  const node = await startLitecoind();
  const doge = dogeOnLitecoind(node, { confirmations: 1 });
  const p = await handPipeline({
    utxoGenesis: 0n,
    chains: (kv, sim) => {
      const all = new Set([...EVM_CHAINS, ...NATIVE_CHAINS].filter((c) => c !== "doge"));
      const chains: Chains = {
        ...sim,
        reader: (c) => c === "doge" ? doge.reader : sim.reader(c),
        payer: ((c: Parameters<Chains["payer"]>[0]) => c === "doge" ? doge.payer : sim.payer(c)) as Chains["payer"],
      };
      return verifyingChains(chains, {
        explainer: explainerOf({
          simulated: all,
          liveEvm: new Set(),
          liveUtxo: new Map([["doge", { network: DOGE_REGTEST, fee: utxoFee("doge") }]]),
          liveAccount: new Set(),
        }),
        evm: evmFactsOf({ simulated: all, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      });
    },
  });
  const band = { floor: 2n * DOGE, target: 5n * DOGE, ceiling: 10n * DOGE };
  const ctx: PipelineContext = {
    ...p.ctx,
    settings: { ...p.ctx.settings, hotBand: (c) => c === "doge" ? band : null, confirmations: () => 1 },
  };
  try {
    // Three 10 DOGE deposits to our addresses, confirmed: the treasury holds 30 DOGE.
    for (const i of [1, 2, 3]) {
      const coin = await doge.depositCoin(i, 10n * DOGE);
      await addCoins(p.kv, [{
        chain: "doge",
        outpoint: { txHash: coin.txHash, index: coin.index },
        address: coin.address,
        derivationIndex: coin.derivationIndex,
        amount: coin.amount,
        height: coin.height,
        coinbase: false,
      }]);
    }
    assert.equal((await readHotFunds(p.kv, ctx.chains, "doge")).hot, 30n * DOGE);
    const cold = await node.call<string>("getnewaddress", ["", "legacy"]);
    await p.kv.set(coldAddressKey("doge"), {
      current: { address: cold, since: new Date(0).toISOString() },
      pending: null,
    });

    // Recorded, then the process dies before broadcasting: the node has never seen it.
    ctx.faultPoint = (point) => {
      if (point === "cold-sweep-after-record") throw new Error("crash after recording the cold sweep");
    };
    assert.equal(await coldSweepOnce(ctx, "doge", "test-cold", 60_000), "waiting");
    ctx.faultPoint = undefined;
    const open = (await openColdSweep(p.kv, "doge"))!;
    assert.equal(open.amount, `${25n * DOGE}`);
    assert.equal(open.destination, cold);
    assert.ok(open.change && open.fee, "change back to us, its fee recorded");
    assert.equal((await doge.reader.txStatus(open.txHash)).state, "unknown");

    // The next step sends the same bytes; mined, it completes once.
    assert.equal(await coldSweepOnce(ctx, "doge", "test-cold", 60_000), "resent");
    assert.equal((await doge.reader.txStatus(open.txHash)).state, "pending");
    const steps: ColdSweepStep[] = [];
    for (let i = 0; i < 5 && (await openColdSweep(p.kv, "doge")); i++) {
      await node.mine(1);
      steps.push(await coldSweepOnce(ctx, "doge", "test-cold", 60_000));
    }
    assert.equal(steps.at(-1), "completed");
    const [done] = await listColdSweeps(p.kv, "doge");
    assert.deepEqual(done.coldOutputs?.map((o) => o.amount), [`${25n * DOGE}`]);
    const outpoint = { txHash: done.coldOutputs![0].txHash, index: done.coldOutputs![0].index };
    const txOut = await node.call<{ value: number; scriptPubKey: { addresses?: string[]; address?: string } }>(
      "gettxout",
      [outpoint.txHash, outpoint.index, false],
    );
    assert.ok(txOut, "the cold output is unspent on the node");
    assert.equal(coinsText(25n * DOGE), txOut.value.toFixed(8));
    const totals = await coinTotals(p.kv, "doge");
    assert.equal(totals.confirmed, 5n * DOGE - BigInt(done.fee!), "the change is a treasury coin: target less fee");
    assert.equal(totals.locked, 0n);
    assert.equal(await coldSweepOnce(ctx, "doge", "test-cold", 60_000), "idle", "within the band");

    // Reconciliation's cold part: the output while unspent; nothing once the cold wallet spent it.
    assert.equal((await readColdHoldings(p.kv, ctx.chains, "doge", ctx.now())).cold, 25n * DOGE);
    // The cold wallet (the node's) spends exactly that output.
    const raw = await node.call<string>("createrawtransaction", [
      [{ txid: outpoint.txHash, vout: outpoint.index }],
      { [node.minerAddress]: coinsText(25n * DOGE - 100_000n) },
    ]);
    const signed = await node.call<{ hex: string; complete: boolean }>("signrawtransactionwithwallet", [raw]);
    assert.ok(signed.complete);
    await node.call("sendrawtransaction", [signed.hex]);
    await node.mine(1);
    assert.equal(
      await node.call("gettxout", [outpoint.txHash, outpoint.index, false]),
      null,
      "spent by the cold wallet",
    );
    assert.equal((await readColdHoldings(p.kv, ctx.chains, "doge", ctx.now())).cold, 0n);
  } finally {
    await p.close();
    await node.stop();
  }
});
