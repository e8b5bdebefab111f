/**
 * Reconciliation of a UTXO chain's payout fees (docs/reconciliation.md), on the sim ledgers with a real KV file and no
 * genesis coins (only deposits fund the treasury, as on a live chain): a doge deposit is minted as uDOGE, part of it is
 * burned and paid out from the deposit's coin, and the fee that payout paid leaves the coins we control. The report
 * counts it as paid (recorded with the payout when it was signed) and balances to the koinu; a payout whose recorded
 * fee does not match its coins less its outputs is refused before it is recorded (chains/effects.ts).
 */
import assert from "node:assert/strict";
import { runReconciliation } from "../actors/reconciliation.ts";
import { differences } from "../chains/effects.ts";
import { intentOf } from "../actors/transition.ts";
import { NATIVE } from "../chains/catalog.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { stored } from "./support/chain_facts.ts";
import { allOrders, SIM_DESTINATION, stepNow } from "./support/burns.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "0e".repeat(20);
const DOGE = 100_000_000n;

Deno.test("doge on the sim ledger, deposits only: reconciliation counts the payout's fee as paid and balances to the koinu", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    const doge = p.sim.ledger("doge");
    const base = p.sim.ledger("base");
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const created = await createMintWallet(p.kv, OWNER, "doge", "base", (_c, i) => `sim-doge-deposit-${i}`);
    assert.ok(created.ok);
    await doge.submitNativeTransfer({ from: "outsider", to: created.wallet.address, amount: 100n * DOGE });
    for (let i = 0; i < NATIVE.doge.simConfirmations; i++) await doge.sealBlock();
    assert.equal(await watchToTip(p.ctx, "doge"), 1);
    const [mint] = await allOrders(p.kv);
    for (let i = 0; i < 10 && (await stored(p.kv, mint.id)).status !== "completed"; i++) {
      await base.sealBlock();
      await stepNow(p, mint.id);
    }
    assert.equal((await stored(p.kv, mint.id)).status, "completed");

    // The owner burns 30 of its minted 100 uDOGE: paid from the deposit's coin, change back to us, a fee to miners.
    assert.ok((await createBurnConfig(p.kv, OWNER, "doge", SIM_DESTINATION.doge, null)).ok);
    const burnWei = 30n * 10n ** 18n;
    assert.ok(
      (await base.submitErc20Transfer({ from: OWNER, to: SIM_TRANSFER_ADDRESS, asset: "uDOGE", amount: burnWei })).ok,
    );
    for (let i = 0; i < 3; i++) await base.sealBlock();
    assert.equal(await watchToTip(p.ctx, "base"), 1);
    const burn = (await allOrders(p.kv)).find((o) => o.type === "burn")!;
    for (let i = 0; i < 10 && (await stored(p.kv, burn.id)).status !== "completed"; i++) {
      await doge.sealBlock();
      await stepNow(p, burn.id);
    }
    const paid = await stored(p.kv, burn.id);
    assert.equal(paid.status, "completed", JSON.stringify(paid.details));
    const fee = utxoFee("doge")(1, 2);
    assert.equal(intentOf(paid)?.fee, fee.toString(), "the fee is recorded with the payout when it is signed");

    const report = await runReconciliation({
      kv: p.kv,
      chains: p.ctx.chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: ["base", "doge"],
      now: () => new Date(),
    });
    const uDoge = report.assets.find((a) => a.asset === "uDOGE")!;
    assert.deepEqual(report.mismatches, [], JSON.stringify(uDoge.supply));
    assert.equal(uDoge.supply.ok, true, JSON.stringify(uDoge.supply));
    assert.equal(uDoge.supply.outstandingNative, (70n * DOGE).toString());
    assert.equal(uDoge.supply.controlled.treasury, (70n * DOGE - fee).toString(), "the change coin");
    assert.equal(uDoge.supply.payoutFees, fee.toString());
    assert.equal(
      BigInt(uDoge.supply.controlledNative!) + BigInt(uDoge.supply.payoutFees!),
      BigInt(uDoge.supply.outstandingNative!),
      "to the koinu",
    );
  } finally {
    await p.close();
  }
});

Deno.test("verify before record: a UTXO payout recorded with another fee than its coins less its outputs is refused", () => {
  const coins = [{ txHash: "a".repeat(64), index: 0, amount: 100n * DOGE }];
  const intent = {
    kind: "payout" as const,
    chain: "doge" as const,
    to: SIM_DESTINATION.doge,
    amount: 30n * DOGE,
    memo: null,
    coins,
    changeAddress: "D-change",
    maxFee: DOGE,
  };
  const fee = 226_000n;
  const effects = {
    chain: "doge" as const,
    inputs: [{ txHash: coins[0].txHash, index: 0 }],
    outputs: [{ to: SIM_DESTINATION.doge, amount: 30n * DOGE }, { to: "D-change", amount: 70n * DOGE - fee }],
    memo: null,
  };
  const prepared = (recordedFee: bigint) => ({
    txHash: "b".repeat(64),
    raw: "00",
    change: { index: 1, address: "D-change", amount: 70n * DOGE - fee },
    fee: recordedFee,
  });
  assert.deepEqual(differences(intent, effects, prepared(fee)), []);
  assert.deepEqual(differences(intent, effects, prepared(fee - 1n)), [
    `is recorded as paying ${fee - 1n} in fee, but its coins less its outputs are ${fee}`,
  ]);
});
