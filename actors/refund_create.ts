/**
 * Creating a refund of a held record (docs/refunds.md): the operator's use case, above the stores it writes through.
 * It checks the held record, the destination and the source on chain, then writes in ONE atomic the held record's
 * removal (or the held order's cancellation through the state machine), the refund and its audit entry.
 */
import { parseHeldId } from "../kv/held_ids.ts";
import { destinationAddressError, isEvmAddress } from "../chains/addresses.ts";
import {
  chainFamily,
  type ChainSymbol,
  isEvmChain,
  isNativeChain,
  NATIVE,
  type NativeChain,
  nativeChainOfUAsset,
  type UAsset,
  type UtxoChain,
} from "../chains/catalog.ts";
import type { UtxoNetworkName } from "../chains/utxo/network.ts";
import { appendAudit, type AuditEntry } from "../kv/audit.ts";
import { findDepositAddress } from "../kv/mint_wallets.ts";
import { addCoinRecord, addSweepDue, type Coin, coinKey, spentCoinKey } from "../kv/treasury.ts";
import { addOrderUpdate, getOrder } from "../kv/orders.ts";
import { type Order, withDetails } from "../model/order.ts";
import {
  addReschedule,
  deleteHeldTransfer,
  dueAtKey,
  heldKey,
  type HeldTransfer,
  type OrderHold,
  orderHoldKey,
} from "../kv/pipeline.ts";
import { type Refund, refundDueKey, refundKey, validRefund } from "../kv/refunds.ts";
import { transition } from "./transition.ts";

/** A refusal: nothing was changed (actors/ops/refunds.ts maps it onto OpError). */
export class RefundRefusal extends Error {
  constructor(readonly status: 400 | 404 | 409, message: string) {
    super(message);
    this.name = "RefundRefusal";
  }
}

/** What a held record would refund, before any destination is chosen. */
interface RefundPlan {
  kind: "native" | "uasset";
  chain: ChainSymbol;
  asset: string;
  amount: bigint;
  /** The sender as recorded, or null when none is known (a coinbase, an unknown sender). */
  sender: string | null;
}

/** The sender the watcher records for a coinbase output (actors/watcher.ts COINBASE_SENDER). */
const COINBASE_SENDER = "coinbase";

/** Senders the watcher records when a transfer has none it can name (actors/watcher.ts). */
const NO_SENDER = new Set(["unknown", "coinbase", ""]);

function planOfTransfer(h: HeldTransfer): RefundPlan {
  const sender = NO_SENDER.has(h.from) ? null : h.from;
  if (h.asset === "native") {
    if (!isNativeChain(h.chain)) throw new RefundRefusal(409, `held native transfer on ${h.chain}: not a native chain`);
    return { kind: "native", chain: h.chain, asset: NATIVE[h.chain].token.symbol, amount: BigInt(h.amount), sender };
  }
  if (!isEvmChain(h.chain) || !nativeChainOfUAsset(h.asset)) {
    throw new RefundRefusal(409, `held transfer of ${h.asset} on ${h.chain}: not a known uAsset on an EVM chain`);
  }
  return { kind: "uasset", chain: h.chain, asset: h.asset, amount: BigInt(h.amount), sender };
}

function planOfOrder(order: Order): RefundPlan {
  const amount = BigInt(order.amount);
  if (order.type === "mint") {
    const chain = order.sourceChain as NativeChain;
    return { kind: "native", chain, asset: NATIVE[chain].token.symbol, amount, sender: order.sourceWallet };
  }
  return { kind: "uasset", chain: order.sourceChain, asset: order.token as UAsset, amount, sender: order.sourceWallet };
}

/** Null when `to` is a valid refund destination for `plan`, else why not. */
export function refundDestinationError(
  plan: Pick<RefundPlan, "kind" | "chain">,
  to: string,
  network: (chain: NativeChain) => UtxoNetworkName,
): string | null {
  if (plan.kind === "uasset") return isEvmAddress(to) ? null : `${to} is not an EVM address (0x and 40 hex digits)`;
  const chain = plan.chain as NativeChain;
  const err = destinationAddressError(chain, to, network(chain));
  return err === null ? null : `${to}: ${err}`;
}

const ZERO_EVM = "0x0000000000000000000000000000000000000000";

/**
 * Null unless `to` is an address of ours (or nobody's) that a refund must never go to: one of our deposit addresses
 * (the watcher would take the refund for that owner's deposit and mint it: refunded AND minted), the transfer address
 * (a uAsset refund to itself: "sent back" while still held) or the zero address.
 */
async function ownAddressError(
  kv: Deno.Kv,
  plan: Pick<RefundPlan, "kind" | "chain">,
  to: string,
  transferAddress: string | undefined,
): Promise<string | null> {
  if (plan.kind === "uasset") {
    const lower = to.toLowerCase();
    if (lower === ZERO_EVM) return `${to} is the zero address`;
    if (transferAddress !== undefined && lower === transferAddress.toLowerCase()) {
      return `${to} is the transfer address itself`;
    }
    return null;
  }
  const chain = plan.chain as NativeChain;
  // Exactly as given, and lowercased (a bech32 address in upper case is the same script as the watcher's lowercase).
  for (const a of new Set([to, to.toLowerCase()])) {
    if (await findDepositAddress(kv, chain, a)) {
      return `${to} is one of our deposit addresses (a refund sent there would be credited as a deposit)`;
    }
  }
  return null;
}

/**
 * Whether `to`, the recipient of a held record's transfer on chain, is ours: the transfer address for uAssets, one of
 * our deposit addresses for native coins.
 */
export async function paysUs(
  kv: Deno.Kv,
  source: Pick<RecordedSource, "chain" | "asset">,
  to: string,
  transferAddress: string,
): Promise<boolean> {
  if (source.asset !== "native") return to.toLowerCase() === transferAddress.toLowerCase();
  if (!isNativeChain(source.chain)) return false;
  return (await findDepositAddress(kv, source.chain, to)) !== null;
}

/** The treasury coin of a held UTXO output paying one of our deposit addresses (a coinbase one is never selected). */
async function heldCoinOf(kv: Deno.Kv, chain: UtxoChain, h: HeldTransfer): Promise<Coin> {
  const owner = h.to ? await findDepositAddress(kv, chain, h.to) : null;
  if (!owner) {
    throw new RefundRefusal(409, `held output ${h.txHash}:${h.index} does not pay one of our deposit addresses`);
  }
  return {
    chain,
    outpoint: { txHash: h.txHash, index: h.index },
    address: h.to!,
    derivationIndex: owner.derivationIndex,
    amount: BigInt(h.amount),
    height: h.blockNumber,
    coinbase: h.from === COINBASE_SENDER,
  };
}

/** The transfer a held record was made from, as recorded: checked on chain before anything is refunded. */
export interface RecordedSource {
  chain: ChainSymbol;
  txHash: string;
  index: number;
  from: string;
  asset: "native" | UAsset;
  amount: string;
}

export interface CreateRefundInput {
  heldId: string;
  to?: string;
  by: string;
  now: Date;
  utxoNetwork: (chain: NativeChain) => UtxoNetworkName;
  /** The uAsset transfer address: never a uAsset refund's destination. */
  transferAddress?: string;
  /**
   * Asked before the refund is written: null when `source` is on chain, final, with the recorded facts; else why not
   * (a 409: a transfer a reorg took away or changed is never refunded from our funds).
   */
  verifySource?: (source: RecordedSource) => Promise<string | null>;
}

function newRefundId(now: Date): string {
  const rand = crypto.getRandomValues(new Uint8Array(8));
  return `rf_${now.getTime().toString(36)}_${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Resolves a held record by refund in ONE atomic: the held record is checked unchanged and removed (a held order is
 * cancelled through `transition`'s `cancel`, its events included), the refund and its due key are written, and the
 * audit entry appended. Throws `RefundRefusal` (nothing changed) for an unknown id (404), a malformed id or a bad
 * destination (400), an order that is not confirmed or has a recorded transaction (409).
 */
export async function createRefund(
  kv: Deno.Kv,
  input: CreateRefundInput,
): Promise<{ refund: Refund; audit: AuditEntry; order?: Order }> {
  const ref = parseHeldId(input.heldId);
  if (!ref) {
    throw new RefundRefusal(
      400,
      `${input.heldId} is not a held record id (order:<orderId> or transfer:<chain>:<txHash>:<index>[:<revision>])`,
    );
  }
  for (let attempt = 0; attempt < 10; attempt++) {
    const atomic = kv.atomic();
    let plan: RefundPlan;
    let before: unknown;
    let cancelled: Order | undefined;
    let source: RecordedSource;
    let heldTransfer: HeldTransfer | undefined;
    const id = newRefundId(input.now);
    if (ref.kind === "transfer") {
      const held = await kv.get<HeldTransfer>(heldKey(ref.chain, ref.txHash, ref.index, ref.revision), {
        consistency: "strong",
      });
      if (held.value === null) throw new RefundRefusal(404, `no held record ${input.heldId}`);
      plan = planOfTransfer(held.value);
      heldTransfer = held.value;
      before = held.value;
      source = { ...held.value };
      deleteHeldTransfer(atomic, held as Deno.KvEntry<HeldTransfer>);
    } else {
      const [hold, entry, due] = await Promise.all([
        kv.get<OrderHold>(orderHoldKey(ref.orderId), { consistency: "strong" }),
        getOrder(kv, ref.orderId),
        kv.get<number>(dueAtKey(ref.orderId), { consistency: "strong" }),
      ]);
      if (hold.value === null) throw new RefundRefusal(404, `no held record ${input.heldId}`);
      if (entry.versionstamp === null) throw new RefundRefusal(404, `held order ${ref.orderId} does not exist`);
      if (entry.invalid) {
        throw new RefundRefusal(409, `order ${ref.orderId} fails its schema: ${entry.invalid.message}`);
      }
      const order = entry.value;
      const recorded = order.details.intent?.txHash ?? order.transactionHash ??
        order.details.deadIntents?.[0]?.txHash ?? order.details.failedIntents?.[0]?.txHash;
      if (recorded) {
        throw new RefundRefusal(
          409,
          `order ${order.id} has a recorded transaction ${recorded}: only an order that never recorded one may be ` +
            "refunded; nothing was changed",
        );
      }
      if (order.status !== "processing") {
        throw new RefundRefusal(
          409,
          `order ${order.id} is ${order.status}: only a confirmed order (processing) that moved no value may be refunded`,
        );
      }
      plan = planOfOrder(order);
      const src = order.details.source;
      source = {
        chain: src.chain,
        txHash: src.txHash,
        index: src.index,
        from: order.sourceWallet,
        asset: order.type === "mint" ? "native" : order.token as UAsset,
        amount: order.amount,
      };
      const result = transition(order, { type: "cancel", reason: "refunded by operator" }, input.now);
      if (!result.ok) throw new RefundRefusal(409, result.error);
      cancelled = withDetails(result.order, { refundId: id, heldReason: undefined });
      before = { hold: hold.value, status: order.status };
      atomic.check(hold).delete(hold.key);
      addOrderUpdate(atomic, entry, cancelled);
      addReschedule(atomic, order.id, due, null);
    }
    const to = input.to ?? plan.sender;
    if (to === null) {
      throw new RefundRefusal(400, `${input.heldId} has no recorded sender: give the destination with --to`);
    }
    const bad = refundDestinationError(plan, to, input.utxoNetwork);
    if (bad !== null) {
      const hint = input.to === undefined ? " (the recorded sender); give the destination with --to" : "";
      throw new RefundRefusal(400, `invalid refund destination on ${plan.chain}: ${bad}${hint}`);
    }
    const ours = await ownAddressError(kv, plan, to, input.transferAddress);
    if (ours !== null) {
      const hint = input.to === undefined ? " (the recorded sender); give the destination with --to" : "";
      throw new RefundRefusal(400, `invalid refund destination on ${plan.chain}: ${ours}${hint}; nothing was changed`);
    }
    if (plan.amount <= 0n) throw new RefundRefusal(409, `${input.heldId} holds nothing to refund`);
    const off = await input.verifySource?.(source);
    if (off) throw new RefundRefusal(409, `${input.heldId} is not refunded: ${off}; nothing was changed`);
    const family = plan.kind === "native" ? chainFamily(plan.chain) : null;
    if (heldTransfer && family?.family === "utxo") {
      // A held UTXO output is ours but was never a treasury coin (only a confirmed mint adds its deposit): it becomes
      // one now, so the refund is funded by what the sender sent, not by the coins that back minted uAssets.
      const coin = await heldCoinOf(kv, family.chain, heldTransfer);
      atomic.check({ key: coinKey(coin.chain, coin.outpoint), versionstamp: null })
        .check({ key: spentCoinKey(coin.chain, coin.outpoint), versionstamp: null });
      addCoinRecord(atomic, coin);
    }
    if (family?.family === "account") {
      // The hot wallet pays the refund; the deposit it replaces, never swept (no mint completed), would stay on its
      // deposit address off the books: due for a sweep into the hot wallet (actors/sweeper.ts), under the refund's id.
      addSweepDue(atomic, family.chain, id, { txHash: source.txHash, index: source.index });
    }
    const at = input.now.toISOString();
    const refund: Refund = {
      id,
      heldId: input.heldId,
      kind: plan.kind,
      chain: plan.chain,
      asset: plan.asset,
      to,
      amount: plan.amount.toString(),
      createdBy: input.by,
      createdAt: at,
      status: "pending",
      attempts: [],
      updatedAt: at,
    };
    atomic.check({ key: refundKey(id), versionstamp: null }).set(refundKey(id), validRefund(refund));
    atomic.set(refundDueKey(id), input.now.getTime());
    const audit = appendAudit(atomic, {
      by: input.by,
      action: "held.refund",
      subject: input.heldId,
      before,
      after: { refundId: id, kind: refund.kind, chain: refund.chain, asset: refund.asset, to, amount: refund.amount },
    }, input.now);
    if ((await atomic.commit()).ok) return { refund, audit, ...(cancelled ? { order: cancelled } : {}) };
  }
  throw new RefundRefusal(409, `${input.heldId} kept changing; try again`);
}

/** The chains refunds can be on, for schemas. */
