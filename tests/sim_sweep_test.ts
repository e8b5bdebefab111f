/**
 * A finite hot wallet on sim xrp (genesis 0; sim ledgers, real KV file, watcher, order steps and sweeper ticks driven
 * by hand): a burn waits, with its reason on the order, while the hot wallet is empty; a minted deposit is swept into
 * the hot wallet, less the address's 1 XRP reserve, exactly once although the sweeper crashes between recording the
 * sweep and sending it; then the waiting burn is paid exactly once, and the balances add up.
 */
import assert from "node:assert/strict";
import { sweepOnce, type SweepStep } from "../actors/sweeper.ts";
import { TransientChainError } from "../chains/adapter.ts";
import { NATIVE } from "../chains/catalog.ts";
import { SIM_DEPOSIT_SENDER } from "../chains/sim/commands.ts";
import { SIM_EPOCH_BLOCKS } from "../chains/sim/ledger.ts";
import { defaultSimOperatorAddress } from "../chains/sim/adapters.ts";
import { createMintWallet } from "../kv/mint_wallets.ts";
import { readSweep } from "../kv/treasury.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { ledgerTxs, payoutTxs, stored } from "./support/chain_facts.ts";
import { allOrders, completeMints, SIM_DESTINATION, simBurnOrders, stepNow } from "./support/burns.ts";
import { countKeys, handPipeline, watchToTip } from "./support/watch.ts";
import { mintedSimDeposit } from "./support/deposits.ts";
import { balance, FAST_PIPELINE, outside, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

const OWNER = "0x" + "5e".repeat(20);
const XRP = 1_000_000n;
const HOT = defaultSimOperatorAddress("xrp");

Deno.test("sim xrp, finite hot wallet: a burn waits for funds; a deposit is swept once (crash after record) and pays it", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  try {
    const xrp = p.sim.ledger("xrp");
    const sweep = () => sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000);

    // A burn of 25 XRP: confirmed, then held, never failed, while the hot wallet holds nothing.
    const { ids: [burnId], payout } = await simBurnOrders(p, "xrp", OWNER);
    assert.equal(payout, 25n * XRP);
    assert.equal(await stepNow(p, burnId), "moved");
    assert.equal(await stepNow(p, burnId), "waiting");
    const held = await stored(p.kv, burnId);
    assert.equal(held.status, "processing");
    assert.match(held.details.heldReason ?? "", /hot wallet cannot fund this payout yet/);
    assert.deepEqual(await payoutTxs(p.kv, "xrp", burnId), [], "nothing signed");

    // A deposit of 30 XRP is minted; the commit completing the mint marks it due for a sweep.
    const deposited = 30n * XRP;
    const { deposit, mint } = await mintedSimDeposit(p, "xrp", OWNER, deposited);
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 1);

    // The sweeper records the sweep and dies before sending it.
    p.ctx.faultPoint = (point) => {
      if (point === "sweep-after-record") throw new Error("crash after recording the sweep");
    };
    assert.deepEqual(await sweep(), ["waiting"]);
    p.ctx.faultPoint = undefined;
    const recorded = (await readSweep(p.kv, "xrp", mint.id))!;
    assert.equal(recorded.status, "prepared");
    assert.equal(recorded.amount, (deposited - NATIVE.xrp.reserve).toString());
    assert.equal(recorded.leave, NATIVE.xrp.reserve.toString());
    assert.equal(recorded.to, HOT);
    assert.equal((await xrp.txStatus(recorded.txHash)).state, "unknown", "recorded, never sent");
    assert.equal(await xrp.balance(deposit, "native"), deposited);

    // The next tick sends the same bytes; once included and confirmed, the sweep completes and the mark is cleared.
    assert.deepEqual(await sweep(), ["resent"]);
    const steps: SweepStep[][] = [];
    for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await xrp.sealBlock();
      steps.push((await sweep())!);
    }
    assert.deepEqual(steps.at(-1), ["completed"]);
    assert.equal((await readSweep(p.kv, "xrp", mint.id))!.status, "completed");
    assert.deepEqual(await sweep(), [], "nothing due any more");
    const sweeps = (await ledgerTxs(p.kv, "xrp")).filter((t) => t.tx.kind === "sweep");
    assert.deepEqual(sweeps.map((t) => [t.hash, t.status]), [[recorded.txHash, "included"]], "exactly one sweep");
    assert.equal(await xrp.balance(deposit, "native"), NATIVE.xrp.reserve, "the deposit address keeps its reserve");
    assert.equal(await xrp.balance(HOT, "native"), deposited - NATIVE.xrp.reserve);

    // The waiting burn goes out now, exactly once.
    for (let i = 0; i < 10 && (await stored(p.kv, burnId)).status !== "completed"; i++) {
      await stepNow(p, burnId);
      await xrp.sealBlock();
    }
    const paid = await stored(p.kv, burnId);
    assert.equal(paid.status, "completed", JSON.stringify(paid.details));
    assert.equal(paid.details.heldReason, undefined, "the held reason goes when the order moves");
    assert.equal((await payoutTxs(p.kv, "xrp", burnId)).length, 1);
    assert.equal(await xrp.balance(SIM_DESTINATION.xrp, "native"), payout);
    assert.equal(await xrp.balance(HOT, "native"), deposited - NATIVE.xrp.reserve - payout, "the sim charges no fee");
  } finally {
    await p.close();
  }
});

Deno.test("sim sol: two minted deposits to one address, one open sweep at a time: one sweep takes both", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  try {
    const sol = p.sim.ledger("sol");
    const base = p.sim.ledger("base");
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const wallet = await createMintWallet(p.kv, OWNER, "sol", "base", (c, i) => `${c}-deposit-${i}`);
    assert.ok(wallet.ok);
    const deposit = wallet.wallet.address;
    const each = 2_000_000_000n; // 2 SOL
    for (let i = 0; i < 2; i++) {
      await sol.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sol, to: deposit, amount: each });
    }
    for (let i = 0; i < 3; i++) await sol.sealBlock();
    assert.equal(await watchToTip(p.ctx, "sol"), 2);
    const mints = (await allOrders(p.kv)).filter((o) => o.type === "mint");
    await completeMints(p, mints, async () => {
      await sol.sealBlock();
      await base.sealBlock();
    });
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "sol"]), 2);
    const sweep = () => sweepOnce(p.ctx, "sol", "test-sweeper", 60_000);

    // The first mark records a sweep of everything above the reserve; the second finds the address busy.
    assert.deepEqual(await sweep(), ["recorded", "waiting"]);
    for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", "sol"])) > 0; i++) {
      await sol.sealBlock();
      await sweep();
    }
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "sol"]), 0, "both marks cleared");
    const sweeps = (await ledgerTxs(p.kv, "sol")).filter((t) => t.tx.kind === "sweep");
    assert.equal(sweeps.length, 1, "one sweep for the address");
    assert.equal(await sol.balance(deposit, "native"), NATIVE.sol.reserve);
    assert.equal(await sol.balance(defaultSimOperatorAddress("sol"), "native"), 2n * each - NATIVE.sol.reserve);
  } finally {
    await p.close();
  }
});

Deno.test("sim sui: a sweep recorded and never sent is proven dead by its expiry, and a new one is signed", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  try {
    const sui = p.sim.ledger("sui");
    const base = p.sim.ledger("base");
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const wallet = await createMintWallet(p.kv, OWNER, "sui", "base", (c, i) => `${c}-deposit-${i}`);
    assert.ok(wallet.ok);
    const deposit = wallet.wallet.address;
    const amount = 3_000_000_000n;
    await sui.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.sui, to: deposit, amount });
    for (let i = 0; i < 3; i++) await sui.sealBlock();
    assert.equal(await watchToTip(p.ctx, "sui"), 1);
    const mint = (await allOrders(p.kv)).find((o) => o.type === "mint")!;
    for (let i = 0; i < 20 && (await stored(p.kv, mint.id)).status !== "completed"; i++) {
      await stepNow(p, mint.id);
      await sui.sealBlock();
      await base.sealBlock();
    }
    const sweep = () => sweepOnce(p.ctx, "sui", "test-sweeper", 60_000);
    p.ctx.faultPoint = (point) => {
      if (point === "sweep-after-record") throw new Error("crash after recording the sweep");
    };
    assert.deepEqual(await sweep(), ["waiting"]);
    p.ctx.faultPoint = undefined;
    const first = (await readSweep(p.kv, "sui", mint.id))!;
    assert.ok(first.expiry, "a sweep carries the chain's expiry");
    // No tick runs until the chain is past the sweep's expiry: the chain refuses the recorded bytes, and proves them dead.
    while ((await sui.head()).number < (first.expiry.value + 2) * SIM_EPOCH_BLOCKS) await sui.sealBlock();
    assert.deepEqual(await sweep(), ["dead"]);
    assert.equal((await readSweep(p.kv, "sui", mint.id))!.status, "dead");
    assert.deepEqual(await sweep(), ["recorded"]);
    const second = (await readSweep(p.kv, "sui", `${mint.id}#1`))!;
    assert.notEqual(second.txHash, first.txHash);
    for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", "sui"])) > 0; i++) {
      await sui.sealBlock();
      await sweep();
    }
    assert.equal((await readSweep(p.kv, "sui", `${mint.id}#1`))!.status, "completed");
    assert.equal(await sui.balance(defaultSimOperatorAddress("sui"), "native"), amount, "sui keeps no reserve");
    assert.equal(await sui.balance(deposit, "native"), 0n);
  } finally {
    await p.close();
  }
});

Deno.test("sim xrp payer: a payout below the reserve to an address that does not exist is refused before signing", async () => {
  const p = await handPipeline();
  try {
    const payer = p.sim.payer("xrp");
    const small = { orderId: "o", to: SIM_DESTINATION.xrp, amount: NATIVE.xrp.reserve - 1n, memo: null };
    const check = await payer.checkPayout!(small);
    assert.equal(check.ok, false);
    assert.ok(!check.ok && check.reason === "destination_below_reserve", JSON.stringify(check));
    assert.equal((await payer.checkPayout!({ ...small, amount: NATIVE.xrp.reserve })).ok, true);
    // Once the account exists, any amount may be paid to it.
    await p.sim.ledger("xrp").submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.xrp, to: small.to, amount: 1n });
    assert.equal((await payer.checkPayout!(small)).ok, true);
  } finally {
    await p.close();
  }
});

Deno.test("sim xrp ledger, genesis 0: a payout the hot wallet cannot fund above its reserve is refused, nothing changed", async () => {
  const p = await handPipeline({ hotWalletGenesis: 0n });
  try {
    const xrp = p.sim.ledger("xrp");
    const payer = p.sim.payer("xrp");
    await xrp.submitNativeTransfer({ from: SIM_DEPOSIT_SENDER.xrp, to: HOT, amount: 5n * XRP });
    const request = { orderId: "o", to: SIM_DESTINATION.xrp, amount: 4n * XRP + 1n, memo: null };
    assert.ok(!(await payer.checkPayout!(request)).ok, "the reserve of 1 XRP is not payable");
    const tx = await payer.preparePayout(request);
    await assert.rejects(() => payer.broadcast(tx), TransientChainError);
    assert.equal((await xrp.txStatus(tx.txHash)).state, "unknown");
    assert.equal(await xrp.balance(HOT, "native"), 5n * XRP);
    const exact = await payer.preparePayout({ ...request, amount: 4n * XRP });
    await payer.broadcast(exact);
    assert.equal(await xrp.balance(HOT, "native"), XRP, "the reserve stays");
  } finally {
    await p.close();
  }
});

Deno.test("server with SIM_HOT_WALLET_GENESIS=0 (real HTTP, sim xrp): a burn is held until the runtime's sweeper funds it from a deposit", async () => {
  const server = await startTestServer({ ...FAST_PIPELINE, SIM_HOT_WALLET_GENESIS: "0" });
  try {
    const wallet = randomWallet();
    const token = await tokenFor(server, wallet);
    const destination = outside.depositAddress("xrp", 7);
    const config = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "xrp", destinationAddress: destination, memo: "7" },
    });
    assert.equal(config.status, 201);
    const burned = NATIVE.xrp.uAsset.minimumBurnAmount; // 25 XRP
    await sim(server, "faucet", { chain: "base", address: wallet, token: "uXRP", amount: burned.toString() });
    await sim(server, "transfers", { chain: "base", from: wallet, token: "uXRP", amount: burned.toString() });
    const [burn] = await waitForOrders(server, token, (o) => o.length === 1 && o[0].status === "processing");
    const kv = server.services.kv;
    const deadline = Date.now() + 15_000;
    while ((await stored(kv, burn.id)).details.heldReason === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.match((await stored(kv, burn.id)).details.heldReason ?? "", /hot wallet cannot fund this payout yet/);

    const created = await call(server, "POST", "/mint/wallets", {
      token,
      body: { chain: "xrp", destinationChain: "base" },
    });
    const deposit = created.body.data.address;
    await sim(server, "deposits", { chain: "xrp", address: deposit, amount: (30n * XRP).toString() });
    const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal));
    assert.deepEqual(orders.map((o) => o.status), ["completed", "completed"], JSON.stringify(orders));
    assert.equal(await balance(server, "xrp", destination), 25n * XRP);
    assert.equal(await balance(server, "xrp", deposit), NATIVE.xrp.reserve, "swept down to its reserve");
    assert.equal(await balance(server, "xrp", HOT), 30n * XRP - NATIVE.xrp.reserve - 25n * XRP);
  } finally {
    await server.close();
  }
});

Deno.test("sim xrp, two sweeper ticks overlapping (a lease run out mid-tick): the mark stays until the recorded sweep completes", async () => {
  const p = await handPipeline();
  try {
    const xrp = p.sim.ledger("xrp");
    const { deposit, mint } = await mintedSimDeposit(p, "xrp", OWNER, 30n * XRP);
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 1);

    // Tick Y has read "no open sweep" and asks for the address's balance; meanwhile tick X records the sweep, sends it
    // and it is included, so Y reads the reserve alone: the case where Y would clear the mark under X's open sweep.
    const chains = p.ctx.chains;
    let raced = false;
    const bound = <T extends object>(target: T, override: (prop: PropertyKey) => unknown): T =>
      new Proxy(target, {
        get(t, prop) {
          const own = override(prop);
          if (own !== undefined) return own;
          const v = Reflect.get(t, prop, t);
          return typeof v === "function" ? v.bind(t) : v;
        },
      });
    const racing = bound(
      chains,
      (prop) =>
        prop !== "reader" ? undefined : (chain: Parameters<typeof chains.reader>[0]) => {
          const reader = chains.reader(chain);
          if (chain !== "xrp") return reader;
          return bound(reader, (q) =>
            q !== "balance" || raced ? undefined : async (address: string) => {
              raced = true;
              assert.deepEqual(await sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000), ["recorded"], "tick X");
              await xrp.sealBlock();
              return await reader.balance!(address);
            });
        },
    );
    const steps = await sweepOnce({ ...p.ctx, chains: racing }, "xrp", "test-sweeper", 60_000);
    assert.ok(raced, "tick Y read the balance after tick X's sweep");
    assert.deepEqual(steps, ["waiting"], "tick Y does not clear the mark under an open sweep");
    assert.equal(await countKeys(p.kv, ["treasury_sweep_due", "xrp"]), 1, "the mark stays");

    // The next ticks drive the recorded sweep to its end and clear the mark then.
    const after: SweepStep[][] = [];
    for (let i = 0; i < 10 && (await countKeys(p.kv, ["treasury_sweep_due", "xrp"])) > 0; i++) {
      await xrp.sealBlock();
      after.push((await sweepOnce(p.ctx, "xrp", "test-sweeper", 60_000))!);
    }
    assert.deepEqual(after.at(-1), ["completed"]);
    assert.equal((await readSweep(p.kv, "xrp", mint.id))!.status, "completed");
    assert.equal(await countKeys(p.kv, ["treasury_account_lock", "xrp"]), 0, "the address is free again");
    const sweeps = (await ledgerTxs(p.kv, "xrp")).filter((t) => t.tx.kind === "sweep");
    assert.equal(sweeps.length, 1, "exactly one sweep sent");
    assert.equal(await xrp.balance(deposit, "native"), NATIVE.xrp.reserve);
  } finally {
    await p.close();
  }
});
