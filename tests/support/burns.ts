/** Burn orders on the sim chains, made as the watcher makes them: a uAsset transfer on sim base, sealed and scanned. */
import assert from "node:assert/strict";
import { stepOrder } from "../../actors/order_actor.ts";
import { NATIVE, type NativeChain } from "../../chains/catalog.ts";
import { createBurnConfig, getBurnConfig } from "../../kv/burn_configs.ts";
import { getOrder } from "../../kv/orders.ts";
import { type Order } from "../../model/order.ts";
import { ensureUserWallet } from "../../kv/user_wallets.ts";
import { toWei } from "./chain_facts.ts";
import { type HandPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./watch.ts";

/** A valid payout destination per native chain. */
export const SIM_DESTINATION: Record<NativeChain, string> = {
  sol: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  xrp: "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh",
  sui: "0x" + "ab".repeat(32),
  zec: "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F",
  doge: "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC",
};

/**
 * `count` burn orders of `burn` wei (default: the minimum burn) from `owner` to `chain`, detected by the watcher
 * (pending); returns their ids and the native amount each pays (a whole number of native units: no remainder).
 */
export async function simBurnOrders(
  p: HandPipeline,
  chain: NativeChain,
  owner: string,
  count = 1,
  burn = NATIVE[chain].uAsset.minimumBurnAmount,
) {
  await ensureUserWallet(p.kv, owner, "test-partner");
  if (!(await getBurnConfig(p.kv, owner, chain))) {
    assert.ok((await createBurnConfig(p.kv, owner, chain, SIM_DESTINATION[chain], null)).ok);
  }
  const base = p.sim.ledger("base");
  const asset = NATIVE[chain].uAsset.symbol;
  const payout = burn / 10n ** BigInt(18 - NATIVE[chain].token.decimals);
  assert.equal(toWei(chain, payout), burn);
  await base.faucet({ address: owner, asset, amount: burn * BigInt(count) });
  for (let i = 0; i < count; i++) {
    assert.ok((await base.submitErc20Transfer({ from: owner, to: SIM_TRANSFER_ADDRESS, asset, amount: burn })).ok);
  }
  for (let i = 0; i < 3; i++) await base.sealBlock();
  const before = new Set((await allOrders(p.kv)).map((o) => o.id));
  assert.equal(await watchToTip(p.ctx, "base"), count);
  const ids = (await allOrders(p.kv)).map((o) => o.id).filter((id) => !before.has(id));
  return { ids, payout };
}

/** Steps an order with the context's clock moved past any wait. */
export async function stepNow(p: HandPipeline, id: string) {
  p.advance(3_600_000);
  return await stepOrder(p.ctx, id);
}

export async function allOrders(kv: Deno.Kv): Promise<Order[]> {
  return (await Array.fromAsync(kv.list<Order>({ prefix: ["order"] }))).map((e) => e.value);
}

/**
 * Steps every order of `mints` until each is completed (at most 20 rounds), calling `round` after each round so the
 * chains make the blocks the mints wait for; asserts they all completed.
 */
export async function completeMints(p: HandPipeline, mints: readonly Order[], round: () => unknown): Promise<void> {
  const statuses = async () => await Promise.all(mints.map(async (m) => (await getOrder(p.kv, m.id)).value?.status));
  for (let i = 0; i < 20 && (await statuses()).some((s) => s !== "completed"); i++) {
    for (const m of mints) await stepNow(p, m.id);
    await round();
  }
  assert.deepEqual(await statuses(), mints.map(() => "completed"), "every mint completed");
}
