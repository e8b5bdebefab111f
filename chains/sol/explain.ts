/**
 * Verify before record, Solana (chains/effects.ts): what one of our signed transactions does, read from its own wire
 * bytes (`PreparedTx.raw`, the base64 wire transaction) with @solana/kit's decoders and @solana-program/system's
 * instruction parser, never with the code that built it (chains/sol/tx.ts).
 *
 * We build one shape only (chains/sol/tx.ts): a legacy message signed by its fee payer alone, holding one System
 * Program transfer from the fee payer, the destination's memo before it when there is one (the memo an exchange
 * reads), and our reference memo (`payout <orderId>` or `sweep <sweepId>`) after it, which makes every transaction of
 * ours distinct (docs/toolchain-notes.md: ed25519 signatures are deterministic). Anything else this refuses: another
 * program (ComputeBudget included: a priority fee is value paid to the leader), another System instruction (an
 * `AdvanceNonceAccount` would give it a durable nonce, which never expires and defeats the proof of death in
 * docs/live-chains.md "Stuck payouts"), a transfer from an account other than the fee payer, a memo that names
 * accounts, a version 0 or later message (address lookup tables), a missing or invalid signature.
 *
 * What the bytes do not carry: the blockhash's `lastValidBlockHeight` (the expiry recorded with the payout comes from
 * the node, not from the bytes), so `expiry` is absent; the fee (the base fee per signature is the cluster's, and we
 * refuse compute-budget instructions, the only way the bytes could set a priority fee), so `maxFee` is absent;
 * Solana has no account nonce, so `nonce` is absent.
 */
import {
  type Address,
  decompileTransactionMessage,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  type Instruction,
  verifySignature,
} from "@solana/kit";
import {
  identifySystemInstruction,
  parseTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
  SystemInstruction,
} from "@solana-program/system";
import type { TxEffects, TxOutput } from "../effects.ts";

/** The SPL Memo program v3 (the one chains/sol/tx.ts uses); spelled out here so a builder using another is refused. */
const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";

/** What `raw` (a base64 wire transaction of ours) does; throws on bytes it cannot decode or does not understand. */
export async function explainSolTx(raw: string): Promise<TxEffects> {
  const wire = base64Bytes(raw);

  // The transaction: its signatures, then the message they sign (the decoder takes every remaining byte as the
  // message). The message must take every byte: a node may ignore bytes after it, but bytes we did not put there mean
  // the builder is not what we think it is.
  const txDecoder = getTransactionDecoder();
  let tx;
  try {
    const [decoded, end] = txDecoder.read(wire, 0);
    if (end !== wire.length) throw new Error(`${wire.length - end} bytes follow the transaction`);
    tx = decoded;
  } catch (err) {
    throw new Error(`sol: cannot decode the wire transaction: ${message(err)}`);
  }
  let compiled;
  try {
    const [decoded, end] = getCompiledTransactionMessageDecoder().read(tx.messageBytes, 0);
    if (end !== tx.messageBytes.length) throw new Error(`${tx.messageBytes.length - end} bytes follow the message`);
    compiled = decoded;
  } catch (err) {
    throw new Error(`sol: cannot decode the transaction's message: ${message(err)}`);
  }
  if (compiled.version !== "legacy") {
    const lookups = compiled.version === 0 ? (compiled.addressTableLookups ?? []).length : 0;
    throw new Error(
      `sol: a version ${compiled.version} message${lookups > 0 ? ` with ${lookups} address lookup table(s)` : ""}; ` +
        "we build legacy messages only, whose accounts are all in the bytes",
    );
  }
  let msg;
  try {
    msg = decompileTransactionMessage(compiled);
  } catch (err) {
    throw new Error(`sol: cannot decompile the transaction's message: ${message(err)}`);
  }
  const from = msg.feePayer.address;

  const outputs: TxOutput[] = [];
  const memos: { text: string; afterTransfer: boolean }[] = [];
  msg.instructions.forEach((ix, i) => {
    const program = ix.programAddress as string;
    if (program === MEMO_PROGRAM) {
      memos.push({ text: memoText(ix, i), afterTransfer: outputs.length > 0 });
    } else if (program === SYSTEM_PROGRAM_ADDRESS) {
      outputs.push(transfer(ix, i, from));
    } else if (program === COMPUTE_BUDGET_PROGRAM) {
      throw new Error(
        `sol: instruction ${i} is a ComputeBudget instruction, which we never add (it can set a priority fee)`,
      );
    } else {
      throw new Error(`sol: instruction ${i} calls program ${program}, which we never call`);
    }
  });

  // The destination's memo precedes the transfer (chains/sol/tx.ts); memos after it are our own reference, not a
  // memo for the destination, so a payout's `memo` compares with the order's destination memo alone.
  const leading = memos.filter((m) => !m.afterTransfer);
  if (leading.length > 1) {
    throw new Error(`sol: ${leading.length} memos precede the transfer; we put at most one (the destination's) there`);
  }

  // Signed by the fee payer alone, with a signature that verifies: anything else was not signed the way we sign.
  const { numSignerAccounts } = compiled.header;
  if (numSignerAccounts !== 1) {
    throw new Error(`sol: the message asks ${numSignerAccounts} signers; ours are signed by their fee payer alone`);
  }
  const signature = tx.signatures[from];
  if (!signature) throw new Error(`sol: the transaction carries no signature of its fee payer ${from}`);
  const key = await getPublicKeyFromAddress(from as Address);
  if (!(await verifySignature(key, signature, tx.messageBytes))) {
    throw new Error(`sol: the fee payer's signature does not verify over the message (not signed by ${from})`);
  }

  return { chain: "sol", from, outputs, memo: leading.length === 1 ? leading[0].text : null };
}

function base64Bytes(raw: string): Uint8Array {
  if (typeof raw !== "string" || raw.length === 0) throw new Error("sol: the raw transaction is empty");
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase64Encoder().encode(raw));
  } catch {
    // Not the library's message: it quotes the whole input, a signed transaction not yet recorded.
    throw new Error("sol: the raw transaction is not base64");
  }
  // The codec reads unpadded text too; a wire transaction of ours is canonical padded base64.
  if (getBase64Decoder().decode(bytes) !== raw) throw new Error("sol: the raw transaction is not canonical base64");
  return bytes;
}

/** A System Program instruction, which must be a plain transfer from the fee payer: its destination and lamports. */
function transfer(ix: Instruction, i: number, feePayer: string): TxOutput {
  const data = ix.data ?? new Uint8Array();
  let kind: SystemInstruction;
  try {
    kind = identifySystemInstruction(data);
  } catch (err) {
    throw new Error(`sol: instruction ${i} is a System Program instruction we cannot identify: ${message(err)}`);
  }
  if (kind !== SystemInstruction.TransferSol) {
    throw new Error(`sol: instruction ${i} is System Program ${SystemInstruction[kind]}, not a transfer`);
  }
  // Exactly [source, destination] and the 4-byte discriminator plus u64 lamports: the runtime would ignore more, we
  // never put more there.
  const accounts = ix.accounts ?? [];
  if (accounts.length !== 2) throw new Error(`sol: transfer ${i} names ${accounts.length} accounts, not 2`);
  if (data.length !== 12) throw new Error(`sol: transfer ${i} carries ${data.length} bytes of data, not 12`);
  const parsed = parseTransferSolInstruction({ programAddress: ix.programAddress, accounts, data });
  const source = parsed.accounts.source.address as string;
  // A transfer from any other account would not show in `outputs` as another payer's (TxOutput has no source), so
  // it is refused here rather than compared.
  if (source !== feePayer) {
    throw new Error(`sol: transfer ${i} moves lamports from ${source}, not from the fee payer ${feePayer}`);
  }
  return { to: parsed.accounts.destination.address, amount: parsed.data.amount };
}

/** A Memo program instruction's text: UTF-8 (the Memo program refuses anything else), naming no account. */
function memoText(ix: Instruction, i: number): string {
  if ((ix.accounts ?? []).length > 0) {
    throw new Error(`sol: memo ${i} names ${ix.accounts!.length} signer account(s); ours name none`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(ix.data ?? new Uint8Array());
  } catch {
    throw new Error(`sol: memo ${i} is not UTF-8`);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
