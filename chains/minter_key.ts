/**
 * The EVM minter key in the signer process (docs/operations.md "Roles", the signer process): it signs 32-byte EVM
 * digests as the `minter` branch of the signer's protocol, like chains/signer.ts signs the mnemonic's keys, and never
 * hands the key out (a #private field; it prints as "MinterKey {}").
 */
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { hexToBytes } from "viem";
import type { SecpSignature } from "./signer.ts";

export class MinterKey {
  readonly #secret: Uint8Array;

  constructor(privateKey: `0x${string}`) {
    this.#secret = hexToBytes(privateKey);
    if (this.#secret.length !== 32) throw new Error("the EVM minter key must be 32 bytes");
  }

  /** 33 bytes, compressed. */
  publicKey(): Uint8Array {
    return secp256k1.getPublicKey(this.#secret, true);
  }

  signDigest(digest: Uint8Array): SecpSignature {
    if (digest.length !== 32) throw new Error(`the minter signs 32-byte digests, not ${digest.length} bytes`);
    const sig = secp256k1.sign(digest, this.#secret, { prehash: false, lowS: true, format: "recovered" });
    return { format: "recoverable", bytes: sig.slice(1), recovery: sig[0] as 0 | 1 };
  }

  toJSON(): string {
    return "[MinterKey]";
  }

  [Symbol.for("Deno.customInspect")](): string {
    return "MinterKey {}";
  }
}
