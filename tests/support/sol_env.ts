/** Shared setup of the sol tests: the test mnemonic's signer, our deposit addresses and a stranger's. */
import { Signer } from "../../chains/signer.ts";
import { solAdapters } from "../../chains/sol/index.ts";
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
