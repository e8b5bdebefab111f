/**
 * The transfer address's transactions on one EVM chain (chains/adapter.ts `UAssetSender`): `burn(amount)` of uAssets it
 * holds for completed burn orders (ERC20Burnable), and `transfer(to, amount)` of uAssets back to a sender (a refunded
 * held record). Signed with the transfer address's key, derived from the master mnemonic at
 * chains/transfer_address.ts `TRANSFER_ADDRESS_PATH` through the Signer, which never hands the key out. Nonces,
 * broadcasts, fee-bumped replacements and the fee cap are the minter's (tx_sender.ts): the nonce is a reservation
 * written in the atomic that records the transaction, and a replacement is recorded before it is sent.
 *
 * The transfer address pays the gas of these transactions: the operator funds it with the chain's native coin (its
 * address is printed at start).
 */
import {
  type Address,
  bytesToHex,
  encodeFunctionData,
  hexToBytes,
  isAddress,
  keccak256,
  type LocalAccount,
  parseTransaction,
  serializeTransaction,
} from "viem";
import { toAccount } from "viem/accounts";
import type { PreparedTx, UAssetSender } from "../adapter.ts";
import type { EvmChain, UAsset } from "../catalog.ts";
import type { SecpSignature } from "../signer.ts";
import type { Awaitable, SigningContext } from "../signing.ts";
import { TransferAddressUnfundedError, UAssetBalanceShortError } from "../uasset_errors.ts";
import { UASSET_ADAPTER_ABI } from "./abi.ts";
import { type EvmClient, rpc } from "./client.ts";
import { evmTxSender, type EvmTxSenderOptions } from "./tx_sender.ts";
import type { EvmState } from "./state.ts";

/** Index of the transfer address under chains/derivation.ts `EVM_PARENT_PATH` (TRANSFER_ADDRESS_PATH's last step). */
export const TRANSFER_ADDRESS_INDEX = 0;

/** What signs for the transfer address: chains/signer.ts `Signer` (by EVM derivation index), never a raw key. */
export interface EvmDigestSigner {
  address(chain: EvmChain, index: number): string;
  /** In process it answers at once; the signer process (chains/signer_client.ts) later, after checking `context`. */
  signDigest(
    chain: EvmChain,
    index: number,
    digest: Uint8Array,
    branch?: "deposit",
    context?: SigningContext,
  ): Awaitable<SecpSignature>;
}

/** A viem account whose transactions are signed by `signer` at `index`; it signs nothing else. */
export function signerAccount(signer: EvmDigestSigner, chain: EvmChain, index: number): LocalAccount {
  const address = signer.address(chain, index) as Address;
  const refuse = () => Promise.reject(new Error(`the account ${address} signs transactions only`));
  return toAccount({
    address,
    signMessage: refuse,
    signTypedData: refuse,
    async signTransaction(tx, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      const unsigned = await serializer(tx);
      const sig = await signer.signDigest(chain, index, hexToBytes(keccak256(unsigned)), "deposit", { unsigned });
      if (sig.format !== "recoverable") throw new Error(`${chain}: the signer gave a DER signature for an EVM digest`);
      return await serializer(tx, {
        r: bytesToHex(sig.bytes.slice(0, 32)),
        s: bytesToHex(sig.bytes.slice(32, 64)),
        yParity: sig.recovery,
      });
    },
  });
}

export interface EvmUAssetSenderOptions
  extends Pick<EvmTxSenderOptions, "replaceAfterMs" | "gasMarginPercent" | "maxFeePerGasCap" | "now"> {
  chain: EvmChain;
  /** Its nonce counter and replacements (kv/chain_state.ts `evmKvState`). */
  state: EvmState;
  client: EvmClient;
  /** The transfer address's account (`signerAccount(signer, chain, TRANSFER_ADDRESS_INDEX)`). */
  account: LocalAccount;
  uAssets: Record<UAsset, Address>;
  chainId: number;
}

export function evmUAssetSender(opts: EvmUAssetSenderOptions): UAssetSender {
  const { chain, client, account } = opts;
  const txs = evmTxSender({ ...opts, label: "transfer-address transaction" });
  const call = <T>(what: string, f: () => Promise<T>) => rpc(chain, what, f);

  function contractOf(asset: UAsset): Address {
    const contract = opts.uAssets[asset];
    if (!contract) throw new Error(`${chain}: no contract configured for ${asset}`);
    return contract;
  }

  /** Refuses (nothing signed) when the transfer address holds less than `amount`. */
  async function requireBalance(asset: UAsset, contract: Address, amount: bigint): Promise<void> {
    if (amount <= 0n) throw new RangeError(`${chain}: the amount of ${asset} must be positive, got ${amount}`);
    const balance = await call("balanceOf", () =>
      client.readContract({
        address: contract,
        abi: UASSET_ADAPTER_ABI,
        functionName: "balanceOf",
        args: [account.address],
      }));
    if (balance < amount) throw new UAssetBalanceShortError(chain, asset, balance, amount);
  }

  async function prepare(
    asset: UAsset,
    amount: bigint,
    fn: { functionName: "burn"; args: readonly [bigint] } | {
      functionName: "transfer";
      args: readonly [Address, bigint];
    },
  ): Promise<PreparedTx> {
    const contract = contractOf(asset);
    await requireBalance(asset, contract, amount);
    const data = encodeFunctionData({ abi: UASSET_ADAPTER_ABI, ...fn } as Parameters<typeof encodeFunctionData>[0]);
    const tx = await txs.signCall({
      to: contract,
      data,
      estimateGas: () => client.estimateGas({ account, to: contract, data }),
    });
    // Refused before it is recorded: a transaction that cannot pay its gas would hold the nonce until funded.
    const signed = parseTransaction(tx.raw as `0x${string}`);
    const needed = (signed.gas ?? 0n) * (signed.maxFeePerGas ?? 0n);
    const native = await call("eth_getBalance", () => client.getBalance({ address: account.address }));
    if (native < needed) throw new TransferAddressUnfundedError(chain, account.address, native, needed);
    return tx;
  }

  return {
    chain,
    address: account.address,
    prepareBurn: (req) => prepare(req.asset, req.amount, { functionName: "burn", args: [req.amount] }),
    async prepareTransfer(req) {
      if (!isAddress(req.to, { strict: false })) throw new Error(`${chain}: bad refund recipient ${req.to}`);
      return await prepare(req.asset, req.amount, { functionName: "transfer", args: [req.to as Address, req.amount] });
    },
    broadcast: (tx) => txs.broadcast(tx),
    nudge: (tx, pendingSinceMs) => txs.nudge(tx, pendingSinceMs),
  };
}
