/**
 * Cold sweeps (model/cold_sweep.ts): the hot funds above a chain's band moved to its cold address, write-ahead and
 * exactly once (docs/architecture.md invariant 2). The signed transaction is recorded with its reservations (UTXO coin
 * locks, an account chain's hot-wallet hold and XRPL Sequence lock: kv/chain_state.ts) in one atomic that also claims
 * the chain's open slot (one open cold sweep per chain) and checks the cold address record's versionstamp as it was
 * read when the destination was chosen, so a change of the cold address racing the sweep can never redirect it: the
 * commit fails and nothing is broadcast. Settled once: final (its effects, model/sent_tx_effects.ts) or proven dead
 * (what it held released). Key layout lives here.
 */
import type { DeathProof, PreparedTx } from "../chains/adapter.ts";
import type { NativeChain } from "../chains/catalog.ts";
import { type ColdOutput, type ColdSweep, ColdSweepSchema } from "../model/cold_sweep.ts";
import { parseRecord, validRecord } from "../model/sent_tx.ts";
import type { SentTxEffect } from "../model/sent_tx_effects.ts";
import { addReservations } from "./chain_state.ts";
import { coldAddressKey } from "./cold_addresses.ts";
import { addSentTxEffects } from "./sent_tx_effects.ts";

export type { ColdOutput, ColdSweep } from "../model/cold_sweep.ts";

export const coldSweepKey = (chain: NativeChain, id: string): Deno.KvKey => ["cold_sweep", chain, id];
/** The id of the chain's open (prepared, not yet settled) cold sweep, if any. */
export const openColdSweepKey = (chain: NativeChain): Deno.KvKey => ["cold_sweep_open", chain];

export function coldSweepSubject(chain: NativeChain, id: string): string {
  return coldSweepKey(chain, id).join("/");
}

function checked(entry: Deno.KvEntry<unknown>): Deno.KvEntry<ColdSweep> {
  const parsed = parseRecord(ColdSweepSchema, entry.key.map(String).join("/"), entry.value);
  if (!parsed.ok) throw parsed.error;
  return { key: entry.key, value: parsed.value, versionstamp: entry.versionstamp };
}

/** The stored cold sweep, or null; throws InvalidRecordError for one failing its schema (never acted on by a guess). */
export async function readColdSweep(kv: Deno.Kv, chain: NativeChain, id: string): Promise<ColdSweep | null> {
  const entry = await kv.get<unknown>(coldSweepKey(chain, id));
  return entry.versionstamp === null ? null : checked(entry).value;
}

export async function openColdSweep(kv: Deno.Kv, chain: NativeChain): Promise<ColdSweep | null> {
  const id = (await kv.get<string>(openColdSweepKey(chain))).value;
  return id === null ? null : await readColdSweep(kv, chain, id);
}

/** Every cold sweep of `chain`; one failing its schema throws, named. */
export async function listColdSweeps(kv: Deno.Kv, chain: NativeChain): Promise<ColdSweep[]> {
  const out: ColdSweep[] = [];
  for await (const e of kv.list<unknown>({ prefix: ["cold_sweep", chain] })) out.push(checked(e).value);
  return out;
}

export interface RecordColdSweep {
  id: string;
  chain: NativeChain;
  destination: string;
  amount: bigint;
  hot: bigint;
  ceiling: bigint;
  target: bigint;
  tx: PreparedTx;
  /** The versionstamp of the cold address record the destination was read from (null: no record, never recorded). */
  coldVersionstamp: string | null;
  at: Date;
}

export type RecordColdSweepResult =
  | { ok: true; sweep: ColdSweep }
  /**
   * Nothing recorded: another cold sweep of the chain is open, the cold address record changed since it was read, or
   * a reservation (a coin, the hot-wallet epoch, a Sequence) was taken meanwhile.
   */
  | { ok: false; reason: "open" | "cold_address_changed" | "reservation_taken" };

/** Records a signed cold sweep with its reservations, claiming the open slot, checked against the cold address read. */
export async function recordColdSweep(kv: Deno.Kv, r: RecordColdSweep): Promise<RecordColdSweepResult> {
  if (!r.tx?.txHash || typeof r.tx.raw !== "string" || r.tx.raw === "") {
    throw new RangeError("the signed cold sweep is required");
  }
  const tx = r.tx;
  const sweep: ColdSweep = validRecord(
    ColdSweepSchema,
    coldSweepSubject(r.chain, r.id),
    {
      chain: r.chain,
      txHash: tx.txHash,
      raw: tx.raw,
      preparedAt: r.at.toISOString(),
      ...(tx.expiry ? { expiry: tx.expiry } : {}),
      ...(tx.consumes ? { consumes: tx.consumes } : {}),
      ...(tx.change ? { change: { ...tx.change, amount: tx.change.amount.toString() } } : {}),
      ...(tx.fee !== undefined ? { fee: tx.fee.toString() } : {}),
      id: r.id,
      destination: r.destination,
      amount: r.amount.toString(),
      hot: r.hot.toString(),
      ceiling: r.ceiling.toString(),
      target: r.target.toString(),
      status: "prepared",
    } satisfies ColdSweep,
  );
  const key = coldSweepKey(r.chain, r.id);
  const open = openColdSweepKey(r.chain);
  const atomic = kv.atomic()
    .check({ key, versionstamp: null }, { key: open, versionstamp: null })
    .check({ key: coldAddressKey(r.chain), versionstamp: r.coldVersionstamp })
    .set(key, sweep)
    .set(open, r.id);
  addReservations(atomic, tx);
  if ((await atomic.commit()).ok) return { ok: true, sweep };
  const [openNow, cold] = await kv.getMany<[string, unknown]>([open, coldAddressKey(r.chain)]);
  if (openNow.value !== null) return { ok: false, reason: "open" };
  if (cold.versionstamp !== r.coldVersionstamp) return { ok: false, reason: "cold_address_changed" };
  return { ok: false, reason: "reservation_taken" };
}

export type SettleColdSweepResult = { ok: true; sweep: ColdSweep } | { ok: false; reason: "not_open" };

/** Final in `blockNumber`, paying `coldOutputs` to the destination: completed, its effects, the slot freed. */
export async function completeColdSweep(
  kv: Deno.Kv,
  s: ColdSweep,
  final: { blockNumber: number; coldOutputs: ColdOutput[]; at: Date },
  effects: readonly SentTxEffect[],
): Promise<SettleColdSweepResult> {
  return await settle(kv, s, effects, (entry) => ({
    ...entry,
    status: "completed",
    completedAt: final.at.toISOString(),
    blockNumber: final.blockNumber,
    coldOutputs: final.coldOutputs,
  }));
}

/** Proven never to be mined (or failed, finally): dead with its proof, what it held released, the slot freed. */
export async function coldSweepDead(
  kv: Deno.Kv,
  s: ColdSweep,
  dead: { proof: DeathProof; detail: string; at: Date },
  effects: readonly SentTxEffect[],
): Promise<SettleColdSweepResult> {
  return await settle(kv, s, effects, (entry) => ({
    ...entry,
    status: "dead",
    proof: dead.proof,
    detail: dead.detail,
    deadAt: dead.at.toISOString(),
  }));
}

async function settle(
  kv: Deno.Kv,
  s: ColdSweep,
  effects: readonly SentTxEffect[],
  change: (entry: ColdSweep) => ColdSweep,
): Promise<SettleColdSweepResult> {
  const key = coldSweepKey(s.chain, s.id);
  for (let attempt = 0; attempt < 10; attempt++) {
    const [stored, open] = await kv.getMany<[unknown, string]>([key, openColdSweepKey(s.chain)]);
    if (stored.versionstamp === null) return { ok: false, reason: "not_open" };
    const entry = checked(stored);
    if (entry.value.status !== "prepared") return { ok: false, reason: "not_open" };
    const next = validRecord(ColdSweepSchema, coldSweepSubject(s.chain, s.id), change(entry.value));
    const atomic = kv.atomic().check(entry, open).set(key, next);
    if (open.value === s.id) atomic.delete(open.key);
    addSentTxEffects(atomic, effects);
    if ((await atomic.commit()).ok) return { ok: true, sweep: next };
  }
  throw new Error(`cold sweep ${s.chain} ${s.id}: too many concurrent changes`);
}
