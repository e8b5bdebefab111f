/**
 * An account-chain cold sweep (actors/cold_sweep.ts) on a rippled-shaped local server (tests/support/
 * rippled_rpc_server.ts stands in for rippled: no rippled runs here), the xrp payer signing with the test mnemonic,
 * a real KV file: the hot wallet's surplus above its band goes in one Payment to the cold address (a fresh account of
 * another mnemonic, watch-only for us), exactly once across a crash between record and broadcast; the account's
 * reserve and the target stay; reconciliation counts the cold balance as controlled.
 */
import assert from "node:assert/strict";
import { coldSweepOnce, type ColdSweepStep } from "../actors/cold_sweep.ts";
import type { PipelineContext } from "../actors/context.ts";
import { runReconciliation } from "../actors/reconciliation.ts";
import { NATIVE } from "../chains/catalog.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { listColdSweeps, openColdSweep } from "../kv/cold_sweeps.ts";
import { readHotWalletHolds } from "../kv/hot_wallet.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { SIM_TRANSFER_ADDRESS } from "./support/watch.ts";
import { elsewhere, hotWallet, XRP, xrpHandPipeline } from "./support/xrp_env.ts";

Deno.test("xrp cold sweep on a rippled-shaped local server: the surplus in one Payment to cold, once across a crash between record and broadcast; reconciliation counts it cold", async () => {
  const server = startRippledServer();
  const h = server.hooks;
  const { p, xrp } = await xrpHandPipeline(server, { live: { xrp: { startBlock: "tip" } } });
  const band = { floor: 2n * XRP, target: 5n * XRP, ceiling: 10n * XRP };
  const ctx: PipelineContext = { ...p.ctx, settings: { ...p.ctx.settings, hotBand: (c) => c === "xrp" ? band : null } };
  ctx.log = (m, err) => p.logs.push(err ? `${m}: ${err instanceof Error ? err.stack : err}` : m);
  const step = () => coldSweepOnce(ctx, "xrp", "test-cold", 60_000);
  try {
    const reserve = NATIVE.xrp.reserve;
    h.fund(hotWallet, 20n * XRP);
    h.validateThrough(h.closedIndex + 1);
    await p.kv.set(coldAddressKey("xrp"), {
      current: { address: elsewhere, since: new Date(0).toISOString() },
      pending: null,
    });

    ctx.faultPoint = (point) => {
      if (point === "cold-sweep-after-record") throw new Error("crash after recording the cold sweep");
    };
    const first = await step();
    ctx.faultPoint = undefined;
    assert.equal(first, "waiting", p.logs.join("\n"));
    const open = (await openColdSweep(p.kv, "xrp"))!;
    assert.ok(open, `${first}: ${p.logs.join("\n")}`);
    // 20 XRP less the 1 XRP reserve is hot; 19 - 5 go to cold.
    assert.equal(open.amount, `${14n * XRP}`);
    assert.equal(open.destination, elsewhere);
    assert.equal(open.consumes?.kind, "nonce", "its Sequence, locked in the recording commit");
    assert.ok((await readHotWalletHolds(p.kv, "xrp")).held >= 14n * XRP, "held like a payout");
    assert.equal((await xrp.reader.txStatus(open.txHash)).state, "unknown", "recorded, never sent");

    const steps: ColdSweepStep[] = [];
    for (let i = 0; i < 10 && (await openColdSweep(p.kv, "xrp")); i++) {
      steps.push(await step());
      h.validateThrough(h.closedIndex + 1);
    }
    assert.equal(steps[0], "resent", "the same bytes");
    assert.equal(steps.at(-1), "completed");
    const sweeps = await listColdSweeps(p.kv, "xrp");
    assert.equal(sweeps.length, 1, "exactly one cold sweep");
    assert.equal(sweeps[0].txHash, open.txHash);
    assert.equal(await xrp.reader.balance!(elsewhere), 14n * XRP);
    assert.equal(await xrp.reader.balance!(hotWallet), 6n * XRP - h.baseFee, "target + reserve stay, less the fee");
    assert.ok(6n * XRP - h.baseFee - reserve >= band.floor);
    assert.equal((await readHotWalletHolds(p.kv, "xrp")).held, 0n);
    assert.equal(await step(), "idle");

    const report = await runReconciliation({
      kv: p.kv,
      chains: p.ctx.chains,
      transferAddress: SIM_TRANSFER_ADDRESS,
      enabledChains: ["base", "xrp"],
      now: () => new Date(),
    });
    const uXrp = report.assets.find((a) => a.asset === "uXRP")!;
    assert.equal(uXrp.supply.controlled.cold, `${14n * XRP}`);
    assert.equal(uXrp.supply.controlled.hotWallet, `${6n * XRP - h.baseFee}`);
    assert.equal(report.ok, true, JSON.stringify(report.unknown));
  } finally {
    await p.close();
    await server.close();
  }
});
