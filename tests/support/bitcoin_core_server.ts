/**
 * A Bitcoin-Core-shaped JSON-RPC server (batches too) holding an empty chain, for tests of what the service asks a
 * Dogecoin Core node at start: `getblockchaininfo` (its `chain` proves the network, config/chain_mode.ts), and the
 * watcher's first reads (`getblockhash`, `getblock <hash> true`). A real node cannot stand in here: litecoind regtest
 * cannot claim `chain` "main". Any other method is answered "Method not found" and recorded in `unknown`. Like
 * Dogecoin Core 1.14 (`JSONRPCRequest::parse`, src/rpc/server.cpp) it reads `id`, `method` and `params` only, whatever
 * `jsonrpc` says, and answers with `result` and `error` both present.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

export interface BitcoinCoreServer {
  url: string;
  /** Methods asked, in order. */
  readonly calls: string[];
  /** Methods asked that this server does not answer. */
  readonly unknown: string[];
  /**
   * Every later answer to a method set here is what its edit makes of the served result (a copy; `params` as called),
   * to serve a malformed answer; delete the method to serve true answers again.
   */
  readonly tampered: Map<string, (result: unknown, params: unknown[]) => unknown>;
  close(): Promise<void>;
}

export function startBitcoinCoreServer(opts: { chain?: string; blocks?: number } = {}): BitcoinCoreServer {
  const chain = opts.chain ?? "main";
  const count = opts.blocks ?? 5;
  const hashes = Array.from(
    { length: count },
    (_, h) => bytesToHex(sha256(new TextEncoder().encode(`block ${h}`))),
  );
  const calls: string[] = [];
  const unknown: string[] = [];
  const tampered = new Map<string, (result: unknown, params: unknown[]) => unknown>();
  const tip = count - 1;
  const methods: Record<string, (params: unknown[]) => unknown> = {
    getblockchaininfo: () => ({ chain, blocks: tip, headers: tip, bestblockhash: hashes[tip] }),
    getblockcount: () => tip,
    getbestblockhash: () => hashes[tip],
    getblockhash: ([height]) => {
      const h = Number(height);
      if (!(h >= 0 && h <= tip)) throw { code: -8, message: "Block height out of range" };
      return hashes[h];
    },
    getblock: ([hash]) => {
      const h = hashes.indexOf(String(hash));
      if (h < 0) throw { code: -5, message: "Block not found" };
      return {
        hash: hashes[h],
        height: h,
        confirmations: tip - h + 1,
        ...(h > 0 ? { previousblockhash: hashes[h - 1] } : {}),
        tx: [],
      };
    },
  };
  const answer = (req: { id?: unknown; method?: string; params?: unknown[] }) => {
    const method = String(req.method);
    calls.push(method);
    const fn = methods[method];
    if (!fn) {
      unknown.push(method);
      return { result: null, error: { code: -32601, message: "Method not found" }, id: req.id };
    }
    try {
      const result = fn(req.params ?? []);
      const edit = tampered.get(method);
      return { result: edit ? edit(structuredClone(result), req.params ?? []) : result, error: null, id: req.id };
    } catch (err) {
      return { result: null, error: err, id: req.id };
    }
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    return Response.json(Array.isArray(body) ? body.map(answer) : answer(body));
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`,
    calls,
    unknown,
    tampered,
    close: () => server.shutdown(),
  };
}
