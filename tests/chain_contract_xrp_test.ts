/**
 * The chain contract suite (tests/support/chain_contract.ts) against the xrp adapter (chains/xrp) on a rippled-shaped
 * server (tests/support/rippled_rpc_server.ts; no rippled runs on this machine kind): deposits to our addresses,
 * payouts from the hot wallet verified and applied by the server, sweeps of funded deposit addresses into the hot
 * wallet, and a payout or a sweep killed two ways: lost after submission (proven dead once a validated ledger passes
 * its LastLedgerSequence, the node having searched the range), and its Sequence used by another transaction of its
 * account (a conflict).
 */
import { deadEffects } from "../model/sent_tx_effects.ts";
import { addSentTxEffects } from "../kv/sent_tx_effects.ts";
import type { Intent } from "../actors/transition.ts";
import type { DeathProof, PreparedTx } from "../chains/adapter.ts";
import { sequenceLockKey } from "../kv/chain_state.ts";
import { NATIVE } from "../chains/catalog.ts";
import { ACCOUNT_PURPOSES_UNSUPPORTED, type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { withKv } from "./support/kv.ts";
import type { RippledServer } from "./support/rippled_rpc_server.ts";
import { depositAddress, elsewhere, hotWallet, withRippled, XRP, xrpOn } from "./support/xrp_env.ts";

const NAME = "xrp adapter on a rippled-shaped server (no rippled runs here)";

const kills: Record<
  "expired" | "conflict",
  (server: RippledServer, send: (tx: PreparedTx) => Promise<void>) => (tx: PreparedTx) => Promise<void>
> = {
  // Accepted by the node, then lost: it never reaches a ledger and its LastLedgerSequence passes.
  expired: (server, send) => async (tx) => {
    server.hooks.drop(tx.txHash);
    await send(tx);
  },
  // Recorded, not sent: another transaction of its account (the hot wallet for a payout, the deposit address for a
  // sweep) takes its Sequence.
  conflict: (server) => (tx) => {
    if (tx.consumes?.kind !== "nonce") throw new Error(`an xrp transaction consumes a Sequence: ${tx.txHash}`);
    server.hooks.useSequence(tx.consumes.account);
    return Promise.resolve();
  },
};

for (const kind of ["expired", "conflict"] as const) {
  Deno.test(`chain contract: ${NAME}, killed by ${kind}`, async (t) => {
    await withRippled({ apiVersion: kind === "expired" ? 2 : 1 }, async (server) => {
      await withKv("chain-contract-xrp-", async (kv) => {
        server.hooks.fund(hotWallet, 10_000n * XRP);
        server.hooks.validateThrough(server.hooks.closedIndex + 1);
        const xrp = xrpOn(server);
        let nextIndex = 1;
        let labelNumber = 0;
        const byLabel = new Map<string, PreparedTx[]>();
        const byHash = new Map<string, PreparedTx>();

        /**
         * What the order actor does before a new transaction takes a Sequence a dead one held: records the death, which
         * releases the lock (kv/chain_state.ts addReleases), in one commit.
         */
        async function releaseIfDead(tx: PreparedTx): Promise<void> {
          if (tx.consumes?.kind !== "nonce") return;
          const lock = await kv.get<{ txHash: string }>(sequenceLockKey("xrp", hotWallet, tx.consumes.nonce));
          const holder = lock.value ? byHash.get(lock.value.txHash) : undefined;
          if (!holder || holder.txHash === tx.txHash) return;
          const s = await xrp.reader.txStatus(holder.txHash, {
            raw: holder.raw,
            expiry: holder.expiry,
            consumes: holder.consumes,
          });
          if (s.state !== "dead") return;
          const intent: Intent = {
            chain: "xrp",
            txHash: holder.txHash,
            raw: holder.raw,
            preparedAt: new Date().toISOString(),
            expiry: holder.expiry,
            consumes: holder.consumes,
          };
          const atomic = kv.atomic();
          addSentTxEffects(atomic, deadEffects(intent, s.proof as DeathProof));
          await atomic.commit();
        }

        const harness: ContractHarness = {
          name: NAME,
          chain: "xrp",
          kv,
          reader: xrp.reader,
          sender: xrp.payer,
          confirmations: 1,
          async prepare(label) {
            const amount = XRP + BigInt(++labelNumber) * 1_000n; // distinct per label
            const tx = await xrp.payer.preparePayout({
              orderId: label,
              to: elsewhere,
              amount,
              memo: String(labelNumber),
            });
            await releaseIfDead(tx);
            byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
            byHash.set(tx.txHash, tx);
            return tx;
          },
          async landed(label) {
            const landed: string[] = [];
            for (const tx of byLabel.get(label) ?? []) {
              if ((await xrp.reader.txStatus(tx.txHash)).state === "included") landed.push(tx.txHash);
            }
            return landed;
          },
          transferToUs() {
            const amount = 20n * XRP + BigInt(nextIndex);
            const txHash = server.hooks.fund(depositAddress(nextIndex++), amount);
            return Promise.resolve({ txHash, amount });
          },
          mine(blocks) {
            server.hooks.closeLedgers(blocks);
            return Promise.resolve();
          },
          kill: { kind, run: kills[kind](server, (tx) => xrp.payer.broadcast(tx)) },
          purposes: {
            sweep: {
              sender: xrp.payer,
              // A funded deposit address, swept as actors/sweeper.ts does: its balance less the base reserve.
              async prepare(label) {
                const from = depositAddress(nextIndex);
                server.hooks.fund(from, 20n * XRP);
                server.hooks.validateThrough(server.hooks.closedIndex + 1);
                const amount = (await xrp.reader.balance!(from)) - NATIVE.xrp.reserve;
                const tx = await xrp.payer.prepareSweep({
                  sweepId: label,
                  from,
                  derivationIndex: nextIndex++,
                  amount,
                });
                byLabel.set(label, [...(byLabel.get(label) ?? []), tx]);
                byHash.set(tx.txHash, tx);
                return tx;
              },
            },
          },
          unsupported: {
            ...ACCOUNT_PURPOSES_UNSUPPORTED,
            "reorg before finality removes a deposit":
              "the reader reads validated ledgers only, which never change: there is no reorg to see",
            "skipped block scanned past": "the XRP Ledger has a ledger at every index",
            "reservation released when its transaction is proven dead":
              "an account chain: a payout consumes a Sequence, not coins (its lock's release is tested in tests/xrp_payer_test.ts)",
          },
          close: () => Promise.resolve(),
        };
        await runChainContract(t, harness);
      });
    });
  });
}
