/**
 * `webhooks.verify()`: checks a delivery's `Webhook-Signature` exactly as docs/webhooks.md "Verifying the signature"
 * says: `v1` is the hex HMAC-SHA256 of `${t}.${rawBody}` keyed with the whole secret string (`whsec_...`, UTF-8); any
 * `v1` matching any secret you hold is accepted (the service signs with both during its 24-hour rotation window, and
 * you may hold the old and new secret while you deploy); `t` must be within `toleranceSec` of now. Web Crypto only,
 * so it runs unchanged on Deno, Node 18+, Bun and edge runtimes; `crypto.subtle.verify` compares in constant time.
 */

export type HeaderSource =
  | Headers
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signing time may be from now (seconds). */
  toleranceSec?: number;
  /** Now, in Unix seconds (tests inject it). */
  nowSec?: number;
}

export const SIGNATURE_HEADER = "webhook-signature";
export const DEFAULT_TOLERANCE_SEC = 300;

function header(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) {
      return Array.isArray(value) ? value.join(",") : value ?? null;
    }
  }
  return null;
}

const encoder = new TextEncoder();

function hexBytes(hex: string): Uint8Array | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  return Uint8Array.from(
    { length: 32 },
    (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16),
  );
}

/**
 * True when `rawBody` (the exact bytes received, before any JSON parsing) carries a valid signature by one of
 * `secrets`, signed within the tolerance. Never throws for a bad request: a malformed header is simply not valid.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeaderSource,
  secrets: string | readonly string[],
  opts: VerifyOptions = {},
): Promise<boolean> {
  const signature = header(headers, SIGNATURE_HEADER);
  if (!signature) return false;
  let t = NaN;
  const candidates: Uint8Array[] = [];
  for (const part of signature.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t" && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === "v1") {
      const bytes = hexBytes(value);
      if (bytes) candidates.push(bytes);
    }
  }
  const now = opts.nowSec ?? Math.floor(Date.now() / 1000);
  if (
    !Number.isSafeInteger(t) ||
    Math.abs(now - t) > (opts.toleranceSec ?? DEFAULT_TOLERANCE_SEC)
  ) return false;
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const prefix = encoder.encode(`${t}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  for (const secret of typeof secrets === "string" ? [secrets] : secrets) {
    const key = await crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    for (const candidate of candidates) {
      if (
        await crypto.subtle.verify(
          "HMAC",
          key,
          candidate as Uint8Array<ArrayBuffer>,
          signed,
        )
      ) return true;
    }
  }
  return false;
}
