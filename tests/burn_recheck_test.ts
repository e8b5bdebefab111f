/**
 * A burn is re-checked at confirmation (real anvil node for Base, sim Solana for the payout, watcher and order steps
 * driven by hand over a pipeline context built here). After a reorg the same signed transaction can be mined again
 * with other logs: a contract that sweeps its whole token balance to the transfer address emits X before the reorg and
 * Y after it, under one transaction hash. The X order must fail with the reorg message and the Y facts must become
 * their own order, paid once.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { stepOrder } from "../actors/order_actor.ts";
import type { Chains } from "../chains/adapter.ts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import type { Order } from "../model/order.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { payoutTxs, toWei, waitUntil } from "./support/chain_facts.ts";
import { compileSweeper } from "./support/sweeper.ts";
import { handPipeline, watchToTip } from "./support/watch.ts";
import { evmKvState } from "../kv/chain_state.ts";

const deployer = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const caller = privateKeyToAccount(ANVIL_PRIVATE_KEYS[3]);
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

async function orders(kv: Deno.Kv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const e of kv.list<Order>({ prefix: ["order"] })) out.push(e.value);
  return out;
}

Deno.test("anvil: a burn re-executed by a reorg with another amount fails at confirmation; the new amount is paid once", async () => {
  // safe = latest - 1: the finality tag is not what this test is about.
  const anvil = await startAnvil({ chainId: EVM.base.chainId, slotsInAnEpoch: 1 });
  try {
    const chain = defineChain({
      id: EVM.base.chainId,
      name: "anvil-base",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [anvil.url] } },
    });
    const client = createPublicClient({ chain, transport: http(anvil.url), cacheTime: 0 });
    const wallet = (account: typeof deployer) => createWalletClient({ account, chain, transport: http(anvil.url) });
    const mined = async (hash: Hex) => {
      const r = await client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
      assert.equal(r.status, "success");
      return r;
    };
    const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address);
    const sweeperCode = compileSweeper();
    const sweeper = (await mined(
      await wallet(deployer).deployContract({ ...sweeperCode, args: [TRANSFER_ADDRESS] }),
    )).contractAddress!;
    let funded = 0;
    const fund = async (amount: bigint) =>
      await mined(
        await wallet(minter).writeContract({
          address: uAssets.uSOL,
          abi: UASSET_ABI,
          functionName: "mint",
          args: [sweeper, amount, keccak256(toHex(`burn-recheck-test:fund:${funded++}`))],
        }),
      );
    const mine = (n: number) => anvilRpc(anvil.url, "anvil_mine", [toHex(n)]);

    const p = await handPipeline({
      transferAddress: TRANSFER_ADDRESS,
      live: { base: { confirmations: 2, blockMs: 20, startBlock: Number(await client.getBlockNumber()) } },
      chains: async (kv, sim): Promise<Chains> => {
        const evm = await evmChainAdapters({
          chain: "base",
          state: evmKvState(kv),
          urls: [anvil.url],
          account: minter,
          uAssets: uAssets as Record<UAsset, Address>,
          transferAddress: TRANSFER_ADDRESS,
        });
        return {
          reader: (c) => (c === "base" ? evm.reader : sim.reader(c)),
          minter: (c) => (c === "base" ? evm.minter : sim.minter(c)),
          payer: (c) => sim.payer(c),
        };
      },
    });
    try {
      const partner = sweeper.toLowerCase();
      await ensureUserWallet(p.kv, partner, "test-partner");
      assert.ok((await createBurnConfig(p.kv, partner, "sol", SOL_DESTINATION, null)).ok);
      await watchToTip(p.ctx, "base");

      const X = toWei("sol", 2_000_000_000n) + 5n;
      const Y = X + toWei("sol", 3_000_000_000n);
      await fund(X);
      const snapshot = await anvilRpc<Hex>(anvil.url, "evm_snapshot");
      // The sweep, signed once; its bytes are sent again after the reorg.
      const request = await wallet(caller).prepareTransactionRequest({
        to: sweeper,
        data: encodeFunctionData({ abi: sweeperCode.abi, functionName: "sweep", args: [uAssets.uSOL] }),
        gas: 200_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      const raw = await wallet(caller).signTransaction(request);
      const txHash = await client.sendRawTransaction({ serializedTransaction: raw });
      await mined(txHash);
      await mine(1);
      assert.equal(await watchToTip(p.ctx, "base"), 1);
      const [first] = await orders(p.kv);
      assert.equal(first.amount, X.toString());
      assert.equal(first.details.source.txHash, txHash.toLowerCase());

      // The reorg: back to before the sweep, the contract gets more, and the very same transaction is mined again.
      assert.equal(await anvilRpc(anvil.url, "evm_revert", [snapshot]), true);
      await fund(Y - X);
      assert.equal(await client.sendRawTransaction({ serializedTransaction: raw }), txHash);
      await mined(txHash);
      await mine(3);
      assert.equal(
        await watchToTip(p.ctx, "base"),
        0,
        "the watcher's dedupe key (chain, tx, index) skips the new facts",
      );

      const sol = p.sim.ledger("sol");
      const settle = async (id: string) =>
        await waitUntil(`order ${id} to end`, async () => {
          await stepOrder(p.ctx, id);
          await sol.sealBlock();
          const o = (await orders(p.kv)).find((x) => x.id === id)!;
          return ["completed", "failed", "cancelled"].includes(o.status) ? o : null;
        });
      // Three steps at once (a duplicate doorbell, two processes): one commit wins, the new facts are recorded once.
      const outcomes = await Promise.all([1, 2, 3].map(() => stepOrder(p.ctx, first.id)));
      assert.equal(outcomes.filter((o) => o === "moved").length, 1, JSON.stringify(outcomes));
      const failed = await settle(first.id);
      assert.equal(failed.status, "failed");
      assert.equal(failed.errorMessage, "Source transfer changed by a chain reorganization");
      assert.equal(failed.errorMessage, "Source transfer changed by a chain reorganization");
      assert.ok(failed.type === "burn" && failed.details.sourceChange?.new);
      const change = failed.details.sourceChange;
      assert.equal(change.old.amount, X.toString());
      assert.equal(change.new?.amount, Y.toString());
      assert.equal(change.new?.from, partner);
      assert.equal(change.new?.revision, 1);

      const all = await orders(p.kv);
      assert.equal(all.length, 2);
      const second = all.find((o) => o.id !== first.id)!;
      assert.deepEqual(change.newRecord, { orderId: second.id });
      assert.equal(second.amount, Y.toString());
      assert.deepEqual(
        { ...second.details.source, blockNumber: 0 },
        { chain: "base", txHash: txHash.toLowerCase(), index: 0, blockNumber: 0, revision: 1 },
      );
      const done = await settle(second.id);
      assert.equal(done.status, "completed", JSON.stringify(done));

      // Exactly one payout, of Y, on the destination chain.
      assert.equal((await payoutTxs(p.kv, "sol", first.id)).length, 0);
      const paid = await payoutTxs(p.kv, "sol", second.id);
      assert.equal(paid.length, 1);
      assert.equal(BigInt(paid[0].tx.amount), Y / 10n ** 9n);
      assert.equal(await sol.balance(SOL_DESTINATION, "native"), Y / 10n ** 9n);
      // A late step of either changes nothing.
      assert.equal(await stepOrder(p.ctx, first.id), "done");
      assert.equal(await stepOrder(p.ctx, second.id), "done");
      assert.equal((await orders(p.kv)).length, 2);
    } finally {
      await p.close();
    }
  } finally {
    await anvil.stop();
  }
});
