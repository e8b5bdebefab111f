/**
 * Verify before record for the simulated chains (chains/effects.ts): what a sim transaction does, read back from its
 * own raw form. The sim has no cryptographic library: its "signed bytes" are the serialized command
 * (chains/sim/tx.ts `encodeSimTx`), and its ledger executes exactly what `parseSimTx` (its strict zod schemas)
 * makes of them. So `parseSimTx` is the chain's own decoder here, and never the adapter code that built the command
 * (chains/sim/adapters.ts).
 *
 * Only the commands the sim adapters build are explained: payouts (account style from the hot wallet, or UTXO mode
 * spending coins with change at output 1) and sweeps on the native chains; mints, burns and transfers of the
 * transfer address on the EVM chains. Anything else the ledger would also execute (an outside deposit, a faucet
 * credit, a coinbase, a field the schemas drop, a UTXO spend on an account chain) is refused: it could move value
 * that a comparison of the fields we know would never see.
 */
import { type ChainSymbol, EVM, type EvmChain, isEvmChain, isUtxoChain, type UAsset } from "../catalog.ts";
import type { TxEffects } from "../effects.ts";
import { parseSimTx, type SimTx } from "./tx.ts";
import { CHANGE_INDEX } from "./utxo.ts";

/**
 * The identifier of `asset`'s uAsset contract on a simulated EVM chain, lowercase like every `ContractCall.contract`
 * (chains/effects.ts). The sim has no contract addresses: a sim `mint`, `burn` or `erc20` command names its uAsset by
 * symbol, and the ledger keeps one contract's balances per symbol, so the symbol is the contract a command calls.
 */
export function simUAssetContract(asset: UAsset): string {
  return asset.toLowerCase();
}

/**
 * The top-level fields of each command the sim adapters build, as `encodeSimTx` writes them. `parseSimTx`'s schemas
 * drop a field they do not know rather than refuse it; we refuse it, since a command that carries something we never
 * write was not built by us. (Nested inputs, change and expiry are strict in the schemas already.)
 */
const FIELDS: Readonly<Record<string, readonly string[]>> = {
  payout: ["kind", "from", "to", "amount", "memo", "orderId", "nonce", "expiry", "inputs", "change"],
  sweep: ["kind", "from", "to", "amount", "sweepId", "nonce", "expiry"],
  mint: ["kind", "to", "asset", "amount", "depositId", "nonce"],
  erc20: ["kind", "from", "to", "asset", "amount", "nonce"],
  burn: ["kind", "from", "asset", "amount", "batchId", "nonce"],
};

/**
 * What the sim transaction `raw` (a `PreparedTx.raw` of the sim adapters) does on `chain`. Throws when `raw` is not a
 * valid sim transaction for `chain`, or is one we never build.
 */
// deno-lint-ignore require-await
export async function explainSimTx(chain: ChainSymbol, raw: string): Promise<TxEffects> {
  let tx: SimTx;
  try {
    tx = parseSimTx(chain, raw);
  } catch (e) {
    throw new Error(`cannot explain a sim ${chain} transaction: ${(e as Error).message}`);
  }
  const refusal = (why: string) => new Error(`refusing to explain a sim ${chain} ${tx.kind} transaction: ${why}`);
  const allowed = FIELDS[tx.kind];
  if (!allowed) throw refusal(`the sim adapters never build a ${tx.kind} command`);
  // The schemas accept only an object, so this parse of the same text sees the fields they were given.
  const unknown = Object.keys(JSON.parse(raw)).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw refusal(`it carries fields we never write: ${unknown.join(", ")}`);
  // The sim's nonce is not an account sequence but the random salt (16 bytes of hex, ledger.ts `simNonce`) that makes
  // two preparations of one request two transactions; reported as a number. Another form was not built by us.
  if (!/^[0-9a-f]{1,128}$/i.test(tx.nonce)) throw refusal("its nonce is not the hex salt the sim adapters write");
  const nonce = BigInt("0x" + tx.nonce);

  switch (tx.kind) {
    case "payout": {
      const expiry = tx.expiry ? { expiry: { kind: tx.expiry.kind, value: tx.expiry.value } } : {};
      if (!tx.inputs) {
        // Account style: the hot wallet `from` is debited (ledger.ts `deltasOf`). A change without inputs is never
        // encoded, yet the ledger would still create output 1 from it (utxo.ts `outputOf`): value out of nothing.
        if (tx.change) throw refusal("it has change but spends no coins");
        return {
          chain,
          from: tx.from,
          outputs: [{ to: tx.to, amount: tx.amount }],
          memo: tx.memo,
          nonce,
          ...expiry,
        };
      }
      // UTXO mode: the inputs' own addresses are debited, whoever `from` names (ledger.ts `deltasOf`), so `from` is
      // no effect here and stays out, as chains/effects.ts asks of UTXO chains. On an account chain the ledger would
      // still debit the inputs' addresses: we never build that.
      if (!isUtxoChain(chain)) throw refusal("it spends UTXO inputs on an account chain");
      const outputs = [{ to: tx.to, amount: tx.amount }];
      if (tx.change) {
        // Output 0 pays the destination, output CHANGE_INDEX (1) the change (chains/sim/utxo.ts `outputOf`).
        if (outputs.length !== CHANGE_INDEX) throw refusal(`its change would not be output ${CHANGE_INDEX}`);
        outputs.push({ to: tx.change.address, amount: tx.change.amount });
      }
      // The inputs carry the amounts of the coins they spend, and the ledger refuses the spend unless they match
      // (ledger.ts `addSpends`), so the fee is exactly what they hold beyond the outputs.
      const fee = tx.inputs.reduce((s, i) => s + i.amount, 0n) - outputs.reduce((s, o) => s + o.amount, 0n);
      return {
        chain,
        inputs: tx.inputs.map((i) => ({ txHash: i.txHash, index: i.index })),
        outputs,
        memo: tx.memo,
        nonce,
        ...expiry,
        ...(fee >= 0n ? { maxFee: fee } : {}),
      };
    }
    case "sweep":
      // The sim adapters sweep account chains only (sol, xrp, sui): UTXO chains spend deposit coins directly.
      if (isUtxoChain(chain)) throw refusal("the sim adapters sweep account chains only");
      return {
        chain,
        from: tx.from,
        outputs: [{ to: tx.to, amount: tx.amount }],
        memo: null,
        nonce,
        ...(tx.expiry ? { expiry: { kind: tx.expiry.kind, value: tx.expiry.value } } : {}),
      };
    case "mint":
    case "burn":
    case "erc20": {
      if (!isEvmChain(chain)) throw refusal("a uAsset call on a native chain"); // parseSimTx refuses it first
      // A sim EVM command carries no chain id: the ledger of `chain` executes it and its hash commits to `chain`
      // (ledger.ts `simTxHash`), so the chain id is the catalog's for `chain`. It moves no native value.
      const evm = { chain, outputs: [], memo: null, chainId: EVM[chain as EvmChain].chainId, nonce };
      const contract = simUAssetContract(tx.asset);
      if (tx.kind === "mint") {
        // A sim mint names no signer (the sim checks none), so `from` stays unset; the deposit id is as the bytes
        // have it (lowercase), with or without 0x: the sim contract tells the two forms apart (ledger.ts `mintedKey`).
        return {
          ...evm,
          call: { contract, function: "mint", depositId: tx.depositId, to: tx.to, amount: tx.amount },
        };
      }
      if (tx.kind === "burn") return { ...evm, from: tx.from, call: { contract, function: "burn", amount: tx.amount } };
      return { ...evm, from: tx.from, call: { contract, function: "transfer", to: tx.to, amount: tx.amount } };
    }
    default:
      throw refusal(`the sim adapters never build a ${tx.kind} command`);
  }
}
