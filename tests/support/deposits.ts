/**
 * A deposit on a sim chain minted to Base, made as the pipeline makes it: a deposit address for `owner`, a native
 * transfer sealed and scanned, the mint order stepped until completed (its completing commit marks the deposit due
 * for a sweep on the account chains). For a pipeline without another mint.
 */
import assert from "node:assert/strict";
import type { NativeChain } from "../../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../../chains/sim/commands.ts";
import { createMintWallet } from "../../kv/mint_wallets.ts";
import { ensureUserWallet } from "../../kv/user_wallets.ts";
import type { Order } from "../../model/order.ts";
import { allOrders, stepNow } from "./burns.ts";
import { stored } from "./chain_facts.ts";
import { type HandPipeline, watchToTip } from "./watch.ts";

export async function mintedSimDeposit(
  p: HandPipeline,
  chain: NativeChain,
  owner: string,
  amount: bigint,
): Promise<{ deposit: string; mint: Order }> {
  const ledger = p.sim.ledger(chain);
  const base = p.sim.ledger("base");
  await ensureUserWallet(p.kv, owner, "test-partner");
  const wallet = await createMintWallet(p.kv, owner, chain, "base", (c, i) => `${c}-deposit-${i}`);
  assert.ok(wallet.ok);
  const deposit = wallet.wallet.address;
  await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER[chain], to: deposit, amount });
  for (let i = 0; i < 3; i++) await ledger.sealBlock();
  assert.equal(await watchToTip(p.ctx, chain), 1);
  const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint");
  assert.equal(mints.length, 1, "one mint in the pipeline: this deposit's");
  const [mint] = mints;
  for (let i = 0; i < 20 && (await stored(p.kv, mint.id)).status !== "completed"; i++) {
    await stepNow(p, mint.id);
    await ledger.sealBlock();
    await base.sealBlock();
  }
  assert.equal((await stored(p.kv, mint.id)).status, "completed");
  return { deposit, mint: await stored(p.kv, mint.id) };
}
