/**
 * A watcher far behind on Base catches up through providers that cap `eth_getLogs` as hosted ones do
 * (tests/support/log_capped_provider.ts in front of a real anvil; chains/evm/log_range.ts quotes their answers): every
 * uAsset transfer to the transfer address becomes exactly one record, the stored cursor follows every step, no tick
 * stalls or throws, and no refusal leaves a gap.
 *
 * The stretch: `BLOCKS` blocks at 2 s (Base's block time), holding a busy token's
 * traffic (hundreds of uSOL transfers between outsiders in the same contract, which the node's filter on the recipient
 * topic excludes), a dust spam to the transfer address (60 sub-minimum transfers in each of four blocks: what makes
 * a results cap refuse), three burns from senders with a burn configuration and one transfer held for having none.
 * Each provider behaviour catches up the whole stretch from the same start (ticks of at most 200 blocks); the
 * figures of a longer run are bench/evm_catchup.ts's.
 */
import assert from "node:assert/strict";
import { type Address, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { TransientChainError } from "../chains/adapter.ts";
import { EVM, NATIVE } from "../chains/catalog.ts";
import { evmClient, evmReader } from "../chains/evm/index.ts";
import type { EvmReader } from "../chains/evm/reader.ts";
import { watchOnce } from "../actors/watcher.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { type Cursor, cursorKey, listDust, seenKey, type SeenTransfer } from "../kv/pipeline.ts";
import { openKv } from "../kv/open.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { logCappedProvider, type LogCaps } from "./support/log_capped_provider.ts";
import {
  blockNumber,
  mineBlockWith,
  mintCall,
  transferCall as transfer,
  type TxCall,
} from "./support/anvil_traffic.ts";
import { watcherOnlyContext } from "./support/watch.ts";

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;
/**
 * Blocks caught up: 80 minutes of Base. Not a day: anvil (1.7.1) mines each block in time growing with the chain's
 * length (measured here: 1,000 empty blocks in 0.7 s, the next 5,000 in 27 s, the 5,000 after those in 66 s), so a day
 * of 43,200 would take half an hour to mine. bench/evm_catchup.ts runs longer stretches and prints the figures.
 */
const BLOCKS = 2_400;
const account = (i: number) => privateKeyToAccount(ANVIL_PRIVATE_KEYS[i]).address;
const [minter, holder, burnerSol, burnerXrp, transferAddress, unconfigured, spammer] = [1, 2, 3, 4, 5, 6, 7].map(
  account,
);
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const XRP_DESTINATION = "rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe";
const DUST = NATIVE.sol.uAsset.minimumBurnAmount / 1000n;

interface Ours {
  txHash: string;
  block: number;
  kind: SeenTransfer["kind"];
}

Deno.test(
  "evm watcher on anvil behind a capped provider catches up 2,400 Base blocks (2 s apart): each burn once, " +
    "cursor stored each step, no stall, under a span cap, a results cap (with and without a named range), HTTP 413 " +
    "and a 10 MB/s provider",
  async (t) => {
    const anvil = await startAnvil({ chainId: CHAIN_ID });
    const dir = await Deno.makeTempDir({ prefix: "evm-catchup-" });
    try {
      const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter, { chain: CHAIN });
      const mint = (token: Address, to: Address, amount: bigint, id: string) => mintCall(token, minter, to, amount, id);
      await anvilRpc(anvil.url, "evm_setAutomine", [false]);
      await mineBlockWith(anvil.url, [
        mint(uAssets.uSOL, holder, parseEther("1000"), "1"),
        mint(uAssets.uSOL, burnerSol, parseEther("100"), "2"),
        mint(uAssets.uXRP, burnerXrp, parseEther("100"), "3"),
        mint(uAssets.uSOL, unconfigured, parseEther("100"), "4"),
        mint(uAssets.uSOL, spammer, parseEther("100"), "5"),
      ]);
      const start = await blockNumber(anvil.url);
      // Empty blocks 2 s apart, as Base makes them.
      const mine = (n: number) => anvilRpc(anvil.url, "anvil_mine", [toHex(n), toHex(2)]).then(() => undefined);
      const ours: Ours[] = [];
      const send = async (calls: TxCall[], mark: { from: Address; kind: Ours["kind"] }[]) => {
        const block = await mineBlockWith(anvil.url, calls);
        const txs = (await anvilRpc<{ transactions: { hash: string; from: string }[] }>(
          anvil.url,
          "eth_getBlockByNumber",
          [toHex(block), true],
        )).transactions;
        for (const m of mark) {
          const tx = txs.find((tx) => tx.from.toLowerCase() === m.from.toLowerCase());
          assert.ok(tx, `block ${block} holds the transfer of ${m.from}`);
          ours.push({ txHash: tx.hash.toLowerCase(), block, kind: m.kind });
        }
        return block;
      };
      const outsiders = (n: number, salt: number) =>
        Array.from(
          { length: n },
          (_, i) => transfer(uAssets.uSOL, holder, `0x${(salt * 100_000 + i + 1).toString(16).padStart(40, "0")}`, 1n),
        );

      // A busy token: 800 transfers between outsiders in two blocks, none to us.
      await mine(300);
      await send(outsiders(400, 1), []);
      await send(outsiders(400, 2), []);
      await mine(500);
      await send([transfer(uAssets.uSOL, burnerSol, transferAddress, parseEther("2"))], [{
        from: burnerSol,
        kind: "order",
      }]);
      // Dust spam to the transfer address, four blocks of 60, the third also holding a burn, a held transfer and
      // more outsiders' traffic.
      await mine(600);
      const spam = () => Array.from({ length: 60 }, () => transfer(uAssets.uSOL, spammer, transferAddress, DUST));
      const firstDust = await send(spam(), []);
      await send(spam(), []);
      await send([
        ...spam(),
        ...outsiders(200, 3),
        transfer(uAssets.uXRP, burnerXrp, transferAddress, parseEther("30")),
        transfer(uAssets.uSOL, unconfigured, transferAddress, parseEther("5")),
      ], [{ from: burnerXrp, kind: "order" }, { from: unconfigured, kind: "held" }]);
      await send(spam(), []);
      // The rest of the stretch; its last block holds a burn.
      await mine(start + BLOCKS - 1 - await blockNumber(anvil.url));
      const end = await send([transfer(uAssets.uSOL, burnerSol, transferAddress, parseEther("3"))], [{
        from: burnerSol,
        kind: "order",
      }]);
      assert.equal(end, start + BLOCKS);
      const startHash = (await anvilRpc<{ hash: string }>(anvil.url, "eth_getBlockByNumber", [toHex(start), false]))
        .hash;

      // Each case: the caps of each URL in the order of preference, and which refusal the first one must have made.
      const cases: [string, LogCaps[], string][] = [
        ["a span cap of 50 blocks (Infura's live answer)", [{ maxRange: 50 }], "range"],
        ["a results cap of 100 logs (Infura's documented answer)", [{ maxResults: 100 }], "results"],
        [
          "a results cap of 100 logs naming a range (Alchemy's answer)",
          [{ maxResults: 100, suggestRange: true }],
          "results",
        ],
        ["answers above 64 KiB refused with HTTP 413", [{ maxResponseBytes: 64 * 1024 }], "bytes"],
        ["a provider answering at 10 MB/s", [{ bytesPerSecond: 10_000_000 }], ""],
        [
          "a results cap of 50 logs, below one block's 60, with a second URL: that block is read from the second",
          [{ maxResults: 50 }, {}],
          "results",
        ],
      ];
      for (const [i, [name, urlCaps, refusal]] of cases.entries()) {
        await t.step(name, async () => {
          const providers = urlCaps.map((caps) => logCappedProvider(anvil.url, caps));
          const provider = providers[0];
          const kv = await openKv(`${dir}/kv-${i}.sqlite3`);
          try {
            assert.ok((await createBurnConfig(kv, burnerSol.toLowerCase(), "sol", SOL_DESTINATION, null)).ok);
            assert.ok((await createBurnConfig(kv, burnerXrp.toLowerCase(), "xrp", XRP_DESTINATION, null)).ok);
            const logs: string[] = [];
            const reader = evmReader({
              chain: CHAIN,
              client: evmClient({ chain: CHAIN, urls: providers.map((p) => p.url), chainId: CHAIN_ID }),
              uAssets,
              transferAddress,
              maxRange: 1_000,
              log: (m) => logs.push(m),
            });
            const ctx = watcherOnlyContext(kv, reader, {
              chain: CHAIN,
              transferAddress: transferAddress.toLowerCase(),
              blockMs: 2_000,
              startBlock: start,
            });
            await kv.set(cursorKey(CHAIN), { number: start, hash: startHash } satisfies Cursor);
            let at = start;
            let ticks = 0;
            while (at < end) {
              const r = await watchOnce(ctx, CHAIN, "test", 60_000, { batchCursorMs: 60_000 });
              ticks++;
              assert.ok(r.scannedTo !== null && r.scannedTo > at, `tick ${ticks} moved on from ${at}`);
              at = r.scannedTo;
              // Stored every step of the catch-up, not kept in memory: a crash loses one step at most.
              assert.equal(
                (await kv.get<Cursor>(cursorKey(CHAIN))).value?.number,
                at,
                `cursor stored at tick ${ticks}`,
              );
              for (const o of ours.filter((o) => o.block <= at)) {
                const seen = await kv.get<SeenTransfer>(seenKey(CHAIN, o.txHash, 0));
                assert.equal(
                  seen.value?.kind,
                  o.kind,
                  `the transfer of block ${o.block} recorded before the cursor passed it`,
                );
              }
            }
            assert.equal(at, end);
            // Exactly once: the only records are ours; the dust is one aggregate of its 240 transfers.
            const seen = [];
            for await (const e of kv.list<SeenTransfer>({ prefix: ["transfer_seen", CHAIN] })) seen.push(e.key[2]);
            assert.deepEqual(seen.sort(), ours.map((o) => o.txHash).sort());
            const dust = (await listDust(kv)).filter((d) => d.chain === CHAIN);
            assert.deepEqual(dust.map((d) => [d.sender, d.count]), [[spammer.toLowerCase(), 240]]);
            if (refusal) {
              assert.ok((provider.counts.refused[refusal] ?? 0) > 0, `the provider refused (${refusal})`);
              assert.ok(reader.stats.refusals > 0);
              assert.match(
                logs.join("\n"),
                /eth_getLogs of \d+ blocks \(\d+\.\.\d+\) refused \(.+\); asking \d+ at a time/,
              );
            } else {
              assert.deepEqual(provider.counts.refused, {});
            }
            if (providers.length > 1) assert.match(logs.join("\n"), /refused even for one block/);
            report(name, ticks, reader, provider.counts.requests);
          } finally {
            kv.close();
            for (const p of providers) await p.close();
          }
        });
      }

      await t.step("a byte budget ends each scan at the last block of the request that reached it", async () => {
        const reader = evmReader({
          chain: CHAIN,
          client: evmClient({ chain: CHAIN, urls: [anvil.url], chainId: CHAIN_ID }),
          uAssets,
          transferAddress,
          maxRange: 100,
          log: () => {},
        });
        const found: string[] = [];
        let scans = 0;
        for (let from = start + 1; from <= end; scans++) {
          const logRequests = reader.stats.logRequests;
          const blocks = await reader.scan(from, end, { maxBytes: 1 });
          const last = blocks.at(-1)!;
          // A budget of one byte: every scan ends with its first eth_getLogs (100 blocks, the span here: its answers
          // are small), at the canonical hash of that request's last block.
          assert.equal(last.number, Math.min(end, from + 99), `scan from ${from}`);
          assert.equal(last.hash, await reader.blockHash(last.number));
          assert.equal(reader.stats.logRequests - logRequests, 1);
          for (const b of blocks) found.push(...b.transfers.filter((t) => t.amount > DUST).map((t) => t.txHash));
          from = last.number + 1;
        }
        assert.equal(scans, Math.ceil((end - start) / 100));
        assert.deepEqual(found.sort(), ours.map((o) => o.txHash).sort(), "each of ours once, none skipped");
      });

      await t.step("the same cap and no other URL: the watcher stops before that block, never past it", async () => {
        const provider = logCappedProvider(anvil.url, { maxResults: 50 });
        const kv = await openKv(`${dir}/kv-alone.sqlite3`);
        try {
          const logs: string[] = [];
          const reader = evmReader({
            chain: CHAIN,
            client: evmClient({ chain: CHAIN, urls: [provider.url], chainId: CHAIN_ID }),
            uAssets,
            transferAddress,
            maxRange: 1_000,
            log: (m) => logs.push(m),
          });
          const ctx = watcherOnlyContext(kv, reader, {
            chain: CHAIN,
            transferAddress: transferAddress.toLowerCase(),
            blockMs: 2_000,
            startBlock: start,
          });
          await kv.set(cursorKey(CHAIN), { number: start, hash: startHash } satisfies Cursor);
          let failures = 0;
          for (let tick = 0; tick < 20 && failures < 2; tick++) {
            try {
              await watchOnce(ctx, CHAIN, "test", 60_000, { batchCursorMs: 60_000 });
            } catch (err) {
              assert.ok(err instanceof TransientChainError, `expected a TransientChainError, got ${err}`);
              assert.match(
                err.message,
                new RegExp(`eth_getLogs\\(${firstDust}\\.\\.${firstDust}\\): refused even for one block`),
              );
              failures++;
            }
            const cursor = (await kv.get<Cursor>(cursorKey(CHAIN))).value!.number;
            assert.ok(cursor < firstDust, `cursor ${cursor} stays before block ${firstDust}, whose logs were not read`);
          }
          assert.equal(failures, 2, "the block is asked again on the next tick, and refused again");
          assert.match(logs.join("\n"), /refused even for one block/);
        } finally {
          kv.close();
          await provider.close();
        }
      });
    } finally {
      await anvil.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

function report(name: string, ticks: number, reader: EvmReader, requests: Record<string, number>) {
  const s = reader.stats;
  const total = Object.values(requests).reduce((a, b) => a + b, 0);
  console.log(
    `${name}: ${ticks} ticks, ${total} requests (${requests.eth_getLogs ?? 0} eth_getLogs), ` +
      `scans read ${s.bytes} bytes, largest log answer ${s.largestResponse}, ${s.refusals} refusals, span now ${s.range}`,
  );
}
