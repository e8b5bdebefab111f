/**
 * The contract every chain adapter must pass (chains/adapter.ts), as one suite parameterised by a small harness per
 * adapter: how to send us a transfer, seal blocks, reorganise, skip a slot, and make one of our transactions die.
 * Each case talks to the adapter only through `ChainReader`/`ChainSender` and records as the order actor does (the
 * transaction and its reservations in one atomic, kv/chain_state.ts). A case the harness cannot support is declared
 * with a reason and shown as ignored with that reason in the test output: never skipped silently.
 *
 * Run today against the sim adapters (tests/chain_contract_sim_test.ts) and the EVM adapter on anvil
 * (tests/chain_contract_evm_test.ts); each native adapter runs it against its own.
 *
 * Besides an order's payout or mint (`prepare`), a harness hands in the adapter's other outgoing transactions
 * (`purposes`): a sweep (account chains), a consolidation (UTXO chains), a burn (EVM). Those cases record the
 * transaction as its store does and then leave it to the one driver (actors/sent_tx.ts `followSentTx`) under the
 * purpose's policy (actors/follow_up.ts), as its actor does (docs/architecture.md "Write ahead of the chain"): the
 * driver alone must send it after a crash and settle it once, or prove it dead, and the effects it returns, written by
 * the one writer (kv/sent_tx_effects.ts), must be what the purpose's records need.
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
import { addReservations, coinLocks, readNonceCounter, sequenceLockKey } from "../../kv/chain_state.ts";
import { chainFamily, type UtxoChain } from "../../chains/catalog.ts";
import type { Chains, Consumed, Outpoint, UtxoPayer } from "../../chains/adapter.ts";
import type { FeeFunction } from "../../chains/shared/coin_select.ts";
import { CHANGE_DERIVATION_INDEX } from "../../chains/derivation.ts";
import { CONSOLIDATION_OUTPUT_INDEX, consolidationOrderId } from "../../kv/consolidations.ts";
import { addCoins, type Coin, readCoin, spendableCoins, spentBy } from "../../kv/treasury.ts";
import { hotWalletHoldKey } from "../../kv/hot_wallet.ts";
import { getAlert } from "../../kv/alerts.ts";
import { type SentTx, sentTxOf, SentTxSchema, validRecord } from "../../model/sent_tx.ts";
import type { OwnOutput } from "../../model/sent_tx_effects.ts";
import { BURN_POLICY, CONSOLIDATION_POLICY, type FollowUpPolicy, SWEEP_POLICY } from "../../actors/follow_up.ts";
import { type FollowDeps, type Followed, type FollowOptions, followSentTx } from "../../actors/sent_tx.ts";

export const CONTRACT_CASES = [
  "deposit seen once across rescans",
  "reorg before finality removes a deposit",
  "skipped block scanned past",
  "dead transaction proven with its proof kind",
  "reservation released when its transaction is proven dead",
  "crash between record and broadcast re-sends the same bytes",
  "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once",
  "sweep: proven dead by the driver, its reservations released",
  "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once",
  "consolidation: proven dead by the driver, its reservations released",
  "burn: crash between record and broadcast, the driver re-sends the same bytes and it settles once",
  "burn: proven dead by the driver, its reservations released",
] as const;
export type ContractCase = typeof CONTRACT_CASES[number];

/** The outgoing transactions besides an order's payout or mint, each followed by the driver under its own policy. */
export type Purpose = "sweep" | "consolidation" | "burn";

/** Each purpose's policy, as its actor passes it to the driver (actors/sweeper.ts, actors/onchain_burn.ts). */
const POLICIES: Record<Purpose, FollowUpPolicy> = {
  sweep: SWEEP_POLICY,
  consolidation: CONSOLIDATION_POLICY,
  burn: BURN_POLICY,
};

/** What a case needs of the harness besides the purpose's builder: `kill` for the death cases. */
const PURPOSE_CASES: Partial<Record<ContractCase, { purpose: Purpose; needsKill: boolean }>> = {
  "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once": {
    purpose: "sweep",
    needsKill: false,
  },
  "sweep: proven dead by the driver, its reservations released": { purpose: "sweep", needsKill: true },
  "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once": {
    purpose: "consolidation",
    needsKill: false,
  },
  "consolidation: proven dead by the driver, its reservations released": {
    purpose: "consolidation",
    needsKill: true,
  },
  "burn: crash between record and broadcast, the driver re-sends the same bytes and it settles once": {
    purpose: "burn",
    needsKill: false,
  },
  "burn: proven dead by the driver, its reservations released": { purpose: "burn", needsKill: true },
};

/** How a harness kills one of our recorded transactions (see `ContractHarness.kill`). */
export interface Kill {
  kind: DeathProof["kind"];
  /**
   * Makes `tx` die. A conflict kill on a UTXO chain returns the outpoints the killing transaction spent: only those
   * leave the treasury, the others the dead transaction held stay ours.
   */
  run(tx: PreparedTx): Promise<void | { spent: Outpoint[] }>;
}

/**
 * A purpose's transaction built as its actor builds it, and who sends it (the payer, or the EVM transfer address's
 * sender). `kill`: where the harness's own kill cannot reach this purpose (the sim stalls payouts only).
 */
export interface PurposeBuilder<Args extends unknown[], Out> {
  sender: ChainSender;
  prepare(label: string, ...args: Args): Promise<Out>;
  kill?: Kill;
}

/** The purposes a harness's adapter has (`ContractHarness.purposes`). */
export interface ContractPurposes {
  /** Account chains: a funded deposit address swept into the hot wallet (actors/sweeper.ts `sweepDeposit`). */
  sweep?: PurposeBuilder<[], PreparedTx>;
  /**
   * UTXO chains: `coins` merged into one output at the payer's change address, no change (actors/sweeper.ts
   * `consolidate`); `own` is that output, a treasury coin once final.
   */
  consolidation?: PurposeBuilder<[coins: PayoutCoin[]], { tx: PreparedTx; own: OwnOutput[] }>;
  /** EVM chains: `burn(amount)` from the transfer address (actors/onchain_burn.ts `recordAndSend`). */
  burn?: PurposeBuilder<[], PreparedTx>;
}

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
  kill?: Kill;
  /**
   * The adapter's other outgoing transactions. `landed(label)` covers them too. A purpose case without its builder
   * (or, for a death case, without `kill`) must be declared in `unsupported`, with the reason.
   */
  purposes?: ContractPurposes;
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
    const needs = PURPOSE_CASES[name];
    if (needs && !(h.purposes?.[needs.purpose] && (!needs.needsKill || h.purposes[needs.purpose]!.kill || h.kill))) {
      // Never skipped silently: a harness that lacks what a case needs says why in `unsupported`.
      await t.step(name, () => {
        throw new Error(`${h.name} has no ${needs.purpose} builder or kill, and gives no reason in \`unsupported\``);
      });
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
    if (status.proof.kind === "conflict") {
      // The proof names what the other transaction took of what ours consumes (all of it here: one coin, or a nonce).
      const { since: _since, ...consumed } = tx.consumes as NonNullable<PreparedTx["consumes"]> & { since?: number };
      assert.deepEqual(status.proof.consumed, consumed);
    }
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
    // Free again, except what a conflicting transaction took: spent for good, its lock naming the spender, so no
    // transaction of ours reserves it again.
    const proof = dead.proof;
    const takenBy = (o: Outpoint) =>
      proof.kind === "conflict" && proof.consumed.kind === "outpoints" &&
        proof.consumed.outpoints.some((t) => t.txHash === o.txHash && t.index === o.index)
        ? proof.spentBy
        : null;
    assert.deepEqual(await coinLocks(h.kv, h.chain, coins), coins.map(takenBy));
    const free = spend.filter((c) => takenBy(c) === null);
    if (free.length < spend.length) {
      const again = await h.prepare("contract-coins-2b", { coins: spend });
      assert.equal(await record(h, again), false, "a coin the conflict spent cannot be reserved again");
    }
    if (free.length === 0) return;
    const next = await h.prepare("contract-coins-3", { coins: free });
    assert.ok(await record(h, next), "the released coins can be spent by a new transaction");
    assert.deepEqual(await coinLocks(h.kv, h.chain, outpointsOf(free)), free.map(() => next.txHash));
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

  "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once": (h) =>
    crashThenDrive(h, "sweep"),
  "sweep: proven dead by the driver, its reservations released": (h) => killThenDrive(h, "sweep"),
  "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once": (h) =>
    crashThenDrive(h, "consolidation"),
  "consolidation: proven dead by the driver, its reservations released": (h) => killThenDrive(h, "consolidation"),
  "burn: crash between record and broadcast, the driver re-sends the same bytes and it settles once": (h) =>
    crashThenDrive(h, "burn"),
  "burn: proven dead by the driver, its reservations released": (h) => killThenDrive(h, "burn"),
};

// ---------------------------------------------------------------- the purposes, followed by the one driver

/** A purpose's transaction as prepared, with who sends it and the outputs paying us back. */
interface Built {
  tx: PreparedTx;
  sender: ChainSender;
  own?: OwnOutput[];
  /** A consolidation's inputs, recorded as treasury coins before it is (their records are what it settles). */
  coins?: PayoutCoin[];
}

async function build(h: ContractHarness, purpose: Purpose, label: string): Promise<Built> {
  const purposes = h.purposes!;
  switch (purpose) {
    case "sweep":
      return { tx: await purposes.sweep!.prepare(label), sender: purposes.sweep!.sender };
    case "burn":
      return { tx: await purposes.burn!.prepare(label), sender: purposes.burn!.sender };
    case "consolidation": {
      assert.ok(h.coins, `${h.name}: a consolidation spends coins the harness gives (\`coins\`)`);
      const coins = await h.coins();
      // The treasury's records of the coins, as the watcher wrote them when they were deposited.
      await addCoins(h.kv, coins.map((c) => treasuryCoin(h, c)));
      const { tx, own } = await purposes.consolidation!.prepare(label, coins);
      return { tx, own, coins, sender: purposes.consolidation!.sender };
    }
  }
}

function treasuryCoin(h: ContractHarness, c: PayoutCoin): Coin {
  return {
    chain: utxoChain(h),
    outpoint: { txHash: c.txHash, index: c.index },
    address: c.address,
    derivationIndex: c.derivationIndex,
    amount: c.amount,
    height: c.height,
    coinbase: false,
  };
}

function utxoChain(h: ContractHarness): UtxoChain {
  const family = chainFamily(h.chain);
  assert.equal(family.family, "utxo", `${h.name}: consolidations are for UTXO chains`);
  return family.chain as UtxoChain;
}

/**
 * Records `tx` as a purpose's store does (kv/treasury.ts `recordSweep`, kv/consolidations.ts `recordConsolidation`,
 * kv/onchain_burns.ts `recordBurnBatch`): its sent-transaction record, schema-checked, and its reservations in one
 * atomic. Returns the record as the driver will read it back, or null when the commit failed.
 */
async function recordSent(h: ContractHarness, tx: PreparedTx): Promise<SentTx | null> {
  assert.deepEqual(structuredClone(tx), tx, "a prepared transaction is plain data");
  const record = validRecord(
    SentTxSchema,
    `sent tx ${tx.txHash}`,
    sentTxOf(h.chain as SentTx["chain"], tx, new Date()),
  );
  const key = sentKey(tx);
  const atomic = h.kv.atomic().check({ key, versionstamp: null }).set(key, record);
  if (!(await addReservations(atomic, tx).commit()).ok) return null;
  // Read back and checked, as the purpose's store reads every record before it is driven.
  return validRecord(SentTxSchema, `sent tx ${tx.txHash}`, (await h.kv.get(key)).value);
}

function sentKey(tx: PreparedTx): Deno.KvKey {
  return ["chain_contract_sent_tx", tx.txHash];
}

/** The driver's deps: it asks only the reader of the transaction's chain (actors/sent_tx.ts `lookAtSentTx`). */
function driverDeps(h: ContractHarness, log: string[]): FollowDeps {
  const onlyReader = () => {
    throw new Error("the driver asks the chain through its reader only; senders are passed to it");
  };
  const chains = { reader: () => h.reader, minter: onlyReader, payer: onlyReader } as unknown as Chains;
  return { kv: h.kv, chains, now: new Date(), log: (m) => log.push(m) };
}

function driverOptions(h: ContractHarness, purpose: Purpose, b: Built, label: string): FollowOptions {
  return {
    required: h.confirmations,
    policy: POLICIES[purpose],
    sender: b.sender,
    label: `contract ${purpose} ${label}`,
    afterDeath: `the next ${purpose} is signed`,
    ...(b.own ? { own: b.own } : {}),
  };
}

function describe(f: Followed): string {
  return f.kind === "waiting" ? `waiting(${f.status.state}, sent ${f.sent}${f.blocked ? ", blocked" : ""})` : f.kind;
}

/**
 * Prepared and recorded, never broadcast (the process died between the two): the driver alone, stepped with the
 * purpose's policy and the harness's sender as its actor steps it, blocks sealed between steps, must send the recorded
 * bytes and follow them to `final` exactly once; its effects, written, settle the purpose.
 */
async function crashThenDrive(h: ContractHarness, purpose: Purpose): Promise<void> {
  const label = `contract-${purpose}-crash`;
  const b = await build(h, purpose, label);
  const recorded = await recordSent(h, b.tx);
  assert.ok(recorded, "recorded with its reservations");
  await assertHeld(h, b.tx);
  const unsent = await h.reader.txStatus(b.tx.txHash, ownTx(b.tx));
  assert.equal(unsent.state, "unknown", `never sent: ${JSON.stringify(unsent)}`);

  const opts = driverOptions(h, purpose, b, label);
  const log: string[] = [];
  const steps: string[] = [];
  let final: Extract<Followed, { kind: "final" }> | undefined;
  for (let i = 0; i < MAX_BLOCKS && !final; i++) {
    const followed = await followSentTx(driverDeps(h, log), recorded, opts);
    steps.push(describe(followed));
    if (followed.kind === "final") final = followed;
    else {
      assert.equal(followed.kind, "waiting", `${h.name}: ${steps.join(" -> ")}; ${log.join("; ")}`);
      await h.mine(1);
    }
  }
  assert.ok(final, `${h.name}: not final after ${MAX_BLOCKS} blocks: ${steps.join(" -> ")}`);
  // The first step found it unknown and sent it: nothing else ever did.
  assert.match(steps[0], /^waiting\(unknown, sent (resent|nudged)\)$/, steps.join(" -> "));
  assert.equal(final.txHash.toLowerCase(), b.tx.txHash.toLowerCase(), "the recorded transaction itself was mined");
  // Settled once: more blocks and more steps answer the same, and send nothing more.
  for (let i = 0; i < 2; i++) {
    await h.mine(1);
    const again = await followSentTx(driverDeps(h, log), recorded, opts);
    assert.equal(again.kind, "final", describe(again));
    assert.ok(again.kind === "final" && again.txHash === final.txHash && again.blockNumber === final.blockNumber);
  }
  assert.deepEqual(await h.landed(label), [b.tx.txHash], "exactly one transaction landed");

  const hold = { kind: "releaseHotWalletHold", chain: h.chain, txHash: b.tx.txHash };
  if (purpose !== "consolidation") {
    // No treasury coins on these chains: the hold (if any was taken) goes, and Sui's coin-version locks (those
    // versions are consumed for good).
    const versions = b.tx.consumes?.kind === "outpoints"
      ? [{ kind: "releaseConsumed", chain: h.chain, consumes: b.tx.consumes }]
      : [];
    assert.deepEqual(final.effects, [hold, ...versions], `a ${purpose} adds and spends no coins`);
  } else {
    const chain = utxoChain(h);
    const inputs = outpointsOf(b.coins!);
    const [merged] = b.own!;
    assert.equal(b.own!.length, 1, "a consolidation has one output");
    assert.deepEqual(final.effects, [
      hold,
      { kind: "spendCoins", chain, outpoints: inputs, spentBy: final.txHash },
      {
        kind: "addCoin",
        coin: {
          chain,
          outpoint: { txHash: final.txHash, index: merged.index },
          address: merged.address,
          derivationIndex: merged.derivationIndex,
          amount: merged.amount,
          height: final.blockNumber,
        },
      },
    ]);
    // The merged output is on chain as the effects say: what becomes a treasury coin exists.
    const outputs = await h.reader.transfersOf(final.txHash);
    const onChain = outputs?.find((t) => t.index === merged.index);
    assert.ok(onChain, `output ${merged.index} of ${final.txHash}: ${JSON.stringify(outputs, bigints)}`);
    assert.equal(onChain.to, merged.address);
    assert.equal(onChain.amount, merged.amount);
  }
  assert.ok((await addSentTxEffects(h.kv.atomic(), final.effects).commit()).ok);
  if (purpose === "consolidation") {
    const chain = utxoChain(h);
    const [merged] = b.own!;
    for (const o of outpointsOf(b.coins!)) {
      assert.equal(await readCoin(h.kv, chain, o), null, "an input left the treasury");
      assert.equal(await spentBy(h.kv, chain, o), final.txHash, "spent by the consolidation");
    }
    // Their locks stay, naming the consolidation: no step that chose them earlier can reserve them again.
    assert.deepEqual(await coinLocks(h.kv, chain, outpointsOf(b.coins!)), b.coins!.map(() => final.txHash));
    const outpoint = { txHash: final.txHash, index: merged.index };
    assert.deepEqual(await readCoin(h.kv, chain, outpoint), {
      chain,
      outpoint,
      address: merged.address,
      derivationIndex: merged.derivationIndex,
      amount: merged.amount,
      height: final.blockNumber,
      coinbase: false,
    });
    assert.ok(
      (await spendableCoins(h.kv, chain)).some((c) => c.outpoint.txHash === final!.txHash),
      "the merged output is a spendable treasury coin",
    );
  }
}

/**
 * Prepared, recorded, then killed by the harness: the driver, stepped as its actor steps it (an error of a step is
 * retried on the next, as the actors do), must answer `dead` with the harness's proof kind, and its effects, written,
 * must free what the recording reserved.
 */
async function killThenDrive(h: ContractHarness, purpose: Purpose): Promise<void> {
  const label = `contract-${purpose}-dead`;
  const b = await build(h, purpose, label);
  const kill = h.purposes![purpose]!.kill ?? h.kill!;
  const recorded = await recordSent(h, b.tx);
  assert.ok(recorded, "recorded with its reservations");
  await assertHeld(h, b.tx);
  const killed = await kill.run(b.tx);

  const opts = driverOptions(h, purpose, b, label);
  const log: string[] = [];
  const steps: string[] = [];
  let dead: Extract<Followed, { kind: "dead" }> | undefined;
  for (let i = 0; i < MAX_BLOCKS && !dead; i++) {
    let followed: Followed;
    try {
      followed = await followSentTx(driverDeps(h, log), recorded, opts);
    } catch (err) {
      // A re-send of a transaction the node now refuses (expired, its nonce used): the actor logs it and retries.
      steps.push(`threw (${err instanceof Error ? err.message.slice(0, 80) : String(err)})`);
      await h.mine(1);
      continue;
    }
    steps.push(describe(followed));
    if (followed.kind === "dead") dead = followed;
    else {
      assert.equal(followed.kind, "waiting", `${h.name}: a killed ${purpose}: ${steps.join(" -> ")}`);
      await h.mine(1);
    }
  }
  assert.ok(dead, `${h.name}: not proven dead after ${MAX_BLOCKS} blocks: ${steps.join(" -> ")}`);
  assert.equal(dead.proof.kind, kill.kind, JSON.stringify(dead.proof));
  assert.ok(dead.detail.length > 0);
  if (dead.proof.kind === "expired") assert.deepEqual(dead.proof.expiry, b.tx.expiry, "the recorded expiry");
  if (dead.proof.kind === "conflict") assertConflictNames(dead.proof.consumed, b.tx, killed?.spent);
  assert.deepEqual(await h.landed(label), [], "never included");
  if (dead.proof.kind === "conflict" && b.tx.consumes?.kind === "nonce") {
    // Another transaction used our nonce or Sequence: a leaked or shared key, raised whatever the purpose.
    const alert = await getAlert(h.kv, "nonce_used_elsewhere", b.tx.txHash);
    assert.ok(alert, `a nonce_used_elsewhere alert for ${b.tx.txHash}`);
  }

  assert.ok((await addSentTxEffects(h.kv.atomic(), dead.effects).commit()).ok);
  await assertReleased(h, b.tx, dead.proof);
  if (purpose === "consolidation") {
    // The coins the killing transaction spent left the treasury, spent by it; every other input is ours again,
    // spendable by the next transaction.
    const chain = utxoChain(h);
    const spentByKiller = new Set((killed?.spent ?? []).map((o) => `${o.txHash}:${o.index}`));
    for (const coin of b.coins!) {
      const o = { txHash: coin.txHash, index: coin.index };
      const name = `${o.txHash}:${o.index}`;
      if (spentByKiller.has(name)) {
        assert.equal(await readCoin(h.kv, chain, o), null, `${name}: spent by the killing transaction`);
        assert.equal(await spentBy(h.kv, chain, o), dead.proof.kind === "conflict" ? dead.proof.spentBy : null);
      } else {
        assert.equal(
          await spentBy(h.kv, chain, o),
          null,
          `${name} is unspent on chain (the killing transaction spent only ${[...spentByKiller].join(", ")}), ` +
            `yet the dead consolidation's effects mark it spent: ${JSON.stringify(dead.effects, bigints)}`,
        );
        assert.deepEqual(await readCoin(h.kv, chain, o), treasuryCoin(h, coin), `${name} is still a treasury coin`);
      }
    }
  }
}

/**
 * A conflict proof names what the other transaction took of `tx`'s: its nonce or Sequence, or the inputs it spent
 * (those leave the treasury for good; any other input of `tx` is still ours, as the sim's ledger says it:
 * chains/sim/ledger.ts `conflictOf`). `spent`: the outpoints the harness's kill spent, when it says.
 */
function assertConflictNames(consumed: Consumed, tx: PreparedTx, spent: Outpoint[] | undefined): void {
  if (consumed.kind === "nonce") {
    assert.deepEqual(consumed, tx.consumes, "the proof names the nonce the transaction consumed");
    return;
  }
  assert.equal(tx.consumes?.kind, "outpoints");
  const recorded = tx.consumes?.kind === "outpoints" ? tx.consumes.outpoints : [];
  const named = outpointsOf(consumed.outpoints);
  assert.ok(named.length > 0, "a conflict names at least one input");
  for (const o of named) {
    assert.ok(recorded.some((r) => r.txHash === o.txHash && r.index === o.index), `${o.txHash}:${o.index} is ours`);
  }
  if (spent) {
    assert.deepEqual(
      named,
      recorded.filter((r) => spent.some((s) => s.txHash === r.txHash && s.index === r.index)).map((r) => ({
        txHash: r.txHash,
        index: r.index,
      })),
      "the proof names exactly the inputs the other transaction spent: model/sent_tx_effects.ts `deadEffects` marks " +
        "every input it names spent for good, so an input named but unspent would leave the treasury",
    );
  }
}

/** What `tx`'s recording reserved is held by it. */
async function assertHeld(h: ContractHarness, tx: PreparedTx): Promise<void> {
  for (const r of tx.reservations ?? []) {
    switch (r.kind) {
      case "coins":
        assert.deepEqual(await coinLocks(h.kv, r.chain, r.outpoints), r.outpoints.map(() => tx.txHash));
        break;
      case "sequence":
        assert.deepEqual((await h.kv.get(sequenceLockKey(r.chain, r.account, r.sequence))).value, {
          txHash: tx.txHash,
        });
        break;
      case "hotWallet":
        assert.notEqual((await h.kv.get(hotWalletHoldKey(r.chain, tx.txHash))).versionstamp, null);
        break;
      case "nonce":
        assert.equal((await readNonceCounter(h.kv, r.chain, r.account)).next, r.nonce + 1n);
        break;
      case "mintNote":
        break;
    }
  }
}

/**
 * What `tx`'s recording reserved is free again: an EVM nonce excepted (the transaction that killed it used it), and
 * the coins a conflicting transaction took (their locks name it: spent for good).
 */
async function assertReleased(h: ContractHarness, tx: PreparedTx, proof: DeathProof): Promise<void> {
  const takenBy = (o: Outpoint) =>
    proof.kind === "conflict" && proof.consumed.kind === "outpoints" &&
      proof.consumed.outpoints.some((t) => t.txHash === o.txHash && t.index === o.index)
      ? proof.spentBy
      : null;
  for (const r of tx.reservations ?? []) {
    switch (r.kind) {
      case "coins":
        assert.deepEqual(await coinLocks(h.kv, r.chain, r.outpoints), r.outpoints.map(takenBy), "coins unlocked");
        break;
      case "sequence":
        assert.equal(
          (await h.kv.get(sequenceLockKey(r.chain, r.account, r.sequence))).versionstamp,
          null,
          `the Sequence ${r.sequence} of ${r.account} unlocked`,
        );
        break;
      case "hotWallet":
        assert.equal((await h.kv.get(hotWalletHoldKey(r.chain, tx.txHash))).versionstamp, null, "hold released");
        break;
      case "nonce":
        assert.equal((await readNonceCounter(h.kv, r.chain, r.account)).next, r.nonce + 1n, "never given back");
        break;
      case "mintNote":
        break;
    }
  }
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

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

/**
 * A UTXO payer's consolidation builder, exactly as actors/sweeper.ts `consolidate` builds one: `coins` paid whole to
 * the payer's own change address less the fee of their inputs and one output, so no change; its merged output, output
 * CONSOLIDATION_OUTPUT_INDEX signed by the change key, becomes a treasury coin once final. `prepared` lets the
 * harness remember it (its `landed`, its kill).
 */
export function utxoConsolidation(
  payer: UtxoPayer,
  fee: FeeFunction,
  prepared: (label: string, tx: PreparedTx, coins: PayoutCoin[]) => void,
): NonNullable<ContractPurposes["consolidation"]> {
  return {
    sender: payer,
    async prepare(label, coins) {
      const changeAddress = payer.changeAddress;
      assert.ok(changeAddress, `the ${payer.chain} payer has no change address`);
      const amount = coins.reduce((sum, c) => sum + c.amount, 0n) - fee(coins.length, 1);
      const tx = await payer.preparePayout({
        orderId: consolidationOrderId(label),
        to: changeAddress,
        amount,
        memo: null,
        coins,
      });
      assert.equal(tx.change, undefined, "a consolidation has one output and no change");
      prepared(label, tx, coins);
      const own = [{
        index: CONSOLIDATION_OUTPUT_INDEX,
        address: changeAddress,
        derivationIndex: CHANGE_DERIVATION_INDEX,
        amount,
      }];
      return { tx, own };
    },
  };
}

/** The purposes a UTXO chain has not, and why: shown by the doge and zec harnesses alike. */
export const UTXO_PURPOSES_UNSUPPORTED = {
  "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
    "a UTXO chain needs no sweep: deposit coins are spent directly (chains/adapter.ts SweepRequest)",
  "sweep: proven dead by the driver, its reservations released":
    "a UTXO chain needs no sweep: deposit coins are spent directly (chains/adapter.ts SweepRequest)",
  "burn: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
    "uAssets are burned on the EVM chains only",
  "burn: proven dead by the driver, its reservations released": "uAssets are burned on the EVM chains only",
} as const satisfies Partial<Record<ContractCase, string>>;

/** The purposes an account chain has not, and why: shown by the sol, xrp and sui harnesses alike. */
export const ACCOUNT_PURPOSES_UNSUPPORTED = {
  "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
    "an account chain holds no coins (UTXOs) to consolidate",
  "consolidation: proven dead by the driver, its reservations released":
    "an account chain holds no coins (UTXOs) to consolidate",
  "burn: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
    "uAssets are burned on the EVM chains only",
  "burn: proven dead by the driver, its reservations released": "uAssets are burned on the EVM chains only",
} as const satisfies Partial<Record<ContractCase, string>>;
