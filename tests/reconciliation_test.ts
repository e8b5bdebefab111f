/**
 * The pure reconciliation (actors/reconciliation.ts `reconcile`): records crafted to cause each mismatch kind, and
 * the parts a failed chain read leaves unknown (never reported as ok).
 */
import assert from "node:assert/strict";
import type { MintedEvent } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE_CHAINS, nativeToWei, UASSETS } from "../chains/catalog.ts";
import {
  type ContractFacts,
  type ControlledFacts,
  type Read,
  reconcile,
  type ReconcileInput,
} from "../actors/reconciliation.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { forStorage } from "../actors/ops/reconcile.ts";
import { type Order, withDetails } from "../model/order.ts";
import type { HeldTransfer } from "../kv/pipeline.ts";
import { inStatus, makeOrder } from "./support/orders.ts";

const OWNER = "0x00000000000000000000000000000000000000aa";
const ok = <T>(value: T): Read<T> => ({ ok: true, value });

/** A sol -> base mint (i a multiple of 5 picks sol and base in makeOrder). */
function solMint(status: Order["status"], i: number): Order {
  return makeOrder(OWNER, "mint", status, i * 5);
}

/** A base -> sol burn of `wei`. */
function solBurn(status: Order["status"], i: number, wei: bigint): Order {
  const o = makeOrder(OWNER, "burn", "pending", i * 5);
  return inStatus({ ...o, amount: wei.toString() }, status);
}

function eventOf(o: Order, over: Partial<MintedEvent> = {}): MintedEvent {
  return {
    depositId: o.details.depositId,
    to: o.destinationWallet,
    amount: nativeToWei("sol", BigInt(o.amount)),
    txHash: `0xmint-${o.id}`,
    blockNumber: 1,
    ...over,
  };
}

interface Crafted {
  orders?: Order[];
  events?: MintedEvent[];
  atTransfer?: Read<bigint>;
  supply?: Read<bigint>;
  held?: HeldTransfer[];
  hotWallet?: Read<bigint>;
  /** The fees sol sweeps paid (absent: none recorded). */
  sweepFees?: Read<bigint>;
  minted?: Read<MintedEvent[]>;
}

/** Every chain empty and readable, with uSOL on base as `c` says; sol controls `hotWallet` (default: plenty). */
function input(c: Crafted): ReconcileInput {
  const contracts: ContractFacts[] = EVM_CHAINS.flatMap((chain) =>
    UASSETS.map((asset) => {
      const here = chain === "base" && asset === "uSOL";
      return {
        chain,
        asset,
        minted: here ? c.minted ?? ok(c.events ?? []) : ok([]),
        totalSupply: here ? c.supply ?? ok((c.events ?? []).reduce((s, e) => s + e.amount, 0n)) : ok(0n),
        atTransfer: here ? c.atTransfer ?? ok(0n) : ok(0n),
      };
    })
  );
  const controlled: ControlledFacts[] = NATIVE_CHAINS.map((chain) => ({
    chain,
    parts: chain === "sol"
      ? { hotWallet: c.hotWallet ?? ok(10n ** 20n), unsweptDeposits: ok(0n), reserves: ok(0n) }
      : { treasury: ok(0n) },
    ...(chain === "sol" && c.sweepFees ? { sweepFees: c.sweepFees } : {}),
  }));
  return {
    at: "2026-01-01T00:00:00.000Z",
    evmChains: EVM_CHAINS,
    nativeChains: NATIVE_CHAINS,
    orders: c.orders ?? [],
    held: c.held ?? [],
    dust: [],
    contracts,
    burnTransferOnChain: new Map(),
    controlled,
  };
}

Deno.test("reconcile: records and chain agree: ok, with the sums per asset and chain", () => {
  const a = solMint("completed", 0);
  const b = solMint("completed", 1);
  const burn = solBurn("completed", 2, 3_000_000_123n);
  const wei = nativeToWei("sol", BigInt(a.amount) + BigInt(b.amount));
  // The burned uAssets were minted earlier (an older deposit, not part of this test): the supply has them too.
  const r = reconcile(input({
    orders: [a, b, burn],
    events: [eventOf(a), eventOf(b)],
    atTransfer: ok(3_000_000_123n),
    supply: ok(wei + 3_000_000_123n),
  }));
  assert.deepEqual(r.mismatches, []);
  assert.deepEqual(r.unknown, []);
  assert.equal(r.ok, true);
  const base = r.assets.find((x) => x.asset === "uSOL")!.chains.find((c) => c.chain === "base")!;
  assert.equal(base.mint.completedWei, wei.toString());
  assert.equal(base.mint.mintedOnChainWei, wei.toString());
  assert.equal(base.redeem.paidOutWei, "3000000000");
  assert.equal(base.redeem.remainderWei, "123");
  assert.equal(base.redeem.feesWei, "0");
  assert.equal(base.redeem.transferAddressWei, "3000000123");
  // Supply: less what sits at the transfer address already paid out (or kept as remainder), in SOL units.
  const supply = r.assets.find((x) => x.asset === "uSOL")!.supply;
  assert.equal(supply.redeemedAtTransferWei, "3000000123");
  assert.equal(supply.outstandingWei, wei.toString());
  assert.equal(supply.outstandingNative, (wei / 10n ** 9n).toString());
  assert.equal(supply.outstandingRemainderWei, "0");
});

Deno.test("reconcile: a completed mint with no Minted event is mint_missing_on_chain, naming the order", () => {
  const a = solMint("completed", 0);
  const b = solMint("completed", 1);
  const r = reconcile(input({ orders: [a, b], events: [eventOf(a)], supply: ok(eventOf(a).amount) }));
  assert.equal(r.ok, false);
  assert.equal(r.mismatches.length, 1);
  const [m] = r.mismatches;
  assert.equal(m.kind, "mint_missing_on_chain");
  assert.equal(m.asset, "uSOL");
  assert.equal(m.chain, "base");
  assert.ok(m.records.includes(b.id) && m.records.includes(b.details.depositId), m.records.join());
});

Deno.test("reconcile: a Minted event without its order is minted_without_order, naming the deposit and the tx", () => {
  const a = solMint("completed", 0);
  const stray = { ...eventOf(a), depositId: `0x${"ab".repeat(32)}`, txHash: "0xstray" };
  const r = reconcile(input({ orders: [a], events: [eventOf(a), stray] }));
  assert.deepEqual(r.mismatches.map((m) => m.kind), ["minted_without_order"]);
  assert.deepEqual(r.mismatches[0].records, [stray.depositId, "0xstray"]);
  // An event whose order is failed is no better: named with the order.
  const failed = solMint("failed", 1);
  const r2 = reconcile(input({ orders: [failed], events: [eventOf(failed)] }));
  assert.deepEqual(r2.mismatches.map((m) => m.kind), ["minted_without_order"]);
  assert.ok(r2.mismatches[0].records.includes(failed.id));
  assert.match(r2.mismatches[0].message, /is failed/);
});

Deno.test("reconcile: an event of another amount is amount_differs; of another recipient, recipient_differs", () => {
  const a = solMint("completed", 0);
  const r = reconcile(input({ orders: [a], events: [eventOf(a, { amount: eventOf(a).amount + 1n })] }));
  assert.deepEqual(r.mismatches.map((m) => m.kind), ["amount_differs"]);
  assert.ok(r.mismatches[0].records.includes(a.id));
  const r2 = reconcile(input({ orders: [a], events: [eventOf(a, { to: "0x" + "11".repeat(20) })] }));
  assert.deepEqual(r2.mismatches.map((m) => m.kind), ["recipient_differs"]);
});

Deno.test("reconcile: a mint in flight is listed, not a mismatch, with or without its event yet", () => {
  const minting = solMint("minting", 0);
  const processing = solMint("processing", 1);
  const r = reconcile(input({ orders: [minting, processing], events: [eventOf(minting)] }));
  assert.deepEqual(r.mismatches, []);
  const base = r.assets.find((x) => x.asset === "uSOL")!.chains.find((c) => c.chain === "base")!;
  assert.deepEqual(base.mint.inFlightOrders.sort(), [minting.id, processing.id].sort());
});

Deno.test("reconcile: the transfer address holding other than the records say is transfer_address_differs", () => {
  const done = solBurn("completed", 0, 2_000_000_000n);
  const flying = solBurn("burning", 1, 1_000_000_000n);
  const failed = withDetails(solBurn("failed", 2, 500n), {}, { errorMessage: "Amount below minimum burn" });
  const held: HeldTransfer = {
    chain: "base",
    txHash: "0xheld",
    index: 0,
    from: OWNER,
    asset: "uSOL",
    amount: "7",
    blockNumber: 3,
    detectedAt: "2026-01-01T00:00:00.000Z",
    reason: "no burn configuration",
  };
  const all = 2_000_000_000n + 1_000_000_000n + 500n + 7n;
  const good = reconcile(input({ orders: [done, flying, failed], held: [held], atTransfer: ok(all) }));
  assert.deepEqual(good.mismatches, []);
  const base = good.assets.find((x) => x.asset === "uSOL")!.chains.find((c) => c.chain === "base")!;
  assert.deepEqual(base.redeem.inFlightOrders, [flying.id]);
  assert.deepEqual(base.redeem.failedHoldingOrders, [failed.id]);
  assert.equal(base.redeem.heldWei, "7");
  // A held record lost (or uAssets arriving with no record): the difference, named with the transfer address's records.
  const bad = reconcile(input({ orders: [done, flying, failed], held: [], atTransfer: ok(all) }));
  assert.deepEqual(bad.mismatches.map((m) => m.kind), ["transfer_address_differs"]);
  assert.match(bad.mismatches[0].message, /unexplained 7 wei/);
});

Deno.test("reconcile: a completed burn whose payout and remainder do not add up is payout_amounts_differ", () => {
  const done = solBurn("completed", 0, 2_000_000_000n);
  // The order schema refuses this on write; a record changed behind its back is what reconciliation is for.
  const wrong = { ...done, details: { ...done.details, nativeAmount: "3", remainderWei: "0" } } as Order;
  const r = reconcile(input({ orders: [wrong], atTransfer: ok(3_000_000_000n) }));
  assert.ok(r.mismatches.some((m) => m.kind === "payout_amounts_differ" && m.records.includes(done.id)));
});

Deno.test("reconcile: supply above the native coins we control is supply_exceeds_controlled, with the numbers", () => {
  const a = solMint("completed", 0);
  const wei = eventOf(a).amount;
  const under = reconcile(input({ orders: [a], events: [eventOf(a)], hotWallet: ok(BigInt(a.amount)) }));
  assert.deepEqual(under.mismatches, [], "exactly covered is fine");
  const r = reconcile(input({ orders: [a], events: [eventOf(a)], hotWallet: ok(BigInt(a.amount) - 1n) }));
  assert.deepEqual(r.mismatches.map((m) => m.kind), ["supply_exceeds_controlled"]);
  const [m] = r.mismatches;
  assert.equal(m.chain, null);
  assert.match(m.message, new RegExp(`short by ${nativeToWei("sol", 1n)} wei`));
  assert.match(m.message, new RegExp(`supply ${wei} wei`));
});

Deno.test("reconcile: fees sweeps paid explain controlled below outstanding to the unit, never more", () => {
  const a = solMint("completed", 0);
  const deposit = BigInt(a.amount);
  const facts = (hot: bigint, fees: Read<bigint>) =>
    reconcile(input({ orders: [a], events: [eventOf(a)], hotWallet: ok(hot), sweepFees: fees }));
  const explained = facts(deposit - 5_000n, ok(5_000n));
  const sol = explained.assets.find((x) => x.asset === "uSOL")!;
  assert.deepEqual(explained.mismatches, []);
  assert.equal(sol.supply.sweepFees, "5000");
  assert.equal(BigInt(sol.supply.controlledNative!) + 5_000n, BigInt(sol.supply.outstandingNative!));
  const short = facts(deposit - 5_001n, ok(5_000n));
  assert.deepEqual(short.mismatches.map((m) => m.kind), ["supply_exceeds_controlled"]);
  assert.match(
    short.mismatches[0].message,
    new RegExp(`the 5000 sweeps and the 0 payouts paid in fees: short by ${nativeToWei("sol", 1n)} wei`),
  );
  const unread = facts(deposit, { ok: false, reason: "sol: getTransaction: 503" });
  assert.equal(unread.ok, false);
  assert.ok(unread.unknown.some((u) => u.includes("sol sweep fees: sol: getTransaction: 503")), unread.unknown.join());
  assert.equal(unread.assets.find((x) => x.asset === "uSOL")!.supply.sweepFees, null);
});

Deno.test("reconcile: a failed chain read makes its part unknown, never ok, and no mismatch is guessed", () => {
  const a = solMint("completed", 0);
  const r = reconcile(input({
    orders: [a],
    minted: { ok: false, reason: "base: eth_getLogs: timeout" },
    hotWallet: { ok: false, reason: "sol: getBalance: 503" },
  }));
  assert.deepEqual(r.mismatches, []);
  assert.equal(r.ok, false);
  assert.ok(r.unknown.some((u) => u.includes("uSOL base minted events: base: eth_getLogs: timeout")), r.unknown.join());
  assert.ok(r.unknown.some((u) => u.includes("sol hotWallet: sol: getBalance: 503")), r.unknown.join());
  const sol = r.assets.find((x) => x.asset === "uSOL")!;
  assert.equal(sol.ok, false);
  assert.equal(sol.chains.find((c) => c.chain === "base")!.mint.mintedOnChainWei, null);
  assert.equal(sol.supply.controlledNative, null);
});

Deno.test("reconcile: a failed burn whose transfer a reorg removed holds nothing; unknown when not read", () => {
  const timedOut = withDetails(solBurn("failed", 0, 900n), {}, {
    errorMessage: "Blockchain confirmation timeout",
    errorKind: "confirmation_timeout",
  });
  const gone = input({ orders: [timedOut], atTransfer: ok(0n) });
  const r = reconcile({ ...gone, burnTransferOnChain: new Map([[timedOut.id, ok(false)]]) });
  assert.deepEqual(r.mismatches, []);
  assert.equal(r.ok, true);
  const unread = reconcile(gone);
  assert.equal(unread.ok, false);
  assert.ok(unread.unknown.some((u) => u.includes(timedOut.id)));
});

Deno.test("reconcile: uAssets burned on chain or sent back by a refund still count as received", () => {
  const done = solBurn("completed", 0, 2_000_000_000n);
  const held: HeldTransfer = {
    chain: "base",
    txHash: "0xheld",
    index: 0,
    from: OWNER,
    asset: "uSOL",
    amount: "7",
    blockNumber: 3,
    detectedAt: "2026-01-01T00:00:00.000Z",
    reason: "no burn configuration",
  };
  // The burn batch burned the order's uAssets and the held 7 wei went back: the address holds nothing.
  const facts = input({ orders: [done], held: [held], atTransfer: ok(0n), supply: ok(0n) });
  const missing = reconcile(facts);
  assert.deepEqual(missing.mismatches.map((m) => m.kind), ["transfer_address_differs"]);
  const r = reconcile({
    ...facts,
    leftTransfer: [{ chain: "base", asset: "uSOL", burnedWei: 2_000_000_000n, refundedWei: 7n }],
  });
  assert.deepEqual(r.mismatches, []);
  const base = r.assets.find((x) => x.asset === "uSOL")!.chains.find((c) => c.chain === "base")!;
  assert.equal(base.redeem.burnedOnChainWei, "2000000000");
  assert.equal(base.redeem.refundedWei, "7");
});

Deno.test("<CHAIN>_DEPLOY_BLOCK: where Minted events are read from; a bad value is refused naming the variable", () => {
  const env = {
    BASE_RPC_URLS: "http://127.0.0.1:8545",
    BASE_UASSETS: UASSETS.map((u, i) => `${u}=0x${String(i + 1).padStart(40, "0")}`).join(","),
    EVM_MINTER_KEY_FILE: "/nonexistent/minter.key",
  };
  assert.equal(loadEvmConfig(env).chains.base!.deployBlock, undefined);
  assert.equal(loadEvmConfig({ ...env, BASE_DEPLOY_BLOCK: "123456" }).chains.base!.deployBlock, 123456);
  assert.throws(() => loadEvmConfig({ ...env, BASE_DEPLOY_BLOCK: "12x" }), /BASE_DEPLOY_BLOCK must be a whole number/);
});

Deno.test("the stored copy of a huge report fits in one KV value, ok and the mismatch count kept", async () => {
  const orders = Array.from({ length: 3000 }, (_, i) => solMint("minting", i));
  const strays = Array.from({ length: 400 }, (_, i) => ({
    depositId: `0x${i.toString(16).padStart(64, "0")}`,
    to: OWNER,
    amount: 1n,
    txHash: `0x${i.toString(16).padStart(64, "f")}`,
    blockNumber: i,
  }));
  const r = reconcile(input({ orders, events: strays }));
  assert.equal(r.mismatches.length, 400);
  assert.ok(JSON.stringify(r).length > 65_536, "whole, it would not fit");
  const stored = forStorage(r);
  assert.equal(stored.ok, false);
  assert.equal((stored.report as unknown as { mismatchCount: number }).mismatchCount, 400);
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["reconciliation", "last"], stored); // throws above 64 KiB
  } finally {
    kv.close();
  }
});
