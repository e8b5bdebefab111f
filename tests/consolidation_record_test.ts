/**
 * The Consolidation record (model/sent_tx.ts) on real KV files: a record written before consolidations stored what
 * they consume reads as today's; every shape today's code writes reads back unchanged (prepared with and without an
 * expiry, completed, dead); a malformed write is refused naming the field and writes
 * nothing; a malformed stored record is never settled, and the treasury tick holds it: nothing sent, the record and
 * its open slot kept, one `invalid_record` alert naming the key and the field, counted when it repeats.
 */
import assert from "node:assert/strict";
import { withKv as withTempKv } from "./support/kv.ts";
import type { PayoutCoin, PreparedTx } from "../chains/adapter.ts";
import { getAlert } from "../kv/alerts.ts";
import { coinLockKey } from "../kv/chain_state.ts";
import {
  completeConsolidation,
  type Consolidation,
  consolidationDead,
  consolidationKey,
  listConsolidations,
  openConsolidation,
  openConsolidationKey,
  readConsolidation,
  type RecordConsolidation,
  recordConsolidation,
} from "../kv/consolidations.ts";
import { InvalidRecordError } from "../model/sent_tx.ts";
import { finalEffects } from "../model/sent_tx_effects.ts";
import { treasuryTick } from "../actors/sweeper.ts";
import { treasuryReport } from "../actors/treasury_report.ts";
import { countKeys, handPipeline } from "./support/watch.ts";

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("consolidation-record-", fn);

const AT = new Date("2026-01-02T03:04:05Z");
const coins: PayoutCoin[] = [
  { txHash: "a".repeat(64), index: 0, amount: 1_000_000n, address: "D-ours-1", derivationIndex: 1, height: 100 },
  { txHash: "b".repeat(64), index: 1, amount: 2_000_000n, address: "D-ours-2", derivationIndex: 2, height: 101 },
];
const tx = (txHash: string, spends: PayoutCoin[] = coins): PreparedTx => {
  const outpoints = spends.map(({ txHash, index }) => ({ txHash, index }));
  return {
    txHash,
    raw: `raw-${txHash}`,
    expiry: { kind: "height", value: 400 },
    consumes: { kind: "outpoints", outpoints },
    reservations: [{ kind: "coins", chain: "doge", outpoints }],
  };
};
const input = (id: string, extra: Partial<RecordConsolidation> = {}): RecordConsolidation => ({
  id,
  chain: "doge",
  by: "ops",
  coins,
  changeAddress: "D-change",
  changeDerivationIndex: 0,
  amount: 2_990_000n,
  tx: tx(`c-${id}`),
  at: AT,
  ...extra,
});

/**
 * A record as recordConsolidation wrote it before consolidations were sent-transaction records (model/sent_tx.ts):
 * no `consumes`, which was derived from the inputs when followed.
 */
const writtenBefore = {
  id: "c1",
  chain: "doge",
  status: "prepared",
  by: "ops",
  preparedAt: AT.toISOString(),
  txHash: "c-c1",
  raw: "raw-c-c1",
  expiry: { kind: "height", value: 400 },
  inputs: coins.map((c) => ({ ...c, amount: c.amount.toString() })),
  output: { index: 0, address: "D-change", derivationIndex: 0, amount: "2990000" },
  fee: "10000",
} as const;

/** The same record as recordConsolidation writes it today: its inputs' outpoints and their lowest height. */
const prepared: Consolidation = {
  ...writtenBefore,
  expiry: { ...writtenBefore.expiry },
  inputs: writtenBefore.inputs.map((i) => ({ ...i })),
  output: { ...writtenBefore.output },
  consumes: { kind: "outpoints", outpoints: coins.map(({ txHash, index }) => ({ txHash, index })), since: 100 },
};

Deno.test("consolidation record: a record written before `consumes` was stored reads as today's record", async () => {
  await withKv(async (kv) => {
    await kv.set(consolidationKey("doge", "c1"), writtenBefore);
    await kv.set(openConsolidationKey("doge"), "c1");
    assert.deepEqual(await readConsolidation(kv, "doge", "c1"), prepared);
    assert.deepEqual(await openConsolidation(kv, "doge"), prepared);
    // Settled from the migrated record: written back in today's shape.
    const proof = { kind: "expired" as const, expiry: { kind: "height" as const, value: 400 }, reached: 401 };
    const read = (await readConsolidation(kv, "doge", "c1"))!;
    const dead = await consolidationDead(kv, read, { proof, detail: "expired", at: AT }, []);
    assert.ok(dead.ok);
    assert.deepEqual((await kv.get<Consolidation>(consolidationKey("doge", "c1"))).value?.consumes, prepared.consumes);
  });
});

Deno.test("consolidation record: every shape today's code writes reads back unchanged", async () => {
  await withKv(async (kv) => {
    const shapes: Record<string, Consolidation> = {
      prepared,
      "prepared without an expiry": { ...prepared, expiry: undefined },
      completed: { ...prepared, status: "completed", completedAt: "2026-01-02T04:00:00.000Z", blockNumber: 120 },
      dead: {
        ...prepared,
        status: "dead",
        proof: {
          kind: "conflict",
          consumed: { kind: "outpoints", outpoints: [{ txHash: coins[0].txHash, index: 0 }] },
          spentBy: "other",
        },
        detail: "a conflicting transaction spent its coins",
        deadAt: "2026-01-02T04:00:00.000Z",
      },
    };
    for (const [name, c] of Object.entries(shapes)) {
      const plain = { ...JSON.parse(JSON.stringify(c)), id: name };
      await kv.set(consolidationKey("doge", name), plain);
      assert.deepEqual(await readConsolidation(kv, "doge", name), plain, name);
    }
    assert.equal((await listConsolidations(kv, "doge")).length, 4);
  });
});

Deno.test("consolidation record: recorded, completed and dead, each round-trips", async () => {
  await withKv(async (kv) => {
    const recorded = await recordConsolidation(kv, input("c1"));
    assert.ok(recorded.ok);
    assert.deepEqual(recorded.consolidation, prepared);
    assert.deepEqual(await openConsolidation(kv, "doge"), prepared);
    // The writes the driver hands over (actors/sent_tx.ts): its inputs spent, its merged output a coin.
    const own = [{ index: 0, address: "D-change", derivationIndex: 0, amount: 2_990_000n }];
    const effects = finalEffects(prepared, "c-c1", 120, own);
    const done = await completeConsolidation(kv, prepared, { txHash: "c-c1", blockNumber: 120, at: AT }, effects);
    assert.ok(done.ok);
    assert.deepEqual(await readConsolidation(kv, "doge", "c1"), done.consolidation);

    // Another coin: the first consolidation's inputs are spent for good (their locks name it).
    const other: PayoutCoin = { ...coins[1], txHash: "e".repeat(64), address: "D-ours-3", derivationIndex: 3 };
    const second = await recordConsolidation(
      kv,
      input("c2", { coins: [other], amount: 1_990_000n, tx: tx("c-c2", [other]) }),
    );
    assert.ok(second.ok);
    const proof = { kind: "expired" as const, expiry: { kind: "height" as const, value: 400 }, reached: 401 };
    const dead = await consolidationDead(kv, second.consolidation, { proof, detail: "expired", at: AT }, []);
    assert.ok(dead.ok);
    assert.deepEqual(await readConsolidation(kv, "doge", "c2"), dead.consolidation);
  });
});

Deno.test("consolidation record: a malformed write is refused naming the field, and nothing is written", async () => {
  await withKv(async (kv) => {
    const bad = input("c1", { coins: [{ ...coins[0], derivationIndex: -1 }] });
    await assert.rejects(recordConsolidation(kv, { ...bad, amount: 990_000n }), (err: unknown) => {
      assert.ok(err instanceof InvalidRecordError);
      assert.match(err.message, /consolidation\/doge\/c1 is invalid: inputs\.0\.derivationIndex/);
      return true;
    });
    await assert.rejects(recordConsolidation(kv, input("c1", { changeAddress: "" })), /output\.address/);
    assert.equal(await countKeys(kv, []), 0, "nothing at all: no record, no open slot, no lock, no audit");
  });
});

Deno.test("consolidation record: a malformed stored record is read as an error and never settled", async () => {
  await withKv(async (kv) => {
    assert.ok((await recordConsolidation(kv, input("c1"))).ok);
    const key = consolidationKey("doge", "c1");
    await kv.set(key, { ...prepared, fee: "-1" });
    const before = await kv.get(key);
    await assert.rejects(openConsolidation(kv, "doge"), /consolidation\/doge\/c1 is invalid: fee/);
    await assert.rejects(listConsolidations(kv, "doge"), InvalidRecordError);
    await assert.rejects(
      completeConsolidation(kv, prepared, { txHash: "c-c1", blockNumber: 1, at: AT }, []),
      InvalidRecordError,
    );
    const proof = { kind: "expired" as const, expiry: { kind: "height" as const, value: 400 }, reached: 401 };
    await assert.rejects(consolidationDead(kv, prepared, { proof, detail: "x", at: AT }, []), InvalidRecordError);
    assert.equal((await kv.get(key)).versionstamp, before.versionstamp, "untouched");
    assert.equal((await kv.get(openConsolidationKey("doge"))).value, "c1", "still the open one");
    assert.deepEqual((await kv.get(coinLockKey("doge", coins[0]))).value, { txHash: "c-c1" }, "its coins stay locked");
  });
});

Deno.test("treasury tick: a malformed open consolidation is held with one counted alert; nothing is sent", async () => {
  const p = await handPipeline({ utxoGenesis: 0n });
  try {
    assert.ok((await recordConsolidation(p.kv, input("c1"))).ok);
    const key = consolidationKey("doge", "c1");
    const { output: _dropped, ...damaged } = prepared;
    await p.kv.set(key, damaged);
    const before = await p.kv.get(key);

    assert.equal(await treasuryTick(p.ctx, "doge", "test-service", 60_000), "held");
    assert.equal(await treasuryTick(p.ctx, "doge", "test-service", 60_000), "held");
    const alert = (await getAlert(p.kv, "invalid_record", "consolidation/doge/c1"))!;
    assert.ok(alert, "one invalid_record alert naming the key");
    assert.equal(alert.count, 2, "counted when it repeats");
    assert.match(alert.message, /output/);
    assert.equal((await p.kv.get(key)).versionstamp, before.versionstamp, "the record untouched");
    assert.equal((await p.kv.get(openConsolidationKey("doge"))).value, "c1", "still open");
    assert.deepEqual(await p.sim.ledger("doge").txStatus("c-c1"), { state: "unknown" }, "nothing broadcast");

    const report = await treasuryReport(p.kv, "doge");
    assert.equal(report.consolidation, null);
    assert.match(report.consolidationInvalid ?? "", /consolidation\/doge\/c1 is invalid: output/);
  } finally {
    await p.close();
  }
});
