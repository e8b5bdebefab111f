/**
 * The sol watcher against a Solana-RPC-shaped server (tests/support/solana_rpc_server.ts; no validator runs here) when
 * a run of skipped slots is longer than one scan range. `getBlocks` at `finalized` answers `[]` for such a range: the
 * node's statement that no block is there (Agave's `getBlocks` lists the rooted slots of a range; a skipped slot has
 * none). The watcher moves past the empty range instead of asking for it again, and still refuses what it cannot
 * prove empty: a range the node keeps no history for, or one above the answering node's own finalized slot.
 */
import assert from "node:assert/strict";
import { solAdapters } from "../chains/sol/index.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey, scannedThrough } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { signer, solWatcherByHand, stranger } from "./support/sol_env.ts";
import { startSolanaRpcServer } from "./support/solana_rpc_server.ts";

/** More consecutive skipped slots than the watcher asks for in one tick. */
const SKIPPED_RUN = 450;

Deno.test("sol watcher on a Solana-RPC-shaped server: a deposit after a run of skipped slots longer than a scan range is credited", async () => {
  const sol = startSolanaRpcServer({ finalityLag: 0 });
  // This process stands still; the sol watcher below runs by hand against the Solana-RPC-shaped server.
  const h = await solWatcherByHand(sol);
  try {
    const { kv, ctx, live, wallet, address, cursor: start } = h;
    sol.skip(SKIPPED_RUN);
    const signature = sol.inject({ payer: stranger(3), credits: [{ to: address, lamports: 2_000_000_000n }] });
    sol.produce(1);
    sol.finalize();
    const landed = sol.landedAt(signature)!;
    assert.equal(landed, start.number + SKIPPED_RUN + 1);

    const ticks: (number | null)[] = [];
    for (let i = 0; i < 10 && (ticks.at(-1) ?? 0) < landed; i++) {
      ticks.push((await watchOnce(ctx, "sol", "by-hand", 60_000)).scannedTo);
    }
    assert.equal(ticks.at(-1), landed, `the watcher reached the deposit's slot (ticks: ${ticks.join(", ")})`);
    assert.ok(ticks.every((t, i) => i === 0 || t! > ticks[i - 1]!), `every tick moved on: ${ticks.join(", ")}`);
    const orders = (await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;
    assert.deepEqual(orders.map((o) => [o.type, o.amount]), [["mint", "2000000000"]]);
    const stored = (await kv.get<Cursor>(cursorKey("sol"))).value!;
    assert.deepEqual({ number: stored.number, hash: stored.hash }, await live.reader.tip(), "a real block again");
    assert.equal(scannedThrough(stored), landed);
  } finally {
    await h.close();
    await sol.close();
  }
});

Deno.test("sol watcher on a Solana-RPC-shaped server: an empty range the node cannot vouch for does not move the cursor", async (t) => {
  await t.step("a range below the node's first available block (its history was purged)", async () => {
    const sol = startSolanaRpcServer({ finalityLag: 0 });
    try {
      const live = solAdapters({ urls: [sol.url], signer, confirmations: 1 });
      sol.produce(3);
      const from = sol.slot - 2;
      sol.skip(10);
      sol.produce(2);
      sol.finalize();
      sol.purgeBelow(sol.slot);
      await assert.rejects(
        () => live.reader.scan(from, sol.slot - 1),
        /keeps no block below slot \d+ \(getFirstAvailableBlock\); slots \d+ to \d+ cannot be read there/,
      );
    } finally {
      await sol.close();
    }
  });
  await t.step("a range above the answering node's finalized slot", async () => {
    const sol = startSolanaRpcServer({ finalityLag: 3 });
    try {
      const live = solAdapters({ urls: [sol.url], signer, confirmations: 1 });
      sol.produce(1);
      sol.finalize();
      const root = sol.finalizedSlot;
      sol.skip(5);
      sol.produce(3); // not finalized
      await assert.rejects(
        () => live.reader.scan(root + 1, root + 5),
        (err: Error) =>
          err.name === "TransientChainError" && /finalized slot is \d+, below the range's end/.test(err.message),
      );
    } finally {
      await sol.close();
    }
  });
});
