/**
 * The chain contract suite (tests/support/chain_contract.ts) against the sim adapters on a real KV file: native
 * payouts on sim sol (skips slots, expiry by height) and sim xrp (expiry by ledger), and uAsset mints on sim base.
 * Plus the watcher over a skipped Solana slot: scanned past, not a reorg, the deposit after it recorded once.
 */
import assert from "node:assert/strict";
import { keccak256, toHex } from "viem";
import type { NativeChain } from "../chains/catalog.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { cursorKey, type WatchResume, watchResumeKey } from "../kv/pipeline.ts";
import { watchOnce } from "../actors/watcher.ts";
import { openKv } from "../kv/open.ts";
import { type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { ledgerTxs } from "./support/chain_facts.ts";
import { seededRandom } from "./support/chaos.ts";
import { countKeys, handPipeline, SIM_TRANSFER_ADDRESS, watchToTip } from "./support/watch.ts";

const DEPOSIT_ADDRESS = "our-deposit-address";
const HOLDER = "0x" + "4d".repeat(20);

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

async function simPayoutHarness(chain: NativeChain): Promise<ContractHarness> {
  const { kv, close } = await simKv();
  const sim = simChains(kv, { random: seededRandom(3) });
  const ledger = sim.ledger(chain);
  const payer = sim.payer(chain);
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
    landed: async (label) =>
      (await ledgerTxs(kv, chain))
        .filter((t) => t.tx.kind === "payout" && t.tx.orderId === label && t.status === "included")
        .map((t) => t.hash),
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
    unsupported: chain === "sol" ? {} : { "skipped block scanned past": `only Solana skips slots, not ${chain}` },
    close,
  };
}

async function simMintHarness(): Promise<ContractHarness> {
  const { kv, close } = await simKv();
  const sim = simChains(kv, { random: seededRandom(4) });
  const chain = "base";
  const ledger = sim.ledger(chain);
  const minter = sim.minter(chain);
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
      return minted === null ? [] : [minted];
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
    },
    close,
  };
}

const HARNESSES: [string, () => Promise<ContractHarness>][] = [
  ["sim sol payouts", () => simPayoutHarness("sol")],
  ["sim xrp payouts", () => simPayoutHarness("xrp")],
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
