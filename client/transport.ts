/**
 * The one `fetch` every call of the client goes through (openapi-fetch is given it): the access token on partner
 * routes, an `Idempotency-Key` on every POST (docs/idempotency.md), and bounded retries with jitter on network errors
 * and 5xx (spec 7: "retry 5xx with exponential backoff"), each retry the same request with the same key, so a POST
 * that reached the service before its answer was lost runs once.
 */
import { TransportError } from "./errors.ts";

export interface RetryPolicy {
  /** Attempts in all, the first included (1: no retry). */
  attempts: number;
  /** The first retry waits up to this (ms); each further one up to twice as long, capped at `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
};

export interface TransportOptions {
  fetch: typeof fetch;
  retry: RetryPolicy;
  /** Waits between attempts (tests pass one that records instead of sleeping). */
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** The access token for `needsToken` requests; `refresh: true` after the service answered 401. */
  token?: (opts: { refresh: boolean }) => Promise<string>;
  needsToken: (url: URL) => boolean;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Full jitter: uniformly random up to the exponential bound, so many clients retrying never move in step. */
export function backoffMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number,
): number {
  return Math.floor(
    random() *
      Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1)),
  );
}

/**
 * 5xx: the service failed or was unavailable and keeps no idempotent answer for it, so the same request runs again.
 * 409 on a keyed POST: the first attempt is still running (docs/idempotency.md); asking again later gets its answer.
 */
function retryable(status: number, keyed: boolean): boolean {
  return status >= 500 || (keyed && status === 409);
}

export function transportFetch(
  o: TransportOptions,
): (input: Request) => Promise<Response> {
  return async (input: Request) => {
    const url = new URL(input.url);
    const method = input.method.toUpperCase();
    const body = input.body === null ? undefined : await input.arrayBuffer(); // sent again, byte for byte, on a retry
    const headers = new Headers(input.headers);
    if (method === "POST" && !headers.has("Idempotency-Key")) {
      headers.set("Idempotency-Key", crypto.randomUUID());
    }
    const keyed = headers.has("Idempotency-Key");
    const withToken = o.needsToken(url) && o.token !== undefined;
    let refreshed = false;
    for (let attempt = 1;; attempt++) {
      if (withToken) {
        headers.set(
          "Authorization",
          `Bearer ${await o.token!({ refresh: false })}`,
        );
      }
      let res: Response;
      try {
        res = await o.fetch(
          new Request(url, { method, headers, body, signal: input.signal }),
        );
      } catch (err) {
        if (input.signal?.aborted) throw err;
        if (attempt >= o.retry.attempts) {
          throw new TransportError(
            `${method} ${url.pathname}: no answer after ${attempt} attempts`,
            err,
          );
        }
        await o.sleep(backoffMs(o.retry, attempt, o.random));
        continue;
      }
      // A token the service no longer takes (expired, or its clock ahead of ours): one refresh, then as answered.
      if (res.status === 401 && withToken && !refreshed) {
        refreshed = true;
        await res.body?.cancel();
        await o.token!({ refresh: true });
        attempt--;
        continue;
      }
      if (retryable(res.status, keyed) && attempt < o.retry.attempts) {
        await res.body?.cancel();
        await o.sleep(backoffMs(o.retry, attempt, o.random));
        continue;
      }
      return res;
    }
  };
}
