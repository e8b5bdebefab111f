/**
 * The chain contract suite (tests/support/chain_contract.ts) against the sim adapters on a real KV file: native
 * payouts and deposit-address sweeps on sim sol (skips slots, expiry by height) and sim xrp (expiry by ledger), and
 * payouts and consolidations on sim doge (UTXO mode), and uAsset mints and transfer-address burns on sim base.
 * Plus the watcher over a skipped Solana slot: scanned past, not a reorg, the deposit after it recorded once.
 */
import assert from "node:assert/strict";
import { keccak256, toHex } from "viem";
import { type AccountChain, type ChainSymbol, NATIVE, type NativeChain } from "../chains/catalog.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { cursorKey, type WatchResume, watchResumeKey } from "../kv/pipeline.ts";
import { watchOnce } from "../actors/watcher.ts";
import { openKv } from "../kv/open.ts";
import {
  ACCOUNT_PURPOSES_UNSUPPORTED,
  type ContractHarness,
  runChainContract,
  UTXO_PURPOSES_UNSUPPORTED,
  utxoConsolidation,
} from "./support/chain_contract.ts";
import type { PayoutCoin } from "../chains/adapter.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { consolidationOrderId } from "../kv/consolidations.ts";
import { ledgerTxs } from "./support/chain_facts.ts";
import { seededRandom } from "./support/chaos.ts";
import { countKeys, handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const DEPOSIT_ADDRESS = "our-deposit-address";
const HOLDER = "0x" + "4d".repeat(20);
const DOGE = 100_000_000n;

async function simKv() {
  const dir = await Deno.makeTempDir({ prefix: "chain-contract-sim-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  return {
    kv,
    close: async () => {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Our transactions of `label` in a canonical block: a payout's order id, a sweep's id, a burn's batch id. */
async function landedOf(kv: Deno.Kv, chain: ChainSymbol, label: string): Promise<string[]> {
  return (await ledgerTxs(kv, chain))
    .filter((t) =>
      t.status === "included" &&
      ((t.tx.kind === "payout" && [label, consolidationOrderId(label)].includes(t.tx.orderId)) ||
        (t.tx.kind === "sweep" && t.tx.sweepId === label) ||
        (t.tx.kind === "burn" && t.tx.batchId === label))
    )
    .map((t) => t.hash);
}

async function simPayoutHarness(chain: AccountChain): Promise<ContractHarness> {
  const { kv, close } = await simKv();
  const sim = simChains(kv, { random: seededRandom(3) });
  const ledger = sim.ledger(chain);
  // Typed for either family, as the existing cases hand in coins; the sweeps need the account payer.
  const payer = sim.payer<NativeChain>(chain);
  const sweeper = sim.payer(chain);
  const reader = sim.reader(chain);
  let swept = 0;
  return {
    name: `sim ${chain} payouts`,
    chain,
    kv,
    reader: sim.reader(chain),
    sender: payer,
    confirmations: 2,
    prepare: (label, opts) =>
      payer.preparePayout({
        orderId: label,
        to: "payout-destination",
        amount: 1_000n,
        memo: null,
        coins: opts?.coins ?? [],
      }),
    landed: (label) => landedOf(kv, chain, label),
    transferToUs: async () => {
      const amount = 123_456_789n;
      const { txHash } = await ledger.submitNativeTransfer({
        from: SIM_DEPOSIT_SENDER[chain],
        to: DEPOSIT_ADDRESS,
        amount,
      });
      return { txHash, amount };
    },
    mine: async (blocks) => {
      for (let i = 0; i < blocks; i++) await ledger.sealBlock();
    },
    checkpoint: async () => {
      const mark = (await ledger.head()).number;
      return async () => void await ledger.reorg((await ledger.head()).number - mark);
    },
    skipSlot: chain === "sol" ? async () => void await ledger.sealBlock({ skipSlots: 1 }) : undefined,
    kill: {
      kind: "expired",
      // Stalled out of every block until its expiry passes, as a payout behind a congested network.
      run: async (tx) => {
        await ledger.setFaults({ stallPayouts: 1 });
        await payer.broadcast(tx);
      },
    },
    purposes: {
      sweep: {
        sender: sweeper,
        // A deposit address funded by a deposit, swept as actors/sweeper.ts does: its balance less the reserve.
        async prepare(label) {
          const from = `${DEPOSIT_ADDRESS}-${++swept}`;
          await ledger.submitNativeTransfer({
            from: SIM_DEPOSIT_SENDER[chain],
            to: from,
            amount: 50n * NATIVE[chain].reserve,
          });
          await ledger.sealBlock();
          const amount = (await reader.balance!(from)) - NATIVE[chain].reserve;
          return await sweeper.prepareSweep({ sweepId: label, from, derivationIndex: swept, amount });
        },
        kill: {
          kind: "expired",
          // The sim stalls payouts only (its `stallPayouts` fault): a sweep dies unsent, its expiry passing by.
          run: async (tx) => {
            const own = { raw: tx.raw, expiry: tx.expiry, consumes: tx.consumes };
            for (let i = 0; i < 400 && (await reader.txStatus(tx.txHash, own)).state !== "dead"; i++) {
              await ledger.sealBlock();
            }
          },
        },
      },
    },
    unsupported: {
      ...(chain === "sol" ? {} : { "skipped block scanned past": `only Solana skips slots, not ${chain}` }),
      ...ACCOUNT_PURPOSES_UNSUPPORTED,
    },
    close,
  };
}

/**
 * Sim doge in UTXO mode: payouts and consolidations spending coins deposited on the ledger, and a transaction killed
 * by another of ours spending one of its inputs. The sim's ledger names in a conflict proof only the inputs the other
 * transaction took (chains/sim/ledger.ts `conflictOf`).
 */
async function simUtxoHarness(): Promise<ContractHarness> {
  const { kv, close } = await simKv();
  const sim = simChains(kv, { random: seededRandom(5) });
  const chain = "doge";
  const ledger = sim.ledger(chain);
  const payer = sim.payer(chain);
  const reader = sim.reader(chain);
  const confirmations = NATIVE[chain].simConfirmations;
  const coinsOf = new Map<string, PayoutCoin[]>();
  let n = 0;
  const mine = async (blocks: number) => {
    for (let i = 0; i < blocks; i++) await ledger.sealBlock();
  };
  /** A deposit to one of our addresses, confirmed: a coin the payer can spend. */
  const coin = async (amount: bigint): Promise<PayoutCoin> => {
    const address = `${DEPOSIT_ADDRESS}-${++n}`;
    const { txHash } = await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER[chain], to: address, amount });
    await mine(confirmations);
    const status = await reader.txStatus(txHash);
    const output = (await reader.transfersOf(txHash))?.find((t) => t.to === address);
    if (status.state !== "included" || !output) throw new Error(`deposit ${txHash} not mined`);
    return { txHash, index: output.index, amount, address, derivationIndex: n, height: status.blockNumber };
  };
  const prepare = async (label: string, coins: PayoutCoin[], amount: bigint, to: string) => {
    const tx = await payer.preparePayout({ orderId: label, to, amount, memo: null, coins });
    coinsOf.set(tx.txHash, coins);
    return tx;
  };
  return {
    name: "sim doge payouts and consolidations",
    chain,
    kv,
    reader,
    sender: payer,
    confirmations,
    prepare: async (label, opts) =>
      await prepare(label, opts?.coins ?? [await coin(3n * DOGE)], DOGE + BigInt(++n), "payout-destination"),
    coins: async () => [await coin(2n * DOGE), await coin(2n * DOGE)],
    landed: (label) => landedOf(kv, chain, label),
    transferToUs: async () => {
      const amount = 123_456_789n;
      const { txHash } = await ledger.submitNativeTransfer({
        from: SIM_DEPOSIT_SENDER[chain],
        to: DEPOSIT_ADDRESS,
        amount,
      });
      return { txHash, amount };
    },
    mine,
    checkpoint: async () => {
      const mark = (await ledger.head()).number;
      return async () => void await ledger.reorg((await ledger.head()).number - mark);
    },
    kill: {
      kind: "conflict",
      // Another of our transactions spends its first input, and is buried: only that coin is spent on chain.
      run: async (tx) => {
        const [first] = coinsOf.get(tx.txHash)!;
        await payer.broadcast(await prepare(`kill-${tx.txHash}`, [first], first.amount / 2n, "elsewhere"));
        return { spent: [{ txHash: first.txHash, index: first.index }] };
      },
    },
    purposes: {
      consolidation: utxoConsolidation(payer, utxoFee(chain), (_label, tx, coins) => coinsOf.set(tx.txHash, coins)),
    },
    unsupported: {
      "skipped block scanned past": "a UTXO chain has a block at every height",
      "reservation released when its transaction is proven dead":
        "its last step signs again over both released coins, but the conflict that killed the payout spent one of " +
        "them and the sim's payer refuses a spent coin (the consolidation death case checks the released coins here)",
      ...UTXO_PURPOSES_UNSUPPORTED,
    },
    close,
  };
}

async function simMintHarness(): Promise<ContractHarness> {
  const { kv, close } = await simKv();
  // The transfer address the deposits go to is the one burns are sent from (actors/onchain_burn.ts).
  const sim = simChains(kv, { random: seededRandom(4), transferAddress: SIM_TRANSFER_ADDRESS });
  const chain = "base";
  const ledger = sim.ledger(chain);
  const minter = sim.minter(chain);
  const burner = sim.uAssetSender!(chain);
  let burns = 0;
  const depositId = (label: string) => keccak256(toHex(`chain-contract-sim:${label}`));
  return {
    name: "sim base mints",
    chain,
    kv,
    reader: sim.reader(chain),
    sender: minter,
    confirmations: 2,
    prepare: (label) => minter.prepareMint({ depositId: depositId(label), to: HOLDER, asset: "uSOL", amountWei: 5n }),
    landed: async (label) => {
      const minted = await minter.mintedBy(depositId(label));
      return minted === null ? await landedOf(kv, chain, label) : [minted];
    },
    transferToUs: async () => {
      const amount = 10n ** 18n;
      await ledger.faucet({ address: HOLDER, asset: "uXRP", amount });
      const res = await ledger.submitErc20Transfer({ from: HOLDER, to: SIM_TRANSFER_ADDRESS, asset: "uXRP", amount });
      if (!res.ok) throw new Error(`transfer refused: ${res.reason}`);
      return { txHash: res.txHash, amount };
    },
    mine: async (blocks) => {
      for (let i = 0; i < blocks; i++) await ledger.sealBlock();
    },
    checkpoint: async () => {
      const mark = (await ledger.head()).number;
      return async () => void await ledger.reorg((await ledger.head()).number - mark);
    },
    unsupported: {
      "skipped block scanned past": "EVM chains never skip a height",
      "dead transaction proven with its proof kind":
        "sim mints carry no nonce and no expiry: nothing can prove one dead (the contract refuses a reused deposit id)",
      "reservation released when its transaction is proven dead": "mints spend no coins",
      "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
        "an EVM chain has no deposit addresses to sweep",
      "sweep: proven dead by the driver, its reservations released": "an EVM chain has no deposit addresses to sweep",
      "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
        "an EVM chain holds no coins (UTXOs) to consolidate",
      "consolidation: proven dead by the driver, its reservations released":
        "an EVM chain holds no coins (UTXOs) to consolidate",
      "burn: proven dead by the driver, its reservations released":
        "sim burns carry no nonce and no expiry: nothing can prove one dead",
    },
    purposes: {
      burn: {
        sender: burner,
        // uAssets the transfer address holds for completed burn orders, burned in one batch.
        async prepare(label) {
          const amount = 10n ** 15n + BigInt(++burns);
          await ledger.faucet({ address: SIM_TRANSFER_ADDRESS, asset: "uSOL", amount });
          await ledger.sealBlock();
          return await burner.prepareBurn({ asset: "uSOL", amount, batchId: label });
        },
      },
    },
    close,
  };
}

const HARNESSES: [string, () => Promise<ContractHarness>][] = [
  ["sim sol payouts", () => simPayoutHarness("sol")],
  ["sim xrp payouts", () => simPayoutHarness("xrp")],
  ["sim doge payouts and consolidations", simUtxoHarness],
  ["sim base mints", simMintHarness],
];

for (const [name, make] of HARNESSES) {
  Deno.test(`chain contract: ${name}`, async (t) => {
    const h = await make();
    try {
      await runChainContract(t, h);
    } finally {
      await h.close();
    }
  });
}

Deno.test("watcher over a skipped sol slot: scanned past, no reorg, the deposit after it recorded once", async () => {
  const p = await handPipeline();
  try {
    const owner = "0x" + "0c".repeat(20);
    const created = await createMintWallet(p.kv, owner, "sol", "base", (c, i) => `${c}-deposit-${i}`);
    assert.ok(created.ok);
    const ledger = p.sim.ledger("sol");
    await ledger.sealBlock();
    await watchToTip(p.ctx, "sol");
    await ledger.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: "sol-deposit-0", amount: 50_000_000n });
    await ledger.sealBlock({ skipSlots: 2 });
    const tip = await ledger.head();
    assert.equal(await watchToTip(p.ctx, "sol"), 1);
    assert.deepEqual((await p.kv.get(cursorKey("sol"))).value, tip, "the cursor is past the skipped slots");
    // A later tick, and a rescan from a cursor moved back onto the skipped slot's height, record nothing more.
    await ledger.sealBlock();
    assert.equal(await watchToTip(p.ctx, "sol"), 0);
    await p.kv.set(cursorKey("sol"), { number: tip.number - 3, hash: await ledger.blockHash(tip.number - 3) });
    assert.equal(await watchToTip(p.ctx, "sol"), 0);
    // An operator resuming from a skipped slot: the watcher starts from the block below it.
    const resume: WatchResume = { fromBlock: tip.number - 1, by: "test", at: new Date().toISOString() };
    await p.kv.set(watchResumeKey("sol"), resume);
    assert.equal((await watchOnce(p.ctx, "sol", "test-watcher", 60_000)).scannedTo, tip.number - 3);
    assert.equal(await watchToTip(p.ctx, "sol"), 0);
    assert.equal(await countKeys(p.kv, ["order"]), 1);
    assert.ok(!p.logs.some((l) => /reorg/.test(l)), p.logs.join("\n"));
  } finally {
    await p.close();
  }
});
