/**
 * A hot-wallet rotation's drain as real Solana bytes, on a Solana-RPC-shaped server (no validator runs here; the other
 * chains are the sim's; real KV file; drain ticks driven by hand). The sol payer is the live one, verified before
 * record as the registry verifies it: the drain is one System transfer signed by the old hot key
 * (m/44'/501'/0'/1'), from the old wallet to the new one (m/44'/501'/1'/1'), leaving the rent-exempt minimum so the
 * old account stays open, its fee out of what moves; recorded before it is sent, sent once across a crash between the
 * two, and drained once finalized.
 */
import assert from "node:assert/strict";
import { drainTick, rotateHotWallet } from "../actors/hot_wallet_rotation.ts";
import { payerFor } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { explainSolTx } from "../chains/sol/explain.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { listAlerts } from "../kv/alerts.ts";
import { readHotWalletState } from "../kv/hot_wallets.ts";
import { FEE_PER_SIGNATURE, RENT_EXEMPT_MINIMUM_0, startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { signer, solOn } from "./support/sol_env.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const SOL = 1_000_000_000n;

Deno.test("sol drain on a Solana-RPC-shaped server: one transfer old -> new hot wallet signed by the old key, rent-exempt minimum kept, sent once across a crash", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  const sol = solOn(server);
  const simulated = new Set([...EVM_CHAINS, ...NATIVE_CHAINS.filter((c) => c !== "sol")]);
  const p = await handPipeline({
    chains: (kv, sim) =>
      verifyingChains({
        reader: (c) => c === "sol" ? sol.reader : sim.reader(c),
        minter: (c) => sim.minter(c),
        payer: (c) => c === "sol" ? payerFor(c, sol.payer) : sim.payer(c),
        uAssetView: (c) => sim.uAssetView!(c),
      }, {
        explainer: explainerOf({ simulated, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set(["sol"]) }),
        evm: evmFactsOf({ simulated, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      }),
    live: { sol: { startBlock: "tip" } },
  });
  try {
    const drain = () => drainTick(p.ctx, "sol", "test-drainer", 60_000);
    const old = signer.address("sol", 0, "hot");
    const next = signer.address("sol", 1, "hot");
    assert.equal(NATIVE.sol.reserve, RENT_EXEMPT_MINIMUM_0);
    server.fund(old, 3n * SOL);
    server.produce(1);

    const rotated = await rotateHotWallet(p.ctx, "sol", "ops@test", p.ctx.now());
    assert.deepEqual([rotated.from.address, rotated.to.address], [old, next]);

    p.ctx.faultPoint = (point) => {
      if (point === "drain-after-record") throw new Error("crash after recording the drain");
    };
    assert.equal(await drain(), "waiting");
    p.ctx.faultPoint = undefined;
    const attempt = (await readHotWalletState(p.kv, "sol")).state!.retired[0].attempt!;
    assert.equal(server.sends(attempt.txHash), 0, "recorded, never sent");
    assert.equal(attempt.amount, (3n * SOL - RENT_EXEMPT_MINIMUM_0).toString());
    assert.equal(attempt.expiry?.kind, "height");
    // The bytes, decoded by @solana/kit: one transfer from the old wallet (its key signed) to the new one.
    const effects = await explainSolTx(attempt.raw);
    assert.equal(effects.from, old, "signed and paid by the old wallet's key");
    assert.deepEqual(
      effects.outputs.map((t) => [t.to, t.amount]),
      [[next, 3n * SOL - RENT_EXEMPT_MINIMUM_0 - FEE_PER_SIGNATURE]],
    );

    assert.equal(await drain(), "resent");
    const steps = [];
    for (let i = 0; i < 6 && steps.at(-1) !== "drained"; i++) {
      server.produce(1);
      steps.push(await drain());
    }
    assert.equal(steps.at(-1), "drained", JSON.stringify(steps));
    assert.equal(server.sends(attempt.txHash), 1, "sent once");
    assert.equal(server.balance(old), RENT_EXEMPT_MINIMUM_0, "the old account stays open at the rent-exempt minimum");
    assert.equal(server.balance(next), 3n * SOL - RENT_EXEMPT_MINIMUM_0 - FEE_PER_SIGNATURE);
    const retired = (await readHotWalletState(p.kv, "sol")).state!.retired[0];
    assert.equal(retired.delivered, (3n * SOL - RENT_EXEMPT_MINIMUM_0 - FEE_PER_SIGNATURE).toString());
    assert.deepEqual(await listAlerts(p.kv, "transaction_mismatch"), []);
  } finally {
    await p.close();
    await server.close();
  }
});
