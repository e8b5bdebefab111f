/**
 * Coin selection (chains/shared/coin_select.ts), pure: worked cases, then property checks over seeded random coin
 * sets (the books balance, no dust change, the fee covers the fee function, largest-first takes the fewest coins, an
 * insufficient answer says exactly how short).
 */
import assert from "node:assert/strict";
import { type FeeFunction, MAX_TX_INPUTS, type SelectableCoin, selectCoins } from "../chains/shared/coin_select.ts";

const coin = (i: number, amount: bigint): SelectableCoin => ({ outpoint: { txHash: `t${i}`, index: i % 3 }, amount });
// A doge-like fee: 10 base + 148 per input + 34 per output (bytes) at 1 unit per byte.
const fee: FeeFunction = (inputs, outputs) => 10n + 148n * BigInt(inputs) + 34n * BigInt(outputs);
const DUST = 546n;
const sum = (coins: readonly SelectableCoin[]) => coins.reduce((s, c) => s + c.amount, 0n);

Deno.test("coin select: largest coin first, change back when above dust", () => {
  const coins = [coin(1, 5_000n), coin(2, 100_000n), coin(3, 20_000n)];
  const r = selectCoins(coins, 50_000n, fee, DUST);
  assert.ok(r.ok);
  assert.deepEqual(r.inputs.map((c) => c.outpoint.txHash), ["t2"]);
  assert.equal(r.fee, fee(1, 2));
  assert.equal(r.change, 100_000n - 50_000n - fee(1, 2));
  assert.equal(r.dustToFee, 0n);
});

Deno.test("coin select: change below dust goes to the fee, and says how much", () => {
  // 10_000 - 9_000 - fee(1,2)=236 leaves 764 >= dust: change. With amount 9_300: 10_000-9_300-236 = 464 < dust.
  const r = selectCoins([coin(1, 10_000n)], 9_300n, fee, DUST);
  assert.ok(r.ok);
  assert.equal(r.change, null);
  assert.equal(r.fee, 700n);
  assert.equal(r.dustToFee, 700n - fee(1, 1));
});

Deno.test("coin select: not enough coins says how short, counting the fee of spending them all", () => {
  const coins = [coin(1, 1_000n), coin(2, 2_000n)];
  const r = selectCoins(coins, 5_000n, fee, DUST);
  assert.deepEqual(r, { ok: false, reason: "insufficient_funds", short: 5_000n + fee(2, 1) - 3_000n });
  assert.deepEqual(selectCoins([], 1_000n, fee, DUST), {
    ok: false,
    reason: "insufficient_funds",
    short: 1_000n + fee(0, 1),
  });
});

Deno.test("coin select: bad input is refused with a clear error", () => {
  assert.throws(() => selectCoins([coin(1, 10n)], 0n, fee, 0n), /must be positive/);
  assert.throws(() => selectCoins([coin(1, 10_000n)], 100n, fee, DUST), /at least the dust limit/);
  assert.throws(() => selectCoins([coin(1, 10n)], 5n, fee, -1n), /dust limit/);
  assert.throws(() => selectCoins([coin(1, 0n)], 1_000n, fee, DUST), /has amount 0/);
  assert.throws(() => selectCoins([coin(1, 5_000n), coin(1, 6_000n)], 1_000n, fee, DUST), /given twice/);
  assert.throws(() => selectCoins([coin(1, 5_000n)], 1_000n, () => -1n, DUST), /fee function gave -1/);
});

/** A small seeded PRNG (mulberry32), so a failing case can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("coin select: properties over 2,000 random coin sets", () => {
  for (let seed = 1; seed <= 2_000; seed++) {
    const rand = prng(seed);
    const big = (max: number) => BigInt(1 + Math.floor(rand() * max));
    const coins = Array.from(
      { length: Math.floor(rand() * 12) },
      (_, i) => coin(i, big(rand() < 0.3 ? 2_000 : 200_000)),
    );
    const dust = BigInt(Math.floor(rand() * 1_000));
    const amount = dust + big(400_000);
    const perByte = big(5);
    const f: FeeFunction = (i, o) => perByte * fee(i, o);
    const at = `seed ${seed}`;
    const r = selectCoins(coins, amount, f, dust);
    if (!r.ok) {
      // Short is exact: spending every coin misses by exactly that much, and never reported when it would fund.
      assert.ok(r.short > 0n, at);
      assert.equal(sum(coins) + r.short, amount + f(coins.length, 1), at);
      continue;
    }
    const change = r.change ?? 0n;
    assert.equal(sum(r.inputs), amount + r.fee + change, `books balance, ${at}`);
    if (r.change !== null) {
      assert.ok(r.change >= dust && r.change > 0n, `no dust change, ${at}`);
      assert.equal(r.fee, f(r.inputs.length, 2), at);
      assert.equal(r.dustToFee, 0n, at);
    } else {
      assert.equal(r.fee, f(r.inputs.length, 1) + r.dustToFee, at);
      assert.ok(r.dustToFee >= 0n, at);
      // Given to the fee only when a change output, paid for, would have been dust (or nothing).
      const changeLeft = sum(r.inputs) - amount - f(r.inputs.length, 2);
      assert.ok(changeLeft < dust || changeLeft <= 0n, at);
    }
    // Inputs are distinct coins we hold, largest first, and no shorter largest-first prefix pays.
    const ids = new Set(r.inputs.map((c) => `${c.outpoint.txHash}:${c.outpoint.index}`));
    assert.equal(ids.size, r.inputs.length, at);
    for (const c of r.inputs) assert.ok(coins.includes(c), at);
    for (let i = 1; i < r.inputs.length; i++) assert.ok(r.inputs[i - 1].amount >= r.inputs[i].amount, at);
    const prefix = r.inputs.slice(0, -1);
    assert.ok(sum(prefix) < amount + f(prefix.length, 1), `fewest coins, ${at}`);
  }
});

Deno.test("coin select: never more than MAX_TX_INPUTS coins; enough only in more of them says so, apart from too little", () => {
  const small = Array.from({ length: MAX_TX_INPUTS + 10 }, (_, i) => coin(i + 10, 10_000n));
  // Payable within MAX_TX_INPUTS coins: at most that many taken.
  const within = selectCoins(small, BigInt(MAX_TX_INPUTS - 5) * 9_000n, fee, DUST);
  assert.ok(within.ok);
  assert.ok(within.inputs.length <= MAX_TX_INPUTS);
  // The coins hold enough, but only in more than MAX_TX_INPUTS of them: a transaction that could never be recorded
  // (its atomic would pass Deno KV's 100 checks) is not chosen, and the answer says why.
  const needsMore = BigInt(MAX_TX_INPUTS + 5) * 9_000n;
  const fragmented = selectCoins(small, needsMore, fee, DUST);
  assert.deepEqual(fragmented, {
    ok: false,
    reason: "too_many_inputs",
    short: needsMore + fee(MAX_TX_INPUTS, 1) - BigInt(MAX_TX_INPUTS) * 10_000n,
  });
  // Too little in all of them: insufficient, as before, counting every coin.
  const tooMuch = BigInt(MAX_TX_INPUTS + 10) * 10_000n;
  const short = selectCoins(small, tooMuch, fee, DUST);
  assert.deepEqual(short, {
    ok: false,
    reason: "insufficient_funds",
    short: tooMuch + fee(small.length, 1) - sum(small),
  });
});
