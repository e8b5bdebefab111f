/**
 * The one record of a transaction we sign and send, whatever it is for: an order's mint or payout, a refund, a sweep,
 * a consolidation, an on-chain burn batch (docs/architecture.md invariant 2: recorded with what it consumes before it
 * is broadcast, re-sent as the same bytes, replaced only once the chain proves it dead). `SentTxSchema` is its schema,
 * written once here; every purpose's record carries exactly these fields (an order and a refund under `intent`, a
 * sweep and a consolidation at their top level, a burn batch per attempt) and the one driver (actors/sent_tx.ts) reads
 * only them. A dead one keeps its proof (`DeadSentTxSchema`). Every record here is checked on every write and every
 * read, like the Order's (model/order.ts), so a malformed record is refused before it is committed and a malformed
 * stored one is never acted on by a guess. The stores (kv/) key, write and read them; the types come from the
 * schemas, never written twice (docs/architecture.md "Layout": model/ is what the stores and the actors share).
 */
import { z } from "zod";
import { type AccountChain, EVM_CHAINS, NATIVE_CHAINS, UASSETS, UTXO_CHAINS } from "../chains/catalog.ts";
import type { Consumed, DeathProof, Expiry, PreparedTx } from "../chains/adapter.ts";
import { MAX_DEPOSIT_INDEX } from "../chains/derivation.ts";

// Smallest units as a canonical decimal string (a record stays plain JSON); parsed to bigint where used.
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const decimal = (what: string) => z.string().regex(DECIMAL, `${what} must be a non-negative decimal integer`);
const isoTime = z.iso.datetime();
const nonEmpty = z.string().min(1);
const ACCOUNT_CHAINS = NATIVE_CHAINS.filter((c): c is AccountChain => !(UTXO_CHAINS as readonly string[]).includes(c));
const ALL_CHAINS = [...NATIVE_CHAINS, ...EVM_CHAINS] as const;

/** `error`'s issues, one per field: `details.intent: required for a minting order; token: expected uSOL`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || "(order)"}: ${i.message}`).join("; ");
}

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

// ---------------------------------------------------------------- the sent transaction

// The adapter contract's plain-data types (chains/adapter.ts), as stored. The `satisfies` checks below keep the two
// definitions from drifting apart.
export const ExpirySchema = z.strictObject({
  kind: z.enum(["height", "ledger", "epoch"]),
  value: z.number().int().min(0),
});
const OutpointSchema = z.strictObject({ txHash: z.string().min(1), index: z.number().int().min(0) });
export const ConsumedSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("outpoints"),
    outpoints: z.array(OutpointSchema).min(1),
    // The lowest block of the coins (chains/adapter.ts): a live UTXO payer sets it, the sim's does not.
    since: z.number().int().min(0).optional(),
  }),
  z.strictObject({ kind: z.literal("nonce"), account: z.string().min(1), nonce: z.number().int().min(0) }),
]);
export const DeathProofSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("expired"), expiry: ExpirySchema, reached: z.number().int().min(0) }),
  z.strictObject({ kind: z.literal("conflict"), consumed: ConsumedSchema, spentBy: z.string().nullable() }),
  z.strictObject({ kind: z.literal("failed"), blockNumber: z.number().int().min(0), reason: z.string() }),
]);
const _expiry = null as unknown as z.infer<typeof ExpirySchema> satisfies Expiry;
const _consumed = null as unknown as z.infer<typeof ConsumedSchema> satisfies Consumed;
const _proof = null as unknown as z.infer<typeof DeathProofSchema> satisfies DeathProof;

/** The output of one of our transactions paying us back (chains/adapter.ts `ChangeOutput`): a coin once final. */
export const ChangeSchema = z.strictObject({
  index: z.int().nonnegative(),
  address: nonEmpty,
  amount: decimal("amount"),
  /** The change key's index that receives it; absent: 0 (written before change rotations, or index 0). */
  derivationIndex: z.int().min(0).max(MAX_DEPOSIT_INDEX).optional(),
});

/**
 * The fields of a sent transaction, as every purpose's record carries them. What it reserves is not stored twice: a
 * coin lock and an XRPL Sequence lock follow from `consumes`, an EVM nonce was spent by the counter when it was
 * recorded, and a hot-wallet hold is keyed by `chain` and `txHash` (kv/chain_state.ts, kv/hot_wallet.ts).
 */
export const SENT_TX_FIELDS = {
  chain: z.enum(ALL_CHAINS),
  txHash: nonEmpty,
  /** The bytes `broadcast` sends; "" for a mint adopted from chain (the contract had minted the deposit already). */
  raw: z.string(),
  preparedAt: isoTime,
  /** Past this it can never be included (chains/adapter.ts `Expiry`). */
  expiry: ExpirySchema.optional(),
  /** The coins, nonce or sequence it uses up (chains/adapter.ts `Consumed`). */
  consumes: ConsumedSchema.optional(),
  /** UTXO chains: its change output back to us, a treasury coin once final. */
  change: ChangeSchema.optional(),
  /**
   * What it pays in fee, where known when it was signed (UTXO chains: its coins less its outputs): spent by the
   * operator once it is final, which reconciliation counts (docs/reconciliation.md). Absent on records written before.
   */
  fee: decimal("fee").optional(),
};

/** Set on a sent transaction the chain proved can never be mined (or that failed, finally): why another was signed. */
export const DEATH_FIELDS = {
  /** The adapter's proof as data (chains/adapter.ts `DeathProof`), and the same in words. */
  proof: DeathProofSchema,
  detail: nonEmpty,
  deadAt: isoTime,
};

/** A signed transaction of ours, recorded before it is broadcast. */
export const SentTxSchema = z.strictObject(SENT_TX_FIELDS);
export type SentTx = z.infer<typeof SentTxSchema>;

/** A sent transaction proven dead, kept for ever with its proof. */
export const DeadSentTxSchema = z.strictObject({ ...SENT_TX_FIELDS, ...DEATH_FIELDS });
export type DeadSentTx = z.infer<typeof DeadSentTxSchema>;

/** The record of `prepared`, signed for `chain` at `at` (write-ahead: stored before it is broadcast). */
export function sentTxOf(chain: SentTx["chain"], prepared: PreparedTx, at: Date): SentTx {
  const tx: SentTx = { chain, txHash: prepared.txHash, raw: prepared.raw, preparedAt: at.toISOString() };
  if (prepared.expiry) tx.expiry = prepared.expiry;
  if (prepared.consumes) tx.consumes = prepared.consumes;
  if (prepared.change) tx.change = { ...prepared.change, amount: prepared.change.amount.toString() };
  if (prepared.fee !== undefined) tx.fee = prepared.fee.toString();
  return tx;
}

/** The sent-transaction fields of a purpose's record (a sweep, a consolidation, a burn attempt), and nothing else. */
export function sentTxIn(record: SentTx): SentTx {
  const tx: SentTx = { chain: record.chain, txHash: record.txHash, raw: record.raw, preparedAt: record.preparedAt };
  if (record.expiry) tx.expiry = record.expiry;
  if (record.consumes) tx.consumes = record.consumes;
  if (record.change) tx.change = record.change;
  if (record.fee !== undefined) tx.fee = record.fee;
  return tx;
}

/** `tx` proven dead with `proof`. */
export function deadSentTx(tx: SentTx, dead: { proof: DeathProof; detail: string; at: Date }): DeadSentTx {
  return { ...sentTxIn(tx), proof: dead.proof, detail: dead.detail, deadAt: dead.at.toISOString() };
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
  ...SENT_TX_FIELDS,
  chain: z.enum(ACCOUNT_CHAINS as [AccountChain, ...AccountChain[]]),
  sweepId: nonEmpty,
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
  status: z.enum(SWEEP_STATUSES),
  completedAt: isoTime.optional(),
  blockNumber: z.int().min(0).optional(),
  ...optionalDeath(),
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
 * The write-ahead record of merging a UTXO treasury's small coins into one output at our change address
 * (docs/architecture.md invariant 2): recorded with its coins' reservation before it is broadcast, then completed (its
 * inputs spent, its output a treasury coin) or proven dead (its coins released), exactly once.
 */
const ConsolidationRecordSchema = z.strictObject({
  ...SENT_TX_FIELDS,
  chain: z.enum(UTXO_CHAINS),
  /** Its inputs' outpoints, and the lowest block among them (chains/adapter.ts `Consumed`): what proves it dead. */
  consumes: ConsumedSchema,
  id: nonEmpty,
  status: z.enum(CONSOLIDATION_STATUSES),
  /** The operator who started it, and when it was recorded (before its broadcast). */
  by: z.string(),
  inputs: z.array(ConsolidationInputSchema).min(1),
  /** The merged output: output `index` of the transaction, at our change address, signed by its change key. */
  output: z.strictObject({ index: z.int().min(0), address: nonEmpty, derivationIndex, amount: decimal("amount") }),
  /** What the inputs hold beyond the output. */
  fee: decimal("fee"),
  completedAt: isoTime.optional(),
  blockNumber: z.int().min(0).optional(),
  ...optionalDeath(),
}).superRefine((c, ctx) => {
  // What each status was written with (kv/consolidations.ts completeConsolidation, consolidationDead).
  const spent = c.consumes.kind === "outpoints" ? c.consumes.outpoints : [];
  const same = spent.length === c.inputs.length &&
    c.inputs.every((i, n) => spent[n].txHash === i.txHash && spent[n].index === i.index);
  if (!same) ctx.addIssue({ code: "custom", path: ["consumes"], message: "must be the outpoints of its inputs" });
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

/**
 * Records written before consolidations carried `consumes` (it was derived from `inputs` when followed) are read as
 * if written today: the same outpoints, and the lowest input height as `since`, which is what was derived.
 */
export const ConsolidationSchema = z.preprocess((stored) => {
  if (!isObject(stored) || "consumes" in stored || !Array.isArray(stored.inputs)) return stored;
  const inputs = stored.inputs.filter(isObject);
  const heights = inputs.map((i) => i.height).filter((h): h is number => typeof h === "number");
  const consumes = {
    kind: "outpoints",
    outpoints: inputs.map((i) => ({ txHash: i.txHash, index: i.index })),
    ...(heights.length > 0 ? { since: Math.min(...heights) } : {}),
  };
  return { ...stored, consumes };
}, ConsolidationRecordSchema);
export type Consolidation = z.infer<typeof ConsolidationRecordSchema>;

// ---------------------------------------------------------------- on-chain burn batches (kv/onchain_burns.ts)

/**
 * One signed burn transaction of a batch, recorded before it is sent (docs/onchain-burn.md): a sent transaction, with
 * its proof once the chain proved it can never be mined (or it failed, finally): the next attempt is signed then.
 */
export const BurnAttemptSchema = z.strictObject({ ...SENT_TX_FIELDS, chain: z.enum(EVM_CHAINS), ...optionalDeath() })
  .superRefine(deathComplete);
export type BurnAttempt = z.infer<typeof BurnAttemptSchema>;

/**
 * A batch of completed burn orders' uAssets burned from the transfer address in one transaction, write-ahead and
 * exactly once (docs/onchain-burn.md): every attempt after the first is signed only after the previous one is dead.
 */
const BurnBatchRecordSchema = z.strictObject({
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
  b.attempts.forEach((a, i) =>
    require(a.chain === b.chain, ["attempts", i, "chain"], `must be the batch's chain, ${b.chain}`)
  );
  b.attempts.slice(0, -1).forEach((a, i) =>
    require(a.proof !== undefined, ["attempts", i, "proof"], "every attempt but the last is dead")
  );
  if (b.status === "burned") {
    require(b.burnedTxHash !== undefined, ["burnedTxHash"], "required for a burned batch");
    require(b.blockNumber !== undefined, ["blockNumber"], "required for a burned batch");
    require(b.burnedAt !== undefined, ["burnedAt"], "required for a burned batch");
  }
});

/**
 * Batches written before their attempts were sent-transaction records are read as if written today: each attempt
 * gets the batch's chain, and its `dead: { proof, detail, at }` becomes the proof fields every dead sent transaction
 * carries.
 */
export const BurnBatchSchema = z.preprocess((stored) => {
  if (!isObject(stored) || !Array.isArray(stored.attempts)) return stored;
  const attempts = stored.attempts.map((a) => {
    if (!isObject(a)) return a;
    const { dead, ...rest } = a;
    const migrated: Record<string, unknown> = { chain: stored.chain, ...rest };
    if (isObject(dead)) Object.assign(migrated, { proof: dead.proof, detail: dead.detail, deadAt: dead.at });
    return migrated;
  });
  return { ...stored, attempts };
}, BurnBatchRecordSchema);
export type BurnBatch = z.infer<typeof BurnBatchRecordSchema>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The proof fields, optional: a record still in flight has none, a dead one all three (`deathComplete`). */
function optionalDeath() {
  return {
    proof: DEATH_FIELDS.proof.optional(),
    detail: DEATH_FIELDS.detail.optional(),
    deadAt: DEATH_FIELDS.deadAt.optional(),
  };
}

/** A record with any of the proof fields has all of them. */
function deathComplete(r: { proof?: unknown; detail?: unknown; deadAt?: unknown }, ctx: z.RefinementCtx): void {
  const set = [r.proof, r.detail, r.deadAt].filter((v) => v !== undefined).length;
  if (set !== 0 && set !== 3) {
    ctx.addIssue({ code: "custom", path: ["proof"], message: "proof, detail and deadAt are recorded together" });
  }
}
