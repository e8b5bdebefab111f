/** The sim ledger's UTXO mode for doge and zec (chains/sim/utxo.ts): outputs, spends, fees, conflicts, sums. */
import { withKv as withTempKv } from "./support/kv.ts";
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { NATIVE, type UtxoChain } from "../chains/catalog.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { CHANGE_INDEX } from "../chains/sim/utxo.ts";
import { simNonce } from "../chains/sim/ledger.ts";
import { encodeSimTx } from "../chains/sim/tx.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { seededRandom } from "./support/chaos.ts";

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("sim_utxo_", fn);

const HOT = (c: UtxoChain) => `hot-${c}`;
const COIN = 100_000_000n;

for (const chain of ["doge", "zec"] as const) {
  Deno.test(`sim ${chain} UTXO mode: a payout spends deposit outputs, returns change, refuses double and missing spends`, async () => {
    await withKv(async (kv) => {
      const sim = simChains(kv, { random: seededRandom(5), operatorAddress: (c) => `hot-${c}` });
      const l = sim.ledger(chain);
      const payer = sim.payer(chain);
      const deposit = await l.submitNativeTransfer({ from: "outsider", to: "deposit-1", amount: 100n * COIN });
      await l.sealBlock();
      const coin = { txHash: deposit.txHash, index: 0 };
      const spend = { ...coin, amount: 100n * COIN, address: "deposit-1", derivationIndex: 1, height: 1 };
      assert.deepEqual(await l.unspentOutput(coin), { address: "deposit-1", amount: 100n * COIN });

      const tx = await payer.preparePayout({
        orderId: "o1",
        to: "dest",
        amount: 30n * COIN,
        memo: null,
        coins: [spend],
      });
      const fee = utxoFee(chain)(1, 2);
      assert.deepEqual(tx.change, { index: CHANGE_INDEX, address: HOT(chain), amount: 70n * COIN - fee });
      assert.deepEqual(tx.consumes, { kind: "outpoints", outpoints: [coin] });
      await payer.broadcast(tx);
      await payer.broadcast(tx); // the same bytes again: a no-op
      await l.sealBlock();
      assert.equal(await l.unspentOutput(coin), null, "the deposit output is spent");
      assert.deepEqual(await l.unspentOutput({ txHash: tx.txHash, index: CHANGE_INDEX }), {
        address: HOT(chain),
        amount: 70n * COIN - fee,
      });

      // A second payout of the same coin: refused by the ledger as a double spend, nothing changes.
      const again = await payer.preparePayout({
        orderId: "o2",
        to: "dest",
        amount: 30n * COIN,
        memo: null,
        coins: [spend],
      })
        .catch((e) => e);
      assert.ok(again instanceof Error, "an adapter cannot even build a spend of a spent output");
      const raw = (extra: object) =>
        encodeSimTx({
          kind: "payout",
          from: HOT(chain),
          to: "dest",
          amount: 30n * COIN,
          memo: null,
          orderId: "o3",
          nonce: simNonce(Math.random),
          expiry: null,
          change: null,
          inputs: [{ ...coin, address: "deposit-1", amount: 100n * COIN }],
          ...extra,
        });
      await assert.rejects(() => l.submitRaw(raw({})), TransientChainError, "an input is already spent");
      await assert.rejects(
        () => l.submitRaw(raw({ inputs: [{ txHash: "ff".repeat(32), index: 0, address: "x", amount: 100n * COIN }] })),
        /missing_input/,
      );
      const change = { txHash: tx.txHash, index: CHANGE_INDEX, address: HOT(chain), amount: 70n * COIN - fee };
      // Outputs that take everything leave no fee: refused.
      await assert.rejects(
        () => l.submitRaw(raw({ inputs: [change], amount: 70n * COIN - fee - 1n, change: null })),
        /insufficient_fee/,
      );
      await assert.rejects(() => l.submitRaw(raw({ inputs: [change, change] })), /duplicate_input/);

      // The ledger's sums: what came in is held by addresses, plus the fee that left.
      const held = (await l.balance("deposit-1", "native")) + (await l.balance("dest", "native")) +
        (await l.balance(HOT(chain), "native"));
      assert.equal(held + fee, 100n * COIN);
      assert.equal(await l.balance("deposit-1", "native"), 0n);
    });
  });
}

Deno.test("sim doge UTXO mode: a conflicting spend buried at depth proves our unsent payout dead", async () => {
  await withKv(async (kv) => {
    const sim = simChains(kv, { random: seededRandom(6), operatorAddress: (c) => `hot-${c}` });
    const l = sim.ledger("doge");
    const genesis = await l.ensureGenesisOutput(HOT("doge"), 1000n * COIN);
    assert.deepEqual(await l.ensureGenesisOutput(HOT("doge"), 1000n * COIN), genesis, "idempotent");
    assert.equal(await l.balance(HOT("doge"), "native"), 1000n * COIN);
    const tx = await sim.payer("doge").preparePayout({
      orderId: "o1",
      to: "dest",
      amount: 30n * COIN,
      memo: null,
      coins: [{ ...genesis, amount: 1000n * COIN, address: HOT("doge"), derivationIndex: 0, height: 0 }],
    });
    const ours = { raw: tx.raw, consumes: tx.consumes };
    const reader = sim.reader("doge");
    assert.deepEqual(await reader.txStatus(tx.txHash, ours), { state: "unknown" });
    const other = await l.submitConflictingSpend([genesis], "thief");
    for (let i = 1; i < NATIVE.doge.simConfirmations; i++) {
      await l.sealBlock();
      assert.deepEqual(await reader.txStatus(tx.txHash, ours), { state: "unknown" }, "not buried yet");
    }
    await l.sealBlock();
    const status = await reader.txStatus(tx.txHash, ours);
    assert.equal(status.state, "dead");
    assert.deepEqual(status.state === "dead" && status.proof, {
      kind: "conflict",
      consumed: { kind: "outpoints", outpoints: [genesis] },
      spentBy: other.txHash,
    });
    assert.deepEqual(await reader.txStatus(tx.txHash), { state: "unknown" }, "no proof without our record");
  });
});
