/**
 * Refunds of held records (docs/refunds.md), over the admin API with an operator key: a native
 * deposit held because its destination chain is disabled, and a held mint order, each refunded to its sender exactly
 * once; refusals that change nothing; a crash between recording the refund's transaction and broadcasting it; dead and
 * failed attempts; a UTXO refund from the treasury; a held uAsset transfer sent back from the transfer address (and
 * waiting with a reason and an alert where no uAsset sender exists), reconciliation balanced throughout.
 *
 * The server's pipeline is stopped: the watcher and the actors run by hand, so each step is the test's.
 */
import assert from "node:assert/strict";
import { type ChainSymbol, EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import type { PipelineContext } from "../actors/context.ts";
import { watchOnce } from "../actors/watcher.ts";
import { stepOrder } from "../actors/order_actor.ts";
import { refundsTick, stepRefund } from "../actors/refunds.ts";
import { listAlerts } from "../kv/alerts.ts";
import { listAudit } from "../kv/audit.ts";
import { getOrder } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import {
  addHeldTransfer,
  heldKey,
  type HeldTransfer,
  listHeld,
  listOrderHolds,
  type OrderHold,
  orderHoldKey,
  readLease,
} from "../kv/pipeline.ts";
import { getRefund, listRefunds, type Refund } from "../kv/refunds.ts";
import { heldTransferId } from "../kv/held_ids.ts";
import { coinTotals, listSweepsDue, spendableCoins } from "../kv/treasury.ts";
import { sweepOnce } from "../actors/sweeper.ts";
import { waitUntil } from "./support/chain_facts.ts";
import { runTask } from "./support/cli.ts";
import { balance, depositAddress, FAST_PIPELINE, type Json, outside, partner, sim } from "./support/pipeline.ts";
import { call, operatorKeyFor, startTestServer, type TestServer } from "./support/server.ts";

type Server = TestServer;

/** The server, its pipeline stopped, and a context whose process does not run `disabled`. */
async function setup(disabled: ChainSymbol[] = []) {
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop();
  const running = server.services.pipeline!;
  const enabledChains: readonly ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS].filter((c) => !disabled.includes(c));
  // A clock a little ahead: every wait the actors schedule (a few sim blocks) has passed when the test steps again.
  const ctx: PipelineContext = {
    ...running,
    now: () => new Date(Date.now() + 5_000),
    settings: { ...running.settings, enabledChains, isEnabled: (c) => enabledChains.includes(c) },
  };
  const key = await operatorKeyFor(server, ["read", "operate"], "alice");
  return { server, ctx, key, kv: server.services.kv };
}

/** Seals enough sim blocks on `chain` for everything in it to be final. */
async function seal(ctx: PipelineContext, chain: ChainSymbol) {
  const ledger = new SimLedger(ctx.kv, chain);
  for (let i = 0; i < ctx.settings.confirmations(chain) + 1; i++) await ledger.sealBlock();
}

async function watchPast(ctx: PipelineContext, chain: ChainSymbol, blockNumber: number) {
  await waitUntil(`the ${chain} watcher past block ${blockNumber}`, async () => {
    const r = await watchOnce(ctx, chain, "by-hand", 100);
    return r.scannedTo !== null && r.scannedTo >= blockNumber;
  });
}

function refundCall(server: Server, key: string, heldId: string, to?: string) {
  return call(server, "POST", `/admin/held/${encodeURIComponent(heldId)}/refund`, {
    token: key,
    body: to === undefined ? {} : { to },
  });
}

/** Steps the refund, sealing a sim block between steps, until it is final; returns it. */
async function stepToFinal(ctx: PipelineContext, id: string, chain: ChainSymbol): Promise<Refund> {
  const ledger = new SimLedger(ctx.kv, chain);
  for (let i = 0; i < 30; i++) {
    // Each look a second later than the last: the wait the previous step scheduled (a sim block) has passed.
    const later = ctx.now().getTime() + (i + 1) * 1_000;
    await stepRefund({ ...ctx, now: () => new Date(later) }, id);
    const r = (await getRefund(ctx.kv, id)).value!;
    if (r.status === "completed" || r.status === "failed") return r;
    await ledger.sealBlock();
  }
  throw new Error(`refund ${id} not final: ${JSON.stringify((await getRefund(ctx.kv, id)).value)}`);
}

/** A sol deposit from `from` to a deposit address for base, watched; returns the deposit. */
async function solDeposit(server: Server, ctx: PipelineContext, from: string, amount: bigint) {
  const { token } = await partner(server);
  const address = await depositAddress(server, token, "sol", "base");
  const deposit = await sim(server, "deposits", { chain: "sol", address, amount: amount.toString(), from });
  await new SimLedger(ctx.kv, "sol").sealBlock();
  await watchPast(ctx, "sol", deposit.blockNumber);
  return { deposit, address };
}

Deno.test("refund: a native deposit held for a disabled chain goes back to its sender once, write-ahead", async (t) => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const sender = outside.depositAddress("sol", 21);
    const amount = 2_000_000_000n;
    const { deposit } = await solDeposit(server, ctx, sender, amount);
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    assert.equal(held.reason, "destination chain base is disabled");
    const heldId = heldTransferId(held);
    const before = await balance(server, "sol", sender);

    let refundId = "";
    await t.step("refusals change nothing: not final 409, unknown id 404, malformed id 400, bad --to 400", async () => {
      const audit = (await listAudit(kv)).length;
      const early = await refundCall(server, key, heldId);
      assert.equal(early.status, 409, JSON.stringify(early.body));
      assert.match(early.body.message, /is not final yet/);
      await seal(ctx, "sol");
      const unknown = await refundCall(server, key, `transfer:sol:${"ab".repeat(32)}:0`);
      assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
      assert.equal((await refundCall(server, key, `order:${crypto.randomUUID()}`)).status, 404);
      // One id parser for held list, release and refund (kv/held_ids.ts): an order id is a UUID.
      assert.equal((await refundCall(server, key, "order:no-such-order")).status, 400);
      const malformed = await refundCall(server, key, "transfer:nochain:x:0");
      assert.equal(malformed.status, 400);
      const badTo = await refundCall(server, key, heldId, "not-a-sol-address");
      assert.equal(badTo.status, 400);
      assert.match(badTo.body.message, /invalid refund destination on sol/);
      const evmTo = await refundCall(server, key, heldId, outside.evmAddress());
      assert.equal(evmTo.status, 400, "an EVM address is not a sol destination");
      assert.equal((await listAudit(kv)).length, audit);
      assert.deepEqual((await listRefunds(kv)).refunds, []);
      assert.ok((await kv.get(heldKey("sol", held.txHash, held.index))).value, "still held");
    });

    await t.step(
      "a read-only key may not refund (403); the operate key does, in one atomic with its audit",
      async () => {
        const reader = await operatorKeyFor(server, ["read"], "reader");
        assert.equal((await refundCall(server, reader, heldId)).status, 403);
        const res = await refundCall(server, key, heldId);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const refund: Json = res.body.data.refund;
        refundId = refund.id;
        assert.equal(refund.to, sender, "the recorded sender by default");
        assert.equal(refund.amount, amount.toString());
        assert.equal(refund.kind, "native");
        assert.equal(refund.asset, "SOL");
        assert.equal(refund.status, "pending");
        assert.equal((await kv.get(heldKey("sol", held.txHash, held.index))).value, null, "the held record is gone");
        const entry = (await listAudit(kv)).find((e) => e.id === res.body.data.auditId)!;
        assert.equal(entry.action, "held.refund");
        assert.equal(entry.subject, heldId);
        assert.match(entry.by, /^alice/);
        assert.deepEqual(entry.before, held);
        // Refunded once: the same id again is unknown now.
        assert.equal((await refundCall(server, key, heldId)).status, 404);
      },
    );

    await t.step("the refund actor sends it; the sender receives it exactly once", async () => {
      const done = await stepToFinal(ctx, refundId, "sol");
      assert.equal(done.status, "completed");
      assert.equal(done.transactionHash, done.intent?.txHash);
      assert.deepEqual(done.attempts, []);
      assert.equal(await balance(server, "sol", sender), before + amount);
      // More steps and blocks change nothing.
      assert.equal(await stepRefund(ctx, refundId), "done");
      await new SimLedger(kv, "sol").sealBlock();
      assert.equal(await balance(server, "sol", sender), before + amount);
      const listed = await call(server, "GET", "/admin/refunds", { token: key });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.refunds.length, 1);
      assert.equal(listed.body.data.refunds[0].status, "completed");
      assert.equal(listed.body.data.refunds[0].createdBy, entry0(await listAudit(kv)).by);
      // The same operation from the shell.
      const cli = await runTask("admin", { KV_PATH: server.kvPath }, ["refunds", "--json"]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(JSON.parse(cli.stdout), listed.body.data);
      const again = await runTask("admin", { KV_PATH: server.kvPath }, ["held", "refund", heldId, "--by", "bob"]);
      assert.equal(again.code, 2, "already refunded: unknown now");
      assert.match(again.stderr, /no held record/);
    });
  } finally {
    await server.close();
  }
});

function entry0(entries: { action: string; by: string }[]) {
  return entries.find((e) => e.action === "held.refund")!;
}

Deno.test("refund: a crash between recording and broadcasting re-sends the same transaction, once", async () => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const sender = outside.depositAddress("sol", 22);
    const to = outside.depositAddress("sol", 23);
    const amount = 3_000_000_000n;
    const { deposit } = await solDeposit(server, ctx, sender, amount);
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    await seal(ctx, "sol");
    const res = await refundCall(server, key, heldTransferId(held), to);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const id = res.body.data.refund.id;
    const before = await balance(server, "sol", to);

    const crashing: PipelineContext = {
      ...ctx,
      faultPoint: (p) => {
        if (p === "after-record") throw new Error("crash after record");
      },
    };
    await assert.rejects(() => stepRefund(crashing, id), /crash after record/);
    const recorded = (await getRefund(kv, id)).value!;
    assert.equal(recorded.status, "sending");
    const txHash = recorded.intent!.txHash;
    await new SimLedger(kv, "sol").sealBlock();
    assert.equal(await balance(server, "sol", to), before, "nothing was sent");

    const done = await stepToFinal(ctx, id, "sol");
    assert.equal(done.transactionHash, txHash, "the recorded transaction, re-sent");
    assert.deepEqual(done.attempts, []);
    assert.equal(await balance(server, "sol", to), before + amount);
  } finally {
    await server.close();
  }
});

/** A sol deposit for base, stepped by hand until its order is confirmed (processing) or `status`. */
async function mintOrder(server: Server, ctx: PipelineContext, from: string, status: Order["status"]) {
  const { deposit } = await solDeposit(server, ctx, from, 2_500_000_000n);
  const ledger = new SimLedger(ctx.kv, "sol");
  for (let i = 0; i < NATIVE.sol.simConfirmations + 1; i++) await ledger.sealBlock();
  let order: Order | null = null;
  for await (const e of ctx.kv.list<Order>({ prefix: ["order"] })) {
    if (e.value.details?.source?.txHash === deposit.txHash) order = e.value;
  }
  assert.ok(order, "the watcher made the order");
  for (let i = 0; i < 10 && order!.status !== status; i++) {
    await stepOrder(ctx, order!.id);
    order = (await getOrder(ctx.kv, order!.id)).value!;
  }
  assert.equal(order!.status, status);
  return order!;
}

async function holdOrder(kv: Deno.Kv, orderId: string) {
  // What the watcher writes on a reorg past finality (actors/watcher.ts), and the controls' cap holds too.
  const hold: OrderHold = {
    reason: "a reorg on sol replaced blocks past finality",
    at: new Date().toISOString(),
    alert: { kind: "reorg_past_finality", subject: "sol:test" },
  };
  await kv.set(orderHoldKey(orderId), hold);
}

Deno.test("refund: a held mint order is cancelled with the refund id and its coins go back", async (t) => {
  const { server, ctx, key, kv } = await setup();
  try {
    await t.step("an order with a recorded transaction is refused (409) and nothing changes", async () => {
      const minting = await mintOrder(server, ctx, outside.depositAddress("sol", 31), "minting");
      await holdOrder(kv, minting.id);
      const audit = (await listAudit(kv)).length;
      const res = await refundCall(server, key, `order:${minting.id}`);
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.match(res.body.message, /has a recorded transaction/);
      assert.deepEqual(await getOrder(kv, minting.id).then((e) => e.value), minting);
      assert.equal((await listOrderHolds(kv)).length, 1);
      assert.equal((await listAudit(kv)).length, audit);
      assert.deepEqual((await listRefunds(kv)).refunds, []);
      await kv.delete(orderHoldKey(minting.id));
    });

    await t.step("a confirmed held order: cancelled, hold gone, refunded to its sender", async () => {
      const sender = outside.depositAddress("sol", 32);
      const order = await mintOrder(server, ctx, sender, "processing");
      await holdOrder(kv, order.id);
      assert.equal(await stepOrder(ctx, order.id), "waiting", "held: not minted");
      const before = await balance(server, "sol", sender);
      const res = await refundCall(server, key, `order:${order.id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const id = res.body.data.refund.id;
      assert.equal(res.body.data.cancelledOrderId, order.id);
      const cancelled = (await getOrder(kv, order.id)).value!;
      assert.equal(cancelled.status, "cancelled");
      assert.equal(cancelled.details.cancelReason, "refunded by operator");
      assert.equal(cancelled.details.refundId, id);
      assert.equal(cancelled.details.intent, undefined);
      assert.deepEqual(await listOrderHolds(kv), []);
      // This time the refunds tick (actors/ticks.ts) steps it, under its lease, as a running process does.
      const ledger = new SimLedger(kv, "sol");
      for (let i = 0; i < 30 && (await getRefund(kv, id)).value!.status !== "completed"; i++) {
        const later = ctx.now().getTime() + (i + 1) * 1_000;
        await refundsTick({ ...ctx, now: () => new Date(later) }, "tick-owner", 60_000, true, () => false);
        await ledger.sealBlock();
      }
      const done = (await getRefund(kv, id)).value!;
      assert.equal(done.status, "completed");
      // Idle now: nothing due, and a tick reads and commits nothing (its lease record stays as it was).
      const lease = await readLease(kv, "refunds");
      assert.equal(lease.value?.owner, "tick-owner");
      assert.equal(await refundsTick(ctx, "tick-owner", 60_000, true, () => false), 0);
      assert.equal((await readLease(kv, "refunds")).versionstamp, lease.versionstamp);
      assert.equal((await Array.fromAsync(kv.list({ prefix: ["refund_due"] }))).length, 0);
      assert.equal(await balance(server, "sol", sender), before + BigInt(order.amount));
      // The cancelled order never mints.
      assert.equal(await stepOrder(ctx, order.id), "done");
      assert.equal((await getOrder(kv, order.id)).value!.status, "cancelled");
    });
  } finally {
    await server.close();
  }
});

/** uAssets sent to the transfer address by a sender with no burn configuration: held; returns its id. */
async function heldUAsset(server: Server, ctx: PipelineContext, from: string, amount: bigint) {
  await sim(server, "faucet", { chain: "base", address: from, token: "uSOL", amount: amount.toString() });
  const sent = await sim(server, "transfers", { chain: "base", from, token: "uSOL", amount: amount.toString() });
  await new SimLedger(ctx.kv, "base").sealBlock();
  await watchPast(ctx, "base", sent.blockNumber);
  await seal(ctx, "base");
  const held = (await listHeld(ctx.kv)).find((h) => h.txHash === sent.txHash);
  assert.ok(held, "held");
  assert.equal(held.reason, "no burn configuration for sol");
  return heldTransferId(held);
}

Deno.test("refund: a held uAsset transfer waits with a reason and an alert where no uAsset sender exists", async () => {
  const { server, ctx, key, kv } = await setup();
  try {
    const from = outside.evmAddress("m/44'/60'/0'/0/5").toLowerCase();
    const amount = NATIVE.sol.uAsset.minimumBurnAmount * 2n;
    const heldId = await heldUAsset(server, ctx, from, amount);
    const bad = await refundCall(server, key, heldId, outside.depositAddress("sol", 1));
    assert.equal(bad.status, 400, "a uAsset goes back to an EVM address");
    const res = await refundCall(server, key, heldId);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const id = res.body.data.refund.id;
    assert.equal(res.body.data.refund.kind, "uasset");
    assert.equal(res.body.data.refund.to, from);
    const noSender: PipelineContext = { ...ctx, chains: { ...ctx.chains, uAssetSender: undefined } };
    assert.equal(await stepRefund(noSender, id), "waiting");
    const waiting = (await getRefund(kv, id)).value!;
    assert.equal(waiting.status, "pending");
    assert.match(waiting.waitingReason ?? "", /no uAsset sender for base/);
    const [alert] = await listAlerts(kv, "refund_waiting");
    assert.equal(alert.subject, id);
  } finally {
    await server.close();
  }
});

async function baseUSolMismatches(server: Server, key: string): Promise<Json[]> {
  const rec = await call(server, "GET", "/admin/reconciliation", { token: key });
  assert.equal(rec.status, 200, JSON.stringify(rec.body));
  return rec.body.data.mismatches.filter((m: Json) => m.chain === "base" && m.asset === "uSOL");
}

Deno.test({
  name: "refund: a held uAsset transfer goes back to its sender from the transfer address, once",
  fn: async () => {
    const { server, ctx, key } = await setup();
    try {
      assert.ok(ctx.chains.uAssetSender, "the sim implements uAssetSender");
      const from = outside.evmAddress("m/44'/60'/0'/0/6").toLowerCase();
      const amount = NATIVE.sol.uAsset.minimumBurnAmount * 3n;
      const heldId = await heldUAsset(server, ctx, from, amount);
      const before = await balance(server, "base", from, "uSOL");
      const res = await refundCall(server, key, heldId);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // Recorded, not yet sent: the uAssets are still at the transfer address, and the refund accounts for them.
      assert.deepEqual(await baseUSolMismatches(server, key), []);
      // Recorded and sent, then mined but not final: leaving the transfer address, still accounted for.
      assert.equal(await stepRefund(ctx, res.body.data.refund.id), "moved");
      assert.deepEqual(await baseUSolMismatches(server, key), []);
      await new SimLedger(ctx.kv, "base").sealBlock();
      assert.deepEqual(await baseUSolMismatches(server, key), []);
      const done = await stepToFinal(ctx, res.body.data.refund.id, "base");
      assert.equal(done.status, "completed");
      assert.equal(await balance(server, "base", from, "uSOL"), before + amount);
      // The transfer address sent it back: reconciliation accounts for it (received = holds + burned + sent back).
      assert.deepEqual(await baseUSolMismatches(server, key), []);
    } finally {
      await server.close();
    }
  },
});

Deno.test("refund: a held deposit a reorg took off the chain is never refunded (409, nothing changes)", async () => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const ledger = new SimLedger(kv, "sol");
    const { deposit } = await solDeposit(server, ctx, outside.depositAddress("sol", 41), 2_000_000_000n);
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    await seal(ctx, "sol");
    await ledger.reorg((await ledger.head()).number - deposit.blockNumber + 1); // back to below the deposit
    await seal(ctx, "sol");
    const audit = (await listAudit(kv)).length;
    const res = await refundCall(server, key, heldTransferId(held));
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(res.body.message, /not a successful transaction on chain/);
    assert.deepEqual((await listRefunds(kv)).refunds, []);
    assert.equal((await listAudit(kv)).length, audit);
    assert.ok((await kv.get(heldKey("sol", held.txHash, held.index))).value, "still held");
  } finally {
    await server.close();
  }
});

/** A final held sol deposit of `amount` from `sender`, refunded over the API; returns the refund id. */
async function refundedSolDeposit(server: Server, ctx: PipelineContext, key: string, sender: string, amount: bigint) {
  const { deposit } = await solDeposit(server, ctx, sender, amount);
  const [held] = (await listHeld(ctx.kv)).filter((h) => h.txHash === deposit.txHash);
  await seal(ctx, "sol");
  const res = await refundCall(server, key, heldTransferId(held));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.refund.id as string;
}

async function solHolds(kv: Deno.Kv) {
  return (await Array.fromAsync(kv.list({ prefix: ["hot_wallet_hold", "sol"] }))).length;
}

Deno.test("refund: a transaction proven dead is kept as an attempt and a new one lands; a failed one stops", async (t) => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const ledger = new SimLedger(kv, "sol");
    await t.step("stalled past its expiry: dead, re-signed once, paid once", async () => {
      const sender = outside.depositAddress("sol", 51);
      const amount = 2_200_000_000n;
      const id = await refundedSolDeposit(server, ctx, key, sender, amount);
      const before = await balance(server, "sol", sender);
      await ledger.setFaults({ stallPayouts: 1 });
      let refund = (await getRefund(kv, id)).value!;
      for (let i = 1; i < 400 && refund.attempts.length === 0; i++) {
        await stepRefund({ ...ctx, now: () => new Date(Date.now() + 5_000 + i * 1_000) }, id);
        refund = (await getRefund(kv, id)).value!;
        if (refund.status === "sending") assert.equal(await solHolds(kv), 1, "its hot-wallet hold while recorded");
        await ledger.sealBlock();
      }
      assert.equal(refund.attempts.length, 1, "proven dead");
      assert.equal(refund.attempts[0].proof.kind, "expired");
      assert.equal(refund.status, "pending");
      assert.equal(await solHolds(kv), 0, "the dead attempt's hold is released");
      assert.equal(await balance(server, "sol", sender), before, "nothing paid by the dead attempt");
      const done = await stepToFinal({ ...ctx, now: () => new Date(Date.now() + 600_000) }, id, "sol");
      assert.equal(done.status, "completed");
      assert.notEqual(done.transactionHash, refund.attempts[0].txHash);
      assert.equal(done.attempts.length, 1);
      assert.equal(await balance(server, "sol", sender), before + amount);
      assert.equal(await solHolds(kv), 0);
    });

    await t.step("failed on chain: failed, attempt kept, alert, nothing paid, hold released", async () => {
      const sender = outside.depositAddress("sol", 52);
      const id = await refundedSolDeposit(server, ctx, key, sender, 2_300_000_000n);
      const before = await balance(server, "sol", sender);
      await ledger.setFaults({ failNextPayout: 1 });
      const done = await stepToFinal(ctx, id, "sol");
      assert.equal(done.status, "failed");
      assert.ok(done.failedIntent);
      assert.equal(done.intent, undefined);
      assert.equal(await balance(server, "sol", sender), before);
      assert.equal(await solHolds(kv), 0);
      const [alert] = await listAlerts(kv, "refund_failed");
      assert.equal(alert.subject, id);
      assert.equal(await stepRefund(ctx, id), "done");
    });
  } finally {
    await server.close();
  }
});

Deno.test("refund: a mint order held by a reorg past finality that took its deposit away is refused (409)", async () => {
  const { server, ctx, key, kv } = await setup();
  try {
    const ledger = new SimLedger(kv, "doge");
    const { token } = await partner(server);
    const address = await depositAddress(server, token, "doge", "base");
    await ledger.sealBlock();
    const fork = (await ledger.head()).number;
    const amount = (NATIVE.doge.minimumDeposit * 2n).toString();
    const from = outside.depositAddress("doge", 61);
    const deposit = await sim(server, "deposits", { chain: "doge", address, amount, from });
    await seal(ctx, "doge");
    await watchPast(ctx, "doge", deposit.blockNumber + ctx.settings.confirmations("doge"));
    const [order] = (await Array.fromAsync(kv.list<Order>({ prefix: ["order"] })))
      .map((e) => e.value).filter((o) => o.details?.source?.txHash === deposit.txHash);
    assert.equal(await stepOrder(ctx, order.id), "moved");
    assert.equal((await getOrder(kv, order.id)).value!.status, "processing");

    await ledger.reorg((await ledger.head()).number - fork); // the deposit leaves the chain, past its finality
    await ledger.sealBlock();
    await watchPast(ctx, "doge", (await ledger.head()).number);
    assert.deepEqual((await listOrderHolds(kv)).map((h) => h.orderId), [order.id], "the watcher held it");

    const audit = (await listAudit(kv)).length;
    const res = await refundCall(server, key, `order:${order.id}`);
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(res.body.message, /not a successful transaction on chain/);
    assert.equal((await getOrder(kv, order.id)).value!.status, "processing");
    assert.equal((await listOrderHolds(kv)).length, 1);
    assert.equal((await listAudit(kv)).length, audit);
    assert.deepEqual((await listRefunds(kv)).refunds, []);
  } finally {
    await server.close();
  }
});

Deno.test("refund: a held doge deposit is paid from the treasury's coins; its change comes back as a coin", async () => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const { token } = await partner(server);
    const address = await depositAddress(server, token, "doge", "base");
    const from = outside.depositAddress("doge", 71);
    const amount = NATIVE.doge.minimumDeposit * 3n;
    const deposit = await sim(server, "deposits", { chain: "doge", address, amount: amount.toString(), from });
    await seal(ctx, "doge");
    await watchPast(ctx, "doge", deposit.blockNumber);
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    assert.equal(held.from, from, "the sender as the watcher recorded it");
    const coinsBefore = await spendableCoins(kv, "doge");
    const before = await balance(server, "doge", from);
    const totalsBefore = await coinTotals(kv, "doge");
    const res = await refundCall(server, key, heldTransferId(held));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // The held output is ours: the refund's creation makes it a treasury coin, so the refund is paid from what the
    // sender sent, never from the coins that back minted uDOGE (which it would otherwise drain, the output left
    // off the books).
    const heldCoin = (await spendableCoins(kv, "doge")).find((c) =>
      c.outpoint.txHash === held.txHash && c.outpoint.index === held.index
    );
    assert.ok(heldCoin, "the held output is a treasury coin");
    assert.equal(heldCoin.amount, amount);
    assert.equal(heldCoin.address, address);
    assert.equal((await coinTotals(kv, "doge")).confirmed, totalsBefore.confirmed + amount);
    const done = await stepToFinal(ctx, res.body.data.refund.id, "doge");
    assert.equal(done.status, "completed");
    assert.equal(await balance(server, "doge", from), before + amount);
    const spent = done.intent!.consumes!.kind === "outpoints" ? done.intent!.consumes!.outpoints : [];
    assert.ok(spent.length > 0, "treasury coins funded it");
    const after = await spendableCoins(kv, "doge");
    const key_ = (o: { txHash: string; index: number }) => `${o.txHash}:${o.index}`;
    for (const o of spent) assert.ok(!after.some((c) => key_(c.outpoint) === key_(o)), "spent coins left");
    assert.ok(after.some((c) => c.outpoint.txHash === done.transactionHash), "its change is a treasury coin");
    assert.equal(after.length, coinsBefore.length + 1 - spent.length + 1);
    // The treasury paid only the network fee: what came in (the held output) went back out.
    const inputs = spent.length; // each spent coin is either the held output or one of the treasury's
    assert.ok(inputs > 0);
    const fee = totalsBefore.confirmed + amount - amount - (await coinTotals(kv, "doge")).confirmed;
    assert.ok(fee >= 0n && fee < amount / 10n, `the treasury paid ${fee}, only the fee`);
  } finally {
    await server.close();
  }
});

Deno.test("refund: --to one of our own addresses is refused (a refund never becomes a deposit or a self-send)", async () => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const sender = outside.depositAddress("sol", 23);
    const { deposit } = await solDeposit(server, ctx, sender, 1_500_000_000n);
    await seal(ctx, "sol");
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    const heldId = heldTransferId(held);
    // Another partner's sol deposit address: a refund sent there would be watched as their deposit and minted.
    const { token } = await partner(server);
    const theirs = await depositAddress(server, token, "sol", "arbitrum");
    const audit = (await listAudit(kv)).length;
    for (const to of [theirs, held.to!]) {
      const res = await refundCall(server, key, heldId, to);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.message, /one of our deposit addresses/);
    }
    assert.equal((await listAudit(kv)).length, audit);
    assert.deepEqual((await listRefunds(kv)).refunds, []);
    assert.ok((await kv.get(heldKey("sol", held.txHash, held.index))).value, "still held");
  } finally {
    await server.close();
  }
});

Deno.test("refund: a uAsset --to the transfer address or the zero address is refused", async () => {
  const { server, ctx, key, kv } = await setup();
  try {
    const from = outside.evmAddress("m/44'/60'/0'/0/8").toLowerCase();
    const uHeld = await heldUAsset(server, ctx, from, NATIVE.sol.uAsset.minimumBurnAmount * 2n);
    const transfer = ctx.settings.transferAddress;
    for (const to of [transfer, transfer.toUpperCase().replace("0X", "0x"), `0x${"0".repeat(40)}`]) {
      const res = await refundCall(server, key, uHeld, to);
      assert.equal(res.status, 400, `${to}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.message, /the transfer address|the zero address/);
    }
    assert.deepEqual((await listRefunds(kv)).refunds, []);
  } finally {
    await server.close();
  }
});

Deno.test("refund: a held record whose transfer on chain paid someone else is never refunded (409)", async () => {
  const { server, ctx, key, kv } = await setup();
  try {
    // A reorg can re-execute a burn's transaction with other logs (actors/order_actor.ts sourceChange): the record made
    // from the new facts may be a transfer between two outsiders. Its uAssets never reached the transfer address.
    const from = outside.evmAddress("m/44'/60'/0'/0/9").toLowerCase();
    const other = outside.evmAddress("m/44'/60'/0'/0/10").toLowerCase();
    const amount = NATIVE.sol.uAsset.minimumBurnAmount * 2n;
    const ledger = new SimLedger(kv, "base");
    await sim(server, "faucet", { chain: "base", address: from, token: "uSOL", amount: amount.toString() });
    const sent = await ledger.submitErc20Transfer({ from, to: other, asset: "uSOL", amount });
    assert.ok(sent.ok);
    await ledger.sealBlock();
    await seal(ctx, "base");
    const [t] = (await ctx.chains.reader("base").transfersOf(sent.txHash))!;
    const held: HeldTransfer = {
      chain: "base",
      txHash: sent.txHash,
      index: t.index,
      from,
      asset: "uSOL",
      amount: amount.toString(),
      blockNumber: sent.blockNumber,
      detectedAt: new Date().toISOString(),
      reason: "no burn configuration for sol",
      revision: 1,
    };
    assert.ok((await addHeldTransfer(kv.atomic(), held).commit()).ok);
    const res = await refundCall(server, key, heldTransferId(held));
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(res.body.message, /did not pay us/);
    assert.deepEqual((await listRefunds(kv)).refunds, []);
    assert.ok((await kv.get(heldKey("base", sent.txHash, t.index, 1))).value, "still held");
  } finally {
    await server.close();
  }
});

Deno.test("refund: a refunded account-chain deposit is due for a sweep, so the hot wallet that paid gets it back", async () => {
  const { server, ctx, key, kv } = await setup(["base"]);
  try {
    const sender = outside.depositAddress("sol", 24);
    const amount = 1_700_000_000n;
    const { deposit, address } = await solDeposit(server, ctx, sender, amount);
    const [held] = (await listHeld(kv)).filter((h) => h.txHash === deposit.txHash);
    await seal(ctx, "sol");
    const res = await refundCall(server, key, heldTransferId(held));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const id = res.body.data.refund.id;
    // The hot wallet pays the refund; the deposit, never swept (no mint completed), would stay on its address, off
    // the books (reconciliation counts only addresses due for a sweep): it is due for one from the refund's commit.
    const due = (await listSweepsDue(kv, "sol", 100)).map((e) => e.value);
    assert.deepEqual(due, [{ orderId: id, source: { txHash: held.txHash, index: held.index }, deadSweeps: 0 }]);
    await stepToFinal(ctx, id, "sol");
    assert.ok((await sweepOnce(ctx, "sol", "by-hand", 60_000))?.includes("recorded"));
    await seal(ctx, "sol");
    await sweepOnce(ctx, "sol", "by-hand", 60_000);
    assert.equal(await balance(server, "sol", address), NATIVE.sol.reserve, "swept down to its reserve");
  } finally {
    await server.close();
  }
});
