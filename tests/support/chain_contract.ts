/**
 * The contract every chain adapter must pass (chains/adapter.ts), as one suite parameterised by a small harness per
 * adapter: how to send us a transfer, seal blocks, reorganise, skip a slot, and make one of our transactions die.
 * Each case talks to the adapter only through `ChainReader`/`ChainSender` and records as the order actor does (the
 * transaction and its reservations in one atomic, kv/chain_state.ts). A case the harness cannot support is declared
 * with a reason and shown as ignored with that reason in the test output: never skipped silently.
 *
 * Run today against the sim adapters (tests/chain_contract_sim_test.ts) and the EVM adapter on anvil
 * (tests/chain_contract_evm_test.ts); each native adapter runs it against its own.
 */
import assert from "node:assert/strict";
import { deadEffects } from "../../model/sent_tx_effects.ts";
import { addSentTxEffects } from "../../kv/sent_tx_effects.ts";
import type { Intent } from "../../actors/transition.ts";
import {
  type ChainReader,
  type ChainSender,
  type DeathProof,
  isCounted,
  type ObservedTransfer,
  outpointsOf,
  type OwnTx,
  type PayoutCoin,
  type PreparedTx,
  SKIPPED,
  type TxStatus,
} from "../../chains/adapter.ts";
import type { ChainSymbol } from "../../chains/catalog.ts";
import { addReservations, coinLocks } from "../../kv/chain_state.ts";

export const CONTRACT_CASES = [
  "deposit seen once across rescans",
  "reorg before finality removes a deposit",
  "skipped block scanned past",
  "dead transaction proven with its proof kind",
  "reservation released when its transaction is proven dead",
  "crash between record and broadcast re-sends the same bytes",
] as const;
export type ContractCase = typeof CONTRACT_CASES[number];

export interface ContractHarness {
  /** Shown in the test names: the adapter and what it runs on ("sim sol", "EVM on anvil"). */
  name: string;
  chain: ChainSymbol;
  kv: Deno.Kv;
  reader: ChainReader;
  sender: ChainSender;
  /** Confirmations a transaction needs here (with the reader's `final` flag where it has one). */
  confirmations: number;
  /** One of our outgoing transactions (a payout or a mint), distinct per `label`, signed, not sent. */
  prepare(label: string, opts?: { coins?: PayoutCoin[] }): Promise<PreparedTx>;
  /**
   * UTXO chains: coins we control, confirmed and unspent, for the coin cases to spend (the payer must be able to sign
   * them). Absent: made-up coins, for adapters that never look them up (the sim's account chains, EVM).
   */
  coins?(): Promise<PayoutCoin[]>;
  /** Hashes of our transactions for `label` that are in a canonical block now. */
  landed(label: string): Promise<string[]>;
  /** A transfer to us (a deposit to one of our addresses, or a uAsset transfer to the transfer address), sent. */
  transferToUs(): Promise<{ txHash: string; amount: bigint }>;
  /** Seals (mines) `blocks` blocks. */
  mine(blocks: number): Promise<void>;
  /** Marks this point; the function returned replaces every block above it by a competing branch at least as high. */
  checkpoint?(): Promise<() => Promise<void>>;
  /** Seals one block after a skipped slot (a height with no block). */
  skipSlot?(): Promise<void>;
  /** Makes a recorded, not yet sent transaction of ours die, proven by a proof of `kind` once blocks go by. */
  kill?: { kind: DeathProof["kind"]; run(tx: PreparedTx): Promise<void> };
  /** Every case this harness cannot run, with the reason shown in the test output. */
  unsupported: Partial<Record<ContractCase, string>>;
  close(): Promise<void>;
}

/** Most blocks a case seals waiting for something the chain promises (finality, an expiry passing). */
const MAX_BLOCKS = 400;

export async function runChainContract(t: Deno.TestContext, h: ContractHarness): Promise<void> {
  for (const name of CONTRACT_CASES) {
    const reason = h.unsupported[name];
    if (reason !== undefined) {
      console.log(`chain contract: ${h.name}: "${name}" UNSUPPORTED: ${reason}`);
      await t.step({ name: `${name} (unsupported by ${h.name}: ${reason})`, ignore: true, fn: () => {} });
      continue;
    }
    await t.step(name, () => CASES[name](h));
  }
}

const CASES: Record<ContractCase, (h: ContractHarness) => Promise<void>> = {
  async "deposit seen once across rescans"(h) {
    const sent = await h.transferToUs();
    const status = await untilCounted(h, sent.txHash);
    const tip = (await h.reader.tip()).number;
    const from = status.blockNumber;
    const whole = ours(await h.reader.scan(from, tip), sent.txHash);
    assert.equal(whole.length, 1, "seen once in one scan");
    assert.equal(whole[0].amount, sent.amount);
    // Rescans, over the same range, from below it, and block by block, see the same identity once.
    const again = ours(await h.reader.scan(Math.max(0, from - 2), tip), sent.txHash);
    const pieces = [];
    for (let n = from; n <= tip; n++) pieces.push(...ours(await h.reader.scan(n, n), sent.txHash));
    for (const seen of [again, pieces]) {
      assert.deepEqual(seen.map(identity), whole.map(identity), "same (txHash, index, amount) on every rescan");
    }
    assert.deepEqual((await h.reader.transfersOf(sent.txHash))?.map(identity), whole.map(identity));
  },

  async "reorg before finality removes a deposit"(h) {
    const rollback = await h.checkpoint!();
    const sent = await h.transferToUs();
    await h.mine(1);
    const status = await untilIncluded(h, sent.txHash);
    assert.ok(!isCounted(status, h.confirmations), "not final yet: what this case is about");
    const n = status.blockNumber;
    const before = await h.reader.blockHash(n);
    assert.equal(ours(await h.reader.scan(n, n), sent.txHash).length, 1);
    await rollback();
    assert.notEqual(await h.reader.blockHash(n), before, "the block at that height changed");
    assert.notEqual((await h.reader.txStatus(sent.txHash)).state, "included");
    const tip = (await h.reader.tip()).number;
    assert.equal(ours(await h.reader.scan(Math.max(0, n - 1), tip), sent.txHash).length, 0, "gone from every scan");
    assert.equal(await h.reader.transfersOf(sent.txHash), null);
  },

  async "skipped block scanned past"(h) {
    const sent = await h.transferToUs();
    await h.skipSlot!();
    const tip = await h.reader.tip();
    const skipped = tip.number - 1;
    assert.equal(await h.reader.blockHash(skipped), SKIPPED, "a skipped slot is neither a block nor null");
    assert.equal(await h.reader.blockHash(tip.number), tip.hash, "the tip is never a skipped slot");
    assert.equal(await h.reader.blockHash(tip.number + 1), null, "null stays 'above the tip'");
    const blocks = await h.reader.scan(skipped - 1, tip.number);
    assert.ok(blocks.every((b) => b.number !== skipped), "no block is made up for the skipped slot");
    const last = blocks.at(-1)!;
    assert.equal(last.number, tip.number, "the scan goes on past the skipped slot");
    assert.equal(ours(blocks, sent.txHash).length, 1, "the transfer after the skipped slot is seen");
    const before = blocks.find((b) => b.number === skipped - 1);
    if (before) assert.equal(last.parentHash, before.hash, "the next block's parent is the block before the gap");
  },

  async "dead transaction proven with its proof kind"(h) {
    const tx = await h.prepare("contract-dead");
    assert.ok(await record(h, tx), "recorded with its reservations");
    const status = await untilDead(h, tx);
    assert.equal(status.proof.kind, h.kill!.kind, JSON.stringify(status));
    assert.ok(status.detail.length > 0);
    if (status.proof.kind === "expired") {
      assert.deepEqual(status.proof.expiry, tx.expiry, "the proof names the recorded expiry");
      assert.ok(status.proof.reached > status.proof.expiry.value);
    }
    if (status.proof.kind === "conflict") assert.deepEqual(status.proof.consumed, tx.consumes);
    // Never without the recorded transaction: the reader proves nothing from a hash alone.
    assert.notEqual((await h.reader.txStatus(tx.txHash)).state, "dead");
    // Dead is for ever: more blocks, a rebroadcast of the same bytes, and it is still dead, never included.
    await h.sender.broadcast(tx).catch(() => {});
    await h.mine(2);
    assert.equal((await h.reader.txStatus(tx.txHash, ownTx(tx))).state, "dead");
    assert.deepEqual(await h.landed("contract-dead"), []);
  },

  async "reservation released when its transaction is proven dead"(h) {
    const spend: PayoutCoin[] = await h.coins?.() ??
      [0, 1].map((index) => ({
        txHash: `contract-coin-${h.name}`,
        index,
        amount: 10_000_000_000n,
        address: "contract-coin-owner",
        derivationIndex: 0,
        height: 0,
      }));
    assert.equal(spend.length, 2, "the coin cases spend two coins");
    const coins = outpointsOf(spend);
    const first = await h.prepare("contract-coins-1", { coins: spend });
    // `since` (where a conflicting spend is looked for from) is the adapter's to choose.
    const { since: _since, ...consumed } = first.consumes as Extract<PreparedTx["consumes"], { kind: "outpoints" }>;
    assert.deepEqual(consumed, { kind: "outpoints", outpoints: coins });
    assert.ok(await record(h, first));
    assert.deepEqual(await coinLocks(h.kv, h.chain, coins), [first.txHash, first.txHash]);
    // The same coins cannot be spent twice: the second recording commits nothing.
    const rival = await h.prepare("contract-coins-2", { coins: spend });
    assert.equal(await record(h, rival), false);
    assert.equal((await h.kv.get(intentKey(rival))).versionstamp, null, "nothing of the rival is recorded");
    assert.deepEqual(await coinLocks(h.kv, h.chain, coins), [first.txHash, first.txHash]);
    // Proven dead: the commit that records the death (the order actor's) frees the coins.
    const dead = await untilDead(h, first);
    const intent: Intent = {
      chain: h.chain,
      txHash: first.txHash,
      raw: first.raw,
      preparedAt: new Date().toISOString(),
      consumes: first.consumes,
    };
    const atomic = h.kv.atomic();
    addSentTxEffects(atomic, deadEffects(intent, dead.proof));
    assert.ok((await atomic.commit()).ok);
    assert.deepEqual(await coinLocks(h.kv, h.chain, coins), [null, null]);
    const next = await h.prepare("contract-coins-3", { coins: spend });
    assert.ok(await record(h, next), "the released coins can be spent by a new transaction");
    assert.deepEqual(await coinLocks(h.kv, h.chain, coins), [next.txHash, next.txHash]);
  },

  async "crash between record and broadcast re-sends the same bytes"(h) {
    const tx = await h.prepare("contract-crash");
    assert.ok(await record(h, tx));
    // The process dies here: recorded, never sent. The chain does not know it, and it is not dead.
    const unsent = await h.reader.txStatus(tx.txHash, ownTx(tx));
    assert.equal(unsent.state, "unknown", JSON.stringify(unsent));
    // Recovery sends the recorded bytes, twice (a crash after the broadcast too): one transaction lands.
    const recorded = (await h.kv.get<string>(intentKey(tx))).value!;
    await h.sender.broadcast({ txHash: tx.txHash, raw: recorded });
    await h.sender.broadcast({ txHash: tx.txHash, raw: recorded });
    const status = await untilCounted(h, tx.txHash, ownTx(tx));
    assert.ok(status.success);
    assert.equal(status.txHash ?? tx.txHash, tx.txHash, "the recorded transaction itself, not another");
    assert.deepEqual(await h.landed("contract-crash"), [tx.txHash], "never a second transaction");
  },
};

function intentKey(tx: PreparedTx): Deno.KvKey {
  return ["chain_contract_intent", tx.txHash];
}

/** Records `tx` as the order actor does: the transaction and its reservations in one atomic. */
async function record(h: ContractHarness, tx: PreparedTx): Promise<boolean> {
  // Plain data, as the contract requires: a closure (or any other non-data) in it cannot be cloned.
  assert.deepEqual(structuredClone(tx), tx, "a prepared transaction is plain data");
  const atomic = h.kv.atomic().check({ key: intentKey(tx), versionstamp: null }).set(intentKey(tx), tx.raw);
  return (await addReservations(atomic, tx).commit()).ok;
}

function ownTx(tx: PreparedTx): OwnTx {
  return { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes };
}

function ours(blocks: { transfers: ObservedTransfer[] }[], txHash: string): ObservedTransfer[] {
  return blocks.flatMap((b) => b.transfers).filter((t) => t.txHash.toLowerCase() === txHash.toLowerCase());
}

function identity(t: ObservedTransfer) {
  return { txHash: t.txHash.toLowerCase(), index: t.index, amount: t.amount };
}

type Included = Extract<TxStatus, { state: "included" }>;
type Dead = Extract<TxStatus, { state: "dead" }>;

async function untilIncluded(h: ContractHarness, txHash: string): Promise<Included> {
  for (let i = 0; i < MAX_BLOCKS; i++) {
    const s = await h.reader.txStatus(txHash);
    if (s.state === "included") return s;
    await h.mine(1);
  }
  throw new Error(`${h.name}: ${txHash} not included after ${MAX_BLOCKS} blocks`);
}

async function untilCounted(h: ContractHarness, txHash: string, own?: OwnTx): Promise<Included> {
  for (let i = 0; i < MAX_BLOCKS; i++) {
    const s = await h.reader.txStatus(txHash, own);
    if (s.state === "included" && isCounted(s, h.confirmations)) {
      if (h.reader.finality.kind === "flag") assert.equal(s.final, true, "a flag-finality reader sets `final`");
      return s;
    }
    await h.mine(1);
  }
  throw new Error(`${h.name}: ${txHash} not final after ${MAX_BLOCKS} blocks`);
}

async function untilDead(h: ContractHarness, tx: PreparedTx): Promise<Dead> {
  await h.kill!.run(tx);
  for (let i = 0; i < MAX_BLOCKS; i++) {
    const s = await h.reader.txStatus(tx.txHash, ownTx(tx));
    if (s.state === "dead") return s;
    assert.notEqual(s.state, "included", `${h.name}: a killed transaction was included`);
    await h.mine(1);
  }
  throw new Error(`${h.name}: ${tx.txHash} not proven dead after ${MAX_BLOCKS} blocks`);
}
