/**
 * The networks the UTXO adapters run on (doge, zec), and the one place for their address encodings: version bytes,
 * address <-> output script, public key -> P2PKH address. Pure: no node, no KV.
 *
 * - `mainnet`: the real chains (CHAIN_MODE=live; the sim encodes its addresses the same way).
 * - `regtest`: a local test node (CHAIN_MODE=devnet only, proven by the node's own `getblockchaininfo.chain`).
 *   Dogecoin's regtest shares Bitcoin's testnet/regtest P2PKH version (111, "m"/"n"), so Debian's `litecoind`
 *   regtest (also 111 for P2PKH) accepts our doge regtest payouts and pays our doge regtest deposit addresses: the
 *   Bitcoin-Core-family node the tests run. Zcash regtest (Zebra) uses the testnet prefixes ("tm", "t2").
 *
 * Facts: Dogecoin chainparams.cpp (mainnet P2PKH 0x1e "D", P2SH 0x16 "9"/"A", WIF 0x9e; regtest 111/196/239), Zcash
 * chainparams (mainnet t1 = 0x1cb8, t3 = 0x1cbd, WIF 0x80; testnet/regtest tm = 0x1d25, t2 = 0x1cba, WIF 0xef). Both
 * match @bitgo/utxo-lib's `networks` (which has Dogecoin *testnet*'s 0x71, not regtest's 111: not used here).
 */
import { concatBytes } from "@noble/hashes/utils.js";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bitcoinBase58check } from "../shared/base58check.ts";
import type { UtxoChain } from "../catalog.ts";

export const UTXO_NETWORK_NAMES = ["mainnet", "regtest"] as const;
export type UtxoNetworkName = typeof UTXO_NETWORK_NAMES[number];

export interface UtxoNetwork {
  chain: UtxoChain;
  name: UtxoNetworkName;
  /** Version bytes of a P2PKH address (1 byte doge, 2 bytes zec). */
  p2pkh: Uint8Array;
  /** Version bytes of a P2SH address. */
  p2sh: Uint8Array;
  /** WIF version byte (never used to export a key: for the libraries' network objects). */
  wif: number;
  /** What the node's `getblockchaininfo.chain` answers on this network. */
  nodeChainNames: readonly string[];
}

const v = (...bytes: number[]) => Uint8Array.from(bytes);

export const UTXO_NETWORKS: Readonly<Record<UtxoChain, Readonly<Record<UtxoNetworkName, UtxoNetwork>>>> = {
  doge: {
    mainnet: { chain: "doge", name: "mainnet", p2pkh: v(0x1e), p2sh: v(0x16), wif: 0x9e, nodeChainNames: ["main"] },
    regtest: { chain: "doge", name: "regtest", p2pkh: v(0x6f), p2sh: v(0xc4), wif: 0xef, nodeChainNames: ["regtest"] },
  },
  zec: {
    mainnet: {
      chain: "zec",
      name: "mainnet",
      p2pkh: v(0x1c, 0xb8),
      p2sh: v(0x1c, 0xbd),
      wif: 0x80,
      // zcashd said "main"; Zebra says "main" too (its `getblockchaininfo` follows zcashd's shape).
      nodeChainNames: ["main"],
    },
    regtest: {
      chain: "zec",
      name: "regtest",
      p2pkh: v(0x1d, 0x25),
      p2sh: v(0x1c, 0xba),
      wif: 0xef,
      // Zebra answers `network.bip70_network_name()`: "main" on mainnet, "test" on testnet AND regtest (zebra-chain
      // Network). Both test networks share these prefixes and carry no value; zcashd said "regtest".
      nodeChainNames: ["regtest", "test"],
    },
  },
};

export function utxoNetwork(chain: UtxoChain, name: UtxoNetworkName = "mainnet"): UtxoNetwork {
  return UTXO_NETWORKS[chain][name];
}

export function hash160(bytes: Uint8Array): Uint8Array {
  return ripemd160(sha256(bytes));
}

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The P2PKH address of a 33-byte compressed public key. */
export function p2pkhAddress(network: UtxoNetwork, publicKey: Uint8Array): string {
  if (publicKey.length !== 33) throw new Error(`${network.chain}: a P2PKH key is 33 bytes compressed`);
  return bitcoinBase58check.encode(concatBytes(network.p2pkh, hash160(publicKey)));
}

export type DecodedAddress = { type: "p2pkh" | "p2sh"; hash: Uint8Array };

/** The kind and 20-byte hash of a transparent address of this network, or null (other network, typo, other kind). */
export function decodeAddress(network: UtxoNetwork, address: string): DecodedAddress | null {
  let raw: Uint8Array;
  try {
    raw = bitcoinBase58check.decode(address);
  } catch {
    return null;
  }
  for (const [type, version] of [["p2pkh", network.p2pkh], ["p2sh", network.p2sh]] as const) {
    if (raw.length === version.length + 20 && equal(raw.subarray(0, version.length), version)) {
      return { type, hash: raw.slice(version.length) };
    }
  }
  return null;
}

/** The output script paying `address`; throws for an address that is not one of this network's. */
export function outputScript(network: UtxoNetwork, address: string): Uint8Array {
  const decoded = decodeAddress(network, address);
  if (!decoded) throw new Error(`${network.chain} ${network.name}: ${address} is not a transparent address`);
  return decoded.type === "p2pkh"
    // OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG
    ? concatBytes(v(0x76, 0xa9, 0x14), decoded.hash, v(0x88, 0xac))
    // OP_HASH160 <20> OP_EQUAL
    : concatBytes(v(0xa9, 0x14), decoded.hash, v(0x87));
}

/**
 * The address an output script pays, or null for anything that is not plain P2PKH or P2SH (P2PK, bare multisig,
 * OP_RETURN, witness programs, non-standard): such outputs are never credited, and ignored safely.
 */
export function scriptAddress(network: UtxoNetwork, script: Uint8Array): string | null {
  if (
    script.length === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[2] === 0x14 && script[23] === 0x88 &&
    script[24] === 0xac
  ) {
    return bitcoinBase58check.encode(concatBytes(network.p2pkh, script.subarray(3, 23)));
  }
  if (script.length === 23 && script[0] === 0xa9 && script[1] === 0x14 && script[22] === 0x87) {
    return bitcoinBase58check.encode(concatBytes(network.p2sh, script.subarray(2, 22)));
  }
  return null;
}
