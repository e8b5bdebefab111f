/**
 * Order failures: each kind has exactly one partner-facing message and no two kinds share one, orders stored before
 * kinds existed get theirs from the message they carry, and every failing move stores the kind with the message.
 * Expected texts are the spec's literal strings (spec 2.4), not the module's table. The last test runs the order actor
 * and an operator retry on a real KV file with the sim chains, steps driven by hand.
 */
import { makeOrder } from "./support/orders.ts";
import assert from "node:assert/strict";
import { applyOperatorEvent } from "../actors/operator.ts";
import { stepOrder } from "../actors/order_actor.ts";
import { errorKindOf, retryTarget } from "../actors/transition.ts";
import { NATIVE } from "../chains/catalog.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { getOrder, updateOrder } from "../kv/orders.ts";
import { type Order, toOrderView } from "../model/order.ts";
import { ensureUserWallet, setUserWalletStatus } from "../kv/user_wallets.ts";
import { ORDER_ERROR_KINDS, ORDER_ERRORS } from "../messages.ts";
import { handPipeline, watchToTip } from "./support/watch.ts";

const SPEC_TEXTS = {
  insufficient_deposit: "Insufficient deposit amount",
  wallet_inactive: "Wallet address inactive",
  confirmation_timeout: "Blockchain confirmation timeout",
  minting_error: "Minting contract error",
  below_minimum_burn: "Amount below minimum burn",
  invalid_destination: "Invalid destination address",
  payout_failed: "Transaction failed on destination chain",
  source_changed: "Source transfer changed by a chain reorganization",
};

const OWNER = "0x" + "ab".repeat(20);

function failedMint(errorMessage: string | null, errorKind?: Order["errorKind"]): Order {
  const pending = makeOrder(OWNER, "mint", "pending", 0);
  return { ...pending, status: "failed", errorMessage, ...(errorKind === undefined ? {} : { errorKind }) };
}

Deno.test("order errors: every kind has exactly one message, the spec's, and no message serves two kinds", () => {
  assert.deepEqual(Object.fromEntries(ORDER_ERROR_KINDS.map((k) => [k, ORDER_ERRORS[k]])), SPEC_TEXTS);
  const messages = Object.values(ORDER_ERRORS);
  assert.equal(new Set(messages).size, messages.length, "a message names one kind only");
});

Deno.test("order errors: an order stored before kinds gets its kind from its message, once, in transition.ts", () => {
  for (const [kind, text] of Object.entries(SPEC_TEXTS)) {
    assert.equal(errorKindOf(failedMint(text)), kind, text);
  }
  assert.equal(errorKindOf(failedMint("an operator's note")), undefined);
  assert.equal(errorKindOf(failedMint(null)), undefined);
  // A stored kind wins over the text, whatever the text says.
  assert.equal(errorKindOf(failedMint("Minting contract error", "insufficient_deposit")), "insufficient_deposit");
  assert.equal(retryTarget(failedMint("Minting contract error", "insufficient_deposit")), undefined);
  assert.equal(retryTarget(failedMint("Insufficient deposit amount", "minting_error")), "processing");
  assert.equal(retryTarget(failedMint("Blockchain confirmation timeout")), "pending", "an old order still retries");
});

Deno.test("order errors on a real KV: the kind is stored beside the message, never served, and a retry reads the kind", async () => {
  const p = await handPipeline();
  try {
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const created = await createMintWallet(p.kv, OWNER, "sol", "base", (c, i) => `${c}-deposit-${i}`);
    assert.ok(created.ok);
    const ledger = p.sim.ledger("sol");
    const failOne = async (amount: bigint): Promise<Order> => {
      const before = new Set((await ordersOf(p.kv)).map((o) => o.id));
      await ledger.submitNativeTransfer({ from: "sol-outsider", to: created.wallet.address, amount });
      for (let i = 0; i < 3; i++) await ledger.sealBlock();
      assert.equal(await watchToTip(p.ctx, "sol"), 1);
      const order = (await ordersOf(p.kv)).find((o) => !before.has(o.id))!;
      for (let i = 0; i < 5 && (await getOrder(p.kv, order.id)).value!.status !== "failed"; i++) {
        await stepOrder(p.ctx, order.id);
      }
      return (await getOrder(p.kv, order.id)).value!;
    };

    const small = await failOne(NATIVE.sol.minimumDeposit - 1n);
    assert.equal(small.errorMessage, "Insufficient deposit amount");
    assert.equal(small.errorKind, "insufficient_deposit");
    assert.equal("errorKind" in toOrderView(small), false, "the kind is internal");
    assert.equal((await applyOperatorEvent(p.kv, small.id, { type: "retry", confirmBy: T_FAR })).ok, false);

    await setUserWalletStatus(p.kv, OWNER, "inactive");
    const inactive = await failOne(NATIVE.sol.minimumDeposit);
    assert.equal(inactive.errorMessage, "Wallet address inactive");
    assert.equal(inactive.errorKind, "wallet_inactive");
    // The partner-facing text is reworded after the order failed: the retry decision does not change.
    await updateOrder(p.kv, inactive.id, (o) => ({ ...o, errorMessage: "Your wallet was switched off" }));
    await setUserWalletStatus(p.kv, OWNER, "active");
    const retried = await applyOperatorEvent(p.kv, inactive.id, { type: "retry", confirmBy: T_FAR });
    assert.ok(retried.ok, JSON.stringify(retried));
    assert.equal(retried.order.status, "processing");
    assert.equal(retried.order.errorKind, null);
    assert.equal(retried.order.errorMessage, null);
  } finally {
    await p.close();
  }
});

const T_FAR = "2100-01-01T00:00:00.000Z";

async function ordersOf(kv: Deno.Kv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const e of kv.list<Order>({ prefix: ["order"] })) out.push(e.value);
  return out;
}
