/**
 * Consolidations of a UTXO treasury (doge, zec): one transaction merging many small coins into one output at our
 * change address (`deno task admin utxo consolidate`). Write-ahead like a payout (docs/architecture.md invariant 2):
 * the signed transaction is recorded with its coins' `coins` reservation (kv/chain_state.ts) in one atomic before it is
 * broadcast, re-sent as the same bytes while the chain does not know it, and settled exactly once: final -> its inputs
 * are spent and its output becomes a treasury coin, in one atomic; proven dead -> its coins are released. One open
 * consolidation per chain (`openKey`), so running the command twice never starts a second one. Key layout lives here.
 */
import { type DeathProof, type Outpoint, outpointsOf, type PayoutCoin, type PreparedTx } from "../chains/adapter.ts";
import type { UtxoChain } from "../chains/catalog.ts";
import { appendAudit, type AuditEntry } from "./audit.ts";
import { addReservations } from "./chain_state.ts";
import { addSentTxEffects } from "./sent_tx_effects.ts";
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import { type Consolidation, ConsolidationSchema, parseRecord, validRecord } from "../model/sent_tx.ts";

// The Consolidation record's schema and type live in model/sent_tx.ts: checked on every write and read here.
export type { Consolidation, ConsolidationInput, ConsolidationStatus } from "../model/sent_tx.ts";

/** The merged output is the transaction's only output, so its first. */
export const CONSOLIDATION_OUTPUT_INDEX = 0;

export const consolidationKey = (chain: UtxoChain, id: string): Deno.KvKey => ["consolidation", chain, id];
/** The id of the open (prepared, not yet settled) consolidation of `chain`, if any. */
export const openConsolidationKey = (chain: UtxoChain): Deno.KvKey => ["consolidation_open", chain];

/** The order id a consolidation's payout request carries (the payer names the transaction with it). */
export function consolidationOrderId(id: string): string {
  return `consolidation:${id}`;
}

/** How a consolidation record is named in errors and alerts: its key. */
export function consolidationSubject(chain: UtxoChain, id: string): string {
  return consolidationKey(chain, id).join("/");
}

/** `entry`'s value checked against the schema; throws InvalidRecordError naming the key and the bad fields. */
function checked(entry: Deno.KvEntry<unknown>): Deno.KvEntry<Consolidation> {
  const parsed = parseRecord(ConsolidationSchema, entry.key.map(String).join("/"), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { key: entry.key, value: parsed.value, versionstamp: entry.versionstamp };
}

/**
 * The stored consolidation, or null. Throws InvalidRecordError for a stored record that fails its schema: never
 * handed out as a Consolidation to act on.
 */
export async function readConsolidation(kv: Deno.Kv, chain: UtxoChain, id: string): Promise<Consolidation | null> {
  const entry = await kv.get<unknown>(consolidationKey(chain, id));
  return entry.versionstamp === null ? null : checked(entry).value;
}

export async function openConsolidation(kv: Deno.Kv, chain: UtxoChain): Promise<Consolidation | null> {
  const id = (await kv.get<string>(openConsolidationKey(chain))).value;
  return id === null ? null : await readConsolidation(kv, chain, id);
}

export async function listConsolidations(kv: Deno.Kv, chain: UtxoChain): Promise<Consolidation[]> {
  const out: Consolidation[] = [];
  // Each checked: a stored record failing its schema throws, named, rather than being listed on a guess.
  for await (const e of kv.list<unknown>({ prefix: ["consolidation", chain] })) out.push(checked(e).value);
  return out;
}

export interface RecordConsolidation {
  id: string;
  chain: UtxoChain;
  by: string;
  coins: PayoutCoin[];
  changeAddress: string;
  changeDerivationIndex: number;
  amount: bigint;
  tx: PreparedTx;
  at: Date;
}

export type RecordConsolidationResult =
  | { ok: true; consolidation: Consolidation; audit: AuditEntry }
  /** Another consolidation of the chain is open (or a coin was taken meanwhile): nothing was recorded. */
  | { ok: false; reason: "open"; open: Consolidation }
  | { ok: false; reason: "reservation_taken" };

/**
 * Records a signed consolidation with its coin reservation and its audit entry, in one atomic that also claims the
 * chain's open slot: all of it is written, or nothing (and it must not be broadcast).
 */
export async function recordConsolidation(kv: Deno.Kv, r: RecordConsolidation): Promise<RecordConsolidationResult> {
  if (!r.tx?.txHash || typeof r.tx.raw !== "string") throw new RangeError("the signed consolidation is required");
  if (r.coins.length === 0) throw new RangeError("a consolidation spends at least one coin");
  if (r.tx.change) throw new RangeError("a consolidation has one output and no change");
  const total = r.coins.reduce((sum, c) => sum + c.amount, 0n);
  if (r.amount <= 0n || r.amount > total) throw new RangeError(`consolidation output ${r.amount} out of range`);
  // Checked before the commit: a record that would fail its schema is refused, naming the field, and nothing is
  // written (so nothing is broadcast).
  const c: Consolidation = validRecord(
    ConsolidationSchema,
    consolidationSubject(r.chain, r.id),
    {
      id: r.id,
      chain: r.chain,
      status: "prepared",
      by: r.by,
      preparedAt: r.at.toISOString(),
      txHash: r.tx.txHash,
      raw: r.tx.raw,
      ...(r.tx.expiry ? { expiry: r.tx.expiry } : {}),
      // Its coins, and the lowest block among them: a conflicting spend can only be at or above it.
      consumes: {
        kind: "outpoints",
        outpoints: outpointsOf(r.coins),
        since: Math.min(...r.coins.map((coin) => coin.height)),
      },
      inputs: r.coins.map((coin) => ({
        txHash: coin.txHash,
        index: coin.index,
        amount: coin.amount.toString(),
        address: coin.address,
        derivationIndex: coin.derivationIndex,
        height: coin.height,
      })),
      output: {
        index: CONSOLIDATION_OUTPUT_INDEX,
        address: r.changeAddress,
        derivationIndex: r.changeDerivationIndex,
        amount: r.amount.toString(),
      },
      fee: (total - r.amount).toString(),
    } satisfies Consolidation,
  );
  const key = consolidationKey(r.chain, r.id);
  const open = openConsolidationKey(r.chain);
  const atomic = kv.atomic()
    .check({ key, versionstamp: null }, { key: open, versionstamp: null })
    .set(key, c)
    .set(open, r.id);
  addReservations(atomic, r.tx);
  const audit = appendAudit(atomic, {
    by: r.by,
    action: "utxo.consolidate",
    subject: `${r.chain}:${r.id}`,
    before: null,
    after: { txHash: c.txHash, inputs: c.inputs.length, output: c.output.amount, fee: c.fee },
  }, r.at);
  if ((await atomic.commit()).ok) return { ok: true, consolidation: c, audit };
  const existing = await openConsolidation(kv, r.chain);
  return existing ? { ok: false, reason: "open", open: existing } : { ok: false, reason: "reservation_taken" };
}

/** The outpoints a consolidation spends. */
export function inputsOf(c: Consolidation): Outpoint[] {
  return c.inputs.map(({ txHash, index }) => ({ txHash, index }));
}

export type SettleResult = { ok: true; consolidation: Consolidation } | { ok: false; reason: "not_open" };

/**
 * Its transaction is final as `txHash` in block `blockNumber`: the inputs leave the treasury (spent markers stay),
 * the merged output becomes a coin, and the chain's open slot is freed, in one atomic checked against the record.
 */
export async function completeConsolidation(
  kv: Deno.Kv,
  c: Consolidation,
  final: { txHash: string; blockNumber: number; at: Date },
  effects: readonly SentTxEffect[],
): Promise<SettleResult> {
  return await settle(kv, c, (entry, atomic) => {
    addSentTxEffects(atomic, effects);
    return { ...entry, status: "completed", completedAt: final.at.toISOString(), blockNumber: final.blockNumber };
  });
}

/**
 * Its transaction is proven never to be mined: its coins are released (those a conflicting final transaction spent
 * leave the treasury), and the open slot is freed, in one atomic.
 */
export async function consolidationDead(
  kv: Deno.Kv,
  c: Consolidation,
  dead: { proof: DeathProof; detail: string; at: Date },
  effects: readonly SentTxEffect[],
): Promise<SettleResult> {
  return await settle(kv, c, (entry, atomic) => {
    addSentTxEffects(atomic, effects);
    return { ...entry, status: "dead", proof: dead.proof, detail: dead.detail, deadAt: dead.at.toISOString() };
  });
}

async function settle(
  kv: Deno.Kv,
  c: Consolidation,
  change: (entry: Consolidation, atomic: Deno.AtomicOperation) => Consolidation,
): Promise<SettleResult> {
  const key = consolidationKey(c.chain, c.id);
  for (let attempt = 0; attempt < 10; attempt++) {
    const [stored, open] = await kv.getMany<[unknown, string]>([key, openConsolidationKey(c.chain)]);
    if (stored.versionstamp === null) return { ok: false, reason: "not_open" };
    const entry = checked(stored); // throws for a stored record failing its schema: nothing is settled on a guess
    if (entry.value.status !== "prepared") return { ok: false, reason: "not_open" };
    const atomic = kv.atomic().check(entry, open);
    // Checked before the commit: a settled record that would fail its schema is refused and nothing is written.
    const next = validRecord(ConsolidationSchema, consolidationSubject(c.chain, c.id), change(entry.value, atomic));
    atomic.set(key, next);
    if (open.value === c.id) atomic.delete(open.key);
    if ((await atomic.commit()).ok) return { ok: true, consolidation: next };
  }
  throw new Error(`consolidation ${c.chain} ${c.id}: too many concurrent changes`);
}
