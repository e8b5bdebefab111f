/**
 * Matching a block's recipients against our deposit addresses (sim ledgers, real KV files, watcher driven by hand):
 * the watcher holds the addresses in memory (kv/address_index.ts), so a block costs no KV read unless something in it
 * is ours; an address allocated after the set was loaded, by this process or by another handle on the same file, is
 * matched on the next tick; a match is exactly the reverse index's owner and destination; and when the log by index
 * misses entries its counter promised, the set is rebuilt from the reverse index rather than guessed.
 */
import assert from "node:assert/strict";
import type { PipelineContext } from "../actors/context.ts";
import { watchOnce } from "../actors/watcher.ts";
import type { EvmChain, NativeChain } from "../chains/catalog.ts";
import { NATIVE } from "../chains/catalog.ts";
import { depositAddressSet, forgetDepositAddressSets } from "../kv/address_index.ts";
import {
  createMintWallet,
  type DepositAddressOwner,
  findDepositAddress,
  listDepositAddresses,
  type MintWallet,
} from "../kv/mint_wallets.ts";
import { openKv } from "../kv/open.ts";
import type { Order } from "../model/order.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { countReads } from "./support/kv_reads.ts";
import { handPipeline, watchToTip } from "./support/watch.ts";

const ALICE = "0x" + "a1".repeat(20);
const BOB = "0x" + "b0".repeat(20);
const derive = (chain: NativeChain, index: number) => `${chain}-deposit-${index}`;

async function allocate(kv: Deno.Kv, owner: string, chain: NativeChain, dest: EvmChain): Promise<MintWallet> {
  await ensureUserWallet(kv, owner, "test-partner");
  const res = await createMintWallet(kv, owner, chain, dest, derive);
  assert.ok(res.ok);
  return res.wallet;
}

async function orders(kv: Deno.Kv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const e of kv.list<Order>({ prefix: ["order"] })) out.push(e.value);
  return out;
}

Deno.test("an address allocated after the set was loaded is matched on the next tick, from this process or another handle", async (t) => {
  const p = await handPipeline();
  const other = await openKv(p.kvPath);
  try {
    const ledger = p.sim.ledger("sol");
    await allocate(p.kv, ALICE, "sol", "base");
    await ledger.sealBlock();
    await watchToTip(p.ctx, "sol");
    const set = depositAddressSet(p.kv, "sol");
    assert.equal(set.loadedBelow, 1);
    assert.equal(set.loads, 1);

    await t.step("allocated through this process's handle", async () => {
      const wallet = await allocate(p.kv, ALICE, "sol", "world");
      await ledger.submitNativeTransfer({ from: "sol-payer-1", to: wallet.address, amount: NATIVE.sol.minimumDeposit });
      await ledger.sealBlock();
      assert.equal(await watchToTip(p.ctx, "sol"), 1);
      const [order] = await orders(p.kv);
      assert.equal(order.owner, ALICE);
      assert.equal(order.destinationChain, "world");
    });

    await t.step("allocated through a second handle on the same file, standing in for another process", async () => {
      const wallet = await allocate(other, BOB, "sol", "katana");
      await ledger.submitNativeTransfer({ from: "sol-payer-2", to: wallet.address, amount: NATIVE.sol.minimumDeposit });
      await ledger.sealBlock();
      assert.equal(await watchToTip(p.ctx, "sol"), 1);
      const bobs = (await orders(p.kv)).filter((o) => o.owner === BOB);
      assert.equal(bobs.length, 1);
      assert.equal(bobs[0].destinationChain, "katana");
    });

    // Both came from the log by index, without loading everything again.
    assert.equal(set.loads, 1);
    assert.equal(set.loadedBelow, 3);
  } finally {
    other.close();
    await p.close();
  }
});

Deno.test("an address allocated and paid while the watcher reads the chain is matched in that same tick", async () => {
  const p = await handPipeline();
  const other = await openKv(p.kvPath);
  try {
    const ledger = p.sim.ledger("xrp");
    await ledger.sealBlock();
    await watchToTip(p.ctx, "xrp"); // the set is loaded here, with no address in it
    let armed = true;
    const reader = p.ctx.chains.reader("xrp");
    const ctx: PipelineContext = {
      ...p.ctx,
      chains: {
        ...p.ctx.chains,
        reader: (chain) =>
          chain !== "xrp" ? p.ctx.chains.reader(chain) : {
            ...reader,
            // Another process allocates an address and it is paid and sealed just as this tick reads the tip: a set
            // refreshed at the start of the tick would not have it.
            tip: async () => {
              if (armed) {
                armed = false;
                const wallet = await allocate(other, ALICE, "xrp", "unichain");
                const amount = NATIVE.xrp.minimumDeposit;
                await ledger.submitNativeTransfer({ from: "xrp-payer", to: wallet.address, amount });
                await ledger.sealBlock();
              }
              return await reader.tip();
            },
          },
      },
    };
    const res = await watchOnce(ctx, "xrp", "test-watcher", 60_000);
    assert.equal(res.recorded, 1);
    const [order] = await orders(p.kv);
    assert.equal(order.owner, ALICE);
    assert.equal(order.destinationChain, "unichain");
  } finally {
    other.close();
    await p.close();
  }
});

Deno.test("a block of 64 transfers, none to us, costs the watcher no KV read: the same reads as an empty block", async () => {
  const p = await handPipeline();
  // The watcher reads through its own handle, so the sim ledger's reads (p.kv) are not counted.
  const watcherKv = await openKv(p.kvPath);
  try {
    const reads = countReads(watcherKv);
    const ctx: PipelineContext = { ...p.ctx, kv: watcherKv };
    const ledger = p.sim.ledger("sol");
    for (const dest of ["base", "world", "katana"] as const) await allocate(p.kv, ALICE, "sol", dest);
    await ledger.sealBlock();
    await watchToTip(ctx, "sol"); // loads the set

    for (let i = 0; i < 64; i++) {
      await ledger.submitNativeTransfer({ from: `sol-payer-${i}`, to: `sol-stranger-${i}`, amount: 10n ** 9n });
    }
    const busy = await ledger.sealBlock();
    assert.equal((await ledger.blocks(busy.number, busy.number))[0].transfers.length, 64);
    reads.reset();
    assert.equal((await watchOnce(ctx, "sol", "test-watcher", 60_000)).scannedTo, busy.number);
    const busyReads = reads.reads.length;
    assert.deepEqual(reads.touching("deposit_address"), [], "no recipient was looked up in the reverse index");
    assert.deepEqual(reads.touching("deposit_address_by_index"), [], "nothing new was allocated");

    const empty = await ledger.sealBlock();
    reads.reset();
    assert.equal((await watchOnce(ctx, "sol", "test-watcher", 60_000)).scannedTo, empty.number);
    assert.equal(busyReads, reads.reads.length);
  } finally {
    watcherKv.close();
    await p.close();
  }
});

Deno.test("a match is exactly the owner and destination chain of the reverse index, per chain", async () => {
  const p = await handPipeline();
  const other = await openKv(p.kvPath);
  try {
    // The same address string on two chains, with different owners: each chain's set answers for its own chain.
    const shared = () => "shared-deposit";
    await ensureUserWallet(p.kv, ALICE, "test-partner");
    await ensureUserWallet(p.kv, BOB, "test-partner");
    assert.ok((await createMintWallet(p.kv, ALICE, "sui", "arbitrum", shared)).ok);
    assert.ok((await createMintWallet(p.kv, BOB, "doge", "world", shared)).ok);
    const wallets = [
      await allocate(p.kv, ALICE, "sui", "base"),
      await allocate(p.kv, BOB, "sui", "world"),
    ];
    const sui = depositAddressSet(p.kv, "sui");
    const doge = depositAddressSet(p.kv, "doge");
    assert.equal(await sui.refresh(), "loaded");
    assert.equal(await doge.refresh(), "loaded");
    wallets.push(await allocate(other, BOB, "sui", "katana"));
    assert.equal(await sui.refresh(), "appended");

    const reverse = await listDepositAddresses(p.kv, "sui");
    assert.equal(sui.size, reverse.size);
    for (const [address, owner] of reverse) assert.deepEqual(sui.get(address), owner);
    assert.deepEqual(sui.get("shared-deposit"), { owner: ALICE, destinationChain: "arbitrum", derivationIndex: 0 });
    assert.deepEqual(doge.get("shared-deposit"), { owner: BOB, destinationChain: "world", derivationIndex: 0 });
    assert.equal(sui.get("sui-stranger"), undefined);
    assert.deepEqual(
      sui.match(["sui-stranger", wallets[2].address, "doge-deposit-0"]),
      new Map([[wallets[2].address, await findDepositAddress(p.kv, "sui", wallets[2].address)]]),
    );

    // Through the watcher: each deposit's order goes to its address's owner and destination, nothing else matches.
    const ledger = p.sim.ledger("sui");
    const amount = NATIVE.sui.minimumDeposit;
    const paid = ["shared-deposit", ...wallets.map((w) => w.address)];
    for (const [i, to] of paid.entries()) await ledger.submitNativeTransfer({ from: `sui-payer-${i}`, to, amount });
    await ledger.submitNativeTransfer({ from: "sui-payer-x", to: "sui-stranger", amount });
    await ledger.sealBlock();
    assert.equal(await watchToTip(p.ctx, "sui"), paid.length);
    const bySender = new Map((await orders(p.kv)).map((o) => [o.sourceWallet, o]));
    for (const [i, to] of paid.entries()) {
      const order = bySender.get(`sui-payer-${i}`)!;
      const owner = (await findDepositAddress(p.kv, "sui", to))!;
      assert.equal(order.owner, owner.owner);
      assert.equal(order.destinationWallet, owner.owner);
      assert.equal(order.destinationChain, owner.destinationChain);
    }
  } finally {
    other.close();
    await p.close();
  }
});

/**
 * What `createMintWallet` committed before the log by index existed: the counter, the wallet and its reverse index,
 * and no log entry. A process still running that code would leave exactly this.
 */
async function allocateWithoutLog(kv: Deno.Kv, owner: string, chain: NativeChain, dest: EvmChain) {
  const counter = await kv.get<Deno.KvU64>(["derivation_next_index", chain]);
  const index = Number(counter.value?.value ?? 0n);
  const address = derive(chain, index);
  const reverse: DepositAddressOwner = { owner, destinationChain: dest, derivationIndex: index };
  const wallet: MintWallet = { address, chain, destinationChain: dest, owner, derivationIndex: index, createdAt: "" };
  const res = await kv.atomic().check(counter)
    .set(["derivation_next_index", chain], new Deno.KvU64(BigInt(index + 1)))
    .set(["mint_wallet", owner, chain, dest], wallet)
    .set(["deposit_address", chain, address], reverse)
    .commit();
  assert.ok(res.ok);
  return address;
}

Deno.test("a counter ahead of its log entries makes the set reload from the reverse index, and the deposit is matched", async () => {
  const p = await handPipeline();
  const old = await openKv(p.kvPath);
  try {
    const set = depositAddressSet(p.kv, "zec");
    assert.throws(
      () => set.get("zec-deposit-0"),
      /before they were loaded/,
      "an unloaded set never answers 'not ours'",
    );
    await allocate(p.kv, ALICE, "zec", "base");
    const ledger = p.sim.ledger("zec");
    await ledger.sealBlock();
    await watchToTip(p.ctx, "zec");
    assert.equal(set.loads, 1);

    const address = await allocateWithoutLog(old, BOB, "zec", "world");
    await ledger.submitNativeTransfer({ from: "zec-payer", to: address, amount: NATIVE.zec.minimumDeposit });
    await ledger.sealBlock();
    assert.equal(await watchToTip(p.ctx, "zec"), 1);
    assert.equal(set.loads, 2);
    assert.ok(p.logs.some((l) => l.includes("watcher zec: the deposit address log missed entries")), p.logs.join("\n"));
    const [order] = (await orders(p.kv)).filter((o) => o.owner === BOB);
    assert.equal(order.destinationChain, "world");

    // Allocations through the current code append again, without another reload.
    await allocate(old, BOB, "zec", "katana");
    assert.equal(await set.refresh(), "appended");
    assert.equal(set.loads, 2);
    assert.equal(set.loadedBelow, 3);

    // A process that forgets its sets loads them again on first use.
    forgetDepositAddressSets(p.kv);
    const fresh = depositAddressSet(p.kv, "zec");
    assert.notEqual(fresh, set);
    assert.equal(await fresh.refresh(), "loaded");
    assert.equal(fresh.size, 3);
  } finally {
    old.close();
    await p.close();
  }
});
