/**
 * The stored records of the transactions we send for ourselves rather than for an order: their schemas, checked on
 * every write and every read like the Order's (model/order.ts), so a malformed record is refused before it is
 * committed and a malformed stored one is never acted on by a guess (DESIGN.md invariant 2: a signed transaction is
 * recorded before it is broadcast, and followed from that record). The stores (kv/) key, write and read them; the
 * types come from the schemas, never written twice (README.md "Layout": model/ is what the stores and the actors
 * share).
 */
import { z } from "zod";
import { type AccountChain, EVM_CHAINS, NATIVE_CHAINS, UASSETS, UTXO_CHAINS } from "../chains/catalog.ts";
import { MAX_DEPOSIT_INDEX } from "../chains/derivation.ts";
import { ConsumedSchema, DeathProofSchema, describeIssues, ExpirySchema } from "./order.ts";

// Smallest units as a canonical decimal string (a record stays plain JSON); parsed to bigint where used.
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const decimal = (what: string) => z.string().regex(DECIMAL, `${what} must be a non-negative decimal integer`);
const isoTime = z.iso.datetime();
const nonEmpty = z.string().min(1);
const ACCOUNT_CHAINS = NATIVE_CHAINS.filter((c): c is AccountChain => !(UTXO_CHAINS as readonly string[]).includes(c));

/** A stored record that fails its schema: the key it was read under and every bad field. */
export class InvalidRecordError extends Error {
  constructor(readonly subject: string, readonly issues: string) {
    super(`${subject} is invalid: ${issues}`);
    this.name = "InvalidRecordError";
  }
}

/** Parses `candidate` with `schema`; the error names `subject` (what was written or read) and every bad field. */
export function parseRecord<S extends z.ZodType>(
  schema: S,
  subject: string,
  candidate: unknown,
): { ok: true; value: z.infer<S> } | { ok: false; error: InvalidRecordError } {
  const parsed = schema.safeParse(candidate);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, error: new InvalidRecordError(subject, describeIssues(parsed.error)) };
}

/** `parseRecord` that throws the InvalidRecordError: a write refused before its commit. */
export function validRecord<S extends z.ZodType>(schema: S, subject: string, candidate: unknown): z.infer<S> {
  const parsed = parseRecord(schema, subject, candidate);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

// ---------------------------------------------------------------- sweeps (kv/treasury.ts)

export const SWEEP_STATUSES = ["prepared", "completed", "dead"] as const;
export type SweepStatus = typeof SWEEP_STATUSES[number];

/**
 * The write-ahead record of moving a deposit address's balance to the hot wallet, like an order's intent: recorded
 * (with the address locked and the transaction's reservations) before the transaction is broadcast, then completed
 * when it is final, or proven dead, which releases the address for a new sweep.
 */
export const SweepSchema = z.strictObject({
  sweepId: nonEmpty,
  chain: z.enum(ACCOUNT_CHAINS as [AccountChain, ...AccountChain[]]),
  from: z.strictObject({ address: nonEmpty, derivationIndex: z.int().min(0).max(MAX_DEPOSIT_INDEX) }),
  to: nonEmpty,
  /**
   * What leaves the address (the fee included: a live adapter takes its fee out of it), and what the address keeps
   * (its reserve).
   */
  amount: decimal("amount"),
  leave: decimal("leave"),
  /**
   * Set when completed: what the hot wallet received, as the chain reports the transaction, and the fee the sweep paid
   * (`amount` less `delivered`), a cost the operator bears (docs/reconciliation.md). Absent on records completed
   * before these were recorded: reconciliation derives them from the chain and stores them.
   */
  delivered: decimal("delivered").optional(),
  fee: decimal("fee").optional(),
  txHash: nonEmpty,
  raw: z.string(),
  preparedAt: isoTime,
  expiry: ExpirySchema.optional(),
  consumes: ConsumedSchema.optional(),
  status: z.enum(SWEEP_STATUSES),
  completedAt: isoTime.optional(),
  blockNumber: z.int().min(0).optional(),
  proof: DeathProofSchema.optional(),
  detail: z.string().optional(),
  deadAt: isoTime.optional(),
}).superRefine((s, ctx) => {
  // What each status was written with (kv/treasury.ts completeSweep, sweepDead): a settled record without its facts
  // would be driven or counted on a guess.
  const require = (ok: boolean, path: string, message: string) =>
    ok || ctx.addIssue({ code: "custom", path: [path], message });
  require(s.to !== s.from.address, "to", "a sweep must move funds to another address");
  // Guarded: a refinement may run beside other fields' issues, and a malformed amount is named by its regex already.
  require(!DECIMAL.test(s.amount) || BigInt(s.amount) > 0n, "amount", "must be positive");
  if (s.status === "completed") {
    require(s.completedAt !== undefined, "completedAt", "required for a completed sweep");
    require(s.blockNumber !== undefined, "blockNumber", "required for a completed sweep");
  }
  if (s.status === "dead") {
    require(s.proof !== undefined, "proof", "required for a dead sweep");
    require(s.detail !== undefined, "detail", "required for a dead sweep");
    require(s.deadAt !== undefined, "deadAt", "required for a dead sweep");
  }
  require((s.delivered === undefined) === (s.fee === undefined), "fee", "recorded with delivered, or neither");
});
export type Sweep = z.infer<typeof SweepSchema>;

// ---------------------------------------------------------------- consolidations (kv/consolidations.ts)

export const CONSOLIDATION_STATUSES = ["prepared", "completed", "dead"] as const;
export type ConsolidationStatus = typeof CONSOLIDATION_STATUSES[number];

const derivationIndex = z.int().min(0).max(MAX_DEPOSIT_INDEX);

/** A coin a consolidation spends, as recorded with it (what it held, and the key that signs its input). */
export const ConsolidationInputSchema = z.strictObject({
  txHash: nonEmpty,
  index: z.int().min(0),
  amount: decimal("amount"),
  address: nonEmpty,
  derivationIndex,
  height: z.int().min(0),
});
export type ConsolidationInput = z.infer<typeof ConsolidationInputSchema>;

/**
 * The write-ahead record of merging a UTXO treasury's small coins into one output at our change address (DESIGN.md
 * invariant 2): recorded with its coins' reservation before it is broadcast, then completed (its inputs spent, its
 * output a treasury coin) or proven dead (its coins released), exactly once.
 */
export const ConsolidationSchema = z.strictObject({
  id: nonEmpty,
  chain: z.enum(UTXO_CHAINS),
  status: z.enum(CONSOLIDATION_STATUSES),
  /** The operator who started it, and when it was recorded (before its broadcast). */
  by: z.string(),
  preparedAt: isoTime,
  txHash: nonEmpty,
  raw: z.string(),
  expiry: ExpirySchema.optional(),
  inputs: z.array(ConsolidationInputSchema).min(1),
  /** The merged output: output `index` of the transaction, at our change address, signed by its change key. */
  output: z.strictObject({ index: z.int().min(0), address: nonEmpty, derivationIndex, amount: decimal("amount") }),
  /** What the inputs hold beyond the output. */
  fee: decimal("fee"),
  completedAt: isoTime.optional(),
  blockNumber: z.int().min(0).optional(),
  proof: DeathProofSchema.optional(),
  detail: z.string().optional(),
  deadAt: isoTime.optional(),
}).superRefine((c, ctx) => {
  // What each status was written with (kv/consolidations.ts completeConsolidation, consolidationDead).
  const require = (ok: boolean, path: string, message: string) =>
    ok || ctx.addIssue({ code: "custom", path: [path], message });
  if (c.status === "completed") {
    require(c.completedAt !== undefined, "completedAt", "required for a completed consolidation");
    require(c.blockNumber !== undefined, "blockNumber", "required for a completed consolidation");
  }
  if (c.status === "dead") {
    require(c.proof !== undefined, "proof", "required for a dead consolidation");
    require(c.detail !== undefined, "detail", "required for a dead consolidation");
    require(c.deadAt !== undefined, "deadAt", "required for a dead consolidation");
  }
});
export type Consolidation = z.infer<typeof ConsolidationSchema>;

// ---------------------------------------------------------------- on-chain burn batches (kv/onchain_burns.ts)

/** One signed burn transaction of a batch, recorded before it is sent (docs/onchain-burn.md). */
export const BurnAttemptSchema = z.strictObject({
  txHash: nonEmpty,
  raw: z.string(),
  expiry: ExpirySchema.optional(),
  consumes: ConsumedSchema.optional(),
  preparedAt: isoTime,
  /** Set when the chain proved it can never be mined (or it failed, finally): the next attempt is signed then. */
  dead: z.strictObject({ proof: DeathProofSchema, detail: z.string(), at: isoTime }).optional(),
});
export type BurnAttempt = z.infer<typeof BurnAttemptSchema>;

/**
 * A batch of completed burn orders' uAssets burned from the transfer address in one transaction, write-ahead and
 * exactly once (docs/onchain-burn.md): every attempt after the first is signed only after the previous one is dead.
 */
export const BurnBatchSchema = z.strictObject({
  id: nonEmpty,
  chain: z.enum(EVM_CHAINS),
  asset: z.enum(UASSETS),
  orders: z.array(z.strictObject({ orderId: nonEmpty, amountWei: decimal("amountWei") })).min(1),
  /** The sum of the orders' amounts: what each attempt burns. */
  totalWei: decimal("totalWei"),
  status: z.enum(["open", "burned"]),
  /** Oldest first, the last few at most (kv/onchain_burns.ts MAX_KEPT_BURN_ATTEMPTS); every one but the last dead. */
  attempts: z.array(BurnAttemptSchema).min(1),
  /** Dead attempts dropped from `attempts` (the oldest). Absent until the first is dropped. */
  droppedAttempts: z.int().positive().optional(),
  createdAt: isoTime,
  /** Set when burned: the transaction that is on chain (a fee-bumped replacement's hash when that one was mined). */
  burnedTxHash: nonEmpty.optional(),
  blockNumber: z.int().min(0).optional(),
  burnedAt: isoTime.optional(),
}).superRefine((b, ctx) => {
  // What recordBurnBatch, recordBurnAttempt and markBurned write: a batch that breaks these would burn another total
  // than its orders redeemed, or be followed through an attempt that is not its live one.
  const require = (ok: boolean, path: PropertyKey[], message: string) =>
    ok || ctx.addIssue({ code: "custom", path, message });
  if (DECIMAL.test(b.totalWei) && b.orders.every((o) => DECIMAL.test(o.amountWei))) {
    const sum = b.orders.reduce((s, o) => s + BigInt(o.amountWei), 0n);
    require(sum === BigInt(b.totalWei), ["totalWei"], `must be the sum of the orders' amounts, ${sum}`);
  }
  b.attempts.slice(0, -1).forEach((a, i) =>
    require(a.dead !== undefined, ["attempts", i, "dead"], "every attempt but the last is dead")
  );
  if (b.status === "burned") {
    require(b.burnedTxHash !== undefined, ["burnedTxHash"], "required for a burned batch");
    require(b.blockNumber !== undefined, ["blockNumber"], "required for a burned batch");
    require(b.burnedAt !== undefined, ["burnedAt"], "required for a burned batch");
  }
});
export type BurnBatch = z.infer<typeof BurnBatchSchema>;
