/**
 * A local JSON-RPC proxy (Deno.serve on 127.0.0.1) in front of a real node, for tests that need a node to misbehave
 * the way providers do: `answer` sees each request and either answers it itself or returns `undefined` to have it
 * forwarded unchanged; `filter` may rewrite a forwarded answer. Single requests only (viem's http transport does not
 * batch unless asked).
 */
export interface RpcRequest {
  id: unknown;
  method: string;
  params: unknown[];
}

export type ProxyAnswer = { status: number; body: string } | { result: unknown };

export interface RpcProxyOptions {
  /** An answer of its own for this request, or undefined to forward it. */
  answer?: (req: RpcRequest) => ProxyAnswer | undefined | Promise<ProxyAnswer | undefined>;
  /** Rewrites the node's result of a forwarded request. */
  filter?: (req: RpcRequest, result: unknown) => unknown;
}

export interface RpcProxy {
  url: string;
  /** Methods seen, in order. */
  methods: string[];
  close(): Promise<void>;
}

export function rpcProxy(upstream: string, opts: RpcProxyOptions = {}): RpcProxy {
  const methods: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const req = await request.json() as RpcRequest;
    methods.push(req.method);
    const own = await opts.answer?.(req);
    if (own && "status" in own) return new Response(own.body, { status: own.status });
    if (own) return json({ jsonrpc: "2.0", id: req.id, result: own.result });
    const res = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(req),
    });
    const body = await res.json() as { result?: unknown; error?: unknown };
    if (body.error === undefined && opts.filter) body.result = opts.filter(req, body.result);
    return json(body, res.status);
  });
  const { port } = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${port}`, methods, close: () => server.shutdown() };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/**
 * A node that lags: it pretends its head is `head` (while set) in front of a node that is further ahead. Its block
 * number and `latest` are `head`; blocks above it do not exist; its logs stop at it. Everything else is forwarded.
 */
export function laggingNode(upstream: string, initialHead: number) {
  const state = { head: initialHead as number | null };
  const hex = (n: number) => `0x${n.toString(16)}`;
  const above = (tag: unknown) => typeof tag === "string" && tag.startsWith("0x") && Number(BigInt(tag)) > state.head!;
  const proxy = rpcProxy(upstream, {
    answer: async (req) => {
      if (state.head === null) return undefined;
      if (req.method === "eth_blockNumber") return { result: hex(state.head) };
      if (req.method === "eth_getBlockByNumber") {
        const [tag, full] = req.params;
        if (tag === "latest" || tag === "pending") {
          const res = await fetch(upstream, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: req.method, params: [hex(state.head), full] }),
          });
          return { result: (await res.json()).result };
        }
        if (above(tag)) return { result: null };
      }
      return undefined;
    },
    filter: (req, result) => {
      if (state.head === null || req.method !== "eth_getLogs" || !Array.isArray(result)) return result;
      return result.filter((log: { blockNumber: string }) => !above(log.blockNumber));
    },
  });
  return { ...proxy, state };
}
