/**
 * What a UTXO transaction signer gets and gives, one shape for both chains: doge_tx.ts (legacy P2PKH with
 * bitcoinjs-lib) and zec_tx.ts (v5 transparent with @bitgo/utxo-lib). The payer (payer.ts) plans the outputs with the
 * fee rule coin selection used; a signer only builds, signs and serialises, and never sees a private key: `keyFor`
 * gives the public key and a signing function over a 32-byte sighash (chains/signer.ts, low-S DER).
 *
 * Each family is also split into its three steps (`UtxoTxFamily`: build the unsigned transaction, compute each input's
 * sighash from the coins it spends, put the signatures in), so the same code serves a signer in this process and the
 * separate signer process (docs/operations.md "Roles", the signer process), which is shown the unsigned bytes and
 * recomputes every sighash itself from its own reading of the coins (actors/signer/utxo.ts).
 */
import type { PayoutCoin } from "../adapter.ts";
import type { UtxoNetwork } from "./network.ts";

export interface UtxoTxOutput {
  address: string;
  amount: bigint;
}

export interface UtxoTxPlan {
  /** Spent in this order; each is a P2PKH output of ours. */
  inputs: PayoutCoin[];
  /** In this order: the payout first, our change (if any) second. */
  outputs: UtxoTxOutput[];
  /** zec: `nExpiryHeight`. */
  expiryHeight?: number;
  /** zec: the consensus branch id the transaction commits to (read from the node). */
  branchId?: number;
}

export interface InputKey {
  /** 33-byte compressed public key; its P2PKH address must be the coin's address. */
  publicKey: Uint8Array;
  /** DER-encoded low-S signature of a 32-byte sighash (without the sighash-type byte). */
  sign(digest: Uint8Array): Uint8Array;
}

export interface SignedUtxoTx {
  /** Serialized transaction, hex. */
  raw: string;
  /** The txid as nodes show it (byte-reversed double-SHA256 for doge; ZIP-244 txid for zec v5). */
  txid: string;
}

export type UtxoTxSigner = (
  network: UtxoNetwork,
  plan: UtxoTxPlan,
  keyFor: (coin: PayoutCoin) => InputKey,
) => SignedUtxoTx;

/** What an input's SIGHASH_ALL digest commits to about the coin it spends: its P2PKH script and (zec) its amount. */
export interface SpentCoin {
  amount: bigint;
  script: Uint8Array;
}

/** One input's signature as it goes into its scriptSig: DER (without the hash type) and the 33-byte public key. */
export interface InputSignature {
  der: Uint8Array;
  publicKey: Uint8Array;
}

/** A family's signing, step by step (doge_tx.ts `DOGE_TX`, zec_tx.ts `ZEC_TX`). */
export interface UtxoTxFamily {
  /** The unsigned transaction of `plan` (hex, every scriptSig empty): what the signer process is shown. */
  build(network: UtxoNetwork, plan: UtxoTxPlan): string;
  /** Each input's SIGHASH_ALL digest of `unsigned`, `spent[i]` being the coin input i spends. */
  sighashes(network: UtxoNetwork, unsigned: string, spent: readonly SpentCoin[]): Uint8Array[];
  /** `unsigned` with input i's scriptSig <der SIGHASH_ALL> <public key> from `signatures[i]`. */
  assemble(network: UtxoNetwork, unsigned: string, signatures: readonly InputSignature[]): SignedUtxoTx;
}

/** The one place a P2PKH scriptSig is written: <DER signature || SIGHASH_ALL> <33-byte public key>, direct pushes. */
export function p2pkhScriptSig(sig: InputSignature): Uint8Array {
  const signature = Uint8Array.of(...sig.der, SIGHASH_ALL);
  const out = new Uint8Array(2 + signature.length + sig.publicKey.length);
  out.set(pushOf(signature), 0);
  out.set(pushOf(sig.publicKey), 1 + signature.length);
  return out;
}

/** SIGHASH_ALL, the only hash type the payer signs with (explain.ts refuses any other). */
export const SIGHASH_ALL = 0x01;

function pushOf(data: Uint8Array): Uint8Array {
  // A low-S DER signature with its hash type is at most 72 bytes, a compressed key 33: both under OP_PUSHDATA1's 0x4c.
  if (data.length >= 0x4c) throw new Error(`a ${data.length}-byte push is not a direct push`);
  const out = new Uint8Array(1 + data.length);
  out[0] = data.length;
  out.set(data, 1);
  return out;
}

/**
 * Signs `plan` in this process with `family`: every key is checked against its coin's address before anything is
 * signed (a coin we cannot prove ours is never signed for), then each input's sighash is signed by its key.
 */
export function signWith(
  family: UtxoTxFamily,
  addressOf: (network: UtxoNetwork, publicKey: Uint8Array) => string,
  scriptOf: (network: UtxoNetwork, address: string) => Uint8Array,
): UtxoTxSigner {
  return (network, plan, keyFor) => {
    // Built first: a plan the family refuses (another chain's network, no input) fails before any key is asked for.
    const unsigned = family.build(network, plan);
    const keys = plan.inputs.map((coin) => {
      const key = keyFor(coin);
      const address = addressOf(network, key.publicKey);
      if (address !== coin.address) {
        throw new Error(
          `${network.chain}: the key for coin ${coin.txHash}:${coin.index} is ${address}'s, it does not own the ` +
            `coin's address ${coin.address}: refusing to sign`,
        );
      }
      return key;
    });
    const spent = plan.inputs.map((coin) => ({ amount: coin.amount, script: scriptOf(network, coin.address) }));
    const digests = family.sighashes(network, unsigned, spent);
    return family.assemble(
      network,
      unsigned,
      digests.map((digest, i) => ({ der: keys[i].sign(digest), publicKey: keys[i].publicKey })),
    );
  };
}

/** The key that signs one input (by derivation index and branch) and the sighash it signs. */
export interface UtxoInputToSign {
  index: number;
  branch: "deposit" | "change";
  digest: Uint8Array;
}

/**
 * The UTXO payer's signing port: a Signer in this process (chains/signer.ts) or the signer process's client
 * (chains/signer_client.ts), which sends the unsigned transaction and each input's key, and whose signer recomputes
 * every sighash from its own reading of the coins before it signs.
 */
export interface UtxoSigningPort {
  /** Makes `publicKey` of that key answerable (a keyless worker asks the signer process once); absent in process. */
  loadKey?(chain: "doge" | "zec", index: number, branch: "deposit" | "change"): Promise<void>;
  publicKey(chain: "doge" | "zec", index: number, branch?: "deposit" | "change"): Uint8Array;
  /** One DER signature (low-S, without the hash type) per input of `unsigned`, in input order. */
  signUtxoInputs(
    chain: "doge" | "zec",
    unsigned: string,
    inputs: readonly UtxoInputToSign[],
  ): Uint8Array[] | Promise<Uint8Array[]>;
}
