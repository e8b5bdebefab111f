/**
 * A Dogecoin-Core-shaped JSON-RPC server (batches too), for tests of what the service asks a Dogecoin Core 1.14 node:
 * `getblockchaininfo` (its `chain` proves the network, config/chain_mode.ts), and the watcher's reads (`getblockhash`,
 * `getblock <hash> false` for the raw block, `getblock <hash> true`, `getblockheader`, `getrawtransaction`). A real
 * node cannot stand in here: litecoind regtest cannot claim `chain` "main", nor serve Dogecoin's merge-mined blocks.
 * Any other method is answered "Method not found" and recorded in `unknown`.
 *
 * As Dogecoin Core 1.14 does:
 * - It reads `id`, `method` and `params` only, whatever `jsonrpc` says, and answers with `result` and `error` both
 *   present (src/rpc/server.cpp `JSONRPCRequest::parse`, `JSONRPCExecBatch`); a batch of any length is answered in
 *   one array (the node sets no batch limit).
 * - `getblock(hash, verbose)`: `verbose` is a boolean (src/rpc/blockchain.cpp `getblock`, `params[1].get_bool()`;
 *   another type is refused); `false` answers the block's serialisation in hex (AuxPoW included), `true` the decoded
 *   header with the txids. A hash it does not know: -5 "Block not found".
 * - `getblockhash` above the tip: -8 "Block height out of range".
 * - `-rpcworkqueue` (src/httpserver.cpp, `DEFAULT_HTTP_WORKQUEUE` 16): a request arriving while that many are being
 *   worked on is answered HTTP 503 "Work queue depth exceeded" (text, not JSON). `rpcWorkQueue` sets the depth;
 *   `busy` stands for other clients' requests in the queue.
 * - `getrawtransaction(txid, verbose)` with `-txindex`: the deposits this server placed are known (hex, blockhash,
 *   confirmations); any other txid is -5 "No such mempool or blockchain transaction" (the inputs of generated
 *   transactions spend made-up outpoints, which a real node would not know either).
 *
 * The chain: `blocks` blocks from genesis, coinbase only (the default, for start-up tests), or with `mainnetBlocks`
 * a day or more of mainnet-shaped blocks from a chosen height (tests/support/doge_mainnet_blocks.ts: generated from
 * the height when asked, never stored), deposits to our addresses hidden among them. Provider limits in front
 * (`maxBatch`, `maxResponseBytes`, `bytesPerSecond`: tests/support/provider_limits.ts).
 */
import { bytesToHex } from "@noble/hashes/utils.js";
import { type UtxoNetwork, utxoNetwork } from "../../chains/utxo/network.ts";
import { type DogeDeposit, DogeMainnetChain, type DogeMainnetShape } from "./doge_mainnet_blocks.ts";
import { limitedJson, newServed, type ProviderLimits, type ProviderServed, refuseBatch } from "./provider_limits.ts";

export interface BitcoinCoreServer {
  url: string;
  /** The served chain (its tip is `chain.last`). */
  readonly chain: DogeMainnetChain;
  /** Methods asked, in order. */
  readonly calls: string[];
  /** Methods asked that this server does not answer. */
  readonly unknown: string[];
  /** Answers sent, their bytes, and requests refused by the provider limits or the work queue. */
  readonly served: ProviderServed;
  /**
   * Every later answer to a method set here is what its edit makes of the served result (a copy; `params` as called),
   * to serve a malformed answer; delete the method to serve true answers again.
   */
  readonly tampered: Map<string, (result: unknown, params: unknown[]) => unknown>;
  /** Requests other clients have in the work queue now (counted against `-rpcworkqueue`; 0 at start). */
  busy: number;
  close(): Promise<void>;
}

export interface BitcoinCoreServerOptions extends ProviderLimits {
  /** `getblockchaininfo.chain` ("main" by default). */
  chain?: string;
  /** Blocks from genesis, coinbase only (5 by default); ignored with `mainnetBlocks`. */
  blocks?: number;
  /** Mainnet-shaped blocks from `first` (the cursor's block: the scan starts after it). */
  mainnetBlocks?: DogeMainnetShape & { first: number; count: number; deposits?: DogeDeposit[] };
  /** The network whose addresses deposits pay (Dogecoin mainnet by default). */
  network?: UtxoNetwork;
  /** Dogecoin Core's `-rpcworkqueue`: requests worked on at once before 503 (16 by default). */
  rpcWorkQueue?: number;
}

class RpcFailure {
  constructor(readonly code: number, readonly message: string) {}
}

/** Dogecoin Core 1.14 src/httpserver.cpp `DEFAULT_HTTP_WORKQUEUE`. */
const DEFAULT_HTTP_WORKQUEUE = 16;

export function startBitcoinCoreServer(opts: BitcoinCoreServerOptions = {}): BitcoinCoreServer {
  const name = opts.chain ?? "main";
  const network = opts.network ?? utxoNetwork("doge", "mainnet");
  const chain = opts.mainnetBlocks
    ? new DogeMainnetChain(network, opts.mainnetBlocks)
    : new DogeMainnetChain(network, { first: 0, count: opts.blocks ?? 5, transactions: 1 });
  const tip = chain.last;
  const calls: string[] = [];
  const unknown: string[] = [];
  const served = newServed();
  const tampered = new Map<string, (result: unknown, params: unknown[]) => unknown>();
  const workQueue = opts.rpcWorkQueue ?? DEFAULT_HTTP_WORKQUEUE;
  let working = 0;

  const heightOfHash = (hash: unknown): number => {
    const h = typeof hash === "string" ? chain.heightOf(hash) : null;
    if (h === null) throw new RpcFailure(-5, "Block not found");
    return h;
  };
  const methods: Record<string, (params: unknown[]) => unknown> = {
    getblockchaininfo: () => ({ chain: name, blocks: tip, headers: tip, bestblockhash: chain.hashAt(tip) }),
    getblockcount: () => tip,
    getbestblockhash: () => chain.hashAt(tip),
    getblockhash: ([height]) => {
      const h = Number(height);
      if (!(h >= chain.first && h <= tip)) throw new RpcFailure(-8, "Block height out of range");
      return chain.hashAt(h);
    },
    getblockheader: ([hash]) => {
      const h = heightOfHash(hash);
      return { hash, height: h, confirmations: tip - h + 1 };
    },
    getblock: ([hash, verbose = true]) => {
      if (typeof verbose !== "boolean") throw new RpcFailure(-1, "JSON value is not a boolean as expected");
      const h = heightOfHash(hash);
      if (!verbose) return bytesToHex(chain.blockBytes(h));
      return {
        hash,
        height: h,
        confirmations: tip - h + 1,
        ...(h > 0 ? { previousblockhash: h > chain.first ? chain.hashAt(h - 1) : undefined } : {}),
        tx: chain.txids(h),
      };
    },
    getrawtransaction: ([txid, verbose = false]) => {
      const h = typeof txid === "string" ? chain.depositTxids.get(txid) : undefined;
      if (h === undefined) {
        throw new RpcFailure(
          -5,
          "No such mempool or blockchain transaction. Use gettransaction for wallet transactions.",
        );
      }
      const hex = bytesToHex(chain.txBytes(h, String(txid))!);
      if (!verbose) return hex;
      return { hex, txid, blockhash: chain.hashAt(h), confirmations: tip - h + 1 };
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
      if (!(err instanceof RpcFailure)) throw err;
      return { result: null, error: { code: err.code, message: err.message }, id: req.id };
    }
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (working + handle.busy >= workQueue) {
      served.refused++;
      return new Response("Work queue depth exceeded", { status: 503 });
    }
    working++;
    try {
      const body = await req.json();
      const refused = refuseBatch(opts, served, body);
      if (refused) return refused;
      return limitedJson(opts, served, JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    } finally {
      working--;
    }
  });
  const handle: BitcoinCoreServer = {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`,
    chain,
    calls,
    unknown,
    served,
    tampered,
    busy: 0,
    close: () => server.shutdown(),
  };
  return handle;
}
