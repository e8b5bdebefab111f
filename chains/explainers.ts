/**
 * Which decoder reads back each chain's prepared transactions (chains/verify.ts), as the chain plan serves it: a live
 * chain's own library (chains/<family>/explain.ts), a simulated chain its ledger's parser (chains/sim/explain.ts).
 */
import type { PreparedTx } from "./adapter.ts";
import { type ChainSymbol, EVM, type EvmChain, isEvmChain, type UAsset, type UtxoChain } from "./catalog.ts";
import type { TxEffects } from "./effects.ts";
import { explainEvmTx } from "./evm/explain.ts";
import type { FeeFunction } from "./shared/coin_select.ts";
import { changeDustLimit } from "./shared/utxo_fee.ts";
import { explainSimTx, simUAssetContract } from "./sim/explain.ts";
import { explainSolTx } from "./sol/explain.ts";
import { explainSuiTx } from "./sui/explain.ts";
import { explainUtxoTx } from "./utxo/explain.ts";
import type { UtxoNetwork } from "./utxo/network.ts";
import type { EvmFacts, Explainer } from "./verify.ts";
import { explainXrpTx, xrpRecordDifferences } from "./xrp/explain.ts";

/** The memo as given: the bytes carry it (a Solana memo, the sim's field). */
const asGiven = (memo: string | null) => memo;
/** No memo on chain: the payer keeps it for the partner only. */
const none = () => null;
/** An XRPL destination tag is a number: "077" and "77" are the same tag, and the bytes say "77". */
const tagOf = (memo: string | null) => memo !== null && /^\d+$/.test(memo) ? BigInt(memo).toString() : memo;

/** Most a payout spending `inputs` coins pays in fee: the two-output fee, plus change too small to create. */
function utxoMaxFee(chain: UtxoChain, fee: FeeFunction): (inputs: number) => bigint {
  return (inputs) => fee(inputs, 2) + changeDustLimit(chain) - 1n;
}

export interface ExplainerPlan {
  simulated: ReadonlySet<ChainSymbol>;
  liveEvm: ReadonlySet<EvmChain>;
  /** Live UTXO chains: their network and the fee rule coin selection uses. */
  liveUtxo: ReadonlyMap<UtxoChain, { network: UtxoNetwork; fee: FeeFunction }>;
  liveAccount: ReadonlySet<ChainSymbol>;
}

export function explainerOf(plan: ExplainerPlan): (chain: ChainSymbol) => Explainer | undefined {
  return (chain) => {
    if (plan.simulated.has(chain)) {
      return { explain: (raw) => explainSimTx(chain, raw), memoOnChain: asGiven };
    }
    if (isEvmChain(chain)) {
      return plan.liveEvm.has(chain) ? { explain: (raw) => explainEvmTx(raw, chain), memoOnChain: none } : undefined;
    }
    const utxo = plan.liveUtxo.get(chain as UtxoChain);
    if (utxo) {
      return {
        explain: (raw) => explainUtxoTx(raw, utxo.network),
        memoOnChain: none,
        maxFee: utxoMaxFee(chain as UtxoChain, utxo.fee),
      };
    }
    if (!plan.liveAccount.has(chain)) return undefined;
    switch (chain) {
      case "sol":
        return { explain: explainSolTx, memoOnChain: asGiven };
      case "xrp":
        return {
          explain: explainXrpTx,
          memoOnChain: tagOf,
          record: (prepared: PreparedTx, effects: TxEffects) => xrpRecordDifferences(prepared, effects),
        };
      case "sui":
        return { explain: explainSuiTx, memoOnChain: none };
    }
    return undefined;
  };
}

/** What an EVM chain's intents name besides the request: its chain id, signers and uAsset contracts. */
export function evmFactsOf(opts: {
  simulated: ReadonlySet<ChainSymbol>;
  transferAddress: string;
  /** Live chains: the minter's address, the chain id they are signed for and their contracts. */
  live: ReadonlyMap<EvmChain, { minter: string; chainId: number; uAssets: Record<UAsset, string> }>;
}): (chain: EvmChain) => EvmFacts | undefined {
  return (chain) => {
    const live = opts.live.get(chain);
    if (live) {
      return {
        chainId: live.chainId,
        minter: live.minter,
        transferAddress: opts.transferAddress,
        contract: (asset) => live.uAssets[asset],
      };
    }
    if (!opts.simulated.has(chain)) return undefined;
    // The sim's mint names no signer and its contracts are the uAssets' own names (chains/sim/explain.ts).
    return {
      chainId: EVM[chain].chainId,
      minter: "",
      transferAddress: opts.transferAddress,
      contract: simUAssetContract,
    };
  };
}
