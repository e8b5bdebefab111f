/**
 * The access token (spec 5): exchanged for the API key at `POST {auth_url}/token`, kept, and renewed with
 * `POST {auth_url}/token/refresh` before it expires. The API key and the token stay in private fields: they are never
 * logged, never in an error message and never shown by `console.log(client)`.
 */
import { apiErrorOf } from "./errors.ts";
import type { paths } from "./openapi.generated.ts";

type TokenResponse = paths["/auth/token"]["post"]["responses"][200]["content"]["application/json"];

export interface TokenSourceOptions {
  /** `{auth_url}` of the spec: where `/token` and `/token/refresh` are. */
  authUrl: string;
  apiKey: string;
  walletAddress: string;
  /** The client's transport (Idempotency-Key and retries; no token on these routes). */
  fetch: (input: Request) => Promise<Response>;
  /** Milliseconds since the epoch (tests inject a clock). */
  now: () => number;
  /** Renew when less than this is left (ms). */
  refreshBeforeMs: number;
}

export class TokenSource {
  readonly #o: TokenSourceOptions;
  #current: TokenResponse | null = null;
  #inFlight: Promise<string> | null = null;

  constructor(o: TokenSourceOptions) {
    this.#o = o;
  }

  /** The token to send now: a new one the first time, a renewed one once it is within `refreshBeforeMs` of expiry. */
  token(opts: { refresh?: boolean } = {}): Promise<string> {
    const c = this.#current;
    const due = c === null || opts.refresh ||
      this.#o.now() >= c.expiresAt * 1000 - this.#o.refreshBeforeMs;
    if (!due) return Promise.resolve(c.token);
    // One exchange at a time: concurrent calls share it.
    this.#inFlight ??= this.#exchange(c === null ? "/token" : "/token/refresh")
      .finally(() => this.#inFlight = null);
    return this.#inFlight;
  }

  /** When the current token expires (ms since the epoch), or null before the first exchange. */
  get expiresAtMs(): number | null {
    return this.#current === null ? null : this.#current.expiresAt * 1000;
  }

  async #exchange(path: "/token" | "/token/refresh"): Promise<string> {
    const url = `${this.#o.authUrl.replace(/\/+$/, "")}${path}`;
    const res = await this.#o.fetch(
      new Request(url, {
        method: "POST",
        headers: {
          "X-API-Key": this.#o.apiKey,
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ walletAddress: this.#o.walletAddress }),
      }),
    );
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      throw apiErrorOf(res.status, body, `POST ${new URL(url).pathname}`);
    }
    this.#current = body as TokenResponse;
    return this.#current.token;
  }

  toJSON() {
    return {
      walletAddress: this.#o.walletAddress,
      expiresAtMs: this.expiresAtMs,
    };
  }
}
