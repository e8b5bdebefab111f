/**
 * The signer process's view of a transaction it is asked to sign (docs/operations.md "Roles", the signer process): from
 * the unsigned bytes alone, with each chain's own library, (1) what must be signed (`payloadOf`: the digest or message
 * the chain defines), so a worker cannot ask for a signature over anything but the bytes it shows; and (2) the signed
 * transaction those bytes become with a signature (`signedRawOf`), in the form `PreparedTx.raw` takes, so the one
 * decoder of each family (chains/<family>/explain.ts, the same that reads back every prepared transaction before it is
 * recorded) says what it does. No second decoder: the explainers also check the signature against the signing account,
 * so the assembly is checked by them too.
 *
 * Covered: EVM (EIP-1559), xrp, sol, sui. doge and zec come by their own request (`signUtxo`, every input at once:
 * actors/signer/utxo.ts), since their sighash needs what the bytes lack (the coin each input spends), which the
 * signer reads from its own KV treasury; a one-digest `sign` request for them is refused here (fail closed).
 */
import { Ed25519PublicKey } from "@mysten/sui/keypairs/ed25519";
import { messageWithIntent, toSerializedSignature } from "@mysten/sui/cryptography";
import { blake2b } from "@noble/hashes/blake2.js";
import { base64 } from "@scure/base";
import { bytesToHex, type Hex, hexToBytes, keccak256, parseTransaction, serializeTransaction } from "viem";
import { decode, encode, type Transaction } from "xrpl";
import { isEvmChain } from "./catalog.ts";
import type { SignerProtocolChain } from "./signer_protocol.ts";
import type { SecpSignature } from "./signer.ts";
import { encodeSuiRaw } from "./sui/payer.ts";
import { sha512Half } from "./xrp/payer.ts";

/** rippled's prefix of the bytes a single signature covers ("STX\0", HashPrefix.transactionSig). */
const XRP_SIGNING_PREFIX = "53545800";

export type AnySignature = SecpSignature | { format: "ed25519"; bytes: Uint8Array };

/** What the key must sign for `unsigned` on `chain`; throws when the bytes are not an unsigned transaction of ours. */
export function payloadOf(chain: SignerProtocolChain, unsigned: string): Uint8Array {
  if (isEvmChain(chain)) return hexToBytes(keccak256(evmUnsigned(unsigned)));
  switch (chain) {
    case "xrp":
      xrpFields(unsigned);
      return sha512Half(hexToBytes(`0x${unsigned}`));
    case "sol":
      return base64.decode(unsigned);
    case "sui":
      return blake2b(messageWithIntent("TransactionData", base64.decode(unsigned)), { dkLen: 32 });
    default:
      throw new Error(
        `${chain}: a UTXO transaction is signed by a signUtxo request, every input at once, never one digest`,
      );
  }
}

/** The signed transaction `unsigned` becomes with `sig` by the key `publicKey`, as the chain's payer records it. */
export function signedRawOf(
  chain: SignerProtocolChain,
  unsigned: string,
  sig: AnySignature,
  publicKey: Uint8Array,
): string {
  if (isEvmChain(chain)) {
    if (sig.format !== "recoverable") throw new Error(`${chain}: an EVM transaction takes a recoverable signature`);
    return serializeTransaction(parseTransaction(evmUnsigned(unsigned)), {
      r: bytesToHex(sig.bytes.slice(0, 32)),
      s: bytesToHex(sig.bytes.slice(32, 64)),
      yParity: sig.recovery,
    });
  }
  switch (chain) {
    case "xrp": {
      if (sig.format !== "der") throw new Error("xrp takes a DER signature");
      return encode({ ...xrpFields(unsigned), TxnSignature: bytesToHex(sig.bytes).slice(2).toUpperCase() });
    }
    case "sol": {
      if (sig.format !== "ed25519") throw new Error("sol takes an ed25519 signature");
      // The wire form of a one-signature transaction: compact-u16 count 1, the signature, the message.
      const message = base64.decode(unsigned);
      const wire = new Uint8Array(1 + 64 + message.length);
      wire[0] = 1;
      wire.set(sig.bytes, 1);
      wire.set(message, 65);
      return base64.encode(wire);
    }
    case "sui": {
      if (sig.format !== "ed25519") throw new Error("sui takes an ed25519 signature");
      const signature = toSerializedSignature({
        signature: sig.bytes,
        signatureScheme: "ED25519",
        publicKey: new Ed25519PublicKey(publicKey),
      });
      return encodeSuiRaw({ bytes: unsigned, signature });
    }
    default:
      throw new Error(`${chain}: not supported in signer mode`);
  }
}

/** An unsigned EIP-1559 transaction that re-serializes to exactly its own bytes (nothing hidden after it). */
function evmUnsigned(unsigned: string): Hex {
  if (!/^0x([0-9a-fA-F]{2})+$/.test(unsigned)) throw new Error("an EVM unsigned transaction is 0x-prefixed hex");
  const tx = parseTransaction(unsigned as Hex);
  if (tx.type !== "eip1559") throw new Error(`an EVM transaction of ours is EIP-1559, not ${tx.type}`);
  if (tx.r !== undefined || tx.s !== undefined) throw new Error("the EVM transaction is already signed");
  if (serializeTransaction(tx).toLowerCase() !== unsigned.toLowerCase()) {
    throw new Error("the EVM transaction is not the canonical serialization of what it decodes to");
  }
  return unsigned as Hex;
}

/** The fields of xrpl's `encodeForSigning` output: the signing prefix, then the canonical encoding of the fields. */
function xrpFields(unsigned: string): Transaction {
  if (!/^([0-9A-Fa-f]{2})+$/.test(unsigned) || !unsigned.toUpperCase().startsWith(XRP_SIGNING_PREFIX)) {
    throw new Error("an xrp unsigned transaction is hex starting with the single-signing prefix 53545800");
  }
  const body = unsigned.slice(XRP_SIGNING_PREFIX.length);
  const fields = decode(body) as unknown as Transaction & { TxnSignature?: string };
  if (fields.TxnSignature !== undefined) throw new Error("the xrp transaction is already signed");
  if (encode(fields).toUpperCase() !== body.toUpperCase()) {
    throw new Error("the xrp transaction is not the canonical encoding of what it decodes to");
  }
  return fields;
}
