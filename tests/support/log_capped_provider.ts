/**
 * An RPC provider in front of a real node (anvil), capping `eth_getLogs` the way hosted providers do
 * (chains/evm/log_range.ts quotes each one's answer): above `maxRange` blocks it answers Infura's live
 * `-32602 "range N exceeds limit of M"`; above `maxResults` logs Infura's documented `-32005 "query returned more
 * than M results"`, or with `suggestRange` Alchemy's `"Log response size exceeded ... this block range should work:
 * [0x.., 0x..]"` naming the longest prefix of the span that fits; above `maxResponseBytes` of answer an HTTP 413 with
 * no JSON-RPC body, as a gateway does; and with `bytesPerSecond` every answer is streamed at that rate (a slow
 * provider). Every other request, and every answer within the caps, is the node's own, byte for byte.
 *
 * The caps apply to what the node answered for the request, never to how our client asked: a span is the request's
 * `toBlock - fromBlock + 1` (tags resolved by the node's `eth_blockNumber`), a result count the node's log count.
 */
export interface LogCaps {
  maxRange?: number;
  maxResults?: number;
  /** With `maxResults`: answer Alchemy's message with a suggested range instead of Infura's. */
  suggestRange?: boolean;
  maxResponseBytes?: number;
  bytesPerSecond?: number;
}

export interface LogCappedProvider {
  url: string;
  /** What it answered: requests per method, refusals per kind, answer bytes sent. */
  counts: { requests: Record<string, number>; refused: Record<string, number>; bytes: number };
  close(): Promise<void>;
}

interface Req {
  jsonrpc: string;
  id: unknown;
  method: string;
  params?: unknown[];
}

export function logCappedProvider(upstream: string, caps: LogCaps): LogCappedProvider {
  const counts = { requests: {} as Record<string, number>, refused: {} as Record<string, number>, bytes: 0 };
  const forward = async (body: string) => {
    const res = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body });
    return { status: res.status, text: await res.text() };
  };
  const refuse = (kind: string, status: number, body: string) => {
    counts.refused[kind] = (counts.refused[kind] ?? 0) + 1;
    return { status, text: body };
  };
  const rpcError = (id: unknown, code: number, message: string) =>
    JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });

  async function answer(raw: string): Promise<{ status: number; text: string }> {
    const req = JSON.parse(raw) as Req;
    counts.requests[req.method] = (counts.requests[req.method] ?? 0) + 1;
    if (req.method !== "eth_getLogs") return await forward(raw);
    const filter = (req.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
    const from = await blockOf(filter.fromBlock);
    const to = await blockOf(filter.toBlock);
    const span = to - from + 1;
    if (caps.maxRange !== undefined && span > caps.maxRange) {
      return refuse("range", 200, rpcError(req.id, -32602, `range ${span} exceeds limit of ${caps.maxRange}`));
    }
    const node = await forward(raw);
    if (caps.maxResults !== undefined) {
      const logs = (JSON.parse(node.text) as { result?: { blockNumber: string }[] }).result ?? [];
      if (logs.length > caps.maxResults) {
        if (!caps.suggestRange) {
          return refuse(
            "results",
            200,
            rpcError(req.id, -32005, `query returned more than ${caps.maxResults} results`),
          );
        }
        // The longest prefix of the span whose logs fit (Alchemy names one; a single over-full block is named alone).
        const cut = Number(BigInt(logs[caps.maxResults].blockNumber));
        const end = Math.max(from, cut - 1);
        return refuse(
          "results",
          200,
          rpcError(
            req.id,
            -32602,
            "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit " +
              "on the response size, or you can request any block range with a cap of 10K logs in the response. " +
              `Based on your parameters, this block range should work: [0x${from.toString(16)}, 0x${end.toString(16)}]`,
          ),
        );
      }
    }
    if (caps.maxResponseBytes !== undefined && node.text.length > caps.maxResponseBytes) {
      return refuse("bytes", 413, "Request Entity Too Large");
    }
    return node;
  }

  async function blockOf(tag: string | undefined): Promise<number> {
    if (tag !== undefined && tag.startsWith("0x")) return Number(BigInt(tag));
    const { text } = await forward(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] }));
    return Number(BigInt((JSON.parse(text) as { result: string }).result));
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const { status, text } = await answer(await request.text());
    counts.bytes += text.length;
    const headers = { "content-type": status === 200 ? "application/json" : "text/plain" };
    const body = caps.bytesPerSecond ? paced(text, caps.bytesPerSecond) : text;
    return new Response(body, { status, headers });
  });
  const { port } = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${port}`, counts, close: () => server.shutdown() };
}

/** `text` as a stream of 16 KiB chunks, each sent when `bytesPerSecond` allows it. */
function paced(text: string, bytesPerSecond: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const chunk = 16 * 1024;
  let at = 0;
  return new ReadableStream({
    async pull(ctl) {
      if (at >= bytes.length) return ctl.close();
      const part = bytes.subarray(at, at + chunk);
      at += part.length;
      await new Promise((r) => setTimeout(r, (part.length / bytesPerSecond) * 1000));
      ctl.enqueue(part);
    },
  });
}
