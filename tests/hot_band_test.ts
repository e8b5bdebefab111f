/**
 * The hot-wallet band and the `hot_wallet_refill` alert (config/hot_band.ts, actors/hot_band.ts; docs/operations.md
 * "Cold addresses"): on a real KV file with the sim sol ledger (a finite hot wallet, SIM_HOT_WALLET_GENESIS=0), the
 * checks tick's band check raises the alert below the floor with the exact amount, raises it when waiting payouts
 * exceed what is hot, clears it after a refill, and commits nothing at rest; the treasury report over the admin API (a
 * started server on the same KV file, real HTTP) shows the band and the refill wanted. Config refusals name the
 * variable.
 */
import assert from "node:assert/strict";
import { hotBandCheck } from "../actors/hot_band.ts";
import type { PipelineContext } from "../actors/context.ts";
import { NATIVE } from "../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { loadConfig } from "../config/env.ts";
import { loadSecrets } from "../config/secrets.ts";
import { buildServices, pipelineRuntime } from "../app.ts";
import { getAlert } from "../kv/alerts.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { stored } from "./support/chain_facts.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { handPipeline } from "./support/watch.ts";
import { runTask } from "./support/cli.ts";

const SOL = 1_000_000_000n; // lamports
const BAND = `${2n * SOL},${5n * SOL},${10n * SOL}`;
const OWNER = "0x" + "4d".repeat(20);
const COLD = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

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
  const del = kv.delete.bind(kv);
  kv.delete = ((k: Deno.KvKey) => (counter.n++, del(k))) as Deno.Kv["delete"];
  return counter;
}

Deno.test("config: <CHAIN>_HOT_BAND parsed to bigint; malformed or out of order refused naming the variable", () => {
  assert.deepEqual(loadConfig({}).hotBands, {});
  const c = loadConfig({ SOL_HOT_BAND: BAND, DOGE_HOT_BAND: "0, 5 ,5", XRP_HOT_BAND: "" });
  assert.deepEqual(c.hotBands, {
    sol: { floor: 2n * SOL, target: 5n * SOL, ceiling: 10n * SOL },
    doge: { floor: 0n, target: 5n, ceiling: 5n },
  });
  // Far above Number.MAX_SAFE_INTEGER: exact, never through a float.
  assert.equal(loadConfig({ SUI_HOT_BAND: "1,2,123456789012345678901" }).hotBands.sui?.ceiling, 123456789012345678901n);
  for (const bad of ["1,2", "1,2,3,4", "1.5,2,3", "-1,2,3", "1e9,2e9,3e9", "01,2,3", "a,b,c"]) {
    assert.throws(() => loadConfig({ ZEC_HOT_BAND: bad }), /ZEC_HOT_BAND must be floor,target,ceiling/, bad);
  }
  assert.throws(() => loadConfig({ SOL_HOT_BAND: "5,3,9" }), /SOL_HOT_BAND must have floor <= target <= ceiling/);
  assert.throws(() => loadConfig({ SOL_HOT_BAND: "1,9,5" }), /SOL_HOT_BAND must have floor <= target <= ceiling/);
});

Deno.test("hot_wallet_refill (sim sol, real KV, admin API over HTTP): below the floor, payouts waiting beyond what is hot, cleared after a refill, no commit at rest", async (t) => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  const env = { KV_PATH: p.kvPath, SIM_HOT_WALLET_GENESIS: "0", SOL_HOT_BAND: BAND };
  const config = loadConfig(env);
  // The hand pipeline's context with the band as configuration gives it (actors/settings_from_config.ts does the same).
  const ctx: PipelineContext = {
    ...p.ctx,
    settings: { ...p.ctx.settings, hotBand: (c) => config.hotBands[c] ?? null },
  };
  const server = await startTestServer(env);
  try {
    const reader = await operatorKeyFor(server, ["read"], "rita");
    const ledger = p.sim.ledger("sol");
    const hotWallet = defaultSimOperatorAddress("sol");
    const reserve = NATIVE.sol.reserve;
    const fund = async (amount: bigint) => {
      await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: hotWallet, amount });
      await ledger.sealBlock();
    };
    const report = async () => {
      const r = await call(server, "GET", "/admin/treasury/sol", { token: reader });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data;
    };

    await t.step("below the floor (empty hot wallet): raised with target - hot, naming the cold address", async () => {
      await p.kv.set(coldAddressKey("sol"), {
        current: { address: COLD, since: new Date(0).toISOString() },
        pending: null,
      });
      assert.deepEqual(await hotBandCheck(ctx, ["sol"]), { sol: 5n * SOL });
      const alert = await getAlert(p.kv, "hot_wallet_refill", "sol");
      assert.ok(alert, "raised");
      assert.equal(alert.chain, "sol");
      assert.match(alert.message, new RegExp(`^send ${5n * SOL} \\(smallest units of SOL\\) from cold \\(${COLD}\\)`));
      assert.match(alert.message, /it holds 0 spendable/);
      const band = (await report()).band;
      assert.deepEqual(band, {
        floor: `${2n * SOL}`,
        target: `${5n * SOL}`,
        ceiling: `${10n * SOL}`,
        hot: "0",
        waiting: "0",
        refill: `${5n * SOL}`,
        coldAddress: COLD,
      });
    });

    await t.step("at rest: a check that changes nothing commits nothing and counts nothing", async () => {
      const before = await getAlert(p.kv, "hot_wallet_refill", "sol");
      const commits = countCommits(p.kv);
      for (let i = 0; i < 3; i++) assert.deepEqual(await hotBandCheck(ctx, ["sol"]), { sol: 5n * SOL });
      assert.equal(commits.n, 0);
      assert.deepEqual(await getAlert(p.kv, "hot_wallet_refill", "sol"), before);
    });

    await t.step("within the band: cleared; at rest again, no commit", async () => {
      await fund(3n * SOL + reserve);
      assert.deepEqual(await hotBandCheck(ctx, ["sol"]), { sol: null });
      assert.equal(await getAlert(p.kv, "hot_wallet_refill", "sol"), null);
      const commits = countCommits(p.kv);
      await hotBandCheck(ctx, ["sol"]);
      assert.equal(commits.n, 0);
    });

    let big = "";
    await t.step("a payout waiting beyond what is hot: raised with target + waiting - hot", async () => {
      ({ ids: [big] } = await simBurnOrders(p, "sol", OWNER, 1, 4n * NATIVE.sol.uAsset.minimumBurnAmount));
      assert.equal(await stepNow(p, big), "moved");
      assert.equal(await stepNow(p, big), "waiting");
      assert.match((await stored(p.kv, big)).details.heldReason ?? "", /hot wallet cannot fund/);
      // hot 3 SOL is above the floor, but 4 SOL wait: 5 + 4 - 3.
      assert.deepEqual(await hotBandCheck(ctx, ["sol"]), { sol: 6n * SOL });
      const alert = await getAlert(p.kv, "hot_wallet_refill", "sol");
      assert.match(alert?.message ?? "", new RegExp(`^send ${6n * SOL} .*1 payout\\(s\\) wait for ${4n * SOL}`));
      const r = await report();
      assert.equal(r.band.refill, `${6n * SOL}`);
      assert.equal(r.band.hot, `${3n * SOL}`);
      assert.equal(r.band.waiting, `${4n * SOL}`);
      // The CLI, in its own process on the same KV file, as an operator runs it.
      const text = await runTask("admin", env, ["treasury", "--chain", "sol"]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(
        text.stdout,
        new RegExp(
          `hot-wallet band: floor 2 SOL, target 5 SOL, ceiling 10 SOL; hot 3 SOL, waiting ` +
            `4 SOL; REFILL wanted: send 6 SOL from cold \\(${COLD}\\)`,
        ),
      );
      assert.deepEqual(r.pendingPayouts.map((x: { orderId: string; fundable: boolean }) => [x.orderId, x.fundable]), [
        [big, false],
      ]);
    });

    await t.step("after the refill: cleared, the report wants none, and the payout goes", async () => {
      await fund(6n * SOL);
      assert.deepEqual(await hotBandCheck(ctx, ["sol"]), { sol: null });
      assert.equal(await getAlert(p.kv, "hot_wallet_refill", "sol"), null);
      const r = await report();
      assert.equal(r.band.refill, null);
      assert.equal(r.band.hot, `${9n * SOL}`);
      assert.equal(await stepNow(p, big), "moved");
      assert.equal((await stored(p.kv, big)).status, "burning");
    });
  } finally {
    await server.close();
    await p.close();
  }
});

Deno.test("the checks cron group runs the band check (sim doge treasury, real KV): raised once, unchanged at rest; no band, no tick", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hot-band-" });
  const genesis = 10n ** 16n; // config/env.ts SIM_UTXO_GENESIS_DEFAULT, spendable from the start
  const band = { floor: 2n * genesis, target: 3n * genesis, ceiling: 4n * genesis };
  const config = loadConfig({
    KV_PATH: `${dir}/kv.sqlite3`,
    PIPELINE: "on",
    DOGE_HOT_BAND: `${band.floor},${band.target},${band.ceiling}`,
  });
  const services = await buildServices(config, await loadSecrets(config, () => {}));
  try {
    services.pipeline!.log = () => {};
    const runtime = pipelineRuntime(services)!;
    assert.equal(runtime.ticks.find((k) => k.name === "hot band")?.group, "checks");
    runtime.startCronOnly();
    await runtime.runGroup("checks", 5_000);
    const alert = await getAlert(services.kv, "hot_wallet_refill", "doge");
    assert.match(
      alert?.message ?? "",
      new RegExp(`^send ${band.target - genesis} \\(smallest units of DOGE\\) from cold \\(no cold address set\\)`),
    );
    await runtime.runGroup("checks", 5_000);
    assert.deepEqual(await getAlert(services.kv, "hot_wallet_refill", "doge"), alert, "not counted again at rest");
    assert.equal(await getAlert(services.kv, "hot_wallet_refill", "sol"), null, "no band on sol: nothing alerted");
    await runtime.stop();
  } finally {
    services.kv.close();
  }
  const plain = await buildServices(loadConfig({ KV_PATH: `${dir}/plain.sqlite3`, PIPELINE: "on" }));
  try {
    plain.pipeline!.log = () => {};
    assert.equal(pipelineRuntime(plain)!.ticks.some((k) => k.name === "hot band"), false);
  } finally {
    plain.kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("treasury report without a band (admin API over HTTP): band null", async () => {
  const server = await startTestServer({});
  try {
    const reader = await operatorKeyFor(server, ["read"], "rita");
    const r = await call(server, "GET", "/admin/treasury/doge", { token: reader });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.data.band, null);
  } finally {
    await server.close();
  }
});
