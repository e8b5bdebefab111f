/**
 * A local HTTP server speaking JSON-RPC the way providers answer and fail, for tests where no real node is wanted.
 * Its URL carries a provider-style API key in the path and the query, which must never reach a log or a message.
 */
import type { EvmChain, UAsset } from "../../chains/catalog.ts";
import { evmClient, evmReader } from "../../chains/evm/index.ts";

export type Answer = {
  status?: number;
  result?: unknown;
  error?: { code: number; message: string };
  delayMs?: number;
};

export const MOCK_RPC_SECRETS = ["SECRETKEY123", "SECRETKEY456"] as const;

/** A JSON-RPC server whose answer to each request is decided by `answer`. */
export function mockNode(answer: (method: string, params: unknown[]) => Answer) {
  const requests: { method: string; params: unknown[] }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    requests.push({ method: body.method, params: body.params });
    const a = answer(body.method, body.params);
    if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    const payload = a.error
      ? { jsonrpc: "2.0", id: body.id, error: a.error }
      : { jsonrpc: "2.0", id: body.id, result: a.result ?? null };
    return new Response(JSON.stringify(payload), {
      status: a.status ?? 200,
      headers: { "content-type": "application/json" },
    });
  });
  const { port } = server.addr as Deno.NetAddr;
  const origin = `http://127.0.0.1:${port}`;
  const [pathKey, queryKey] = MOCK_RPC_SECRETS;
  return {
    origin,
    url: `${origin}/v2/${pathKey}?apikey=${queryKey}`,
    requests,
    close: () => server.shutdown(),
  };
}

const UASSETS = {
  uSOL: "0x0000000000000000000000000000000000000001",
  uXRP: "0x0000000000000000000000000000000000000002",
  uSUI: "0x0000000000000000000000000000000000000003",
  uDOGE: "0x0000000000000000000000000000000000000004",
  uZEC: "0x0000000000000000000000000000000000000005",
} as const satisfies Record<UAsset, `0x${string}`>;
const TRANSFER_ADDRESS = "0x00000000000000000000000000000000000000aa";

/** The production EVM reader of `chain` over `url` (placeholder uAsset contracts). */
export function readerOn(url: string, timeoutMs = 2_000, maxRange = 1_000, chain: EvmChain = "base") {
  const client = evmClient({ chain, urls: [url], timeoutMs });
  return evmReader({ chain, client, uAssets: UASSETS, transferAddress: TRANSFER_ADDRESS, maxRange });
}
