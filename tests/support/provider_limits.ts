/**
 * What an RPC provider in front of a node does to big requests, for the test servers (the UTXO ones,
 * tests/support/bitcoin_core_server.ts and tests/support/zebra_rpc_server.ts, take all three; the rippled- and
 * Sui-GraphQL-shaped ones the answer's size and pace): the nodes themselves cap neither a
 * batch's length nor an answer's size below what a block scan asks (each server names its node's own limits), but
 * hosted endpoints do, each its own way. The same three behaviours as tests/support/solana_rpc_server.ts:
 * - `maxBatch`: a batch longer than this is refused with ONE JSON-RPC error object (-32600) instead of a list;
 * - `maxResponseBytes`: an answer longer than this is refused with HTTP 413 "response too large" (a text body);
 * - `bytesPerSecond`: the answer is sent no faster than this (a slow provider; a client's timeout may end it).
 */

export interface ProviderLimits {
  maxBatch?: number;
  maxResponseBytes?: number;
  bytesPerSecond?: number;
}

/** What a server answered and refused (tests assert that a refusal happened). */
export interface ProviderServed {
  requests: number;
  bytes: number;
  refused: number;
}

export const newServed = (): ProviderServed => ({ requests: 0, bytes: 0, refused: 0 });

/** The refusal of a batch above `maxBatch`, or null when the batch is allowed. */
export function refuseBatch(limits: ProviderLimits, served: ProviderServed, body: unknown): Response | null {
  if (limits.maxBatch === undefined || !Array.isArray(body) || body.length <= limits.maxBatch) return null;
  served.refused++;
  const message = `batch of ${body.length} requests is above this provider's limit of ${limits.maxBatch}`;
  return Response.json({ jsonrpc: "2.0", error: { code: -32600, message }, id: null });
}

const CHUNK = 64 * 1024;
const JSON_HEADERS = { "content-type": "application/json" };

/** A provider's refusal of an answer longer than `max` bytes: HTTP 413 with a text body. */
export function responseTooLarge(max: number): Response {
  return new Response(`response too large: above ${max} bytes`, { status: 413 });
}

/** `body` as a JSON answer, sent no faster than `bytesPerSecond` when set (a slow provider; a timeout may end it). */
export function jsonAt(body: string | Uint8Array<ArrayBuffer>, bytesPerSecond?: number): Response {
  if (!bytesPerSecond) return new Response(body, { headers: JSON_HEADERS });
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  let at = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (at >= bytes.length) return ctl.close();
      const part = bytes.subarray(at, at + CHUNK);
      at += part.length;
      await new Promise((r) => timer = setTimeout(r, (part.length / bytesPerSecond) * 1000));
      ctl.enqueue(part);
    },
    cancel() {
      clearTimeout(timer);
    },
  });
  return new Response(stream, { headers: JSON_HEADERS });
}

/** `text` as a JSON answer under the limits: 413 when too long, else sent at `bytesPerSecond` when set. */
export function limitedJson(limits: ProviderLimits, served: ProviderServed, text: string): Response {
  if (limits.maxResponseBytes !== undefined && text.length > limits.maxResponseBytes) {
    served.refused++;
    return responseTooLarge(limits.maxResponseBytes);
  }
  served.requests++;
  served.bytes += text.length;
  return jsonAt(text, limits.bytesPerSecond);
}
