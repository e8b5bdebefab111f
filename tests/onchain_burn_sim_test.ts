/**
 * On-chain burns on the sim chains (docs/onchain-burn.md): completed burn orders leave burn-due records, the burn tick
 * of base burns them from the transfer address in one write-ahead batch, and base's total supply (read from the sim
 * ledger) ends at minted minus redeemed, each order in exactly one burned batch. A crash between recording a batch and
 * broadcasting it re-sends the very same bytes; a burn that fails on chain is re-signed once, as a new attempt of the
 * same batch.
 */
import assert from "node:assert/strict";
import { onchainBurnStep } from "../actors/onchain_burn.ts";
import { burnRestore, burnsReport } from "../actors/ops/burns.ts";
import type { OpContext } from "../actors/ops/op.ts";
import { listAudit } from "../kv/audit.ts";
import { NATIVE, type NativeChain } from "../chains/catalog.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { SimLedger } from "../chains/sim/ledger.ts";
import { getAlert } from "../kv/alerts.ts";
import {
  batchOfOrder,
  type BurnBatch,
  type BurnDue,
  burnDueKey,
  listBurnBatches,
  listBurnsDue,
  listLeftOutBurns,
  markBurnAttemptDead,
  MAX_KEPT_BURN_ATTEMPTS,
  MAX_ORDERS_PER_BATCH,
  openBurnBatch,
  openBurnKey,
  recordBurnAttempt,
  recordBurnBatch,
  restoreLeftOutBurn,
} from "../kv/onchain_burns.ts";
import { getOrder } from "../kv/orders.ts";
import { readLease } from "../kv/pipeline.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { seededRandom } from "./support/chaos.ts";
import { type HandPipeline, handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";
import { balance, FAST_PIPELINE, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, operatorKeyFor, randomWallet, startTestServer, tokenFor } from "./support/server.ts";
import { runTask } from "./support/cli.ts";
import { outside } from "./support/pipeline.ts";

const OWNER = "0x" + "0b".repeat(20);
const BYSTANDER = "0x" + "0c".repeat(20);
const BURN = NATIVE.xrp.uAsset.minimumBurnAmount;
const EXTRA = 7n * 10n ** 18n;

/** A hand pipeline whose sim chains can sign for the transfer address (as buildChains wires them when it is ours). */
function burnPipeline(): Promise<HandPipeline> {
  return handPipeline({
    chains: (kv) => simChains(kv, { random: seededRandom(23), transferAddress: SIM_TRANSFER_ADDRESS }),
  });
}

/** `count` xrp burn orders on base driven to completed; also mints EXTRA to a bystander (supply that stays). */
async function completedBurns(p: HandPipeline, count: number, chain: NativeChain = "xrp"): Promise<string[]> {
  if (chain === "xrp") await p.sim.ledger("base").faucet({ address: BYSTANDER, asset: "uXRP", amount: EXTRA });
  const { ids } = await simBurnOrders(p, chain, OWNER, count, chain === "xrp" ? BURN : undefined);
  const xrp = p.sim.ledger(chain);
  for (let round = 0; round < 50; round++) {
    const orders = await Promise.all(ids.map(async (id) => (await getOrder(p.kv, id)).value!));
    if (orders.every((o) => o.status === "completed")) return ids;
    for (const o of orders) if (o.status !== "completed") await stepNow(p, o.id);
    await xrp.sealBlock();
  }
  throw new Error("burn orders did not complete");
}

const step = (p: HandPipeline) => onchainBurnStep(p.ctx, "base", "test-burner", 60_000);

/** Steps and seals base blocks until the open batch is burned; returns the steps seen. */
async function untilBurned(p: HandPipeline): Promise<string[]> {
  const steps: string[] = [];
  for (let i = 0; i < 30; i++) {
    const s = await step(p);
    steps.push(s);
    if (s === "burned") return steps;
    await p.sim.ledger("base").sealBlock();
  }
  throw new Error(`never burned: ${steps.join(", ")}`);
}

async function batches(p: HandPipeline): Promise<BurnBatch[]> {
  return await listBurnBatches(p.kv, "base", 100);
}

Deno.test("several completed burns are burned on chain in one batch: supply = minted - redeemed", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    assert.equal(await step(p), "idle", "nothing due before any burn completes");
    assert.equal((await readLease(p.kv, "onchain-burn:base")).versionstamp, null, "idle: no lease taken, no commit");
    const ids = await completedBurns(p, 3);
    const due = await listBurnsDue(p.kv);
    assert.deepEqual(due.map((d) => d.orderId).sort(), [...ids].sort(), "one due record per completed burn");
    assert.ok(due.every((d) => d.chain === "base" && d.asset === "uXRP" && d.amountWei === BURN.toString()));
    assert.equal(await base.totalSupply("uXRP"), EXTRA + 3n * BURN, "before: everything minted is supply");

    assert.equal(await step(p), "recorded");
    assert.deepEqual(await listBurnsDue(p.kv), [], "the batch took every due record");
    const steps = await untilBurned(p);
    assert.ok(steps.slice(0, -1).every((s) => s === "waiting"), steps.join(","));

    const [batch, ...more] = await batches(p);
    assert.equal(more.length, 0, "one batch");
    assert.equal(batch.status, "burned");
    assert.equal(batch.totalWei, (3n * BURN).toString());
    assert.deepEqual(batch.orders.map((o) => o.orderId).sort(), [...ids].sort());
    assert.equal(batch.attempts.length, 1);
    assert.equal(batch.burnedTxHash, batch.attempts[0].txHash);
    for (const id of ids) assert.equal(await batchOfOrder(p.kv, id), batch.id);
    assert.equal((await p.kv.get(openBurnKey("base"))).value, null, "no batch left open");

    assert.equal(await base.totalSupply("uXRP"), EXTRA, "minted (3 burns + extra) - redeemed (3 burns)");
    assert.equal(await base.balance(SIM_TRANSFER_ADDRESS, "uXRP"), 0n);
    const status = await p.sim.reader("base").txStatus(batch.burnedTxHash!);
    assert.ok(status.state === "included" && status.success);

    assert.equal(await step(p), "idle", "all burned: the next step has nothing to do");
    // A later completed burn goes into a second batch; the first one's orders never come back.
    const [later] = await completedBurns(p, 1);
    assert.equal(await step(p), "recorded");
    await untilBurned(p);
    const all = await batches(p);
    assert.equal(all.length, 2);
    const orders = all.flatMap((b) => b.orders.map((o) => o.orderId));
    assert.equal(new Set(orders).size, orders.length, "each order in exactly one batch");
    assert.deepEqual(orders.sort(), [...ids, later].sort());
    assert.ok(all.every((b) => b.status === "burned"));
    assert.equal(await base.totalSupply("uXRP"), 2n * EXTRA);
  } finally {
    await p.close();
  }
});

Deno.test("a crash between recording a burn batch and broadcasting it re-sends the same bytes", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    await completedBurns(p, 2);
    p.ctx.faultPoint = (point) => {
      if (point === "burn-after-record") throw new Error("crash after record");
    };
    assert.equal(await step(p), "waiting", "the crash stopped the step after its record");
    p.ctx.faultPoint = undefined;
    const [recorded] = await batches(p);
    assert.equal(recorded.status, "open");
    const first = recorded.attempts[0];
    assert.deepEqual(await p.sim.reader("base").txStatus(first.txHash), { state: "unknown" }, "never broadcast");
    assert.equal(await base.totalSupply("uXRP"), EXTRA + 2n * BURN);

    // "Restarted": the next step finds the open batch and sends what it recorded.
    assert.equal(await step(p), "waiting");
    assert.deepEqual(await p.sim.reader("base").txStatus(first.txHash), { state: "pending" }, "the same hash");
    await untilBurned(p);
    const [batch, ...more] = await batches(p);
    assert.equal(more.length, 0);
    assert.equal(batch.attempts.length, 1, "never re-signed");
    assert.equal(batch.burnedTxHash, first.txHash);
    assert.equal(batch.attempts[0].raw, first.raw);
    assert.equal(await base.totalSupply("uXRP"), EXTRA, "burned once");
  } finally {
    await p.close();
  }
});

Deno.test("a burn that fails on chain is proven dead and re-signed once, as a new attempt of the same batch", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    const ids = await completedBurns(p, 2);
    await base.setFaults({ revertNextBurn: 1 });
    assert.equal(await step(p), "recorded");
    const steps: string[] = [];
    for (let i = 0; i < 30 && steps.at(-1) !== "dead"; i++) {
      await base.sealBlock();
      steps.push(await step(p));
    }
    assert.equal(steps.at(-1), "dead", steps.join(","));
    assert.equal(await base.totalSupply("uXRP"), EXTRA + 2n * BURN, "the failed burn burned nothing");
    assert.equal(await step(p), "resigned");
    await untilBurned(p);
    const [batch, ...more] = await batches(p);
    assert.equal(more.length, 0, "the same batch");
    assert.deepEqual(batch.orders.map((o) => o.orderId).sort(), [...ids].sort(), "the same orders");
    assert.equal(batch.attempts.length, 2, "re-signed once");
    const [dead, good] = batch.attempts;
    assert.equal(dead.proof?.kind, "failed");
    assert.equal(good.proof, undefined);
    assert.notEqual(dead.txHash, good.txHash);
    assert.equal(batch.burnedTxHash, good.txHash);
    assert.equal(await base.totalSupply("uXRP"), EXTRA);
    assert.equal(await base.balance(SIM_TRANSFER_ADDRESS, "uXRP"), 0n);
  } finally {
    await p.close();
  }
});

Deno.test("a transfer address holding less than the due burns sends nothing, alerts, and keeps the records", async () => {
  const p = await burnPipeline();
  try {
    // A completed burn whose uAssets left the transfer address some other way (never expected).
    const [orderId] = await completedBurns(p, 1);
    const base = p.sim.ledger("base");
    const moved = await base.submitErc20Transfer({
      from: SIM_TRANSFER_ADDRESS,
      to: BYSTANDER,
      asset: "uXRP",
      amount: 1n,
    });
    assert.ok(moved.ok);
    await base.sealBlock();
    const [due] = await listBurnsDue(p.kv);
    assert.equal(due.orderId, orderId);
    assert.equal(await step(p), "short");
    assert.equal((await batches(p)).length, 0, "no batch recorded");
    assert.deepEqual(await listBurnsDue(p.kv), [due], "the record stays");
    const alert = await getAlert(p.kv, "burn_balance_short", "base:uXRP");
    assert.ok(alert, "alerted");
    assert.match(alert.message, new RegExp(`holds ${BURN - 1n} wei of uXRP, less than the ${BURN} wei needed`));
    assert.equal(await step(p), "short");
    assert.equal((await getAlert(p.kv, "burn_balance_short", "base:uXRP"))!.count, 2, "one alert, counted");
  } finally {
    await p.close();
  }
});

Deno.test("sim prepareTransfer moves uAssets from the transfer address; refused when short", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    const sender = p.ctx.chains.uAssetSender!("base");
    assert.equal(sender.address, SIM_TRANSFER_ADDRESS);
    await base.faucet({ address: SIM_TRANSFER_ADDRESS, asset: "uDOGE", amount: 100n });
    await assert.rejects(
      sender.prepareTransfer({ asset: "uDOGE", to: BYSTANDER, amount: 101n, refundId: "r1" }),
      /holds 100 wei of uDOGE, less than the 101 wei needed/,
    );
    const tx = await sender.prepareTransfer({ asset: "uDOGE", to: BYSTANDER, amount: 60n, refundId: "r1" });
    await sender.broadcast(tx);
    await base.sealBlock();
    assert.equal(await base.balance(SIM_TRANSFER_ADDRESS, "uDOGE"), 40n);
    assert.equal(await base.balance(BYSTANDER, "uDOGE"), 60n);
    assert.equal(await base.totalSupply("uDOGE"), 100n, "a transfer burns nothing");
  } finally {
    await p.close();
  }
});

Deno.test("server pipeline: redeemed uAssets are burned on base, each order in exactly one burned batch", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const kv = server.services.kv;
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    const destination = outside.depositAddress("xrp", 5);
    const config = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "xrp", destinationAddress: destination, memo: "7" },
    });
    assert.equal(config.status, 201);
    const minted = BURN * 10n;
    await sim(server, "faucet", { chain: "base", address: wallet, token: "uXRP", amount: minted.toString() });
    for (let i = 0; i < 3; i++) {
      await sim(server, "transfers", { chain: "base", from: wallet, token: "uXRP", amount: BURN.toString() });
    }
    const orders = await waitForOrders(server, token, (o) => o.length === 3 && o.every(terminal));
    assert.ok(orders.every((o) => o.status === "completed"), JSON.stringify(orders));
    const ids = orders.map((o) => o.id as string).sort();

    let all: BurnBatch[] = [];
    const deadline = Date.now() + 15_000;
    for (;;) {
      all = await listBurnBatches(kv, "base", 100);
      const burned = all.filter((b) => b.status === "burned").flatMap((b) => b.orders.map((o) => o.orderId));
      if (burned.length === 3) break;
      if (Date.now() > deadline) throw new Error(`not burned: ${JSON.stringify(all)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const inBatches = all.flatMap((b) => b.orders.map((o) => o.orderId)).sort();
    assert.deepEqual(inBatches, ids, "each order in exactly one batch");
    const ledger = new SimLedger(kv, "base"); // the ledger's state is its KV records
    assert.equal(await ledger.totalSupply("uXRP"), minted - 3n * BURN, "totalSupply = minted - redeemed");
    assert.equal(await balance(server, "base", server.services.uAssetTransferAddress, "uXRP"), 0n);
    assert.deepEqual(await listBurnsDue(kv), []);

    // The operator's report, over the API (scope read) and the CLI: the same batches.
    const key = await operatorKeyFor(server, ["read"], "burn-watcher");
    const report = await call(server, "GET", "/admin/burns?chain=base", { token: key });
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const data = report.body.data;
    assert.equal(data.transferAddress, server.services.uAssetTransferAddress);
    assert.equal(data.burnsDisabled, null);
    assert.deepEqual(data.due, []);
    assert.deepEqual(data.batches.flatMap((b: { orderIds: string[] }) => b.orderIds).sort(), ids);
    assert.ok(
      data.batches.every((b: { status: string; attempts: number }) => b.status === "burned" && b.attempts === 1),
    );
    const sum = data.batches.reduce((n: bigint, b: { totalWei: string }) => n + BigInt(b.totalWei), 0n);
    assert.equal(sum, 3n * BURN);
    const refused = await call(server, "GET", "/admin/burns?chain=sol", { token: key });
    assert.equal(refused.status, 400, "not an EVM chain");
    const cli = await runTask("admin", { KV_PATH: server.kvPath }, ["burns", "--chain", "base", "--json"]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout).batches, data.batches);
  } finally {
    await server.close();
  }
});

Deno.test("a transfer address that is not the mnemonic's (BURN_TRANSFER_ADDRESS) burns nothing and raises one alert", async () => {
  const foreign = "0x" + "5e".repeat(20);
  const server = await startTestServer({ ...FAST_PIPELINE, BURN_TRANSFER_ADDRESS: foreign });
  try {
    assert.equal(server.services.pipeline!.chains.uAssetSender, undefined, "no sender: its key is not ours");
    const alert = await getAlert(server.services.kv, "burn_disabled", foreign);
    assert.ok(alert);
    assert.match(alert.message, /redeemed uAssets are not burned on chain/);
    const key = await operatorKeyFor(server, ["read"]);
    const report = await call(server, "GET", "/admin/burns", { token: key });
    assert.equal(report.status, 200);
    assert.equal(report.body.data.transferAddress.toLowerCase(), foreign);
    assert.match(report.body.data.burnsDisabled, /not the master mnemonic's/);
  } finally {
    await server.close();
  }
});

Deno.test("a completed burn whose transfer a reorg took off the chain is not burned from uAssets owed to others", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    const [gone] = await completedBurns(p, 1);
    // The three base blocks holding the burn's transfer to the transfer address are replaced (a reorg past finality
    // after the order completed): the uAssets are back with their sender. The transfer address still holds uAssets
    // owed to someone else (a held transfer, a failed burn), enough to cover the due burn.
    await base.reorg(3);
    await base.sealBlock();
    await base.faucet({ address: SIM_TRANSFER_ADDRESS, asset: "uXRP", amount: BURN });
    const owed = await base.balance(SIM_TRANSFER_ADDRESS, "uXRP");
    assert.equal(owed, BURN, "only the owed uAssets are there");

    const s = await step(p);
    assert.notEqual(s, "recorded", "a batch for uAssets that never stayed at the transfer address");
    assert.equal((await batches(p)).length, 0, "no batch recorded");
    assert.equal(await base.balance(SIM_TRANSFER_ADDRESS, "uXRP"), owed, "nothing burned");
    assert.deepEqual((await listBurnsDue(p.kv)).map((d) => d.orderId), [gone], "its due record stays for an operator");
    assert.ok(await getAlert(p.kv, "burn_source_missing", gone), "an operator is alerted");
  } finally {
    await p.close();
  }
});

Deno.test("a uAsset whose batch cannot be recorded (balance short) does not block the chain's other uAssets", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    // uSOL sorts before uXRP: its due records come first, and its uAssets left the transfer address (never expected).
    const [sol] = await completedBurns(p, 1, "sol");
    const solWei = BigInt((await getOrder(p.kv, sol)).value!.amount);
    assert.ok(
      (await base.submitErc20Transfer({ from: SIM_TRANSFER_ADDRESS, to: BYSTANDER, asset: "uSOL", amount: 1n }))
        .ok,
    );
    await base.sealBlock();
    const xrp = await completedBurns(p, 2);
    assert.equal(await step(p), "recorded", "uXRP is batched past the short uSOL");
    assert.ok(await getAlert(p.kv, "burn_balance_short", "base:uSOL"), "the short uAsset is alerted");
    await untilBurned(p);
    const [batch] = await batches(p);
    assert.equal(batch.asset, "uXRP");
    assert.deepEqual(batch.orders.map((o) => o.orderId).sort(), [...xrp].sort());
    assert.equal(await base.totalSupply("uXRP"), EXTRA);
    assert.deepEqual((await listBurnsDue(p.kv)).map((d) => d.orderId), [sol], "uSOL's record stays");
    assert.equal(await base.balance(SIM_TRANSFER_ADDRESS, "uSOL"), solWei - 1n, "nothing of uSOL burned");
    assert.equal(await step(p), "short", "only the short uAsset is left: alerted again, nothing sent");
  } finally {
    await p.close();
  }
});

Deno.test("records left out (transfer gone) do not block the rest of their uAsset nor the chain's other uAssets", async () => {
  const p = await burnPipeline();
  try {
    const base = p.sim.ledger("base");
    // uXRP records whose transfers stay, then more left-out records than a batch takes in uSOL (sorted first): the
    // base blocks holding the uSOL transfers are replaced after those orders completed.
    const xrp = await completedBurns(p, 2);
    const gone = await completedBurns(p, MAX_ORDERS_PER_BATCH + 2, "sol");
    await base.reorg(3);
    await base.sealBlock();
    const steps: string[] = [];
    for (let i = 0; i < 5 && steps.at(-1) !== "recorded"; i++) steps.push(await step(p));
    assert.equal(steps.at(-1), "recorded", steps.join(","));
    await untilBurned(p);
    const all = await batches(p);
    assert.equal(all.length, 1);
    assert.equal(all[0].asset, "uXRP");
    assert.deepEqual(all[0].orders.map((o) => o.orderId).sort(), [...xrp].sort());
    assert.equal(await base.totalSupply("uXRP"), EXTRA);
    for (const id of gone) {
      assert.ok(await getAlert(p.kv, "burn_source_missing", id), `${id} alerted`);
      assert.equal(await batchOfOrder(p.kv, id), null);
    }
    assert.deepEqual((await listBurnsDue(p.kv)).map((d) => d.orderId).sort(), [...gone].sort(), "all still reported");
    assert.equal(await step(p), "idle", "left-out records cost the next tick nothing");
    const left = await listLeftOutBurns(p.kv);
    assert.equal(left.length, gone.length);
    assert.ok(left.every((l) => l.asset === "uSOL" && /not on base as recorded/.test(l.leftOut.why)));
    // The operator's report lists them as left out (not as due), with why.
    const ctx = {
      kv: p.kv,
      by: "ops-test",
      now: () => new Date(),
      transferAddress: () => Promise.resolve(SIM_TRANSFER_ADDRESS),
    } as unknown as OpContext;
    const report = await burnsReport.run(ctx, { chain: "base" });
    assert.deepEqual(report.leftOut.map((l) => l.orderId).sort(), [...gone].sort());
    assert.deepEqual(report.due, []);
    // An operator puts one back (`burn restore`, audited): the next step reads its transfer back again, and leaves it
    // out again.
    const restored = await burnRestore.run(ctx, { orderId: gone[0] });
    const entry = (await listAudit(p.kv)).find((e) => e.id === restored.auditId)!;
    assert.deepEqual([entry.action, entry.subject, entry.by], ["burn.restore", gone[0], "ops-test"]);
    await assert.rejects(() => burnRestore.run(ctx, { orderId: gone[0] }), /no burn of order .* is left out/);
    assert.equal(await restoreLeftOutBurn(p.kv, "base", "uSOL", gone[0]), false, "once");
    assert.equal(await step(p), "held");
    assert.equal((await listLeftOutBurns(p.kv)).length, gone.length);
    assert.equal(await step(p), "idle");
  } finally {
    await p.close();
  }
});

Deno.test("an open pointer without its batch record is alerted (invalid_record), not thrown out of the step", async () => {
  const p = await burnPipeline();
  try {
    await p.kv.set(openBurnKey("base"), "0190-missing-batch");
    assert.equal(await step(p), "invalid");
    const alert = await getAlert(p.kv, "invalid_record", "onchain_burn_open:base");
    assert.ok(alert, "alerted");
    assert.match(alert.message, /0190-missing-batch/);
    assert.equal(await step(p), "invalid", "again, no crash");
    assert.equal((await getAlert(p.kv, "invalid_record", "onchain_burn_open:base"))!.count, 2);
  } finally {
    await p.close();
  }
});

Deno.test("a batch re-signed hundreds of times stays under the KV value limit and keeps its last attempts", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const due: BurnDue = { chain: "base", asset: "uXRP", orderId: "o1", amountWei: "5", at: new Date(0).toISOString() };
    await kv.set(burnDueKey("base", "uXRP", "o1"), due);
    const entry = await kv.get<BurnDue>(burnDueKey("base", "uXRP", "o1")) as Deno.KvEntry<BurnDue>;
    const tx = (i: number) => ({ txHash: "0x" + i.toString(16).padStart(64, "0"), raw: "0x" + "ab".repeat(200) });
    const at = new Date(0);
    assert.ok((await recordBurnBatch(kv, { id: "b1", due: [entry], tx: tx(0), at })).ok);
    const proof = { kind: "failed" as const, blockNumber: 1, reason: "reverted" };
    for (let i = 1; i <= 300; i++) {
      const open = (await openBurnBatch(kv, "base"))!;
      assert.ok(await markBurnAttemptDead(kv, open, { proof, detail: "reverted", at }, []), `dead ${i}`);
      assert.ok(await recordBurnAttempt(kv, (await openBurnBatch(kv, "base"))!, tx(i), at), `attempt ${i}`);
    }
    const batch = (await openBurnBatch(kv, "base"))!.value;
    assert.equal(batch.attempts.length, MAX_KEPT_BURN_ATTEMPTS, "only the last attempts are kept");
    assert.equal(batch.droppedAttempts, 301 - MAX_KEPT_BURN_ATTEMPTS, "the dropped ones are counted");
    assert.equal(batch.attempts.at(-1)!.txHash, tx(300).txHash, "the current attempt");
    assert.ok(batch.attempts.slice(0, -1).every((a) => a.proof?.kind === "failed"), "each kept one's proof");
  } finally {
    kv.close();
  }
});
