/**
 * A sim UTXO payout whose inputs come from more deposit addresses than one KV getMany may read (10): accepted, every
 * input spent once. (Found by the two-process chaos test once lazy sim blocks left more small coins to select.)
 */
import assert from "node:assert/strict";
import { simChains } from "../chains/sim/adapters.ts";
import { seededRandom } from "./support/chaos.ts";
import { withKv } from "./support/kv.ts";

Deno.test("sim doge: a payout spending coins of 12 deposit addresses is accepted and spends each once", async () => {
  await withKv("sim_wide_", async (kv) => {
    const sim = simChains(kv, { random: seededRandom(3), operatorAddress: () => "hot-doge" });
    const ledger = sim.ledger("doge");
    const coins = [];
    for (let i = 0; i < 12; i++) {
      const d = await ledger.submitNativeTransfer({ from: "outsider", to: `deposit-${i}`, amount: 100_000_000n });
      coins.push({ txHash: d.txHash, index: 0, amount: 100_000_000n, address: `deposit-${i}`, derivationIndex: i });
    }
    const head = await ledger.sealBlock();
    const tx = await sim.payer("doge").preparePayout({
      orderId: "wide",
      to: "dest",
      amount: 1_100_000_000n,
      memo: null,
      coins: coins.map((c) => ({ ...c, height: head.number })),
    });
    await sim.payer("doge").broadcast(tx);
    await ledger.sealBlock();
    for (const c of coins) assert.equal(await ledger.unspentOutput(c), null, `${c.address}'s coin is spent`);
    assert.equal(await ledger.balance("dest", "native"), 1_100_000_000n);
  });
});
