/**
 * The operator's side of a UTXO treasury (sim doge and zec ledgers in UTXO mode, real KV file, watcher and order steps driven
 * by hand, the CLI in its own process): `deno task admin treasury --chain doge|zec` in text and JSON, read from KV only,
 * with balances, a pending deposit, a payout the treasury cannot fund, and a stuck payout with its txid, outpoints,
 * age and last status; `deno task admin utxo consolidate` exactly once across a crash between its record and its
 * broadcast (the command run again shows the open one and re-sends the same bytes; the service's treasury tick settles
 * it: inputs spent, the merged coin added at the change address), audited.
 */
import { displayAmount, nativeUnit } from "../model/amounts.ts";
import assert from "node:assert/strict";
import { stepOrder } from "../actors/order_actor.ts";
import { driveConsolidation, treasuryTick } from "../actors/sweeper.ts";
import { treasuryReport } from "../actors/treasury_report.ts";
import { TREASURY_CANNOT_FUND } from "../actors/treasury_steps.ts";
import { NATIVE, UTXO_CHAINS, type UtxoChain } from "../chains/catalog.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { listAudit } from "../kv/audit.ts";
import { consolidationOrderId, listConsolidations, openConsolidation } from "../kv/consolidations.ts";
import { coinLocks } from "../kv/chain_state.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { readCoin, spendableCoins, spentBy } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, simBurnOrders } from "./support/burns.ts";
import { payoutTxs, stored } from "./support/chain_facts.ts";
import { runTask } from "./support/cli.ts";
import { type HandPipeline, handPipeline, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "0f".repeat(20);
/** One COIN or one ZEC: both have 8 decimals. */
const COIN = 100_000_000n;

/** Steps an order a second later (small steps keep the context's clock near the CLI's). */
async function step(p: HandPipeline, id: string) {
  p.advance(1_000);
  return await stepOrder(p.ctx, id);
}

async function depositAddress(p: HandPipeline, chain: UtxoChain): Promise<string> {
  await ensureUserWallet(p.kv, OWNER, "test-partner");
  const res = await createMintWallet(p.kv, OWNER, chain, "base", (c, i) => `sim-${c}-deposit-${i}`);
  assert.ok(res.ok);
  return res.wallet.address;
}

/** A deposit of `amount`, confirmed: its order processing, its coin in the treasury. */
async function coin(p: HandPipeline, chain: UtxoChain, address: string, amount: bigint): Promise<Order> {
  const ledger = p.sim.ledger(chain);
  const before = new Set((await allOrders(p.kv)).map((o) => o.id));
  await ledger.submitNativeTransfer({ from: "outsider", to: address, amount });
  for (let i = 0; i < NATIVE[chain].simConfirmations; i++) await ledger.sealBlock();
  assert.equal(await watchToTip(p.ctx, chain), 1);
  const [order] = (await allOrders(p.kv)).filter((o) => !before.has(o.id));
  assert.equal(await step(p, order.id), "moved");
  assert.ok(await readCoin(p.kv, chain, order.details.source));
  return order;
}

async function admin(p: HandPipeline, args: string[], env: Record<string, string> = {}) {
  return await runTask("admin", { KV_PATH: p.kvPath, ...env }, args);
}

for (const chain of UTXO_CHAINS) {
  Deno.test(`admin treasury --chain ${chain}: balances, a pending deposit, an unfundable payout, a stuck payout with its age (text and JSON)`, async () => {
    const p = await handPipeline({ utxoGenesis: 0n });
    try {
      const address = await depositAddress(p, chain);
      const coins = [];
      for (let i = 0; i < 3; i++) coins.push(await coin(p, chain, address, (10n + BigInt(i)) * COIN));

      // A burn paid from the treasury whose payout stays in the mempool: stuck.
      await p.sim.ledger(chain).setFaults({ stallPayouts: 1 });
      const { ids: [stuck] } = await simBurnOrders(p, chain, OWNER, 1, 5n * 10n ** 18n);
      assert.equal(await step(p, stuck), "moved"); // confirmed
      assert.equal(await step(p, stuck), "moved"); // recorded and broadcast
      assert.equal(await step(p, stuck), "waiting"); // seen pending
      const burning = await stored(p.kv, stuck);
      assert.equal(burning.status, "burning");
      const intent = burning.details.intent!;
      assert.equal(intent.consumes?.kind, "outpoints");
      const spends = intent.consumes.kind === "outpoints" ? intent.consumes.outpoints : [];

      // A burn no set of coins can pay: it waits, visibly.
      const { ids: [big] } = await simBurnOrders(p, chain, OWNER, 1, 1_000n * 10n ** 18n);
      assert.equal(await step(p, big), "moved");
      assert.equal(await step(p, big), "waiting");
      assert.equal((await stored(p.kv, big)).details.heldReason, TREASURY_CANNOT_FUND);

      // A deposit seen in a block, not yet confirmed.
      const ledger = p.sim.ledger(chain);
      await ledger.submitNativeTransfer({ from: "outsider", to: address, amount: 7n * COIN });
      await ledger.sealBlock();
      assert.equal(await watchToTip(p.ctx, chain), 1);

      const json = await admin(p, ["treasury", "--chain", chain, "--json"]);
      assert.equal(json.code, 0, json.stderr);
      const r = JSON.parse(json.stdout);
      assert.equal(r.chain, chain);
      assert.equal(r.utxoCount, 3);
      assert.equal(r.balances.confirmed, (33n * COIN).toString());
      const lockedAmount = coins.filter((c) => spends.some((o) => o.txHash === c.details.source.txHash))
        .reduce((sum, c) => sum + BigInt(c.amount), 0n);
      assert.ok(lockedAmount > 0n);
      assert.equal(r.balances.locked, lockedAmount.toString());
      assert.equal(r.balances.spendable, (33n * COIN - lockedAmount).toString());
      assert.equal(r.balances.pending, (7n * COIN).toString());
      assert.equal(r.pendingDeposits.length, 1);
      assert.deepEqual(r.pendingPayouts.map((x: { orderId: string; fundable: boolean }) => [x.orderId, x.fundable]), [
        [big, false],
      ]);
      assert.equal(r.pendingPayouts[0].heldReason, TREASURY_CANNOT_FUND);
      assert.equal(r.stuckPayouts.length, 1);
      const s = r.stuckPayouts[0];
      assert.equal(s.orderId, stuck);
      assert.equal(s.txHash, intent.txHash);
      assert.deepEqual(s.outpoints, spends.map((o) => `${o.txHash}:${o.index}`));
      assert.equal(s.recordedAt, intent.preparedAt);
      assert.equal(typeof s.ageMs, "number");
      assert.equal(s.lastStatus.state, "pending");

      const text = await admin(p, ["treasury", "--chain", chain]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /read from KV; no node was asked/);
      // Text shows amounts in the coin's units (docs/dashboard.md "Units"); --json keeps the smallest units.
      assert.ok(text.stdout.includes(`confirmed ${displayAmount(33n * COIN, nativeUnit(chain))} in 3 coin(s)`));
      assert.match(
        text.stdout,
        new RegExp(`payout ${big}\\t[\\d,.]+ ${NATIVE[chain].token.symbol}\\tNOT fundable now`),
      );
      assert.match(text.stdout, new RegExp(`payout ${stuck}\\ttx ${intent.txHash}\\tage \\d+s .*last status pending`));
      assert.match(text.stdout, new RegExp(`spends ${spends[0].txHash}:${spends[0].index}`));

      // The age, two hours on.
      const later = await treasuryReport(
        p.kv,
        chain,
        undefined,
        new Date(Date.parse(intent.preparedAt) + 2 * 3_600_000 + 5_000),
      );
      assert.equal(later.stuckPayouts[0].age, "2h 0m");

      // Once coins arrive that pay it, the waiting burn is shown fundable.
      await coin(p, chain, address, 2_000n * COIN);
      const after = await treasuryReport(p.kv, chain);
      assert.deepEqual(after.pendingPayouts.map((x) => [x.orderId, x.fundable, x.inputs]), [[big, true, 1]]);

      const bad = await admin(p, ["treasury", "--chain", "ltc"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--chain must be one of sol, xrp, sui, doge, zec/);
    } finally {
      await p.close();
    }
  });

  Deno.test(`admin utxo consolidate --chain ${chain}: exactly once across a crash between record and broadcast`, async () => {
    const HOT = defaultSimOperatorAddress(chain);
    const p = await handPipeline({ utxoGenesis: 0n });
    try {
      const address = await depositAddress(p, chain);
      const amounts = [11n, 12n, 13n, 14n, 15n].map((n) => n * COIN);
      for (const a of amounts) await coin(p, chain, address, a);
      const ledger = p.sim.ledger(chain);

      // Crash after the record, before the broadcast: recorded with its coins locked, unknown to the chain.
      const crashed = await admin(p, ["utxo", "consolidate", "--chain", chain, "--max-inputs", "4", "--by", "ops"], {
        ADMIN_CRASH_AFTER_RECORD: "1",
      });
      assert.equal(crashed.code, 137, crashed.stderr);
      const open = await openConsolidation(p.kv, chain);
      assert.ok(open, "recorded before the crash");
      assert.equal(open.inputs.length, 4);
      assert.deepEqual(open.inputs.map((i) => BigInt(i.amount)), amounts.slice(0, 4), "the smallest coins");
      const total = amounts.slice(0, 4).reduce((a, b) => a + b, 0n);
      assert.equal(BigInt(open.output.amount), total - utxoFee(chain)(4, 1));
      assert.equal(open.output.address, HOT, "merged at the change address");
      assert.deepEqual(await coinLocks(p.kv, chain, open.inputs), open.inputs.map(() => open.txHash));
      assert.deepEqual(await ledger.txStatus(open.txHash), { state: "unknown" }, "never broadcast");
      assert.equal((await spendableCoins(p.kv, chain)).length, 1, "only the coin it does not spend");

      // The command again: shows the open one, sends its same bytes, starts nothing.
      const again = await admin(p, ["utxo", "consolidate", "--chain", chain]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`consolidation ${open.id} on ${chain} is already open`));
      assert.match(again.stdout, /its state now: resent; no second consolidation was started/);
      assert.deepEqual(await ledger.txStatus(open.txHash), { state: "pending" });

      // The service follows it to the end.
      assert.equal(await treasuryTick(p.ctx, chain, "test-service", 60_000), "waiting");
      for (let i = 0; i < NATIVE[chain].simConfirmations; i++) await ledger.sealBlock();
      assert.equal(await treasuryTick(p.ctx, chain, "test-service", 60_000), "completed");
      assert.equal(await openConsolidation(p.kv, chain), null);
      for (const i of open.inputs) {
        assert.equal(await readCoin(p.kv, chain, i), null, "spent");
        assert.equal(await spentBy(p.kv, chain, i), open.txHash);
      }
      const merged = await readCoin(p.kv, chain, { txHash: open.txHash, index: 0 });
      assert.equal(merged?.amount, BigInt(open.output.amount));
      assert.equal(merged?.address, HOT);
      const [done] = await listConsolidations(p.kv, chain);
      assert.equal(done.status, "completed");
      assert.equal(await driveConsolidation(p.kv, p.ctx.chains, done, 3, new Date()), "completed", "settled once");
      assert.equal(await treasuryTick(p.ctx, chain, "test-service", 60_000), null, "nothing open");

      // Exactly one consolidation transaction on chain, one record, one audit entry.
      assert.equal((await payoutTxs(p.kv, chain, consolidationOrderId(open.id))).length, 1);
      assert.equal((await listConsolidations(p.kv, chain)).length, 1);
      assert.deepEqual((await listAudit(p.kv)).map((a) => [a.action, a.by, a.subject]), [
        ["utxo.consolidate", "ops", `${chain}:${open.id}`],
      ]);
      // The treasury now: the merged coin and the one left out; spendable again.
      assert.equal((await spendableCoins(p.kv, chain)).length, 2);

      const invalid = await admin(p, ["utxo", "consolidate", "--chain", chain, "--max-inputs", "0"]);
      assert.equal(invalid.code, 2);
      assert.match(invalid.stderr, /--max-inputs must be a whole number/);
      const few = await admin(p, ["utxo", "consolidate", "--chain", chain, "--min-inputs", "3"]);
      assert.equal(few.code, 0, few.stderr);
      assert.match(
        few.stdout,
        new RegExp(`nothing to consolidate on ${chain}: 2 coin\\(s\\) worth merging, at least 3 needed`),
      );
    } finally {
      await p.close();
    }
  });
}
