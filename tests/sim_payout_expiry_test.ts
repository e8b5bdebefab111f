/**
 * A payout that expires before any block includes it (sim ledgers, real KV file, watcher and order steps driven by
 * hand): the sim's `stallPayouts` fault keeps it out of every block until its expiry (a height on sol and zec, a
 * ledger on xrp, an epoch on sui) drops it. The order actor then gets a proof of death (`expired`), goes back to
 * processing, signs a NEW payout, and that one lands: exactly one payout paid.
 */
import assert from "node:assert/strict";
import { type DeadIntent, intentOf } from "../actors/transition.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { HOT_WALLET_GENESIS, SIM_PAYOUT_EXPIRY } from "../chains/sim/ledger.ts";
import { payoutTxs, stored } from "./support/chain_facts.ts";
import { SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { handPipeline } from "./support/watch.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { SIM_UTXO_GENESIS_DEFAULT } from "../config/env.ts";

const OWNER = "0x" + "0e".repeat(20);

for (const chain of ["sol", "xrp", "sui", "zec"] as const) {
  Deno.test(`sim ${chain}: a payout stalled past its expiry is proven dead and re-sent exactly once`, async () => {
    const p = await handPipeline();
    try {
      const native = p.sim.ledger(chain);
      const step = (id: string) => stepNow(p, id);
      const { ids: [id], payout } = await simBurnOrders(p, chain, OWNER);

      await native.setFaults({ stallPayouts: 1 });
      assert.equal(await step(id), "moved"); // confirmed
      assert.equal(await step(id), "moved"); // payout signed, recorded, sent
      const burning = await stored(p.kv, id);
      assert.equal(burning.status, "burning");
      const first = intentOf(burning)!;
      const expiry = first.expiry!;
      assert.equal(expiry.kind, SIM_PAYOUT_EXPIRY[chain]!.kind, "the recorded intent carries its expiry");

      // Blocks go by; the stalled payout stays pending, then the first block past its expiry drops it.
      let dead: DeadIntent[] | undefined;
      for (let blocks = 0; blocks < 500 && !dead; blocks++) {
        await native.sealBlock();
        await step(id);
        const now = await stored(p.kv, id);
        if (now.status !== "burning") dead = now.details.deadIntents as DeadIntent[];
        else assert.equal((await payoutTxs(p.kv, chain, id))[0].status, "pending", "stalled, never included");
      }
      assert.ok(dead, "proven dead within 500 blocks");
      assert.equal(dead.length, 1);
      assert.equal(dead[0].txHash, first.txHash);
      assert.equal(dead[0].proof.kind, "expired");
      assert.ok(dead[0].proof.kind === "expired" && dead[0].proof.reached > expiry.value);
      assert.deepEqual(dead[0].proof.kind === "expired" && dead[0].proof.expiry, expiry);
      const back = await stored(p.kv, id);
      assert.equal(back.status, "processing");
      assert.equal(intentOf(back), undefined);

      // A new payout is signed and lands.
      assert.equal(await step(id), "moved");
      const second = intentOf(await stored(p.kv, id))!;
      assert.notEqual(second.txHash, first.txHash);
      for (let i = 0; i < 5 && (await stored(p.kv, id)).status !== "completed"; i++) {
        await native.sealBlock();
        await step(id);
      }
      const done = await stored(p.kv, id);
      assert.equal(done.status, "completed", JSON.stringify(done.details));
      assert.equal(done.transactionHash, second.txHash);

      // Exactly one payout paid: the ledger has two payouts for the order, the dead one dropped, one included.
      const txs = await payoutTxs(p.kv, chain, id);
      assert.deepEqual(
        txs.map((t) => [t.hash, t.status]).sort(),
        [[first.txHash, "dropped"], [second.txHash, "included"]].sort(),
      );
      assert.equal(await native.balance(SIM_DESTINATION[chain], "native"), payout);
      // zec pays from the treasury's genesis coins (UTXO mode): the fee leaves too.
      const spent = chain === "zec" ? payout + utxoFee(chain)(1, 2) : payout;
      const genesis = chain === "zec" ? SIM_UTXO_GENESIS_DEFAULT : HOT_WALLET_GENESIS;
      assert.equal(await native.balance(defaultSimOperatorAddress(chain), "native"), genesis - spent);
      // A late rebroadcast of the dead payout is refused by the chain, and changes nothing.
      await assert.rejects(() => p.sim.payer(chain).broadcast({ txHash: first.txHash, raw: first.raw }), /expiry/);
      assert.equal(await native.balance(SIM_DESTINATION[chain], "native"), payout);
    } finally {
      await p.close();
    }
  });
}
