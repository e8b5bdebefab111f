/**
 * Exactly once, under everything (docs/architecture.md invariants 1, 2, 4): duplicate doorbells and concurrent steps,
 * two pipeline processes on one KV file, watchers re-scanning blocks, a crash between signing and recording and one
 * between recording and broadcasting, and reorgs. "Exactly once" is checked on the chain itself: every mint and payout
 * transaction the sim ledger ever accepted is counted (a second, refused mint counts too), and balances are compared
 * with sums computed here. (Killing a real process with SIGKILL is covered by a separate test.)
 */
import assert from "node:assert/strict";
import type { PipelineContext } from "../actors/context.ts";
import { type SourceTransfer, stepOrder } from "../actors/order_actor.ts";
import { WAKE } from "../actors/wake.ts";
import { type Intent, intentOf } from "../actors/transition.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Chains, type NativePayer, payerFor, type UtxoPayoutRequest } from "../chains/adapter.ts";
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { cursorKey, listHeld } from "../kv/pipeline.ts";
import {
  DECIMALS,
  expectedDepositId,
  ledgerTxs,
  MIN_BURN_WEI,
  MIN_DEPOSIT,
  mintTxs,
  payoutTxs,
  sealOneBlock,
  secondProcess,
  stored,
  toWei,
  waitUntil,
} from "./support/chain_facts.ts";
import {
  allOrders,
  balance,
  depositAddress,
  FAST_PIPELINE,
  type Json,
  outside,
  partner,
  sim,
  terminal,
  waitForOrders,
} from "./support/pipeline.ts";
import { call, startTestServer, type TestServer } from "./support/server.ts";

const ALL: ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function burnConfig(server: TestServer, token: string, chain: "sol" | "sui" | "doge" | "zec", i: number) {
  const destinationAddress = outside.depositAddress(chain, i);
  const res = await call(server, "POST", "/burn/wallets", {
    token,
    body: { destinationChain: chain, destinationAddress },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return destinationAddress;
}

/** Native units a burn of `wei` pays: whole units only, the remainder is kept (never rounded up). */
const paidFor = (chain: keyof typeof DECIMALS, wei: bigint) => wei / 10n ** BigInt(18 - DECIMALS[chain]);

/** Checks one completed mint: exactly one mint transaction ever for its deposit, and it is the order's hash. */
async function assertMintedOnce(kv: Deno.Kv, o: Json, depositTx: string) {
  assert.equal(o.status, "completed", JSON.stringify(o));
  const mints = await mintTxs(kv, o.destinationChain, await expectedDepositId(o.sourceChain, depositTx));
  assert.equal(mints.length, 1, `${o.id}: ${mints.length} mint transactions`);
  assert.equal(mints[0].success, true);
  assert.equal(mints[0].status, "included");
  assert.equal(o.transactionHash, mints[0].hash);
}

async function assertPaidOnce(kv: Deno.Kv, o: Json) {
  assert.equal(o.status, "completed", JSON.stringify(o));
  const payouts = await payoutTxs(kv, o.destinationChain, o.id);
  assert.equal(payouts.length, 1, `${o.id}: ${payouts.length} payout transactions`);
  assert.equal(payouts[0].success, true);
  assert.equal(o.transactionHash, payouts[0].hash);
}

Deno.test("exactly once: duplicate deliveries, two processes, re-scanned blocks", async (t) => {
  const server = await startTestServer(FAST_PIPELINE);
  const kv = server.services.kv;
  const ctx = server.services.pipeline!;
  try {
    await t.step("duplicate doorbells and concurrent steps of one order mint and pay once", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sol", "base");
      const destination = await burnConfig(server, token, "zec", 1);
      const deposit = 25_000_001n;
      const burned = 3n * 10n ** 17n + 999n;
      const dep = await sim(server, "deposits", { chain: "sol", address, amount: deposit.toString() });
      await sim(server, "faucet", { chain: "arbitrum", address: wallet, token: "uZEC", amount: burned.toString() });
      await sim(server, "transfers", { chain: "arbitrum", from: wallet, token: "uZEC", amount: burned.toString() });

      let rounds = 0;
      let orders: Json[] = [];
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        orders = await allOrders(server, token);
        if (orders.length === 2 && orders.every(terminal)) break;
        rounds++;
        await Promise.all(
          orders.filter((o) => !terminal(o)).flatMap((o) => {
            for (let i = 0; i < 10; i++) server.pipeline!.wake(o.id);
            return [
              ...Array.from({ length: 10 }, () => kv.enqueue({ kind: WAKE, orderId: o.id })),
              ...Array.from({ length: 10 }, () => stepOrder(ctx, o.id)),
            ];
          }),
        );
        await sleep(5);
      }
      assert.ok(rounds >= 3, `the orders were hammered while they moved (${rounds} rounds)`);
      assert.equal(orders.length, 2, JSON.stringify(orders));
      const mint = orders.find((o) => o.type === "mint");
      const burn = orders.find((o) => o.type === "burn");
      await assertMintedOnce(kv, mint, dep.txHash);
      await assertPaidOnce(kv, burn);
      assert.equal(await balance(server, "base", wallet, "uSOL"), toWei("sol", deposit));
      assert.equal(await balance(server, "zec", destination), 30_000_000n);
      // Late duplicates of a finished order change nothing.
      await Promise.all([mint, burn].map((o) => stepOrder(ctx, o.id)));
      assert.equal((await stored(kv, mint.id)).status, "completed");
      assert.equal((await payoutTxs(kv, "zec", burn.id)).length, 1);
    });

    /** A deposit the two processes handled, to show the re-scan below really reads it again. */
    let probe: SourceTransfer | null = null;
    await t.step("two pipeline processes on one KV file: one order and one mint or payout per transfer", async () => {
      const second = await secondProcess(server);
      try {
        const { wallet, token } = await partner(server);
        // Each native chain mints to its own EVM chain; burns are funded on base, which mints only uZEC.
        const route = { sol: "arbitrum", xrp: "katana", sui: "world", doge: "unichain", zec: "base" } as const;
        const addresses = Object.fromEntries(
          await Promise.all(NATIVE_CHAINS.map(async (c) => [c, await depositAddress(server, token, c, route[c])])),
        );
        const burnChains = ["sol", "sui", "doge"] as const;
        const destinations = Object.fromEntries(
          await Promise.all(burnChains.map(async (c, i) => [c, await burnConfig(server, token, c, 20 + i)])),
        );
        const mintTotals = new Map<string, bigint>();
        const paidTotals = new Map<string, bigint>();
        const work: Promise<unknown>[] = [];
        const depositTxs = new Set<string>();
        for (const [i, chain] of NATIVE_CHAINS.entries()) {
          for (let k = 0; k < 3; k++) {
            const amount = MIN_DEPOSIT[chain] * BigInt(2 + k) + BigInt(i * 10 + k);
            mintTotals.set(chain, (mintTotals.get(chain) ?? 0n) + amount);
            work.push(
              sim(server, "deposits", { chain, address: addresses[chain], amount: amount.toString() })
                .then((d) => depositTxs.add(d.txHash)),
            );
          }
        }
        for (const [i, chain] of burnChains.entries()) {
          const amounts = [MIN_BURN_WEI[chain] * 2n + BigInt(i), MIN_BURN_WEI[chain] * 3n + 7n];
          const total = amounts.reduce((a, b) => a + b);
          paidTotals.set(chain, amounts.reduce((a, b) => a + paidFor(chain, b), 0n));
          const token = `u${chain.toUpperCase()}`;
          work.push((async () => {
            await sim(server, "faucet", { chain: "base", address: wallet, token, amount: total.toString() });
            for (const a of amounts) {
              await sim(server, "transfers", { chain: "base", from: wallet, token, amount: a.toString() });
            }
          })());
        }
        const heldBefore = (await listHeld(kv)).length;
        // A uZEC transfer with no zec burn configuration: held, by exactly one of the two watchers.
        await sim(server, "faucet", { chain: "katana", address: wallet, token: "uZEC", amount: "500000000000000000" });
        work.push(
          sim(server, "transfers", { chain: "katana", from: wallet, token: "uZEC", amount: "500000000000000000" }),
        );
        await Promise.all(work);

        const orders = await waitForOrders(server, token, (o) => o.length >= 21 && o.every(terminal), {
          timeoutMs: 30_000,
        });
        assert.equal(orders.length, 15 + 6);
        const bySource = new Map<string, number>();
        for (const o of orders) {
          const source = (await stored(kv, o.id)).details.source;
          bySource.set(source.txHash, (bySource.get(source.txHash) ?? 0) + 1);
          if (o.type === "mint") probe ??= source;
          if (o.type === "mint") await assertMintedOnce(kv, o, source.txHash);
          else await assertPaidOnce(kv, o);
        }
        assert.ok([...bySource.values()].every((n) => n === 1), "one order per transfer");
        for (const tx of depositTxs) assert.equal(bySource.get(tx), 1, `deposit ${tx} has one order`);
        for (const chain of NATIVE_CHAINS) {
          const uAsset = `u${chain.toUpperCase()}`;
          assert.equal(
            await balance(server, route[chain], wallet, uAsset),
            toWei(chain, mintTotals.get(chain)!),
            `${uAsset} on ${route[chain]}`,
          );
        }
        for (const chain of burnChains) {
          assert.equal(await balance(server, chain, destinations[chain]), paidTotals.get(chain), `paid on ${chain}`);
        }
        await waitUntil("the held transfer", async () => (await listHeld(kv)).length > heldBefore);
        assert.equal((await listHeld(kv)).length, heldBefore + 1);
        assert.ok(second.runtime.steps > 0 && server.pipeline!.steps > 0, "both processes stepped orders");
      } finally {
        await second.close();
      }
    });

    await t.step("watchers re-scanning every block from 0 record nothing new", async () => {
      await server.pipeline!.stop();
      const countOrders = async () => {
        let n = 0;
        for await (const _ of kv.list({ prefix: ["order"] })) n++;
        return n;
      };
      const before = {
        orders: await countOrders(),
        held: (await listHeld(kv)).length,
        txs: await Promise.all(ALL.map(async (c) => (await ledgerTxs(kv, c)).length)),
      };
      const tips = await Promise.all(ALL.map((c) => new SimLedger(kv, c).head()));

      // Twice: once by calling the watcher directly (its own count of records), once by a fresh runtime.
      for (const c of ALL) await kv.set(cursorKey(c), { number: 0, hash: await new SimLedger(kv, c).blockHash(0) });
      for (const [i, chain] of ALL.entries()) {
        let recorded = 0;
        let scannedTo: number | null = 0;
        const deadline = Date.now() + 10_000;
        while ((scannedTo === null || scannedTo < tips[i].number) && Date.now() < deadline) {
          const res = await watchOnce(ctx, chain, "rescanner", 100);
          scannedTo = res.scannedTo;
          recorded += res.recorded;
          if (res.scannedTo === null) await sleep(20); // the stopped runtime's lease runs out first
        }
        assert.equal(scannedTo, tips[i].number, `${chain} re-scanned to its tip`);
        assert.equal(recorded, 0, `${chain}: re-scan recorded ${recorded}`);
      }
      // The re-scanned blocks do hold transfers to our addresses: the re-scan was not vacuous.
      assert.ok(probe);
      const [block] = await new SimLedger(kv, probe.chain).blocks(probe.blockNumber, probe.blockNumber);
      assert.ok(block.transfers.some((x) => x.txHash === probe!.txHash));
      assert.equal(await countOrders(), before.orders);

      for (const c of ALL) await kv.set(cursorKey(c), { number: 0, hash: await new SimLedger(kv, c).blockHash(0) });
      const fresh = await secondProcess(server);
      try {
        await waitUntil("every watcher to pass its old tip", async () => {
          const cursors = await Promise.all(ALL.map((c) => kv.get<{ number: number }>(cursorKey(c))));
          return cursors.every((e, i) => (e.value?.number ?? 0) >= tips[i].number);
        });
        await sleep(100);
        assert.equal(await countOrders(), before.orders);
        assert.equal((await listHeld(kv)).length, before.held);
        // The fresh runtime keeps producing (empty) blocks, but no chain got a new transaction.
        assert.deepEqual(await Promise.all(ALL.map(async (c) => (await ledgerTxs(kv, c)).length)), before.txs);
      } finally {
        await fresh.close();
      }
    });
  } finally {
    await server.close();
  }
});

/**
 * Chains whose senders die at a chosen point: after signing (the signed transaction is never recorded) or after the
 * recording commit and before the broadcast. Every signed hash is kept, to check none of the dead ones ever lands.
 */
function dyingChains(real: Chains, at: "signed" | "recorded", signed: string[]): Chains {
  const die = (what: string) => {
    throw new Error(`process died ${what}`);
  };
  return {
    reader: (c) => real.reader(c),
    minter: (c) => {
      const m = real.minter(c);
      return {
        ...m,
        prepareMint: async (req) => {
          const tx = await m.prepareMint(req);
          signed.push(tx.txHash);
          if (at === "signed") die("after signing");
          return tx;
        },
        broadcast: async (tx) => {
          if (at === "recorded") die("before broadcasting");
          await m.broadcast(tx);
        },
      };
    },
    payer: (c) => {
      const p: NativePayer = real.payer(c);
      return payerFor(c, {
        ...p,
        preparePayout: async (req: UtxoPayoutRequest) => {
          const tx = await p.preparePayout(req);
          signed.push(tx.txHash);
          if (at === "signed") die("after signing");
          return tx;
        },
        broadcast: async (tx) => {
          if (at === "recorded") die("before broadcasting");
          await p.broadcast(tx);
        },
      });
    },
  };
}

/** Steps an order by hand (as the one process alive) until `done` holds for it. */
async function stepUntil(ctx: PipelineContext, id: string, what: string, done: (o: Json) => boolean) {
  return await waitUntil(what, async () => {
    await stepOrder(ctx, id);
    const o = await stored(ctx.kv, id);
    return done(o) ? o : null;
  }, 10_000);
}

/** Runs the watcher of `chain` once by hand, waiting out a stopped runtime's lease. */
async function watchByHand(ctx: PipelineContext, chain: ChainSymbol) {
  await waitUntil(`a ${chain} watcher tick`, async () => (await watchOnce(ctx, chain, "by-hand", 100)).scannedTo);
}

Deno.test("exactly once across crashes: signed but not recorded, recorded but not broadcast", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  const kv = server.services.kv;
  const ctx = server.services.pipeline!;
  // This process "crashes": nothing runs until a new runtime starts below; the test moves the chains by hand.
  await server.pipeline!.stop();
  try {
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "sol", "base");
    const destination = await burnConfig(server, token, "sui", 3);
    const deposit = 77_000_000n;
    const burned = 4n * 10n ** 18n + 1n;
    const dep = await sim(server, "deposits", { chain: "sol", address, amount: deposit.toString() });
    await sim(server, "faucet", { chain: "katana", address: wallet, token: "uSUI", amount: burned.toString() });
    await sim(server, "transfers", { chain: "katana", from: wallet, token: "uSUI", amount: burned.toString() });
    for (let i = 0; i < 2; i++) {
      await sealOneBlock(kv, "sol");
      await sealOneBlock(kv, "katana");
    }
    await watchByHand(ctx, "sol");
    await watchByHand(ctx, "katana");
    const orders = await allOrders(server, token);
    assert.equal(orders.length, 2);
    const mint = orders.find((o) => o.type === "mint");
    const burn = orders.find((o) => o.type === "burn");
    const depositId = await expectedDepositId("sol", dep.txHash);
    assert.equal((await stored(kv, mint.id)).details.depositId, depositId);
    for (const o of [mint, burn]) {
      await stepUntil(ctx, o.id, "confirmation", (s) => s.status === "processing");
    }

    // An operator's or a dead step's signed mint for this very deposit, never recorded and never sent.
    const dropped: string[] = [];
    const stray = await ctx.chains.minter("base").prepareMint({
      depositId,
      to: wallet.toLowerCase(),
      asset: "uSOL",
      amountWei: toWei("sol", deposit),
    });
    dropped.push(stray.txHash);

    // A step that dies after signing: its transactions are never recorded.
    const signedThenDied = { ...ctx, chains: dyingChains(ctx.chains, "signed", dropped) };
    for (const o of [mint, burn]) {
      await stepOrder(signedThenDied, o.id);
      const s = await stored(kv, o.id);
      assert.equal(s.status, "processing");
      assert.equal(intentOf(s), undefined);
    }
    assert.equal(dropped.length, 3);

    // A step that dies after its recording commit, before broadcasting: minting/burning with an unsent intent.
    const recorded: string[] = [];
    const recordedThenDied = { ...ctx, chains: dyingChains(ctx.chains, "recorded", recorded) };
    const intents = new Map<string, Intent>();
    for (const o of [mint, burn]) {
      const s = await stepUntil(recordedThenDied, o.id, "a recorded intent", (x) => x.status !== "processing");
      assert.equal(s.status, o.type === "mint" ? "minting" : "burning");
      const intent = intentOf(s)!;
      assert.ok(intent && recorded.includes(intent.txHash) && !dropped.includes(intent.txHash));
      assert.deepEqual(await ctx.chains.reader(intent.chain).txStatus(intent.txHash), { state: "unknown" });
      intents.set(o.id, intent);
    }
    assert.equal((await mintTxs(kv, "base", depositId)).length, 0, "nothing was sent");
    assert.equal((await payoutTxs(kv, "sui", burn.id)).length, 0, "nothing was sent");

    // The restarted process sends the recorded transactions, the very same ones, and nothing else.
    const restarted = await secondProcess(server);
    try {
      const done = await waitForOrders(server, token, (o) => o.every(terminal));
      for (const o of done) {
        assert.equal(o.status, "completed", JSON.stringify(o));
        assert.equal(o.transactionHash, intents.get(o.id)!.txHash, "the recorded transaction, re-broadcast");
      }
      await assertMintedOnce(kv, done.find((o) => o.type === "mint"), dep.txHash);
      await assertPaidOnce(kv, done.find((o) => o.type === "burn"));
      for (const hash of dropped) {
        const chain = hash.startsWith("0x") ? "base" : "sui";
        assert.deepEqual(await ctx.chains.reader(chain).txStatus(hash), { state: "unknown" }, hash);
      }
      assert.equal(await balance(server, "base", wallet, "uSOL"), toWei("sol", deposit));
      assert.equal(await balance(server, "sui", destination), paidFor("sui", burned));
    } finally {
      await restarted.close();
    }
  } finally {
    await server.close();
  }
});

Deno.test("a signed mint that escaped before recording is adopted, never doubled", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  const kv = server.services.kv;
  const ctx = server.services.pipeline!;
  try {
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "xrp", "world");
    const deposit = 3_000_000n;
    // Stall xrp so the order stays pending while the stray mint is sent.
    await sim(server, "faults", { chain: "xrp", stallMs: 60_000 });
    const dep = await sim(server, "deposits", { chain: "xrp", address, amount: deposit.toString() });
    const depositId = await expectedDepositId("xrp", dep.txHash);
    const stray = await ctx.chains.minter("world").prepareMint({
      depositId,
      to: wallet.toLowerCase(),
      asset: "uXRP",
      amountWei: toWei("xrp", deposit),
    });
    await ctx.chains.minter("world").broadcast(stray);
    await sim(server, "faults", { chain: "xrp", stallMs: 0 });
    const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
    assert.equal(order.status, "completed");
    assert.equal(order.transactionHash, stray.txHash);
    await assertMintedOnce(kv, order, dep.txHash);
    assert.equal(await balance(server, "world", wallet, "uXRP"), toWei("xrp", deposit));
  } finally {
    await server.close();
  }
});

Deno.test("reorgs: a deposit reorganised out before its confirmations never mints; a dropped mint is re-sent", async (t) => {
  const server = await startTestServer({ ...FAST_PIPELINE, SIM_CONFIRMATION_TIMEOUT_MS: "1500" });
  const kv = server.services.kv;
  try {
    await t.step("deposit reorganised out while pending: the order times out, no uAsset ever", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "doge", "base");
      await sim(server, "faults", { chain: "doge", stallMs: 60_000 });
      const dep = await sim(server, "deposits", { chain: "doge", address, amount: MIN_DEPOSIT.doge.toString() });
      const sealed = await sealOneBlock(kv, "doge"); // one of the 3 confirmations doge needs
      const [pending] = await waitForOrders(server, token, (o) => o.length === 1);
      assert.equal(pending.status, "pending");
      const reorg = await sim(server, "faults", { chain: "doge", reorgDepth: 1 });
      assert.equal(reorg.head.number, sealed.number);
      assert.notEqual(reorg.head.hash, sealed.hash);
      assert.deepEqual(await new SimLedger(kv, "doge").txStatus(dep.txHash), { state: "unknown" });
      await sim(server, "faults", { chain: "doge", stallMs: 0 });

      const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
      assert.equal(order.id, pending.id);
      assert.equal(order.status, "failed");
      assert.equal(order.errorMessage, "Blockchain confirmation timeout");
      // Well past the height where the deposit would have had its confirmations: still nothing.
      await waitUntil("doge to grow", async () => (await new SimLedger(kv, "doge").head()).number >= sealed.number + 5);
      assert.equal((await allOrders(server, token)).length, 1, "the watcher's re-scan after the reorg adds nothing");
      assert.equal(await balance(server, "base", wallet, "uDOGE"), 0n);
      assert.equal((await mintTxs(kv, "base", await expectedDepositId("doge", dep.txHash))).length, 0);
    });

    await t.step("mint reorganised out before its confirmations: the same transaction is sent again", async () => {
      const { wallet, token } = await partner(server);
      const address = await depositAddress(server, token, "sui", "unichain");
      const deposit = 5_000_000_007n;
      await sim(server, "faults", { chain: "unichain", stallMs: 60_000 });
      const dep = await sim(server, "deposits", { chain: "sui", address, amount: deposit.toString() });
      const [minting] = await waitForOrders(server, token, (o) => o.length === 1 && o[0].status === "minting");
      const intent = intentOf(await stored(kv, minting.id))!;
      const ledger = new SimLedger(kv, "unichain");
      await waitUntil(
        "the mint in the mempool",
        async () => (await ledger.txStatus(intent.txHash)).state === "pending",
      );
      await sealOneBlock(kv, "unichain"); // one of the 2 confirmations
      const s = await ledger.txStatus(intent.txHash);
      assert.ok(s.state === "included" && s.confirmations === 1);
      assert.equal(await balance(server, "unichain", wallet, "uSUI"), toWei("sui", deposit));
      await sim(server, "faults", { chain: "unichain", reorgDepth: 1 });
      assert.equal(await balance(server, "unichain", wallet, "uSUI"), 0n, "the reorg undid the mint");
      await sim(server, "faults", { chain: "unichain", stallMs: 0 });

      const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]));
      assert.equal(order.status, "completed");
      assert.equal(order.transactionHash, intent.txHash);
      await assertMintedOnce(kv, order, dep.txHash);
      assert.equal(await balance(server, "unichain", wallet, "uSUI"), toWei("sui", deposit));
    });
  } finally {
    await server.close();
  }
});
