/**
 * Address formats of the native chains: the validation of burn destinations (spec 2.3) and the
 * base58check codecs that derivation.ts encodes deposit addresses with, so both sides agree on one format.
 */

import { base58, base58xrp, type BytesCoder } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { INVALID_ADDRESS_FORMAT } from "../messages.ts";
import { isNativeChain, isUtxoChain, type NativeChain } from "./catalog.ts";
import { decodeAddress, utxoNetwork, type UtxoNetworkName } from "./utxo/network.ts";
import { bitcoinBase58check } from "./shared/base58check.ts";

/** Version prefixes of the pay-to-pubkey-hash and pay-to-script-hash payloads we accept or produce. */
export const ADDRESS_VERSION = {
  xrpAccount: Uint8Array.of(0x00),
  dogeP2pkh: Uint8Array.of(0x1e), // "D..."
  dogeP2sh: Uint8Array.of(0x16), // "9..." or "A..."
  zecTransparentP2pkh: Uint8Array.of(0x1c, 0xb8), // "t1..."
} as const;

/**
 * The XRP Ledger's base58check: the same double-SHA256 checksum over the ripple alphabet.
 * @scure/base only pairs the checksum with the bitcoin alphabet, so the checksum is applied here.
 */
export const xrpBase58check: BytesCoder = {
  encode(data: Uint8Array): string {
    const out = new Uint8Array(data.length + 4);
    out.set(data);
    out.set(checksum(data), data.length);
    return base58xrp.encode(out);
  },
  decode(text: string): Uint8Array {
    const raw = base58xrp.decode(text);
    if (raw.length < 4) throw new Error("xrp base58check: too short");
    const payload = raw.subarray(0, raw.length - 4);
    const expected = checksum(payload);
    const actual = raw.subarray(raw.length - 4);
    if (!expected.every((b, i) => b === actual[i])) throw new Error("xrp base58check: wrong checksum");
    return Uint8Array.from(payload);
  },
};

function checksum(data: Uint8Array): Uint8Array {
  return sha256(sha256(data)).subarray(0, 4);
}

// The spec 2.3 table, verbatim.
const PATTERNS: Readonly<Record<NativeChain, RegExp>> = {
  sol: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/,
  xrp: /^r[1-9A-HJ-NP-Za-km-z]{24,33}$/,
  sui: /^0x[a-fA-F0-9]{64}$/,
  doge: /^[DA9][1-9A-HJ-NP-Za-km-z]{33}$/,
  zec: /^t1[1-9A-HJ-NP-Za-km-z]{33}$/,
};

// A pattern alone accepts typos; paying out to one loses the coins, so the encoding itself is checked too.
const ENCODING_VALID: Readonly<Record<NativeChain, (address: string) => boolean>> = {
  sol: (a) => decodes(() => base58.decode(a).length === 32),
  xrp: (a) =>
    decodes(() => {
      const payload = xrpBase58check.decode(a);
      return payload.length === 21 && startsWith(payload, ADDRESS_VERSION.xrpAccount);
    }),
  // Any 32-byte value is a valid Sui address; there is no checksum to verify.
  sui: () => true,
  doge: (a) =>
    decodes(() => {
      const payload = bitcoinBase58check.decode(a);
      return payload.length === 21 &&
        (startsWith(payload, ADDRESS_VERSION.dogeP2pkh) || startsWith(payload, ADDRESS_VERSION.dogeP2sh));
    }),
  zec: (a) =>
    decodes(() => {
      const payload = bitcoinBase58check.decode(a);
      return payload.length === 22 && startsWith(payload, ADDRESS_VERSION.zecTransparentP2pkh);
    }),
};

function decodes(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/**
 * null when `address` is a valid payout destination on `chain`, else the spec's message for that chain. `network`
 * (doge and zec only): mainnet holds addresses to the spec's patterns; regtest (a devnet node) takes that network's
 * P2PKH and P2SH addresses instead (doge "m"/"n"/"2", zec "tm"/"t2") and refuses mainnet ones, which no regtest
 * payout could reach. The message is the spec's either way.
 */
export function destinationAddressError(
  chain: NativeChain,
  address: string,
  network: UtxoNetworkName = "mainnet",
): string | null {
  if (!isNativeChain(chain)) throw new Error(`Unknown native chain: ${String(chain)}`);
  if (network !== "mainnet" && isUtxoChain(chain)) {
    const valid = typeof address === "string" && decodeAddress(utxoNetwork(chain, network), address) !== null;
    return valid ? null : INVALID_ADDRESS_FORMAT[chain];
  }
  if (typeof address !== "string" || !PATTERNS[chain].test(address) || !ENCODING_VALID[chain](address)) {
    return INVALID_ADDRESS_FORMAT[chain];
  }
  return null;
}

/** 0x followed by 40 hex digits in any case; mixed case is not held to EIP-55. */
export function isEvmAddress(value: string): boolean {
  return typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value);
}
