/**
 * What records a burn transfer makes when a reorg re-executes its transaction with other facts (real anvil node for
 * Base, sim Solana for the payout, watcher and order steps driven by hand). The same signed transaction, sent again
 * after `evm_revert`, calls a contract whose stored sender and recipient the "reorg" changed:
 * - it pays another address instead of the transfer address: the order fails and nothing new is recorded (the reader
 *   shows only transfers to the transfer address; no payout, no held record). The same with a reader that shows the
 *   transfer to the other address (as the sim's `transfersOf` does): it made a new order at every step before the fix;
 * - it moves another sender's uAssets, a sender with no burn configuration: the order fails, a held transfer of
 *   revision 1 records the new facts, nothing is paid;
 * - repeated reorgs, each re-executing it with other facts before its order confirmed: each superseded order fails in
 *   the commit that records its successor (one live order per transfer at any time), steps of a settled record add
 *   nothing, and exactly one payout is made, of the facts the chain ends with.
 */
import assert from "node:assert/strict";
import {
  type Abi,
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  maxUint256,
  toHex,
  TransactionReceiptNotFoundError,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { stepOrder } from "../actors/order_actor.ts";
import type { Chains, ObservedTransfer } from "../chains/adapter.ts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import type { Order } from "../model/order.ts";
import { type HeldTransfer, listHeld } from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { payoutTxs, toWei, waitUntil } from "./support/chain_facts.ts";
import { countKeys, handPipeline, watchToTip } from "./support/watch.ts";
import { compileTestContract } from "./support/sweeper.ts";
import { evmKvState } from "../kv/chain_state.ts";

const deployer = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const caller = privateKeyToAccount(ANVIL_PRIVATE_KEYS[3]);
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;
/** A holder without a burn configuration. */
const stranger = privateKeyToAccount(ANVIL_PRIVATE_KEYS[6]);
/** A holder with its own burn configuration. */
const other = privateKeyToAccount(ANVIL_PRIVATE_KEYS[7]);
const ELSEWHERE = "0x" + "e1".repeat(20) as Address;
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const OTHER_SOL_DESTINATION = "So11111111111111111111111111111111111111112";

/** Moves a token balance from a stored sender (none: itself) to a stored recipient: what a reorg changes. */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20 {
  function balanceOf(address who) external view returns (uint256);
  function transfer(address to, uint256 amount) external returns (bool);
  function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

contract Redirector {
  address public source;
  address public target;

  constructor(address target_) {
    target = target_;
  }

  function set(address source_, address target_) external {
    source = source_;
    target = target_;
  }

  function move(IERC20 token) external {
    address from = source == address(0) ? address(this) : source;
    uint256 amount = token.balanceOf(from);
    if (from == address(this)) require(token.transfer(target, amount), "transfer failed");
    else require(token.transferFrom(from, target, amount), "transferFrom failed");
  }
}
`;

function compileRedirector(): { abi: Abi; bytecode: Hex } {
  return compileTestContract("Redirector", SOURCE);
}

async function orders(kv: Deno.Kv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const e of kv.list<Order>({ prefix: ["order"] })) out.push(e.value);
  return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

const X = toWei("sol", 2_000_000_000n) + 5n;
const Y = X + toWei("sol", 3_000_000_000n);
const Z = X + toWei("sol", 1_000_000_000n);

/**
 * One anvil chain with a Redirector funded with X uSOL and pointed at the transfer address, its partner configured to
 * burn to Solana, `stranger` and `other` approving it; the move sent once and its order recorded. `widened`: Base's reader shows every uAsset transfer of a transaction.
 */
async function scenario(
  test: (s: {
    p: Awaited<ReturnType<typeof handPipeline>>;
    txHash: Hex;
    first: Order;
    /** Back to before the move (a reorg), `change` applied, the same bytes mined again, the watcher at the tip. */
    reorg: (change: () => Promise<void>) => Promise<number>;
    set: (source: Address, target: Address) => Promise<void>;
    mintTo: (to: Address, amount: bigint) => Promise<void>;
    settle: (id: string) => Promise<Order>;
    partner: string;
  }) => Promise<void>,
  opts: { widened?: boolean } = {},
) {
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
    const mine = (n: number) => anvilRpc(anvil.url, "anvil_mine", [toHex(n)]);
    const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address);
    const code = compileRedirector();
    const redirector = (await mined(
      await wallet(deployer).deployContract({ ...code, args: [TRANSFER_ADDRESS] }),
    )).contractAddress!;
    let minted = 0;
    const mintTo = async (to: Address, amount: bigint) =>
      void await mined(
        await wallet(minter).writeContract({
          address: uAssets.uSOL,
          abi: UASSET_ABI,
          functionName: "mint",
          args: [to, amount, keccak256(toHex(`burn-reorg-facts-test:${minted++}`))],
        }),
      );
    const set = async (source: Address, target: Address) =>
      void await mined(
        await wallet(deployer).writeContract({
          address: redirector,
          abi: code.abi,
          functionName: "set",
          args: [source, target],
        }),
      );
    for (const holder of [stranger, other]) {
      await mined(
        await wallet(holder).writeContract({
          address: uAssets.uSOL,
          abi: UASSET_ABI,
          functionName: "approve",
          args: [redirector, maxUint256],
        }),
      );
    }

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
        const base = opts.widened
          ? { ...evm.reader, transfersOf: (h: string) => everyTransferOf(client, uAssets, h) }
          : evm.reader;
        return {
          reader: (c) => (c === "base" ? base : sim.reader(c)),
          minter: (c) => (c === "base" ? evm.minter : sim.minter(c)),
          payer: (c) => sim.payer(c),
        };
      },
    });
    try {
      const partner = redirector.toLowerCase();
      await ensureUserWallet(p.kv, partner, "test-partner");
      assert.ok((await createBurnConfig(p.kv, partner, "sol", SOL_DESTINATION, null)).ok);
      await ensureUserWallet(p.kv, other.address.toLowerCase(), "test-other");
      assert.ok((await createBurnConfig(p.kv, other.address.toLowerCase(), "sol", OTHER_SOL_DESTINATION, null)).ok);
      await watchToTip(p.ctx, "base");

      await mintTo(redirector, X);
      let snapshot = await anvilRpc<Hex>(anvil.url, "evm_snapshot");
      const request = await wallet(caller).prepareTransactionRequest({
        to: redirector,
        data: encodeFunctionData({ abi: code.abi, functionName: "move", args: [uAssets.uSOL] }),
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

      const reorg = async (change: () => Promise<void>) => {
        assert.equal(await anvilRpc(anvil.url, "evm_revert", [snapshot]), true);
        // evm_revert consumes the snapshot: take it again for the next reorg.
        snapshot = await anvilRpc<Hex>(anvil.url, "evm_snapshot");
        await change();
        assert.equal(await client.sendRawTransaction({ serializedTransaction: raw }), txHash);
        await mined(txHash);
        await mine(3);
        return await watchToTip(p.ctx, "base");
      };
      const sol = p.sim.ledger("sol");
      const settle = async (id: string) =>
        await waitUntil(`order ${id} to end`, async () => {
          await stepOrder(p.ctx, id);
          await sol.sealBlock();
          const o = (await orders(p.kv)).find((x) => x.id === id)!;
          return ["completed", "failed", "cancelled"].includes(o.status) ? o : null;
        });
      await test({ p, txHash, first, reorg, set, mintTo, settle, partner });
    } finally {
      await p.close();
    }
  } finally {
    await anvil.stop();
  }
}

Deno.test("anvil: a burn re-executed to another recipient fails at confirmation and records nothing new", async () => {
  await scenario(async ({ p, first, reorg, set, settle }) => {
    assert.equal(await reorg(() => set("0x0000000000000000000000000000000000000000", ELSEWHERE)), 0);
    const failed = await settle(first.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.errorMessage, "Source transfer changed by a chain reorganization");
    assert.ok(failed.type === "burn" && failed.details.sourceChange);
    assert.equal(failed.details.sourceChange.new, null);
    assert.equal(failed.details.sourceChange.newRecord, null);
    assert.equal((await orders(p.kv)).length, 1, "no order for a transfer that does not reach the transfer address");
    assert.deepEqual(await listHeld(p.kv), []);
    assert.equal(await countKeys(p.kv, ["transfer_seen"]), 1);
    assert.equal((await payoutTxs(p.kv, "sol", first.id)).length, 0);
    // Later steps and watcher ticks change nothing.
    for (let i = 0; i < 3; i++) assert.equal(await stepOrder(p.ctx, first.id), "done");
    assert.equal(await watchToTip(p.ctx, "base"), 0);
    assert.equal((await orders(p.kv)).length, 1);
  });
});

Deno.test("anvil: a reader showing transfers to other addresses: a burn re-executed to another recipient records nothing new", async () => {
  await scenario(async ({ p, first, reorg, set, settle }) => {
    assert.equal(await reorg(() => set("0x0000000000000000000000000000000000000000", ELSEWHERE)), 0);
    const failed = await settle(first.id);
    assert.equal(failed.status, "failed");
    assert.ok(failed.type === "burn" && failed.details.sourceChange?.new);
    assert.equal(failed.details.sourceChange.new.to, ELSEWHERE.toLowerCase());
    assert.equal(failed.details.sourceChange.newRecord, null);
    assert.equal((await orders(p.kv)).length, 1, "no order for a transfer that does not reach the transfer address");
    assert.deepEqual(await listHeld(p.kv), []);
    assert.equal(await countKeys(p.kv, ["transfer_seen"]), 1);
    assert.equal((await payoutTxs(p.kv, "sol", first.id)).length, 0);
    for (let i = 0; i < 3; i++) assert.equal(await stepOrder(p.ctx, first.id), "done");
    assert.equal((await orders(p.kv)).length, 1);
  }, { widened: true });
});

Deno.test("anvil: a burn re-executed from a sender with no burn configuration becomes a held transfer of revision 1", async () => {
  await scenario(async ({ p, txHash, first, reorg, set, mintTo, settle }) => {
    assert.equal(
      await reorg(async () => {
        await mintTo(stranger.address, Y);
        await set(stranger.address, TRANSFER_ADDRESS);
      }),
      0,
    );
    const failed = await settle(first.id);
    assert.equal(failed.status, "failed");
    assert.ok(failed.type === "burn" && failed.details.sourceChange?.new);
    assert.equal(failed.details.sourceChange.new.from, stranger.address.toLowerCase());
    assert.equal(failed.details.sourceChange.new.amount, Y.toString());
    assert.equal(failed.details.sourceChange.newRecord, "held");
    const held: HeldTransfer[] = await listHeld(p.kv);
    assert.equal(held.length, 1);
    assert.equal(held[0].txHash, txHash.toLowerCase());
    assert.equal(held[0].revision, 1);
    assert.equal(held[0].from, stranger.address.toLowerCase());
    assert.equal(held[0].amount, Y.toString());
    assert.equal((await orders(p.kv)).length, 1);
    assert.equal((await payoutTxs(p.kv, "sol", first.id)).length, 0);
    assert.equal(await stepOrder(p.ctx, first.id), "done");
    assert.equal(await countKeys(p.kv, ["transfer_seen"]), 2);
  });
});

Deno.test("anvil: repeated reorgs re-executing a burn make one record each, one live order at a time, one payout", async () => {
  await scenario(async ({ p, first, reorg, set, mintTo, settle, partner }) => {
    // Reorg 1: `other` (configured) sends Y. The first order fails and its successor (revision 1) is recorded.
    assert.equal(
      await reorg(async () => {
        await mintTo(other.address, Y);
        await set(other.address, TRANSFER_ADDRESS);
      }),
      0,
    );
    assert.equal((await settle(first.id)).status, "failed");
    const [, second] = await orders(p.kv);
    assert.equal(second.amount, Y.toString());
    assert.equal(second.sourceWallet, other.address.toLowerCase());
    assert.equal(second.destinationWallet, OTHER_SOL_DESTINATION);
    assert.equal(second.details.source.revision, 1);

    // Reorg 2, before the successor steps: the redirector itself sends Z. The successor fails, revision 2 is recorded.
    assert.equal(await reorg(() => mintTo(partnerAddress(partner), Z - X)), 0);
    const failed = await settle(second.id);
    assert.equal(failed.status, "failed");
    assert.ok(failed.type === "burn" && failed.details.sourceChange?.new);
    assert.equal(failed.details.sourceChange.new.revision, 2);
    const all = await orders(p.kv);
    assert.equal(all.length, 3);
    const third = all[2];
    assert.deepEqual(failed.details.sourceChange.newRecord, { orderId: third.id });
    assert.equal(third.amount, Z.toString());
    assert.equal(third.sourceWallet, partner);
    assert.equal(third.details.source.revision, 2);
    // One order is live per transfer at any time.
    assert.deepEqual(all.filter((o) => o.status !== "failed").map((o) => o.id), [third.id]);

    const done = await settle(third.id);
    assert.equal(done.status, "completed", JSON.stringify(done));
    // Settled facts: more steps and watcher ticks record nothing (the chain of records ends with the chain's facts).
    for (const o of all) for (let i = 0; i < 3; i++) assert.equal(await stepOrder(p.ctx, o.id), "done");
    assert.equal(await watchToTip(p.ctx, "base"), 0);
    assert.equal((await orders(p.kv)).length, 3);
    assert.equal(await countKeys(p.kv, ["transfer_seen"]), 3);
    assert.deepEqual(await listHeld(p.kv), []);

    // Exactly one payout, of Z, to the configuration of the sender the chain ends with.
    assert.equal((await payoutTxs(p.kv, "sol", first.id)).length, 0);
    assert.equal((await payoutTxs(p.kv, "sol", second.id)).length, 0);
    const paid = await payoutTxs(p.kv, "sol", third.id);
    assert.equal(paid.length, 1);
    assert.equal(BigInt(paid[0].tx.amount), Z / 10n ** 9n);
    assert.equal(await p.sim.ledger("sol").balance(SOL_DESTINATION, "native"), Z / 10n ** 9n);
    assert.equal(await p.sim.ledger("sol").balance(OTHER_SOL_DESTINATION, "native"), 0n);
  });
});

/**
 * Every Transfer log of a uAsset in the transaction's receipt, whatever its recipient, numbered in log order: what a
 * reader may show (the sim's `transfersOf` shows transfers to any address; the live EVM reader only those to us).
 */
async function everyTransferOf(
  client: ReturnType<typeof createPublicClient>,
  uAssets: Record<string, Address>,
  hash: string,
): Promise<ObservedTransfer[] | null> {
  let receipt;
  try {
    receipt = await client.getTransactionReceipt({ hash: hash as Hex });
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return null;
    throw err;
  }
  if (receipt.status !== "success") return [];
  const assetOf = new Map(Object.entries(uAssets).map(([asset, address]) => [address.toLowerCase(), asset]));
  const out: ObservedTransfer[] = [];
  for (const log of receipt.logs) {
    const asset = assetOf.get(log.address.toLowerCase());
    if (!asset) continue;
    const { args } = decodeEventLog({ abi: UASSET_ABI, topics: log.topics, data: log.data, eventName: "Transfer" });
    out.push({
      txHash: receipt.transactionHash.toLowerCase(),
      index: out.length,
      from: args.from.toLowerCase(),
      to: args.to.toLowerCase(),
      amount: args.value,
      asset: asset as UAsset,
    });
  }
  return out;
}

function partnerAddress(partner: string): Address {
  return partner as Address;
}
