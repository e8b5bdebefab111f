/**
 * Reconciliation (docs/reconciliation.md): does every coin add up? Three checks, per uAsset and EVM chain, from the
 * chains themselves (docs/reconciliation.md):
 *
 * 1. **Confirmed deposits = minted.** Every completed mint order matches exactly one on-chain `Minted` event with its
 *    deposit id, amount (`nativeToWei`) and recipient, and every event has its order. Orders confirmed and not yet
 *    final (processing, minting) are in flight, not mismatches.
 * 2. **Redeemed = paid out + fees + recorded remainders + held (+ in flight, failed burns, dust).** Everything the
 *    transfer address received, by the records, equals what the chain says it holds.
 * 3. **Supply <= native coins we control.** The uAssets still owed (supply less what sits at the transfer address
 *    already paid out) across EVM chains, in native units, against the treasury, hot wallets, unswept deposits and
 *    what every other deposit address keeps (its reserve) on the native chain, plus the fees sweeps paid (recorded,
 *    shown apart: coins that left to move deposits into the hot wallet).
 *
 * `reconcile` (the pure comparison) takes the gathered facts and names each mismatch with its records; `gatherFacts`
 * reads them (chain reads first, then KV, so an order that completes meanwhile is still seen with its event). A chain
 * read that fails makes its part unknown: the report is then not ok, and says which part and why.
 */
import type { Chains, MintedEvent } from "../chains/adapter.ts";
import {
  chainFamily,
  EVM_CHAINS,
  type EvmChain,
  isEvmChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  nativeChainOfUAsset,
  nativeToWei,
  type UAsset,
  UASSETS,
  type UtxoChain,
  weiToNative,
} from "../chains/catalog.ts";
import { type BurnOrder, type MintOrder, type Order, parseOrder } from "../model/order.ts";
import { burnTotals } from "../kv/onchain_burns.ts";
import { listRefunds, type Refund, refundBooks } from "../kv/refunds.ts";
import { type Consolidation, listConsolidations } from "../kv/consolidations.ts";
import { type DustAggregate, type HeldTransfer, listDust, listHeld } from "../kv/pipeline.ts";
import {
  backfillSweepDelivery,
  coinTotals,
  listAccountBalances,
  listSweeps,
  listSweepsDue,
  sweepDelivery,
} from "../kv/treasury.ts";
import { drainFeesOf, hotWalletsOf } from "./hot_wallet_in_effect.ts";
import { deliveredBy } from "./sweeper.ts";
import { readColdHoldings } from "./cold_balance.ts";
import { type ColdSweep, listColdSweeps } from "../kv/cold_sweeps.ts";
import type { StoredMismatch } from "../kv/reconciliation.ts";
import { redactUrls } from "../chains/shared/redact.ts";

/** A chain read: its value, or why it is unknown. */
export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

export const MISMATCH_KINDS = [
  "mint_missing_on_chain",
  "minted_without_order",
  "amount_differs",
  "recipient_differs",
  "payout_amounts_differ",
  "transfer_address_differs",
  "supply_exceeds_controlled",
] as const;
export type MismatchKind = typeof MISMATCH_KINDS[number];

export interface Mismatch extends StoredMismatch {
  kind: MismatchKind;
}

/** The uAsset contract of `asset` on `chain`, as the chain has it. */
export interface ContractFacts {
  chain: EvmChain;
  asset: UAsset;
  minted: Read<MintedEvent[]>;
  totalSupply: Read<bigint>;
  /** `balanceOf(transfer address)`. */
  atTransfer: Read<bigint>;
}

/** `cold`: what the cold addresses hold, read from the chain (actors/cold_balance.ts; docs/reconciliation.md). */
export type ControlledPart = "treasury" | "hotWallet" | "unsweptDeposits" | "reserves" | "cold";

/** Native coins we control on one chain, part by part (smallest native units). */
export interface ControlledFacts {
  chain: NativeChain;
  parts: Partial<Record<ControlledPart, Read<bigint>>>;
  /**
   * Account chains: the fees completed sweeps paid (what left deposit addresses less what the hot wallet received).
   * Not controlled any more, but accounted for: the outstanding supply is compared with controlled plus these.
   */
  sweepFees?: Read<bigint>;
  /**
   * UTXO chains: the fees our final payouts, refunds and consolidations paid (their coins less their outputs, recorded
   * when each was signed). Spent by the operator like sweep fees: accounted, not controlled.
   */
  payoutFees?: Read<bigint>;
}

export interface ReconcileInput {
  at: string;
  /** The EVM chains and native chains this process runs; the others are skipped and said so. */
  evmChains: readonly EvmChain[];
  nativeChains: readonly NativeChain[];
  orders: readonly Order[];
  held: readonly HeldTransfer[];
  dust: readonly DustAggregate[];
  contracts: readonly ContractFacts[];
  /**
   * Failed or cancelled burns whose transfer may not be on chain any more (a confirmation timeout, a source changed
   * by a reorg): whether the chain still has it. Others failed or cancelled burns hold their uAssets at the
   * transfer address for sure.
   */
  burnTransferOnChain: ReadonlyMap<string, Read<boolean>>;
  controlled: readonly ControlledFacts[];
  /**
   * What left the transfer address on chain, per EVM chain and uAsset: uAssets burned by final burn batches and sent
   * back by final refunds of held transfers (docs/onchain-burn.md, docs/refunds.md). Absent: none (this build records
   * neither); the module that records them passes their sums here.
   */
  leftTransfer?: readonly {
    chain: EvmChain;
    asset: UAsset;
    burnedWei: bigint;
    refundedWei: bigint;
    /** Taken by transactions recorded, not yet final (an open burn batch): on chain already, or not yet. */
    leavingWei?: bigint;
  }[];
  /** Stored records (orders, burn batches) that fail their schema (left out of the sums; each makes the report not ok). */
  invalidOrders?: readonly string[];
}

/** Decimal strings throughout: bigints never pass through a float. */
export interface MintSums {
  completedOrders: number;
  /** Completed mint orders' deposits, in wei. */
  completedWei: string;
  /** Every `Minted` event on chain, in wei; null when unknown. */
  mintedOnChainWei: string | null;
  mintedEvents: number | null;
  /** Confirmed and not yet final (processing, minting): order ids. */
  inFlightOrders: string[];
  inFlightWei: string;
}

export interface RedeemSums {
  completedOrders: number;
  /** Paid out (`details.nativeAmount` x 10^(18-decimals)), in wei. */
  paidOutWei: string;
  /** The platform fee is 0% (spec). */
  feesWei: string;
  remainderWei: string;
  /** Held transfers of this uAsset on this chain. */
  heldWei: string;
  heldRecords: number;
  /** Burns not terminal: order ids. */
  inFlightOrders: string[];
  inFlightWei: string;
  /** Failed or cancelled burns whose uAssets are still at the transfer address. */
  failedHoldingWei: string;
  failedHoldingOrders: string[];
  /** Dust aggregates (below the minimum burn, no configuration), never an order. */
  dustWei: string;
  /** All of the above: what the records say the transfer address received. */
  recordsWei: string;
  /** What the chain says it holds now; null when unknown. */
  transferAddressWei: string | null;
  /** What left it: burned on chain, sent back by refunds (`ReconcileInput.leftTransfer`). */
  burnedOnChainWei: string;
  refundedWei: string;
}

export interface ChainReport {
  chain: EvmChain;
  ok: boolean;
  mint: MintSums;
  redeem: RedeemSums;
  totalSupplyWei: string | null;
  unknown: string[];
}

export interface SupplyReport {
  ok: boolean;
  /** Sum of `totalSupply` over the EVM chains. */
  totalSupplyWei: string | null;
  /** What sits at the transfer address already redeemed (paid out, remainders): not owed any more. */
  redeemedAtTransferWei: string | null;
  /** Still owed to holders: supply less redeemed-at-transfer, in wei and in native units with the wei remainder. */
  outstandingWei: string | null;
  outstandingNative: string | null;
  outstandingRemainderWei: string | null;
  /** Native coins we control, part by part (null: unknown), and their total when every part is known. */
  controlled: Record<ControlledPart, string | null>;
  controlledNative: string | null;
  /**
   * Fees completed sweeps paid, native units (null: unknown): the operator's cost of moving deposits into the hot
   * wallet. `controlledNative` + this covers the outstanding supply; the difference between the two is these fees.
   */
  sweepFees: string | null;
  /**
   * UTXO chains: fees our final payouts, refunds and consolidations paid, native units (null: unknown). Counted with
   * the sweep fees: `controlledNative` + `sweepFees` + this covers the outstanding supply.
   */
  payoutFees: string | null;
  unknown: string[];
}

export interface AssetReport {
  asset: UAsset;
  nativeChain: NativeChain;
  ok: boolean;
  chains: ChainReport[];
  supply: SupplyReport;
}

export interface ReconciliationReport {
  at: string;
  ok: boolean;
  assets: AssetReport[];
  mismatches: Mismatch[];
  /** Every part that could not be read, `asset chain part: reason`. */
  unknown: string[];
  /** Chains this process does not run, left out. */
  skipped: string[];
}

const s = (n: bigint) => n.toString();
const sum = (xs: Iterable<bigint>) => [...xs].reduce((a, b) => a + b, 0n);
const OPEN = new Set(["pending", "processing", "minting", "burning"]);
const CONTROLLED_PARTS: readonly ControlledPart[] = ["treasury", "hotWallet", "unsweptDeposits", "reserves", "cold"];

/** The uAsset a burn order moves and the native chain of a mint order, by the order's own fields. */
function uAssetOf(o: Order): UAsset {
  const native = (o.type === "mint" ? o.sourceChain : o.destinationChain) as NativeChain;
  return NATIVE[native].uAsset.symbol;
}

/** Failed burns whose transfer may be gone from the chain: confirmation timeouts and reorganised sources. */
export function burnTransferInDoubt(o: BurnOrder): boolean {
  if (o.status !== "failed" && o.status !== "cancelled") return false;
  if (o.details.sourceChange) return true;
  return o.errorKind === "confirmation_timeout" || o.errorMessage === "Blockchain confirmation timeout";
}

/** The pure comparison: facts in, the report with every mismatch named. */
export function reconcile(input: ReconcileInput): ReconciliationReport {
  const mismatches: Mismatch[] = [];
  const unknown: string[] = [];
  const skipped: string[] = [];
  const evm = new Set(input.evmChains);
  const natives = new Set(input.nativeChains);
  for (const c of EVM_CHAINS) if (!evm.has(c)) skipped.push(`${c}: not run by this process`);
  for (const c of NATIVE_CHAINS) if (!natives.has(c)) skipped.push(`${c}: not run by this process`);
  for (const bad of input.invalidOrders ?? []) unknown.push(`invalid record: ${bad}`);
  const mints = input.orders.filter((o): o is MintOrder => o.type === "mint");
  const burns = input.orders.filter((o): o is BurnOrder => o.type === "burn");
  const mintByDeposit = new Map<string, MintOrder>();
  for (const o of mints) mintByDeposit.set(o.details.depositId.toLowerCase(), o);

  const assets: AssetReport[] = [];
  for (const asset of UASSETS) {
    const native = nativeChainOfUAsset(asset)!;
    const unit = nativeToWei(native, 1n);
    const chains: ChainReport[] = [];
    let supplyWei: bigint | null = 0n;
    let redeemedAtTransfer: bigint | null = 0n;
    const supplyUnknown: string[] = [];
    for (const chain of EVM_CHAINS) {
      if (!evm.has(chain)) continue;
      const facts = input.contracts.find((c) => c.chain === chain && c.asset === asset);
      const chainUnknown: string[] = [];
      const mismatch = (kind: MismatchKind, message: string, records: string[]) =>
        mismatches.push({ kind, asset, chain, message, records });

      // ---- 1. confirmed deposits = minted ----
      const mine = mints.filter((o) => o.destinationChain === chain && uAssetOf(o) === asset);
      const completed = mine.filter((o) => o.status === "completed");
      const inFlight = mine.filter((o) => o.status === "processing" || o.status === "minting");
      const completedWei = sum(completed.map((o) => nativeToWei(native, BigInt(o.amount))));
      const minted = facts?.minted ?? { ok: false, reason: "not read" };
      let mintedWei: bigint | null = null;
      if (!minted.ok) chainUnknown.push(`minted events: ${minted.reason}`);
      else {
        mintedWei = sum(minted.value.map((e) => e.amount));
        const byDeposit = new Map<string, MintedEvent[]>();
        for (const e of minted.value) {
          const id = e.depositId.toLowerCase();
          byDeposit.set(id, [...(byDeposit.get(id) ?? []), e]);
        }
        for (const o of completed) {
          const events = byDeposit.get(o.details.depositId.toLowerCase()) ?? [];
          const want = nativeToWei(native, BigInt(o.amount));
          if (events.length === 0) {
            mismatch(
              "mint_missing_on_chain",
              `completed mint order ${o.id} (deposit ${o.details.depositId}, ${want} wei, tx ${o.transactionHash}) ` +
                `has no Minted event on ${chain}`,
              [o.id, o.details.depositId, ...(o.transactionHash ? [o.transactionHash] : [])],
            );
            continue;
          }
          if (events.length > 1) {
            mismatch(
              "minted_without_order",
              `deposit ${o.details.depositId} of order ${o.id} has ${events.length} Minted events on ${chain}`,
              [o.id, o.details.depositId, ...events.map((e) => e.txHash)],
            );
          }
          const [e] = events;
          if (e.amount !== want) {
            mismatch(
              "amount_differs",
              `order ${o.id} deposited ${o.amount} ${NATIVE[native].token.symbol} units (${want} wei), ` +
                `Minted event ${e.txHash} says ${e.amount} wei`,
              [o.id, o.details.depositId, e.txHash],
            );
          }
          if (e.to.toLowerCase() !== o.destinationWallet.toLowerCase()) {
            mismatch(
              "recipient_differs",
              `order ${o.id} mints to ${o.destinationWallet}, Minted event ${e.txHash} went to ${e.to}`,
              [o.id, o.details.depositId, e.txHash],
            );
          }
        }
        for (const [id, events] of byDeposit) {
          const o = mintByDeposit.get(id);
          const ours = o && o.destinationChain === chain && uAssetOf(o) === asset;
          if (ours && (o.status === "completed" || o.status === "minting")) continue;
          const why = !o
            ? "no mint order has this deposit id"
            : !ours
            ? `its order ${o.id} mints ${uAssetOf(o)} on ${o.destinationChain}`
            : `its order ${o.id} is ${o.status}`;
          mismatch(
            "minted_without_order",
            `Minted event(s) ${events.map((e) => `${e.txHash} (${e.amount} wei to ${e.to})`).join(", ")} ` +
              `of deposit ${id} on ${chain}: ${why}`,
            [id, ...events.map((e) => e.txHash), ...(o ? [o.id] : [])],
          );
        }
      }

      // ---- 2. redeemed = paid out + fees + remainders + held (+ in flight, failed, dust) ----
      const myBurns = burns.filter((o) => o.sourceChain === chain && o.token === asset);
      const done = myBurns.filter((o) => o.status === "completed");
      let paidOut = 0n;
      let remainder = 0n;
      for (const o of done) {
        const nativeAmount = BigInt(o.details.nativeAmount ?? "0");
        const rest = BigInt(o.details.remainderWei ?? "0");
        paidOut += nativeAmount * unit;
        remainder += rest;
        if (nativeAmount * unit + rest !== BigInt(o.amount)) {
          mismatch(
            "payout_amounts_differ",
            `completed burn ${o.id} of ${o.amount} wei records a payout of ${nativeAmount} native units and ` +
              `${rest} wei of remainder`,
            [o.id, ...(o.transactionHash ? [o.transactionHash] : [])],
          );
        }
      }
      const burnsInFlight = myBurns.filter((o) => OPEN.has(o.status));
      const inFlightBurnWei = sum(burnsInFlight.map((o) => BigInt(o.amount)));
      let failedHolding = 0n;
      const failedHoldingOrders: string[] = [];
      let transferKnown = true;
      for (const o of myBurns.filter((o) => o.status === "failed" || o.status === "cancelled")) {
        if (burnTransferInDoubt(o)) {
          const there = input.burnTransferOnChain.get(o.id) ?? { ok: false, reason: "not read" };
          if (!there.ok) {
            chainUnknown.push(`transfer of failed burn ${o.id}: ${there.reason}`);
            transferKnown = false;
            continue;
          }
          if (!there.value) continue;
        }
        failedHolding += BigInt(o.amount);
        failedHoldingOrders.push(o.id);
      }
      const held = input.held.filter((h) => h.chain === chain && h.asset === asset);
      const heldWei = sum(held.map((h) => BigInt(h.amount)));
      const dustWei = sum(input.dust.filter((d) => d.chain === chain && d.asset === asset).map((d) => BigInt(d.sum)));
      const recordsWei = paidOut + remainder + heldWei + inFlightBurnWei + failedHolding + dustWei;
      const atTransfer = facts?.atTransfer ?? { ok: false, reason: "not read" };
      const left = input.leftTransfer?.find((l) => l.chain === chain && l.asset === asset);
      const burnedWei = left?.burnedWei ?? 0n;
      const refundedWei = left?.refundedWei ?? 0n;
      const leavingWei = left?.leavingWei ?? 0n;
      // Received = what it holds + what it burned + what it sent back (+ what is leaving, once that is mined).
      const holdsAndLeft = atTransfer.ok ? atTransfer.value + burnedWei + refundedWei : null;
      const receivedWei = holdsAndLeft !== null && holdsAndLeft + leavingWei === recordsWei ? recordsWei : holdsAndLeft;
      if (!atTransfer.ok) chainUnknown.push(`transfer address balance: ${atTransfer.reason}`);
      else if (transferKnown && receivedWei !== recordsWei) {
        const diff = receivedWei! - recordsWei;
        mismatch(
          "transfer_address_differs",
          `the transfer address received ${receivedWei} wei of ${asset} on ${chain} (holds ${atTransfer.value}, ` +
            `burned ${burnedWei}, sent back ${refundedWei}); the records account for ` +
            `${recordsWei} (paid ${paidOut} + remainders ${remainder} + held ${heldWei} + in flight ` +
            `${inFlightBurnWei} + failed ${failedHolding} + dust ${dustWei}): ${
              diff > 0n ? "unexplained" : "missing"
            } ` +
            `${diff > 0n ? diff : -diff} wei`,
          [...held.map((h) => `${h.chain}:${h.txHash}:${h.index}`), ...burnsInFlight.map((o) => o.id)].slice(0, 50),
        );
      }

      // ---- 3. supply, summed over chains below ----
      const supply = facts?.totalSupply ?? { ok: false, reason: "not read" };
      if (!supply.ok) {
        chainUnknown.push(`totalSupply: ${supply.reason}`);
        supplyUnknown.push(`${chain} totalSupply: ${supply.reason}`);
        supplyWei = null;
      } else if (supplyWei !== null) supplyWei += supply.value;
      if (!atTransfer.ok || !transferKnown) {
        supplyUnknown.push(
          `${chain} transfer address: ${atTransfer.ok ? "a failed burn's transfer" : atTransfer.reason}`,
        );
        redeemedAtTransfer = null;
      } else if (redeemedAtTransfer !== null) {
        // At the transfer address and no longer owed: everything but what is still to be paid or given back.
        const stillOwed = inFlightBurnWei + failedHolding + heldWei + dustWei - refundedWei;
        redeemedAtTransfer += atTransfer.value > stillOwed ? atTransfer.value - stillOwed : 0n;
      }

      for (const u of chainUnknown) unknown.push(`${asset} ${chain} ${u}`);
      chains.push({
        chain,
        ok: chainUnknown.length === 0 && !mismatches.some((m) => m.asset === asset && m.chain === chain),
        mint: {
          completedOrders: completed.length,
          completedWei: s(completedWei),
          mintedOnChainWei: mintedWei === null ? null : s(mintedWei),
          mintedEvents: minted.ok ? minted.value.length : null,
          inFlightOrders: inFlight.map((o) => o.id),
          inFlightWei: s(sum(inFlight.map((o) => nativeToWei(native, BigInt(o.amount))))),
        },
        redeem: {
          completedOrders: done.length,
          paidOutWei: s(paidOut),
          feesWei: "0",
          remainderWei: s(remainder),
          heldWei: s(heldWei),
          heldRecords: held.length,
          inFlightOrders: burnsInFlight.map((o) => o.id),
          inFlightWei: s(inFlightBurnWei),
          failedHoldingWei: s(failedHolding),
          failedHoldingOrders,
          dustWei: s(dustWei),
          recordsWei: s(recordsWei),
          transferAddressWei: atTransfer.ok ? s(atTransfer.value) : null,
          burnedOnChainWei: s(burnedWei),
          refundedWei: s(refundedWei),
        },
        totalSupplyWei: supply.ok ? s(supply.value) : null,
        unknown: chainUnknown,
      });
    }

    // ---- 3. outstanding supply <= native coins we control ----
    const controlledFacts = input.controlled.find((c) => c.chain === native);
    const controlled = {} as Record<ControlledPart, string | null>;
    let controlledNative: bigint | null = 0n;
    if (!natives.has(native)) {
      for (const part of CONTROLLED_PARTS) controlled[part] = null;
      controlledNative = null;
    } else {
      for (const part of CONTROLLED_PARTS) {
        const r = controlledFacts?.parts[part];
        if (r === undefined) {
          controlled[part] = "0"; // not a part this chain has (a UTXO chain has no hot wallet balance)
          continue;
        }
        if (!r.ok) {
          controlled[part] = null;
          supplyUnknown.push(`${native} ${part}: ${r.reason}`);
          controlledNative = null;
          continue;
        }
        controlled[part] = s(r.value);
        if (controlledNative !== null) controlledNative += r.value;
      }
    }
    const fees = controlledFacts?.sweepFees ?? { ok: true as const, value: 0n };
    if (natives.has(native) && !fees.ok) supplyUnknown.push(`${native} sweep fees: ${fees.reason}`);
    const sweepFees = !natives.has(native) || !fees.ok ? null : fees.value;
    const paid = controlledFacts?.payoutFees ?? { ok: true as const, value: 0n };
    if (natives.has(native) && !paid.ok) supplyUnknown.push(`${native} payout fees: ${paid.reason}`);
    const payoutFees = !natives.has(native) || !paid.ok ? null : paid.value;
    // What backs the outstanding supply: the coins we control and the fees sweeps and payouts spent (accounted for).
    const accounted = controlledNative === null || sweepFees === null || payoutFees === null
      ? null
      : controlledNative + sweepFees + payoutFees;
    const outstanding = supplyWei === null || redeemedAtTransfer === null ? null : supplyWei - redeemedAtTransfer;
    const split = outstanding === null ? null : weiToNative(native, outstanding > 0n ? outstanding : 0n);
    let supplyOk = supplyUnknown.length === 0;
    if (!natives.has(native)) {
      supplyOk = true; // the native chain is not run here: nothing to compare against, said in `skipped`
    } else if (outstanding !== null && accounted !== null && outstanding > nativeToWei(native, accounted)) {
      supplyOk = false;
      const parts = CONTROLLED_PARTS.map((p) => `${p} ${controlled[p]}`).join(", ");
      mismatches.push({
        kind: "supply_exceeds_controlled",
        asset,
        chain: null,
        message: `${asset} outstanding across EVM chains is ${split!.native} ${NATIVE[native].token.symbol} units` +
          `${split!.remainderWei > 0n ? ` + ${split!.remainderWei} wei` : ""} (supply ${supplyWei} wei less ` +
          `${redeemedAtTransfer} redeemed at the transfer address), above the ${controlledNative} we control on ` +
          `${native} (${parts}), the ${sweepFees} sweeps and the ${payoutFees} payouts paid in fees: short by ` +
          `${outstanding - nativeToWei(native, accounted!)} wei`,
        records: [native, ...chains.map((c) => c.chain)],
      });
    }
    for (const u of supplyUnknown) unknown.push(`${asset} supply ${u}`);
    assets.push({
      asset,
      nativeChain: native,
      ok: supplyOk && chains.every((c) => c.ok),
      chains,
      supply: {
        ok: supplyOk,
        totalSupplyWei: supplyWei === null ? null : s(supplyWei),
        redeemedAtTransferWei: redeemedAtTransfer === null ? null : s(redeemedAtTransfer),
        outstandingWei: outstanding === null ? null : s(outstanding),
        outstandingNative: split === null ? null : s(split.native),
        outstandingRemainderWei: split === null ? null : s(split.remainderWei),
        controlled,
        controlledNative: controlledNative === null ? null : s(controlledNative),
        sweepFees: sweepFees === null ? null : s(sweepFees),
        payoutFees: payoutFees === null ? null : s(payoutFees),
        unknown: supplyUnknown,
      },
    });
  }
  return {
    at: input.at,
    ok: mismatches.length === 0 && unknown.length === 0,
    assets,
    mismatches,
    unknown,
    skipped,
  };
}

// ---------------------------------------------------------------- gathering

async function read<T>(f: () => Promise<T>): Promise<Read<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (err) {
    // Redacted: a library's error may quote an RPC URL whole (viem does), and providers put their key in it; the
    // reason is answered to read-scope operators and stored.
    return { ok: false, reason: redactUrls(err instanceof Error ? err.message : String(err)) };
  }
}

async function listAll<T>(kv: Deno.Kv, prefix: Deno.KvKey): Promise<T[]> {
  const out: T[] = [];
  for await (const e of kv.list<T>({ prefix })) out.push(e.value);
  return out;
}

export interface GatherOptions {
  kv: Deno.Kv;
  chains: Chains;
  transferAddress: string;
  enabledChains: readonly string[];
  now: Date;
}

/** Reads everything `reconcile` compares: the chains first, then the KV records. */
export async function gatherFacts(opts: GatherOptions): Promise<ReconcileInput> {
  const { kv, chains } = opts;
  const evmChains = EVM_CHAINS.filter((c) => opts.enabledChains.includes(c));
  const nativeChains = NATIVE_CHAINS.filter((c) => opts.enabledChains.includes(c));
  const contracts: ContractFacts[] = [];
  await Promise.all(evmChains.flatMap((chain) =>
    UASSETS.map(async (asset) => {
      const view = chains.uAssetView?.(chain);
      const none = { ok: false as const, reason: "this process has no uAsset view of the chain" };
      contracts.push({
        chain,
        asset,
        minted: view ? await read(() => view.minted(asset)) : none,
        totalSupply: view ? await read(() => view.totalSupply(asset)) : none,
        atTransfer: view ? await read(() => view.balanceOf(asset, opts.transferAddress)) : none,
      });
    })
  ));
  const controlled = await Promise.all(nativeChains.map((chain) => controlledOn(kv, chains, chain, opts.now)));

  // Each record checked as the pipeline checks it: one that fails its schema is named, not guessed at.
  const orders: Order[] = [];
  const invalid: string[] = [];
  for (const raw of await listAll<unknown>(kv, ["order"])) {
    const parsed = parseOrder(raw);
    if (parsed.ok) orders.push(parsed.order);
    else invalid.push(parsed.error.message);
  }
  const [stillHeld, dust, refunds] = await Promise.all([listHeld(kv), listDust(kv), listRefunds(kv)]);
  // Refunds of held records (kv/refunds.ts): what they took off the books, and what they sent back. One failing its
  // schema is in no total: named like an invalid order, and the report is not ok.
  const refunded = refundBooks(refunds.refunds);
  const held = [...stillHeld, ...refunded.held];
  for (const facts of controlled) {
    const family = chainFamily(facts.chain);
    if (family.family !== "utxo") continue;
    const utxo = family.chain;
    facts.payoutFees = await read(async () =>
      utxoFeesPaid(utxo, orders, refunds.refunds, await listConsolidations(kv, utxo), await listColdSweeps(kv, utxo))
    );
  }
  const burnTransferOnChain = new Map<string, Read<boolean>>();
  for (const o of orders) {
    if (o.type !== "burn" || !burnTransferInDoubt(o) || !evmChains.includes(o.sourceChain as EvmChain)) continue;
    const src = o.details.source;
    burnTransferOnChain.set(
      o.id,
      await read(async () =>
        ((await chains.reader(src.chain).transfersOf(src.txHash)) ?? []).some((t) =>
          t.index === src.index && t.to.toLowerCase() === opts.transferAddress.toLowerCase() &&
          t.amount === BigInt(o.amount) && t.asset === o.token
        )
      ),
    );
  }
  const burns = await burnTotals(kv);
  return {
    at: opts.now.toISOString(),
    evmChains,
    nativeChains,
    orders,
    held,
    dust,
    contracts,
    burnTransferOnChain,
    controlled,
    leftTransfer: leftTransfer(burns.totals, refunded.left),
    // A burn batch failing its schema is in no total: the report says so and is not ok, like an invalid order.
    invalidOrders: [...invalid, ...burns.invalid.map((e) => e.message), ...refunds.invalid.map((e) => e.message)],
  };
}

/** Per (chain, uAsset): what burns and refunds took from the transfer address, final or leaving. */
function leftTransfer(
  burns: Awaited<ReturnType<typeof burnTotals>>["totals"],
  refunds: ReturnType<typeof refundBooks>["left"],
): NonNullable<ReconcileInput["leftTransfer"]> {
  const out = burns.map((t) => ({
    chain: t.chain,
    asset: t.asset,
    burnedWei: t.burnedWei,
    refundedWei: 0n,
    leavingWei: t.burningWei,
  }));
  for (const r of refunds) {
    if (!isEvmChain(r.chain)) continue;
    let e = out.find((t) => t.chain === r.chain && t.asset === r.asset);
    if (!e) {
      e = { chain: r.chain, asset: r.asset as UAsset, burnedWei: 0n, refundedWei: 0n, leavingWei: 0n };
      out.push(e);
    }
    e.refundedWei += r.refundedWei;
    e.leavingWei += r.leavingWei;
  }
  return out;
}

/**
 * What our final transactions on UTXO chain `chain` paid in fee (their coins less their outputs, recorded with each
 * when it was signed): completed burns' payouts, completed native refunds, completed consolidations and cold sweeps.
 * A dead or failed transaction paid nothing; one in flight still holds its coins (counted in the treasury). A payout
 * recorded before fees were recorded counts 0 (docs/reconciliation.md).
 */
export function utxoFeesPaid(
  chain: UtxoChain,
  orders: readonly Order[],
  refunds: readonly Refund[],
  consolidations: readonly Consolidation[],
  coldSweeps: readonly ColdSweep[] = [],
): bigint {
  let total = 0n;
  for (const o of orders) {
    if (o.type !== "burn" || o.status !== "completed" || o.destinationChain !== chain) continue;
    const fee = o.details.intent?.fee;
    if (fee !== undefined) total += BigInt(fee);
  }
  for (const r of refunds) {
    if (r.kind === "native" && r.status === "completed" && r.chain === chain && r.intent?.fee !== undefined) {
      total += BigInt(r.intent.fee);
    }
  }
  for (const c of consolidations) if (c.status === "completed") total += BigInt(c.fee);
  for (const c of coldSweeps) if (c.status === "completed" && c.fee !== undefined) total += BigInt(c.fee);
  return total;
}

/**
 * Native coins we control on `chain`: treasury coins (UTXO), or hot wallet, unswept deposits and reserves; and what is
 * cold, read after the rest so a cold sweep landing between the reads is counted twice rather than missed.
 */
async function controlledOn(kv: Deno.Kv, chains: Chains, native: NativeChain, now: Date): Promise<ControlledFacts> {
  const family = chainFamily(native);
  const cold = () => read(async () => (await readColdHoldings(kv, chains, native, now)).cold);
  if (family.family === "utxo") {
    const utxo = family.chain;
    const treasury = await read(async () => (await coinTotals(kv, utxo)).confirmed);
    return { chain: utxo, parts: { treasury, cold: await cold() } };
  }
  const chain = family.chain;
  const reader = chains.reader(chain);
  const balance = reader.balance;
  if (!balance) {
    const no = { ok: false as const, reason: `the ${chain} reader cannot read balances` };
    return { chain, parts: { hotWallet: no, unsweptDeposits: no, reserves: no, cold: no } };
  }
  // The wallet in effect and every retired one (docs/operations.md "Rotating a hot wallet"): a retired wallet keeps its
  // reserve, and holds its balance until its drain lands in the new one; a drain in flight is on one side or the other.
  const hot = await read(() => hotWalletsOf({ kv, chains }, chain));
  const hotWallet: Read<bigint> = !hot.ok
    ? hot
    : hot.value.payer.hotWallet
    ? await read(async () =>
      sum(await Promise.all([hot.value.payer.hotWallet!, ...hot.value.retired.map((r) => r.address)].map(balance)))
    )
    : { ok: false, reason: `the ${chain} payer has no hot wallet` };
  // Deposits minted and due for a sweep: their addresses' balances, each address once.
  const due = await read(async () => {
    const addresses = new Set<string>();
    for (const e of await listSweepsDue(kv, chain, 10_000)) {
      const t = (await reader.transfersOf(e.value.source.txHash))?.find((t) => t.index === e.value.source.index);
      if (!t) throw new Error(`minted deposit ${e.value.source.txHash}:${e.value.source.index} is not on chain now`);
      addresses.add(t.to);
    }
    return addresses;
  });
  const unsweptDeposits: Read<bigint> = due.ok
    ? await read(async () => sum(await Promise.all([...due.value].map((a) => balance(a)))))
    : due;
  // Checked records only: a stored sweep failing its schema makes the two sums below unreadable, named, rather than
  // counted on a guess (docs/reconciliation.md).
  const listed = await listSweeps(kv, chain);
  const sweeps = listed.sweeps;
  const unreadable = () => {
    if (listed.invalid.length > 0) throw new Error(listed.invalid.map((e) => e.message).join("; "));
  };
  // What every other deposit address keeps, unless read above: its balance record (kv/treasury.ts, written by the
  // sweeper when a sweep completes or a mark clears with nothing above the reserve, as a deposit of exactly the
  // reserve does), else its last completed sweep's `leave` (records from before balance records were written).
  const reserves = await read(async () => {
    unreadable();
    const kept = new Map<string, bigint>();
    for (const sweep of sweeps) if (sweep.status === "completed") kept.set(sweep.from.address, BigInt(sweep.leave));
    for (const b of await listAccountBalances(kv, chain)) kept.set(b.address, b.balance);
    if (due.ok) { for (const a of due.value) kept.delete(a); }
    return sum(kept.values());
  });
  // The fees completed sweeps paid; a record from before fees were recorded has it read from the chain once and
  // stored (kv/treasury.ts backfillSweepDelivery), so a run never asks the chain about the same old sweep again.
  const sweepFees = await read(async () => {
    unreadable();
    let fees = 0n;
    for (const sweep of sweeps) {
      if (sweep.status !== "completed") continue;
      if (sweep.fee !== undefined) {
        fees += BigInt(sweep.fee);
        continue;
      }
      const delivered = await deliveredBy({ chains }, sweep);
      if (delivered === null) throw new Error(`completed sweep ${sweep.sweepId} (${sweep.txHash}) is not on chain now`);
      fees += BigInt(sweepDelivery(sweep, delivered).fee);
      await backfillSweepDelivery(kv, chain, sweep.sweepId, delivered);
    }
    // A retired hot wallet's drain is a sweep of the hot wallet: its fee is the operator's too.
    if (!hot.ok) throw new Error(hot.reason);
    return fees + drainFeesOf(hot.value.retired);
  });
  return { chain, parts: { hotWallet, unsweptDeposits, reserves, cold: await cold() }, sweepFees };
}

/** Mismatches of a sum over many records (per asset and chain), not of one record. */
const AGGREGATE_KINDS: ReadonlySet<MismatchKind> = new Set(["transfer_address_differs", "supply_exceeds_controlled"]);

/**
 * Gathers and compares; when something does not add up, does both again and keeps only what fails twice, so a
 * transfer or an order step landing between two reads is not reported as a mismatch.
 */
export async function runReconciliation(opts: Omit<GatherOptions, "now"> & { now: () => Date }) {
  const first = reconcile(await gatherFacts({ ...opts, now: opts.now() }));
  if (first.ok) return first;
  const second = reconcile(await gatherFacts({ ...opts, now: opts.now() }));
  // A sum that does not add up is the same mismatch on both looks whatever records it lists: those (orders in flight,
  // held transfers) move on a busy pipeline, and a lasting difference must not be dropped for it.
  const key = (m: Mismatch) =>
    AGGREGATE_KINDS.has(m.kind)
      ? `${m.kind}|${m.asset}|${m.chain}`
      : `${m.kind}|${m.asset}|${m.chain}|${m.records.join(",")}`;
  const before = new Set(first.mismatches.map(key));
  const stable = second.mismatches.filter((m) => before.has(key(m)));
  if (stable.length === second.mismatches.length) return second;
  // A mismatch seen once only: leave it out, and its chain's or asset's flag follows what is left.
  const left = new Set(stable.map(key));
  const dropped = second.mismatches.filter((m) => !left.has(key(m)));
  const stillBad = (asset: string, chain: string | null) => stable.some((m) => m.asset === asset && m.chain === chain);
  for (const a of second.assets) {
    for (const c of a.chains) {
      if (dropped.some((m) => m.asset === a.asset && m.chain === c.chain)) {
        c.ok = c.unknown.length === 0 && !stillBad(a.asset, c.chain);
      }
    }
    if (dropped.some((m) => m.asset === a.asset && m.chain === null)) {
      a.supply.ok = a.supply.unknown.length === 0 && !stillBad(a.asset, null);
    }
    a.ok = a.supply.ok && a.chains.every((c) => c.ok);
  }
  return { ...second, mismatches: stable, ok: stable.length === 0 && second.unknown.length === 0 };
}
