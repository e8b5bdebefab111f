/**
 * The doge watcher on a real Bitcoin-Core-family node (litecoind regtest, standing in for Dogecoin Core): RPC calls
 * per scanned block with few and with many deposit addresses allocated in KV (they must be equal: the watcher matches
 * outputs against its in-memory address set, never asks the node per address), and blocks scanned per second.
 *
 * ~20 blocks with deposits (BENCH_BLOCKS, BENCH_TX_PER_BLOCK transactions each, every one paying one of our first ten
 * derived addresses, plus the wallet's change and the coinbase), then the real watcher (`watchOnce`, actors/watcher.ts)
 * over a pipeline context like tests/support/watch.ts builds, doge read through the live adapter (chains/utxo) and the
 * other chains simulated, from the block before the deposits to the tip: once with 10 addresses in KV, once with
 * BENCH_ADDRESSES (100,000; the extra ones are random regtest P2PKH addresses, written as `createMintWallet` writes).
 * RPC calls are counted with the client's `onRpc` hook. Figures only; litecoind must be installed.
 * Run: deno task bench:utxo   (BENCH_ADDRESSES=100000, BENCH_BLOCKS=20, BENCH_TX_PER_BLOCK=5)
 */
import { watchOnce } from "../actors/watcher.ts";
import { type Chains, payerFor } from "../chains/adapter.ts";
import { depositAddressSet } from "../kv/address_index.ts";
import { scriptAddress } from "../chains/utxo/network.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { DOGE_REGTEST, dogeOnLitecoind } from "../tests/support/doge_regtest.ts";
import { LITECOIND, startLitecoind } from "../tests/support/litecoind.ts";
import { handPipeline } from "../tests/support/watch.ts";
import { randomBytes, seedDepositAddresses } from "./support/seed_addresses.ts";
import { positiveIntEnv as num } from "./support/env.ts";

const ADDRESSES = num("BENCH_ADDRESSES", 100_000);
const BLOCKS = num("BENCH_BLOCKS", 20);
const TX_PER_BLOCK = num("BENCH_TX_PER_BLOCK", 5);
const REAL_ADDRESSES = 10;

try {
  Deno.statSync(LITECOIND);
} catch {
  console.error(`bench:utxo needs litecoind (${LITECOIND}): apt-get install -y litecoind`);
  Deno.exit(1);
}

const randomRegtestAddress = () =>
  scriptAddress(
    DOGE_REGTEST,
    Uint8Array.of(0x76, 0xa9, 0x14, ...randomBytes(20), 0x88, 0xac),
  )!;

const node = await startLitecoind();
try {
  await node.mine(20); // more mature wallet coins
  const doge = dogeOnLitecoind(node);
  const start = await doge.reader.tip();
  let deposits = 0;
  for (let b = 0; b < BLOCKS; b++) {
    for (let i = 0; i < TX_PER_BLOCK; i++) {
      await node.send(doge.address(deposits++ % REAL_ADDRESSES), 1_100_000_000n + BigInt(deposits));
    }
    await node.mine(1);
  }
  const tip = await doge.reader.tip();
  const scannedBlocks = tip.number - start.number;
  console.log(
    `litecoind regtest: ${scannedBlocks} blocks with ${deposits} deposits to our first ${REAL_ADDRESSES} addresses`,
  );

  const results: {
    addresses: number;
    calls: number;
    byMethod: Record<string, number>;
    ms: number;
    recorded: number;
  }[] = [];
  for (const addresses of [REAL_ADDRESSES, ADDRESSES]) {
    const byMethod: Record<string, number> = {};
    let calls = 0;
    const counted = dogeOnLitecoind(node, {
      onRpc: ({ method }) => {
        calls++;
        byMethod[method] = (byMethod[method] ?? 0) + 1;
      },
    });
    const pipeline = await handPipeline({
      chains: (_kv, sim): Chains => ({
        reader: (c) => c === "doge" ? counted.reader : sim.reader(c),
        minter: (c) => sim.minter(c),
        payer: (c) => c === "doge" ? payerFor(c, counted.payer) : sim.payer(c),
      }),
    });
    try {
      const seedMs = await seedDepositAddresses(pipeline.kv, {
        chain: "doge",
        count: addresses,
        real: REAL_ADDRESSES,
        ours: (index) => doge.address(index),
        random: randomRegtestAddress,
      });
      // The watcher loads the address set once per process (then appends): loaded here, timed apart from the scan.
      const loadStarted = performance.now();
      await depositAddressSet(pipeline.kv, "doge").refresh();
      const loadMs = performance.now() - loadStarted;
      await pipeline.kv.set(cursorKey("doge"), { number: start.number, hash: start.hash });
      calls = 0;
      for (const k of Object.keys(byMethod)) delete byMethod[k];
      let recorded = 0;
      const started = performance.now();
      for (let tick = 0; tick < 100; tick++) {
        const res = await watchOnce(pipeline.ctx, "doge", "bench-watcher", 60_000);
        if (res.scannedTo === null) throw new Error(`the watcher did not scan: ${JSON.stringify(res)}`);
        recorded += res.recorded;
        if (res.scannedTo >= tip.number) break;
      }
      const ms = performance.now() - started;
      console.log(
        `${addresses.toLocaleString()} addresses (seeded in ${(seedMs / 1000).toFixed(1)} s, set loaded in ` +
          `${loadMs.toFixed(0)} ms): ${calls} RPC calls ` +
          `for ${scannedBlocks} blocks = ${(calls / scannedBlocks).toFixed(2)} per block ` +
          `(${JSON.stringify(byMethod)}), ${recorded} deposits recorded, ` +
          `${((scannedBlocks * 1000) / ms).toFixed(0)} blocks/s (${ms.toFixed(0)} ms)`,
      );
      results.push({ addresses, calls, byMethod, ms, recorded });
    } finally {
      await pipeline.close();
    }
  }
  const [few, many] = results;
  console.log(
    few.calls === many.calls
      ? `RPC calls per block are the same with ${few.addresses} and ${many.addresses.toLocaleString()} addresses`
      : `MISMATCH: ${few.calls} calls with ${few.addresses} addresses, ${many.calls} with ${many.addresses}`,
  );
  if (few.calls !== many.calls || few.recorded !== many.recorded) Deno.exitCode = 1;
} finally {
  await node.stop();
}
