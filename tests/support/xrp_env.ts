/** The xrp adapters on a rippled-shaped server (tests/support/rippled_rpc_server.ts), with the test-only mnemonic. */
import { payerFor } from "../../chains/adapter.ts";
import { xrpPayer } from "../../chains/xrp/payer.ts";
import { xrpReader } from "../../chains/xrp/reader.ts";
import { xrplRpc } from "../../chains/xrp/rpc.ts";
import { Signer } from "../../chains/signer.ts";
import { type RippledServer, type RippledServerOptions, startRippledServer } from "./rippled_rpc_server.ts";
import { handPipeline } from "./watch.ts";
import type { PipelineContext } from "../../actors/context.ts";
import type { ChainSymbol } from "../../chains/catalog.ts";
import { type Cursor, cursorKey } from "../../kv/pipeline.ts";
import { depositAddress as pipelineDepositAddress, FAST_PIPELINE, partner } from "./pipeline.ts";
import { startTestServer } from "./server.ts";

/** Test-only mnemonic (public): never fund its keys anywhere real. */
export const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
/** Not ours: an address of another mnemonic. */
export const elsewhere = Signer.fromMnemonic(
  "legal winner thank year wave sausage worth useful legal winner thank yellow",
).address("xrp", 0);
export const depositAddress = (index: number) => signer.address("xrp", index);
export const hotWallet = signer.address("xrp", 0, "hot");

export const XRP = 1_000_000n;

export function xrpOn(server: RippledServer, onRpc?: (info: { url: string; method: string }) => void) {
  // The factory's parts, typed as they are (the payer's sweep and check are always there).
  const rpc = xrplRpc({ urls: [server.url], onRpc });
  return { rpc, reader: xrpReader({ rpc, confirmations: 1 }), payer: xrpPayer({ rpc, signer }) };
}

/** Starts a server, runs `fn`, closes it. */
export async function withRippled(
  opts: RippledServerOptions,
  fn: (server: RippledServer) => Promise<void>,
): Promise<void> {
  const server = startRippledServer(opts);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/**
 * A hand-driven pipeline (tests/support/watch.ts) with xrp live on `server` and every other chain simulated. `payer`
 * false keeps the sim's xrp payer (a test of the watcher alone); `live` sets xrp's live settings (default: none).
 */
export async function xrpHandPipeline(
  server: RippledServer,
  opts: { payer?: boolean; live?: NonNullable<Parameters<typeof handPipeline>[0]>["live"] } = {},
) {
  const xrp = xrpOn(server);
  const p = await handPipeline({
    chains: (_kv, sim) => ({
      reader: (c) => c === "xrp" ? xrp.reader : sim.reader(c),
      minter: (c) => sim.minter(c),
      payer: (c) => c === "xrp" && opts.payer !== false ? payerFor(c, xrp.payer) : sim.payer(c),
      uAssetView: (c) => sim.uAssetView!(c),
    }),
    ...(opts.live ? { live: opts.live } : {}),
  });
  return { p, xrp };
}

/**
 * A started service (sim chains, its pipeline stopped) whose xrp watcher is driven by hand with a live reader of its
 * own on `server` (its `stats` and `logs` for the test): a partner's deposit address (the test mnemonic's index 0), and
 * the watcher's cursor stored at the server's validated tip. `close` stops the service (the caller closes `server`).
 */
export async function xrpWatcherByHand(server: RippledServer, opts: { timeoutMs?: number; backoffMs?: number } = {}) {
  const service = await startTestServer(FAST_PIPELINE);
  await service.pipeline!.stop();
  const kv = service.services.kv;
  const running = service.services.pipeline!;
  const logs: string[] = [];
  const reader = xrpReader({
    rpc: xrplRpc({ urls: [server.url], timeoutMs: opts.timeoutMs }),
    confirmations: 1,
    log: (m) => logs.push(m),
    ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
  });
  const ctx: PipelineContext = {
    ...running,
    chains: { ...running.chains, reader: (c: ChainSymbol) => c === "xrp" ? reader : running.chains.reader(c) },
  };
  const { wallet, token } = await partner(service);
  const address = await pipelineDepositAddress(service, token, "xrp", "base");
  const start = await reader.tip();
  await kv.set(cursorKey("xrp"), { number: start.number, hash: start.hash } satisfies Cursor);
  return { kv, ctx, reader, logs, wallet, address, start: start.number, close: () => service.close() };
}
