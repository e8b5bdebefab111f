/**
 * Verify before record (chains/effects.ts): what a signed XRP Ledger transaction does, read from its own blob with
 * xrpl's codec and verifier, never with the payer that built it (chains/xrp/payer.ts).
 *
 * The payer builds one thing: a single-signed `Payment` of XRP (drops) from the hot wallet (a payout, with the
 * destination tag the partner's memo names) or from a deposit address to the hot wallet (a sweep, no tag). Anything
 * else in a blob is refused, not ignored: a field or flag we never set can change what a payment delivers or who may
 * sign it (a partial payment, `tfPartialPayment`, delivers less than its `Amount`: docs/architecture.md "Chain facts"
 * counts only `delivered_amount`).
 */
import { decode, deriveAddress, encode, hashes, type Transaction, verifySignature } from "xrpl";
import type { PreparedTx } from "../adapter.ts";
import type { TxEffects } from "../effects.ts";
import { z } from "zod";
import { drops as dropsAnswer } from "./answers.ts";

/**
 * The only fields a blob of ours carries (chains/xrp/payer.ts builds exactly these; `Flags` is accepted only as 0).
 * Everything else is refused: `SendMax`, `Paths`, `DeliverMin` (cross-currency and partial payments), `Signers`
 * (multi-signing), `Delegate` (signed by another account on `Account`'s behalf), `TicketSequence` (uses a ticket, not
 * the Sequence our recording atomic locks), `Memos`, `SourceTag`, `InvoiceID`, `NetworkID`, and fields of other
 * amendments.
 */
const UNDERSTOOD = new Set([
  "TransactionType",
  "Account",
  "Destination",
  "DestinationTag",
  "Amount",
  "Fee",
  "Sequence",
  "LastLedgerSequence",
  "Flags",
  "SigningPubKey",
  "TxnSignature",
]);

/** Payment flags by name, to say which one a refused blob sets (xrpl's `PaymentFlags`, plus the global one). */
const FLAG_NAMES: Record<number, string> = {
  0x00010000: "tfNoRippleDirect",
  0x00020000: "tfPartialPayment",
  0x00040000: "tfLimitQuality",
  0x00080000: "tfSponsorCreatedAccount",
  0x80000000: "tfFullyCanonicalSig",
};

/** xrpl's `decode` of a blob: its fields by name, each checked below against what the payer builds. */
const decodedFields = z.record(z.string(), z.unknown());

const fail = (why: string): never => {
  throw new Error(`xrp explain: ${why}`);
};

const isUint32 = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;

/** Drops as xrpl's codec gives an XRP amount: a string of decimal digits. An object is an issued currency or MPT. */
function drops(value: unknown, field: string): bigint {
  if (typeof value !== "string") {
    return fail(`${field} is ${JSON.stringify(value)}, not XRP drops (an issued currency or MPT amount): refused`);
  }
  const parsed = dropsAnswer.safeParse(value);
  return parsed.success ? parsed.data : fail(`${field} ${JSON.stringify(value)} is not a whole number of drops`);
}

/**
 * What the signed blob `raw` (`PreparedTx.raw` of the xrp payer: the hex of xrpl's `encode` of the signed
 * transaction) does. Throws when the blob does not decode, is not signed by its `Account`'s own key, or carries
 * anything the payer never builds.
 *
 * `memo` is the `DestinationTag` as decimal text (`String(tag)`, no leading zeros), the form the payer reads a
 * payout's memo in (`destinationTagOf`), or null without a tag; `expiry` is `{kind: "ledger", value:
 * LastLedgerSequence}`, as the payer records it; `maxFee` is `Fee` (drops, burnt whatever happens).
 */
// deno-lint-ignore require-await
export async function explainXrpTx(raw: string): Promise<TxEffects> {
  if (typeof raw !== "string" || raw.length === 0 || raw.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(raw)) {
    fail("the blob is not hex (an even number of hex digits)");
  }
  let decoded: unknown;
  try {
    decoded = decode(raw);
  } catch (err) {
    return fail(`xrpl cannot decode the blob: ${err instanceof Error ? err.message : String(err)}`);
  }
  const fields = decodedFields.safeParse(decoded);
  if (!fields.success) return fail("xrpl decoded the blob to no transaction");
  const tx = fields.data;
  // What rippled applies is the canonical encoding of these fields: a blob that re-encodes to other bytes (a field
  // twice, out of order, trailing bytes) is not what we read.
  let again: string;
  try {
    again = encode(tx as unknown as Transaction);
  } catch (err) {
    return fail(`the decoded blob does not encode again: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (again.toUpperCase() !== raw.toUpperCase()) fail("the blob is not the canonical encoding of what it decodes to");

  if (tx.TransactionType !== "Payment") {
    fail(`TransactionType ${JSON.stringify(tx.TransactionType)} is not a Payment: our payer builds no other, refused`);
  }
  const unknown = Object.keys(tx).filter((k) => !UNDERSTOOD.has(k));
  if (unknown.length > 0) {
    fail(`the Payment carries ${unknown.join(", ")}, which our payer never sets: refused (it could change what moves)`);
  }
  if (tx.Flags !== undefined && tx.Flags !== 0) {
    const flags = Number(tx.Flags);
    const named = Object.entries(FLAG_NAMES).filter(([bit]) => (flags & Number(bit)) !== 0).map(([, n]) => n);
    fail(
      `the Payment sets Flags 0x${(flags >>> 0).toString(16)}${named.length ? ` (${named.join(", ")})` : ""}, ` +
        `which our payer never sets: refused (a partial payment can deliver less than its Amount)`,
    );
  }

  // Who signs: a single signature by the key whose address is Account (the master key: we set no regular key).
  const account = tx.Account;
  if (typeof account !== "string") return fail("the Payment has no Account");
  const pub = tx.SigningPubKey;
  if (typeof pub !== "string" || pub.length === 0) return fail("the Payment has no SigningPubKey (not single-signed)");
  let derived: string;
  try {
    derived = deriveAddress(pub);
  } catch (err) {
    return fail(`SigningPubKey ${pub} is not a key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (derived !== account) fail(`SigningPubKey ${pub} is the key of ${derived}, not of its Account ${account}`);
  let valid: boolean;
  try {
    valid = verifySignature(raw, pub);
  } catch (err) {
    return fail(`the signature cannot be checked: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!valid) fail(`TxnSignature is not ${account}'s signature of this transaction`);

  if (typeof tx.Destination !== "string") return fail("the Payment has no Destination");
  const amount = drops(tx.Amount, "Amount");
  const fee = drops(tx.Fee, "Fee");
  if (!isUint32(tx.Sequence)) return fail(`Sequence ${JSON.stringify(tx.Sequence)} is not a uint32`);
  // Without LastLedgerSequence a lost payout is never provably dead (docs/live-chains.md, "Stuck payouts"): the payer
  // sets it.
  if (!isUint32(tx.LastLedgerSequence)) fail("the Payment has no LastLedgerSequence: it would never expire");
  if (tx.DestinationTag !== undefined && !isUint32(tx.DestinationTag)) {
    fail(`DestinationTag ${JSON.stringify(tx.DestinationTag)} is not a uint32`);
  }

  return {
    chain: "xrp",
    from: account,
    outputs: [{ to: tx.Destination, amount }],
    memo: tx.DestinationTag === undefined ? null : String(tx.DestinationTag),
    nonce: BigInt(tx.Sequence),
    expiry: { kind: "ledger", value: Number(tx.LastLedgerSequence) },
    maxFee: fee,
  };
}

/**
 * What `differences` (chains/effects.ts) does not compare: whether the record kept with the blob (`PreparedTx`)
 * says what the blob does. The reader finds a payout by `txHash` and proves it dead by `expiry` and `consumes`
 * (docs/live-chains.md, "Stuck payouts"): a record that misstates them could let a payout that can still land be called
 * dead and paid again. Also the fee cap, which `differences` does not hold account chains to. Empty when all agree.
 */
export function xrpRecordDifferences(prepared: PreparedTx, effects: TxEffects, maxFee?: bigint): string[] {
  const out: string[] = [];
  const hash = hashes.hashSignedTx(prepared.raw);
  if (prepared.txHash.toUpperCase() !== hash.toUpperCase()) {
    out.push(`recorded hash ${prepared.txHash}, but its blob hashes to ${hash}`);
  }
  const e = effects.expiry;
  if (!e || prepared.expiry?.kind !== e.kind || prepared.expiry.value !== e.value) {
    out.push(`recorded expiry ${JSON.stringify(prepared.expiry)}, but its blob says ${JSON.stringify(e)}`);
  }
  const c = prepared.consumes;
  if (c?.kind !== "nonce" || c.account !== effects.from || BigInt(c.nonce) !== effects.nonce) {
    out.push(
      `recorded as consuming ${JSON.stringify(c)}, but its blob uses Sequence ${effects.nonce} of ${effects.from}`,
    );
  }
  const seq = (prepared.reservations ?? []).filter((r) => r.kind === "sequence");
  if (
    seq.length !== 1 || seq[0].kind !== "sequence" || seq[0].chain !== "xrp" || seq[0].account !== effects.from ||
    BigInt(seq[0].sequence) !== effects.nonce
  ) {
    out.push(`reserves ${JSON.stringify(seq)}, not Sequence ${effects.nonce} of ${effects.from} alone`);
  }
  if (maxFee !== undefined && effects.maxFee !== undefined && effects.maxFee > maxFee) {
    out.push(`pays a fee of ${effects.maxFee} drops, above the ${maxFee} drops cap`);
  }
  return out;
}
