/**
 * Outsiders cannot grow our storage (sim ledgers, real KV file, watchers driven by hand): sub-minimum transfers from
 * a sender with no burn configuration and dust deposits are counted in one aggregate per (chain, sender, asset),
 * exactly once across rescans and reorgs, and listed by `deno task admin orders held`; burn-configuration history is
 * capped. A non-Payment XRP credit (a PaymentChannelClaim) below the dust limit is dust too, not a held record.
 */
import { displayAmount, unitOf } from "../model/amounts.ts";
import assert from "node:assert/strict";
import { NATIVE, REORG_WINDOW_BLOCKS } from "../chains/catalog.ts";
import type { SimLedger } from "../chains/sim/ledger.ts";
import {
  BURN_CONFIG_HISTORY_CAP,
  createBurnConfig,
  getBurnConfig,
  listBurnConfigHistory,
  updateBurnConfig,
} from "../kv/burn_configs.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import type { Order } from "../model/order.ts";
import { heldTransferId } from "../kv/held_ids.ts";
import { openKv } from "../kv/open.ts";
import {
  countHeld,
  cursorKey,
  HELD_PAGE_MAX,
  heldKey,
  type HeldTransfer,
  listDust,
  listHeld,
  listHeldNewest,
  recentBlocksKey,
} from "../kv/pipeline.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { runTask } from "./support/cli.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";
import { countKeys, handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";
import { elsewhere, signer, xrpHandPipeline } from "./support/xrp_env.ts";

const STRANGER = "0x" + "5e".repeat(20);

/** Seals blocks until nothing is pending (sim blocks take at most 64 transactions). */
async function sealAll(ledger: SimLedger) {
  const last = await ledger.head();
  for (let i = 0; i < 100; i++) {
    const head = await ledger.sealBlock();
    const block = (await ledger.blocks(head.number, head.number))[0];
    if (block.transfers.length === 0 && head.number > last.number) return;
  }
}

/** `n` transfers of `amount` wei from `from` to the transfer address, submitted at once. */
async function transfers(ledger: SimLedger, from: string, n: number, amount: bigint) {
  await ledger.faucet({ address: from, asset: "uDOGE", amount: amount * BigInt(n) });
  for (let i = 0; i < n; i++) {
    const res = await ledger.submitErc20Transfer({ from, to: SIM_TRANSFER_ADDRESS, asset: "uDOGE", amount });
    assert.ok(res.ok);
  }
}

Deno.test("1,000 1-wei transfers from an unknown sender make one dust aggregate, counted once across rescans and reorgs", async (t) => {
  const p = await handPipeline();
  try {
    const ledger = p.sim.ledger("base");
    await t.step("one aggregate with count 1000 and the sum; no held record, no dedupe key", async () => {
      await transfers(ledger, STRANGER, 1000, 1n);
      await sealAll(ledger);
      await watchToTip(p.ctx, "base");
      const dust = await listDust(p.kv);
      assert.equal(dust.length, 1);
      assert.equal(dust[0].chain, "base");
      assert.equal(dust[0].sender, STRANGER);
      assert.equal(dust[0].asset, "uDOGE");
      assert.equal(dust[0].count, 1000);
      assert.equal(dust[0].sum, "1000");
      assert.ok(dust[0].blocks.length <= REORG_WINDOW_BLOCKS);
      assert.equal(await countKeys(p.kv, ["held_transfer"]), 0);
      assert.equal(await countKeys(p.kv, ["transfer_seen"]), 0);
      assert.equal(await countKeys(p.kv, ["order"]), 0);
      assert.equal(await countKeys(p.kv, ["dust"]), 1);
    });

    await t.step("a rescan after a crash, from an older cursor or from none, does not count twice", async () => {
      await p.kv.set(cursorKey("base"), { number: 3, hash: await ledger.blockHash(3) });
      assert.equal(await watchToTip(p.ctx, "base"), 0);
      await p.kv.delete(cursorKey("base"));
      await p.kv.delete(recentBlocksKey("base"));
      assert.equal(await watchToTip(p.ctx, "base"), 0);
      const [dust] = await listDust(p.kv);
      assert.equal(dust.count, 1000);
      assert.equal(dust.sum, "1000");
    });

    await t.step("a reorganised block replaces its old contribution", async () => {
      await transfers(ledger, STRANGER, 10, 3n);
      await ledger.sealBlock();
      await watchToTip(p.ctx, "base");
      assert.equal((await listDust(p.kv))[0].count, 1010);
      // The branch that wins holds five other transfers at that height instead of the ten.
      await transfers(ledger, STRANGER, 5, 7n);
      await ledger.reorg(1, { pendingPerBlock: 64 });
      await watchToTip(p.ctx, "base");
      const [dust] = await listDust(p.kv);
      assert.equal(dust.count, 1005);
      assert.equal(dust.sum, (1000n + 5n * 7n).toString());
    });

    await t.step("a reorganised block whose replacement holds no dust takes its contribution away", async () => {
      await transfers(ledger, STRANGER, 4, 11n);
      await ledger.sealBlock();
      await watchToTip(p.ctx, "base");
      assert.equal((await listDust(p.kv))[0].count, 1009);
      await ledger.reorg(1);
      await watchToTip(p.ctx, "base");
      const [dust] = await listDust(p.kv);
      assert.equal(dust.count, 1005);
      assert.equal(dust.sum, (1000n + 5n * 7n).toString());
    });

    await t.step("a sub-minimum transfer from a configured sender is still its own (failed) order", async () => {
      const partner = "0x" + "9a".repeat(20);
      await createBurnConfig(p.kv, partner, "doge", "doge-destination", null);
      await transfers(ledger, partner, 1, 1n);
      await ledger.sealBlock();
      assert.equal(await watchToTip(p.ctx, "base"), 1);
      assert.equal(await countKeys(p.kv, ["transfer_seen"]), 1);
      assert.equal((await listDust(p.kv)).length, 1);
    });

    await t.step("deno task admin orders held lists the aggregate", async () => {
      const res = await runTask("admin", { KV_PATH: p.kvPath }, ["orders", "held"]);
      assert.equal(res.code, 0, res.stderr);
      const line = res.stdout.split("\n").find((l) => l.includes(`from=${STRANGER}`));
      assert.ok(line, res.stdout);
      assert.match(line, /^base\tdust\t/);
      assert.ok(line.includes(`\t${displayAmount(1035n, unitOf("uDOGE"))} in 1005 transfer(s)\t`), line);
      assert.match(res.stdout, /\n1 dust aggregate\(s\)/);
    });
  } finally {
    await p.close();
  }
});

Deno.test("dust deposits are aggregated; between dust and the minimum they stay failed orders", async () => {
  const p = await handPipeline();
  try {
    const owner = "0x" + "cd".repeat(20);
    await ensureUserWallet(p.kv, owner, "test-partner");
    const created = await createMintWallet(p.kv, owner, "xrp", "base", (c, i) => `${c}-deposit-${i}`);
    assert.ok(created.ok);
    const ledger = p.sim.ledger("xrp");
    const { dustDeposit, minimumDeposit } = NATIVE.xrp;
    for (let i = 0; i < 30; i++) {
      await ledger.submitNativeTransfer({ from: "xrp-spammer", to: created.wallet.address, amount: 1n + BigInt(i) });
    }
    await ledger.submitNativeTransfer({ from: "xrp-spammer", to: created.wallet.address, amount: dustDeposit - 1n });
    const small = await ledger.submitNativeTransfer({
      from: "xrp-spammer",
      to: created.wallet.address,
      amount: dustDeposit,
    });
    await ledger.sealBlock();
    await watchToTip(p.ctx, "xrp");
    const dust = await listDust(p.kv);
    assert.equal(dust.length, 1);
    assert.deepEqual([dust[0].chain, dust[0].sender, dust[0].asset, dust[0].count], ["xrp", "xrp-spammer", "XRP", 31]);
    assert.equal(dust[0].sum, (465n + dustDeposit - 1n).toString());
    const orders: Order[] = [];
    for await (const e of p.kv.list<Order>({ prefix: ["order"] })) orders.push(e.value);
    assert.equal(orders.length, 1, "only the deposit at the dust limit is an order");
    assert.equal(orders[0].amount, dustDeposit.toString());
    assert.ok(BigInt(orders[0].amount) < minimumDeposit, "it fails later with Insufficient deposit amount");
    assert.equal(orders[0].details.source.txHash, small.txHash);
  } finally {
    await p.close();
  }
});

Deno.test("burn configuration updated 200 times keeps at most the cap of history entries, newest kept", async () => {
  const p = await handPipeline();
  try {
    const owner = "0x" + "ef".repeat(20);
    await createBurnConfig(p.kv, owner, "sol", "dest-0", null);
    for (let i = 1; i <= 200; i++) {
      const res = await updateBurnConfig(p.kv, owner, "sol", `dest-${i}`, null);
      assert.ok(res.ok);
    }
    assert.equal(BURN_CONFIG_HISTORY_CAP, 50);
    const history = await listBurnConfigHistory(p.kv, owner, "sol");
    assert.equal(history.length, BURN_CONFIG_HISTORY_CAP);
    assert.equal(await countKeys(p.kv, ["burn_config_history"]), BURN_CONFIG_HISTORY_CAP);
    assert.deepEqual(history.map((h) => h.destinationAddress), Array.from({ length: 50 }, (_, i) => `dest-${150 + i}`));
    assert.equal((await getBurnConfig(p.kv, owner, "sol"))?.destinationAddress, "dest-200");
  } finally {
    await p.close();
  }
});

Deno.test("xrp on a rippled-shaped server: 200 one-drop PaymentChannelClaims to a deposit address make one dust aggregate, not 200 held records", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  const { p } = await xrpHandPipeline(server, { payer: false, live: { xrp: { startBlock: "tip" } } });
  try {
    const owner = "0x" + "ab".repeat(20);
    await ensureUserWallet(p.kv, owner, "test-partner");
    const wallet = await createMintWallet(p.kv, owner, "xrp", "base", (_c, i) => signer.address("xrp", i));
    assert.ok(wallet.ok);
    const deposit = wallet.wallet.address;
    h.fund(deposit, h.reserveBase);
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await watchToTip(p.ctx, "xrp"), 0, "the watcher starts at the validated ledger");
    // An outsider's channel to our public deposit address, claimed one drop at a time over two ledgers (about 10
    // drops of fee each), and one claim above the dust limit.
    for (let i = 0; i < 100; i++) h.paymentChannelClaim(elsewhere, deposit, 1n);
    h.closeLedgers(1);
    for (let i = 0; i < 100; i++) h.paymentChannelClaim(elsewhere, deposit, 1n);
    const large = h.paymentChannelClaim(elsewhere, deposit, NATIVE.xrp.dustDeposit);
    h.validateThrough(h.closedIndex + 1);
    await watchToTip(p.ctx, "xrp");
    const held = await listHeld(p.kv);
    assert.equal(held.length, 1, "only the claim above the dust limit is held");
    assert.deepEqual(held.map((r) => [r.txHash, r.amount]), [[large, NATIVE.xrp.dustDeposit.toString()]]);
    assert.match(held[0].reason, /PaymentChannelClaim/);
    const dust = (await listDust(p.kv)).filter((d) => d.chain === "xrp");
    assert.deepEqual(dust.map((d) => [d.sender, d.asset, d.count, d.sum]), [[elsewhere, "XRP", 200, "200"]]);
    assert.equal(await countKeys(p.kv, ["transfer_seen", "xrp"]), 1, "dust gets no dedupe key of its own");
    // An issued-currency payment delivers 0 drops: a dust limit in drops says nothing of its value, so it stays held.
    const iou = h.iouPayment(deposit, "0.000001");
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await watchToTip(p.ctx, "xrp"), 1);
    assert.match((await listHeld(p.kv)).find((r) => r.txHash === iou)?.reason ?? "", /issued-currency payment/);
  } finally {
    await p.close();
    await server.close();
  }
});

Deno.test("held list over the admin API and the CLI: newest first, at most --limit, the total from a counter; a release counts down", async () => {
  const p = await handPipeline();
  const ledger = p.sim.ledger("base");
  const amount = NATIVE.doge.uAsset.minimumBurnAmount;
  const ids: string[] = [];
  const senders: string[] = [];
  for (let i = 0; i < 5; i++) {
    const from = "0x" + (0x10 + i).toString(16).repeat(20);
    await transfers(ledger, from, 1, amount);
    await ledger.sealBlock();
    p.advance(1000); // each detected a second after the one before
    assert.equal(await watchToTip(p.ctx, "base"), 1);
    const [held] = (await listHeld(p.kv)).filter((h) => h.from === from);
    ids.unshift(heldTransferId(held)); // newest first
    senders.unshift(from);
  }
  // The service on the same KV file, as an operator's server would be.
  const server = await startTestServer({ KV_PATH: p.kvPath });
  try {
    const key = await operatorKeyFor(server, ["read", "operate"], "alice");
    const get = async (path: string) => {
      const res = await call(server, "GET", `/admin${path}`, { token: key });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    };
    const page = await get("/held?limit=2");
    assert.deepEqual(page.held.map((h: { id: string }) => h.id), ids.slice(0, 2));
    assert.equal(page.total, 5);
    const all = await get("/held");
    assert.deepEqual(all.held.map((h: { id: string }) => h.id), ids, "the default limit shows all five");
    assert.equal(all.total, 5);
    const transfersPage = await get("/transfers/held?limit=3");
    assert.deepEqual(transfersPage.held.map(heldTransferId), ids.slice(0, 3));
    assert.equal(transfersPage.heldTotal, 5);
    for (const bad of ["0", String(HELD_PAGE_MAX + 1), "x"]) {
      const res = await call(server, "GET", `/admin/held?limit=${bad}`, { token: key });
      assert.equal(res.status, 400, bad);
      assert.match(JSON.stringify(res.body), new RegExp(`Must be a whole number from 1 to ${HELD_PAGE_MAX}`));
    }

    const cli = await runTask("admin", { KV_PATH: p.kvPath }, ["held", "list", "--limit", "2"]);
    assert.equal(cli.code, 0, cli.stderr);
    const lines = cli.stdout.trim().split("\n");
    assert.deepEqual(lines.slice(0, 2).map((l) => l.split("\t")[0]), ids.slice(0, 2));
    assert.equal(lines.at(-1), `2 of 5 held record(s), newest first (--limit shows more, up to ${HELD_PAGE_MAX})`);

    // Resolving one (its sender configured a burn since: released, it is a burn order) takes it out of the count.
    await createBurnConfig(p.kv, senders[1], "doge", "doge-destination", null);
    const released = await call(server, "POST", `/admin/held/${encodeURIComponent(ids[1])}/release`, {
      token: key,
      body: {},
    });
    assert.equal(released.status, 200, JSON.stringify(released.body));
    const after = await get("/held?limit=2");
    assert.deepEqual(after.held.map((h: { id: string }) => h.id), [ids[0], ids[2]]);
    assert.equal(after.total, 4);
  } finally {
    await server.close();
    await p.close();
  }
});

Deno.test("held transfers stored before their time index are indexed and counted once when the KV is opened, by two processes at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "held-index-" });
  const path = `${dir}/kv.sqlite3`;
  try {
    // As a version without the index wrote them: the record alone.
    const old = await Deno.openKv(path);
    const held = [0, 1, 2].map((i): HeldTransfer => ({
      chain: "base",
      txHash: "0x" + String(i + 1).repeat(64),
      index: 0,
      from: STRANGER,
      asset: "uDOGE",
      amount: NATIVE.doge.uAsset.minimumBurnAmount.toString(),
      blockNumber: 10 + i,
      detectedAt: new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString(),
      reason: "no burn configuration for doge",
    }));
    for (const h of held) await old.set(heldKey(h.chain, h.txHash, h.index), h);
    old.close();
    const both = await Promise.all([openKv(path), openKv(path)]);
    for (const kv of both) {
      assert.equal(await countHeld(kv), 3);
      assert.deepEqual(await listHeldNewest(kv, 2), [held[2], held[1]]);
      kv.close();
    }
    const again = await openKv(path);
    assert.equal(await countHeld(again), 3, "indexed once: a later open adds nothing");
    again.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
