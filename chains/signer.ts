/**
 * Signs for the keys the operator mnemonic derives (chains/derivation.ts paths), by (chain, derivation index): the
 * deposit addresses of the native chains (sweeps, UTXO spends) and EVM accounts m/44'/60'/0'/0/index. Native adapters
 * sign through it and never see a key.
 *
 * Key handling: the parents of each chain's deposit keys live in #private fields (invisible to JSON, inspection and
 * property enumeration); a child key is derived per call and zeroed after signing. No method returns a private key,
 * and no error message carries one.
 */
import { HDKey } from "@scure/bip32";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { type EvmChain, isEvmChain, isUtxoChain, type NativeChain, type UtxoChain } from "./catalog.ts";
import {
  assertIndex,
  CHANGE_PARENT_PATHS,
  ed25519Child,
  ed25519Derive,
  type Ed25519Node,
  EVM_PARENT_PATH,
  evmAddressFromPublicKey,
  HOT_WALLET_PATHS,
  type KeyBranch,
  PARENT_PATHS,
  publicKeyToAddress,
  type SecpChain,
  seedFromMnemonic,
  type UtxoNetworks,
} from "./derivation.ts";
import type { UtxoNetworkName } from "./utxo/network.ts";
import type { SigningContext } from "./signing.ts";
import type { UtxoInputToSign } from "./utxo/tx.ts";

/** Chains whose keys are secp256k1 (`signDigest`). */
export type SecpSignerChain = SecpChain | EvmChain;
/** Chains whose keys are ed25519 (`signMessage`). */
export type EdSignerChain = "sol" | "sui";
export type SignerChain = SecpSignerChain | EdSignerChain;

/**
 * A secp256k1 signature, always low-S (BIP62/BIP146 for doge and zec, "fully canonical" for XRPL, EIP-2 for EVM):
 * - `der` (doge, zec, xrp): DER-encoded (r, s). doge/zec append the sighash-type byte themselves before putting it in
 *   the scriptSig; xrp puts it as is in `TxnSignature`.
 * - `recoverable` (EVM): `bytes` is r||s (64 bytes, big-endian) and `recovery` the y parity (0 or 1), as viem's
 *   `serializeTransaction(tx, { r, s, yParity })` takes them.
 */
export type SecpSignature =
  | { format: "der"; bytes: Uint8Array }
  | { format: "recoverable"; bytes: Uint8Array; recovery: 0 | 1 };

const SECP_DER_CHAINS: readonly SecpChain[] = ["xrp", "doge", "zec"];

export class Signer {
  readonly #secpParents: Readonly<Record<SecpChain | "evm", HDKey>>;
  readonly #edParents: Readonly<Record<EdSignerChain, Ed25519Node>>;
  readonly #changeParents: Readonly<Record<keyof typeof CHANGE_PARENT_PATHS, HDKey>>;
  /**
   * The parents of the hot wallets' keys (chains/derivation.ts `hotWalletPath`): xrp's and sui's; sol's hot key i is
   * m/44'/501'/i'/1', below the deposit parent.
   */
  readonly #hotXrpParent: HDKey;
  readonly #hotSuiParent: Ed25519Node;
  readonly #utxoNetworks: Readonly<Record<UtxoChain, UtxoNetworkName>>;

  private constructor(seed: Uint8Array, networks: UtxoNetworks) {
    this.#utxoNetworks = { doge: networks.doge ?? "mainnet", zec: networks.zec ?? "mainnet" };
    const master = HDKey.fromMasterSeed(seed);
    this.#secpParents = {
      xrp: master.derive(PARENT_PATHS.xrp),
      doge: master.derive(PARENT_PATHS.doge),
      zec: master.derive(PARENT_PATHS.zec),
      evm: master.derive(EVM_PARENT_PATH),
    };
    this.#changeParents = {
      doge: master.derive(CHANGE_PARENT_PATHS.doge),
      zec: master.derive(CHANGE_PARENT_PATHS.zec),
    };
    this.#hotXrpParent = master.derive(HOT_WALLET_PATHS.xrp.slice(0, HOT_WALLET_PATHS.xrp.lastIndexOf("/")));
    master.wipePrivateData();
    this.#edParents = { sol: ed25519Derive(seed, PARENT_PATHS.sol), sui: ed25519Derive(seed, PARENT_PATHS.sui) };
    this.#hotSuiParent = ed25519Derive(seed, HOT_WALLET_PATHS.sui.slice(0, HOT_WALLET_PATHS.sui.lastIndexOf("/")));
  }

  /**
   * Throws Error("Invalid master mnemonic") for a wrong word or checksum; the mnemonic is never echoed. `networks`:
   * the address network of doge and zec (`address`), as the Deriver's; unset, mainnet.
   */
  static fromMnemonic(mnemonic: string, networks: UtxoNetworks = {}): Signer {
    const seed = seedFromMnemonic(mnemonic);
    try {
      return new Signer(seed, networks);
    } finally {
      seed.fill(0);
    }
  }

  /**
   * Signs a 32-byte `digest` the chain defines (doge/zec: the sighash; xrp: SHA-512Half of the signing prefix and
   * the transaction; EVM: keccak256 of the unsigned transaction). It is signed as is, never hashed again.
   */
  signDigest(
    chain: SecpSignerChain,
    index: number,
    digest: Uint8Array,
    branch: KeyBranch = "deposit",
    /** The port's unsigned bytes (chains/signing.ts): for the signer process's checks; a process's own Signer signs as asked. */
    _context?: SigningContext,
  ): SecpSignature {
    if (!(digest instanceof Uint8Array) || digest.length !== 32) {
      throw new Error(`signDigest needs a 32-byte digest, got ${digest?.length ?? typeof digest} bytes`);
    }
    const node = this.#secpChild(chain, index, branch);
    try {
      const secret = node.privateKey!;
      if (isEvmChain(chain)) {
        // "recovered" is recovery byte || r || s.
        const sig = secp256k1.sign(digest, secret, { prehash: false, lowS: true, format: "recovered" });
        return { format: "recoverable", bytes: sig.slice(1), recovery: sig[0] as 0 | 1 };
      }
      return { format: "der", bytes: secp256k1.sign(digest, secret, { prehash: false, lowS: true, format: "der" }) };
    } finally {
      node.wipePrivateData();
    }
  }

  /**
   * Signs `message` with ed25519 (which hashes internally): sol the serialized transaction message, sui the
   * BLAKE2b-256 digest of its intent message. Returns the 64-byte signature.
   */
  signMessage(
    chain: EdSignerChain,
    index: number,
    message: Uint8Array,
    branch: KeyBranch = "deposit",
    _context?: SigningContext,
  ): Uint8Array {
    if (!(message instanceof Uint8Array)) throw new Error("signMessage needs bytes");
    const node = this.#edChild(chain, index, branch);
    try {
      return ed25519.sign(message, node.key);
    } finally {
      node.key.fill(0);
    }
  }

  /**
   * The public key at `index`: 32 bytes (ed25519) or 33 bytes compressed (secp256k1). `branch` "change" is the UTXO
   * chains' internal chain (chains/derivation.ts `CHANGE_PARENT_PATHS`); "hot" an account chain's hot wallet
   * at derivation index `index` (`hotWalletPath`).
   */
  publicKey(chain: SignerChain, index: number, branch: KeyBranch = "deposit"): Uint8Array {
    if (chain === "sol" || chain === "sui") {
      const node = this.#edChild(chain, index, branch);
      try {
        return ed25519.getPublicKey(node.key);
      } finally {
        node.key.fill(0);
      }
    }
    const node = this.#secpChild(chain, index, branch);
    try {
      return node.publicKey!;
    } finally {
      node.wipePrivateData();
    }
  }

  /**
   * The UTXO payer's port (chains/utxo/tx.ts `UtxoSigningPort`): each input's sighash signed by its key, DER. In this
   * process the unsigned bytes are not read (the payer computed the sighashes from them); the signer process's
   * client sends them instead, and that process recomputes every sighash itself.
   */
  signUtxoInputs(chain: UtxoChain, _unsigned: string, inputs: readonly UtxoInputToSign[]): Uint8Array[] {
    return inputs.map((input) => {
      const sig = this.signDigest(chain, input.index, input.digest, input.branch);
      if (sig.format !== "der") throw new Error(`${chain}: a ${sig.format} signature, not DER`);
      return sig.bytes;
    });
  }

  /** The address at `index`: the deposit address Deriver gives for a native chain, EIP-55 for an EVM chain. */
  address(chain: SignerChain, index: number, branch: KeyBranch = "deposit"): string {
    const publicKey = this.publicKey(chain, index, branch);
    if (isEvmChain(chain)) return evmAddressFromPublicKey(publicKey);
    return publicKeyToAddress(
      chain as NativeChain,
      publicKey,
      isUtxoChain(chain) ? this.#utxoNetworks[chain] : "mainnet",
    );
  }

  #secpChild(chain: SecpSignerChain, index: number, branch: KeyBranch = "deposit"): HDKey {
    assertIndex(index);
    if (branch === "change") {
      if (chain !== "doge" && chain !== "zec") throw new Error(`No change keys on chain ${String(chain)}`);
      return this.#changeParents[chain].deriveChild(index);
    }
    if (branch === "hot") {
      if (chain !== "xrp") throw new Error(`No secp256k1 hot wallet on chain ${String(chain)}`);
      return this.#hotXrpParent.deriveChild(index);
    }
    if (isEvmChain(chain)) return this.#secpParents.evm.deriveChild(index);
    if (!SECP_DER_CHAINS.includes(chain)) throw new Error(`No secp256k1 key for chain ${String(chain)}`);
    return this.#secpParents[chain].deriveChild(index);
  }

  #edChild(chain: EdSignerChain, index: number, branch: KeyBranch = "deposit"): Ed25519Node {
    assertIndex(index);
    if (branch === "hot") {
      switch (chain) {
        case "sol": {
          // m/44'/501'/index'/1': the second change level of the account the deposit key index' uses at 0'.
          const account = ed25519Child(this.#edParents.sol, index);
          const node = ed25519Child(account, 1);
          account.key.fill(0);
          return node;
        }
        case "sui":
          return ed25519Child(this.#hotSuiParent, index);
        default:
          throw new Error(`No ed25519 hot wallet on chain ${String(chain)}`);
      }
    }
    if (branch === "change") throw new Error(`No change keys on chain ${String(chain)}`);
    switch (chain) {
      case "sol": {
        // m/44'/501'/index'/0'
        const account = ed25519Child(this.#edParents.sol, index);
        const node = ed25519Child(account, 0);
        account.key.fill(0);
        return node;
      }
      case "sui":
        return ed25519Child(this.#edParents.sui, index);
      default:
        throw new Error(`No ed25519 key for chain ${String(chain)}`);
    }
  }

  toJSON(): string {
    return "[Signer]";
  }

  [Symbol.for("Deno.customInspect")](): string {
    return "Signer {}";
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Signer {}";
  }
}
