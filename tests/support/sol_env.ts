/** Shared setup of the sol tests: the test mnemonic's signer, our deposit addresses and a stranger's. */
import { Signer } from "../../chains/signer.ts";
import { solAdapters } from "../../chains/sol/index.ts";
import type { ChainSymbol } from "../../chains/catalog.ts";
import type { PipelineContext } from "../../actors/context.ts";
import { type Cursor, cursorKey } from "../../kv/pipeline.ts";
import { depositAddress, FAST_PIPELINE, partner } from "./pipeline.ts";
import { startTestServer } from "./server.ts";
import type { SolanaRpcServer } from "./solana_rpc_server.ts";

/** Test-only mnemonic (public): never fund its keys anywhere real. */
export const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
export const ours = (index: number) => signer.address("sol", index);
/** Not ours: keys of another mnemonic. */
const other = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");
export const stranger = (index: number) => other.address("sol", index);

export function solOn(server: SolanaRpcServer, onRpc?: (i: { url: string; method: string }) => void) {
  return solAdapters({ urls: [server.url], signer, confirmations: 1, onRpc });
}

/**
 * A started server (sim chains, its pipeline stopped) whose sol watcher is driven by hand with the live reader on
 * `sol`: a partner's deposit address, and the watcher's cursor stored at `sol`'s finalized tip after one more block.
 * `close` stops the server (the caller closes `sol`).
 */
export async function solWatcherByHand(sol: SolanaRpcServer) {
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop();
  const kv = server.services.kv;
  const running = server.services.pipeline!;
  const live = solAdapters({ urls: [sol.url], signer, confirmations: 1 });
  const ctx: PipelineContext = {
    ...running,
    chains: { ...running.chains, reader: (c: ChainSymbol) => c === "sol" ? live.reader : running.chains.reader(c) },
  };
  const { wallet, token } = await partner(server);
  const address = await depositAddress(server, token, "sol", "base");
  sol.produce(1);
  sol.finalize();
  const start = await live.reader.tip();
  const cursor = { number: start.number, hash: start.hash } satisfies Cursor;
  await kv.set(cursorKey("sol"), cursor);
  return { server, kv, ctx, live, wallet, address, cursor, close: () => server.close() };
}
