/**
 * What watching Base costs (docs/scan-budget.md, "EVM log ranges"): the real watcher catches up BENCH_BLOCKS blocks
 * 2 s apart on anvil, through a provider in front of it (tests/support/log_capped_provider.ts, uncapped unless
 * BENCH_CAPS says), then follows the tip one block at a time. The blocks hold a busy token's traffic (400 transfers
 * between outsiders in the same uAsset contract every 1,000 blocks) and a burn every 2,000 blocks. Prints blocks per
 * second end to end over HTTP against Base's 0.5 (a block every 2 s: Base's documentation, "Network information"),
 * requests and bytes per block and per day at that rate (catching up, and at the tip, where every block is a tick of
 * its own), the peak RSS of this process (the watcher, its KV and the provider proxy), and that every burn was
 * recorded once. Figures only.
 *
 * Anvil mines each block in time growing with the chain's length (1,000 empty blocks in 0.7 s, 5,000 more in 27 s on
 * this machine), so mining is timed apart and a day (43,200 blocks) takes about half an hour to mine: per-day figures
 * are scaled from the blocks caught up.
 *
 * Run: deno task bench:evm-catchup   (BENCH_BLOCKS=6000; BENCH_CAPS=range:50,results:100,bytes:65536,bps:10000000)
 */
import { type Address, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { watchOnce } from "../actors/watcher.ts";
import { EVM } from "../chains/catalog.ts";
import { evmClient, evmReader } from "../chains/evm/index.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { openKv } from "../kv/open.ts";
import { type Cursor, cursorKey, type SeenTransfer } from "../kv/pipeline.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "../tests/support/anvil.ts";
import { blockNumber, mineBlockWith, mintCall, transferCall } from "../tests/support/anvil_traffic.ts";
import { logCappedProvider, type LogCaps } from "../tests/support/log_capped_provider.ts";
import { withPeakRss } from "./support/scale.ts";
import { watcherOnlyContext } from "../tests/support/watch.ts";

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;
const BASE_BLOCKS_PER_SECOND = 0.5;
const DAY_BLOCKS = 86_400 * BASE_BLOCKS_PER_SECOND;
const BLOCKS = Number(Deno.env.get("BENCH_BLOCKS") ?? 6_000);
const TIP_BLOCKS = 100;
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
if (!Number.isSafeInteger(BLOCKS) || BLOCKS < 2_000) throw new Error("BENCH_BLOCKS must be a whole number >= 2000");

function capsFromEnv(): LogCaps {
  const caps: LogCaps = {};
  for (const part of (Deno.env.get("BENCH_CAPS") ?? "").split(",").filter(Boolean)) {
    const [k, v] = part.split(":");
    const n = Number(v);
    if (k === "range") caps.maxRange = n;
    else if (k === "results") caps.maxResults = n;
    else if (k === "bytes") caps.maxResponseBytes = n;
    else if (k === "bps") caps.bytesPerSecond = n;
    else throw new Error(`BENCH_CAPS: unknown cap ${k}`);
  }
  return caps;
}

const account = (i: number) => privateKeyToAccount(ANVIL_PRIVATE_KEYS[i]).address;
const [minter, holder, burner, transferAddress] = [1, 2, 3, 5].map(account);

const anvil = await startAnvil({ chainId: CHAIN_ID });
const dir = await Deno.makeTempDir({ prefix: "bench-evm-catchup-" });
const caps = capsFromEnv();
const provider = logCappedProvider(anvil.url, caps);
try {
  const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter, { chain: CHAIN });
  await anvilRpc(anvil.url, "evm_setAutomine", [false]);
  await mineBlockWith(anvil.url, [
    mintCall(uAssets.uSOL, minter, holder, parseEther("1000"), "1"),
    mintCall(uAssets.uSOL, minter, burner, parseEther("1000"), "2"),
  ]);
  const start = await blockNumber(anvil.url);
  const t0 = performance.now();
  const burns: string[] = [];
  let salt = 0;
  while ((await blockNumber(anvil.url)) < start + BLOCKS - 1) {
    const left = start + BLOCKS - 1 - await blockNumber(anvil.url);
    await anvilRpc(anvil.url, "anvil_mine", [toHex(Math.min(999, left)), toHex(2)]);
    if (await blockNumber(anvil.url) >= start + BLOCKS - 1) break;
    salt++;
    const outsiders = Array.from(
      { length: 400 },
      (_, i) =>
        transferCall(
          uAssets.uSOL,
          holder,
          `0x${(salt * 100_000 + i + 1).toString(16).padStart(40, "0")}` as Address,
          1n,
        ),
    );
    const withBurn = salt % 2 === 1;
    const n = await mineBlockWith(anvil.url, [
      ...outsiders,
      ...(withBurn ? [transferCall(uAssets.uSOL, burner, transferAddress, parseEther("2"))] : []),
    ]);
    if (withBurn) {
      const block = await anvilRpc<{ transactions: { hash: string; from: string }[] }>(
        anvil.url,
        "eth_getBlockByNumber",
        [toHex(n), true],
      );
      burns.push(block.transactions.find((t) => t.from.toLowerCase() === burner.toLowerCase())!.hash.toLowerCase());
    }
  }
  await anvilRpc(anvil.url, "anvil_mine", ["0x1", "0x2"]);
  const end = await blockNumber(anvil.url);
  const mineMs = performance.now() - t0;

  const kv = await openKv(`${dir}/kv.sqlite3`);
  await createBurnConfig(kv, burner.toLowerCase(), "sol", SOL_DESTINATION, null);
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
  const startHash = (await reader.blockHash(start))!;
  await kv.set(cursorKey(CHAIN), { number: start, hash: startHash as string } satisfies Cursor);
  const requests = () => Object.values(provider.counts.requests).reduce((a, b) => a + b, 0);

  // Catching up.
  const [r0, b0] = [requests(), provider.counts.bytes];
  let ticks = 0;
  const t1 = performance.now();
  const [, peakRss, startRss] = await withPeakRss(async () => {
    for (let at = start; at < end; ticks++) {
      const r = await watchOnce(ctx, CHAIN, "bench", 60_000, { batchCursorMs: 60_000 });
      if (r.scannedTo === null || r.scannedTo <= at) throw new Error(`the watcher did not move from ${at}`);
      at = r.scannedTo;
    }
  });
  const catchUpMs = performance.now() - t1;
  const [catchUpRequests, catchUpBytes] = [requests() - r0, provider.counts.bytes - b0];

  // At the tip: a block, a tick.
  const [r1, b1] = [requests(), provider.counts.bytes];
  for (let i = 0; i < TIP_BLOCKS; i++) {
    await anvilRpc(anvil.url, "anvil_mine", ["0x1", "0x2"]);
    await watchOnce(ctx, CHAIN, "bench", 60_000, { batchCursorMs: 60_000 });
  }
  const [tipRequests, tipBytes] = [requests() - r1, provider.counts.bytes - b1];

  let recorded = 0;
  for (const hash of burns) {
    if ((await kv.get<SeenTransfer>(["transfer_seen", CHAIN, hash, 0])).value) recorded++;
  }
  kv.close();

  const blocks = end - start;
  const rate = blocks / (catchUpMs / 1000);
  const mib = (n: number) => (n / 2 ** 20).toFixed(0);
  const thousands = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`caps: ${JSON.stringify(caps)}; mined ${blocks} blocks in ${(mineMs / 1000).toFixed(1)} s (anvil)`);
  console.log(
    `catch-up: ${thousands(blocks)} blocks in ${ticks} ticks, ${(catchUpMs / 1000).toFixed(1)} s = ` +
      `${rate.toFixed(0)} blocks/s (${(rate / BASE_BLOCKS_PER_SECOND).toFixed(0)}x Base's 0.5)`,
  );
  console.log(
    `catch-up: ${(catchUpRequests / blocks).toFixed(3)} requests and ${(catchUpBytes / blocks).toFixed(0)} bytes ` +
      `per block; a day of Base (${thousands(DAY_BLOCKS)} blocks) caught up: ` +
      `${thousands(catchUpRequests * DAY_BLOCKS / blocks)} requests, ` +
      `${(catchUpBytes * DAY_BLOCKS / blocks / 2 ** 20).toFixed(1)} MiB`,
  );
  console.log(
    `at the tip: ${(tipRequests / TIP_BLOCKS).toFixed(1)} requests and ${(tipBytes / TIP_BLOCKS).toFixed(0)} bytes ` +
      `per block; per day: ${thousands(tipRequests * DAY_BLOCKS / TIP_BLOCKS)} requests, ` +
      `${(tipBytes * DAY_BLOCKS / TIP_BLOCKS / 2 ** 20).toFixed(1)} MiB`,
  );
  const s = reader.stats;
  console.log(
    `reader: ${s.logRequests} eth_getLogs, largest answer ${s.largestResponse} bytes, ${s.refusals} refusals ` +
      `(provider: ${JSON.stringify(provider.counts.refused)}), span now ${s.range}`,
  );
  console.log(
    `peak RSS ${mib(peakRss)} MiB (${mib(startRss)} at the start); burns recorded ${recorded}/${burns.length}`,
  );
  if (logs.length) console.log(`first refusal: ${logs[0]}`);
} finally {
  await provider.close();
  await anvil.stop();
  await Deno.remove(dir, { recursive: true });
}
