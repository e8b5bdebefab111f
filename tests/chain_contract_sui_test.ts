/**
 * The chain contract suite (tests/support/chain_contract.ts) against the live sui adapter (chains/sui: GraphQL client,
 * checkpoint reader, payer) on a Sui-GraphQL-shaped server (tests/support/sui_graphql_server.ts: the schema shipped in
 * @mysten/sui executed over an in-memory chain; no Sui node runs on this machine kind): deposits to our addresses,
 * payouts from the hot wallet executed and verified by the server, sweeps of funded deposit addresses into the hot
 * wallet, coin reservations on the gas coins a payout or a sweep spends, and a payout or a sweep killed by expiry
 * (sent, dropped, never included), proven dead once the epoch passes its expiration.
 */
import type { PayoutCoin, PreparedTx } from "../chains/adapter.ts";
import { Signer } from "../chains/signer.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { NATIVE } from "../chains/catalog.ts";
import { ACCOUNT_PURPOSES_UNSUPPORTED, type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { withKv } from "./support/kv.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";

const NAME = "sui adapter on a Sui-GraphQL-shaped server (no Sui node runs here)";
const SUI = 1_000_000_000n;
/** Test-only mnemonic (public): never fund its keys anywhere real. */
const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const hot = signer.address("sui", 0, "hot");
const elsewhere = "0x" + "cd".repeat(32);

Deno.test(`chain contract: ${NAME}`, async (t) => {
  const server = await startSuiGraphqlServer({ checkpointsPerEpoch: 3 });
  try {
    await withKv("chain-contract-sui-", async (kv) => {
      const sui = suiAdapters({ urls: [server.url], signer, confirmations: 1 });
      let nextIndex = 0;
      let labelNumber = 0;
      // Every coin the harness gives the hot wallet is bigger than all before it, so the payer (largest coins first)
      // spends exactly the coins a case means, never one an earlier case left locked.
      let biggest = 1_000n * SUI;
      const fund = (amount: bigint) => {
        server.deposit(hot, amount);
        server.mine(1);
      };
      const byLabel = new Map<string, PreparedTx[]>();
      const harness: ContractHarness = {
        name: NAME,
        chain: "sui",
        kv,
        reader: sui.reader,
        sender: sui.payer,
        confirmations: 1,
        async prepare(label, opts) {
          const distinct = BigInt(++labelNumber) * 1_000n;
          let amount: bigint;
          if (opts?.coins) {
            // More than the largest coin holds: the payout needs both coins the case hands in.
            amount = opts.coins[0].amount + distinct;
          } else {
            biggest += SUI;
            fund(biggest);
            amount = SUI + distinct;
          }
          const tx = await sui.payer.preparePayout({ orderId: label, to: elsewhere, amount, memo: null });
          byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
          return tx;
        },
        coins() {
          biggest += 2n * SUI;
          fund(biggest);
          fund(biggest - SUI);
          const coins = server.coins(hot).sort((a, b) => (a.balance > b.balance ? -1 : 1)).slice(0, 2);
          return Promise.resolve(coins.map((c): PayoutCoin => ({
            txHash: c.objectId,
            index: c.version,
            amount: c.balance,
            address: hot,
            derivationIndex: 0,
            height: server.tip,
          })));
        },
        landed(label) {
          return Promise.resolve((byLabel.get(label) ?? []).map((tx) => tx.txHash).filter((d) => server.included(d)));
        },
        transferToUs() {
          const amount = 123_456_789n + BigInt(nextIndex);
          const txHash = server.deposit(signer.address("sui", nextIndex++), amount);
          return Promise.resolve({ txHash, amount });
        },
        mine(blocks) {
          server.mine(blocks);
          return Promise.resolve();
        },
        kill: {
          kind: "expired",
          async run(tx) {
            // Sent, but never included: no checkpoint takes it, and its expiration epoch passes.
            await sui.payer.broadcast(tx);
            server.drop(tx.txHash);
          },
        },
        purposes: {
          sweep: {
            sender: sui.payer,
            // A deposit address funded by two deposits, swept as actors/sweeper.ts does: its balance less the
            // reserve, every coin of the address spent (and locked) by the sweep.
            async prepare(label) {
              const index = nextIndex++;
              const from = signer.address("sui", index);
              server.deposit(from, 2n * SUI);
              server.deposit(from, 3n * SUI);
              server.mine(1);
              const amount = (await sui.reader.balance!(from)) - NATIVE.sui.reserve;
              const tx = await sui.payer.prepareSweep({ sweepId: label, from, derivationIndex: index, amount });
              byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
              return tx;
            },
          },
        },
        unsupported: {
          ...ACCOUNT_PURPOSES_UNSUPPORTED,
          "reorg before finality removes a deposit": "a certified Sui checkpoint is final: Sui never reorganises",
          "skipped block scanned past": "Sui numbers every checkpoint: there is no skipped one",
        },
        close: () => Promise.resolve(),
      };
      await runChainContract(t, harness);
    });
  } finally {
    await server.close();
  }
});
