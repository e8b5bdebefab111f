/**
 * The chain contract suite (tests/support/chain_contract.ts) against the live sol adapter on a Solana-RPC-shaped
 * server (tests/support/solana_rpc_server.ts; no validator runs here): deposits from a stranger, payouts signed from
 * our hot wallet and executed by the server, sweeps of funded deposit addresses into the hot wallet, a skipped slot,
 * and a payout or a sweep killed by expiry (sent, dropped by the leader) proven dead once the finalized block height
 * passes its lastValidBlockHeight.
 */
import type { PreparedTx } from "../chains/adapter.ts";
import { NATIVE } from "../chains/catalog.ts";
import { ACCOUNT_PURPOSES_UNSUPPORTED, type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { withKv } from "./support/kv.ts";
import { ours, signer, solOn, stranger } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";

const NAME = "sol adapter on a Solana-RPC-shaped server (no validator runs here)";
const SOL = 1_000_000_000n;

Deno.test(`chain contract: ${NAME}`, async (t) => {
  const server = startSolanaRpcServer({ finalityLag: 2, blockhashValidity: 20 });
  try {
    await withKv("chain-contract-sol-", async (kv) => {
      const sol = solOn(server);
      server.fund(signer.address("sol", 0, "hot"), 100n * SOL);
      let n = 0;
      const byLabel = new Map<string, PreparedTx[]>();
      const harness: ContractHarness = {
        name: NAME,
        chain: "sol",
        kv,
        reader: sol.reader,
        sender: sol.payer,
        confirmations: 1,
        async prepare(label) {
          const amount = SOL + BigInt(++n) * 1_000n;
          const tx = await sol.payer.preparePayout({ orderId: label, to: stranger(n), amount, memo: null });
          byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
          return tx;
        },
        async landed(label) {
          const out: string[] = [];
          for (const tx of byLabel.get(label) ?? []) {
            if ((await sol.reader.txStatus(tx.txHash)).state === "included") out.push(tx.txHash);
          }
          return out;
        },
        transferToUs() {
          const amount = 123_456_789n + BigInt(++n);
          const txHash = server.inject({ payer: stranger(100), credits: [{ to: ours(n), lamports: amount }] });
          return Promise.resolve({ txHash, amount });
        },
        mine(blocks) {
          server.produce(blocks);
          return Promise.resolve();
        },
        skipSlot() {
          server.skip(1);
          server.produce(1);
          server.finalize();
          return Promise.resolve();
        },
        kill: {
          kind: "expired",
          async run(tx) {
            await sol.payer.broadcast(tx);
            server.drop(tx.txHash); // the leader never includes it: it expires
          },
        },
        purposes: {
          sweep: {
            sender: sol.payer,
            // A deposit address a stranger funded, swept as actors/sweeper.ts does: its balance less the reserve.
            async prepare(label) {
              const index = ++n;
              server.fund(ours(index), SOL);
              const amount = (await sol.reader.balance!(ours(index))) - NATIVE.sol.reserve;
              const tx = await sol.payer.prepareSweep({
                sweepId: label,
                from: ours(index),
                derivationIndex: index,
                amount,
              });
              byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
              return tx;
            },
          },
        },
        unsupported: {
          ...ACCOUNT_PURPOSES_UNSUPPORTED,
          "reorg before finality removes a deposit":
            "the reader answers only from finalized blocks, which Solana never rolls back: a fork below finality is invisible to it",
          "reservation released when its transaction is proven dead":
            "Solana payouts spend no coins and take no nonce: nothing is reserved",
        },
        close: () => Promise.resolve(),
      };
      await runChainContract(t, harness);
    });
  } finally {
    await server.close();
  }
});
