/**
 * Mints end to end over real HTTP on the embedded simulated chains: a deposit to a registered address becomes an
 * order that a partner sees move through its statuses, and the same amount of uAsset lands on the destination chain.
 */
import assert from "node:assert/strict";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, nativeToWei } from "../chains/catalog.ts";
import { getOrder } from "../kv/orders.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { balance, FAST_PIPELINE, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

Deno.test("a deposit on every native chain mints the same amount on its destination chain", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    const deposits = new Map<string, { chain: string; dest: string; amount: bigint }>();
    for (const [i, chain] of NATIVE_CHAINS.entries()) {
      const dest = EVM_CHAINS[i];
      const created = await call(server, "POST", "/mint/wallets", { token, body: { chain, destinationChain: dest } });
      const amount = NATIVE[chain].minimumDeposit * 3n + BigInt(i);
      const tx = await sim(server, "deposits", {
        chain,
        address: created.body.data.address,
        amount: amount.toString(),
      });
      assert.match(String(tx.txHash), /\w{20,}/);
      assert.equal(typeof tx.blockNumber, "number");
      deposits.set(tx.txHash, { chain, dest, amount });
    }
    const seen = new Map<string, string[]>();
    const orders = await waitForOrders(server, token, (o) => o.length === 5 && o.every(terminal), { seen });
    for (const o of orders) {
      const source = (await getOrder(server.services.kv, o.id)).value!.details.source;
      const d = deposits.get(source.txHash)!;
      assert.equal(o.status, "completed", JSON.stringify(o));
      assert.equal(o.type, "mint");
      assert.equal(o.sourceChain, d.chain);
      assert.equal(o.destinationChain, d.dest);
      assert.equal(o.token, NATIVE[d.chain as keyof typeof NATIVE].token.symbol);
      assert.equal(o.amount, d.amount.toString());
      assert.equal(o.sourceWallet, SIM_DEPOSIT_SENDER[d.chain]);
      assert.equal(o.destinationWallet, wallet.toLowerCase());
      assert.equal(o.workflowId, `order-actor-${o.id}`);
      assert.match(o.transactionHash, /^0x[0-9a-f]{64}$/);
      assert.equal(o.errorMessage, null);
      assert.notEqual(o.updatedAt, null);
      const uAsset = NATIVE[d.chain as keyof typeof NATIVE].uAsset.symbol;
      const minted = await balance(server, d.dest, wallet, uAsset);
      assert.equal(minted, nativeToWei(d.chain as keyof typeof NATIVE, d.amount));
      const statuses = seen.get(o.id)!;
      assert.equal(statuses.at(-1), "completed");
      assert.deepEqual(statuses, [...new Set(statuses)], "never goes back");
    }
    const everSeen = new Set([...seen.values()].flat());
    assert.ok(everSeen.has("pending"), `a polling partner sees orders pending: ${[...everSeen]}`);
  } finally {
    await server.close();
  }
});
