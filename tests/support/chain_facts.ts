/**
 * What pipeline tests check on the simulated chains and in KV, computed without the pipeline's own helpers: every
 * transaction the sim ledger ever accepted (so a second mint or payout shows even when the contract refused it),
 * deposit ids, exact conversions, and a second pipeline process on the same KV file.
 */
import type { PipelineContext } from "../../actors/context.ts";
import type { PipelineRuntime } from "../../actors/runtime.ts";
import { pipelineRuntime } from "../../app.ts";
import type { ChainSymbol } from "../../chains/catalog.ts";
import { simChains } from "../../chains/sim/adapters.ts";
import { SimLedger } from "../../chains/sim/ledger.ts";
import { openKv } from "../../kv/open.ts";
import { getOrder } from "../../kv/orders.ts";
import { type Order } from "../../model/order.ts";
import type { TestServer } from "./server.ts";

/** Decimals of each native token (spec 2.6), written out here so conversions are checked, not repeated. */
export const DECIMALS = { sol: 9, xrp: 6, sui: 9, doge: 8, zec: 8 } as const;
/** Spec section 8. */
export const MIN_DEPOSIT = {
  sol: 10_000_000n,
  xrp: 1_000_000n,
  sui: 1_000_000_000n,
  doge: 1_000_000_000n,
  zec: 100_000n,
};
export const MIN_BURN_WEI = {
  sol: 10n ** 18n,
  xrp: 25n * 10n ** 18n,
  sui: 10n ** 18n,
  doge: 10n ** 17n,
  zec: 10n ** 17n,
};

export const toWei = (chain: keyof typeof DECIMALS, native: bigint) => native * 10n ** BigInt(18 - DECIMALS[chain]);

/** One transaction as the sim ledger stores it (its storage, read directly: the ledger's API never lists them). */
export interface LedgerTx {
  hash: string;
  // deno-lint-ignore no-explicit-any
  tx: any;
  success: boolean;
  status: "pending" | "included" | "dropped";
}

export async function ledgerTxs(kv: Deno.Kv, chain: ChainSymbol): Promise<LedgerTx[]> {
  const out: LedgerTx[] = [];
  for await (const e of kv.list<LedgerTx>({ prefix: ["sim", chain, "tx"] })) out.push(e.value);
  return out;
}

/** Every mint transaction ever submitted on `chain` for this deposit id, whatever became of it. */
export async function mintTxs(kv: Deno.Kv, chain: ChainSymbol, depositId: string): Promise<LedgerTx[]> {
  return (await ledgerTxs(kv, chain)).filter((t) => t.tx.kind === "mint" && t.tx.depositId === depositId);
}

/** Every payout transaction ever submitted on `chain` for this order. */
export async function payoutTxs(kv: Deno.Kv, chain: ChainSymbol, orderId: string): Promise<LedgerTx[]> {
  return (await ledgerTxs(kv, chain)).filter((t) => t.tx.kind === "payout" && t.tx.orderId === orderId);
}

/**
 * sha256("chain:txHash:index") as 0x-hex: the deposit identity the mint must carry (docs/architecture.md invariant 2).
 */
export async function expectedDepositId(chain: string, txHash: string, index = 0): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${chain}:${txHash}:${index}`));
  return "0x" + Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Seals exactly one block on `chain` even while the chain is stalled (a ledger whose clock is past the stall), so a
 * test can give a transaction one confirmation and then hold the chain still.
 */
export async function sealOneBlock(kv: Deno.Kv, chain: ChainSymbol) {
  return await new SimLedger(kv, chain, { now: () => Date.now() + 365 * 86_400_000 }).sealBlock();
}

export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v) return v;
    last = v;
    await new Promise((r) => setTimeout(r, 15));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}

export async function stored(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

/**
 * A second pipeline process on the server's KV file: its own KV handle (as another process would open it), its own
 * sim chains and its own runtime with a new lease id. `null` runtime when the server has no pipeline.
 */
export async function secondProcess(server: TestServer): Promise<{
  kv: Deno.Kv;
  ctx: PipelineContext;
  runtime: PipelineRuntime;
  close(): Promise<void>;
}> {
  const kv = await openKv(server.kvPath);
  const ctx: PipelineContext = { ...server.services.pipeline!, kv, chains: simChains(kv) };
  const runtime = pipelineRuntime({ ...server.services, kv, pipeline: ctx })!;
  runtime.start();
  return {
    kv,
    ctx,
    runtime,
    async close() {
      await runtime.stop();
      kv.close();
    },
  };
}
