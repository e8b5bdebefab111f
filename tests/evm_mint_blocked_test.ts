/**
 * A mint order meets a uAsset its admin paused or capped (real anvil, real minter, order actor steps on a real KV):
 * the order waits with the reason recorded instead of failing, and mints once the admin lifts the block. A mint that
 * was broadcast just before the pause and reverted on chain waits the same way, and its dead attempt stays on record.
 */
import assert from "node:assert/strict";
import { createWalletClient, type Hex, http, keccak256, parseUnits, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { EVM } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { type PipelineContext, pipelineSettings } from "../actors/context.ts";
import { stepOrder } from "../actors/order_actor.ts";
import { applyOperatorEvent } from "../actors/operator.ts";
import { createOrder, getOrder } from "../kv/orders.ts";
import { newOrderId, type Order } from "../model/order.ts";
import { openKv } from "../kv/open.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ANVIL_PRIVATE_KEYS, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { evmKvState } from "../kv/chain_state.ts";

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;
const admin = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const owner = privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]).address.toLowerCase();
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;
const LAMPORTS = 1_000_000_000n;

class Crash extends Error {}

Deno.test("a mint refused by a paused or capped uAsset waits with the reason on the order (anvil)", async (t) => {
  // safe = latest: the finality tag is not what this test is about.
  const anvil = await startAnvil({ chainId: CHAIN_ID, slotsInAnEpoch: 0 });
  const dir = await Deno.makeTempDir({ prefix: "evm-mint-blocked-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address, {
      chain: CHAIN,
      supplyCap: "100",
    });
    const { client, reader, minter: evmMinter } = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minter,
      uAssets,
      transferAddress: TRANSFER_ADDRESS,
    });
    const adminWallet = createWalletClient({ account: admin, chain: client.chain, transport: http(anvil.url) });
    const asAdmin = async (
      call: { functionName: "pause" | "unpause" } | { functionName: "setSupplyCap"; args: [bigint] },
    ) => {
      const hash = await adminWallet.writeContract({ address: uAssets.uSOL, abi: UASSET_ABI, ...call } as never);
      assert.equal(
        (await client.waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 10 })).status,
        "success",
      );
    };
    const balance = () =>
      client.readContract({ address: uAssets.uSOL, abi: UASSET_ABI, functionName: "balanceOf", args: [owner as Hex] });

    let clock = Date.parse("2026-01-01T00:00:00Z");
    let crashAt: string | null = null;
    const ctx: PipelineContext = {
      kv,
      chains: {
        reader: () => reader,
        minter: () => evmMinter,
        payer: () => assert.fail("no payouts here"),
      },
      settings: pipelineSettings({
        blockMs: 100,
        confirmationTimeoutMs: 60_000,
        transferAddress: TRANSFER_ADDRESS,
        live: { [CHAIN]: { confirmations: 1, blockMs: 100, startBlock: 0 } },
      }),
      now: () => new Date(clock),
      log: () => {},
      faultPoint: (point) => {
        if (point === crashAt) throw new Crash(point);
      },
    };
    /** One step of the order, as the runtime would take it once its backoff has passed. */
    const step = async (id: string) => {
      clock += 60_000;
      return await stepOrder(ctx, id);
    };
    const order = async (id: string) => (await getOrder(kv, id)).value!;
    await ensureUserWallet(kv, owner, "partner-1");
    const newMintOrder = async (label: string, sol: bigint) => {
      const id = newOrderId(clock);
      const o: Order = {
        id,
        type: "mint",
        status: "processing",
        sourceChain: "sol",
        destinationChain: CHAIN,
        token: "SOL",
        amount: (sol * LAMPORTS).toString(),
        sourceWallet: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
        destinationWallet: owner,
        workflowId: `order-actor-${id}`,
        transactionHash: null,
        errorMessage: null,
        createdAt: new Date(clock).toISOString(),
        updatedAt: null,
        owner,
        details: {
          source: { chain: "sol", txHash: `sim-${label}`, index: 0, blockNumber: 1 },
          depositId: keccak256(toHex(label)),
          confirmBy: new Date(clock + 3_600_000).toISOString(),
        },
      };
      assert.ok(await createOrder(kv, o));
      return id;
    };

    await t.step("paused: the order waits in processing with the reason; unpaused, it mints", async () => {
      const id = await newMintOrder("paused", 1n);
      await asAdmin({ functionName: "pause" });
      for (let i = 0; i < 2; i++) {
        assert.equal(await step(id), "waiting");
        const o = await order(id);
        assert.equal(o.status, "processing");
        assert.equal(o.errorMessage, null);
        assert.match(String(o.details.lastTransientError), /uSOL is paused by its admin/);
      }
      await asAdmin({ functionName: "unpause" });
      assert.equal(await step(id), "moved");
      assert.equal((await order(id)).status, "minting");
      assert.equal(await step(id), "moved");
      assert.equal((await order(id)).status, "completed");
      assert.equal(await balance(), parseUnits("1", 18));
    });

    await t.step(
      "above the supply cap: the order waits with cap and would-be supply; a raised cap lets it mint",
      async () => {
        const id = await newMintOrder("capped", 150n);
        assert.equal(await step(id), "waiting");
        const o = await order(id);
        assert.equal(o.status, "processing");
        const wouldBe = parseUnits("151", 18);
        assert.match(
          String(o.details.lastTransientError),
          new RegExp(`supply to ${wouldBe}, above the cap of ${parseUnits("100", 18)}`),
        );
        await asAdmin({ functionName: "setSupplyCap", args: [parseUnits("1000", 18)] });
        assert.equal(await step(id), "moved");
        assert.equal(await step(id), "moved");
        assert.equal((await order(id)).status, "completed");
        assert.equal(await balance(), wouldBe);
      },
    );

    await t.step("paused after signing: the reverted mint waits with the reason, then fails on record", async () => {
      const id = await newMintOrder("paused after signing", 2n);
      crashAt = "after-record"; // recorded, never sent: the next step broadcasts it
      await assert.rejects(() => step(id), Crash);
      crashAt = null;
      const intent = (await order(id)).details.intent!;
      await asAdmin({ functionName: "pause" });
      assert.equal(await step(id), "waiting"); // sent now, mined, reverted (paused)
      const receipt = await client.getTransactionReceipt({ hash: intent.txHash as Hex });
      assert.equal(receipt.status, "reverted");
      assert.equal(await step(id), "waiting");
      const waiting = await order(id);
      assert.equal(waiting.status, "minting", "not failed while the admin's pause is what refused it");
      assert.match(String(waiting.details.lastTransientError), /paused by its admin.*reverted/);
      await asAdmin({ functionName: "unpause" });
      assert.equal(await step(id), "moved");
      const failed = await order(id);
      assert.equal(failed.status, "failed");
      assert.equal(failed.errorMessage, "Minting contract error");
      assert.deepEqual(failed.details.failedIntents?.map((i) => i.txHash), [intent.txHash]);
      assert.match(String(failed.details.lastTransientError), /paused by its admin/, "the reason stays on record");
      // An operator retry signs a new mint, which lands.
      assert.ok(
        (await applyOperatorEvent(kv, id, { type: "retry", confirmBy: new Date(clock).toISOString() }, new Date(clock)))
          .ok,
      );
      assert.equal(await step(id), "moved");
      assert.equal(await step(id), "moved");
      assert.equal((await order(id)).status, "completed");
      assert.equal(await balance(), parseUnits("153", 18));
    });
  } finally {
    kv.close();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
