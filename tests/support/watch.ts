/**
 * A pipeline context without a server, for tests that drive the watchers and `stepOrder` by hand: a temporary KV
 * file, sim chains (or the caller's chains) and a clock the test can move.
 */
import { type PipelineContext, pipelineSettings } from "../../actors/context.ts";
import { watchOnce } from "../../actors/watcher.ts";
import type { ChainReader, Chains } from "../../chains/adapter.ts";
import type { ChainSymbol, EvmChain } from "../../chains/catalog.ts";
import { defaultSimOperatorAddress, type SimChains, simChains } from "../../chains/sim/adapters.ts";
import { UTXO_CHAINS } from "../../chains/catalog.ts";
import { SIM_UTXO_GENESIS_DEFAULT } from "../../config/env.ts";
import { seedSimUtxoGenesis } from "../../actors/treasury_steps.ts";
import { openKv } from "../../kv/open.ts";
import { seededRandom } from "./chaos.ts";

/** Any fixed EVM address: the sim chains check no signature. */
export const SIM_TRANSFER_ADDRESS = "0x" + "7a".repeat(20);

export interface HandPipeline {
  kv: Deno.Kv;
  kvPath: string;
  sim: SimChains;
  ctx: PipelineContext;
  logs: string[];
  /** Moves the context's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function handPipeline(opts: {
  /** The chains the context uses (default: the sim chains), built over the context's KV. */
  chains?: (kv: Deno.Kv, sim: SimChains) => Chains | Promise<Chains>;
  transferAddress?: string;
  live?: Parameters<typeof pipelineSettings>[0]["live"];
  /** The sim hot wallets' genesis (chains/sim/adapters.ts `hotWalletGenesis`); 0n: finite, funded by sweeps only. */
  hotWalletGenesis?: bigint;
  /** The sim doge/zec treasuries' genesis (config/env.ts SIM_UTXO_GENESIS); 0n: only deposits fund payouts. */
  utxoGenesis?: bigint;
} = {}): Promise<HandPipeline> {
  const dir = await Deno.makeTempDir({ prefix: "hand-pipeline-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const kv = await openKv(kvPath);
  const sim = simChains(kv, { random: seededRandom(11), hotWalletGenesis: opts.hotWalletGenesis });
  for (const chain of UTXO_CHAINS) {
    await seedSimUtxoGenesis(
      sim.ledger(chain),
      defaultSimOperatorAddress(chain),
      opts.utxoGenesis ?? SIM_UTXO_GENESIS_DEFAULT,
    );
  }
  let offset = 0;
  const logs: string[] = [];
  const ctx: PipelineContext = {
    kv,
    chains: opts.chains ? await opts.chains(kv, sim) : sim,
    settings: pipelineSettings({
      blockMs: 20,
      confirmationTimeoutMs: 600_000,
      transferAddress: opts.transferAddress ?? SIM_TRANSFER_ADDRESS,
      live: opts.live,
    }),
    now: () => new Date(Date.now() + offset),
    log: (msg) => logs.push(msg),
  };
  return {
    kv,
    kvPath,
    sim,
    ctx,
    logs,
    advance: (ms) => void (offset += ms),
    async close() {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs the watcher of `chain` until its cursor is at the chain's tip; returns what it recorded. */
export async function watchToTip(ctx: PipelineContext, chain: ChainSymbol): Promise<number> {
  let recorded = 0;
  for (let tick = 0; tick < 100; tick++) {
    const tip = await ctx.chains.reader(chain).tip();
    const res = await watchOnce(ctx, chain, "test-watcher", 60_000);
    if (res.scannedTo === null) throw new Error(`watcher ${chain} did not scan: ${JSON.stringify(res)}`);
    recorded += res.recorded;
    if (res.scannedTo >= tip.number) return recorded;
  }
  throw new Error(`watcher ${chain} did not reach the tip in 100 ticks`);
}

/** How many KV keys start with `prefix`. */
export async function countKeys(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

/**
 * What a watcher tick over `reader` on the live EVM `chain` needs, and nothing else: it mints and pays nothing (either
 * would throw). Confirmations 1; the caller's block time and start block.
 */
export function watcherOnlyContext(
  kv: Deno.Kv,
  reader: ChainReader,
  opts: { chain: EvmChain; transferAddress: string; blockMs: number; startBlock: number },
): PipelineContext {
  return {
    kv,
    chains: {
      reader: () => reader,
      minter: () => {
        throw new Error("the watcher mints nothing");
      },
      payer: () => {
        throw new Error("the watcher pays nothing");
      },
    },
    settings: pipelineSettings({
      blockMs: opts.blockMs,
      confirmationTimeoutMs: 60_000,
      transferAddress: opts.transferAddress,
      live: { [opts.chain]: { confirmations: 1, blockMs: opts.blockMs, startBlock: opts.startBlock } },
    }),
    now: () => new Date(),
    log: () => {},
  };
}
