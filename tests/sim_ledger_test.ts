/** The embedded simulated ledgers (chains/sim): blocks, confirmations, balances, faults, reorgs and concurrency. */
import { withKv as withTempKv } from "./support/kv.ts";
import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { type ChainReader, TransientChainError } from "../chains/adapter.ts";
import type { EvmChain, NativeChain } from "../chains/catalog.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { HOT_WALLET_GENESIS, MAX_TXS_PER_BLOCK, SimLedger, ZERO_ADDRESS } from "../chains/sim/ledger.ts";
import { seededRandom } from "./support/chaos.ts";

const withKv = (fn: (kv: Deno.Kv, path: string) => Promise<void>) => withTempKv("sim_ledger_", fn);

const evm = (byte: string) => "0x" + byte.repeat(20);
const ALICE = evm("a1");
const BOB = evm("b2");
const CAROL = evm("c3");
const DAVE = evm("d4");
const depositId = (n: number) => "0x" + n.toString(16).padStart(64, "0");
const OPERATOR = (chain: NativeChain) => `operator-${chain}`;

/** Every transaction hash a scan of the whole chain shows, with the block it is in. */
async function scannedTxs(ledger: SimLedger): Promise<Map<string, number[]>> {
  const head = await ledger.head();
  const seen = new Map<string, number[]>();
  for (const b of await ledger.blocks(0, head.number)) {
    for (const t of b.transfers) seen.set(t.txHash, [...(seen.get(t.txHash) ?? []), b.number]);
  }
  return seen;
}

Deno.test("sim ledger: blocks, balances and confirmations", async (t) => {
  await withKv(async (kv) => {
    await t.step("a native deposit is pending, applied at once, then gains one confirmation per block", async () => {
      const sol = new SimLedger(kv, "sol", { random: seededRandom(1) });
      const genesis = await sol.head();
      assert.equal(genesis.number, 0);
      assert.equal(await sol.blockHash(0), genesis.hash);
      assert.equal(await sol.blockHash(1), null);

      const dep = await sol.submitNativeTransfer({ from: "outsider", to: "deposit-1", amount: 5_000_000n });
      assert.equal(dep.blockNumber, 1);
      assert.equal(base58.decode(dep.txHash).length, 64, "a sol tx id is a base58 64-byte signature");
      assert.deepEqual(await sol.txStatus(dep.txHash), { state: "pending" });
      assert.equal(await sol.balance("deposit-1", "native"), 5_000_000n);
      assert.equal(await sol.balance("outsider", "native"), 0n, "the outside sender is never debited");

      const b1 = await sol.sealBlock();
      assert.equal(b1.number, 1);
      assert.deepEqual(await sol.txStatus(dep.txHash), {
        state: "included",
        blockNumber: 1,
        confirmations: 1,
        success: true,
      });
      await sol.sealBlock();
      const b3 = await sol.sealBlock();
      assert.equal(b3.number, 3);
      const status = await sol.txStatus(dep.txHash);
      assert.ok(status.state === "included" && status.confirmations === 3);
      assert.equal(await sol.balance("deposit-1", "native"), 5_000_000n);

      const blocks = await sol.blocks(0, 10);
      assert.deepEqual(blocks.map((b) => b.number), [0, 1, 2, 3], "clipped to the tip");
      for (let i = 1; i < blocks.length; i++) {
        assert.equal(blocks[i].parentHash, blocks[i - 1].hash);
        assert.equal(await sol.blockHash(i), blocks[i].hash);
      }
      assert.equal(blocks[3].hash, b3.hash);
      assert.deepEqual(blocks[1].transfers, [
        { txHash: dep.txHash, index: 0, from: "outsider", to: "deposit-1", amount: 5_000_000n, asset: "native" },
      ]);
      assert.deepEqual([blocks[0], blocks[2], blocks[3]].map((b) => b.transfers.length), [0, 0, 0]);
      assert.deepEqual(await sol.txStatus("nope"), { state: "unknown" });
    });

    await t.step("hash formats follow the chain", async () => {
      const xrp = await new SimLedger(kv, "xrp").submitNativeTransfer({ from: "r1", to: "r2", amount: 1n });
      assert.match(xrp.txHash, /^[0-9a-f]{64}$/);
      const base = await new SimLedger(kv, "base").faucet({ address: ALICE, asset: "uXRP", amount: 1n });
      assert.match(base.txHash, /^0x[0-9a-f]{64}$/);
      assert.match((await new SimLedger(kv, "base").sealBlock()).hash, /^0x[0-9a-f]{64}$/);
    });

    await t.step("chains are separate ledgers", async () => {
      assert.equal((await new SimLedger(kv, "doge").head()).number, 0);
      assert.equal(await new SimLedger(kv, "xrp").balance("deposit-1", "native"), 0n);
    });

    await t.step("a full block leaves the rest pending, oldest first, for the next", async () => {
      let clock = 1_000;
      const zec = new SimLedger(kv, "zec", { now: () => clock++ });
      const hashes: string[] = [];
      for (let i = 0; i < MAX_TXS_PER_BLOCK + 5; i++) {
        hashes.push((await zec.submitNativeTransfer({ from: "x", to: `t1-${i}`, amount: 1n })).txHash);
      }
      await zec.sealBlock();
      await zec.sealBlock();
      const [, b1, b2] = await zec.blocks(0, 2);
      assert.deepEqual(b1.transfers.map((x) => x.txHash), hashes.slice(0, MAX_TXS_PER_BLOCK));
      assert.deepEqual(b2.transfers.map((x) => x.txHash), hashes.slice(MAX_TXS_PER_BLOCK));
    });
  });
});

Deno.test("sim ledger: ERC-20 transfers", async (t) => {
  await withKv(async (kv) => {
    const base = new SimLedger(kv, "base", { random: seededRandom(2) });

    await t.step("a faucet credit is a Transfer from the zero address", async () => {
      const f = await base.faucet({ address: ALICE.toUpperCase().replace("0X", "0x"), asset: "uSOL", amount: 100n });
      await base.sealBlock();
      assert.equal(await base.balance(ALICE, "uSOL"), 100n, "EVM addresses are case-insensitive");
      assert.equal(await base.balance(ALICE, "uXRP"), 0n);
      const [block] = await base.blocks(1, 1);
      assert.deepEqual(block.transfers, [
        { txHash: f.txHash, index: 0, from: ZERO_ADDRESS, to: ALICE, amount: 100n, asset: "uSOL" },
      ]);
    });

    await t.step("a transfer above the balance is refused and changes nothing", async () => {
      const res = await base.submitErc20Transfer({ from: ALICE, to: BOB, asset: "uSOL", amount: 101n });
      assert.deepEqual(res, { ok: false, reason: "insufficient_balance" });
      assert.equal(await base.balance(ALICE, "uSOL"), 100n);
      assert.equal(await base.balance(BOB, "uSOL"), 0n);
      const head = await base.sealBlock();
      assert.deepEqual((await base.blocks(head.number, head.number))[0].transfers, [], "nothing was queued");
      const other = await base.submitErc20Transfer({ from: ALICE, to: BOB, asset: "uXRP", amount: 1n });
      assert.equal(other.ok, false, "a balance of another uAsset does not count");
    });

    await t.step("a covered transfer moves the amount and shows in the scan", async () => {
      const res = await base.submitErc20Transfer({ from: ALICE, to: BOB, asset: "uSOL", amount: 40n });
      assert.ok(res.ok);
      assert.equal(await base.balance(ALICE, "uSOL"), 60n);
      assert.equal(await base.balance(BOB, "uSOL"), 40n);
      const head = await base.sealBlock();
      assert.equal(head.number, res.blockNumber);
      assert.deepEqual((await base.blocks(head.number, head.number))[0].transfers, [
        { txHash: res.txHash, index: 0, from: ALICE, to: BOB, amount: 40n, asset: "uSOL" },
      ]);
    });
  });
});

Deno.test("sim ledger: mints through the adapter", async (t) => {
  await withKv(async (kv) => {
    const chains = simChains(kv, { random: seededRandom(3) });
    const minter = chains.minter("arbitrum");
    const ledger = chains.ledger("arbitrum");
    const request = { depositId: depositId(1), to: BOB, asset: "uSUI" as const, amountWei: 7n * 10n ** 18n };

    const first = await minter.prepareMint(request);
    await t.step("preparing does not submit, and two preparations are different transactions", async () => {
      const again = await minter.prepareMint(request);
      assert.notEqual(again.txHash, first.txHash);
      assert.notEqual(again.raw, first.raw);
      assert.deepEqual(await ledger.txStatus(first.txHash), { state: "unknown" });
      assert.equal(await minter.mintedBy(request.depositId), null);
    });

    await t.step("broadcasting the same raw twice has one effect", async () => {
      await minter.broadcast(first);
      await minter.broadcast(first);
      assert.equal((await ledger.submitRaw(first.raw)).txHash, first.txHash);
      assert.equal(await ledger.balance(BOB, "uSUI"), request.amountWei);
      assert.equal(await minter.mintedBy(request.depositId), first.txHash);
      assert.equal(await minter.mintedBy(request.depositId.toUpperCase().replace("0X", "0x")), first.txHash);
      await ledger.sealBlock();
      await minter.broadcast(first);
      assert.equal(await ledger.balance(BOB, "uSUI"), request.amountWei);
      assert.deepEqual(await chains.reader("arbitrum").txStatus(first.txHash), {
        state: "included",
        blockNumber: 1,
        confirmations: 1,
        success: true,
      });
      const [block] = await ledger.blocks(1, 1);
      assert.deepEqual(block.transfers, [
        { txHash: first.txHash, index: 0, from: ZERO_ADDRESS, to: BOB, amount: request.amountWei, asset: "uSUI" },
      ]);
    });

    await t.step("a second mint of the same deposit id fails with no effect", async () => {
      const second = await minter.prepareMint({ ...request, to: CAROL });
      await minter.broadcast(second);
      assert.deepEqual(await ledger.txStatus(second.txHash), { state: "pending" });
      await ledger.sealBlock();
      assert.deepEqual(await ledger.txStatus(second.txHash), {
        state: "included",
        blockNumber: 2,
        confirmations: 1,
        success: false,
        reason: "deposit already minted",
      });
      assert.equal(await ledger.balance(CAROL, "uSUI"), 0n);
      assert.equal(await ledger.balance(BOB, "uSUI"), request.amountWei);
      assert.equal(await minter.mintedBy(request.depositId), first.txHash);
      assert.deepEqual((await ledger.blocks(2, 2))[0].transfers, [], "a failed transaction transfers nothing");
    });

    await t.step("adapters refuse the wrong kind of chain and malformed requests", async () => {
      assert.throws(() => chains.minter("sol" as unknown as EvmChain));
      assert.throws(() => chains.payer("base" as unknown as NativeChain));
      await assert.rejects(minter.prepareMint({ ...request, to: "not-an-address" }));
      await assert.rejects(ledger.submitRaw("{}"));
      await assert.rejects(new SimLedger(kv, "sol").submitRaw(first.raw), "a mint is not a native-chain transaction");
    });
  });
});

Deno.test("sim ledger: fault injection", async (t) => {
  await withKv(async (kv) => {
    let clock = 1_000_000;
    const chains = simChains(kv, { random: seededRandom(4), operatorAddress: OPERATOR, now: () => clock });

    await t.step("revertNextMint fails exactly the next mint", async () => {
      const ledger = chains.ledger("katana");
      const minter = chains.minter("katana");
      await ledger.setFaults({ revertNextMint: 1 });
      const req = { depositId: depositId(2), to: ALICE, asset: "uDOGE" as const, amountWei: 10n };
      const failed = await minter.prepareMint(req);
      await minter.broadcast(failed);
      assert.equal((await ledger.getFaults()).revertNextMint, 0, "consumed");
      assert.equal(await ledger.balance(ALICE, "uDOGE"), 0n);
      assert.equal(await minter.mintedBy(req.depositId), null, "a reverted mint does not use up the deposit id");
      const ok = await minter.prepareMint(req);
      await minter.broadcast(ok);
      await ledger.sealBlock();
      assert.deepEqual(await ledger.txStatus(failed.txHash), {
        state: "included",
        blockNumber: 1,
        confirmations: 1,
        success: false,
        reason: "execution reverted",
      });
      assert.equal((await ledger.txStatus(ok.txHash) as { success: boolean }).success, true);
      assert.equal(await ledger.balance(ALICE, "uDOGE"), 10n);
      assert.equal(await minter.mintedBy(req.depositId), ok.txHash);
    });

    await t.step("failNextPayout fails exactly the next payout; payouts debit the hot wallet", async () => {
      const ledger = chains.ledger("xrp");
      const payer = chains.payer("xrp");
      await ledger.setFaults({ failNextPayout: 1 });
      const req = { orderId: "order-1", to: "rUser", amount: 2_500_000n, memo: "42" };
      const failed = await payer.preparePayout(req);
      await payer.broadcast(failed);
      assert.equal((await ledger.getFaults()).failNextPayout, 0);
      assert.equal(await ledger.balance("rUser", "native"), 0n);
      assert.equal(await ledger.balance(OPERATOR("xrp"), "native"), 0n, "not even funded by a failed payout");
      const ok = await payer.preparePayout(req);
      await payer.broadcast(ok);
      await ledger.sealBlock();
      assert.deepEqual(await ledger.txStatus(failed.txHash), {
        state: "included",
        blockNumber: 1,
        confirmations: 1,
        success: false,
        reason: "transaction failed",
      });
      assert.equal(await ledger.balance("rUser", "native"), 2_500_000n);
      assert.equal(await ledger.balance(OPERATOR("xrp"), "native"), HOT_WALLET_GENESIS - 2_500_000n);
      const [block] = await ledger.blocks(1, 1);
      assert.deepEqual(block.transfers, [
        { txHash: ok.txHash, index: 0, from: OPERATOR("xrp"), to: "rUser", amount: 2_500_000n, asset: "native" },
      ]);
    });

    await t.step("a stall prevents sealing until it ends", async () => {
      const ledger = chains.ledger("doge");
      await ledger.setFaults({ stalledUntil: clock + 60_000 });
      const dep = await ledger.submitNativeTransfer({ from: "D-out", to: "D-in", amount: 9n });
      assert.equal((await ledger.sealBlock()).number, 0);
      clock += 59_999;
      assert.equal((await ledger.sealBlock()).number, 0);
      assert.deepEqual(await ledger.txStatus(dep.txHash), { state: "pending" });
      clock += 1;
      assert.equal((await ledger.sealBlock()).number, 1);
      assert.equal((await ledger.txStatus(dep.txHash)).state, "included");
    });

    await t.step("rpcErrorRate 1 makes every adapter call throw, with no effect; 0 none", async () => {
      const calls = (reader: ChainReader) => [
        () => reader.tip(),
        () => reader.blockHash(0),
        () => reader.scan(0, 1),
        () => reader.txStatus("0x"),
      ];
      const base = chains.ledger("base");
      const sol = chains.ledger("sol");
      const mintReq = { depositId: depositId(3), to: DAVE, asset: "uSOL" as const, amountWei: 5n };
      const payReq = { orderId: "o", to: "sol-user", amount: 5n, memo: null };
      const mint = await chains.minter("base").prepareMint(mintReq);
      const payout = await chains.payer("sol").preparePayout(payReq);

      await base.setFaults({ rpcErrorRate: 1 });
      await sol.setFaults({ rpcErrorRate: 1 });
      const all = [
        ...calls(chains.reader("base")),
        ...calls(chains.reader("sol")),
        () => chains.minter("base").prepareMint(mintReq),
        () => chains.minter("base").broadcast(mint),
        () => chains.minter("base").mintedBy(mintReq.depositId),
        () => chains.payer("sol").preparePayout(payReq),
        () => chains.payer("sol").broadcast(payout),
      ];
      for (const call of all) await assert.rejects(call, TransientChainError);
      assert.equal(await base.balance(DAVE, "uSOL"), 0n, "the failed broadcast never reached the ledger");
      assert.equal(await sol.balance("sol-user", "native"), 0n);
      assert.equal((await chains.reader("doge").tip()).number, 1, "other chains are unaffected");

      await base.setFaults({ rpcErrorRate: 0 });
      await sol.setFaults({ rpcErrorRate: 0 });
      for (const call of all) await call();
      assert.equal(await base.balance(DAVE, "uSOL"), 5n);
      assert.equal(await sol.balance("sol-user", "native"), 5n);
    });

    await t.step("faults are validated", async () => {
      const ledger = chains.ledger("sui");
      await assert.rejects(ledger.setFaults({ rpcErrorRate: 2 }));
      await assert.rejects(ledger.setFaults({ revertNextMint: -1 }));
      await assert.rejects(ledger.setFaults({ bogus: 1 } as never));
      assert.deepEqual(await ledger.getFaults(), {
        rpcErrorRate: 0,
        revertNextMint: 0,
        failNextPayout: 0,
        stalledUntil: 0,
        stallPayouts: 0,
      });
    });
  });
});

Deno.test("sim ledger: reorgs", async (t) => {
  await withKv(async (kv) => {
    const chains = simChains(kv, { random: seededRandom(5), operatorAddress: OPERATOR });

    await t.step("the last k blocks lose their transactions and hashes; blocks below stay", async () => {
      const ledger = chains.ledger("world");
      const minter = chains.minter("world");
      const kept = await ledger.faucet({ address: ALICE, asset: "uZEC", amount: 100n });
      await ledger.sealBlock(); // 1
      const mint = await minter.prepareMint({ depositId: depositId(9), to: BOB, asset: "uZEC", amountWei: 50n });
      await minter.broadcast(mint);
      const spend = await ledger.submitErc20Transfer({ from: ALICE, to: CAROL, asset: "uZEC", amount: 30n });
      assert.ok(spend.ok);
      await ledger.sealBlock(); // 2
      const late = await ledger.faucet({ address: CAROL, asset: "uZEC", amount: 7n });
      await ledger.sealBlock(); // 3
      const pending = await ledger.faucet({ address: DAVE, asset: "uZEC", amount: 9n });
      const before = await ledger.blocks(0, 3);
      assert.equal(await ledger.balance(CAROL, "uZEC"), 37n);

      const head = await ledger.reorg(2);
      assert.equal(head.number, 3, "tip height unchanged");
      assert.notEqual(head.hash, before[3].hash);
      const after = await ledger.blocks(0, 3);
      assert.equal(after[0].hash, before[0].hash);
      assert.equal(after[1].hash, before[1].hash);
      assert.notEqual(after[2].hash, before[2].hash);
      assert.notEqual(after[3].hash, before[3].hash);
      assert.equal(after[2].parentHash, before[1].hash);
      assert.equal(after[3].parentHash, after[2].hash);
      assert.equal(await ledger.blockHash(3), head.hash);
      assert.deepEqual(after.slice(2).map((b) => b.transfers), [[], []]);
      assert.deepEqual(after[1].transfers, before[1].transfers);

      assert.equal(await ledger.balance(ALICE, "uZEC"), 100n, "the spend is undone");
      assert.equal(await ledger.balance(BOB, "uZEC"), 0n);
      assert.equal(await ledger.balance(CAROL, "uZEC"), 0n);
      assert.equal(await ledger.balance(DAVE, "uZEC"), 9n, "pending transactions are untouched");
      assert.equal(await minter.mintedBy(depositId(9)), null);
      for (const h of [mint.txHash, spend.txHash, late.txHash]) {
        assert.deepEqual(await ledger.txStatus(h), { state: "unknown" });
      }
      assert.deepEqual(await ledger.txStatus(kept.txHash), {
        state: "included",
        blockNumber: 1,
        confirmations: 3,
        success: true,
      });
      assert.deepEqual(await ledger.txStatus(pending.txHash), { state: "pending" });

      const next = await ledger.sealBlock();
      assert.equal(next.number, 4);
      assert.deepEqual((await ledger.blocks(4, 4))[0].transfers.map((x) => x.txHash), [pending.txHash]);
      assert.equal((await scannedTxs(ledger)).has(mint.txHash), false, "not re-included");
    });

    await t.step("rebroadcasting a reorganised-out transaction executes it once more", async () => {
      const ledger = chains.ledger("world");
      const minter = chains.minter("world");
      const mint = await minter.prepareMint({ depositId: depositId(10), to: BOB, asset: "uZEC", amountWei: 50n });
      await minter.broadcast(mint);
      await ledger.sealBlock();
      await ledger.reorg(1);
      assert.equal(await ledger.balance(BOB, "uZEC"), 0n);
      await minter.broadcast(mint);
      await minter.broadcast(mint);
      assert.equal(await ledger.balance(BOB, "uZEC"), 50n);
      assert.equal(await minter.mintedBy(depositId(10)), mint.txHash);
    });

    await t.step("a native reorg refunds the hot wallet and removes the deposit", async () => {
      const ledger = chains.ledger("sui");
      const payer = chains.payer("sui");
      const dep = await ledger.submitNativeTransfer({ from: "0xout", to: "0xdeposit", amount: 3n });
      const payout = await payer.preparePayout({ orderId: "o1", to: "0xuser", amount: 4n, memo: null });
      await payer.broadcast(payout);
      await ledger.sealBlock();
      assert.equal(await ledger.balance(OPERATOR("sui"), "native"), HOT_WALLET_GENESIS - 4n);
      await ledger.reorg(1);
      assert.equal(await ledger.balance(OPERATOR("sui"), "native"), HOT_WALLET_GENESIS);
      assert.equal(await ledger.balance("0xuser", "native"), 0n);
      assert.equal(await ledger.balance("0xdeposit", "native"), 0n);
      assert.deepEqual(await ledger.txStatus(dep.txHash), { state: "unknown" });
    });

    await t.step("the depth is capped at the tip's height and genesis never changes", async () => {
      const ledger = chains.ledger("unichain");
      const genesis = await ledger.blockHash(0);
      await ledger.faucet({ address: ALICE, asset: "uSOL", amount: 1n });
      await ledger.sealBlock();
      await ledger.sealBlock();
      const head = await ledger.reorg(50);
      assert.equal(head.number, 2);
      assert.equal(await ledger.blockHash(0), genesis);
      assert.equal(await ledger.balance(ALICE, "uSOL"), 0n);
      assert.equal((await ledger.reorg(0)).hash, head.hash);
    });
  });
});

Deno.test("sim ledger: concurrency", async (t) => {
  await withKv(async (kv, path) => {
    // A second handle on the same file behaves like a second process.
    const kv2 = await Deno.openKv(path);
    try {
      await t.step("submissions racing block sealing land in exactly one block each", async () => {
        const ledgers = [new SimLedger(kv, "doge"), new SimLedger(kv2, "doge")];
        const expected = new Map<string, bigint>();
        const work: Promise<unknown>[] = [];
        for (let i = 0; i < 50; i++) {
          const to = `D-addr-${i % 5}`;
          const amount = BigInt(i + 1);
          expected.set(to, (expected.get(to) ?? 0n) + amount);
          work.push(ledgers[i % 2].submitNativeTransfer({ from: "D-out", to, amount }));
          if (i % 7 === 0) work.push(ledgers[(i + 1) % 2].sealBlock());
        }
        const results = await Promise.all(work);
        const hashes = results.filter((r): r is { txHash: string } =>
          typeof r === "object" && r !== null && "txHash" in r
        )
          .map((r) => r.txHash);
        assert.equal(new Set(hashes).size, 50);
        await ledgers[0].sealBlock(); // whatever was submitted after the last seal

        const seen = await scannedTxs(ledgers[0]);
        assert.deepEqual([...seen.keys()].sort(), [...hashes].sort(), "every transaction is in a block");
        for (const [hash, blocks] of seen) assert.equal(blocks.length, 1, `${hash} is in one block`);
        for (const h of hashes) assert.equal((await ledgers[1].txStatus(h)).state, "included");
        for (const [address, sum] of expected) assert.equal(await ledgers[1].balance(address, "native"), sum);
        const head = await ledgers[0].head();
        const blocks = await ledgers[0].blocks(0, head.number);
        blocks.slice(1).forEach((b, i) => assert.equal(b.parentHash, blocks[i].hash));
      });

      await t.step("concurrent sealers each extend the chain by one block", async () => {
        const ledger = new SimLedger(kv, "zec");
        const heads = await Promise.all(
          Array.from({ length: 6 }, (_, i) => new SimLedger(i % 2 ? kv : kv2, "zec").sealBlock()),
        );
        assert.deepEqual(heads.map((h) => h.number).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6]);
        assert.equal((await ledger.head()).number, 6);
      });

      await t.step("concurrent spends of one balance never overdraw it", async () => {
        const base = [new SimLedger(kv, "base"), new SimLedger(kv2, "base")];
        await base[0].faucet({ address: ALICE, asset: "uXRP", amount: 100n });
        const results = await Promise.all(
          Array.from(
            { length: 30 },
            (_, i) => base[i % 2].submitErc20Transfer({ from: ALICE, to: BOB, asset: "uXRP", amount: 10n }),
          ),
        );
        assert.equal(results.filter((r) => r.ok).length, 10);
        assert.equal(results.filter((r) => !r.ok).length, 20);
        assert.equal(await base[0].balance(ALICE, "uXRP"), 0n);
        assert.equal(await base[1].balance(BOB, "uXRP"), 100n);
      });

      await t.step("concurrent mints of one deposit id: exactly one succeeds", async () => {
        const chains = [simChains(kv), simChains(kv2)];
        const req = { depositId: depositId(77), to: CAROL, asset: "uXRP" as const, amountWei: 3n };
        const prepared = await Promise.all(Array.from({ length: 8 }, () => chains[0].minter("base").prepareMint(req)));
        await Promise.all(prepared.map((p, i) => chains[i % 2].minter("base").broadcast(p)));
        assert.equal(await chains[0].ledger("base").balance(CAROL, "uXRP"), 3n);
        const winner = await chains[1].minter("base").mintedBy(req.depositId);
        assert.ok(prepared.some((p) => p.txHash === winner));
      });
    } finally {
      kv2.close();
    }
  });
});
