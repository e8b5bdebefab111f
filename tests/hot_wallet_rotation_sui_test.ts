/**
 * A hot-wallet rotation's drain as real Sui bytes, on a Sui-GraphQL-shaped server (no Sui node runs here; the other
 * chains are the sim's; real KV file; drain ticks driven by hand). The sui payer is the live one, verified before record
 * as the registry verifies it: the drain spends the old wallet's coins as its gas coin and transfers that coin whole to
 * the new wallet (Sui keeps no reserve), signed by the old hot key (m/44'/784'/1'/0'/0'); its coins are locked in the
 * commit that records it, before it is sent; sent once across a crash between the two; drained once checkpointed, the
 * gas charged being its fee.
 */
import assert from "node:assert/strict";
import { verifyTransactionSignature } from "@mysten/sui/verify";
import { base64 } from "@scure/base";
import { drainTick, rotateHotWallet } from "../actors/hot_wallet_rotation.ts";
import { drainFeesOf } from "../actors/hot_wallet_in_effect.ts";
import { payerFor } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { Signer } from "../chains/signer.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { decodeSuiRaw } from "../chains/sui/payer.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { listAlerts } from "../kv/alerts.ts";
import { coinLocks } from "../kv/chain_state.ts";
import { readHotWalletState } from "../kv/hot_wallets.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const SUI = 1_000_000_000n;

Deno.test("sui drain on a Sui-GraphQL-shaped server: the old wallet's gas coin moves whole to the new wallet, signed by the old key, coins locked before sent, once across a crash", async () => {
  const server = await startSuiGraphqlServer({ checkpointsPerEpoch: 1000 });
  const sui = suiAdapters({ urls: [server.url], signer, confirmations: 1 });
  const simulated = new Set([...EVM_CHAINS, ...NATIVE_CHAINS.filter((c) => c !== "sui")]);
  const p = await handPipeline({
    chains: (kv, sim) =>
      verifyingChains({
        reader: (c) => c === "sui" ? sui.reader : sim.reader(c),
        minter: (c) => sim.minter(c),
        payer: (c) => c === "sui" ? payerFor(c, sui.payer) : sim.payer(c),
        uAssetView: (c) => sim.uAssetView!(c),
      }, {
        explainer: explainerOf({ simulated, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set(["sui"]) }),
        evm: evmFactsOf({ simulated, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      }),
    live: { sui: { startBlock: "tip" } },
  });
  try {
    const drain = () => drainTick(p.ctx, "sui", "test-drainer", 60_000);
    const old = signer.address("sui", 0, "hot");
    const next = signer.address("sui", 1, "hot");
    server.deposit(old, 2n * SUI);
    server.deposit(old, 3n * SUI);
    server.mine(1);

    const rotated = await rotateHotWallet(p.ctx, "sui", "ops@test", p.ctx.now());
    assert.deepEqual([rotated.from.address, rotated.to.address], [old, next]);
    p.ctx.faultPoint = (point) => {
      if (point === "drain-after-record") throw new Error("crash after recording the drain");
    };
    assert.equal(await drain(), "waiting");
    p.ctx.faultPoint = undefined;
    const attempt = (await readHotWalletState(p.kv, "sui")).state!.retired[0].attempt!;
    assert.equal(server.isPending(attempt.txHash) || server.included(attempt.txHash), false, "recorded, never sent");
    assert.equal(attempt.amount, (5n * SUI).toString(), "Sui keeps no reserve: all of it");
    // Both coins, locked in the recording commit.
    const outpoints = attempt.consumes!.kind === "outpoints" ? attempt.consumes!.outpoints : [];
    assert.equal(outpoints.length, 2);
    assert.deepEqual(await coinLocks(p.kv, "sui", outpoints), [attempt.txHash, attempt.txHash]);
    // Signed by the old wallet's key, as Sui's own verifier reads it.
    const { bytes, signature } = decodeSuiRaw(attempt.raw);
    const publicKey = await verifyTransactionSignature(base64.decode(bytes), signature, { address: old });
    assert.equal(publicKey.toSuiAddress(), old);

    assert.equal(await drain(), "resent");
    const steps = [];
    for (let i = 0; i < 6 && steps.at(-1) !== "drained"; i++) {
      server.mine(1);
      steps.push(await drain());
    }
    assert.equal(steps.at(-1), "drained", JSON.stringify(steps));
    assert.equal(server.balance(old), 0n);
    const [received] = server.paymentsTo(next);
    assert.equal(received.digest, attempt.txHash);
    assert.ok(received.amount > 5n * SUI - 50_000_000n && received.amount < 5n * SUI, String(received.amount));
    const retired = (await readHotWalletState(p.kv, "sui")).state!.retired;
    assert.equal(retired[0].delivered, received.amount.toString());
    assert.equal(drainFeesOf(retired), 5n * SUI - received.amount, "the gas charged is the drain's fee");
    assert.deepEqual(await listAlerts(p.kv, "transaction_mismatch"), []);
  } finally {
    await p.close();
    await server.close();
  }
});
