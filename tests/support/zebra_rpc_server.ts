/**
 * A Zebra-shaped RPC server: a local Deno.serve JSON-RPC endpoint answering the methods chains/utxo/zebra.ts uses in
 * the shapes Zebra documents (zebra-rpc `TransactionObject`, the snapshot tests in
 * zebra-rpc/src/methods/tests/snapshots/), over an in-memory transparent-only chain. No Zebra runs on this machine
 * kind (docs/architecture.md): this is what the zec tests talk to, and they say so in their names.
 *
 * - JSON-RPC over HTTP with basic auth (401 without the right credentials), as Zebra serves it (read from its source at
 *   1c9b24503, which pins jsonrpsee 0.24.10): Zebra's `HttpRequestMiddleware`
 *   (zebra-rpc/src/server/http_request_compatibility.rs) rewrites ONE request object in the bitcoind dialect (no
 *   `jsonrpc`) or lightwalletd's ("1.0" with params and id) to 2.0 and answers it in that dialect; a batch passes
 *   through unchanged, and jsonrpsee (types/src/params.rs `TwoPointZero`, server/src/server.rs `handle_rpc_call`)
 *   answers every batch entry whose `jsonrpc` is not exactly "2.0" with -32600 "Invalid request" and the entry's id.
 *   Zebra's `FixRpcResponseMiddleware` (zebra-rpc/src/server/rpc_call_compatibility.rs) turns jsonrpsee's
 *   invalid-params -32602 into -1, the message kept: `getblockhash` above the tip answers -1 "Provided index is
 *   greater than the current tip" (zebra-rpc/src/methods.rs `height_from_signed_int`).
 * - `getblockchaininfo`, `getblockhash`, `getblock(hash|height string, 0|1|2)`, `getrawtransaction(txid, 0|1)`,
 *   `sendrawtransaction`, `getrawmempool`, `getbestblockhash`, `getblockcount`, and `generate(n)` as Zebra's regtest
 *   has it (a test hook; also `mine()` on the object).
 * - `sendrawtransaction` checks what Zebra's mempool would: the bytes parse as v5 with @bitgo/utxo-lib (and our
 *   ZIP-225 parser), the branch id is the next block's, the expiry height has not passed, every input exists and is
 *   unspent (not in the chain, not by another mempool transaction), every P2PKH signature verifies over the ZIP-244
 *   digest, and the fee is at least ZIP-317's conventional fee; else a Zebra-like error.
 * - A mempool transaction that can no longer be mined (its `nExpiryHeight` is below the next block's height) is
 *   dropped when the tip moves, as Zebra does; invalid ones (inputs spent by a reorg) are dropped when mining.
 * - Answer size: jsonrpsee's `max_response_body_size` (10 MiB by default; Zebra keeps it): a larger answer is one
 *   error object, -32008 "Response is too big" for a call, -32011 "The batch response was too large" for a batch.
 *   Zebra sets no batch length limit. Providers in front may (`limits`: tests/support/provider_limits.ts).
 * - `mainnetBlocks`: instead of mined blocks, a day or more of mainnet-shaped blocks generated when asked
 *   (tests/support/zec_mainnet_blocks.ts: transparent and shielded-only transactions as Zebra emits them), deposits
 *   hidden among them; `getrawtransaction` knows those deposits (nothing indexes the generated transactions).
 * - Test hooks: `deposit(address, amount)` (a transparent output to any address, from a made-up funding input, into
 *   the mempool), `mine(n)`, `reorg(depth, {drop})`, `setNextBranchId`, `dropFromMempool`.
 */
import * as utxolib from "@bitgo/utxo-lib";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { hash160, outputScript, scriptAddress, type UtxoNetwork } from "../../chains/utxo/network.ts";
import { zip317ConventionalFee } from "../../chains/utxo/zec_tx.ts";
import {
  fromHex,
  isCoinbase,
  parseZecV5,
  toHex,
  transparentSighash,
  V5_VERSION_GROUP_ID,
  zecTxid,
  type ZecV5Tx,
} from "../../chains/utxo/zec_zip244.ts";
import {
  type ChainTx,
  chainTx,
  serializeV5,
  type ShieldedTx,
  u32le,
  type ZecDeposit,
  ZecMainnetChain,
  type ZecMainnetShape,
} from "./zec_mainnet_blocks.ts";
import { limitedJson, newServed, type ProviderLimits, type ProviderServed, refuseBatch } from "./provider_limits.ts";

const NU6_3 = 0x37a5165b;
const COINBASE_REWARD = 312_500_000n; // 3.125 ZEC
const GENESIS_PARENT = "0".repeat(64);

interface Block {
  hash: string;
  height: number;
  parent: string;
  time: number;
  txs: ChainTx[];
}

/** A block as served: a mined one, or a generated one whose shielded transactions are JSON only. */
type ServedBlock = Omit<Block, "txs"> & { txs: (ChainTx | ShieldedTx)[] };

const isShielded = (t: ChainTx | ShieldedTx): t is ShieldedTx => "object" in t;

interface Coin {
  value: bigint;
  script: Uint8Array;
}

class RpcFailure extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

// jsonrpsee 0.24's error codes (types/src/error.rs) and zcashd's "misc" code Zebra maps invalid params to
// (zebra-rpc/src/server/error.rs `LegacyCode::Misc`).
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const ZCASHD_MISC_ERROR = -1;

type JsonRpcId = null | number | string;

interface JsonRpcAnswer {
  jsonrpc?: string;
  result?: unknown;
  error?: { code: number; message: string } | null;
  id: JsonRpcId;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** jsonrpsee's `Id` (types/src/params.rs): null, an unsigned 64-bit integer or a string; nothing else. */
const isJsonRpcId = (v: unknown): v is JsonRpcId =>
  v === null || typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v) && v >= 0);

function jsonrpseeError(id: JsonRpcId, code: number, message: string): JsonRpcAnswer {
  return { jsonrpc: "2.0", error: { code, message }, id };
}

/**
 * What jsonrpsee 0.24 makes of one request object (types/src/request.rs `Request`, `Notification`): a call when
 * `jsonrpc` is exactly "2.0" (types/src/params.rs `TwoPointZero` accepts that string only), `method` a string and `id`
 * a valid id; a notification (never answered) when only the id is missing or invalid; otherwise null, an invalid
 * request.
 */
function jsonrpseeRequest(entry: unknown): { id: JsonRpcId; method: string; params: unknown } | "notification" | null {
  if (!isObject(entry) || entry.jsonrpc !== "2.0" || typeof entry.method !== "string") return null;
  if (!("id" in entry) || !isJsonRpcId(entry.id)) return "notification";
  return { id: entry.id, method: entry.method, params: entry.params ?? undefined };
}

/** The id jsonrpsee answers an invalid request with (types/src/request.rs `InvalidRequest`), null when it has none. */
function invalidRequestId(entry: unknown): JsonRpcId {
  return isObject(entry) && isJsonRpcId(entry.id) ? entry.id : null;
}

type Dialect = "bitcoind" | "lightwalletd" | "2.0" | "unknown";

/**
 * The dialect Zebra's `HttpRequestMiddleware` (zebra-rpc/src/server/http_request_compatibility.rs, `JsonRpcRequest::
 * version`) sees in a request body: only a body that is ONE request object is looked at (a batch is "unknown" and
 * passes through unchanged). "1.0" with params and id is lightwalletd's, no `jsonrpc` with params and id bitcoind's.
 */
function zebraDialect(body: unknown): Dialect {
  if (!isObject(body) || typeof body.method !== "string") return "unknown";
  const version = body.jsonrpc ?? null;
  if (version !== null && typeof version !== "string") return "unknown";
  const params = body.params ?? null;
  const id = body.id ?? null;
  if (version === "2.0") return id === null || typeof id === "string" || typeof id === "number" ? "2.0" : "unknown";
  if (params === null || id === null) return "unknown";
  if (version === "1.0") return "lightwalletd";
  return version === null ? "bitcoind" : "unknown";
}

/** The request as Zebra's middleware forwards it to jsonrpsee: its four fields, "2.0", null ones left out. */
function rewrittenTo2(body: unknown, dialect: Dialect): unknown {
  if (dialect === "unknown") return body;
  const { method, params, id } = body as Record<string, unknown>;
  return {
    jsonrpc: "2.0",
    method,
    ...(params === null || params === undefined ? {} : { params }),
    ...(id === null || id === undefined ? {} : { id }),
  };
}

/** Zebra's `JsonRpcResponse::into_version`: the answer in the dialect the request came in. */
function inDialect(dialect: Dialect, answer: JsonRpcAnswer): JsonRpcAnswer {
  switch (dialect) {
    case "bitcoind":
    case "lightwalletd": {
      const { jsonrpc: _, ...rest } = answer;
      return {
        ...(dialect === "lightwalletd" ? { jsonrpc: "1.0" } : {}),
        ...rest,
        result: answer.result ?? null,
        error: answer.error ?? null,
      };
    }
    case "2.0":
      return answer.error ? answer : { ...answer, result: answer.result ?? null };
    case "unknown":
      return answer;
  }
}

const outpointKey = (txid: string, index: number) => `${txid}:${index}`;
const displayHash = (internal: Uint8Array) => toHex(internal.slice().reverse());

export interface ZebraServerOptions {
  network: UtxoNetwork;
  /** The consensus branch id of the next block (`getblockchaininfo.consensus.nextblock`); NU6.3 by default. */
  branchId?: number;
  /** Basic-auth credentials the server requires. */
  user?: string;
  password?: string;
  /** Blocks mined at start (genesis included); 1 by default. */
  initialBlocks?: number;
  /**
   * Instead of mined blocks: mainnet-shaped blocks from `first` (the cursor's block: the scan starts after it),
   * generated when asked (tests/support/zec_mainnet_blocks.ts), deposits hidden among them. Read-only: no mining.
   */
  mainnetBlocks?: ZecMainnetShape & { first: number; count: number; deposits?: ZecDeposit[] };
  /** A provider in front (tests/support/provider_limits.ts). */
  limits?: ProviderLimits;
  /** jsonrpsee's `max_response_body_size` (10 MiB by default, `TEN_MB_SIZE_BYTES`). */
  maxResponseBodySize?: number;
}

/**
 * jsonrpsee 0.24's default `max_response_body_size` (core `TEN_MB_SIZE_BYTES`), which Zebra's server keeps: an
 * answer above it is an error object instead (types/src/error.rs: -32008 "Response is too big" for one call, -32011
 * "The batch response was too large" for a batch, answered as one object).
 */
const TEN_MB_SIZE_BYTES = 10 * 1024 * 1024;
const OVERSIZED_RESPONSE = -32008;
const BATCH_RESPONSE_TOO_LARGE = -32011;

export class ZebraShapedServer {
  readonly network: UtxoNetwork;
  branchId: number;
  readonly blocks: Block[] = [];
  /** In arrival order. */
  readonly mempool = new Map<string, ChainTx>();
  /** Every RPC method called, in order (tests assert on batching and on what was never asked). */
  readonly calls: string[] = [];
  /**
   * Every later answer to a method set here is what its edit makes of the served result (a copy; `params` as called),
   * to serve a malformed answer; delete the method to serve true answers again.
   */
  readonly tampered = new Map<string, (result: unknown, params: unknown[]) => unknown>();
  #server: Deno.HttpServer<Deno.NetAddr> | null = null;
  #auth: string;
  #nonce = 0;
  /** Deposits' txids: their made-up funding inputs are not checked. */
  #deposits = new Set<string>();
  /** Transactions no miner takes (`neverMine`): they stay in the mempool until they expire. */
  #neverMined = new Set<string>();
  #minerScript: Uint8Array;
  /** Set with `mainnetBlocks`: the generated chain served instead of `blocks`. */
  readonly mainnet: ZecMainnetChain | null = null;
  readonly #limits: ProviderLimits;
  readonly #maxResponseBodySize: number;
  /** Answers sent, their bytes, and requests refused by the provider limits. */
  readonly served: ProviderServed = newServed();
  url = "";

  constructor(opts: ZebraServerOptions) {
    this.network = opts.network;
    this.branchId = opts.branchId ?? NU6_3;
    this.#auth = "Basic " + btoa(`${opts.user ?? "zebra"}:${opts.password ?? "zebra-secret"}`);
    // A miner we hold no key for: coinbase outputs are never ours.
    this.#minerScript = Uint8Array.of(
      0x76,
      0xa9,
      0x14,
      ...hash160(Uint8Array.of(2, ...new Uint8Array(32).fill(9))),
      0x88,
      0xac,
    );
    this.#limits = opts.limits ?? {};
    this.#maxResponseBodySize = opts.maxResponseBodySize ?? TEN_MB_SIZE_BYTES;
    if (opts.mainnetBlocks) {
      this.mainnet = new ZecMainnetChain(this.network, this.branchId, this.#minerScript, opts.mainnetBlocks);
      return;
    }
    for (let i = 0; i < (opts.initialBlocks ?? 1); i++) this.#mineOne();
  }

  static start(opts: ZebraServerOptions): ZebraShapedServer {
    const s = new ZebraShapedServer(opts);
    const user = opts.user ?? "zebra";
    const password = opts.password ?? "zebra-secret";
    s.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => s.#handle(req));
    s.url = `http://${user}:${password}@127.0.0.1:${s.#server.addr.port}/`;
    return s;
  }

  async close(): Promise<void> {
    await this.#server?.shutdown();
  }

  get tipHeight(): number {
    return this.mainnet ? this.mainnet.last : this.blocks.length - 1;
  }

  get tipHash(): string {
    return this.mainnet ? this.mainnet.hashAt(this.mainnet.last)! : this.blocks[this.blocks.length - 1].hash;
  }

  /** The best chain's block at `height`, generated in `mainnetBlocks` mode; undefined when there is none. */
  #blockAt(height: number): ServedBlock | undefined {
    if (this.mainnet) return this.mainnet.blockAt(height) ?? undefined;
    return this.blocks[height];
  }

  // --- test hooks ----------------------------------------------------------------------------------------------

  /** A transparent output of `amount` zats to `address`, in the mempool (mine to confirm). Returns its outpoint. */
  deposit(address: string, amount: bigint): { txid: string; index: number } {
    const funding = sha256(new TextEncoder().encode(`deposit ${++this.#nonce}`));
    const raw = serializeV5(this.branchId, 0, [{ prevHash: funding, prevIndex: 0, scriptSig: Uint8Array.of(0x51) }], [
      { value: amount, script: outputScript(this.network, address) },
    ]);
    const t = chainTx(raw);
    this.#deposits.add(t.txid);
    this.mempool.set(t.txid, t);
    return { txid: t.txid, index: 0 };
  }

  /**
   * Mines `n` blocks: each takes every mempool transaction still valid at its height, except those in `skip` (a
   * miner that leaves them out: they stay in the mempool until mined or expired). Returns their hashes.
   */
  mine(n = 1, opts: { skip?: string[] } = {}): string[] {
    const hashes: string[] = [];
    for (let i = 0; i < n; i++) hashes.push(this.#mineOne(new Set(opts.skip)).hash);
    return hashes;
  }

  /**
   * Removes the top `depth` blocks (a reorg's first half; `mine` builds the new branch). Their non-coinbase
   * transactions go back to the mempool, except those in `drop`, which vanish (as if the new branch's miner never
   * saw them).
   */
  reorg(depth: number, opts: { drop?: string[] } = {}): void {
    if (depth < 1 || depth >= this.blocks.length) throw new Error(`cannot reorg ${depth} blocks`);
    const removed = this.blocks.splice(this.blocks.length - depth, depth);
    const back = removed.flatMap((b) => b.txs.filter((t) => !isCoinbase(t.tx)));
    const rest = [...this.mempool.values()];
    this.mempool.clear();
    for (const t of [...back, ...rest]) if (!opts.drop?.includes(t.txid)) this.mempool.set(t.txid, t);
  }

  /** No block will take `txid`: it waits in the mempool until it can no longer be mined, then is dropped. */
  neverMine(txid: string): void {
    this.#neverMined.add(txid);
  }

  dropFromMempool(txid: string): void {
    this.mempool.delete(txid);
  }

  setNextBranchId(branchId: number): void {
    this.branchId = branchId;
  }

  /** The best chain's unspent outputs (mempool ignored). */
  utxos(): Map<string, Coin> {
    const set = new Map<string, Coin>();
    for (const b of this.blocks) {
      for (const t of b.txs) {
        if (!isCoinbase(t.tx)) {
          for (const i of t.tx.inputs) set.delete(outpointKey(displayHash(i.prevHash), i.prevIndex));
        }
        t.tx.outputs.forEach((o, n) => set.set(outpointKey(t.txid, n), { value: o.value, script: o.script }));
      }
    }
    return set;
  }

  /** Where the best chain has `txid`: its block, or null. */
  blockOf(txid: string): ServedBlock | null {
    if (this.mainnet) {
      // Only the deposits are looked up by txid (a deposit's sender, a payout's place); nothing indexes the rest.
      const height = this.mainnet.depositTxids.get(txid);
      return height === undefined ? null : this.mainnet.blockAt(height);
    }
    return this.blocks.find((b) => b.txs.some((t) => t.txid === txid)) ?? null;
  }

  // --- chain ---------------------------------------------------------------------------------------------------

  #mineOne(skip = new Set<string>()): Block {
    if (this.mainnet) throw new Error("a mainnetBlocks server serves a fixed chain: nothing is mined");
    const height = this.blocks.length;
    const parent = height === 0 ? GENESIS_PARENT : this.tipHash;
    // BIP34-style height push, and a nonce so that a re-mined height gets another coinbase txid.
    const coinbaseRaw = serializeV5(this.branchId, 0, [{
      prevHash: new Uint8Array(32),
      prevIndex: 0xffffffff,
      scriptSig: Uint8Array.of(4, ...u32le(height), 4, ...u32le(++this.#nonce)),
    }], [{ value: COINBASE_REWARD, script: this.#minerScript }]);
    const txs: ChainTx[] = [chainTx(coinbaseRaw)];
    const spent = new Set<string>();
    const utxos = this.utxos();
    for (const t of this.mempool.values()) {
      if (skip.has(t.txid) || this.#neverMined.has(t.txid)) {
        // Left out of this block; Zebra drops it from the mempool once it cannot be mined any more.
        if (t.tx.expiryHeight !== 0 && t.tx.expiryHeight <= height) this.mempool.delete(t.txid);
        continue;
      }
      const expired = t.tx.expiryHeight !== 0 && t.tx.expiryHeight < height;
      const keys = t.tx.inputs.map((i) => outpointKey(displayHash(i.prevHash), i.prevIndex));
      // Inputs spent elsewhere (after a reorg) make it invalid: dropped, like an expired one.
      const valid = this.#deposits.has(t.txid) || keys.every((k) => utxos.has(k) && !spent.has(k));
      if (!expired && valid) {
        txs.push(t);
        keys.forEach((k) => spent.add(k));
      }
      this.mempool.delete(t.txid);
    }
    const hash = toHex(sha256(sha256(new TextEncoder().encode(`${parent}/${height}/${++this.#nonce}`))));
    const block: Block = { hash, height, parent, time: 1_700_000_000 + height * 75, txs };
    this.blocks.push(block);
    return block;
  }

  // --- RPC -----------------------------------------------------------------------------------------------------

  async #handle(req: Request): Promise<Response> {
    if (req.headers.get("authorization") !== this.#auth) return new Response(null, { status: 401 });
    // Zebra's middleware sets application/json when the type is missing or text/plain; jsonrpsee refuses any other
    // (jsonrpsee 0.24 server/src/transport/http.rs `content_type_is_json`).
    const type = req.headers.get("content-type") ?? "application/json";
    if (!type.startsWith("application/json") && !type.startsWith("text/plain")) {
      return new Response("Supplied content type is not allowed", { status: 415 });
    }
    let body: unknown;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return Response.json(jsonrpseeError(null, PARSE_ERROR, "Parse error"));
    }
    const refused = refuseBatch(this.#limits, this.served, body);
    if (refused) return refused;
    if (Array.isArray(body)) {
      // A batch passes Zebra's middleware unchanged; jsonrpsee answers each entry that is not a 2.0 request with
      // -32600 and the entry's id (server/src/server.rs `handle_rpc_call`). An empty batch is one error object.
      if (body.length === 0) return Response.json(jsonrpseeError(null, INVALID_REQUEST, "Invalid request"));
      const answers = body.flatMap((entry) => {
        const call = jsonrpseeRequest(entry);
        if (call === "notification") return [];
        return [
          call === null
            ? jsonrpseeError(invalidRequestId(entry), INVALID_REQUEST, "Invalid request")
            : this.#call(call),
        ];
      });
      if (answers.length === 0) return new Response(null);
      const text = JSON.stringify(answers);
      if (text.length > this.#maxResponseBodySize) {
        const message = `The batch response was too large`;
        return this.#reply(JSON.stringify(jsonrpseeError(null, BATCH_RESPONSE_TOO_LARGE, message)));
      }
      return this.#reply(text);
    }
    // One request: Zebra rewrites a bitcoind or lightwalletd one to 2.0 and maps the answer back to that dialect.
    const dialect = zebraDialect(body);
    const forwarded = rewrittenTo2(body, dialect);
    const call = jsonrpseeRequest(forwarded);
    if (call === "notification") return new Response(null);
    // jsonrpsee's `prepare_error`: an invalid request with an id is -32600 with that id, one without is a parse error.
    const answer = call !== null
      ? this.#call(call)
      : isObject(forwarded) && isJsonRpcId(forwarded.id)
      ? jsonrpseeError(forwarded.id, INVALID_REQUEST, "Invalid request")
      : jsonrpseeError(null, PARSE_ERROR, "Parse error");
    const text = JSON.stringify(inDialect(dialect, answer));
    if (text.length > this.#maxResponseBodySize) {
      const id = "id" in answer ? answer.id : null;
      return this.#reply(
        JSON.stringify(inDialect(dialect, jsonrpseeError(id, OVERSIZED_RESPONSE, "Response is too big"))),
      );
    }
    return this.#reply(text);
  }

  /** An answer through the provider in front (its answer-size cap and its speed). */
  #reply(text: string): Response {
    return limitedJson(this.#limits, this.served, text);
  }

  /**
   * One call jsonrpsee accepted, through Zebra's `FixRpcResponseMiddleware` (zebra-rpc/src/server/
   * rpc_call_compatibility.rs): jsonrpsee's invalid-params code -32602 becomes zcashd's -1, the message kept.
   */
  #call(req: { id: JsonRpcId; method: string; params: unknown }): JsonRpcAnswer {
    this.calls.push(req.method);
    try {
      if (req.params !== undefined && !Array.isArray(req.params)) {
        throw new RpcFailure(INVALID_PARAMS, "Invalid params");
      }
      const result = this.#dispatch(req.method, req.params ?? []);
      const edit = this.tampered.get(req.method);
      return {
        jsonrpc: "2.0",
        result: edit ? edit(structuredClone(result), (req.params ?? []) as unknown[]) : result,
        id: req.id,
      };
    } catch (e) {
      const failure = e instanceof RpcFailure ? e : new RpcFailure(-1, e instanceof Error ? e.message : String(e));
      const code = failure.code === INVALID_PARAMS ? ZCASHD_MISC_ERROR : failure.code;
      return jsonrpseeError(req.id, code, failure.message);
    }
  }

  #dispatch(method: string, params: unknown[]): unknown {
    switch (method) {
      case "getblockchaininfo": {
        const hex = this.branchId.toString(16).padStart(8, "0");
        return {
          chain: this.network.name === "mainnet" ? "main" : "regtest",
          blocks: this.tipHeight,
          headers: this.tipHeight,
          bestblockhash: this.tipHash,
          upgrades: {},
          consensus: { chaintip: hex, nextblock: hex },
        };
      }
      case "getblockcount":
        return this.tipHeight;
      case "getbestblockhash":
        return this.tipHash;
      case "getblockhash": {
        const index = params[0];
        if (typeof index !== "number" || !Number.isInteger(index) || Math.abs(index) > 2 ** 31) {
          throw new RpcFailure(INVALID_PARAMS, "Invalid params"); // Zebra's `index: i32`
        }
        return this.#blockAt(this.#heightFromSignedInt(index))!.hash;
      }
      case "getblock":
        return this.#getBlock(params);
      case "getrawtransaction":
        return this.#getRawTransaction(params);
      case "getrawmempool":
        return [...this.mempool.keys()];
      case "sendrawtransaction":
        return this.#send(params);
      case "generate": {
        const n = params[0];
        if (typeof n !== "number" || !Number.isInteger(n) || n < 1) {
          throw new RpcFailure(INVALID_PARAMS, "Invalid params");
        }
        return this.mine(n);
      }
      case "getaddressutxos":
        return this.#addressUtxos(params);
      case "gettxout":
        // Zebra has no gettxout: this server says so the way Zebra does.
        throw new RpcFailure(METHOD_NOT_FOUND, "Method not found");
      default:
        throw new RpcFailure(METHOD_NOT_FOUND, "Method not found");
    }
  }

  /**
   * zebra-rpc `get_address_utxos`: the param is `{addresses: [..]}` (an AddressStrings map; an unparsable address is
   * invalid params); every best-chain unspent transparent output paying one of them, with its height, mempool ignored.
   */
  #addressUtxos(params: unknown[]): unknown {
    const arg = params[0] as { addresses?: unknown } | undefined;
    const addresses = arg?.addresses;
    if (!Array.isArray(addresses) || !addresses.every((a) => typeof a === "string")) {
      throw new RpcFailure(INVALID_PARAMS, "Invalid params");
    }
    const wanted = new Set(addresses as string[]);
    const unspent = this.utxos();
    const out: Record<string, unknown>[] = [];
    for (const b of this.blocks) {
      for (const t of b.txs) {
        t.tx.outputs.forEach((o, n) => {
          const address = scriptAddress(this.network, o.script);
          if (!address || !wanted.has(address) || !unspent.has(outpointKey(t.txid, n))) return;
          out.push({
            address,
            txid: t.txid,
            outputIndex: n,
            script: toHex(o.script),
            satoshis: Number(o.value),
            height: b.height,
          });
        });
      }
    }
    return out;
  }

  /**
   * zebra-rpc/src/methods.rs `height_from_signed_int` (after zcashd): -1 is the tip; a height above the tip is
   * jsonrpsee's invalid params, which `FixRpcResponseMiddleware` answers as -1 with this message.
   */
  #heightFromSignedInt(index: number): number {
    if (index >= 0) {
      if (index > this.tipHeight) {
        throw new RpcFailure(INVALID_PARAMS, "Provided index is greater than the current tip");
      }
      return index;
    }
    const height = this.tipHeight + index + 1;
    if (height < 0) throw new RpcFailure(INVALID_PARAMS, "Provided negative index ends up with a negative height");
    return height;
  }

  #getBlock(params: unknown[]): unknown {
    const [hashOrHeight, verbosity = 1] = params;
    if (typeof hashOrHeight !== "string") throw new RpcFailure(INVALID_PARAMS, "Invalid params");
    const byHeight = /^\d+$/.test(hashOrHeight);
    const height = byHeight
      ? Number(hashOrHeight)
      : this.mainnet
      ? this.mainnet.heightOf(hashOrHeight)
      : this.blocks.findIndex((b) => b.hash === hashOrHeight);
    const block = height === null || height < 0 ? undefined : this.#blockAt(height);
    // zebra-rpc/src/methods.rs `get_block_header`, which getblock reuses: zcashd's codes, -8 for a height and -5 for
    // a hash.
    if (!block) throw new RpcFailure(byHeight ? -8 : -5, "block height not in best chain");
    const base = {
      hash: block.hash,
      confirmations: this.tipHeight - block.height + 1,
      height: block.height,
      version: 4,
      time: block.time,
      ...(block.height > 0 ? { previousblockhash: block.parent } : {}),
      ...(block.height < this.tipHeight ? { nextblockhash: this.#blockAt(block.height + 1)!.hash } : {}),
    };
    if (verbosity === 1) return { ...base, tx: block.txs.map((t) => t.txid) };
    if (verbosity === 2) return { ...base, tx: block.txs.map((t) => this.#txObject(t, block)) };
    throw new RpcFailure(INVALID_PARAMS, "this Zebra-shaped server answers getblock with verbosity 1 or 2");
  }

  /** Zebra's TransactionObject (zebra-rpc/src/methods/types/transaction.rs). */
  #txObject(t: ChainTx | ShieldedTx, block: ServedBlock | null): Record<string, unknown> {
    if (isShielded(t)) {
      const { hex, ...rest } = t.object;
      return {
        in_active_chain: block !== null,
        hex,
        ...(block ? { height: block.height, confirmations: this.tipHeight - block.height + 1 } : {}),
        ...rest,
        ...(block ? { blockhash: block.hash, blocktime: block.time } : {}),
      };
    }
    const vin = t.tx.inputs.map((i) =>
      isCoinbase(t.tx) ? { coinbase: toHex(i.scriptSig), sequence: i.sequence } : {
        txid: displayHash(i.prevHash),
        vout: i.prevIndex,
        scriptSig: { asm: "", hex: toHex(i.scriptSig) },
        sequence: i.sequence,
      }
    );
    const vout = t.tx.outputs.map((o, n) => {
      const address = scriptAddress(this.network, o.script);
      return {
        // Zebra's `value` is a float of ZEC: present, as Zebra has it, and never to be read.
        value: Number(o.value) / 1e8,
        valueZat: Number(o.value),
        n,
        scriptPubKey: {
          asm: "",
          hex: toHex(o.script),
          reqSigs: address ? 1 : 0,
          type: "",
          addresses: address ? [address] : [],
        },
      };
    });
    return {
      in_active_chain: block !== null,
      hex: toHex(t.raw),
      ...(block ? { height: block.height, confirmations: this.tipHeight - block.height + 1 } : {}),
      vin,
      vout,
      vShieldedSpend: [],
      vShieldedOutput: [],
      valueBalance: 0.0,
      valueBalanceZat: 0,
      size: t.raw.length,
      txid: t.txid,
      overwintered: true,
      version: 5,
      versiongroupid: V5_VERSION_GROUP_ID.toString(16),
      locktime: t.tx.lockTime,
      expiryheight: t.tx.expiryHeight,
      ...(block ? { blockhash: block.hash, blocktime: block.time } : {}),
    };
  }

  #getRawTransaction(params: unknown[]): unknown {
    const [txid, verbosity = 0] = params;
    if (typeof txid !== "string" || !/^[0-9a-f]{64}$/.test(txid)) throw new RpcFailure(-5, "invalid TXID");
    const block = this.blockOf(txid);
    const t = block ? block.txs.find((x) => x.txid === txid)! : this.mempool.get(txid);
    if (!t) throw new RpcFailure(-5, "No such mempool or main chain transaction");
    if (verbosity === 0) return isShielded(t) ? t.object.hex : toHex(t.raw);
    return this.#txObject(t, block);
  }

  #send(params: unknown[]): string {
    const hex = params[0];
    if (typeof hex !== "string") throw new RpcFailure(-22, "TX decode failed");
    let raw: Uint8Array;
    let tx: ZecV5Tx;
    try {
      raw = fromHex(hex);
      // Zebra's own deserialiser is the reference; here the library and our ZIP-225 parser must both accept it.
      const lib = utxolib.bitgo.ZcashTransaction.fromBuffer<bigint>(
        Buffer.from(raw),
        false,
        "bigint",
        this.network.name === "mainnet" ? utxolib.networks.zcash : utxolib.networks.zcashTest,
      );
      if (lib.version !== 5) throw new Error(`version ${lib.version}`);
      tx = parseZecV5(raw);
    } catch (e) {
      throw new RpcFailure(-22, `TX decode failed: ${e instanceof Error ? e.message : e}`);
    }
    const txid = zecTxid(tx);
    if (this.mempool.has(txid)) throw new RpcFailure(-27, "transaction is already in the mempool");
    if (this.blockOf(txid)) throw new RpcFailure(-27, "transaction is already in the best chain");
    if (tx.consensusBranchId !== this.branchId) {
      throw new RpcFailure(
        -26,
        `transaction uses an incorrect consensus branch id: ${tx.consensusBranchId.toString(16)}, expected ` +
          this.branchId.toString(16),
      );
    }
    const nextHeight = this.tipHeight + 1;
    if (tx.expiryHeight !== 0 && tx.expiryHeight < nextHeight) {
      throw new RpcFailure(
        -26,
        `transaction must not be mined at a block Height(${nextHeight}), which is greater than its expiry ` +
          `Height(${tx.expiryHeight})`,
      );
    }
    if (tx.inputs.length === 0 || isCoinbase(tx)) throw new RpcFailure(-26, "transaction has no transparent inputs");
    const utxos = this.utxos();
    const spentInMempool = new Set(
      [...this.mempool.values()].flatMap((t) =>
        t.tx.inputs.map((i) => outpointKey(displayHash(i.prevHash), i.prevIndex))
      ),
    );
    const spent = tx.inputs.map((i, n) => {
      const key = outpointKey(displayHash(i.prevHash), i.prevIndex);
      if (spentInMempool.has(key)) {
        throw new RpcFailure(-26, `input ${n} (${key}) is already spent by a mempool transaction (duplicate spend)`);
      }
      const coin = utxos.get(key);
      if (!coin) throw new RpcFailure(-25, `input ${n} (${key}) is missing or spent in the best chain`);
      return coin;
    });
    tx.inputs.forEach((input, n) => this.#verifyP2pkh(tx, n, input.scriptSig, spent));
    const inTotal = spent.reduce((a, c) => a + c.value, 0n);
    const outTotal = tx.outputs.reduce((a, o) => a + o.value, 0n);
    if (outTotal > inTotal) throw new RpcFailure(-26, "transparent outputs are more than the inputs");
    const conventional = zip317ConventionalFee(tx);
    if (inTotal - outTotal < conventional) {
      throw new RpcFailure(
        -26,
        `transaction has unpaid actions: fee ${
          inTotal - outTotal
        } zats is below ZIP-317's conventional ${conventional}`,
      );
    }
    this.mempool.set(txid, { txid, raw, tx });
    return txid;
  }

  #verifyP2pkh(tx: ZecV5Tx, n: number, scriptSig: Uint8Array, spent: Coin[]): void {
    const fail = (why: string) => {
      throw new RpcFailure(-26, `input ${n}: script verification failed: ${why}`);
    };
    const script = spent[n].script;
    const isP2pkh = script.length === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[23] === 0x88 &&
      script[24] === 0xac;
    if (!isP2pkh) fail("this server spends P2PKH outputs only");
    const sigLen = scriptSig[0];
    if (sigLen === undefined || sigLen < 9 || sigLen > 73) fail("no signature push");
    const sig = scriptSig.subarray(1, 1 + sigLen);
    const pubLen = scriptSig[1 + sigLen];
    const pub = scriptSig.subarray(2 + sigLen);
    if (pubLen !== 33 || pub.length !== 33) fail("no compressed public key push");
    if (toHex(hash160(pub)) !== toHex(script.subarray(3, 23))) fail("public key does not match the output's hash");
    let digest: Uint8Array;
    try {
      digest = transparentSighash(tx, n, spent, sig[sig.length - 1]);
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
    let ok = false;
    try {
      ok = secp256k1.verify(sig.subarray(0, -1), digest, pub, { prehash: false, format: "der", lowS: true });
    } catch {
      ok = false;
    }
    if (!ok) fail("signature does not verify");
  }
}
