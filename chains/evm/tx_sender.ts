/**
 * What every EVM account of ours that sends contract calls shares (the minter key, the transfer address's key): signing
 * a call at the next nonce with the nonce handed back as a reservation (kv/chain_state.ts writes it in the atomic that
 * records the transaction), broadcasting the newest recorded version, and replacing a version that stays pending at
 * the same nonce when the network's fee estimate has risen above what it offers. Each replacement is recorded before it
 * is sent. No version ever offers more than the chain's fee cap, and a transaction has at most MAX_TX_VERSIONS
 * versions: past either limit it is only rebroadcast and an operator is alerted once.
 */
import { type Address, type Hash, type Hex, keccak256, type LocalAccount, parseTransaction } from "viem";
import type { TransactionSerializableEIP1559 } from "viem";
import { type PreparedTx, TransientChainError } from "../adapter.ts";
import { EVM, type EvmChain } from "../catalog.ts";
import type { EvmState } from "./state.ts";
import { describeRpcError, type EvmClient, isTransientRpcError, rpc } from "./client.ts";
import { MAX_TX_VERSIONS } from "./keys.ts";
import { explainEvmTx } from "./explain.ts";
import { replacementDifferences, ReplacementMismatchError } from "../effects.ts";

export interface EvmTxSenderOptions {
  chain: EvmChain;
  /** Where its nonce counter, replacements and fee-cap marker are kept (kv/chain_state.ts `evmKvState`). */
  state: EvmState;
  client: EvmClient;
  /** The signing account (its nonce counter is kept under its address). */
  account: LocalAccount;
  /** Signed into every transaction (EIP-155). */
  chainId: number;
  /** What its transactions are called in alerts ("mint", "burn"). */
  label: string;
  /** A transaction pending longer than this (since it was prepared, or since its last replacement) is fee-bumped. */
  replaceAfterMs?: number;
  /** Added to the node's gas estimate, in percent. */
  gasMarginPercent?: number;
  /** No version offers more than this per gas (the catalog's `maxFeePerGasWei` unless configured). */
  maxFeePerGasCap?: bigint;
  now?: () => number;
}

export const DEFAULT_REPLACE_AFTER_MS = 60_000;

/** What `broadcast` may send for one recorded transaction: the original and its replacements, oldest first. */
export interface Version {
  txHash: string;
  raw: string;
}

const ALREADY_KNOWN = /already known|known transaction|already imported|already exists|alreadyknown/i;
const NONCE_TOO_LOW = /nonce too low|nonce has already been used|oldnonce|invalid nonce/i;
const UNDERPRICED = /underpriced|fee too low|replacement/i;
/** The network's base fee is above what the version offers (some nodes refuse it, others keep it unmined). */
const BELOW_BASE_FEE = /less than (the )?block base fee|fee cap less than block base fee|max fee per gas less than/i;

export interface EvmTxSender {
  /**
   * Signs a call to `to` with `data` at the account's next nonce (the KV counter or the node's pending count, whichever
   * is ahead), gas from `estimateGas` plus the margin, fees from the node under the cap. Returns it with the nonce it
   * consumes and the nonce reservation; `extraReservations` are added after it.
   */
  signCall(call: { to: Address; data: Hex; estimateGas: () => Promise<bigint> }): Promise<PreparedTx>;
  broadcast(tx: PreparedTx): Promise<void>;
  nudge(tx: PreparedTx, pendingSinceMs: number): Promise<void>;
  /** The recorded versions of `tx` (the original first). */
  versionsOf(tx: { txHash: string; raw: string }): Promise<Version[]>;
  receiptOf(hash: string): Promise<{ status: Hex; transactionHash: Hash } | null>;
}

export function evmTxSender(opts: EvmTxSenderOptions): EvmTxSender {
  const { chain, state, client, account, chainId, label } = opts;
  const now = opts.now ?? Date.now;
  const replaceAfterMs = opts.replaceAfterMs ?? DEFAULT_REPLACE_AFTER_MS;
  const gasMargin = BigInt(opts.gasMarginPercent ?? 20);
  const cap = opts.maxFeePerGasCap ?? EVM[chain].maxFeePerGasWei;
  if (cap <= 0n) throw new Error(`${chain}: the fee cap must be positive`);
  const call = <T>(what: string, f: () => Promise<T>) => rpc(chain, what, f);

  async function versionsWithEntry(tx: { txHash: string; raw: string }) {
    const entry = await state.readReplacements(chain, tx.txHash);
    const versions: Version[] = [{ txHash: tx.txHash, raw: tx.raw }, ...(entry.value ?? [])];
    return { entry, versions };
  }

  async function receiptOf(hash: string) {
    return await call(
      "eth_getTransactionReceipt",
      () => client.request({ method: "eth_getTransactionReceipt", params: [hash as Hash] }),
    ) as { status: Hex; transactionHash: Hash } | null;
  }

  async function anyMined(versions: Version[]): Promise<boolean> {
    return (await Promise.all(versions.map((v) => receiptOf(v.txHash)))).some((r) => r !== null);
  }

  async function anyKnown(versions: Version[]): Promise<boolean> {
    const txs = await Promise.all(versions.map((v) =>
      call(
        "eth_getTransactionByHash",
        () => client.request({ method: "eth_getTransactionByHash", params: [v.txHash as Hash] }),
      )
    ));
    return txs.some((t) => t !== null);
  }

  /** Sends one version; the node already having it (or one of its siblings mined) is success. */
  async function send(version: Version, all: Version[]): Promise<void> {
    try {
      await client.request({ method: "eth_sendRawTransaction", params: [version.raw as Hex] });
      return;
    } catch (err) {
      const text = `${err instanceof Error ? err.message : String(err)}`;
      if (ALREADY_KNOWN.test(text)) return;
      if (BELOW_BASE_FEE.test(text)) {
        // Waiting is the answer: the next nudge replaces it if the cap allows, else the network must come down.
        throw new TransientChainError(
          `${chain}: ${version.txHash} offers less than the current base fee (${describeRpcError(err)})`,
          { chain, cause: err },
        );
      }
      if (NONCE_TOO_LOW.test(text)) {
        if (await anyMined(all)) return;
        throw new TransientChainError(
          `${chain}: nonce of ${version.txHash} is used by a transaction that is not ours (${describeRpcError(err)})`,
          { chain, cause: err },
        );
      }
      if (UNDERPRICED.test(text)) {
        if (await anyKnown(all)) return;
        throw new TransientChainError(`${chain}: another transaction holds our nonce (${describeRpcError(err)})`, {
          chain,
          cause: err,
        });
      }
      if (isTransientRpcError(err)) {
        throw new TransientChainError(`${chain}: eth_sendRawTransaction: ${describeRpcError(err)}`, {
          chain,
          cause: err,
        });
      }
      throw new Error(`${chain}: node refused ${version.txHash}: ${describeRpcError(err)}`, { cause: err });
    }
  }

  /** Once per recorded transaction: the marker is claimed with the alert, so a nudge every tick raises nothing more. */
  async function feeCapReached(originalHash: string, why: string): Promise<void> {
    const message = `${chain}: ${label} ${originalHash} is no longer fee-bumped: ${why}; it is only rebroadcast`;
    await state.raiseFeeCapReached(chain, originalHash, message, now());
  }

  async function sign(fields: TransactionSerializableEIP1559): Promise<{ txHash: string; raw: Hex }> {
    const raw = await account.signTransaction(fields);
    return { txHash: keccak256(raw), raw };
  }

  return {
    versionsOf: async (tx) => (await versionsWithEntry(tx)).versions,
    receiptOf,

    async signCall({ to, data, estimateGas }): Promise<PreparedTx> {
      const counter = await state.readNonceCounter(chain, account.address);
      const [pending, gas, fees] = await Promise.all([
        call(
          "eth_getTransactionCount",
          () => client.getTransactionCount({ address: account.address, blockTag: "pending" }),
        ),
        call("eth_estimateGas", estimateGas),
        call("fees", () => client.estimateFeesPerGas()),
      ]);
      // The KV counter is ahead of the node while our recorded transactions are unsent; the node is ahead only if
      // someone else used the key, and those nonces are gone either way.
      const nonce = counter.next !== null && counter.next > BigInt(pending) ? counter.next : BigInt(pending);
      // Above the cap it is signed at the cap and waits for the network to come down (or an operator to raise it).
      const maxFeePerGas = min(fees.maxFeePerGas, cap);
      const { txHash, raw } = await sign({
        type: "eip1559",
        chainId,
        nonce: Number(nonce),
        to,
        data,
        value: 0n,
        gas: gas + (gas * gasMargin) / 100n,
        maxFeePerGas,
        maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas, maxFeePerGas),
      });
      if (fees.maxFeePerGas > cap) {
        await feeCapReached(
          txHash,
          `the network estimate ${fees.maxFeePerGas} wei/gas is above the cap ${cap}; signed at the cap`,
        );
      }
      return {
        txHash,
        raw,
        consumes: { kind: "nonce", account: account.address, nonce: Number(nonce) },
        reservations: [{ kind: "nonce", chain, account: account.address, nonce, expectVersion: counter.versionstamp }],
      };
    },

    async broadcast(tx: PreparedTx): Promise<void> {
      const { versions } = await versionsWithEntry(tx);
      // The newest version pays the most; the older ones can no longer be accepted next to it.
      await send(versions[versions.length - 1], versions);
    },

    async nudge(tx: PreparedTx, pendingSinceMs: number): Promise<void> {
      const { entry, versions } = await versionsWithEntry(tx);
      const latest = versions[versions.length - 1];
      const replacements = entry.value ?? [];
      const waited = replacements.length > 0 ? now() - replacements[replacements.length - 1].at : pendingSinceMs;
      if (waited < replaceAfterMs) return await send(latest, versions);
      const previous = parseTransaction(latest.raw as Hex);
      if (previous.type !== "eip1559" || previous.nonce === undefined) {
        return await send(latest, versions); // not one we signed: leave it alone
      }
      const offeredFee = previous.maxFeePerGas ?? 0n;
      const offeredTip = previous.maxPriorityFeePerGas ?? 0n;
      const fees = await call("fees", () => client.estimateFeesPerGas());
      // Pending but offering what the network asks: waiting costs nothing, outbidding ourselves costs fees.
      if (fees.maxFeePerGas <= offeredFee && fees.maxPriorityFeePerGas <= offeredTip) {
        return await send(latest, versions);
      }
      // Nodes accept a replacement only if it raises both fee and tip by the minimum bump.
      const minFee = bump(offeredFee);
      const minTip = bump(offeredTip);
      if (versions.length >= MAX_TX_VERSIONS || minFee > cap) {
        await feeCapReached(
          tx.txHash,
          versions.length >= MAX_TX_VERSIONS
            ? `it has ${versions.length} versions, the most allowed (MAX_TX_VERSIONS)`
            : `the network estimate ${fees.maxFeePerGas} wei/gas is above what the cap ${cap} lets a replacement offer`,
        );
        return await send(latest, versions);
      }
      const fee = min(max(fees.maxFeePerGas, minFee), cap);
      const tip = min(max(fees.maxPriorityFeePerGas, minTip), fee);
      const replacement = await sign({
        type: "eip1559",
        chainId,
        nonce: previous.nonce,
        to: previous.to,
        data: previous.data,
        value: previous.value ?? 0n,
        gas: previous.gas,
        maxFeePerGas: fee,
        maxPriorityFeePerGas: tip,
      });
      // Read back from its own bytes before it is recorded (chains/effects.ts): a replacement may only re-price what it
      // replaces, whose effects were checked against the request when it was prepared (chains/verify.ts).
      const [was, now_] = await Promise.all([explainEvmTx(latest.raw, chain), explainEvmTx(replacement.raw, chain)]);
      const differs = replacementDifferences(was, now_, (previous.gas ?? 0n) * cap);
      if (differs.length > 0) {
        throw new ReplacementMismatchError(chain, tx.txHash, replacement.txHash, differs);
      }
      // Recorded before it is sent: txStatus and later broadcasts must know every version that could be mined.
      const recorded = await state.recordReplacements(entry, chain, tx.txHash, [
        ...replacements,
        { ...replacement, at: now() },
      ]);
      if (!recorded) return; // another nudge replaced it just now
      await send(replacement, [...versions, replacement]);
    },
  };
}

/** At least +12.5% (and at least +1 wei), the replacement bump every common client accepts. */
function bump(value: bigint): bigint {
  return value + (value + 7n) / 8n + 1n;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
