/**
 * Mints uAssets on one EVM chain with the minter key, following write-ahead (docs/architecture.md invariant 2):
 * `prepareMint` signs without sending and hands the pipeline its reservations as data (the nonce, checked against the
 * counter it read, and the mint note), which kv/chain_state.ts writes in the same atomic that records the transaction,
 * so of two concurrent preparations only the committed one ever exists for the chain. A transaction that
 * stays pending is replaced at the same nonce when the network's fee estimate has risen above what it offers; each
 * replacement is recorded before it is sent, and the same nonce plus the contract's refusal of a reused deposit id
 * keep it to one mint. No version ever offers more than the chain's fee cap, and a transaction has at most
 * MAX_TX_VERSIONS versions: past either limit it is only rebroadcast and an operator is alerted once.
 */
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  type Hex,
  isAddress,
  isHex,
  type LocalAccount,
} from "viem";
import { type EvmMinter, type MintRequest, type PreparedTx, TransientChainError } from "../adapter.ts";
import { type EvmChain, type UAsset, UASSET_DECIMALS } from "../catalog.ts";
import { MINTED_EVENT, UASSET_ADAPTER_ABI } from "./abi.ts";
import type { EvmClient } from "./client.ts";
import { rpc } from "./client.ts";
import type { EvmState } from "./state.ts";
import { DEFAULT_REPLACE_AFTER_MS, evmTxSender } from "./tx_sender.ts";

export { DEFAULT_REPLACE_AFTER_MS };

export interface EvmMinterOptions {
  chain: EvmChain;
  /** Its nonce counter, mint notes and replacements (kv/chain_state.ts `evmKvState`). */
  state: EvmState;
  client: EvmClient;
  /** The minter key's account (holder of MINTER_ROLE on the five uAssets). */
  account: LocalAccount;
  uAssets: Record<UAsset, Address>;
  /** Signed into every transaction (EIP-155); the catalog's id, checked against the node at start. */
  chainId: number;
  /** A transaction pending longer than this (since it was prepared, or since its last replacement) is fee-bumped. */
  replaceAfterMs?: number;
  /** Added to the node's gas estimate, in percent. */
  gasMarginPercent?: number;
  /**
   * No version (the first signing included) offers more than this per gas; past it, nudges only rebroadcast. The
   * catalog's `maxFeePerGasWei` unless configured (`<CHAIN>_MAX_FEE_PER_GAS_WEI`).
   */
  maxFeePerGasCap?: bigint;
  /** Where to look for `Minted` logs of a deposit the KV knows nothing about (the contracts' deployment block). */
  mintedLogsFromBlock?: bigint;
  now?: () => number;
}

export function evmMinter(opts: EvmMinterOptions): EvmMinter {
  const { chain, state, client, account } = opts;
  const call = <T>(what: string, f: () => Promise<T>) => rpc(chain, what, f);
  const assets = Object.keys(opts.uAssets) as UAsset[];
  const txs = evmTxSender({ ...opts, label: "mint" });

  return {
    chain,

    async prepareMint(req: MintRequest): Promise<PreparedTx> {
      const contract = opts.uAssets[req.asset];
      if (!contract) throw new Error(`${chain}: no contract configured for ${req.asset}`);
      if (!isHex(req.depositId) || req.depositId.length !== 66) {
        throw new Error(`${chain}: deposit id must be 32 bytes of hex, got ${req.depositId}`);
      }
      if (!isAddress(req.to, { strict: false })) throw new Error(`${chain}: bad mint recipient ${req.to}`);
      if (req.amountWei <= 0n) throw new Error(`${chain}: mint amount must be positive (${UASSET_DECIMALS} decimals)`);
      const args = [req.to as Address, req.amountWei, req.depositId as Hex] as const;
      const tx = await txs.signCall({
        to: contract,
        data: encodeFunctionData({ abi: UASSET_ADAPTER_ABI, functionName: "mint", args }),
        estimateGas: () =>
          client.estimateContractGas({
            address: contract,
            abi: UASSET_ADAPTER_ABI,
            functionName: "mint",
            args,
            account,
          }).catch((err) => {
            const refusal = adminRefusalOf(err, chain, req);
            throw refusal ? new TransientChainError(refusal) : err;
          }),
      });
      tx.reservations!.push({ kind: "mintNote", chain, depositId: req.depositId, asset: req.asset, txHash: tx.txHash });
      return tx;
    },

    account: account.address,

    broadcast: (tx: PreparedTx) => txs.broadcast(tx),

    nudge: (tx: PreparedTx, pendingSinceMs: number) => txs.nudge(tx, pendingSinceMs),

    async adminRefusal(req: MintRequest): Promise<string | null> {
      try {
        await call("eth_call(mint)", () =>
          client.simulateContract({
            address: opts.uAssets[req.asset],
            abi: UASSET_ADAPTER_ABI,
            functionName: "mint",
            args: [req.to as Address, req.amountWei, req.depositId as Hex],
            account,
          }));
        return null;
      } catch (err) {
        if (err instanceof TransientChainError) throw err;
        return adminRefusalOf(err, chain, req);
      }
    },

    async allowance(asset: UAsset): Promise<{ left: bigint; configured: bigint }> {
      const read = (functionName: "minterAllowance" | "minterAllowanceConfigured") =>
        call(functionName, () =>
          client.readContract({
            address: opts.uAssets[asset],
            abi: UASSET_ADAPTER_ABI,
            functionName,
            args: [account.address],
          }));
      const [left, configured] = await Promise.all([read("minterAllowance"), read("minterAllowanceConfigured")]);
      return { left, configured };
    },

    async mintedBy(depositId: string): Promise<string | null> {
      const id = depositId as Hex;
      const note = await state.readMintNote(chain, depositId);
      const candidates = note ? [note.asset] : assets;
      const flags = await Promise.all(candidates.map((asset) =>
        call("minted", () =>
          client.readContract({
            address: opts.uAssets[asset],
            abi: UASSET_ADAPTER_ABI,
            functionName: "minted",
            args: [id],
          }))
      ));
      const asset = candidates.find((_, i) => flags[i]);
      if (!asset) return null;
      if (note?.asset === asset) {
        // Usually one of our recorded versions: a receipt or two instead of a log search.
        const versions = await txs.versionsOf({ txHash: note.txHash, raw: "" });
        for (const v of versions) {
          const r = await txs.receiptOf(v.txHash);
          if (r && BigInt(r.status) === 1n) return r.transactionHash;
        }
      }
      const logs = await call("eth_getLogs(Minted)", () =>
        client.getLogs({
          address: opts.uAssets[asset],
          event: MINTED_EVENT,
          args: { depositId: id },
          fromBlock: opts.mintedLogsFromBlock ?? 0n,
          toBlock: "latest",
          strict: true,
        }));
      const log = logs.find((l) => !l.removed);
      if (!log) throw new TransientChainError(`${chain}: ${asset} says ${depositId} is minted but no Minted log found`);
      return log.transactionHash;
    },
  };
}

/**
 * The contract's refusals that its admin can lift: paused, the minter's allowance spent, or the supply cap reached. A mint refused for those is not
 * the order's fault and must not fail it: it waits (a `TransientChainError`, retried with backoff) with this reason
 * recorded on the order, until the admin unpauses or raises the cap.
 */
function adminRefusalOf(err: unknown, chain: EvmChain, req: MintRequest): string | null {
  if (!(err instanceof BaseError)) return null;
  const revert = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  const data = revert?.data;
  if (data?.errorName === "EnforcedPause") {
    return `${chain}: ${req.asset} is paused by its admin; the mint waits until it is unpaused`;
  }
  if (data?.errorName === "MinterAllowanceExceeded") {
    const [allowance, amount] = data.args as readonly bigint[];
    return `${chain}: minting ${amount} wei of ${req.asset} is above the minter's allowance of ${allowance} wei left; ` +
      `the mint waits until the admin raises it (configureMinter, docs/live-chains.md "Minter allowance")`;
  }
  if (data?.errorName === "SupplyCapExceeded") {
    const [cap, wouldBe] = data.args as readonly bigint[];
    return `${chain}: minting ${req.amountWei} wei of ${req.asset} would bring its supply to ${wouldBe}, above the ` +
      `cap of ${cap} its admin set; the mint waits until the cap is raised`;
  }
  return null;
}
