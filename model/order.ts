/**
 * The Order: its schema, its invariants (what a stored order must satisfy at each step) and its partner-facing view.
 * The order store (kv/orders.ts) and the state machine (actors/transition.ts) both import it, so the store keeps only
 * keys, writes and reads and the model does not live inside it (docs/architecture.md "Layout").
 */
import { z } from "zod";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, type NativeChain, nativeToWei } from "../chains/catalog.ts";
import { ORDER_ERROR_KINDS } from "../messages.ts";
import { type DeadSentTx, DeadSentTxSchema, describeIssues, type SentTx, SentTxSchema } from "./sent_tx.ts";

export const ORDER_TYPES = ["mint", "burn"] as const;
export const ORDER_STATUSES = [
  "pending",
  "processing",
  "minting",
  "burning",
  "completed",
  "failed",
  "cancelled",
] as const;
export type OrderType = typeof ORDER_TYPES[number];
export type OrderStatus = typeof ORDER_STATUSES[number];

const CHAINS = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;
const isNative = (c: string): c is NativeChain => (NATIVE_CHAINS as readonly string[]).includes(c);

const CHAIN = z.enum(CHAINS);
// Smallest units as a canonical decimal string; money never passes through a float. Parsed to bigint where used.
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const decimal = (what: string) => z.string().regex(DECIMAL, `${what} must be a non-negative decimal integer`);
const count = z.int().positive();
const isoTime = z.iso.datetime();

/** The transfer an order was made from (chain, transaction, log or output index), as the watcher saw it. */
export const SourceTransferSchema = z.strictObject({
  chain: CHAIN,
  txHash: z.string().min(1),
  index: z.int().nonnegative(),
  blockNumber: z.int().nonnegative(),
  /** > 0 when the transfer was re-read with other facts after a reorg (see decidePending). */
  revision: count.optional(),
});
export type SourceTransfer = z.infer<typeof SourceTransferSchema>;

// An order's outgoing transactions are sent-transaction records (model/sent_tx.ts), the one schema every purpose
// shares: `Intent` is the order's name for its current one.
export type Intent = SentTx;
export type DeadIntent = DeadSentTx;

/** What a reorg changed in a burn's source transfer (order_actor.ts sourceChange), recorded when the order fails. */
const TransferFacts = z.strictObject({
  from: z.string(),
  to: z.string(),
  amount: decimal("amount"),
  asset: z.string(),
});
export const SourceChangeSchema = z.strictObject({
  old: TransferFacts,
  new: TransferFacts.extend({ blockNumber: z.int().nonnegative(), revision: count }).nullable(),
  /** The record the new facts became: an order, a held transfer, dust, or none (no matching transfer left). */
  newRecord: z.union([z.strictObject({ orderId: z.string() }), z.enum(["held", "dust"]), z.null()]),
});
export type SourceChange = z.infer<typeof SourceChangeSchema>;

/** Pipeline facts every order carries. */
const COMMON_DETAILS = {
  source: SourceTransferSchema,
  /** sha256(chain:tx:index), 32-byte hex: the id a mint carries on chain, and any transfer's identity. */
  depositId: z.string().regex(/^0x[0-9a-f]{64}$/, "depositId must be 32 bytes of lowercase hex"),
  /** The deadline for the source transfer's confirmations. */
  confirmBy: isoTime,
  confirmedAt: isoTime.optional(),
  /** The outgoing transaction of the current attempt (minting, burning, completed). */
  intent: SentTxSchema.optional(),
  /** Attempts that failed on chain (each made the order fail; a retry signed the next). */
  failedIntents: z.array(SentTxSchema).optional(),
  /** Attempts proven never to be mined (txDead), with their proofs. */
  deadIntents: z.array(DeadSentTxSchema).optional(),
  /** Operator retries so far. */
  retries: count.optional(),
  /** The current streak of failed steps; removed by the next step that works. */
  transientErrors: count.optional(),
  /** The last failed step's error, kept after the streak ends as a record of why the order waited. */
  lastTransientError: z.string().optional(),
  /** Why the order waits for a chain this process does not run. */
  heldReason: z.string().optional(),
  cancelReason: z.string().optional(),
  /** Operators' approvals of the order over caps it was held by (actors/controls.ts): not held by those again. */
  capApprovals: z.array(z.strictObject({
    caps: z.array(z.enum(["perOrder", "perDay"])).min(1),
    by: z.string(),
    at: isoTime,
  })).optional(),
  /** The refund (kv/refunds.ts) an operator resolved this held order with: it was cancelled and its coins returned. */
  refundId: z.string().optional(),
};
export const MintDetailsSchema = z.strictObject(COMMON_DETAILS);
export const BurnDetailsSchema = z.strictObject({
  ...COMMON_DETAILS,
  /** The destination tag or memo from the sender's burn configuration when the burn was detected. */
  memo: z.string().nullable(),
  /** What the payout sends, in native smallest units, and the wei too small to pay: set when it is prepared. */
  nativeAmount: decimal("nativeAmount").optional(),
  remainderWei: decimal("remainderWei").optional(),
  sourceChange: SourceChangeSchema.optional(),
});
export type MintDetails = z.infer<typeof MintDetailsSchema>;
export type BurnDetails = z.infer<typeof BurnDetailsSchema>;

const ORDER_FIELDS = {
  // UUIDv7: the index keys end with the id, so key order is creation order.
  id: z.uuid({ version: "v7" }),
  status: z.enum(ORDER_STATUSES),
  sourceChain: CHAIN,
  destinationChain: CHAIN,
  token: z.string(),
  amount: decimal("amount"),
  sourceWallet: z.string(),
  destinationWallet: z.string(),
  workflowId: z.string(),
  transactionHash: z.string().nullable(),
  errorMessage: z.string().nullable(),
  /**
   * Why it failed, as a stable kind (messages.ts ORDER_ERRORS gives its `errorMessage`); decisions read this, never
   * the text. Internal, never served. Absent on orders stored before kinds existed.
   */
  errorKind: z.enum(ORDER_ERROR_KINDS).nullable().optional(),
  createdAt: isoTime,
  updatedAt: isoTime.nullable(),
  /** The partner's lowercase EVM wallet the order belongs to (JWT `sub`); scopes every listing. */
  owner: z.string().regex(/^0x[0-9a-f]{40}$/, "owner must be a lowercase EVM address"),
};

export const OrderSchema = z.discriminatedUnion("type", [
  /** `details`: pipeline-internal facts (deposit identity, recorded transactions, remainders, ...); never served. */
  z.object({ ...ORDER_FIELDS, type: z.literal("mint"), details: MintDetailsSchema }),
  z.object({ ...ORDER_FIELDS, type: z.literal("burn"), details: BurnDetailsSchema }),
]).superRefine((o, ctx) => {
  // A mis-scoped or mis-routed order is a custody bug; refuse to store it rather than show it to the wrong partner.
  const native = o.type === "mint" ? o.sourceChain : o.destinationChain;
  const evm = o.type === "mint" ? o.destinationChain : o.sourceChain;
  const partnerWallet = o.type === "mint" ? o.destinationWallet : o.sourceWallet;
  if (!isNative(native) || isNative(evm)) {
    ctx.addIssue({ code: "custom", path: ["sourceChain"], message: `${o.type} goes the wrong way: ${o.sourceChain}` });
    return;
  }
  const token = o.type === "mint" ? NATIVE[native].token.symbol : NATIVE[native].uAsset.symbol;
  if (o.token !== token) ctx.addIssue({ code: "custom", path: ["token"], message: `expected ${token}` });
  if (o.owner !== partnerWallet.toLowerCase()) {
    ctx.addIssue({ code: "custom", path: ["owner"], message: "owner must be the partner's EVM wallet of the order" });
  }
  if (o.details.source.chain !== o.sourceChain) {
    ctx.addIssue({ code: "custom", path: ["details", "source", "chain"], message: `expected ${o.sourceChain}` });
  }
  for (const issue of stepIssues(o, native)) ctx.addIssue({ code: "custom", ...issue });
});
export type Order = z.infer<typeof OrderSchema>;
export type MintOrder = Extract<Order, { type: "mint" }>;
export type BurnOrder = Extract<Order, { type: "burn" }>;

/**
 * What each step requires of an order (spec section 3 and actors/transition.ts): a recorded transaction exactly while
 * one may be mined or was (minting, burning, completed), on the chain the order pays out on; a burn's payout amounts
 * once prepared, adding up to the burned wei; the outcome fields of the terminal steps.
 */
function stepIssues(o: Order, native: NativeChain): { path: PropertyKey[]; message: string }[] {
  const issues: { path: PropertyKey[]; message: string }[] = [];
  const require = (ok: boolean, path: PropertyKey[], message: string) => ok || issues.push({ path, message });
  const sending = o.status === "minting" || o.status === "burning";
  const intent = o.details.intent;
  if (sending) {
    require(o.status === (o.type === "mint" ? "minting" : "burning"), ["status"], `a ${o.type} is never ${o.status}`);
  }
  if (sending || o.status === "completed") {
    require(intent !== undefined, ["details", "intent"], `required for a ${o.status} order`);
  } else {
    require(intent === undefined, ["details", "intent"], `a ${o.status} order has no current transaction`);
  }
  if (intent) {
    require(intent.chain === o.destinationChain, ["details", "intent", "chain"], `expected ${o.destinationChain}`);
  }
  if (o.type === "burn") {
    const { nativeAmount, remainderWei } = o.details;
    if (sending || o.status === "completed") {
      require(nativeAmount !== undefined, ["details", "nativeAmount"], `required for a ${o.status} burn`);
      require(remainderWei !== undefined, ["details", "remainderWei"], `required for a ${o.status} burn`);
    }
    const parts = nativeAmount !== undefined && remainderWei !== undefined && DECIMAL.test(nativeAmount) &&
      DECIMAL.test(remainderWei) && DECIMAL.test(o.amount);
    if (parts) {
      const sum = nativeToWei(native, BigInt(nativeAmount)) + BigInt(remainderWei);
      require(
        sum === BigInt(o.amount),
        ["details", "nativeAmount"],
        "nativeAmount and remainderWei must add up to amount",
      );
    }
  }
  require(
    (o.status === "completed") === (o.transactionHash !== null) || o.status === "failed",
    ["transactionHash"],
    o.status === "completed" ? "required for a completed order" : `a ${o.status} order has no transactionHash`,
  );
  require(
    (o.status === "failed") === (o.errorMessage !== null),
    ["errorMessage"],
    o.status === "failed" ? "required for a failed order" : `a ${o.status} order has no errorMessage`,
  );
  if (o.status === "cancelled") require(o.details.cancelReason !== undefined, ["details", "cancelReason"], "required");
  return issues;
}

/** An order that does not pass OrderSchema, with each bad field named. */
export class InvalidOrderError extends Error {
  constructor(readonly orderId: string, readonly issues: string) {
    super(`order ${orderId} is invalid: ${issues}`);
    this.name = "InvalidOrderError";
  }
}

const idOf = (candidate: unknown) =>
  candidate !== null && typeof candidate === "object" && "id" in candidate ? String(candidate.id) : "(no id)";

/** Parses `candidate` as an order; the error names every bad field. */
export function parseOrder(candidate: unknown): { ok: true; order: Order } | { ok: false; error: InvalidOrderError } {
  const parsed = OrderSchema.safeParse(candidate);
  if (parsed.success) return { ok: true, order: parsed.data };
  return { ok: false, error: new InvalidOrderError(idOf(candidate), describeIssues(parsed.error)) };
}

/** Parses `candidate` as an order or throws an InvalidOrderError naming the bad fields. */
export function validOrder(candidate: unknown): Order {
  const parsed = parseOrder(candidate);
  if (!parsed.ok) throw parsed.error;
  return parsed.order;
}

/** A change to `details`: a field set to `undefined` is removed. */
export type DetailsPatch = Partial<MintDetails & BurnDetails>;

/**
 * The order with `patch` merged into its details (fields set to undefined removed) and any top-level `fields`
 * replaced, checked against the schema: a change that would leave a field wrong throws, naming it.
 */
export function withDetails(order: Order, patch: DetailsPatch, fields: OrderFieldsPatch = {}): Order {
  return validOrder(mergeDetails(order, patch, fields));
}

/** The top-level fields a step changes. */
export type OrderFieldsPatch = Partial<
  Pick<Order, "status" | "transactionHash" | "errorMessage" | "errorKind" | "updatedAt">
>;

/** `withDetails` without the check: the candidate for `parseOrder`. */
export function mergeDetails(order: Order, patch: DetailsPatch, fields: OrderFieldsPatch = {}) {
  const details: Record<string, unknown> = { ...order.details, ...patch };
  for (const k of Object.keys(details)) if (details[k] === undefined) delete details[k];
  return { ...order, ...fields, details };
}

/** The order as partners see it (spec 2.4): those fields in that order, nothing internal. */
export function toOrderView(o: Order) {
  return {
    id: o.id,
    type: o.type,
    status: o.status,
    sourceChain: o.sourceChain,
    destinationChain: o.destinationChain,
    token: o.token,
    amount: o.amount,
    sourceWallet: o.sourceWallet,
    destinationWallet: o.destinationWallet,
    workflowId: o.workflowId,
    transactionHash: o.transactionHash,
    errorMessage: o.errorMessage,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}
export type OrderView = ReturnType<typeof toOrderView>;

/** How the read side counts a chain's confirmations (from the pipeline's settings, actors/context.ts). */
export interface ConfirmationRule {
  /** `PipelineSettings.confirmations(chain)`: what the pending step requires. */
  required: number;
  /**
   * Final by a flag its adapter reports (live sol `finalized`, xrp `validated`, sui `checkpointed`), not by depth:
   * the depth the watcher saw says nothing about the flag, so such a deposit shows 0 until its order leaves pending.
   */
  flag: boolean;
}

/**
 * The additions a pending order shows (docs/order-reads.md), none: what a partner sees to tell a slow chain from a
 * stuck one.
 */
export interface Confirmations {
  confirmations: number;
  requiredConfirmations: number;
}

/**
 * A pending order's confirmations: the watcher's tip on its source chain (the last block scanned, kv/chain_tips.ts)
 * minus the block its transfer was seen in, plus one, between 0 and the required count (the pending step moves the
 * order on once it counts). 0 while the tip is unknown or below that block (a reorg rewound the watcher) and on a
 * flag-final chain. Null for any other status: the fields are shown only while pending.
 */
export function pendingConfirmations(o: Order, rule: ConfirmationRule, tip: number | undefined): Confirmations | null {
  if (o.status !== "pending") return null;
  const required = rule.required;
  if (rule.flag || tip === undefined) return { confirmations: 0, requiredConfirmations: required };
  const depth = tip - o.details.source.blockNumber + 1;
  return { confirmations: Math.max(0, Math.min(required, depth)), requiredConfirmations: required };
}

// ---- ids ----

let lastMs = 0;
let lastSeq = 0;

/**
 * A UUIDv7 (RFC 9562). The 12-bit rand_a field is a counter within one millisecond (method 1), so ids made by this
 * process are strictly increasing and "newest first" holds even for orders created in the same millisecond.
 */
export function newOrderId(nowMs: number = Date.now()): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  let ms = nowMs;
  let seq: number;
  if (ms > lastMs) {
    seq = ((b[6] << 8) | b[7]) & 0x7ff; // random start, top bit clear to leave room for increments
  } else {
    ms = lastMs;
    seq = lastSeq + 1;
    if (seq > 0xfff) [ms, seq] = [ms + 1, 0];
  }
  [lastMs, lastSeq] = [ms, seq];
  const view = new DataView(b.buffer);
  view.setUint16(0, Math.floor(ms / 2 ** 32));
  view.setUint32(2, ms % 2 ** 32);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f);
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
