/**
 * Zcash payouts: v5 (ZIP-225) transparent-only transactions spending our P2PKH coins, signed per ZIP-244.
 *
 * - @bitgo/utxo-lib 11.24.0 builds and serialises the transaction (`createTransactionBuilderForNetwork(zcash,
 *   {version: 552})`, the v5 defaults: version group 0x26a7270a; then our branch id and `nExpiryHeight`).
 * - The signature digest is ours (zec_zip244.ts), NOT the library's: the library's v5 `hashForSignatureByNetwork`
 *   follows an early ZIP-244 draft (no hash type, input amounts or scripts committed to) and nodes reject signatures
 *   over it (tests/zec_zip244_vectors_test.ts shows both facts against the official vectors). The scriptSig is
 *   assembled here: <DER signature || SIGHASH_ALL> <33-byte public key>, from `keyFor(coin)`; no private key ever
 *   reaches the library.
 * - The txid is the ZIP-244 txid (non-malleable: it does not cover the scriptSigs); ours and the library's are
 *   cross-checked on every signature.
 * - The consensus branch id is committed to by every signature; we sign only for branch ids we know (ZIP-244 is the
 *   digest algorithm for all of them), so an unknown network upgrade stops payouts with `UnknownBranchIdError` instead
 *   of producing transactions the node rejects.
 */
import * as utxolib from "@bitgo/utxo-lib";
import { ChainError } from "../errors.ts";
import { outputScript, p2pkhAddress, type UtxoNetwork } from "./network.ts";
import { p2pkhScriptSig, signWith, type UtxoTxFamily, type UtxoTxSigner } from "./tx.ts";
import { fromHex, parseZecV5, SIGHASH_ALL, toHex, transparentSighash, zecTxid } from "./zec_zip244.ts";

/** Consensus branch ids (ZIP-200 family) whose transactions are v5 with ZIP-244 digests. */
export const ZEC_BRANCH_IDS: Readonly<Record<string, number>> = {
  NU5: 0xc2d6d0b4, // ZIP-252
  NU6: 0xc8e71055, // ZIP-253
  "NU6.1": 0x4dec4df0, // ZIP-255
  "NU6.2": 0x5437f330,
  "NU6.3": 0x37a5165b,
};

export function branchIdHex(branchId: number): string {
  return "0x" + (branchId >>> 0).toString(16).padStart(8, "0");
}

export function branchName(branchId: number): string | null {
  return Object.entries(ZEC_BRANCH_IDS).find(([, id]) => id === branchId)?.[0] ?? null;
}

export class UnknownBranchIdError extends ChainError {
  constructor(readonly branchId: number) {
    super(
      `zec: the node says the next block is validated under consensus branch id ${branchIdHex(branchId)}, which this ` +
        `service does not know (known: ${
          Object.entries(ZEC_BRANCH_IDS).map(([n, id]) => `${n} ${branchIdHex(id)}`).join(", ")
        }). A network upgrade we were not updated for has activated or is about to: payouts are refused until the ` +
        `branch id and its signature rules are added to chains/utxo/zec_tx.ts.`,
      { chain: "zec" },
    );
    this.name = "UnknownBranchIdError";
  }
}

/** Throws `UnknownBranchIdError` unless `branchId` is one we sign for. */
export function assertKnownBranchId(branchId: number): void {
  if (branchName(branchId) === null) throw new UnknownBranchIdError(branchId);
}

/** v5, NU6.2's version defaults in the library (version group id; our branch id replaces its default). */
const LIBRARY_V5_VERSION = 552;
/** ZIP-203: nExpiryHeight must be below 500,000,000. */
const MAX_EXPIRY_HEIGHT = 499_999_999;
const SEQUENCE_FINAL = 0xffffffff;

function libraryNetwork(network: UtxoNetwork): utxolib.bitgo.ZcashNetwork {
  return network.name === "mainnet" ? utxolib.networks.zcash : utxolib.networks.zcashTest;
}

/** The library's reading of `unsigned`, a v5 transaction for a branch id we sign for. */
function libraryTx(network: UtxoNetwork, bytes: Uint8Array): utxolib.bitgo.ZcashTransaction<bigint> {
  const tx = utxolib.bitgo.ZcashTransaction.fromBuffer<bigint>(
    Buffer.from(bytes),
    false,
    "bigint",
    libraryNetwork(network),
  );
  if (tx.version !== 5) throw new Error(`zec: a v${tx.version} transaction; the payer builds v5 only`);
  return tx;
}

/** Our parse of `unsigned` (v5, no trailing bytes), for a branch id we sign for. */
function parseUnsigned(network: UtxoNetwork, unsigned: string) {
  if (network.chain !== "zec") throw new Error(`zec signing, not ${network.chain}`);
  const parsed = parseZecV5(fromHex(unsigned));
  assertKnownBranchId(parsed.consensusBranchId);
  return parsed;
}

/** Builds and signs v5 transactions step by step: see the module comment. */
export const ZEC_TX: UtxoTxFamily = {
  build(network, plan) {
    if (network.chain !== "zec") throw new Error(`signZecTx signs zec only, not ${network.chain}`);
    if (plan.branchId === undefined) throw new Error("zec: a payout needs the consensus branch id it commits to");
    assertKnownBranchId(plan.branchId);
    const expiry = plan.expiryHeight;
    if (expiry === undefined || !Number.isSafeInteger(expiry) || expiry <= 0 || expiry > MAX_EXPIRY_HEIGHT) {
      throw new Error(`zec: a payout needs an expiry height between 1 and ${MAX_EXPIRY_HEIGHT}, got ${expiry}`);
    }
    if (plan.inputs.length === 0) throw new Error("zec: a payout spends at least one coin");
    if (plan.outputs.length === 0) throw new Error("zec: a payout has at least one output");

    const txb = utxolib.bitgo.createTransactionBuilderForNetwork<bigint>(libraryNetwork(network), {
      version: LIBRARY_V5_VERSION,
    }) as utxolib.bitgo.ZcashTransactionBuilder<bigint>;
    txb.setConsensusBranchId(plan.branchId);
    txb.setExpiryHeight(expiry);
    plan.inputs.forEach((coin) => {
      if (coin.amount <= 0n) throw new Error(`zec: coin ${coin.txHash}:${coin.index} has no value`);
      if (!/^[0-9a-f]{64}$/.test(coin.txHash)) throw new Error(`zec: coin txid ${coin.txHash} is not 64 hex digits`);
      // The library takes the previous txid in internal byte order, the reverse of the displayed one.
      const script = Buffer.from(outputScript(network, coin.address));
      txb.addInput(Buffer.from(fromHex(coin.txHash).reverse()), coin.index, SEQUENCE_FINAL, script);
    });
    for (const out of plan.outputs) {
      if (out.amount <= 0n) throw new Error(`zec: output to ${out.address} must be positive, got ${out.amount}`);
      txb.addOutput(Buffer.from(outputScript(network, out.address)), out.amount);
    }
    const tx = txb.buildIncomplete();
    if (tx.version !== 5 || tx.consensusBranchId !== plan.branchId) {
      throw new Error("zec: the library did not build a v5 transaction for the branch id asked");
    }
    return toHex(tx.toBuffer());
  },

  sighashes(network, unsigned, spent) {
    const parsed = parseUnsigned(network, unsigned);
    const coins = spent.map((s) => ({ value: s.amount, script: s.script }));
    return parsed.inputs.map((_, i) => transparentSighash(parsed, i, coins, SIGHASH_ALL));
  },

  assemble(network, unsigned, signatures) {
    parseUnsigned(network, unsigned);
    const tx = libraryTx(network, fromHex(unsigned));
    if (signatures.length !== tx.ins.length) throw new Error("zec: every input needs its signature");
    signatures.forEach((sig, i) => tx.ins[i].script = Buffer.from(p2pkhScriptSig(sig)));
    const raw = tx.toBuffer();
    const txid = zecTxid(parseZecV5(raw));
    if (txid !== tx.getId()) throw new Error("zec: our ZIP-244 txid and the library's disagree; refusing to send");
    return { raw: toHex(raw), txid };
  },
};

/** Builds and signs the v5 transaction of `plan` in this process: see the module comment. */
export const signZecTx: UtxoTxSigner = signWith(ZEC_TX, p2pkhAddress, outputScript);

const ZIP317_MARGINAL_FEE = 5_000n;
const ZIP317_GRACE_ACTIONS = 2;
const ZIP317_P2PKH_STANDARD_INPUT_SIZE = 150;
const ZIP317_P2PKH_STANDARD_OUTPUT_SIZE = 34;

/**
 * ZIP-317's conventional fee of a transparent-only v5 transaction, from its real sizes: marginal fee (5,000 zats) x
 * max(grace actions (2), logical actions), where a transparent transaction's logical actions are
 * max(ceil(total input bytes / 150), ceil(total output bytes / 34)), an input's bytes being its serialized outpoint,
 * scriptSig (with its length) and sequence, an output's its value and script (with its length).
 * https://zips.z.cash/zip-0317#fee-calculation. Zebra's mempool refuses less (its "unpaid actions" rule).
 */
export function zip317ConventionalFee(tx: {
  inputs: { scriptSig: Uint8Array }[];
  outputs: { script: Uint8Array }[];
}): bigint {
  const varSliceSize = (b: Uint8Array) => (b.length < 0xfd ? 1 : b.length <= 0xffff ? 3 : 5) + b.length;
  const inBytes = tx.inputs.reduce((n, i) => n + 36 + varSliceSize(i.scriptSig) + 4, 0);
  const outBytes = tx.outputs.reduce((n, o) => n + 8 + varSliceSize(o.script), 0);
  const actions = Math.max(
    Math.ceil(inBytes / ZIP317_P2PKH_STANDARD_INPUT_SIZE),
    Math.ceil(outBytes / ZIP317_P2PKH_STANDARD_OUTPUT_SIZE),
  );
  return ZIP317_MARGINAL_FEE * BigInt(Math.max(ZIP317_GRACE_ACTIONS, actions));
}
