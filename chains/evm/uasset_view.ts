/**
 * The live `UAssetView` of one EVM chain (docs/reconciliation.md): `totalSupply` and `balanceOf` by `eth_call` at
 * `latest`, and every `Minted(depositId, to, amount)` event of a uAsset contract from the block it was deployed in
 * (`<CHAIN>_DEPLOY_BLOCK`, the minter's `mintedLogsFromBlock`) to the tip, read with `eth_getLogs` in ranges of the
 * reader's `maxRange`, halving a range a provider refuses as too large (chains/evm/log_range.ts `rangeRefusal`).
 * Transient RPC failures are `TransientChainError`s, as everywhere: the caller reports that part as unknown.
 */
import { type Address, erc20Abi, type Hex } from "viem";
import type { MintedEvent, UAssetView } from "../adapter.ts";
import { TransientChainError } from "../adapter.ts";
import type { EvmChain, UAsset } from "../catalog.ts";
import { MINTED_EVENT } from "./abi.ts";
import { describeRpcError, type EvmClient, isTransientRpcError, rpc } from "./client.ts";
import { rangeRefusal } from "./log_range.ts";

export interface EvmUAssetViewOptions {
  chain: EvmChain;
  client: EvmClient;
  uAssets: Record<UAsset, Address>;
  /** Most blocks one `eth_getLogs` may span: the reader's. */
  maxRange: number;
  /** The contracts' deployment block: no `Minted` event is older. */
  fromBlock?: bigint;
}

export function evmUAssetView(opts: EvmUAssetViewOptions): UAssetView {
  const { chain, client } = opts;
  if (!Number.isInteger(opts.maxRange) || opts.maxRange < 1) throw new Error(`${chain}: maxRange must be >= 1`);
  const from = opts.fromBlock ?? 0n;
  const range = BigInt(opts.maxRange);
  const contract = (asset: UAsset) => {
    const address = opts.uAssets[asset];
    if (!address) throw new Error(`${chain}: no contract configured for ${asset}`);
    return address;
  };

  async function logs(address: Address, lo: bigint, hi: bigint): Promise<MintedEvent[]> {
    let found;
    try {
      found = await client.getLogs({ address, event: MINTED_EVENT, fromBlock: lo, toBlock: hi, strict: true });
    } catch (err) {
      if (hi > lo && rangeRefusal(err)) {
        const mid = lo + (hi - lo) / 2n;
        return [...await logs(address, lo, mid), ...await logs(address, mid + 1n, hi)];
      }
      if (isTransientRpcError(err)) {
        throw new TransientChainError(`${chain}: eth_getLogs(Minted ${lo}..${hi}): ${describeRpcError(err)}`, {
          chain,
          cause: err,
        });
      }
      throw err;
    }
    return found.filter((l) => !l.removed).map((l) => ({
      depositId: (l.args.depositId as Hex).toLowerCase(),
      to: l.args.to.toLowerCase(),
      amount: l.args.amount,
      txHash: l.transactionHash.toLowerCase(),
      blockNumber: Number(l.blockNumber),
    }));
  }

  return {
    chain,
    totalSupply: (asset) =>
      rpc(
        chain,
        `totalSupply(${asset})`,
        () => client.readContract({ address: contract(asset), abi: erc20Abi, functionName: "totalSupply" }),
      ),
    balanceOf: (asset, address) =>
      rpc(chain, `balanceOf(${asset})`, () =>
        client.readContract({
          address: contract(asset),
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [address as Address],
        })),
    async minted(asset) {
      const address = contract(asset);
      const tip = await rpc(chain, "eth_blockNumber", () => client.getBlockNumber({ cacheTime: 0 }));
      const out: MintedEvent[] = [];
      for (let lo = from; lo <= tip; lo += range) {
        const hi = lo + range - 1n < tip ? lo + range - 1n : tip;
        out.push(...await logs(address, lo, hi));
      }
      return out;
    },
  };
}
