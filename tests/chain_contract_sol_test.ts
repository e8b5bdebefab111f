/**
 * The chain contract suite (tests/support/chain_contract.ts) against the live sol adapter on a Solana-RPC-shaped
 * server (tests/support/solana_rpc_server.ts; no validator runs here): deposits from a stranger, payouts signed from
 * our hot wallet and executed by the server, sweeps of funded deposit addresses into the hot wallet, a skipped slot,
 * and a payout or a sweep killed by expiry (sent, dropped by the leader) proven dead once the finalized block height
 * passes its lastValidBlockHeight. Twice: reading blocks, and polling our addresses (`SOL_DETECTION=addresses`).
 */
import assert from "node:assert/strict";
import type { ChainReader, PreparedTx } from "../chains/adapter.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { NATIVE } from "../chains/catalog.ts";
import { ACCOUNT_PURPOSES_UNSUPPORTED, type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { withKv } from "./support/kv.ts";
import { ours, signer, solOn, stranger } from "./support/sol_env.ts";
import { type SolanaRpcServer, startSolanaRpcServer } from "./support/solana_rpc_server.ts";

const NAME = "sol adapter on a Solana-RPC-shaped server (no validator runs here)";
const POLLING = "sol adapter polling addresses on a Solana-RPC-shaped server (no validator runs here)";
const SOL = 1_000_000_000n;

/** Every address the harness pays or sweeps (`ours(n)`, n counting up), listed as the watcher lists them. */
const OURS = Array.from({ length: 200 }, (_, i) => ours(i));
const OURS_SET = new Set(OURS);

/**
 * The reader the watcher runs with `SOL_DETECTION=addresses` (chains/sol/poll.ts): every scan is given our addresses,
 * as actors/watcher.ts gives it the deposit address set, so it polls them instead of reading blocks.
 */
function polling(server: SolanaRpcServer): ChainReader {
  const reader = solAdapters({
    urls: [server.url],
    signer,
    confirmations: 1,
    detection: { mode: "addresses", maxAddresses: 0, pollEveryMs: 10_000 },
  }).reader;
  const addresses = { size: OURS.length, values: () => OURS };
  return {
    ...reader,
    scan: (from, to, opts) => reader.scan(from, to, { ours: (a) => OURS_SET.has(a), ...opts, addresses }),
  };
}

Deno.test(`chain contract: ${NAME}`, (t) => contract(t, NAME));
Deno.test(`chain contract: ${POLLING}`, (t) => contract(t, POLLING, polling));

async function contract(t: Deno.TestContext, name: string, readerOn?: (server: SolanaRpcServer) => ChainReader) {
  const server = startSolanaRpcServer({ finalityLag: 2, blockhashValidity: 20 });
  try {
    await withKv("chain-contract-sol-", async (kv) => {
      const live = solOn(server);
      const sol = { ...live, reader: readerOn?.(server) ?? live.reader };
      server.fund(signer.address("sol", 0, "hot"), 100n * SOL);
      let n = 0;
      const byLabel = new Map<string, PreparedTx[]>();
      const harness: ContractHarness = {
        name,
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
      if (readerOn) assert.ok((server.calls.get("getSignaturesForAddress") ?? 0) > 0, "the scans polled our addresses");
    });
  } finally {
    await server.close();
  }
}
