/**
 * The sim-mode `UAssetView` (docs/reconciliation.md): the uAsset contracts of one simulated EVM chain as its ledger has
 * them. Supply is every balance added up, balances are the ledger's, and the `Minted` events are its included,
 * successful `mint` transactions. A sim `faucet` credit raises the supply but is no mint (it has no event), as uAssets
 * created outside the contract's `mint` would be on a real chain. Every call rolls the chain's injected RPC error rate,
 * like the other sim adapters.
 */
import { type MintedEvent, TransientChainError, type UAssetView } from "../adapter.ts";
import type { EvmChain, UAsset } from "../catalog.ts";
import type { SimLedger } from "./ledger.ts";

export function simUAssetView(ledger: SimLedger, random: () => number = Math.random): UAssetView {
  const chain = ledger.chain as EvmChain;
  async function rpc<T>(what: string, call: () => Promise<T>): Promise<T> {
    const { rpcErrorRate } = await ledger.getFaults();
    if (rpcErrorRate > 0 && random() < rpcErrorRate) {
      throw new TransientChainError(`sim ${chain}: injected RPC error in ${what}`);
    }
    return await call();
  }
  return {
    chain,
    totalSupply: (asset: UAsset) => rpc("totalSupply", () => ledger.totalSupply(asset)),
    balanceOf: (asset: UAsset, address: string) => rpc("balanceOf", () => ledger.balance(address, asset)),
    minted: (asset: UAsset): Promise<MintedEvent[]> =>
      rpc("minted", async () =>
        (await ledger.mintTransactions(asset)).map((m) => ({
          depositId: m.depositId.toLowerCase(),
          to: m.to.toLowerCase(),
          amount: m.amount,
          txHash: m.txHash,
          blockNumber: m.blockNumber,
        }))),
  };
}
