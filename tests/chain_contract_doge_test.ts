/**
 * The chain contract suite (tests/support/chain_contract.ts) against the doge adapter (chains/utxo) on litecoind
 * regtest (Bitcoin Core family, standing in for Dogecoin Core): deposits from the node's wallet to our derived
 * P2PKH addresses, payouts and consolidations signed by us spending real coins at our addresses, a reorg made with
 * `invalidateblock` and a competing branch of empty blocks, and a payout or a consolidation killed by another of our
 * transactions spending one of its inputs, proven dead by conflict once that spend is buried.
 */
import type { PayoutCoin, PreparedTx } from "../chains/adapter.ts";
import {
  type ContractHarness,
  runChainContract,
  UTXO_PURPOSES_UNSUPPORTED,
  utxoConsolidation,
} from "./support/chain_contract.ts";
import { dogeOnLitecoind } from "./support/doge_regtest.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { withKv } from "./support/kv.ts";

const RUN = litecoindAvailable("tests/chain_contract_doge_test.ts");
const NAME = "doge adapter on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core)";
const DOGE = 100_000_000n;

Deno.test({ name: `chain contract: ${NAME}`, ignore: !RUN }, async (t) => {
  const node = await startLitecoind();
  try {
    await withKv("chain-contract-doge-", async (kv) => {
      const doge = dogeOnLitecoind(node, { confirmations: 3 });
      const wallet = await node.call<string>("getnewaddress", ["", "legacy"]);
      let nextIndex = 0;
      let labelNumber = 0;
      const byLabel = new Map<string, PreparedTx[]>();
      const coinsOf = new Map<string, PayoutCoin[]>();
      const harness: ContractHarness = {
        name: NAME,
        chain: "doge",
        kv,
        reader: doge.reader,
        sender: doge.payer,
        confirmations: doge.settings.confirmations,
        async prepare(label, opts) {
          const coins = opts?.coins ?? [await doge.depositCoin(nextIndex++, 3n * DOGE)];
          // Distinct per label: the amount carries the label's number.
          const amount = DOGE + BigInt(++labelNumber) * 1_000_000n;
          const tx = await doge.payer.preparePayout({ orderId: label, to: wallet, amount, memo: null, coins });
          byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
          coinsOf.set(tx.txHash, coins);
          return tx;
        },
        coins:
          async () => [await doge.depositCoin(nextIndex++, 2n * DOGE), await doge.depositCoin(nextIndex++, 2n * DOGE)],
        async landed(label) {
          const landed: string[] = [];
          for (const tx of byLabel.get(label) ?? []) {
            if ((await doge.reader.txStatus(tx.txHash)).state === "included") landed.push(tx.txHash);
          }
          return landed;
        },
        async transferToUs() {
          // One output, no change: the transaction's only transfer is ours.
          return await node.sendWhole(doge.address(nextIndex++));
        },
        async mine(blocks) {
          await node.mine(blocks);
        },
        async checkpoint() {
          const height = (await doge.reader.tip()).number;
          return async () => {
            const tip = (await doge.reader.tip()).number;
            const first = await doge.reader.blockHash(height + 1);
            if (typeof first !== "string") return;
            await node.call("invalidateblock", [first]);
            // Empty blocks, so the transactions of the old branch stay out of it (back in the mempool).
            for (let n = height; n < tip; n++) await node.call("generateblock", [node.minerAddress, []]);
          };
        },
        kill: {
          kind: "conflict",
          async run(tx) {
            // Another of our transactions spends the first input: mined, it proves `tx` dead once buried. Only that
            // coin is spent on chain; the others `tx` held are still ours.
            const [coin] = coinsOf.get(tx.txHash)!;
            const rival = await doge.payer.preparePayout({
              orderId: `kill-${tx.txHash}`,
              to: wallet,
              amount: coin.amount / 2n,
              memo: null,
              coins: [coin],
            });
            await doge.payer.broadcast(rival);
            return { spent: [{ txHash: coin.txHash, index: coin.index }] };
          },
        },
        purposes: {
          consolidation: utxoConsolidation(doge.payer, doge.settings.fee, (label, tx, coins) => {
            byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
            coinsOf.set(tx.txHash, coins);
          }),
        },
        unsupported: {
          "skipped block scanned past": "a UTXO chain has a block at every height",
          ...UTXO_PURPOSES_UNSUPPORTED,
        },
        close: () => Promise.resolve(),
      };
      await runChainContract(t, harness);
    });
  } finally {
    await node.stop();
  }
});
