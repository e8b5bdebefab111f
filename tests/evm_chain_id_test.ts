/**
 * Every RPC URL of a live EVM chain is asked for its chain id at start, on its own (two real anvil nodes): failover
 * would answer from the first node that works and hide a backup URL serving another chain, whose logs a scan could
 * later read as burns. A backup that is down at start is tolerated while another URL proves the chain.
 */
import assert from "node:assert/strict";
import { privateKeyToAccount } from "viem/accounts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { ANVIL_PRIVATE_KEYS, closedPortUrl, startAnvil } from "./support/anvil.ts";
import { evmKvState } from "../kv/chain_state.ts";

const UASSETS = Object.fromEntries(
  ["uSOL", "uXRP", "uSUI", "uDOGE", "uZEC"].map((u, i) => [u, `0x${String(i + 1).padStart(40, "0")}`]),
) as Record<UAsset, `0x${string}`>;

Deno.test("live EVM start asks every RPC URL for its chain id (two anvil nodes)", async (t) => {
  const base = await startAnvil({ chainId: EVM.base.chainId });
  const other = await startAnvil(); // anvil's 31337: another chain
  const kv = await Deno.openKv(":memory:");
  const adapters = (urls: string[]) =>
    evmChainAdapters({
      chain: "base",
      state: evmKvState(kv),
      urls,
      account: privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]),
      uAssets: UASSETS,
      transferAddress: "0x00000000000000000000000000000000000000aa",
      timeoutMs: 2_000,
    });
  try {
    await t.step("a backup URL on another chain is refused, and named by position and origin", async () => {
      await assert.rejects(
        () => adapters([base.url, other.url]),
        (err: Error) => {
          assert.match(err.message, /chain id 31337, expected 8453 \(RPC URL 2 of 2, http:\/\/127\.0\.0\.1:\d+\)/);
          return true;
        },
      );
    });
    await t.step("a backup URL that is down at start is tolerated while another proves the chain", async () => {
      const { reader } = await adapters([closedPortUrl("/v2/KEY-IN-PATH"), base.url]);
      assert.ok((await reader.tip()).number >= 0);
    });
    await t.step("no URL answering at all is refused, with no key of the URL in the message", async () => {
      await assert.rejects(() => adapters([closedPortUrl("/v2/KEY-IN-PATH")]), (err: Error) => {
        assert.doesNotMatch(err.message, /KEY-IN-PATH/);
        return true;
      });
    });
  } finally {
    kv.close();
    await base.stop();
    await other.stop();
  }
});
