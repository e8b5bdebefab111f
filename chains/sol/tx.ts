/**
 * Building and signing our Solana transactions with @solana/kit: a legacy message with one System Program transfer
 * (@solana-program/system) and a memo, signed through the adapter's signer (which never hands out a key).
 *
 * Why a memo on every transaction: ed25519 signatures are deterministic, so two payouts of the same amount to the
 * same address under the same recent blockhash would be the same bytes and the same signature: one transfer for two
 * orders. The memo carries the order (or sweep) id, which makes every transaction we sign distinct. A payout's
 * partner memo, when there is one, goes first (the instruction exchanges read).
 */
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  isAddress,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";

/** The SPL Memo program (v3): takes any UTF-8 text; with no accounts it asks for no signature. */
export const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/** Lamports per signature: the base fee, the only fee our transactions pay (no priority fee, one signature). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/** The most a memo may carry here: memos ride in a 1232-byte transaction. */
const MAX_MEMO_BYTES = 400;

export function memoInstruction(text: string): Instruction {
  const data = new TextEncoder().encode(text);
  if (data.length === 0) throw new Error("sol: a memo cannot be empty");
  if (data.length > MAX_MEMO_BYTES) throw new Error(`sol: a memo is at most ${MAX_MEMO_BYTES} bytes of UTF-8`);
  return { programAddress: MEMO_PROGRAM, data };
}

/** `value` as a Solana address, or a clear error naming what it is for. */
export function solAddress(value: string, what: string): Address {
  if (!isAddress(value)) throw new Error(`sol: ${what} ${JSON.stringify(value)} is not a Solana address`);
  return value;
}

export interface TransferSpec {
  from: Address;
  to: Address;
  lamports: bigint;
  memos: string[];
  blockhash: string;
  lastValidBlockHeight: bigint;
  /** Signs the compiled message bytes with the key of `from` (ed25519, 64 bytes). */
  sign(message: Uint8Array): Uint8Array;
}

export interface SignedTransfer {
  /** Base58 signature: the transaction's id. */
  signature: string;
  /** Base64 wire transaction: what `sendTransaction` takes. */
  wire: string;
}

export function signTransfer(spec: TransferSpec): SignedTransfer {
  const built = buildTransfer(spec);
  return built.finish(spec.sign(built.message));
}

/**
 * The transfer's message bytes, unsigned, and `finish`, which puts the 64-byte signature of `from` over them into the
 * wire transaction: for a signer that answers later (the signer process, chains/signer_client.ts).
 */
export function buildTransfer(
  spec: Omit<TransferSpec, "sign">,
): { message: Uint8Array; finish(signature: Uint8Array): SignedTransfer } {
  if (spec.lamports <= 0n) throw new Error(`sol: a transfer moves a positive amount, not ${spec.lamports}`);
  const source = createNoopSigner(spec.from);
  const message = pipe(
    createTransactionMessage({ version: "legacy" }),
    (m) => setTransactionMessageFeePayer(spec.from, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: spec.blockhash as Blockhash, lastValidBlockHeight: spec.lastValidBlockHeight },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [
          ...spec.memos.slice(0, -1).map(memoInstruction),
          getTransferSolInstruction({ source, destination: spec.to, amount: spec.lamports }),
          ...spec.memos.slice(-1).map(memoInstruction),
        ],
        m,
      ),
  );
  const compiled = compileTransaction(message);
  return {
    message: new Uint8Array(compiled.messageBytes),
    finish(signature: Uint8Array): SignedTransfer {
      if (signature.length !== 64) throw new Error(`sol: the signer returned ${signature.length} bytes, not 64`);
      const signed = { ...compiled, signatures: { ...compiled.signatures, [spec.from]: signature as SignatureBytes } };
      return { signature: getSignatureFromTransaction(signed), wire: getBase64EncodedWireTransaction(signed) };
    },
  };
}
