/**
 * The sol, xrp and sui watchers through their live adapters, each on its local protocol server (no validator,
 * rippled or Sui node runs here: tests/support/solana_rpc_server.ts, rippled_rpc_server.ts, sui_graphql_server.ts speak
 * the documented protocols): RPC calls per scanned block (slot, ledger, checkpoint) with few and with many deposit
 * addresses allocated in KV (they must be equal: the watcher matches credits against its in-memory address set,
 * never asks the node per address), and blocks scanned per second.
 *
 * Per chain: BENCH_BLOCKS blocks (~20), each with BENCH_TX_PER_BLOCK deposits to our first ten derived addresses and as
 * many unrelated transfers between strangers, then the real watcher (`watchOnce`, actors/watcher.ts) over a pipeline
 * context like tests/support/watch.ts builds (that chain live, the others simulated), from the block before the
 * deposits to the final tip: once with 10 addresses in KV, once with BENCH_ADDRESSES (100,000; the extra ones random
 * addresses of the chain's format, seeded as bench/utxo.ts does). RPC calls are counted with the adapter's `onRpc`.
 * Figures only: a local server answers in microseconds, so blocks/s measures our side (watcher, KV), not a network.
 * Run: deno task bench:native   (BENCH_ADDRESSES=100000, BENCH_BLOCKS=20, BENCH_TX_PER_BLOCK=3, BENCH_CHAINS=sol,xrp,sui)
 */
import { base58 } from "@scure/base";
import { encodeAccountID } from "xrpl";
import { watchOnce } from "../actors/watcher.ts";
import { type AccountAdapterOptions, type AccountAdapters, type Chains, payerFor } from "../chains/adapter.ts";
import { Signer } from "../chains/signer.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { xrpAdapters } from "../chains/xrp/index.ts";
import { depositAddressSet } from "../kv/address_index.ts";
import { cursorKey } from "../kv/pipeline.ts";
import { startRippledServer } from "../tests/support/rippled_rpc_server.ts";
import { startSolanaRpcServer } from "../tests/support/solana_rpc_server.ts";
import { startSuiGraphqlServer } from "../tests/support/sui_graphql_server.ts";
import { handPipeline } from "../tests/support/watch.ts";
import { randomBytes, seedDepositAddresses } from "./support/seed_addresses.ts";
import { positiveIntEnv as num } from "./support/env.ts";

const ADDRESSES = num("BENCH_ADDRESSES", 100_000);
const BLOCKS = num("BENCH_BLOCKS", 20);
const TX_PER_BLOCK = num("BENCH_TX_PER_BLOCK", 3);
const REAL_ADDRESSES = 10;
type BenchChain = "sol" | "xrp" | "sui";
const CHAINS = (Deno.env.get("BENCH_CHAINS") ?? "sol,xrp,sui").split(",").map((c) => c.trim()) as BenchChain[];
for (const c of CHAINS) {
  if (!["sol", "xrp", "sui"].includes(c)) throw new Error(`BENCH_CHAINS lists ${c}: only sol, xrp and sui are benched`);
}

/** Test-only mnemonics (public): never fund their keys anywhere real. */
const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const other = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");

/** One chain on its local server, holding the blocks to scan. */
interface Fixture {
  /** What serves the chain, for the printout. */
  server: string;
  url: string;
  adapters(opts: AccountAdapterOptions): AccountAdapters;
  randomAddress(): string;
  /** Makes the blocks and finalizes them all. */
  fill(ours: (i: number) => string, stranger: (i: number) => string): Promise<void> | void;
  close(): Promise<void>;
}

async function fixture(chain: BenchChain): Promise<Fixture> {
  if (chain === "sol") {
    const server = startSolanaRpcServer({ finalityLag: 2 });
    return {
      server: "Solana-RPC-shaped server",
      url: server.url,
      adapters: solAdapters,
      randomAddress: () => base58.encode(randomBytes(32)),
      fill(ours, stranger) {
        let n = 0;
        for (let b = 0; b < BLOCKS; b++) {
          for (let i = 0; i < TX_PER_BLOCK; i++, n++) {
            server.inject({
              payer: stranger(n % 7),
              credits: [{ to: ours(n % REAL_ADDRESSES), lamports: 10_000_000n }],
            });
            server.inject({
              payer: stranger(7 + n % 7),
              credits: [{ to: stranger(20 + n % 5), lamports: 1_000_000n }],
            });
          }
          server.produce(1);
        }
        server.finalize();
      },
      close: () => server.close(),
    };
  }
  if (chain === "xrp") {
    const server = startRippledServer();
    const h = server.hooks;
    return {
      server: "rippled-shaped server",
      url: server.url,
      adapters: xrpAdapters,
      randomAddress: () => encodeAccountID(randomBytes(20)),
      fill(ours, stranger) {
        let n = 0;
        for (let b = 0; b < BLOCKS; b++) {
          for (let i = 0; i < TX_PER_BLOCK; i++, n++) {
            h.fund(ours(n % REAL_ADDRESSES), 30_000_000n);
            h.fund(stranger(n % 7), 20_000_000n); // not ours (from the genesis account)
          }
          h.closeLedgers(1);
        }
        h.validateThrough(h.closedIndex);
      },
      close: () => server.close(),
    };
  }
  const server = await startSuiGraphqlServer();
  return {
    server: "Sui-GraphQL-shaped server",
    url: server.url,
    adapters: suiAdapters,
    randomAddress: () => "0x" + Array.from(randomBytes(32), (b) => b.toString(16).padStart(2, "0")).join(""),
    fill(ours, stranger) {
      let n = 0;
      for (let b = 0; b < BLOCKS; b++) {
        for (let i = 0; i < TX_PER_BLOCK; i++, n++) {
          server.deposit(ours(n % REAL_ADDRESSES), 2_000_000_000n);
          server.deposit(stranger(n % 7), 1_000_000_000n);
        }
        server.mine(1);
      }
    },
    close: () => server.close(),
  };
}

interface Run {
  chain: BenchChain;
  addresses: number;
  blocks: number;
  calls: number;
  byMethod: Record<string, number>;
  ms: number;
  recorded: number;
}

async function benchChain(chain: BenchChain): Promise<Run[]> {
  const f = await fixture(chain);
  const runs: Run[] = [];
  try {
    const ours = (i: number) => signer.address(chain, i);
    const plain = f.adapters({ urls: [f.url], signer, confirmations: 1 });
    const start = await plain.reader.tip();
    await f.fill(ours, (i) => other.address(chain, i));
    const tip = await plain.reader.tip();
    const blocks = tip.number - start.number;
    console.log(
      `${chain}: ${f.server}, ${blocks} blocks with ${BLOCKS * TX_PER_BLOCK} deposits to our first ` +
        `${REAL_ADDRESSES} addresses and ${BLOCKS * TX_PER_BLOCK} unrelated transfers`,
    );
    for (const addresses of [REAL_ADDRESSES, ADDRESSES]) {
      const byMethod: Record<string, number> = {};
      let calls = 0;
      const counted = f.adapters({
        urls: [f.url],
        signer,
        confirmations: 1,
        onRpc: ({ method }) => {
          calls++;
          byMethod[method] = (byMethod[method] ?? 0) + 1;
        },
      });
      const pipeline = await handPipeline({
        chains: (_kv, sim): Chains => ({
          reader: (c) => c === chain ? counted.reader : sim.reader(c),
          minter: (c) => sim.minter(c),
          payer: (c) => c === chain ? payerFor(c, counted.payer) : sim.payer(c),
        }),
        live: { [chain]: { startBlock: "tip" } },
      });
      try {
        const seedMs = await seedDepositAddresses(pipeline.kv, {
          chain,
          count: addresses,
          real: REAL_ADDRESSES,
          ours,
          random: f.randomAddress,
        });
        // The watcher loads the address set once per process (then appends): loaded here, timed apart from the scan.
        const loadStarted = performance.now();
        await depositAddressSet(pipeline.kv, chain).refresh();
        const loadMs = performance.now() - loadStarted;
        await pipeline.kv.set(cursorKey(chain), { number: start.number, hash: start.hash });
        calls = 0;
        for (const k of Object.keys(byMethod)) delete byMethod[k];
        let recorded = 0;
        const started = performance.now();
        for (let tick = 0; tick < 100; tick++) {
          const res = await watchOnce(pipeline.ctx, chain, "bench-watcher", 60_000);
          if (res.scannedTo === null) throw new Error(`the ${chain} watcher did not scan: ${JSON.stringify(res)}`);
          recorded += res.recorded;
          if (res.scannedTo >= tip.number) break;
        }
        const ms = performance.now() - started;
        console.log(
          `  ${addresses.toLocaleString()} addresses (seeded in ${(seedMs / 1000).toFixed(1)} s, set loaded in ` +
            `${loadMs.toFixed(0)} ms): ${calls} RPC calls for ${blocks} blocks = ${(calls / blocks).toFixed(2)} ` +
            `per block (${JSON.stringify(byMethod)}), ${recorded} deposits recorded, ` +
            `${((blocks * 1000) / ms).toFixed(0)} blocks/s (${ms.toFixed(0)} ms)`,
        );
        runs.push({ chain, addresses, blocks, calls, byMethod: { ...byMethod }, ms, recorded });
      } finally {
        await pipeline.close();
      }
    }
  } finally {
    await f.close();
  }
  return runs;
}

const all: Run[] = [];
for (const chain of CHAINS) all.push(...await benchChain(chain));

const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
console.log();
console.log(row(["chain", "addresses", "blocks", "RPC calls", "calls/block", "deposits", "blocks/s"]));
console.log(row(["---", "---:", "---:", "---:", "---:", "---:", "---:"]));
for (const r of all) {
  console.log(row([
    r.chain,
    r.addresses.toLocaleString("en-US"),
    String(r.blocks),
    String(r.calls),
    (r.calls / r.blocks).toFixed(2),
    String(r.recorded),
    ((r.blocks * 1000) / r.ms).toFixed(0),
  ]));
}
for (const chain of CHAINS) {
  const [few, many] = all.filter((r) => r.chain === chain);
  const same = few.calls === many.calls && few.recorded === many.recorded;
  console.log(
    same
      ? `${chain}: RPC calls per block are the same with ${few.addresses} and ${many.addresses.toLocaleString()} addresses`
      : `${chain}: MISMATCH: ${few.calls} calls and ${few.recorded} deposits with ${few.addresses} addresses, ` +
        `${many.calls} and ${many.recorded} with ${many.addresses}`,
  );
  if (!same || few.recorded !== BLOCKS * TX_PER_BLOCK) Deno.exitCode = 1;
}
