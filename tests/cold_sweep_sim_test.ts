/**
 * The cold sweep (actors/cold_sweep.ts; docs/operations.md "Cold addresses") on the embedded sim ledgers, a real KV
 * file and the sim adapters verified as the registry verifies them (chains/verify.ts): no cold address -> nothing swept
 * and the `cold_sweep_blocked` alert, nothing committed at rest; with one, the surplus above the ceiling down to the
 * target goes to it exactly once although the process crashes between record and broadcast; waiting payouts are never
 * swept; a change of the cold address racing the sweep fails its recording commit and nothing is sent; a builder paying
 * elsewhere is refused before anything is recorded; a UTXO treasury's coins go to one output at the cold address.
 */
import assert from "node:assert/strict";
import { coldSurplus, coldSweepOnce, type ColdSweepStep } from "../actors/cold_sweep.ts";
import type { PipelineContext } from "../actors/context.ts";
import { readHotFunds } from "../actors/hot_band.ts";
import { type Chains, type NativePayer, payerFor, type UtxoPayoutRequest } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, type NativeChain } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { defaultSimOperatorAddress, type SimChains } from "../chains/sim/adapters.ts";
import { verifyingChains } from "../chains/verify.ts";
import type { HotBand } from "../config/hot_band.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { getAlert } from "../kv/alerts.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { listColdSweeps, openColdSweep } from "../kv/cold_sweeps.ts";
import { readHotWalletHolds } from "../kv/hot_wallet.ts";
import { coinTotals } from "../kv/treasury.ts";
import { ledgerTxs, stored } from "./support/chain_facts.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const SOL = 1_000_000_000n;
const OWNER = "0x" + "c0".repeat(20);
const COLD = "sim-sol-cold-vault";
const OTHER_COLD = "sim-sol-cold-vault-2";
const STRANGER = "sim-sol-stranger";

/** The sim chains verified as config/registry.ts verifies them; `lie.to` makes every payout go there instead. */
function verifiedSim(kv: Deno.Kv, sim: SimChains, lie: { to: string | null }, beforePayout?: () => Promise<void>) {
  const all = new Set([...EVM_CHAINS, ...NATIVE_CHAINS]);
  const chains: Chains = {
    ...sim,
    payer: (c) => {
      const inner: NativePayer = sim.payer(c);
      return payerFor(c, {
        ...inner,
        preparePayout: async (req: UtxoPayoutRequest) => {
          await beforePayout?.();
          return await inner.preparePayout(lie.to ? { ...req, to: lie.to } : req);
        },
      });
    },
  };
  return verifyingChains(chains, {
    explainer: explainerOf({ simulated: all, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set() }),
    evm: evmFactsOf({ simulated: all, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
    onMismatch: alertOnMismatch(kv),
  });
}

function withBand(ctx: PipelineContext, bands: Partial<Record<NativeChain, HotBand>>): PipelineContext {
  return { ...ctx, settings: { ...ctx.settings, hotBand: (c) => bands[c] ?? null } };
}

/** Counts the commits made through `kv` (atomic commits, set, delete), as bench/idle.ts does. */
function countCommits(kv: Deno.Kv) {
  const counter = { n: 0 };
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => (counter.n++, commit());
    return op;
  };
  const set = kv.set.bind(kv);
  kv.set = ((...a: Parameters<Deno.Kv["set"]>) => (counter.n++, set(...a))) as Deno.Kv["set"];
  return counter;
}

const setCold = (kv: Deno.Kv, chain: NativeChain, address: string) =>
  kv.set(coldAddressKey(chain), { current: { address, since: new Date(0).toISOString() }, pending: null });

Deno.test("coldSurplus: waiting payouts reduce the surplus; at or below the ceiling nothing moves", () => {
  const band = { target: 5n, ceiling: 10n };
  assert.equal(coldSurplus(band, 10n, 0n), null);
  assert.equal(coldSurplus(band, 11n, 0n), 6n);
  assert.equal(coldSurplus(band, 14n, 4n), null, "what waiting payouts need is never swept");
  assert.equal(coldSurplus(band, 20n, 4n), 11n);
  assert.equal(coldSurplus(band, 3n, 9n), null);
});

Deno.test("cold sweep on sim sol (real KV, verified builders): blocked without a cold address, then once to it across a crash between record and broadcast", async (t) => {
  const p = await handPipeline({ hotWalletGenesis: 0n, chains: (kv, sim) => verifiedSim(kv, sim, { to: null }) });
  const band = { floor: 2n * SOL, target: 5n * SOL, ceiling: 10n * SOL };
  const ctx = withBand(p.ctx, { sol: band });
  const ledger = p.sim.ledger("sol");
  const hot = defaultSimOperatorAddress("sol");
  const reserve = NATIVE.sol.reserve;
  const step = () => coldSweepOnce(ctx, "sol", "test-cold", 60_000);
  try {
    await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: hot, amount: 14n * SOL + reserve });
    await ledger.sealBlock();

    await t.step("no cold address: nothing swept, cold_sweep_blocked says why; at rest no commit", async () => {
      assert.equal(await step(), "blocked");
      const alert = await getAlert(p.kv, "cold_sweep_blocked", "sol");
      assert.match(alert?.message ?? "", /^surplus above ceiling, no cold address: sol hot funds 14000000000 /);
      assert.match(alert!.message, /9000000000 should go to cold/);
      assert.equal(await openColdSweep(p.kv, "sol"), null);
      const commits = countCommits(p.kv);
      assert.equal(await step(), "blocked");
      assert.equal(commits.n, 0, "the same condition commits nothing again");
      assert.equal((await getAlert(p.kv, "cold_sweep_blocked", "sol"))!.count, 1);
    });

    await t.step("a change waiting for its delay: still nothing swept", async () => {
      await p.kv.set(coldAddressKey("sol"), {
        current: null,
        pending: { address: COLD, at: new Date().toISOString(), effectiveAt: "2999-01-01T00:00:00.000Z", by: "op" },
      });
      assert.equal(await step(), "blocked");
      assert.match((await getAlert(p.kv, "cold_sweep_blocked", "sol"))!.message, /no cold address/);
      await p.kv.set(coldAddressKey("sol"), {
        current: { address: COLD, since: new Date(0).toISOString() },
        pending: { address: OTHER_COLD, at: new Date().toISOString(), effectiveAt: "2999-01-01T00:00:00Z", by: "op" },
      });
      assert.equal(await step(), "blocked");
      assert.match((await getAlert(p.kv, "cold_sweep_blocked", "sol"))!.message, /cold address changing/);
      assert.deepEqual(await listColdSweeps(p.kv, "sol"), []);
    });

    await t.step(
      "recorded, the process dies before broadcast; the next step sends the same bytes; final once",
      async () => {
        await setCold(p.kv, "sol", COLD);
        ctx.faultPoint = (point) => {
          if (point === "cold-sweep-after-record") throw new Error("crash after recording the cold sweep");
        };
        assert.equal(await step(), "waiting", "the crash is a failed step");
        ctx.faultPoint = undefined;
        const open = (await openColdSweep(p.kv, "sol"))!;
        assert.equal(open.status, "prepared");
        assert.equal(open.destination, COLD);
        assert.equal(open.amount, `${9n * SOL}`);
        assert.equal(open.hot, `${14n * SOL}`);
        assert.equal((await ledger.txStatus(open.txHash)).state, "unknown", "recorded, never sent");
        assert.equal((await readHotWalletHolds(p.kv, "sol")).held, 9n * SOL, "it holds its amount like a payout");
        assert.equal(await getAlert(p.kv, "cold_sweep_blocked", "sol"), null, "cleared once recorded");
        // Another look while it is open never records a second one.
        assert.equal(await step(), "resent");
        assert.equal(await step(), "waiting");
        const steps: ColdSweepStep[] = [];
        for (let i = 0; i < 10 && (await openColdSweep(p.kv, "sol")); i++) {
          await ledger.sealBlock();
          steps.push(await step());
        }
        assert.equal(steps.at(-1), "completed");
        const [done] = await listColdSweeps(p.kv, "sol");
        assert.equal(done.status, "completed");
        assert.deepEqual(done.coldOutputs, [{ txHash: open.txHash, index: 0, amount: `${9n * SOL}` }]);
        assert.equal(await ledger.balance(COLD, "native"), 9n * SOL);
        assert.equal(await ledger.balance(hot, "native"), 5n * SOL + reserve, "the target and the reserve stay hot");
        assert.equal((await readHotWalletHolds(p.kv, "sol")).held, 0n, "its hold released once final");
        const toCold = (await ledgerTxs(p.kv, "sol")).filter((x) => x.tx.kind === "payout");
        assert.equal(toCold.length, 1, "exactly one transaction to cold");
        assert.equal(await step(), "idle", "within the band now");
      },
    );

    await t.step("at rest within the band: no commit", async () => {
      const commits = countCommits(p.kv);
      for (let i = 0; i < 3; i++) assert.equal(await step(), "idle");
      assert.equal(commits.n, 0);
    });

    await t.step("a waiting payout is never swept: only the surplus beyond it goes", async () => {
      // 8 SOL wait for a payout; the hot wallet gets 12 more (17 hot): 17 - 8 = 9 is within the band: nothing moves.
      const { ids: [burn] } = await simBurnOrders(p, "sol", OWNER, 1, 8n * 10n ** 18n);
      assert.equal(await stepNow(p, burn), "moved");
      assert.equal((await stored(p.kv, burn)).status, "processing");
      await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: hot, amount: 12n * SOL });
      await ledger.sealBlock();
      const funds = await readHotFunds(p.kv, ctx.chains, "sol");
      assert.equal(funds.waiting, 8n * SOL);
      assert.equal(await step(), "idle");
      assert.equal((await listColdSweeps(p.kv, "sol")).length, 1);
      // 5 more: 22 hot, 8 waiting, 14 free above the ceiling: 9 go, the 8 the payout needs and the target stay.
      await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: hot, amount: 5n * SOL });
      await ledger.sealBlock();
      assert.equal(await step(), "recorded");
      assert.equal((await openColdSweep(p.kv, "sol"))!.amount, `${9n * SOL}`);
      for (let i = 0; i < 10 && (await openColdSweep(p.kv, "sol")); i++) {
        await ledger.sealBlock();
        await step();
      }
      // What the payout needs stayed hot: it is funded now.
      assert.equal(await stepNow(p, burn), "moved");
      assert.equal((await stored(p.kv, burn)).status, "burning");
      assert.equal(await ledger.balance(COLD, "native"), 18n * SOL);
    });
  } finally {
    await p.close();
  }
});

Deno.test("cold sweep on sim sol: a cold address change racing the sweep fails its recording commit; nothing sent, nothing held", async () => {
  let race: (() => Promise<void>) | undefined;
  const p = await handPipeline({
    hotWalletGenesis: 0n,
    chains: (kv, sim) => verifiedSim(kv, sim, { to: null }, () => race?.() ?? Promise.resolve()),
  });
  const ctx = withBand(p.ctx, { sol: { floor: 0n, target: 1n * SOL, ceiling: 2n * SOL } });
  const ledger = p.sim.ledger("sol");
  try {
    await ledger.submitNativeTransfer({
      from: SIM_DEPOSIT_SENDER.sol,
      to: defaultSimOperatorAddress("sol"),
      amount: 4n * SOL + NATIVE.sol.reserve,
    });
    await ledger.sealBlock();
    await setCold(p.kv, "sol", COLD);
    // Between reading the cold address and the recording commit, an operator schedules a change (a new record).
    race = async () => {
      race = undefined;
      await p.kv.set(coldAddressKey("sol"), {
        current: { address: COLD, since: new Date(0).toISOString() },
        pending: { address: OTHER_COLD, at: new Date().toISOString(), effectiveAt: "2999-01-01T00:00:00Z", by: "op" },
      });
    };
    assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "raced");
    assert.deepEqual(await listColdSweeps(p.kv, "sol"), [], "nothing recorded");
    assert.equal((await readHotWalletHolds(p.kv, "sol")).held, 0n, "nothing held");
    assert.deepEqual((await ledgerTxs(p.kv, "sol")).filter((x) => x.tx.kind === "payout"), [], "nothing sent");
    // The next look sees the waiting change and sweeps nothing until it takes effect.
    assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "blocked");
  } finally {
    await p.close();
  }
});

Deno.test("cold sweep on sim sol: a builder paying elsewhere than the cold address is refused before it is recorded", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n, chains: (kv, sim) => verifiedSim(kv, sim, { to: STRANGER }) });
  const ctx = withBand(p.ctx, { sol: { floor: 0n, target: 1n * SOL, ceiling: 2n * SOL } });
  const ledger = p.sim.ledger("sol");
  try {
    await ledger.submitNativeTransfer({
      from: SIM_DEPOSIT_SENDER.sol,
      to: defaultSimOperatorAddress("sol"),
      amount: 4n * SOL + NATIVE.sol.reserve,
    });
    await ledger.sealBlock();
    await setCold(p.kv, "sol", COLD);
    assert.equal(await coldSweepOnce(ctx, "sol", "test-cold", 60_000), "waiting");
    assert.deepEqual(await listColdSweeps(p.kv, "sol"), []);
    assert.equal(await ledger.balance(STRANGER, "native"), 0n);
    const alerts = [];
    for await (const e of p.kv.list<{ kind: string; message: string }>({ prefix: ["alert", "transaction_mismatch"] })) {
      alerts.push(e.value);
    }
    assert.equal(alerts.length, 1);
    assert.match(alerts[0].message, new RegExp(STRANGER));
  } finally {
    await p.close();
  }
});

Deno.test("cold sweep on sim doge: treasury coins to one output at the cold address, change back as a treasury coin", async () => {
  const p = await handPipeline({ chains: (kv, sim) => verifiedSim(kv, sim, { to: null }) });
  const genesis = 10n ** 16n; // the hand pipeline's sim UTXO genesis, in 8 coins
  const band = { floor: genesis / 10n, target: genesis / 4n, ceiling: genesis / 2n };
  const ctx = withBand(p.ctx, { doge: band });
  const ledger = p.sim.ledger("doge");
  const cold = "sim-doge-cold-vault";
  try {
    await setCold(p.kv, "doge", cold);
    assert.equal(await coldSweepOnce(ctx, "doge", "test-cold", 60_000), "recorded");
    const open = (await openColdSweep(p.kv, "doge"))!;
    assert.equal(open.amount, `${genesis - band.target}`);
    assert.equal(open.consumes?.kind, "outpoints");
    assert.ok(open.change, "change back to our change address");
    assert.equal((await coinTotals(p.kv, "doge")).locked > 0n, true, "its coins locked in the recording commit");
    for (let i = 0; i < 10 && (await openColdSweep(p.kv, "doge")); i++) {
      await ledger.sealBlock();
      await coldSweepOnce(ctx, "doge", "test-cold", 60_000);
    }
    const [done] = await listColdSweeps(p.kv, "doge");
    assert.equal(done.status, "completed");
    assert.equal(done.coldOutputs?.length, 1);
    assert.equal(done.coldOutputs![0].amount, open.amount);
    const totals = await coinTotals(p.kv, "doge");
    assert.equal(totals.locked, 0n);
    assert.equal(totals.confirmed, genesis - BigInt(open.amount) - BigInt(open.fee ?? "0"));
    assert.ok(totals.confirmed <= band.target && totals.confirmed >= band.floor, "hot is back within its band");
    assert.equal(await coldSweepOnce(ctx, "doge", "test-cold", 60_000), "idle");
  } finally {
    await p.close();
  }
});
