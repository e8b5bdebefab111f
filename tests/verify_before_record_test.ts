/**
 * Verify before record through the order actor, on the embedded sim ledgers of all ten chains (a real KV file, the
 * sim adapters' real builders): a builder that lies (a mint to another recipient on each EVM chain, a payout of
 * another amount on each native chain) is refused before its transaction is recorded, so nothing is broadcast, the
 * order waits with no transaction, and a `transaction_mismatch` alert names the difference. The same builders telling
 * the truth complete. Per-chain decoders against real nodes and local protocol servers: tests/explain_*_test.ts.
 */
import assert from "node:assert/strict";
import { type Chains, type EvmMinter, type NativePayer, payerFor, type UtxoPayoutRequest } from "../chains/adapter.ts";
import { EVM_CHAINS, type EvmChain, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import type { SimChains } from "../chains/sim/adapters.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { listAlerts } from "../kv/alerts.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { getOrder } from "../kv/orders.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { allOrders, SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "9e".repeat(20);
const STRANGER_EVM = "0x" + "5e".repeat(20);

/** The sim chains, verified as the registry verifies them, with builders that lie when `lie` says so. */
function lyingChains(kv: Deno.Kv, sim: SimChains, lie: { mint: boolean; payout: boolean }): Chains {
  const all = new Set([...EVM_CHAINS, ...NATIVE_CHAINS]);
  const lying: Chains = {
    ...sim,
    minter: (c: EvmChain): EvmMinter => {
      const inner = sim.minter(c);
      return {
        ...inner,
        prepareMint: (req) => inner.prepareMint(lie.mint ? { ...req, to: STRANGER_EVM } : req),
      };
    },
    payer: (c) => {
      const inner: NativePayer = sim.payer(c);
      return payerFor(c, {
        ...inner,
        preparePayout: (req: UtxoPayoutRequest) =>
          inner.preparePayout(lie.payout ? { ...req, amount: req.amount + 1n } : req),
      });
    },
  };
  return verifyingChains(lying, {
    explainer: explainerOf({ simulated: all, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set() }),
    evm: evmFactsOf({ simulated: all, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
    onMismatch: alertOnMismatch(kv),
  });
}

Deno.test("verify before record on the sim ledgers of all ten chains: a lying builder's mint or payout is never recorded nor broadcast, and an alert names the lie", async (t) => {
  const lie = { mint: true, payout: true };
  const p = await handPipeline({ chains: (kv, sim) => lyingChains(kv, sim, lie) });
  try {
    await ensureUserWallet(p.kv, OWNER, "test-partner");

    await t.step("a mint to another recipient, on each EVM chain", async () => {
      const sol = p.sim.ledger("sol");
      const amount = NATIVE.sol.minimumDeposit;
      for (const chain of EVM_CHAINS) {
        const w = await createMintWallet(p.kv, OWNER, "sol", chain, (_c, i) => `sol-deposit-${chain}-${i}`);
        assert.ok(w.ok);
        await sol.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: w.wallet.address, amount });
      }
      for (let i = 0; i < 3; i++) await sol.sealBlock();
      assert.equal(await watchToTip(p.ctx, "sol"), EVM_CHAINS.length);
      const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint");
      for (let round = 0; round < 4; round++) {
        for (const m of mints) await stepNow(p, m.id);
        for (const chain of EVM_CHAINS) await p.sim.ledger(chain).sealBlock();
      }
      for (const m of mints) {
        const order = (await getOrder(p.kv, m.id)).value!;
        assert.equal(order.status, "processing", `${order.destinationChain}: waits, never minted`);
        assert.equal(order.transactionHash, null, `${order.destinationChain}: no transaction recorded`);
        assert.equal(order.details.intent, undefined, `${order.destinationChain}: no intent written`);
        const chain = order.destinationChain as EvmChain;
        assert.equal(await p.sim.ledger(chain).balance(STRANGER_EVM, "uSOL"), 0n, `${chain}: nothing broadcast`);
        assert.equal(await p.sim.ledger(chain).balance(OWNER, "uSOL"), 0n);
      }
      const alerts = (await listAlerts(p.kv, "transaction_mismatch")).filter((a) => a.subject.includes(":mint:"));
      assert.deepEqual(alerts.map((a) => a.chain).sort(), [...EVM_CHAINS].sort());
      for (const a of alerts) assert.match(a.message, new RegExp(`recipient ${STRANGER_EVM}, not ${OWNER}`));
    });

    await t.step("a payout of one unit more, on each native chain", async () => {
      for (const chain of NATIVE_CHAINS) {
        await createBurnConfig(p.kv, OWNER, chain, SIM_DESTINATION[chain], chain === "xrp" ? "42" : null);
        const { ids: [id], payout } = await simBurnOrders(p, chain, OWNER);
        const before = await p.sim.ledger(chain).balance(SIM_DESTINATION[chain], "native");
        for (let round = 0; round < 4; round++) {
          await stepNow(p, id);
          await p.sim.ledger(chain).sealBlock();
        }
        const order = (await getOrder(p.kv, id)).value!;
        assert.equal(order.status, "processing", `${chain}: the payout waits`);
        assert.equal(order.transactionHash, null, `${chain}: no payout recorded`);
        assert.equal(
          await p.sim.ledger(chain).balance(SIM_DESTINATION[chain], "native"),
          before,
          `${chain}: nothing sent`,
        );
        const [alert] = (await listAlerts(p.kv, "transaction_mismatch")).filter((a) =>
          a.subject === `${chain}:payout:${id}`
        );
        assert.ok(alert, `${chain}: a transaction_mismatch alert for the order`);
        assert.match(alert.message, new RegExp(`pays (${SIM_DESTINATION[chain]} )?${payout + 1n}, not ${payout}`));
      }
    });

    await t.step("the same builders telling the truth: every held mint and payout completes", async () => {
      lie.mint = false;
      lie.payout = false;
      const orders = await allOrders(p.kv);
      for (let round = 0; round < 12; round++) {
        for (const o of orders) await stepNow(p, o.id);
        for (const chain of [...EVM_CHAINS, ...NATIVE_CHAINS]) await p.sim.ledger(chain).sealBlock();
      }
      for (const o of orders) {
        const order = (await getOrder(p.kv, o.id)).value!;
        assert.equal(order.status, "completed", `${order.type} ${order.destinationChain}: ${JSON.stringify(order)}`);
      }
    });
  } finally {
    await p.close();
  }
});
