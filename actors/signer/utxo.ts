/**
 * The signer process's UTXO requests (docs/operations.md "Roles", the signer process): a doge or zec transaction, every
 * input at once (chains/signer_protocol.ts `signUtxo`). What the bytes lack to be checked (what each input spends) the
 * signer reads itself, never from the request, since a lying amount is how a fee-drain attack works:
 *
 * 1. the unsigned transaction is read by the family's one decoder (chains/utxo/explain.ts, its unsigned entry point);
 * 2. each input spends a treasury coin of ours (kv/treasury.ts coin records, by outpoint: not a coinbase, not spent,
 *    not locked by a recorded transaction, not held for an operator), and the key asked for is that coin's own;
 * 3. each input's SIGHASH_ALL digest is recomputed from the bytes and those coins (doge: the legacy sighash over the
 *    coin's P2PKH script; zec: ZIP-244 over every input's amount and script, chains/utxo/zec_tx.ts), and must be
 *    what the worker computed: a worker that knows other amounts than the treasury is refused;
 * 4. the inputs are signed, the transaction assembled and read back with the chain's explainer, and compared with
 *    the purpose's record (purposes.ts `expectedForUtxo`), the fee bounded with the coins' recorded amounts;
 * 5. what leaves our control is spent from the hourly limit (outflow.ts) in the decision.
 */
import { bytesToHex } from "viem";
import type { UtxoChain } from "../../chains/catalog.ts";
import { differences } from "../../chains/effects.ts";
import type { SignerResponse, SignUtxoRequest } from "../../chains/signer_protocol.ts";
import { explainUnsignedUtxoTx } from "../../chains/utxo/explain.ts";
import { outputScript, type UtxoNetwork } from "../../chains/utxo/network.ts";
import type { UtxoTxFamily } from "../../chains/utxo/tx.ts";
import { type Coin, coinStatesAt } from "../../kv/treasury.ts";
import type { Signer } from "../../chains/signer.ts";
import { type OutflowLimits, spendOutflow } from "./outflow.ts";
import { expectedForUtxo, Refusal, type SignerFacts } from "./purposes.ts";

/** A live UTXO chain of this signer: its address network and its transaction steps. */
export interface UtxoFacts {
  network: UtxoNetwork;
  family: UtxoTxFamily;
}

/** What the signer service gives a UTXO request (actors/signer/service.ts `SignerServiceOptions`). */
export interface UtxoSignerDeps {
  kv: Deno.Kv;
  signer: Signer;
  facts: SignerFacts;
  limits: OutflowLimits;
  now: () => Date;
  /** The live UTXO chains of this signer; absent or undefined: the chain is refused. */
  utxo?: (chain: UtxoChain) => UtxoFacts | undefined;
}

/** The answer to a `signUtxo` request: the signatures, or a `Refusal` thrown with the reason. */
export async function signUtxo(opts: UtxoSignerDeps, req: SignUtxoRequest): Promise<SignerResponse> {
  const chain: UtxoChain = req.chain;
  const utxo = opts.utxo?.(chain);
  const explainer = opts.facts.explainer(chain);
  if (!utxo || !explainer) throw new Refusal(`${chain} is not a live chain of this signer`);
  const { network, family } = utxo;
  if (req.purpose === null) throw new Refusal("the request names no purpose: the signer signs only for a recorded one");
  // (1) The bytes shown, read by the family's decoder.
  let unsigned;
  try {
    unsigned = explainUnsignedUtxoTx(req.unsigned, network);
  } catch (err) {
    throw new Refusal(`the unsigned transaction does not decode: ${(err as Error).message}`);
  }
  const outpoints = unsigned.inputs ?? [];
  if (outpoints.length !== req.inputs.length) {
    throw new Refusal(
      `the transaction has ${outpoints.length} inputs, the request names keys for ${req.inputs.length}`,
    );
  }
  // (2) Each input a treasury coin of ours, signed by its own key.
  const coins: Coin[] = [];
  const states = await coinStatesAt(opts.kv, chain, outpoints);
  for (const [i, outpoint] of outpoints.entries()) {
    const at = `${outpoint.txHash}:${outpoint.index}`;
    const state = states[i];
    if (!state) throw new Refusal(`input ${i} spends ${at}, which is not an unspent treasury coin of ours`);
    const { coin, lockedBy, hold } = state;
    if (coin.coinbase) throw new Refusal(`input ${i} spends the coinbase output ${at}, never ours to spend`);
    // A new transaction spends only what coin selection may choose (kv/treasury.ts `isSpendable`): a coin locked by a
    // recorded transaction is released only once that one is proven dead, and a held coin waits for an operator.
    if (lockedBy !== null) throw new Refusal(`input ${i} spends ${at}, which recorded transaction ${lockedBy} spends`);
    if (hold !== null) throw new Refusal(`input ${i} spends ${at}, held for an operator: ${hold.reason}`);
    const key = req.inputs[i];
    const address = opts.signer.address(chain, key.index, key.branch);
    if (key.index !== coin.derivationIndex || address !== coin.address) {
      throw new Refusal(
        `input ${i} spends ${at} at ${coin.address} (index ${coin.derivationIndex}), not an address of the ` +
          `${key.branch} key ${key.index} (${address})`,
      );
    }
    coins.push(coin);
  }
  // (3) Each sighash recomputed from the bytes and the coins as recorded.
  const spent = coins.map((c) => ({ amount: c.amount, script: outputScript(network, c.address) }));
  let digests: Uint8Array[];
  try {
    digests = family.sighashes(network, req.unsigned, spent);
  } catch (err) {
    throw new Refusal(`the sighashes cannot be computed: ${(err as Error).message}`);
  }
  digests.forEach((digest, i) => {
    if (hex(digest) !== req.inputs[i].payload.toLowerCase()) {
      throw new Refusal(
        `input ${i}'s sighash is not the one of the unsigned transaction spending ${coins[i].outpoint.txHash}:` +
          `${coins[i].outpoint.index} (${coins[i].amount} as the treasury records it)`,
      );
    }
  });
  // (4) Signed here, read back, compared with the purpose's record; released only after (5).
  const signatures = digests.map((digest, i) => {
    const sig = opts.signer.signDigest(chain, req.inputs[i].index, digest, req.inputs[i].branch);
    if (sig.format !== "der") throw new Error(`${chain}: a ${sig.format} signature, not DER`);
    return { der: sig.bytes, publicKey: opts.signer.publicKey(chain, req.inputs[i].index, req.inputs[i].branch) };
  });
  const signed = family.assemble(network, req.unsigned, signatures);
  let effects;
  try {
    effects = await explainer.explain(signed.raw);
  } catch (err) {
    throw new Refusal(`the transaction cannot be read back: ${(err as Error).message}`);
  }
  const expected = await expectedForUtxo(opts.kv, opts.facts, req, coins, effects, opts.now());
  const found = differences(expected.intent, effects, {
    txHash: signed.txid,
    raw: signed.raw,
    change: expected.change,
  });
  if (found.length > 0) {
    throw new Refusal(
      `the transaction does not do what ${req.purpose.kind} ${req.purpose.id} records: ${found.join("; ")}`,
    );
  }
  // (5) The hourly limit, spent in the decision.
  if (expected.outflow) {
    const { chain, amount } = expected.outflow;
    const spentOut = await spendOutflow(opts.kv, opts.limits, chain, amount, opts.now().getTime());
    if (!spentOut.ok) throw new Refusal(spentOut.reason);
  }
  return { ok: true, signatures: signatures.map((s) => hex(s.der)) };
}

function hex(bytes: Uint8Array): string {
  return bytesToHex(bytes).slice(2);
}
