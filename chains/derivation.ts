/**
 * Deposit addresses and the EVM transfer address, all derived from the one operator mnemonic (docs/architecture.md
 * "Chains").
 *
 * Paths: sol m/44'/501'/i'/0', sui m/44'/784'/0'/0'/i' (SLIP-0010 ed25519, hardened only);
 * xrp m/44'/144'/0'/0/i, doge m/44'/3'/0'/0/i, zec m/44'/133'/0'/0/i (BIP32 secp256k1);
 * the EVM account m/44'/60'/0'/0/0.
 *
 * Only addresses and public keys leave this module. Private keys and chain codes live in #private fields of a
 * Deriver and are never returned, serialised, printed or put in an error message.
 */

import { HDKey } from "@scure/bip32";
import { mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { base58 } from "@scure/base";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { hmac } from "@noble/hashes/hmac.js";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { isUtxoChain, type NativeChain, type UtxoChain } from "./catalog.ts";
import { ADDRESS_VERSION, xrpBase58check } from "./addresses.ts";
import { p2pkhAddress, utxoNetwork, type UtxoNetworkName } from "./utxo/network.ts";

/** The EVM account `index` is m/44'/60'/0'/0/index (chains/signer.ts); index 0 is the shared transfer address. */
export const EVM_PARENT_PATH = "m/44'/60'/0'/0";
export const DEFAULT_EVM_PATH = `${EVM_PARENT_PATH}/0`;

/** Largest deposit index: indexes are used as (hardened) BIP32 child numbers, which have 31 bits. */
export const MAX_DEPOSIT_INDEX = 0x7fffffff;

/**
 * The derivation index of the operator's change address on the UTXO chains (the sim hot wallet; a live payer's own
 * change key): the key that signs the spend of every output our transactions pay back to us.
 */
export const CHANGE_DERIVATION_INDEX = 0;

const HARDENED = 0x80000000;

/** The per-chain parent node every deposit address is one (sol: two) child derivations below. */
export const PARENT_PATHS = {
  sol: "m/44'/501'",
  sui: "m/44'/784'/0'/0'",
  xrp: "m/44'/144'/0'/0",
  doge: "m/44'/3'/0'/0",
  zec: "m/44'/133'/0'/0",
} as const satisfies Record<NativeChain, string>;

export type SecpChain = "xrp" | "doge" | "zec";

/**
 * The UTXO chains' change keys: BIP44's internal chain (`.../1/i`) beside the deposit addresses' external chain
 * (`.../0/i`), so change never lands on a partner's deposit address. Index 0 is the one change address per chain.
 */
export const CHANGE_PARENT_PATHS = {
  doge: "m/44'/3'/0'/1",
  zec: "m/44'/133'/0'/1",
} as const;

/** The address network per UTXO chain (config/chain_mode.ts `ChainPlan.utxoNetworks`); a missing chain is mainnet. */
export type UtxoNetworks = Partial<Record<UtxoChain, UtxoNetworkName>>;

/**
 * The account chains' hot wallets (sol, xrp, sui) at index 0: the key that sweeps fund and payouts leave from, outside
 * every deposit path (another account, or sol's second change level), so no deposit index ever reaches it. A rotation
 * (docs/operations.md "Rotating a hot wallet") moves to index i of the same branch (`hotWalletPath`): index 0 is the
 * path every deployment before rotations used, so it keeps its address.
 */
export const HOT_WALLET_PATHS = {
  sol: "m/44'/501'/0'/1'",
  sui: "m/44'/784'/1'/0'/0'",
  xrp: "m/44'/144'/1'/0/0",
} as const;

/** The hot wallet's path at derivation index `index`: the last level of `HOT_WALLET_PATHS` (sol: the account). */
export function hotWalletPath(chain: keyof typeof HOT_WALLET_PATHS, index: number): string {
  assertIndex(index);
  switch (chain) {
    case "sol":
      return `m/44'/501'/${index}'/1'`;
    case "sui":
      return `m/44'/784'/1'/0'/${index}'`;
    case "xrp":
      return `m/44'/144'/1'/0/${index}`;
  }
}

/**
 * Which key of a chain: a deposit address's (external chain, by index), our UTXO change (internal chain, doge and
 * zec), or an account chain's hot wallet (`hotWalletPath`, by the index in effect: kv/hot_wallets.ts).
 */
export type KeyBranch = "deposit" | "change" | "hot";

// ---------------------------------------------------------------- SLIP-0010 ed25519

/** Private key material: only chains/signer.ts holds one outside this module, in a #private field. */
export interface Ed25519Node {
  key: Uint8Array;
  chainCode: Uint8Array;
}

const ED25519_SEED_KEY = new TextEncoder().encode("ed25519 seed");

function ed25519Master(seed: Uint8Array): Ed25519Node {
  const I = hmac(sha512, ED25519_SEED_KEY, seed);
  return { key: I.slice(0, 32), chainCode: I.slice(32) };
}

/** SLIP-0010 ed25519 child: hardened only (`index` is the unhardened number). */
export function ed25519Child(parent: Ed25519Node, index: number): Ed25519Node {
  const data = new Uint8Array(37);
  data.set(parent.key, 1); // data[0] = 0x00
  new DataView(data.buffer).setUint32(33, (index | HARDENED) >>> 0, false);
  const I = hmac(sha512, parent.chainCode, data);
  data.fill(0);
  return { key: I.slice(0, 32), chainCode: I.slice(32) };
}

function parseHardenedPath(path: string): number[] {
  const parts = path.split("/");
  if (parts[0] !== "m") throw new Error(`Invalid derivation path: ${path}`);
  return parts.slice(1).map((part) => {
    const m = /^(\d+)'$/.exec(part);
    const n = m ? Number(m[1]) : NaN;
    if (!Number.isSafeInteger(n) || n >= HARDENED) {
      throw new Error(`Invalid derivation path (ed25519 needs hardened indexes): ${path}`);
    }
    return n;
  });
}

export function ed25519Derive(seed: Uint8Array, path: string): Ed25519Node {
  let node = ed25519Master(seed);
  for (const index of parseHardenedPath(path)) {
    const child = ed25519Child(node, index);
    node.key.fill(0);
    node = child;
  }
  return node;
}

/** The 32-byte ed25519 public key SLIP-0010 derives at `path` (all hardened) from a BIP39 seed. */
export function slip10Ed25519PublicKey(seed: Uint8Array, path: string): Uint8Array {
  const node = ed25519Derive(seed, path);
  const publicKey = ed25519.getPublicKey(node.key);
  node.key.fill(0);
  return publicKey;
}

// ---------------------------------------------------------------- public key -> address

function hash160(bytes: Uint8Array): Uint8Array {
  return ripemd160(sha256(bytes));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The chain's address for a public key: 32-byte ed25519 key for sol and sui, 33-byte compressed secp256k1 key
 * for xrp, doge and zec. `network` applies to doge and zec (chains/utxo/network.ts): mainnet unless a devnet
 * regtest node runs the chain.
 */
export function publicKeyToAddress(
  chain: NativeChain,
  publicKey: Uint8Array,
  network: UtxoNetworkName = "mainnet",
): string {
  const ed = chain === "sol" || chain === "sui";
  if (publicKey.length !== (ed ? 32 : 33)) throw new Error(`Wrong public key length for ${chain}`);
  switch (chain) {
    case "sol":
      return base58.encode(publicKey);
    case "sui":
      // flag byte 0x00 = ed25519 signature scheme
      return "0x" + toHex(blake2b(concat(Uint8Array.of(0x00), publicKey), { dkLen: 32 }));
    case "xrp":
      return xrpBase58check.encode(concat(ADDRESS_VERSION.xrpAccount, hash160(publicKey)));
    case "doge":
    case "zec":
      return p2pkhAddress(utxoNetwork(chain, network), publicKey);
    default:
      throw new Error(`Unknown native chain: ${String(chain)}`);
  }
}

/** EIP-55 checksummed address of a secp256k1 public key (compressed or uncompressed). */
export function evmAddressFromPublicKey(publicKey: Uint8Array): `0x${string}` {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return toChecksumAddress(toHex(keccak_256(uncompressed.subarray(1)).subarray(12)));
}

function toChecksumAddress(lowerHex: string): `0x${string}` {
  const hash = toHex(keccak_256(new TextEncoder().encode(lowerHex)));
  let out = "0x";
  for (let i = 0; i < lowerHex.length; i++) {
    out += parseInt(hash[i], 16) >= 8 ? lowerHex[i].toUpperCase() : lowerHex[i];
  }
  return out as `0x${string}`;
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------- Deriver

/**
 * The BIP39 seed of the operator mnemonic; the caller zeroes it after use. Throws Error("Invalid master mnemonic")
 * for a wrong word or checksum; the mnemonic is never echoed.
 */
export function seedFromMnemonic(mnemonic: string): Uint8Array {
  let normalized: string;
  try {
    // A mnemonic from an env var or file may carry stray whitespace; BIP39 words are single-space separated.
    normalized = mnemonic.normalize("NFKD").trim().split(/\s+/).join(" ");
    if (!validateMnemonic(normalized, wordlist)) throw new Error();
  } catch {
    throw new Error("Invalid master mnemonic");
  }
  return mnemonicToSeedSync(normalized);
}

export function assertIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) {
    throw new RangeError(`Deposit index must be an integer from 0 to ${MAX_DEPOSIT_INDEX}`);
  }
}

export class Deriver {
  // secp256k1 master: needed for arbitrary EVM paths. Never leaves the instance.
  readonly #master: HDKey;
  // Public-only (xpub) parents: secp256k1 deposit addresses need no private key.
  readonly #secpParents: Readonly<Record<SecpChain, HDKey>>;
  // ed25519 is hardened-only, so these parents necessarily hold private keys.
  readonly #solParent: Ed25519Node;
  readonly #suiParent: Ed25519Node;
  readonly #evmAddresses = new Map<string, `0x${string}`>();
  readonly #utxoNetworks: Readonly<Record<UtxoChain, UtxoNetworkName>>;

  private constructor(seed: Uint8Array, networks: UtxoNetworks) {
    this.#utxoNetworks = { doge: networks.doge ?? "mainnet", zec: networks.zec ?? "mainnet" };
    this.#master = HDKey.fromMasterSeed(seed);
    const xpub = (path: string) => HDKey.fromExtendedKey(this.#master.derive(path).publicExtendedKey);
    this.#secpParents = {
      xrp: xpub(PARENT_PATHS.xrp),
      doge: xpub(PARENT_PATHS.doge),
      zec: xpub(PARENT_PATHS.zec),
    };
    this.#solParent = ed25519Derive(seed, PARENT_PATHS.sol);
    this.#suiParent = ed25519Derive(seed, PARENT_PATHS.sui);
  }

  /**
   * Throws Error("Invalid master mnemonic") for a wrong word or checksum; the mnemonic is never echoed. `networks`:
   * the address network of doge and zec deposit addresses (the chain plan's `utxoNetworks`); unset, mainnet.
   */
  static fromMnemonic(mnemonic: string, networks: UtxoNetworks = {}): Deriver {
    const seed = seedFromMnemonic(mnemonic);
    try {
      return new Deriver(seed, networks);
    } finally {
      seed.fill(0);
    }
  }

  /** The deposit address number `index` (0..2^31-1) on `chain`. */
  depositAddress(chain: NativeChain, index: number): string {
    assertIndex(index);
    switch (chain) {
      case "sol": {
        const account = ed25519Child(this.#solParent, index);
        const node = ed25519Child(account, 0);
        account.key.fill(0);
        return publicKeyToAddress("sol", publicKeyOf(node));
      }
      case "sui":
        return publicKeyToAddress("sui", publicKeyOf(ed25519Child(this.#suiParent, index)));
      case "xrp":
      case "doge":
      case "zec":
        return publicKeyToAddress(
          chain,
          this.#secpParents[chain].deriveChild(index).publicKey!,
          isUtxoChain(chain) ? this.#utxoNetworks[chain] : "mainnet",
        );
      default:
        throw new Error(`Unknown native chain: ${String(chain)}`);
    }
  }

  /** EIP-55 checksummed address of the secp256k1 key at `path`; the default is the shared uAsset transfer address. */
  evmAddress(path: string = DEFAULT_EVM_PATH): `0x${string}` {
    let address = this.#evmAddresses.get(path);
    if (address === undefined) {
      address = evmAddressFromPublicKey(this.#master.derive(path).publicKey!);
      this.#evmAddresses.set(path, address);
    }
    return address;
  }

  toJSON(): string {
    return "[Deriver]";
  }

  [Symbol.for("Deno.customInspect")](): string {
    return "Deriver {}";
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Deriver {}";
  }
}

function publicKeyOf(node: Ed25519Node): Uint8Array {
  const publicKey = ed25519.getPublicKey(node.key);
  node.key.fill(0);
  return publicKey;
}
