/**
 * Verify before record: what a signed transaction does, read back from its own bytes with the chain's own library
 * (never the code that built it), compared with what we asked for. A builder bug (a wrong amount unit, change to a
 * stranger, a lost destination tag, another contract) is refused before the transaction is recorded, so it is never
 * broadcast. Custody platforms do the same before signing (BitGo's per-coin `explainTransaction` and
 * `verifyTransaction`).
 *
 * Each chain family decodes its own bytes (`chains/<family>/explain.ts`) into `TxEffects`; `differences` is the one
 * pure comparison for every chain and purpose.
 */
import { type ChainSymbol, type EvmChain, isEvmChain, type NativeChain, type UAsset } from "./catalog.ts";
import type { Expiry, Outpoint, PreparedTx } from "./adapter.ts";
import { ChainError } from "./errors.ts";

/** One value transfer a transaction makes: a native payment or a UTXO output (in output order). */
export interface TxOutput {
  to: string;
  amount: bigint;
}

/** A uAsset contract call an EVM transaction makes (`data` decoded with the contract's ABI). */
export interface ContractCall {
  /** The contract called (the transaction's `to`), lowercase. */
  contract: string;
  function: "mint" | "burn" | "transfer";
  /** mint: the deposit id (32-byte hex, lowercase). */
  depositId?: string;
  /** mint and transfer: the recipient, lowercase. */
  to?: string;
  amount: bigint;
}

/** What a signed transaction does, as its own bytes say. */
export interface TxEffects {
  chain: ChainSymbol;
  /** The account that signs and pays (account chains, EVM); absent on UTXO chains, whose inputs say it. */
  from?: string;
  /** UTXO chains: the outpoints it spends. */
  inputs?: Outpoint[];
  /** Native value it moves (payments, or every UTXO output in order); empty for an EVM contract call. */
  outputs: TxOutput[];
  /** The destination tag (xrp, as decimal text) or memo text it carries; null when none. */
  memo: string | null;
  /** EVM: the contract call. */
  call?: ContractCall;
  /** EVM: the chain id it is signed for. */
  chainId?: number;
  /** EVM nonce, XRPL Sequence. */
  nonce?: bigint;
  /** The expiry the bytes commit to, where they carry one (xrp LastLedgerSequence, zec nExpiryHeight, sui epoch). */
  expiry?: Expiry;
  /** The most it pays in fee, where the bytes say it (xrp Fee, sui gas budget, EVM gas x max fee per gas). */
  maxFee?: bigint;
}

/**
 * What a transaction was prepared for. `payout` covers burn payouts, refunds and UTXO consolidations (a payout to our
 * own change address); `sweep` moves a deposit address's balance to the hot wallet.
 */
export type TxIntent =
  | {
    kind: "payout";
    chain: NativeChain;
    to: string;
    amount: bigint;
    memo: string | null;
    /** Account chains: the hot wallet that must pay it. */
    from?: string;
    /** UTXO chains: the coins it must spend (all of them, nothing else) and where change may go. */
    coins?: (Outpoint & { amount: bigint })[];
    changeAddress?: string;
    /** UTXO chains: the most its fee (coins in less outputs) may be, from the chain's fee rule. */
    maxFee?: bigint;
  }
  | { kind: "sweep"; chain: NativeChain; from: string; to: string }
  | {
    kind: "mint";
    chain: EvmChain;
    chainId: number;
    from: string;
    contract: string;
    asset: UAsset;
    depositId: string;
    to: string;
    amount: bigint;
  }
  | { kind: "burn"; chain: EvmChain; chainId: number; from: string; contract: string; asset: UAsset; amount: bigint }
  | {
    kind: "transfer";
    chain: EvmChain;
    chainId: number;
    from: string;
    contract: string;
    asset: UAsset;
    to: string;
    amount: bigint;
  };

/**
 * Whether two addresses (or ids) of `chain` name the same thing: hex addresses (EVM, Sui) whatever their letter case,
 * every other chain's (base58, bech32, the sim's names) exactly, since there a changed letter is another account.
 */
function sameOn(chain: ChainSymbol): (a: string | undefined, b: string | undefined) => boolean {
  const hex = isEvmChain(chain) || chain === "sui";
  return hex ? (a, b) => (a ?? "").toLowerCase() === (b ?? "").toLowerCase() : (a, b) => (a ?? "") === (b ?? "");
}
const outpoint = (o: Outpoint) => `${o.txHash.toLowerCase()}:${o.index}`;

/**
 * Every way `effects` (decoded from `prepared.raw`) differs from `intent`, as sentences an operator reads; empty when
 * the transaction does exactly what was asked.
 */
export function differences(intent: TxIntent, effects: TxEffects, prepared: PreparedTx): string[] {
  const out: string[] = [];
  const same = sameOn(intent.chain);
  if (effects.chain !== intent.chain) out.push(`signed for ${effects.chain}, not ${intent.chain}`);
  const [recorded, signed] = [prepared.expiry, effects.expiry];
  if (recorded && signed && (recorded.kind !== signed.kind || recorded.value !== signed.value)) {
    out.push(`expires at ${signed.kind} ${signed.value}, not the ${recorded.kind} ${recorded.value} recorded with it`);
  }
  switch (intent.kind) {
    case "payout":
      payoutDifferences(intent, effects, prepared, out);
      break;
    case "sweep": {
      if (!same(effects.from, intent.from)) {
        out.push(`sweeps from ${effects.from}, not the deposit address ${intent.from}`);
      }
      if (effects.outputs.length !== 1 || !same(effects.outputs[0].to, intent.to)) {
        out.push(`pays ${describe(effects.outputs)}, not the hot wallet ${intent.to} alone`);
      }
      break;
    }
    case "mint":
    case "burn":
    case "transfer": {
      if (effects.chainId !== intent.chainId) out.push(`signed for chain id ${effects.chainId}, not ${intent.chainId}`);
      if (!same(effects.from, intent.from)) out.push(`signed by ${effects.from}, not ${intent.from}`);
      if (effects.outputs.some((o) => o.amount !== 0n)) out.push(`moves native value: ${describe(effects.outputs)}`);
      const call = effects.call;
      if (!call) {
        out.push(`calls no uAsset function (expected ${intent.kind})`);
        break;
      }
      if (!same(call.contract, intent.contract)) {
        out.push(`calls contract ${call.contract}, not the ${intent.asset} contract ${intent.contract}`);
      }
      if (call.function !== intent.kind) out.push(`calls ${call.function}, not ${intent.kind}`);
      if (call.amount !== intent.amount) out.push(`amount ${call.amount}, not ${intent.amount}`);
      if (intent.kind === "mint" && !same(call.depositId, intent.depositId)) {
        out.push(`deposit id ${call.depositId}, not ${intent.depositId}`);
      }
      if (intent.kind !== "burn" && !same(call.to, intent.to)) {
        out.push(`recipient ${call.to ?? "none"}, not ${intent.to}`);
      }
      break;
    }
  }
  return out;
}

function payoutDifferences(
  intent: Extract<TxIntent, { kind: "payout" }>,
  effects: TxEffects,
  prepared: PreparedTx,
  out: string[],
) {
  const same = sameOn(intent.chain);
  if ((effects.memo ?? null) !== (intent.memo ?? null)) {
    out.push(`carries memo/tag ${JSON.stringify(effects.memo)}, not ${JSON.stringify(intent.memo)}`);
  }
  if (intent.coins === undefined) {
    // Account chains: one payment from the hot wallet.
    if (intent.from !== undefined && !same(effects.from, intent.from)) {
      out.push(`paid from ${effects.from}, not the hot wallet ${intent.from}`);
    }
    const [pay, ...rest] = effects.outputs;
    if (!pay || rest.length > 0) {
      out.push(`makes ${effects.outputs.length} payments (${describe(effects.outputs)}), not 1`);
    } else {
      if (!same(pay.to, intent.to)) out.push(`pays ${pay.to}, not ${intent.to}`);
      if (pay.amount !== intent.amount) out.push(`pays ${pay.amount}, not ${intent.amount}`);
    }
    return;
  }
  // UTXO chains: exactly the given coins in; the destination once with the amount; anything else is our change.
  const wanted = new Set(intent.coins.map(outpoint));
  const spent = new Set((effects.inputs ?? []).map(outpoint));
  if (spent.size !== (effects.inputs ?? []).length) out.push("spends a coin twice");
  const extra = [...spent].filter((o) => !wanted.has(o));
  const missing = [...wanted].filter((o) => !spent.has(o));
  if (extra.length > 0) out.push(`spends coins it was not given: ${extra.join(", ")}`);
  if (missing.length > 0) out.push(`does not spend coins it was given: ${missing.join(", ")}`);
  const toDestination = effects.outputs.filter((o) => same(o.to, intent.to));
  const others = effects.outputs.map((o, index) => ({ ...o, index })).filter((o) => !same(o.to, intent.to));
  if (same(intent.to, intent.changeAddress)) {
    // A consolidation: every output is ours, and one of them carries the amount asked.
    effects.outputs.forEach((o, index) => {
      if (!same(o.to, intent.changeAddress)) {
        out.push(`consolidation output ${index} pays ${o.amount} to ${o.to}, not our change address`);
      }
    });
    const kept = effects.outputs.filter((o) => same(o.to, intent.changeAddress));
    if (!kept.some((o) => o.amount === intent.amount)) {
      const what = kept.length === 0 ? "nothing" : kept.map((o) => o.amount).join(" + ");
      out.push(`consolidates ${what} into our change address, not ${intent.amount}`);
    }
  } else {
    if (toDestination.length !== 1) {
      out.push(`pays ${intent.to} in ${toDestination.length} outputs, not 1`);
    } else if (toDestination[0].amount !== intent.amount) {
      out.push(`pays ${intent.to} ${toDestination[0].amount}, not ${intent.amount}`);
    }
    for (const o of others) {
      if (!same(o.to, intent.changeAddress)) {
        out.push(`output ${o.index} pays ${o.amount} to ${o.to}, not our change address`);
      }
    }
    const change = others.filter((o) => same(o.to, intent.changeAddress));
    const recorded = prepared.change;
    if (change.length > 1) out.push(`has ${change.length} change outputs, not at most 1`);
    else if (
      change.length === 1 && (!recorded || recorded.index !== change[0].index || recorded.amount !== change[0].amount)
    ) {
      out.push(`change output ${change[0].index} of ${change[0].amount} is not the change recorded with it`);
    } else if (change.length === 0 && recorded) out.push("the change recorded with it is not among its outputs");
  }
  const inValue = intent.coins.reduce((s, c) => s + c.amount, 0n);
  const outValue = effects.outputs.reduce((s, o) => s + o.amount, 0n);
  if (outValue > inValue) out.push(`outputs ${outValue} exceed the ${inValue} its coins hold`);
  else if (intent.maxFee !== undefined && inValue - outValue > intent.maxFee) {
    out.push(`pays ${inValue - outValue} in fee, above the ${intent.maxFee} its size allows`);
  }
  // The fee recorded with it is what reconciliation counts as paid once it is final (docs/reconciliation.md); checked
  // when it spends exactly the coins it was given (else what its coins hold is not known here, and that is said above).
  const exactCoins = extra.length === 0 && missing.length === 0;
  if (exactCoins && outValue <= inValue && prepared.fee !== undefined && prepared.fee !== inValue - outValue) {
    out.push(`is recorded as paying ${prepared.fee} in fee, but its coins less its outputs are ${inValue - outValue}`);
  }
}

function describe(outputs: readonly TxOutput[]): string {
  return outputs.length === 0 ? "nothing" : outputs.map((o) => `${o.amount} to ${o.to}`).join(", ");
}

/** A prepared transaction whose own bytes do not do what was asked: never recorded, never broadcast. */
export class TransactionMismatchError extends ChainError {
  constructor(readonly intent: TxIntent, readonly txHash: string, readonly differences: readonly string[]) {
    super(
      `refused to record ${intent.kind} transaction ${txHash} on ${intent.chain}: its signed bytes ` +
        differences.join("; "),
      { chain: intent.chain },
    );
    this.name = "TransactionMismatchError";
  }
}

/**
 * A fee-bumped replacement (an EVM `nudge`) whose signed bytes do something else than the version it replaces: it
 * may differ only in what it offers in fee. Thrown before the replacement is recorded, so it is never sent.
 */
export class ReplacementMismatchError extends ChainError {
  constructor(
    chain: ChainSymbol,
    readonly originalHash: string,
    readonly replacementHash: string,
    readonly differences: readonly string[],
  ) {
    super(
      `refused to record replacement ${replacementHash} of ${originalHash} on ${chain}: its signed bytes ` +
        differences.join("; "),
      { chain },
    );
    this.name = "ReplacementMismatchError";
  }
}

/**
 * How a replacement's effects differ from those of the version it replaces, beyond its fee (`maxFee`, which must not
 * pass `maxFeeCap`), as sentences an operator reads; empty when it is the same transaction re-priced.
 */
export function replacementDifferences(was: TxEffects, now: TxEffects, maxFeeCap: bigint): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a, bigints) === JSON.stringify(b, bigints);
  for (const field of ["from", "chainId", "nonce", "outputs", "memo", "call", "inputs", "expiry"] as const) {
    if (!same(was[field], now[field])) {
      out.push(`change ${field} from ${JSON.stringify(was[field], bigints)} to ${JSON.stringify(now[field], bigints)}`);
    }
  }
  if ((now.maxFee ?? 0n) > maxFeeCap) out.push(`offer ${now.maxFee} in fee, above the cap ${maxFeeCap}`);
  return out;
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
