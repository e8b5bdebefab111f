/**
 * Verify before record on the simulated chains (chains/effects.ts, chains/sim/explain.ts): every sim adapter's
 * transaction, prepared by the real sim adapters over the embedded sim ledgers on a real KV file (no node, no local
 * server: the sim ledger is the chain), is read back from its own raw form and compared with what it was asked for.
 * Then the builder is made to lie (asked for something else than the intent) and `differences` must name the lie;
 * garbage and commands we never build are refused.
 */
import assert from "node:assert/strict";
import type { MintRequest, PreparedTx } from "../chains/adapter.ts";
import { EVM, EVM_CHAINS, NATIVE, type NativeChain, type UtxoChain } from "../chains/catalog.ts";
import { differences, type TxEffects, type TxIntent } from "../chains/effects.ts";
import { type SimChains, simChains } from "../chains/sim/adapters.ts";
import { explainSimTx, simUAssetContract } from "../chains/sim/explain.ts";
import { simPayoutExpiry } from "../chains/sim/ledger.ts";
import { encodeSimTx } from "../chains/sim/tx.ts";
import { CHANGE_INDEX } from "../chains/sim/utxo.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { withKv } from "./support/kv.ts";
import { seededRandom } from "./support/chaos.ts";
import { SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const HOT = (c: NativeChain) => `hot-${c}`;
const HOLDER = "0x" + "4d".repeat(20);
const STRANGER_EVM = "0x" + "66".repeat(20);
const DEPOSIT_ID = "0x" + "ab".repeat(32);
const OTHER_DEPOSIT_ID = "0x" + "cd".repeat(32);
const COIN = 100_000_000n;

/** Sim chains on a real KV file, hot wallets `hot-<chain>` (or what `operator` says), the test transfer address. */
async function withSim(
  fn: (sim: SimChains) => Promise<void>,
  operator: (c: NativeChain) => string = HOT,
): Promise<void> {
  await withKv("explain_sim_", async (kv) => {
    await fn(
      simChains(kv, { random: seededRandom(11), operatorAddress: operator, transferAddress: SIM_TRANSFER_ADDRESS }),
    );
  });
}

/** The nonce salt the raw form carries, as explain reports it. */
function saltOf(tx: PreparedTx): bigint {
  return BigInt("0x" + JSON.parse(tx.raw).nonce);
}

async function explained(chain: Parameters<typeof explainSimTx>[0], tx: PreparedTx): Promise<TxEffects> {
  return await explainSimTx(chain, tx.raw);
}

// ---- what each purpose decodes to ----

for (const chain of EVM_CHAINS) {
  Deno.test(`sim ${chain} (embedded sim ledger, real KV file): a mint decodes to mint(depositId, to, amount) on the uSOL contract`, async () => {
    await withSim(async (sim) => {
      const minter = sim.minter(chain);
      const tx = await minter.prepareMint({
        depositId: DEPOSIT_ID,
        to: HOLDER,
        asset: "uSOL",
        amountWei: 5n * 10n ** 18n,
      });
      const effects = await explained(chain, tx);
      assert.equal(effects.chain, chain);
      assert.equal(effects.chainId, EVM[chain].chainId);
      assert.equal(effects.from, undefined, "a sim mint names no signer");
      assert.deepEqual(effects.outputs, [], "no native value");
      assert.equal(effects.memo, null);
      assert.equal(effects.nonce, saltOf(tx));
      assert.equal(effects.expiry, undefined);
      assert.equal(effects.maxFee, undefined);
      assert.deepEqual(effects.call, {
        contract: "usol",
        function: "mint",
        depositId: DEPOSIT_ID,
        to: HOLDER,
        amount: 5n * 10n ** 18n,
      });
      const intent: TxIntent = {
        kind: "mint",
        chain,
        chainId: EVM[chain].chainId,
        from: "", // the sim mint has no signer: see chains/sim/explain.ts
        contract: simUAssetContract("uSOL"),
        asset: "uSOL",
        depositId: DEPOSIT_ID,
        to: HOLDER,
        amount: 5n * 10n ** 18n,
      };
      assert.deepEqual(differences(intent, effects, tx), []);

      // The ledger executes what was decoded: the holder has the uSOL, the deposit id is taken by this transaction.
      await minter.broadcast(tx);
      assert.equal(await sim.ledger(chain).balance(HOLDER, "uSOL"), 5n * 10n ** 18n);
      assert.equal(await minter.mintedBy(DEPOSIT_ID), tx.txHash);
    });
  });
}

Deno.test("sim base (embedded sim ledger, real KV file): a burn and a refund transfer of the transfer address decode to burn(amount) and transfer(to, amount)", async () => {
  await withSim(async (sim) => {
    await sim.ledger("base").faucet({ address: SIM_TRANSFER_ADDRESS, asset: "uXRP", amount: 100n });
    const sender = sim.uAssetSender!("base");
    const common = { chain: "base" as const, chainId: 8453, from: SIM_TRANSFER_ADDRESS, asset: "uXRP" as const };

    const burn = await sender.prepareBurn({ asset: "uXRP", amount: 40n, batchId: "batch-1" });
    const burnEffects = await explained("base", burn);
    assert.deepEqual(burnEffects, {
      chain: "base",
      from: SIM_TRANSFER_ADDRESS,
      outputs: [],
      memo: null,
      chainId: 8453,
      nonce: saltOf(burn),
      call: { contract: "uxrp", function: "burn", amount: 40n },
    });
    const burnIntent: TxIntent = { kind: "burn", ...common, contract: simUAssetContract("uXRP"), amount: 40n };
    assert.deepEqual(differences(burnIntent, burnEffects, burn), []);

    const refund = await sender.prepareTransfer({ asset: "uXRP", to: HOLDER, amount: 25n, refundId: "r-1" });
    const refundEffects = await explained("base", refund);
    assert.deepEqual(refundEffects, {
      chain: "base",
      from: SIM_TRANSFER_ADDRESS,
      outputs: [],
      memo: null,
      chainId: 8453,
      nonce: saltOf(refund),
      call: { contract: "uxrp", function: "transfer", to: HOLDER, amount: 25n },
    });
    const refundIntent: TxIntent = {
      kind: "transfer",
      ...common,
      contract: "uXRP", // the symbol in any case names the same sim contract
      to: HOLDER,
      amount: 25n,
    };
    assert.deepEqual(differences(refundIntent, refundEffects, refund), []);
    // A burn is no transfer: the same effects against the other intent are named.
    assert.deepEqual(differences({ ...burnIntent, amount: 25n }, refundEffects, refund), [
      "calls transfer, not burn",
    ]);
  });
});

const MEMO: Record<"sol" | "xrp" | "sui", string | null> = { sol: "order 42", xrp: "4242", sui: null };

for (const chain of ["sol", "xrp", "sui"] as const) {
  Deno.test(`sim ${chain} (embedded sim ledger, real KV file): a payout from the hot wallet and a sweep into it decode to what they do`, async () => {
    await withSim(async (sim) => {
      const l = sim.ledger(chain);
      const payer = sim.payer(chain);
      assert.equal(payer.hotWallet, HOT(chain));
      const head = (await l.head()).number;
      const amount = 3n * NATIVE[chain].reserve + 1_234n;

      const payout = await payer.preparePayout({ orderId: "o-1", to: "destination", amount, memo: MEMO[chain] });
      const effects = await explained(chain, payout);
      assert.deepEqual(effects, {
        chain,
        from: HOT(chain),
        outputs: [{ to: "destination", amount }],
        memo: MEMO[chain],
        nonce: saltOf(payout),
        expiry: simPayoutExpiry(chain, head),
      });
      assert.deepEqual(effects.expiry, payout.expiry, "the expiry the adapter records is the one the bytes carry");
      const intent: TxIntent = {
        kind: "payout",
        chain,
        to: "destination",
        amount,
        memo: MEMO[chain],
        from: payer.hotWallet,
      };
      assert.deepEqual(differences(intent, effects, payout), []);

      // A deposit to be swept, then the sweep: from the deposit address to the hot wallet, less the reserve.
      await l.submitNativeTransfer({ from: "outsider", to: "deposit-1", amount: 10n * NATIVE[chain].reserve + 7n });
      await l.sealBlock();
      const sweep = await payer.prepareSweep!({ sweepId: "s-1", from: "deposit-1", derivationIndex: 1 });
      const swept = await explained(chain, sweep);
      assert.deepEqual(swept, {
        chain,
        from: "deposit-1",
        outputs: [{ to: HOT(chain), amount: 9n * NATIVE[chain].reserve + 7n }],
        memo: null,
        nonce: saltOf(sweep),
        expiry: sweep.expiry,
      });
      assert.ok(swept.expiry, "a sim sweep carries its chain's expiry");
      const sweepIntent: TxIntent = { kind: "sweep", chain, from: "deposit-1", to: payer.hotWallet! };
      assert.deepEqual(differences(sweepIntent, swept, sweep), []);

      // The ledger does what was decoded: the hot wallet gets the swept amount.
      await payer.broadcast(sweep);
      assert.equal(await l.balance("deposit-1", "native"), NATIVE[chain].reserve);
    });
  });
}

/** A deposit output of `amount` to `address`, sealed, as the treasury coin a payout spends. */
async function coin(sim: SimChains, chain: UtxoChain, address: string, amount: bigint, n: number) {
  const l = sim.ledger(chain);
  const { txHash } = await l.submitNativeTransfer({ from: "outsider", to: address, amount });
  await l.sealBlock();
  return { txHash, index: 0, amount, address, derivationIndex: n, height: 1 };
}

/** The intent of a UTXO payout of `amount` to `to` spending `coins`, change to the payer's change address. */
function utxoIntent(
  chain: UtxoChain,
  coins: { txHash: string; index: number; amount: bigint }[],
  to: string,
  amount: bigint,
  outputs: number,
): TxIntent {
  return {
    kind: "payout",
    chain,
    to,
    amount,
    memo: null,
    coins: coins.map(({ txHash, index, amount }) => ({ txHash, index, amount })),
    changeAddress: HOT(chain),
    maxFee: utxoFee(chain)(coins.length, outputs),
  };
}

for (const chain of ["doge", "zec"] as const) {
  Deno.test(`sim ${chain} (embedded sim ledger, real KV file): a UTXO payout with change and a consolidation decode to their inputs and outputs in order`, async () => {
    await withSim(async (sim) => {
      const payer = sim.payer(chain);
      assert.equal(payer.changeAddress, HOT(chain));
      const fee = utxoFee(chain);
      const c1 = await coin(sim, chain, "deposit-1", 100n * COIN, 1);
      const head = (await sim.ledger(chain).head()).number;
      const payout = await payer.preparePayout({
        orderId: "o-1",
        to: "destination",
        amount: 30n * COIN,
        memo: null,
        coins: [c1],
      });
      const effects = await explained(chain, payout);
      const change = 70n * COIN - fee(1, 2);
      assert.equal(effects.from, undefined, "a UTXO spend is from its inputs");
      assert.deepEqual(effects, {
        chain,
        inputs: [{ txHash: c1.txHash, index: 0 }],
        outputs: [{ to: "destination", amount: 30n * COIN }, { to: HOT(chain), amount: change }],
        memo: null,
        nonce: saltOf(payout),
        maxFee: fee(1, 2),
        // zec carries nExpiryHeight's stand-in; doge transactions never expire (ledger.ts `SIM_PAYOUT_EXPIRY`).
        ...(chain === "zec" ? { expiry: simPayoutExpiry(chain, head) } : {}),
      });
      assert.deepEqual(payout.change, { index: CHANGE_INDEX, address: HOT(chain), amount: change });
      assert.deepEqual(differences(utxoIntent(chain, [c1], "destination", 30n * COIN, 2), effects, payout), []);

      // A consolidation: two coins merged into one output to our own change address, no change.
      const c2 = await coin(sim, chain, "deposit-2", 2n * COIN, 2);
      const c3 = await coin(sim, chain, HOT(chain), 5n * COIN, 0);
      const merged = 7n * COIN - fee(2, 1);
      const consolidation = await payer.preparePayout({
        orderId: "consolidation-1",
        to: payer.changeAddress!,
        amount: merged,
        memo: null,
        coins: [c2, c3],
      });
      const consolidated = await explained(chain, consolidation);
      assert.deepEqual(consolidated.inputs, [{ txHash: c2.txHash, index: 0 }, { txHash: c3.txHash, index: 0 }]);
      assert.deepEqual(consolidated.outputs, [{ to: HOT(chain), amount: merged }]);
      assert.equal(consolidated.maxFee, fee(2, 1));
      assert.equal(consolidation.change, undefined);
      assert.deepEqual(
        differences(utxoIntent(chain, [c2, c3], HOT(chain), merged, 1), consolidated, consolidation),
        [],
      );

      // The ledger executes what was decoded: the consolidated output is ours, the coins are spent.
      await payer.broadcast(consolidation);
      await sim.ledger(chain).sealBlock();
      assert.deepEqual(await sim.ledger(chain).unspentOutput({ txHash: consolidation.txHash, index: 0 }), {
        address: HOT(chain),
        amount: merged,
      });
      assert.equal(await sim.ledger(chain).unspentOutput(c2), null);
    });
  });
}

Deno.test("sim doge (embedded sim ledger, real KV file): a payout without coins debits the hot wallet account-style and decodes so", async () => {
  await withSim(async (sim) => {
    const tx = await sim.payer("doge").preparePayout({
      orderId: "o-1",
      to: "destination",
      amount: 5n * COIN,
      memo: null,
      coins: [],
    });
    const effects = await explained("doge", tx);
    assert.deepEqual(effects, {
      chain: "doge",
      from: HOT("doge"),
      outputs: [{ to: "destination", amount: 5n * COIN }],
      memo: null,
      nonce: saltOf(tx),
    });
    const intent: TxIntent = { kind: "payout", chain: "doge", to: "destination", amount: 5n * COIN, memo: null };
    assert.deepEqual(differences(intent, effects, tx), []);
  });
});

// ---- the builder lies: differences names it ----

Deno.test("sim sol, xrp (embedded sim ledger, real KV file): a payout built for another amount, destination or without its tag is named", async () => {
  await withSim(async (sim) => {
    const intent = (chain: "sol" | "xrp", memo: string | null): TxIntent => ({
      kind: "payout",
      chain,
      to: "destination",
      amount: 5_000_000n,
      memo,
      from: HOT(chain),
    });
    const ask = { orderId: "o-1", to: "destination", amount: 5_000_000n };

    const more = await sim.payer("sol").preparePayout({ ...ask, amount: 5_000_001n, memo: null });
    assert.deepEqual(differences(intent("sol", null), await explained("sol", more), more), [
      "pays 5000001, not 5000000",
    ]);

    const elsewhere = await sim.payer("xrp").preparePayout({ ...ask, to: "rStranger", memo: "4242" });
    assert.deepEqual(differences(intent("xrp", "4242"), await explained("xrp", elsewhere), elsewhere), [
      "pays rStranger, not destination",
    ]);

    const untagged = await sim.payer("xrp").preparePayout({ ...ask, memo: null });
    assert.deepEqual(differences(intent("xrp", "4242"), await explained("xrp", untagged), untagged), [
      'carries memo/tag null, not "4242"',
    ]);

    // Another destination differing only in letter case: another account to the sim ledger, as on base58 chains, so
    // `differences` compares native addresses exactly (chains/effects.ts `sameOn`).
    const recased = await sim.payer("xrp").preparePayout({ ...ask, to: "Destination", memo: "4242" });
    assert.deepEqual(differences(intent("xrp", "4242"), await explained("xrp", recased), recased), [
      "pays Destination, not destination",
    ]);

    const retagged = await sim.payer("xrp").preparePayout({ ...ask, memo: "4243" });
    assert.deepEqual(differences(intent("xrp", "4242"), await explained("xrp", retagged), retagged), [
      'carries memo/tag "4243", not "4242"',
    ]);
  });
});

Deno.test("sim sui (embedded sim ledger, real KV file): a payout or a sweep from a hot wallet that is not ours is named", async () => {
  // The adapter is configured with another operator address than the one the intent holds as our hot wallet.
  await withSim(async (sim) => {
    const l = sim.ledger("sui");
    const payout = await sim.payer("sui").preparePayout({ orderId: "o-1", to: "dest", amount: 10n ** 9n, memo: null });
    const intent: TxIntent = {
      kind: "payout",
      chain: "sui",
      to: "dest",
      amount: 10n ** 9n,
      memo: null,
      from: HOT("sui"),
    };
    assert.deepEqual(differences(intent, await explained("sui", payout), payout), [
      "paid from stranger-sui, not the hot wallet hot-sui",
    ]);

    await l.submitNativeTransfer({ from: "outsider", to: "deposit-1", amount: 10n ** 9n });
    await l.sealBlock();
    const sweep = await sim.payer("sui").prepareSweep!({ sweepId: "s-1", from: "deposit-1", derivationIndex: 1 });
    const sweepIntent: TxIntent = { kind: "sweep", chain: "sui", from: "deposit-1", to: HOT("sui") };
    assert.deepEqual(differences(sweepIntent, await explained("sui", sweep), sweep), [
      "pays 1000000000 to stranger-sui, not the hot wallet hot-sui alone",
    ]);
    // And a sweep of another deposit address than the one it was asked for.
    await l.submitNativeTransfer({ from: "outsider", to: "deposit-2", amount: 10n ** 9n });
    await l.sealBlock();
    const other = await sim.payer("sui").prepareSweep!({ sweepId: "s-1", from: "deposit-2", derivationIndex: 2 });
    assert.deepEqual(differences({ ...sweepIntent, to: "stranger-sui" }, await explained("sui", other), other), [
      "sweeps from deposit-2, not the deposit address deposit-1",
    ]);
  }, (c) => `stranger-${c}`);
});

for (const chain of ["doge", "zec"] as const) {
  Deno.test(`sim ${chain} (embedded sim ledger, real KV file): change sent to a stranger, another amount or another coin is named`, async () => {
    // The payer's operator address (where it sends change) is a stranger's; the intent's change address is ours.
    await withSim(async (sim) => {
      const c1 = await coin(sim, chain, "deposit-1", 100n * COIN, 1);
      const c2 = await coin(sim, chain, "deposit-2", 100n * COIN, 2);
      const payer = sim.payer(chain);
      assert.equal(payer.changeAddress, "stranger");
      const ask = { orderId: "o-1", to: "destination", amount: 30n * COIN, memo: null, coins: [c1] };
      const change = 70n * COIN - utxoFee(chain)(1, 2);

      const tx = await payer.preparePayout(ask);
      const intent = utxoIntent(chain, [c1], "destination", 30n * COIN, 2);
      assert.deepEqual(differences(intent, await explained(chain, tx), tx), [
        `output 1 pays ${change} to stranger, not our change address`,
        "the change recorded with it is not among its outputs",
      ]);

      const more = await payer.preparePayout({ ...ask, amount: 31n * COIN });
      const moreIntent = { ...intent, changeAddress: "stranger" };
      assert.deepEqual(differences(moreIntent, await explained(chain, more), more), [
        `pays destination ${31n * COIN}, not ${30n * COIN}`,
      ]);

      const otherCoin = await payer.preparePayout({ ...ask, coins: [c2] });
      assert.deepEqual(differences(moreIntent, await explained(chain, otherCoin), otherCoin), [
        `spends coins it was not given: ${c2.txHash}:0`,
        `does not spend coins it was given: ${c1.txHash}:0`,
      ]);

      const elsewhere = await payer.preparePayout({ ...ask, to: "thief" });
      assert.deepEqual(differences(moreIntent, await explained(chain, elsewhere), elsewhere), [
        "pays destination in 0 outputs, not 1",
        `output 0 pays ${30n * COIN} to thief, not our change address`,
      ]);
    }, (c) => (c === chain ? "stranger" : HOT(c)));
  });
}

Deno.test("sim base, world (embedded sim ledger, real KV file): a mint built with another deposit id, recipient, asset, amount or chain is named", async () => {
  await withSim(async (sim) => {
    const ask: MintRequest = { depositId: DEPOSIT_ID, to: HOLDER, asset: "uSOL", amountWei: 10n ** 18n };
    const intent: TxIntent = {
      kind: "mint",
      chain: "base",
      chainId: 8453,
      from: "",
      contract: simUAssetContract("uSOL"),
      asset: "uSOL",
      depositId: DEPOSIT_ID,
      to: HOLDER,
      amount: 10n ** 18n,
    };
    const lie = async (req: typeof ask, chain: "base" | "world" = "base") => {
      const tx = await sim.minter(chain).prepareMint(req);
      return differences(intent, await explainSimTx(chain, tx.raw), tx);
    };
    assert.deepEqual(await lie({ ...ask, depositId: OTHER_DEPOSIT_ID }), [
      `deposit id ${OTHER_DEPOSIT_ID}, not ${DEPOSIT_ID}`,
    ]);
    // The same id without 0x: the sim contract keys minted ids as written, so it is another id to it.
    assert.deepEqual(await lie({ ...ask, depositId: DEPOSIT_ID.slice(2) }), [
      `deposit id ${DEPOSIT_ID.slice(2)}, not ${DEPOSIT_ID}`,
    ]);
    assert.deepEqual(await lie({ ...ask, to: STRANGER_EVM }), [`recipient ${STRANGER_EVM}, not ${HOLDER}`]);
    assert.deepEqual(await lie({ ...ask, asset: "uXRP" }), ["calls contract uxrp, not the uSOL contract usol"]);
    assert.deepEqual(await lie({ ...ask, amountWei: 10n ** 18n + 1n }), [
      `amount ${10n ** 18n + 1n}, not ${10n ** 18n}`,
    ]);
    assert.deepEqual(await lie(ask, "world"), ["signed for world, not base", "signed for chain id 480, not 8453"]);
  });
});

Deno.test("sim arbitrum (embedded sim ledger, real KV file): a burn of another amount and a refund to another recipient are named", async () => {
  await withSim(async (sim) => {
    await sim.ledger("arbitrum").faucet({ address: SIM_TRANSFER_ADDRESS, asset: "uDOGE", amount: 100n });
    const sender = sim.uAssetSender!("arbitrum");
    const common = { chain: "arbitrum" as const, chainId: 42161, from: SIM_TRANSFER_ADDRESS, asset: "uDOGE" as const };
    const burn = await sender.prepareBurn({ asset: "uDOGE", amount: 41n, batchId: "b-1" });
    assert.deepEqual(
      differences({ kind: "burn", ...common, contract: "udoge", amount: 40n }, await explained("arbitrum", burn), burn),
      ["amount 41, not 40"],
    );
    const refund = await sender.prepareTransfer({ asset: "uDOGE", to: STRANGER_EVM, amount: 40n, refundId: "r-1" });
    const intent: TxIntent = { kind: "transfer", ...common, contract: "udoge", to: HOLDER, amount: 40n };
    assert.deepEqual(differences(intent, await explained("arbitrum", refund), refund), [
      `recipient ${STRANGER_EVM}, not ${HOLDER}`,
    ]);
    // Signed by another account than the transfer address.
    assert.deepEqual(
      differences({ ...intent, to: STRANGER_EVM, from: HOLDER }, await explained("arbitrum", refund), refund),
      [`signed by ${SIM_TRANSFER_ADDRESS}, not ${HOLDER}`],
    );
  });
});

// ---- refused: garbage, and commands we never build ----

Deno.test("sim (no ledger needed): garbage and malformed raw transactions are refused with a clear error", async () => {
  await assert.rejects(() => explainSimTx("sol", "not json"), /cannot explain a sim sol transaction: .*not JSON/);
  await assert.rejects(() => explainSimTx("xrp", ""), /cannot explain a sim xrp transaction/);
  await assert.rejects(() => explainSimTx("base", "{}"), /cannot explain a sim base transaction: .*invalid raw/);
  await assert.rejects(() => explainSimTx("doge", "[1,2]"), /cannot explain a sim doge transaction: .*invalid raw/);
  await assert.rejects(() => explainSimTx("sui", "null"), /cannot explain a sim sui transaction: .*invalid raw/);
  await assert.rejects(() => explainSimTx("sol", '{"kind":"teleport","amount":"1"}'), /invalid raw transaction/);
  // A negative or fractional amount never parses.
  const payout = { kind: "payout", from: "hot", to: "d", amount: "-1", memo: null, orderId: "o", nonce: "ab" };
  await assert.rejects(() => explainSimTx("sol", JSON.stringify(payout)), /invalid raw transaction/);
  await assert.rejects(
    () => explainSimTx("sol", JSON.stringify({ ...payout, amount: "1.5" })),
    /invalid raw transaction/,
  );
});

Deno.test("sim (embedded sim ledger, real KV file): commands and fields the sim adapters never build are refused, though the ledger would run some", async () => {
  await withSim(async (sim) => {
    const nonce = "0f".repeat(16);
    // An EVM command on a native chain and a native one on an EVM chain: the sim's parser refuses them.
    const mint = encodeSimTx({ kind: "mint", to: HOLDER, asset: "uSOL", amount: 1n, depositId: DEPOSIT_ID, nonce });
    await assert.rejects(() => explainSimTx("sol", mint), /cannot explain a sim sol transaction: .*invalid raw/);
    const transfer = encodeSimTx({
      kind: "transfer",
      from: "outsider",
      to: "deposit-1",
      amount: 5n,
      memo: null,
      nonce,
    });
    await assert.rejects(() => explainSimTx("base", transfer), /cannot explain a sim base transaction/);

    // Valid sim commands the adapters never sign: a deposit from outside, a coinbase, a genesis output, a faucet.
    await assert.rejects(
      () => explainSimTx("sol", transfer),
      /refusing to explain a sim sol transfer transaction: the sim adapters never build a transfer command/,
    );
    const coinbase = encodeSimTx({ kind: "coinbase", to: "miner", amount: 5n, nonce });
    await assert.rejects(() => explainSimTx("doge", coinbase), /never build a coinbase command/);
    const genesis = encodeSimTx({ kind: "genesis", to: "hot-zec", amount: 5n, nonce });
    await assert.rejects(() => explainSimTx("zec", genesis), /never build a genesis command/);
    const faucet = encodeSimTx({ kind: "faucet", to: HOLDER, asset: "uSOL", amount: 5n, nonce });
    await assert.rejects(() => explainSimTx("base", faucet), /never build a faucet command/);
    // The ledger runs a faucet credit as readily as a mint: value that a refusal keeps out of our records.
    await sim.ledger("base").submitRaw(faucet);
    assert.equal(await sim.ledger("base").balance(HOLDER, "uSOL"), 5n);

    // A field the sim's schemas would drop without a word.
    const real = await sim.payer("sol").preparePayout({
      orderId: "o-1",
      to: "destination",
      amount: 10n ** 9n,
      memo: null,
    });
    const extra = JSON.stringify({ ...JSON.parse(real.raw), outputs: [{ to: "thief", amount: "1" }] });
    await assert.rejects(() => explainSimTx("sol", extra), /carries fields we never write: outputs/);

    // A UTXO spend on an account chain: the ledger would debit the inputs' addresses, whoever they are.
    const inputs = [{ txHash: "ee".repeat(32), index: 0, address: "victim", amount: 10n }];
    const utxoOnSol = encodeSimTx({
      kind: "payout",
      from: HOT("sol"),
      to: "thief",
      amount: 10n,
      memo: null,
      orderId: "o-2",
      nonce,
      expiry: null,
      inputs,
      change: null,
    });
    await assert.rejects(() => explainSimTx("sol", utxoOnSol), /spends UTXO inputs on an account chain/);

    // Change without inputs: never encoded, yet the ledger would make output 1 from nothing.
    const changeOnly = JSON.stringify({ ...JSON.parse(real.raw), change: { address: "thief", amount: "1" } });
    await assert.rejects(() => explainSimTx("sol", changeOnly), /has change but spends no coins/);

    // A sweep on a UTXO chain, and a nonce that is not the adapters' hex salt.
    const sweep = encodeSimTx({
      kind: "sweep",
      from: "deposit-1",
      to: HOT("doge"),
      amount: 5n,
      sweepId: "s-1",
      nonce,
      expiry: null,
    });
    await assert.rejects(() => explainSimTx("doge", sweep), /sweep account chains only/);
    const oddNonce = JSON.stringify({ ...JSON.parse(real.raw), nonce: "not-hex" });
    await assert.rejects(() => explainSimTx("sol", oddNonce), /nonce is not the hex salt/);
  });
});
