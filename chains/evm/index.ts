/**
 * EVM chains on viem: a failover client per chain, the reader (watcher scans, transaction status) and the uAsset
 * minter. `evmChainAdapters` builds the three for one chain and checks the node's chain id before anything is used.
 */
import type { Address, LocalAccount } from "viem";
import type { ChainReader, EvmMinter, UAssetSender, UAssetView } from "../adapter.ts";
import { EVM, type EvmChain, type UAsset } from "../catalog.ts";
import { assertChainId, type EvmClient, evmClient, type EvmClientOptions } from "./client.ts";
import { evmMinter, type EvmMinterOptions } from "./minter.ts";
import { evmReader } from "./reader.ts";
import { evmUAssetView } from "./uasset_view.ts";
import { type EvmDigestSigner, evmUAssetSender, signerAccount, TRANSFER_ADDRESS_INDEX } from "./uasset_sender.ts";
import type { EvmState } from "./state.ts";

export { UASSET_ADAPTER_ABI } from "./abi.ts";
export {
  assertChainId,
  describeRpcError,
  type EvmClient,
  evmClient,
  type EvmClientOptions,
  isTransientRpcError,
  rpc,
} from "./client.ts";
export { MAX_TX_VERSIONS } from "./keys.ts";
export type { EvmState, MintNote, NonceCounter, Replacement } from "./state.ts";
export { DEFAULT_REPLACE_AFTER_MS, evmMinter, type EvmMinterOptions } from "./minter.ts";
export { type EvmReader, evmReader, type EvmReaderOptions, type EvmScanStats } from "./reader.ts";
export { evmUAssetView, type EvmUAssetViewOptions } from "./uasset_view.ts";
export {
  type EvmDigestSigner,
  evmUAssetSender,
  type EvmUAssetSenderOptions,
  signerAccount,
  TRANSFER_ADDRESS_INDEX,
} from "./uasset_sender.ts";
export { evmTxSender, type EvmTxSenderOptions } from "./tx_sender.ts";

export interface EvmChainAdaptersOptions {
  chain: EvmChain;
  /** What the adapters remember between calls (kv/chain_state.ts `evmKvState`). */
  state: EvmState;
  /** RPC URLs, preferred first. */
  urls: readonly string[];
  account: LocalAccount;
  uAssets: Record<UAsset, Address>;
  transferAddress: Address;
  /** Most blocks per `eth_getLogs`. */
  maxRange?: number;
  /** Overrides the catalog's chain id (a local test node). */
  chainId?: number;
  /** Skips the `eth_chainId` check at start (tests that build adapters over nodes that are down). */
  skipChainIdCheck?: boolean;
  timeoutMs?: number;
  onRpc?: EvmClientOptions["onRpc"];
  /**
   * Signs for the transfer address (chains/signer.ts `Signer`): given only when `transferAddress` is the one it
   * derives, and then the adapters include its `uAssetSender` (burns and refunds).
   */
  transferSigner?: EvmDigestSigner;
  minter?: Pick<
    EvmMinterOptions,
    "replaceAfterMs" | "gasMarginPercent" | "maxFeePerGasCap" | "mintedLogsFromBlock" | "now"
  >;
}

export interface EvmChainAdapters {
  client: EvmClient;
  reader: ChainReader;
  minter: EvmMinter;
  /** Supply, balances and `Minted` events (docs/reconciliation.md), from the minter's `mintedLogsFromBlock`. */
  view: UAssetView;
  /** The transfer address's sender; absent without `transferSigner`. */
  uAssetSender?: UAssetSender;
}

export async function evmChainAdapters(opts: EvmChainAdaptersOptions): Promise<EvmChainAdapters> {
  const chainId = opts.chainId ?? EVM[opts.chain].chainId;
  const client = evmClient({
    chain: opts.chain,
    urls: opts.urls,
    chainId,
    timeoutMs: opts.timeoutMs,
    onRpc: opts.onRpc,
  });
  if (!opts.skipChainIdCheck) await assertChainId(client, chainId, opts.chain);
  const reader = evmReader({
    chain: opts.chain,
    client,
    uAssets: opts.uAssets,
    transferAddress: opts.transferAddress,
    maxRange: opts.maxRange ?? 1_000,
    state: opts.state,
  });
  const minter = evmMinter({
    ...opts.minter,
    chain: opts.chain,
    state: opts.state,
    client,
    account: opts.account,
    uAssets: opts.uAssets,
    chainId,
  });
  const view = evmUAssetView({
    chain: opts.chain,
    client,
    uAssets: opts.uAssets,
    maxRange: opts.maxRange ?? 1_000,
    fromBlock: opts.minter?.mintedLogsFromBlock,
  });
  const uAssetSender = opts.transferSigner
    ? evmUAssetSender({
      ...opts.minter,
      chain: opts.chain,
      state: opts.state,
      client,
      account: signerAccount(opts.transferSigner, opts.chain, TRANSFER_ADDRESS_INDEX),
      uAssets: opts.uAssets,
      chainId,
    })
    : undefined;
  if (uAssetSender && uAssetSender.address.toLowerCase() !== opts.transferAddress.toLowerCase()) {
    throw new Error(`${opts.chain}: the transfer signer derives ${uAssetSender.address}, not ${opts.transferAddress}`);
  }
  return { client, reader, minter, view, ...(uAssetSender ? { uAssetSender } : {}) };
}
