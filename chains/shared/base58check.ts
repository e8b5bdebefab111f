// The base58check codec Dogecoin and Zcash transparent addresses share: chains/addresses.ts validates with it and
// chains/utxo/network.ts encodes deposit addresses with it, so both sides agree on one format.
import { type BytesCoder, createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";

/** Bitcoin-alphabet base58check (4-byte double-SHA256 checksum), as used by Dogecoin and Zcash transparent addresses. */
export const bitcoinBase58check: BytesCoder = createBase58check(sha256);
