/**
 * The on-chain burn batch record (model/sent_tx.ts) on real KV files: a batch written before its attempts were
 * sent-transaction records reads as today's, and is written back so; every shape today's code writes reads back
 * unchanged (an open batch, one re-signed after dead attempts with some dropped, a burned one); a malformed write is
 * refused naming the field and writes nothing; a malformed stored open batch is never followed: the burn step leaves
 * it untouched, starts no batch past it and raises one `invalid_record` alert naming the key and the field, counted when
 * it repeats; reconciliation leaves it out of its totals and says so.
 */
import assert from "node:assert/strict";
import { withKv as withTempKv } from "./support/kv.ts";
import type { PreparedTx } from "../chains/adapter.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { getAlert } from "../kv/alerts.ts";
import {
  type BurnBatch,
  burnBatchKey,
  type BurnDue,
  burnDueKey,
  burnTotals,
  getBurnBatch,
  listBurnBatches,
  markBurnAttemptDead,
  markBurned,
  openBurnBatch,
  openBurnKey,
  recordBurnAttempt,
  recordBurnBatch,
} from "../kv/onchain_burns.ts";
import { InvalidRecordError } from "../model/sent_tx.ts";
import { onchainBurnStep } from "../actors/onchain_burn.ts";
import { seededRandom } from "./support/chaos.ts";
import { countKeys, handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const withKv = (fn: (kv: Deno.Kv) => Promise<void>) => withTempKv("burn-record-", fn);

const AT = new Date("2026-01-02T03:04:05Z");
const tx = (n: number): PreparedTx => ({
  txHash: `0x${String(n).padStart(64, "0")}`,
  raw: `0xraw${n}`,
  consumes: { kind: "nonce", account: "0xtransfer", nonce: n },
  reservations: [],
});
const due = (orderId: string, amountWei: string): BurnDue => ({
  chain: "base",
  asset: "uXRP",
  orderId,
  amountWei,
  at: AT.toISOString(),
});
const DEAD = {
  proof: {
    kind: "conflict" as const,
    consumed: { kind: "nonce" as const, account: "0xtransfer", nonce: 1 },
    spentBy: null,
  },
  detail: "its nonce was used by another transaction",
  at: "2026-01-02T03:10:00.000Z",
};

/** The proof fields a dead sent transaction carries (model/sent_tx.ts `DEATH_FIELDS`). */
const DEAD_FIELDS = { proof: DEAD.proof, detail: DEAD.detail, deadAt: DEAD.at };

/** Batches as kv/onchain_burns.ts writes them today: every attempt a sent-transaction record. */
const open: BurnBatch = {
  id: "b1",
  chain: "base",
  asset: "uXRP",
  orders: [{ orderId: "o1", amountWei: "1000" }, { orderId: "o2", amountWei: "2000" }],
  totalWei: "3000",
  status: "open",
  attempts: [{
    chain: "base",
    txHash: tx(1).txHash,
    raw: tx(1).raw,
    preparedAt: AT.toISOString(),
    consumes: tx(1).consumes,
  }],
  createdAt: AT.toISOString(),
};

Deno.test("burn batch record: a batch written before attempts were sent-transaction records reads as today's", async () => {
  await withKv(async (kv) => {
    // As the code before wrote it: attempts without their chain, a dead one's proof under `dead` with `at`.
    const writtenBefore = {
      ...open,
      id: "b0",
      attempts: [
        { txHash: tx(1).txHash, raw: tx(1).raw, consumes: tx(1).consumes, preparedAt: AT.toISOString(), dead: DEAD },
        { txHash: tx(2).txHash, raw: tx(2).raw, preparedAt: AT.toISOString() },
      ],
    };
    await kv.set(burnBatchKey("base", "b0"), writtenBefore);
    await kv.set(openBurnKey("base"), "b0");
    const expected: BurnBatch = {
      ...open,
      id: "b0",
      attempts: [
        { ...open.attempts[0], ...DEAD_FIELDS },
        { chain: "base", txHash: tx(2).txHash, raw: tx(2).raw, preparedAt: AT.toISOString() },
      ],
    };
    assert.deepEqual(await getBurnBatch(kv, "base", "b0"), expected);
    // Written back in today's shape by the next change to it.
    const entry = (await openBurnBatch(kv, "base"))!;
    assert.ok(await markBurned(kv, entry, { txHash: tx(2).txHash, blockNumber: 7, at: AT }, []));
    const stored = (await kv.get<Record<string, unknown>>(burnBatchKey("base", "b0"))).value!;
    assert.deepEqual(stored.attempts, expected.attempts);
  });
});

Deno.test("burn batch record: every shape today's code writes reads back unchanged", async () => {
  await withKv(async (kv) => {
    const resigned: BurnBatch = {
      ...open,
      id: "b2",
      attempts: [
        { ...open.attempts[0], ...DEAD_FIELDS, proof: { ...DEAD.proof, spentBy: "0xother" } },
        {
          chain: "base",
          txHash: tx(2).txHash,
          raw: tx(2).raw,
          preparedAt: AT.toISOString(),
          expiry: { kind: "height", value: 9 },
        },
      ],
      droppedAttempts: 3,
    };
    const burned: BurnBatch = {
      ...open,
      id: "b3",
      status: "burned",
      burnedTxHash: "0xbumped",
      blockNumber: 44,
      burnedAt: "2026-01-02T03:20:00.000Z",
    };
    for (const b of [open, resigned, burned]) {
      await kv.set(burnBatchKey(b.chain, b.id), b);
      assert.deepEqual(await getBurnBatch(kv, b.chain, b.id), b, b.id);
    }
    assert.equal((await listBurnBatches(kv, "base", 10)).length, 3);
    const totals = await burnTotals(kv);
    assert.deepEqual(totals.invalid, []);
    assert.deepEqual(totals.totals, [{ chain: "base", asset: "uXRP", burnedWei: 3000n, burningWei: 6000n }]);
  });
});

Deno.test("burn batch record: recorded, attempt dead, re-signed and burned, each round-trips", async () => {
  await withKv(async (kv) => {
    for (const d of [due("o1", "1000"), due("o2", "2000")]) await kv.set(burnDueKey(d.chain, d.asset, d.orderId), d);
    const entries = await Promise.all(["o1", "o2"].map((o) => kv.get<BurnDue>(burnDueKey("base", "uXRP", o))));
    const recorded = await recordBurnBatch(kv, {
      id: "b1",
      due: entries as Deno.KvEntry<BurnDue>[],
      tx: tx(1),
      at: AT,
    });
    assert.ok(recorded.ok);
    assert.deepEqual(recorded.batch, open);
    assert.deepEqual((await openBurnBatch(kv, "base"))!.value, open);

    const deadAt = new Date(DEAD.at);
    assert.ok(await markBurnAttemptDead(kv, (await openBurnBatch(kv, "base"))!, { ...DEAD, at: deadAt }, []));
    assert.ok(await recordBurnAttempt(kv, (await openBurnBatch(kv, "base"))!, tx(2), AT));
    const resigned = (await openBurnBatch(kv, "base"))!.value;
    assert.equal(resigned.attempts.length, 2);
    assert.deepEqual(resigned.attempts[0], { ...open.attempts[0], ...DEAD_FIELDS });
    const final = { txHash: tx(2).txHash, blockNumber: 50, at: AT };
    assert.ok(await markBurned(kv, (await openBurnBatch(kv, "base"))!, final, []));
    const burned = (await getBurnBatch(kv, "base", "b1"))!;
    assert.equal(burned.status, "burned");
    assert.equal(burned.burnedTxHash, tx(2).txHash);
    assert.equal(await openBurnBatch(kv, "base"), null);
  });
});

Deno.test("burn batch record: a malformed write is refused naming the field, and nothing is written", async () => {
  await withKv(async (kv) => {
    const bad = due("o1", "10.5");
    await kv.set(burnDueKey("base", "uXRP", "o1"), bad);
    const entry = (await kv.get<BurnDue>(burnDueKey("base", "uXRP", "o1"))) as Deno.KvEntry<BurnDue>;
    // Refused before any write (today by the sum of the amounts; the schema would name `orders.0.amountWei`).
    await assert.rejects(recordBurnBatch(kv, { id: "b1", due: [entry], tx: tx(1), at: AT }));
    const badTx = { ...tx(1), consumes: { kind: "nonce" as const, account: "0xtransfer", nonce: -1 } };
    await kv.set(burnDueKey("base", "uXRP", "o1"), due("o1", "1000"));
    const good = (await kv.get<BurnDue>(burnDueKey("base", "uXRP", "o1"))) as Deno.KvEntry<BurnDue>;
    await assert.rejects(recordBurnBatch(kv, { id: "b1", due: [good], tx: badTx, at: AT }), (err: unknown) => {
      assert.ok(err instanceof InvalidRecordError);
      assert.match(err.message, /onchain_burn_batch\/base\/b1 is invalid: attempts\.0\.consumes\.nonce/);
      return true;
    });
    assert.equal(await countKeys(kv, ["onchain_burn_batch"]), 0, "no batch");
    assert.equal(await countKeys(kv, ["onchain_burn_open"]), 0, "no open pointer");
    assert.equal(await countKeys(kv, ["onchain_burn_order"]), 0, "no order marker");
    assert.equal(await countKeys(kv, ["onchain_burn_due"]), 1, "the due record kept");

    // A settlement that would break the record is refused too: burned with no hash.
    await kv.set(burnBatchKey("base", "b9"), { ...open, id: "b9" });
    await kv.set(openBurnKey("base"), "b9");
    const entry9 = (await openBurnBatch(kv, "base"))!;
    await assert.rejects(markBurned(kv, entry9, { txHash: "", blockNumber: 1, at: AT }, []), /burnedTxHash/);
    assert.deepEqual(await getBurnBatch(kv, "base", "b9"), { ...open, id: "b9" }, "unchanged");
  });
});

Deno.test("burn step: a malformed open batch is held with one counted alert; nothing sent, no batch started", async () => {
  const p = await handPipeline({
    chains: (kv) => simChains(kv, { random: seededRandom(23), transferAddress: SIM_TRANSFER_ADDRESS }),
  });
  try {
    const damaged = { ...open, totalWei: "999999" }; // more than its orders redeemed
    await p.kv.set(burnBatchKey("base", "b1"), damaged);
    await p.kv.set(openBurnKey("base"), "b1");
    await p.kv.set(burnDueKey("base", "uXRP", "o3"), due("o3", "5000"));
    const before = await p.kv.get(burnBatchKey("base", "b1"));

    assert.equal(await onchainBurnStep(p.ctx, "base", "test", 60_000), "invalid");
    assert.equal(await onchainBurnStep(p.ctx, "base", "test", 60_000), "invalid");
    const alert = (await getAlert(p.kv, "invalid_record", "onchain_burn_batch/base/b1"))!;
    assert.ok(alert, "one invalid_record alert naming the key");
    assert.equal(alert.count, 2, "counted when it repeats");
    assert.match(alert.message, /totalWei/);
    assert.equal((await p.kv.get(burnBatchKey("base", "b1"))).versionstamp, before.versionstamp, "untouched");
    assert.equal(await countKeys(p.kv, ["onchain_burn_batch"]), 1, "no batch started past it");
    assert.equal(await countKeys(p.kv, ["onchain_burn_due"]), 1, "the due record kept");
    assert.deepEqual(await p.sim.ledger("base").txStatus(open.attempts[0].txHash), { state: "unknown" });

    const totals = await burnTotals(p.kv);
    assert.deepEqual(totals.totals, []);
    assert.match(totals.invalid[0].message, /onchain_burn_batch\/base\/b1 is invalid: totalWei/);
  } finally {
    await p.close();
  }
});
