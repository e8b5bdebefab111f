/**
 * The controls under races, stepped by hand on the sim chains: two orders that read the same day usage cannot both
 * squeeze under a per-day cap (the usage is checked by version in the commit that records the payout), and a pause
 * committed after a step read the controls stops that step's recording (the controls are checked too). A hold stored
 * before holds had kinds is a reorg hold.
 */
import assert from "node:assert/strict";
import { stepOrder } from "../actors/order_actor.ts";
import { getAlert } from "../kv/alerts.ts";
import { heldList } from "../actors/ops/held.ts";
import type { OpContext } from "../actors/ops/op.ts";
import { addControlsUpdate, getControls, getDayUsage, utcDay } from "../kv/controls.ts";
import { listOrderHolds, orderHoldKey } from "../kv/pipeline.ts";
import { allOrders, simBurnOrders, stepNow } from "./support/burns.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { stored } from "./support/chain_facts.ts";
import { handPipeline, watchToTip } from "./support/watch.ts";

const OWNER = "0x" + "c3".repeat(20);

/** `kv` whose reads of `prefix` keys return only once `n` such reads are under way (then `after` runs once). */
function gatedKv(kv: Deno.Kv, prefix: string, n: number, after?: () => Promise<void>): Deno.Kv {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "get") {
        return async (key: Deno.KvKey, opts?: { consistency?: Deno.KvConsistencyLevel }) => {
          const entry = await target.get(key, opts);
          if (key[0] === prefix) {
            if (++arrived === n) {
              await after?.();
              open();
            }
            await gate;
          }
          return entry;
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function toProcessing(p: Awaited<ReturnType<typeof handPipeline>>, id: string) {
  for (let i = 0; i < 10 && (await stored(p.kv, id)).status === "pending"; i++) await stepNow(p, id);
  assert.equal((await stored(p.kv, id)).status, "processing");
}

/** Two sol deposits of `amount`, minting to different EVM chains (no nonce shared), confirmed: processing. */
async function twoMints(p: Awaited<ReturnType<typeof handPipeline>>, amount: bigint): Promise<string[]> {
  await ensureUserWallet(p.kv, OWNER, "test-partner");
  const ledger = p.sim.ledger("sol");
  for (const evm of ["base", "arbitrum"] as const) {
    const wallet = await createMintWallet(p.kv, OWNER, "sol", evm, (c, i) => `${c}-deposit-${i}`);
    assert.ok(wallet.ok);
    await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: wallet.wallet.address, amount });
  }
  for (let i = 0; i < 3; i++) await ledger.sealBlock();
  assert.equal(await watchToTip(p.ctx, "sol"), 2);
  const ids = (await allOrders(p.kv)).map((o) => o.id);
  for (const id of ids) await toProcessing(p, id);
  return ids;
}

Deno.test("per-day cap: two orders reading the same usage at once; exactly one records its mint", async () => {
  const p = await handPipeline();
  try {
    const amount = 50_000_000n;
    const ids = await twoMints(p, amount);
    const { entry } = await getControls(p.kv);
    const next = { pausedChains: {}, pausedAssets: {}, caps: { uSOL: { perDay: (amount * 3n / 2n).toString() } } };
    assert.ok((await addControlsUpdate(p.kv.atomic(), entry, next).commit()).ok);

    const racing = { ...p.ctx, kv: gatedKv(p.kv, "control_usage", 2) };
    const outcomes = await Promise.all(ids.map((id) => stepOrder(racing, id)));
    assert.deepEqual([...outcomes].sort(), ["conflict", "moved"]);
    const loser = ids[outcomes.indexOf("conflict")];
    assert.equal((await stored(p.kv, loser)).details.intent, undefined, "the loser recorded nothing");
    const day = utcDay(p.ctx.now());
    assert.equal((await getDayUsage(p.kv, "uSOL", day)).value?.used, amount.toString());

    // Its next step sees the usage and holds it for an operator.
    assert.equal(await stepOrder(p.ctx, loser), "waiting");
    const [hold] = await listOrderHolds(p.kv);
    assert.deepEqual([hold.orderId, hold.hold.kind, hold.hold.caps], [loser, "cap", ["perDay"]]);
    assert.match((await stored(p.kv, loser)).details.heldReason!, /above the per-day cap/);
  } finally {
    await p.close();
  }
});

Deno.test("a pause committed after a step read the controls stops that step's recording", async () => {
  const p = await handPipeline();
  try {
    const { ids: [id] } = await simBurnOrders(p, "sol", OWNER, 1);
    await toProcessing(p, id);
    const pause = async () => {
      const { controls, entry } = await getControls(p.kv);
      const next = { ...controls, pausedChains: { sol: { by: "t", at: new Date().toISOString(), reason: "now" } } };
      assert.ok((await addControlsUpdate(p.kv.atomic(), entry, next).commit()).ok);
    };
    const late = { ...p.ctx, kv: gatedKv(p.kv, "controls", 1, pause) };
    assert.equal(await stepOrder(late, id), "conflict");
    assert.equal((await stored(p.kv, id)).details.intent, undefined);
    assert.equal(await stepOrder(p.ctx, id), "waiting");
    assert.equal((await stored(p.kv, id)).details.heldReason, "paused by operator: chain sol (now)");
  } finally {
    await p.close();
  }
});

Deno.test("a hold stored without a kind is listed as a reorg hold", async () => {
  const p = await handPipeline();
  try {
    const { ids: [id] } = await simBurnOrders(p, "sol", OWNER, 1);
    const legacy = { reason: "a reorg on doge", at: "2026-01-01T00:00:00.000Z", alert: { kind: "x", subject: "y" } };
    await p.kv.set(orderHoldKey(id), legacy);
    const ctx = { kv: p.kv, by: "t", now: () => new Date() } as unknown as OpContext;
    const { held } = await heldList.run(ctx, {});
    assert.deepEqual(held.map((h) => [h.id, h.kind, h.reason, h.order?.id]), [
      [`order:${id}`, "reorg", "a reorg on doge", id],
    ]);
  } finally {
    await p.close();
  }
});

/** `kv` that "crashes" after the first commit writing an order hold: every later commit throws, as a killed process. */
function crashAfterHoldKv(kv: Deno.Kv): Deno.Kv {
  let crashed = false;
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          let writesHold = false;
          const set = op.set.bind(op);
          op.set = (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
            if (key[0] === "order_hold") writesHold = true;
            return set(key, value, options);
          };
          const commit = op.commit.bind(op);
          op.commit = async () => {
            if (crashed) throw new Error("killed");
            const res = await commit();
            if (res.ok && writesHold) crashed = true;
            return res;
          };
          return op;
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("a cap hold and its cap_exceeded alert are one commit: a crash right after never leaves one alone", async () => {
  const p = await handPipeline();
  try {
    const amount = 50_000_000n;
    const [id] = await twoMints(p, amount);
    const { entry } = await getControls(p.kv);
    const next = { pausedChains: {}, pausedAssets: {}, caps: { uSOL: { perOrder: (amount - 1n).toString() } } };
    assert.ok((await addControlsUpdate(p.kv.atomic(), entry, next).commit()).ok);
    await stepOrder({ ...p.ctx, kv: crashAfterHoldKv(p.kv) }, id).catch(() => "killed");
    assert.ok((await p.kv.get(orderHoldKey(id))).value, "held");
    const alert = await getAlert(p.kv, "cap_exceeded", id);
    assert.ok(alert, "the hold's alert was written with it");
    assert.match(alert.message, /above the per-order cap/);
  } finally {
    await p.close();
  }
});
