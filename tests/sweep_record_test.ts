/**
 * The Sweep record (model/sent_tx.ts) on real KV files: every shape today's code writes reads back unchanged (a
 * prepared sweep, a completed one with and without `delivered`/`fee`, a dead one with its proof); a malformed write is
 * refused naming the field and writes nothing; a malformed stored record is never settled, and the sweeper holds it:
 * no broadcast, the due mark kept, one `invalid_record` alert naming the key and the field, counted when it repeats.
 */
import assert from "node:assert/strict";
import { withKv as withTempKv } from "./support/kv.ts";
import type { PreparedTx } from "../chains/adapter.ts";
import { NATIVE } from "../chains/catalog.ts";
import { getAlert } from "../kv/alerts.ts";
import {
  accountLockKey,
  backfillSweepDelivery,
  completeSweep,
  listSweeps,
  readSweep,
  recordSweep,
  type Sweep,
  sweepDead,
  type SweepInput,
  sweepKey,
} from "../kv/treasury.ts";
import { InvalidRecordError } from "../model/sent_tx.ts";
import { sweepOnce } from "../actors/sweeper.ts";
import { ledgerTxs } from "./support/chain_facts.ts";
import { countKeys, handPipeline } from "./support/watch.ts";
import { mintedSimDeposit } from "./support/deposits.ts";

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("sweep-record-", fn);

const AT = new Date("2026-01-02T03:04:05Z");
const input = (sweepId: string, address: string, tx: Partial<PreparedTx> = {}): SweepInput => ({
  sweepId,
  chain: "xrp",
  from: { address, derivationIndex: 7 },
  to: "hot-wallet",
  amount: 4_000_000n,
  leave: 1_000_000n,
  tx: {
    txHash: `sweep-tx-${sweepId}`,
    raw: `raw-${sweepId}`,
    expiry: { kind: "ledger", value: 500 },
    consumes: { kind: "nonce", account: address, nonce: 3 },
    ...tx,
  },
  at: AT,
});

/** Records as kv/treasury.ts writes them today (recordSweep, completeSweep, sweepDead), and one from before fees. */
const prepared: Sweep = {
  sweepId: "o-1",
  chain: "xrp",
  from: { address: "rDeposit1", derivationIndex: 7 },
  to: "hot-wallet",
  amount: "4000000",
  leave: "1000000",
  txHash: "sweep-tx-o-1",
  raw: "raw-o-1",
  preparedAt: AT.toISOString(),
  expiry: { kind: "ledger", value: 500 },
  consumes: { kind: "nonce", account: "rDeposit1", nonce: 3 },
  status: "prepared",
};
const TODAY: Record<string, Sweep> = {
  prepared,
  "prepared, sim (no expiry, nothing consumed)": {
    ...prepared,
    chain: "sol",
    expiry: undefined,
    consumes: undefined,
  } as Sweep,
  "completed with its delivery": {
    ...prepared,
    status: "completed",
    blockNumber: 812,
    completedAt: "2026-01-02T03:05:00.000Z",
    delivered: "3999988",
    fee: "12",
  },
  "completed before deliveries were recorded": {
    ...prepared,
    status: "completed",
    blockNumber: 812,
    completedAt: "2026-01-02T03:05:00.000Z",
  },
  "dead with its proof": {
    ...prepared,
    status: "dead",
    proof: { kind: "expired", expiry: { kind: "ledger", value: 500 }, reached: 501 },
    detail: "expired at ledger 501",
    deadAt: "2026-01-02T03:06:00.000Z",
  },
  "dead, failed on chain": {
    ...prepared,
    chain: "sui",
    expiry: { kind: "epoch", value: 12 },
    consumes: undefined,
    status: "dead",
    proof: { kind: "failed", blockNumber: 9, reason: "InsufficientGas" },
    detail: "failed on chain: InsufficientGas",
    deadAt: "2026-01-02T03:06:00.000Z",
  },
};

Deno.test("sweep record: every shape today's code writes reads back unchanged", async () => {
  await withKv(async (kv) => {
    for (const [name, sweep] of Object.entries(TODAY)) {
      const plain = JSON.parse(JSON.stringify(sweep)); // as stored: undefined fields absent
      const id = `${sweep.sweepId}-${name}`;
      await kv.set(sweepKey(sweep.chain, id), { ...plain, sweepId: id });
      assert.deepEqual(await readSweep(kv, sweep.chain, id), { ...plain, sweepId: id }, name);
    }
    const listed = await listSweeps(kv, "xrp");
    assert.equal(listed.invalid.length, 0);
    assert.equal(listed.sweeps.length, 4, "the xrp ones");
  });
});

Deno.test("sweep record: recorded, completed with its delivery, backfilled and dead, each round-trips", async () => {
  await withKv(async (kv) => {
    const recorded = await recordSweep(kv, input("o-1", "rDeposit1"));
    assert.ok(recorded.ok);
    assert.deepEqual(recorded.sweep, prepared);
    assert.deepEqual(await readSweep(kv, "xrp", "o-1"), prepared);
    const done = await completeSweep(kv, "xrp", "o-1", { blockNumber: 812, at: AT, delivered: 3_999_988n });
    assert.ok(done.ok);
    assert.deepEqual(await readSweep(kv, "xrp", "o-1"), done.sweep);
    assert.equal(done.sweep.fee, "12");

    assert.ok((await recordSweep(kv, input("o-2", "rDeposit2"))).ok);
    assert.ok((await completeSweep(kv, "xrp", "o-2", { blockNumber: 813, at: AT })).ok);
    await backfillSweepDelivery(kv, "xrp", "o-2", 3_999_990n);
    const backfilled = (await readSweep(kv, "xrp", "o-2"))!;
    assert.equal(backfilled.delivered, "3999990");
    assert.equal(backfilled.fee, "10");

    assert.ok((await recordSweep(kv, input("o-3", "rDeposit3"))).ok);
    const proof = { kind: "expired" as const, expiry: { kind: "ledger" as const, value: 500 }, reached: 501 };
    const dead = await sweepDead(kv, "xrp", "o-3", { proof, detail: "expired", at: AT }, () => {});
    assert.ok(dead.ok);
    assert.deepEqual(await readSweep(kv, "xrp", "o-3"), dead.sweep);
  });
});

Deno.test("sweep record: a malformed write is refused naming the field, and nothing is written", async () => {
  await withKv(async (kv) => {
    const bad = input("o-1", "rDeposit1", { expiry: { kind: "ledger", value: -1 } });
    await assert.rejects(recordSweep(kv, bad), (err: unknown) => {
      assert.ok(err instanceof InvalidRecordError);
      assert.match(err.message, /treasury_sweep\/xrp\/o-1 is invalid: expiry\.value/);
      return true;
    });
    const consumed = input("o-1", "rDeposit1", { consumes: { kind: "nonce", account: "", nonce: 1 } });
    await assert.rejects(recordSweep(kv, consumed), /consumes\.account/);
    assert.equal((await kv.get(sweepKey("xrp", "o-1"))).versionstamp, null, "no sweep");
    assert.equal((await kv.get(accountLockKey("xrp", "rDeposit1"))).versionstamp, null, "no address lock");
    assert.equal(await countKeys(kv, []), 0, "nothing at all");
  });
});

Deno.test("sweep record: a malformed stored record is read as an error and never settled", async () => {
  await withKv(async (kv) => {
    assert.ok((await recordSweep(kv, input("o-1", "rDeposit1"))).ok);
    const key = sweepKey("xrp", "o-1");
    await kv.set(key, { ...prepared, amount: 4_000_000 }); // a number where a decimal string belongs
    const before = await kv.get(key);
    await assert.rejects(readSweep(kv, "xrp", "o-1"), /treasury_sweep\/xrp\/o-1 is invalid: amount/);
    await assert.rejects(completeSweep(kv, "xrp", "o-1", { blockNumber: 1, at: AT }), InvalidRecordError);
    const proof = { kind: "expired" as const, expiry: { kind: "ledger" as const, value: 500 }, reached: 501 };
    await assert.rejects(sweepDead(kv, "xrp", "o-1", { proof, detail: "x", at: AT }, () => {}), InvalidRecordError);
    await assert.rejects(backfillSweepDelivery(kv, "xrp", "o-1", 1n), InvalidRecordError);
    assert.equal((await kv.get(key)).versionstamp, before.versionstamp, "untouched");
    assert.notEqual((await kv.get(accountLockKey("xrp", "rDeposit1"))).value, null, "the address stays locked");
    const listed = await listSweeps(kv, "xrp");
    assert.deepEqual(listed.sweeps, []);
    assert.match(listed.invalid[0].message, /amount/);
  });
});

Deno.test("sweeper: a malformed stored sweep is held with one counted alert; nothing is sent, the mark kept", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  try {
    const xrp = p.sim.ledger("xrp");
    const { deposit, mint } = await mintedSimDeposit(p, "xrp", "0x" + "5f".repeat(20), 30_000_000n);
    const sweep = () => sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000);

    // Recorded, never sent (a crash after the record), then the stored record is damaged.
    p.ctx.faultPoint = (point) => {
      if (point === "sweep-after-record") throw new Error("crash after recording the sweep");
    };
    assert.deepEqual(await sweep(), ["waiting"]);
    p.ctx.faultPoint = undefined;
    const recorded = (await readSweep(p.kv, "xrp", mint.id))!;
    const key = sweepKey("xrp", mint.id);
    const { txHash: _dropped, ...damaged } = recorded;
    await p.kv.set(key, damaged);
    const before = await p.kv.get(key);

    assert.deepEqual(await sweep(), ["held"]);
    assert.deepEqual(await sweep(), ["held"]);
    const subject = `treasury_sweep/xrp/${mint.id}`;
    const alert = (await getAlert(p.kv, "invalid_record", subject))!;
    assert.ok(alert, "one invalid_record alert naming the key");
    assert.equal(alert.count, 2, "counted when it repeats");
    assert.match(alert.message, /txHash/);
    assert.equal(alert.chain, "xrp");
    assert.equal((await p.kv.get(key)).versionstamp, before.versionstamp, "the record untouched");
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 1, "the due mark kept");
    assert.equal((await xrp.txStatus(recorded.txHash)).state, "unknown", "nothing broadcast");
    assert.deepEqual((await ledgerTxs(p.kv, "xrp")).filter((t) => t.tx.kind === "sweep"), []);
    assert.equal(await xrp.balance(deposit, "native"), 30_000_000n);

    // Repaired by an operator, the same sweep goes on: the same bytes are sent.
    await p.kv.set(key, recorded);
    assert.deepEqual(await sweep(), ["resent"]);
    for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await xrp.sealBlock();
      await sweep();
    }
    assert.equal((await readSweep(p.kv, "xrp", mint.id))!.status, "completed");
    assert.equal(await xrp.balance(deposit, "native"), NATIVE.xrp.reserve);
  } finally {
    await p.close();
  }
});
