/**
 * A hot-wallet rotation's drain as real XRP Ledger bytes, on a rippled-shaped server (no rippled runs here; the other
 * chains are the sim's; real KV file; drain ticks driven by hand). The xrp payer is the live one, verified before
 * record as the registry verifies it (chains/verify.ts): the drain is one Payment signed by the old hot key
 * (m/44'/144'/1'/0/0), from the old wallet to the new one (index 1), leaving the 1 XRP base reserve (the account is
 * never deleted), with its fee out of what moves; it is recorded with its Sequence lock before it is sent, sent once
 * across a crash between the two, and drained once validated.
 */
import assert from "node:assert/strict";
import { decode, verifySignature } from "xrpl";
import { drainTick, rotateHotWallet } from "../actors/hot_wallet_rotation.ts";
import { payerFor } from "../chains/adapter.ts";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { verifyingChains } from "../chains/verify.ts";
import { alertOnMismatch } from "../config/registry.ts";
import { listAlerts } from "../kv/alerts.ts";
import { sequenceLockKey } from "../kv/chain_state.ts";
import { readHotWalletState } from "../kv/hot_wallets.ts";
import { type RippledServer, startRippledServer } from "./support/rippled_rpc_server.ts";
import { handPipeline, SIM_TRANSFER_ADDRESS } from "./support/watch.ts";
import { hotWallet, signer, XRP, xrpOn } from "./support/xrp_env.ts";

/** A hand-driven pipeline with the live xrp adapter on `server`, verified as the registry verifies it. */
async function xrpLivePipeline(server: RippledServer) {
  const xrp = xrpOn(server);
  const simulated = new Set([...EVM_CHAINS, ...NATIVE_CHAINS.filter((c) => c !== "xrp")]);
  return await handPipeline({
    chains: (kv, sim) =>
      verifyingChains({
        reader: (c) => c === "xrp" ? xrp.reader : sim.reader(c),
        minter: (c) => sim.minter(c),
        payer: (c) => c === "xrp" ? payerFor(c, xrp.payer) : sim.payer(c),
        uAssetView: (c) => sim.uAssetView!(c),
      }, {
        explainer: explainerOf({ simulated, liveEvm: new Set(), liveUtxo: new Map(), liveAccount: new Set(["xrp"]) }),
        evm: evmFactsOf({ simulated, transferAddress: SIM_TRANSFER_ADDRESS, live: new Map() }),
        onMismatch: alertOnMismatch(kv),
      }),
    live: { xrp: { startBlock: "tip" } },
  });
}

Deno.test("xrp drain on a rippled-shaped server: one Payment old -> new hot wallet signed by the old key, reserve kept, recorded before sent, sent once across a crash", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  const p = await xrpLivePipeline(server);
  try {
    const drain = () => drainTick(p.ctx, "xrp", "test-drainer", 60_000);
    const next = signer.address("xrp", 1, "hot");
    assert.notEqual(next, hotWallet);
    h.fund(hotWallet, 50n * XRP);
    h.fund(next, 20n * XRP); // the new wallet exists already (a drain below its reserve could not create it)
    h.validateThrough(h.closedIndex + 1);

    const rotated = await rotateHotWallet(p.ctx, "xrp", "ops@test", p.ctx.now());
    assert.deepEqual(rotated.to, { index: 1, address: next });
    assert.equal(p.ctx.chains.payer("xrp").atHotIndex!(1).hotWallet, next, "the payer of the wallet in effect");

    // Recorded with its Sequence lock, then the process dies before sending it.
    p.ctx.faultPoint = (point) => {
      if (point === "drain-after-record") throw new Error("crash after recording the drain");
    };
    assert.equal(await drain(), "waiting");
    p.ctx.faultPoint = undefined;
    const attempt = (await readHotWalletState(p.kv, "xrp")).state!.retired[0].attempt!;
    assert.equal(h.submissions.length, 0, "recorded, never sent");
    assert.equal(attempt.consumes?.kind, "nonce");
    const sequence = attempt.consumes!.kind === "nonce" ? attempt.consumes!.nonce : -1;
    assert.notEqual((await p.kv.get(sequenceLockKey("xrp", hotWallet, sequence))).versionstamp, null, "locked");

    // The bytes: one Payment from the old wallet to the new one, signed by the old hot key, the reserve left.
    const tx = decode(attempt.raw) as Record<string, unknown>;
    assert.equal(tx.TransactionType, "Payment");
    assert.equal(tx.Account, hotWallet);
    assert.equal(tx.Destination, next);
    assert.ok(verifySignature(attempt.raw), "signed by the key of the old wallet");
    const fee = BigInt(String(tx.Fee));
    assert.equal(BigInt(String(tx.Amount)), 50n * XRP - h.reserveBase - fee, "everything above the base reserve");
    assert.equal(attempt.amount, (50n * XRP - h.reserveBase).toString(), "what leaves the old wallet, fee included");

    // Sent once (the same bytes), validated, drained; the lock released with it.
    assert.equal(await drain(), "resent");
    assert.deepEqual(h.submissions.map((s) => s.hash), [attempt.txHash]);
    const steps = [];
    for (let i = 0; i < 6 && steps.at(-1) !== "drained"; i++) {
      h.closeLedgers(1);
      h.validateThrough(h.closedIndex);
      steps.push(await drain());
    }
    assert.equal(steps.at(-1), "drained", JSON.stringify(steps));
    assert.deepEqual(h.submissions.map((s) => s.hash), [attempt.txHash], "exactly one drain sent");
    assert.equal(h.account(hotWallet)?.balance, h.reserveBase, "the old account keeps its reserve, never deleted");
    assert.equal(h.account(next)?.balance, 20n * XRP + 50n * XRP - h.reserveBase - fee);
    const retired = (await readHotWalletState(p.kv, "xrp")).state!.retired[0];
    assert.equal(retired.status, "drained");
    assert.equal(retired.delivered, (50n * XRP - h.reserveBase - fee).toString());
    // A final transaction's Sequence is used for good: its lock stays (model/sent_tx_effects.ts).
    assert.notEqual((await p.kv.get(sequenceLockKey("xrp", hotWallet, sequence))).versionstamp, null);
    assert.deepEqual(await listAlerts(p.kv, "transaction_mismatch"), []);
    assert.equal(await drain(), "idle");
  } finally {
    await p.close();
    await server.close();
  }
});

Deno.test("xrp drain on a rippled-shaped server: below the base reserve into a new wallet that does not exist yet, it is refused unsigned until the new wallet is funded", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  const p = await xrpLivePipeline(server);
  try {
    const drain = () => drainTick(p.ctx, "xrp", "test-drainer", 60_000);
    const next = signer.address("xrp", 1, "hot");
    h.fund(hotWallet, h.reserveBase + XRP / 2n); // half an XRP above the old wallet's reserve
    h.validateThrough(h.closedIndex + 1);
    await rotateHotWallet(p.ctx, "xrp", "ops@test", p.ctx.now());
    // The chain would refuse it (tecNO_DST_INSUF_XRP) and take its fee: nothing is signed, recorded or sent.
    assert.equal(await drain(), "waiting");
    assert.equal((await readHotWalletState(p.kv, "xrp")).state!.retired[0].attempt, undefined);
    assert.deepEqual(h.submissions, []);
    assert.ok(p.logs.some((l) => /does not exist yet .* below the .* base reserve/.test(l)), p.logs.join("\n"));
    // Funded from cold (docs/operations.md "Rotating a hot wallet"), the drain goes out.
    h.fund(next, 10n * XRP);
    h.validateThrough(h.closedIndex + 1);
    assert.equal(await drain(), "recorded");
    assert.equal(h.submissions.length, 1);
  } finally {
    await p.close();
    await server.close();
  }
});
