/**
 * A viem public client per EVM chain over several RPC URLs, and the one place that decides which RPC failures are
 * transient. viem's own retries are off by default: failing over to the next URL is the only retry inside a call, and
 * the pipeline's backoff (it reschedules on `TransientChainError`) decides when to try again.
 *
 * Failover picks a node per call, so two calls in a row may be answered by nodes at different heights. Reads that
 * must agree with each other (a log scan and the headers that vouch for it) use `nodes`: one client per URL, same
 * order, each talking to its node alone.
 */
import {
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  defineChain,
  ExecutionRevertedError,
  fallback,
  http,
  HttpRequestError,
  type PublicClient,
  RpcRequestError,
  TimeoutError,
  type Transport,
} from "viem";
import { type RpcFailureReason, type RpcHook, TransientChainError } from "../adapter.ts";
import { type ByteMeter, httpFailure } from "../shared/http_failover.ts";
import { redactedError, redactUrls } from "../shared/redact.ts";
import { EVM, type EvmChain } from "../catalog.ts";

export type EvmNodeClient = PublicClient<Transport, Chain>;

export type EvmClient = EvmNodeClient & {
  /** One client per URL, in the order of preference; absent on a client built outside `evmClient`. */
  readonly nodes?: readonly EvmNodeClient[];
  /**
   * What each of `nodes` received (`meters[i]` for `nodes[i]`): answer bytes as read off the wire, so a scan bounds
   * itself by what it read (docs/scan-budget.md, "EVM log ranges"). The node clients have transports of their own, so
   * the minter's calls through failover never count here.
   */
  readonly meters?: readonly ByteMeter[];
};

/**
 * The largest answer a node client reads (viem's `maxResponseBodySize`, whose default this is): a bigger one fails
 * with `ResponseBodyTooLargeError` before it is parsed, and a log scan asks again for fewer blocks.
 */
export const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

export interface EvmClientOptions {
  chain: EvmChain;
  /** RPC URLs in order of preference; a failing URL hands the call to the next one. */
  urls: readonly string[];
  /** Chain id the client signs and checks for; the catalog's unless overridden (a local test node). */
  chainId?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** viem-level retries of a whole failover round; 0 leaves retrying to the caller's backoff. */
  retryCount?: number;
  /** Called once per JSON-RPC request sent (metrics, tests counting calls); `failed` per request a URL failed. */
  onRpc?: RpcHook;
}

export function evmClient(opts: EvmClientOptions): EvmClient {
  if (opts.urls.length === 0) throw new Error(`${opts.chain}: no RPC URL configured`);
  const info = EVM[opts.chain];
  const chain = defineChain({
    id: opts.chainId ?? info.chainId,
    name: info.name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [...opts.urls] } },
  });
  const onRpc = opts.onRpc;
  const transportOf = (url: string, meter?: ByteMeter) =>
    redactingTransport(http(url, {
      retryCount: 0,
      timeout: opts.timeoutMs ?? 10_000,
      maxResponseBodySize: MAX_ANSWER_BYTES,
      onFetchRequest: onRpc ? (_req, init) => reportRpc(onRpc, url, init.body) : undefined,
      fetchFn: metered(meter, onRpc?.failed ? reportFailures(onRpc.failed, url) : undefined),
    }));
  const transports = opts.urls.map((url) => transportOf(url));
  const meters: ByteMeter[] = opts.urls.map(() => ({ bytes: 0 }));
  // Tips and block numbers are read fresh: confirmations and reorg checks must not see a cached height.
  const nodes = opts.urls.map((url, i) =>
    createPublicClient({ chain, transport: transportOf(url, meters[i]), cacheTime: 0 })
  );
  return createPublicClient({
    chain,
    transport: fallback(transports, { retryCount: opts.retryCount ?? 0, retryDelay: 100 }),
    cacheTime: 0,
  }).extend(() => ({ nodes, meters }));
}

type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `inner` (the global `fetch`, looked up at each call, when absent) whose answers credit `meter` with their bytes as
 * the caller reads them; nothing is buffered here.
 */
function metered(meter: ByteMeter | undefined, inner: FetchFn | undefined): FetchFn | undefined {
  if (!meter) return inner;
  return async (input, init) => {
    const res = await (inner ?? fetch)(input, init);
    if (!res.body) return res;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          meter.bytes += chunk.byteLength;
          ctl.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * `transport` whose every failure leaves redacted (chains/shared/redact.ts `redactedError`): viem quotes the URL, path
 * and query included, in the errors its HTTP transport raises (`RpcRequestError`, `HttpRequestError`,
 * `TimeoutError`), and every error viem builds above them copies those texts. Redacted here, at the one place they are
 * raised, no caller of the client can store or show a provider's key; the original stays as `cause`.
 */
export function redactingTransport<T extends Transport>(transport: T): T {
  return ((params: Parameters<T>[0]) => {
    const built = transport(params);
    const request = built.request;
    return {
      ...built,
      request: async (...args: Parameters<typeof request>) => {
        try {
          return await request(...args);
        } catch (err) {
          throw redactedError(err);
        }
      },
    };
  }) as T;
}

function reportRpc(onRpc: (info: { url: string; method: string }) => void, url: string, body: unknown) {
  try {
    const parsed = JSON.parse(String(body));
    for (const req of Array.isArray(parsed) ? parsed : [parsed]) onRpc({ url, method: String(req?.method) });
  } catch {
    onRpc({ url, method: "?" });
  }
}

/**
 * viem's fetch for one URL, reporting each request that URL failed: no answer, a timeout (viem aborts the request's
 * signal), or an HTTP error status. A JSON-RPC error answered with 200 is the node's answer, not a failure.
 */
function reportFailures(failed: NonNullable<RpcHook["failed"]>, url: string) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const report = (reason: RpcFailureReason) => reportRpc((i) => failed({ ...i, reason }), url, init?.body);
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (err) {
      report(init?.signal?.aborted ? "timeout" : "network");
      throw err;
    }
    if (!res.ok) report(httpFailure(res.status, "http"));
    return res;
  };
}

/** Refuses to run against a node of another chain: a wrong URL in config must not sign or scan anything. */
/**
 * Refuses to run against a node of another chain: a wrong URL in config must not sign or scan anything. Every URL is
 * asked on its own, since failover would answer from the first node that works and hide a backup that serves another
 * chain (whose logs a scan could later read). A node that does not answer now is tolerated while another one proves the
 * chain; none answering is an error, as a wrong id is.
 */
export async function assertChainId(client: EvmClient, expected: number, chain?: EvmChain): Promise<void> {
  const name = chain ?? client.chain?.name ?? "EVM chain";
  const nodes = client.nodes ?? [client];
  let proven = false;
  let unreachable: unknown;
  for (const [i, node] of nodes.entries()) {
    let actual: number;
    try {
      actual = await rpc(chain ?? "evm", "eth_chainId", () => node.getChainId());
    } catch (err) {
      if (!(err instanceof TransientChainError)) throw err;
      unreachable ??= err;
      continue;
    }
    if (actual !== expected) {
      const which = nodes.length > 1 ? ` (RPC URL ${i + 1} of ${nodes.length}, ${redactUrls(node.transport.url)})` : "";
      throw new Error(`${name}: RPC reports chain id ${actual}, expected ${expected}${which}; refusing to use it`);
    }
    proven = true;
  }
  if (!proven) throw unreachable;
}

/** JSON-RPC error codes that mean "later", not "never": rate limits, overload, internal node trouble. */
const TRANSIENT_CODES = new Set([-32005, -32007, -32002, -32603, 429, -1]);
const TRANSIENT_MESSAGE = /rate limit|too many requests|header not found|timeout|timed out|busy|unavailable|try again/i;
const NETWORK_MESSAGE = /fetch failed|error sending request|connection (refused|reset|closed)|network|ECONN|EOF/i;

/** True when retrying the same call later may succeed. Contract reverts never are. */
export function isTransientRpcError(err: unknown): boolean {
  if (err instanceof TransientChainError) return true;
  if (!(err instanceof BaseError)) return err instanceof Error && NETWORK_MESSAGE.test(err.message);
  const revert = err.walk((e) =>
    e instanceof ContractFunctionRevertedError || e instanceof ExecutionRevertedError ||
    (e instanceof Error && ExecutionRevertedError.nodeMessage.test(e.message))
  );
  if (revert) return false;
  return err.walk((e) => {
    if (e instanceof HttpRequestError || e instanceof TimeoutError) return true;
    if (e instanceof RpcRequestError && e.status !== undefined && (e.status >= 500 || e.status === 429)) return true;
    const code = (e as { code?: unknown } | null)?.code;
    if (typeof code === "number" && TRANSIENT_CODES.has(code)) return true;
    if (code === -32000 && e instanceof Error && TRANSIENT_MESSAGE.test(e.message)) return true;
    return false;
  }) !== null;
}

/**
 * Short description of an RPC failure for logs and order notes. URLs keep only their origin: providers put API keys
 * in the path or query.
 */
export function describeRpcError(err: unknown): string {
  const text = err instanceof BaseError
    ? (err.details ? `${err.shortMessage} (${err.details})` : err.shortMessage)
    : err instanceof Error
    ? err.message
    : String(err);
  return redactUrls(text);
}

/**
 * Runs one RPC-backed step, turning transient failures into `TransientChainError`; anything else is rethrown as it
 * came, already redacted by the client's transports (`redactingTransport`).
 */
export async function rpc<T>(chain: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof TransientChainError) throw err;
    if (isTransientRpcError(err)) {
      throw new TransientChainError(`${chain}: ${what}: ${describeRpcError(err)}`, { cause: err });
    }
    throw err;
  }
}
