/**
 * The Sui reader over GraphQL (never the retired JSON-RPC): block number = checkpoint sequence number, hash = its
 * digest, parent = the previous checkpoint's digest. A certified checkpoint is final (Sui has no reorgs), so every
 * `included` answer carries `final: true`. Deposits are the positive SUI balance changes of address owners in
 * successful transactions: a failed transaction charges gas and credits no one. A balance change is numbered by its
 * position in its transaction's balance changes, so (digest, index) names a deposit for ever.
 */
import type { ChainReader, ObservedTransfer, ScannedBlock, TxStatus } from "../adapter.ts";
import {
  balanceAnswer,
  balanceChangesAnswer,
  checkpointDigestAnswer,
  checkpointTransactionsAnswer,
  latestCheckpointAnswer,
  scanCheckpointsAnswer,
  type SuiBalanceChange,
  type SuiBalanceChanges,
  suiRequest,
  type SuiScannedCheckpoint,
  type SuiTransaction,
  transactionAnswer,
  txStatusAnswer,
} from "./answers.ts";
import { isSuiCoinType, normalizeSuiAddress, type SuiGraphql } from "./client.ts";
import {
  BALANCE,
  BALANCE_CHANGES_PAGE,
  CHECKPOINT_DIGEST,
  CHECKPOINT_TRANSACTIONS,
  LATEST_CHECKPOINT,
  SCAN_BATCH,
  SCAN_CHECKPOINTS,
  TRANSACTION,
  TX_STATUS,
} from "./graphql.ts";

export function suiReader(gql: SuiGraphql): ChainReader {
  /** Every balance change of a transaction, following pages past the first. */
  async function allBalanceChanges(digest: string, first: SuiBalanceChanges | null): Promise<SuiBalanceChange[]> {
    const nodes = [...(first?.nodes ?? [])];
    let page = first?.pageInfo;
    while (page?.hasNextPage) {
      const data = await suiRequest(gql, BALANCE_CHANGES_PAGE, balanceChangesAnswer, { digest, after: page.endCursor });
      const next = data.transactionEffects?.balanceChanges;
      if (!next) break;
      nodes.push(...next.nodes);
      page = next.pageInfo;
    }
    return nodes;
  }

  /** The SUI credits of one transaction: none when it failed. */
  async function transfersOfNode(tx: SuiTransaction): Promise<ObservedTransfer[]> {
    if (tx.effects?.status !== "SUCCESS") return [];
    const changes = await allBalanceChanges(tx.digest, tx.effects.balanceChanges);
    const from = tx.sender?.address ?? "";
    const transfers: ObservedTransfer[] = [];
    changes.forEach((change, index) => {
      if (!change.owner || !change.coinType || !isSuiCoinType(change.coinType.repr)) return;
      const amount = change.amount!; // present on every SUI change of an address (answers.ts)
      if (amount <= 0n) return;
      transfers.push({ txHash: tx.digest, index, from, to: change.owner.address, amount, asset: "native" });
    });
    return transfers;
  }

  async function checkpointTransactions(cp: SuiScannedCheckpoint): Promise<SuiTransaction[]> {
    const txs = [...(cp.transactions?.nodes ?? [])];
    let page = cp.transactions?.pageInfo;
    while (page?.hasNextPage) {
      const data = await suiRequest(gql, CHECKPOINT_TRANSACTIONS, checkpointTransactionsAnswer, {
        sequenceNumber: cp.sequenceNumber,
        after: page.endCursor,
      });
      const next = data.checkpoint?.transactions;
      if (!next) break;
      txs.push(...next.nodes);
      page = next.pageInfo;
    }
    return txs;
  }

  async function tipRef() {
    const data = await suiRequest(gql, LATEST_CHECKPOINT, latestCheckpointAnswer);
    if (!data.checkpoint) throw new Error("sui GraphQL: the node knows no checkpoint");
    return { number: data.checkpoint.sequenceNumber, hash: data.checkpoint.digest };
  }

  return {
    chain: "sui",
    finality: { kind: "flag", flag: "checkpointed" },

    tip: tipRef,

    async blockHash(number) {
      const data = await suiRequest(gql, CHECKPOINT_DIGEST, checkpointDigestAnswer, { sequenceNumber: number });
      return data.checkpoint?.digest ?? null;
    },

    async scan(from, to) {
      if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
        throw new RangeError(`sui scan: bad checkpoint range ${from}..${to}`);
      }
      const blocks: ScannedBlock[] = [];
      for (let start = from; start <= to; start += SCAN_BATCH) {
        const end = Math.min(to, start + SCAN_BATCH - 1);
        const data = await suiRequest(gql, SCAN_CHECKPOINTS, scanCheckpointsAnswer, {
          after: start === 0 ? null : start - 1,
          before: end + 1,
        });
        const nodes = data.checkpoints?.nodes ?? [];
        for (const cp of nodes) {
          const transfers: ObservedTransfer[] = [];
          for (const tx of await checkpointTransactions(cp)) transfers.push(...await transfersOfNode(tx));
          blocks.push({
            number: cp.sequenceNumber,
            hash: cp.digest,
            parentHash: cp.previousCheckpointDigest ?? "",
            transfers,
          });
        }
        // Sui numbers every checkpoint: fewer than asked means the rest is above the tip.
        if (nodes.length < end - start + 1) break;
      }
      return blocks;
    },

    async txStatus(txHash, ours): Promise<TxStatus> {
      const data = await suiRequest(gql, TX_STATUS, txStatusAnswer, { digest: txHash });
      const effects = data.transactionEffects;
      if (effects?.checkpoint) {
        const blockNumber = effects.checkpoint.sequenceNumber;
        const tip = data.checkpoint ? data.checkpoint.sequenceNumber : blockNumber;
        const success = effects.status === "SUCCESS";
        return {
          state: "included",
          blockNumber,
          confirmations: Math.max(1, tip - blockNumber + 1),
          success,
          ...(success ? {} : { reason: effects.executionError?.message ?? "the transaction failed" }),
          final: true,
        };
      }
      if (effects) return { state: "pending" }; // executed, not yet in a checkpoint this node serves
      const expiry = ours?.expiry;
      const epoch = data.epoch ? data.epoch.epochId : null;
      if (expiry?.kind === "epoch" && epoch !== null && epoch > expiry.value) {
        return {
          state: "dead",
          proof: { kind: "expired", expiry, reached: epoch },
          detail:
            `Sui epoch ${epoch} is past the transaction's expiration epoch ${expiry.value} and the node does not know ` +
            `its digest ${txHash}: it can never execute.`,
        };
      }
      return { state: "unknown" };
    },

    async transfersOf(txHash) {
      const data = await suiRequest(gql, TRANSACTION, transactionAnswer, { digest: txHash });
      if (!data.transaction || !data.transactionEffects?.checkpoint) return null;
      return await transfersOfNode(data.transaction);
    },

    async balance(address) {
      const data = await suiRequest(gql, BALANCE, balanceAnswer, { address: normalizeSuiAddress(address) });
      return data.address?.balance?.totalBalance ?? 0n;
    },
  };
}
