/**
 * The operator's view of an account chain's treasury (sim sol, xrp and sui ledgers with a finite hot wallet, real KV
 * file, watcher, order steps and sweeper ticks driven by hand, the CLI in its own process as an operator runs it):
 * `deno task admin treasury --chain sol|xrp|sui` in JSON and text shows the hot wallet's address and balance (read
 * through the chain's reader: the sim ledger here), a completed sweep, a minted deposit not swept yet with its age,
 * a payout the hot wallet cannot fund (and why), and one it can.
 */
import assert from "node:assert/strict";
import { sweepOnce } from "../actors/sweeper.ts";
import { accountTreasuryReport } from "../actors/account_treasury_report.ts";
import { type AccountChain, NATIVE } from "../chains/catalog.ts";
import { displayAmount, nativeUnit } from "../model/amounts.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { stored } from "./support/chain_facts.ts";
import { allOrders, simBurnOrders, stepNow } from "./support/burns.ts";
import { runTask } from "./support/cli.ts";
import { countKeys, type HandPipeline, handPipeline, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "3c".repeat(20);

/** A deposit of `amount` to `address`, minted to completion (which marks it due for a sweep). */
async function mintedDeposit(p: HandPipeline, chain: AccountChain, address: string, amount: bigint): Promise<Order> {
  const ledger = p.sim.ledger(chain);
  const before = new Set((await allOrders(p.kv)).map((o) => o.id));
  await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER[chain], to: address, amount });
  for (let i = 0; i < 3; i++) await ledger.sealBlock();
  assert.equal(await watchToTip(p.ctx, chain), 1);
  const mint = (await allOrders(p.kv)).find((o) => o.type === "mint" && !before.has(o.id))!;
  for (let i = 0; i < 20 && (await stored(p.kv, mint.id)).status !== "completed"; i++) {
    await stepNow(p, mint.id);
    await ledger.sealBlock();
    await p.sim.ledger("base").sealBlock();
  }
  assert.equal((await stored(p.kv, mint.id)).status, "completed");
  return await stored(p.kv, mint.id);
}

for (const chain of ["sol", "xrp", "sui"] as const) {
  Deno.test(`admin treasury --chain ${chain} (sim, CLI subprocess): hot wallet balance, a completed sweep, an unswept deposit, an unfundable and a fundable payout`, async () => {
    const p = await handPipeline({ hotWalletGenesis: 0n });
    try {
      const ledger = p.sim.ledger(chain);
      const reserve = NATIVE[chain].reserve;
      const minBurn = NATIVE[chain].uAsset.minimumBurnAmount;
      const minPayout = minBurn / 10n ** BigInt(18 - NATIVE[chain].token.decimals);
      const hot = defaultSimOperatorAddress(chain);

      await ensureUserWallet(p.kv, OWNER, "test-partner");
      const wallet = await createMintWallet(p.kv, OWNER, chain, "base", (c, i) => `${c}-deposit-${i}`);
      assert.ok(wallet.ok);
      const deposit = wallet.wallet.address;

      // A deposit minted and swept to the end: one completed sweep.
      const first = 3n * minPayout;
      await mintedDeposit(p, chain, deposit, first);
      for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", chain])) > 0; i++) {
        await sweepOnce(p.ctx, chain, "test-sweeper", 60_000);
        await ledger.sealBlock();
      }
      assert.equal(await countKeys(p.kv, ["treasury_sweep_due", chain]), 0);
      const swept = first - reserve;
      assert.equal(await ledger.balance(hot, "native"), swept);

      // A second deposit minted, its sweep not run yet: unswept.
      const second = 2n * minPayout;
      const unswept = await mintedDeposit(p, chain, deposit, second);

      // A burn of ten minimum payouts: more than the hot wallet holds, held waiting; and one it can fund, confirmed.
      const { ids: [big] } = await simBurnOrders(p, chain, OWNER, 1, 10n * minBurn);
      assert.equal(await stepNow(p, big), "moved");
      assert.equal(await stepNow(p, big), "waiting");
      assert.match((await stored(p.kv, big)).details.heldReason ?? "", /hot wallet cannot fund/);
      const { ids: [small] } = await simBurnOrders(p, chain, OWNER, 1, minBurn);
      assert.equal(await stepNow(p, small), "moved");
      assert.equal((await stored(p.kv, small)).status, "processing");

      const env = { KV_PATH: p.kvPath, SIM_HOT_WALLET_GENESIS: "0" };
      const json = await runTask("admin", env, ["treasury", "--chain", chain, "--json"]);
      assert.equal(json.code, 0, json.stderr);
      const r = JSON.parse(json.stdout);
      assert.equal(r.chain, chain);
      assert.deepEqual(r.hotWallet, {
        address: hot,
        balance: swept.toString(),
        reserve: reserve.toString(),
        held: { count: 0, amount: "0" }, // no payout recorded yet
        index: 0, // never rotated (docs/operations.md "Rotating a hot wallet")
      });
      assert.deepEqual(r.retiredWallets, []);
      assert.deepEqual(r.swept, { count: 1, amount: swept.toString(), fees: "0" }, "the sim charges no fee");
      assert.equal(r.unswept.count, 1);
      assert.equal(r.unswept.amount, second.toString());
      assert.equal(r.unswept.oldest.orderId, unswept.id);
      assert.equal(r.unswept.oldest.mintedAt, unswept.updatedAt);
      assert.equal(r.unswept.deposits[0].source, `${unswept.details.source.txHash}:${unswept.details.source.index}`);
      assert.deepEqual(r.openSweeps, []);
      assert.deepEqual(
        r.pendingPayouts.map((x: { orderId: string; fundable: boolean; amount: string }) => [
          x.orderId,
          x.fundable,
          x.amount,
        ]),
        [[big, false, (10n * minPayout).toString()], [small, true, minPayout.toString()]],
      );
      assert.match(r.pendingPayouts[0].why, /hot wallet cannot fund this payout yet/);
      assert.equal(r.pendingPayouts[0].heldReason, (await stored(p.kv, big)).details.heldReason);
      assert.deepEqual(r.stuckPayouts, []);

      const text = await runTask("admin", env, ["treasury", "--chain", chain]);
      assert.equal(text.code, 0, text.stderr);
      // The text is in the chain's coin (model/amounts.ts); `--json` above keeps the exact integers.
      const $ = (v: bigint) => displayAmount(v, nativeUnit(chain)).replaceAll(".", "\\.");
      assert.match(
        text.stdout,
        new RegExp(`hot wallet ${hot} \\(index 0\\): balance ${$(swept)}; reserve ${$(reserve)}`),
      );
      assert.match(text.stdout, new RegExp(`swept deposits: 1, ${$(swept)} moved to the hot wallet`));
      assert.match(text.stdout, new RegExp(`unswept deposits .*: 1, ${$(second)}; oldest ${unswept.id} waiting \\d+`));
      assert.match(text.stdout, new RegExp(`payout ${big}\\t${$(10n * minPayout)}\\t.*NOT fundable now: hot wallet`));
      assert.match(text.stdout, new RegExp(`payout ${small}\\t${$(minPayout)}\\t.*fundable now`));
      assert.equal(r.display["hotWallet.reserve"], displayAmount(reserve, nativeUnit(chain)));

      // The sweep of the second deposit, run now, moves it: the report's unswept becomes swept.
      for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", chain])) > 0; i++) {
        await sweepOnce(p.ctx, chain, "test-sweeper", 60_000);
        await ledger.sealBlock();
      }
      const after = await accountTreasuryReport(p.kv, p.ctx.chains, chain);
      assert.equal(after.unswept.count, 0);
      assert.equal(after.swept.count, 2);
      assert.equal(after.swept.amount, (swept + second).toString());
      assert.equal(after.hotWallet.balance, (swept + second).toString());
    } finally {
      await p.close();
    }
  });
}
