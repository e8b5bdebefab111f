/**
 * Access tokens (spec 2.7, 5): RS256 JWTs bound to one EVM wallet, issued from an API key, and the middleware that
 * checks them on every partner endpoint. Only RS256 with our key is accepted; `alg: none`, HS256 (including the
 * classic "HMAC with the public key" forgery) and every other algorithm are refused before any claim is read.
 */
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { MiddlewareHandler } from "hono";
import type { JwtKeys } from "../config/secrets.ts";
import { apiKeyKey, type ApiKeyRecord, isUsable } from "../kv/api_keys.ts";
import {
  isUsableJwtKey,
  jwtKeyKey,
  type JwtKeyRecord,
  KID_PATTERN,
  listJwtKeys,
  recordSigningKey,
  RetiredSigningKeyError,
  SIGNING_RECORD_INTERVAL_MS,
  TOKEN_LIFETIME_SECONDS,
} from "../kv/jwt_keys.ts";
import { type UserWallet, userWalletKey } from "../kv/user_wallets.ts";
import { API_ERRORS } from "../messages.ts";
import { type ApiError, apiError } from "./errors.ts";

/** Re-exported: the one definition is kv/jwt_keys.ts, next to the JWKS window it decides. */
export { TOKEN_LIFETIME_SECONDS };

export interface TokenSettings {
  /** The key this process signs with. */
  keys: JwtKeys;
  /** Every recorded key's public half, by `kid`, for verification (kv/jwt_keys.ts). */
  ring: JwtKeyRing;
  issuer: string;
  audience: string;
  claimNamespace: string;
}

export interface AuthVariables {
  /** The caller's wallet: the token's `sub`, lowercase. */
  wallet: string;
  partnerId: string;
  /** Entries a route asked the gate to read in the same snapshot as the wallet (see `requireJwt`). */
  prefetched: Deno.KvEntryMaybe<unknown>[];
}

export const AUTH_ERRORS = {
  missingHeader: () => apiError(API_ERRORS.missingAuthorization),
  unreadable: () => apiError(API_ERRORS.invalidToken),
  expired: () => apiError(API_ERRORS.tokenExpired),
  badSignature: () => apiError(API_ERRORS.invalidSignature),
  inactive: () => apiError(API_ERRORS.walletNotActive),
  /** The wallet is owned by a partner other than the caller's key or token (or was moved away from it). */
  otherPartner: () => apiError(API_ERRORS.walletOfAnotherPartner),
};

/** Signs a token for `wallet` (any case; `sub` is lowercase). The key id rides along so revoking a key ends its tokens. */
export async function issueToken(
  s: TokenSettings,
  wallet: string,
  partnerId: string,
  keyId: string,
  now = new Date(),
): Promise<{ token: string; expiresAt: number }> {
  // Checked before signing: a process whose key an operator retired hands out no token that would be refused.
  await s.ring.beforeSigning(now);
  const sub = wallet.toLowerCase();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + TOKEN_LIFETIME_SECONDS;
  const token = await new SignJWT({
    verified_credentials: [{ address: sub }],
    azp: partnerId,
    [`${s.claimNamespace}/partner_id`]: partnerId,
    [`${s.claimNamespace}/type`]: "B2B",
    [`${s.claimNamespace}/key_id`]: keyId,
  })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: s.keys.publicJwk.kid })
    .setIssuer(s.issuer)
    .setAudience(s.audience)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(s.keys.privateKey);
  return { token, expiresAt: exp };
}

export interface VerifiedToken {
  wallet: string;
  partnerId: string;
  keyId: string;
  /** The signing key's `kid`: the gate reads its record on every request, so retiring it ends the token at once. */
  kid: string;
}

/** Checks signature, algorithm, expiry, issuer, audience and the `sub`/credentials binding. Throws ApiError. */
export async function verifyToken(s: TokenSettings, token: string, now = new Date()): Promise<VerifiedToken> {
  let header: { alg?: string; kid?: unknown };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw AUTH_ERRORS.unreadable();
  }
  if (header.alg !== "RS256") throw AUTH_ERRORS.badSignature();
  // Every token we ever issued names its key; one naming no key, or a key never recorded on this KV, is not ours.
  const kid = header.kid;
  const publicKey = typeof kid === "string" ? await s.ring.verificationKey(kid) : null;
  if (publicKey === null) throw AUTH_ERRORS.badSignature();
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, publicKey, {
      algorithms: ["RS256"],
      issuer: s.issuer,
      audience: s.audience,
      requiredClaims: ["sub", "exp", "iat"],
      currentDate: now,
    }));
  } catch (err) {
    throw mapJoseError(err);
  }
  const sub = payload.sub;
  const credentials = payload.verified_credentials;
  const bound = typeof sub === "string" && sub === sub.toLowerCase() && Array.isArray(credentials) &&
    credentials.some((c) => typeof c?.address === "string" && c.address.toLowerCase() === sub);
  if (!bound) throw AUTH_ERRORS.badSignature();
  const partnerId = payload[`${s.claimNamespace}/partner_id`];
  const keyId = payload[`${s.claimNamespace}/key_id`];
  if (typeof partnerId !== "string" || typeof keyId !== "string") throw AUTH_ERRORS.unreadable();
  return { wallet: sub, partnerId, keyId, kid: kid as string };
}

function mapJoseError(err: unknown): ApiError {
  if (err instanceof joseErrors.JWTExpired) return AUTH_ERRORS.expired();
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JOSEAlgNotAllowed) {
    return AUTH_ERRORS.badSignature();
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed && (err.claim === "iss" || err.claim === "aud")) {
    // A token minted for another issuer or audience is treated as a forgery (spec 5: "wrong issuer").
    return AUTH_ERRORS.badSignature();
  }
  return AUTH_ERRORS.unreadable();
}

/**
 * Tokens whose signature and fixed claims already verified, so a polling partner costs one RSA check, not one per
 * request. Only what cannot change for the same token bytes is cached: `exp` is compared on every use, and the
 * wallet, the API key and the signing key's record (retired or not) are read from KV on every request.
 */
export class VerifiedTokenCache {
  readonly #tokens = new Map<string, { verified: VerifiedToken; exp: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  /** The token's claims if it verified before and has not expired since (throws if it has); undefined if unknown. */
  cached(token: string, now = Date.now()): VerifiedToken | undefined {
    const hit = this.#tokens.get(token);
    if (hit === undefined) return undefined;
    if (hit.exp * 1000 <= now) {
      this.#tokens.delete(token);
      throw AUTH_ERRORS.expired();
    }
    return hit.verified;
  }

  async verify(s: TokenSettings, token: string, now = new Date()): Promise<VerifiedToken> {
    const hit = this.cached(token, now.getTime());
    if (hit) return hit;
    const verified = await verifyToken(s, token, now);
    const exp = decodeJwt(token).exp!;
    this.#tokens.set(token, { verified, exp });
    if (this.#tokens.size > this.maxEntries) this.#tokens.delete(this.#tokens.keys().next().value!);
    return verified;
  }
}

/**
 * The `Authorization: Bearer` gate: a valid token, a usable issuing key, a wallet still owned by the token's partner
 * and active, in that order (ownership first, so another partner learns nothing of the wallet's state).
 * The signing key's record rides in the same read, so a key an operator retired refuses its tokens, cached or not,
 * in every process from the next request on, at no extra KV round trip (kv/jwt_keys.ts).
 * `prefetch` names keys of the caller's own data that the route will read first; they ride in the gate's single
 * KV read, since on a busy server the KV round trip, not the CPU, is what a request waits for. Concurrent requests
 * of the same wallet and key share that read (`CoalescedReads`) when it started after they arrived: every check still
 * runs on every request against state read after the request came in.
 */
export function requireJwt(
  kv: Deno.Kv,
  s: TokenSettings,
  opts: { prefetch?: (wallet: string) => Deno.KvKey[]; cache?: VerifiedTokenCache } = {},
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const prefetch = opts.prefetch ?? (() => []);
  const cache = opts.cache ?? new VerifiedTokenCache();
  const reads = new CoalescedReads(kv);
  return async (c, next) => {
    const header = c.req.header("Authorization");
    if (header === undefined || header.trim() === "") throw AUTH_ERRORS.missingHeader();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw AUTH_ERRORS.unreadable();
    const verified = cache.cached(match[1]) ?? await cache.verify(s, match[1]);
    const [wallet, key, signingKey, ...prefetched] = await reads.getMany(
      `${verified.wallet}|${verified.keyId}|${verified.kid}`,
      () => [
        userWalletKey(verified.wallet),
        apiKeyKey(verified.keyId),
        jwtKeyKey(verified.kid),
        ...prefetch(verified.wallet),
      ],
    ) as [
      Deno.KvEntryMaybe<UserWallet>,
      Deno.KvEntryMaybe<ApiKeyRecord>,
      Deno.KvEntryMaybe<JwtKeyRecord>,
      ...Deno.KvEntryMaybe<unknown>[],
    ];
    // A retired signing key ends its tokens as a revoked API key does (spec 5: 401 `Invalid or expired token`).
    if (!isUsableJwtKey(signingKey.value)) throw AUTH_ERRORS.unreadable();
    if (!isUsable(key.value)) throw AUTH_ERRORS.unreadable();
    if (wallet.value && wallet.value.partnerId !== verified.partnerId) throw AUTH_ERRORS.otherPartner();
    if (wallet.value?.status !== "active") throw AUTH_ERRORS.inactive();
    c.set("wallet", verified.wallet);
    c.set("partnerId", verified.partnerId);
    c.set("prefetched", prefetched);
    await next();
  };
}

/**
 * Concurrent reads of the same keys, shared: a request joins a read only if that read starts after the request
 * arrived, so it sees every write committed before it came in (a partner reads its own writes, from this process or
 * any other on the same KV) and every revocation or deactivation. Per group, at most one read runs; requests arriving
 * while it runs wait for the next one, which starts when it ends and serves them all. Under load a burst of polls of
 * one wallet costs one KV read instead of one each; alone, a request waits for exactly one read, as before.
 */
export class CoalescedReads {
  readonly #groups = new Map<
    string,
    { running: Promise<Deno.KvEntryMaybe<unknown>[]> | null; next: Promise<Deno.KvEntryMaybe<unknown>[]> | null }
  >();

  constructor(private readonly kv: Deno.Kv) {}

  /** `group` names the keys `keys()` returns: equal groups must mean equal keys. */
  getMany(group: string, keys: () => Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    let g = this.#groups.get(group);
    if (!g) this.#groups.set(group, g = { running: null, next: null });
    if (!g.running) return this.#start(group, g, keys());
    const state = g;
    return g.next ??= g.running.then(noop, noop).then(() => {
      state.next = null;
      return this.#start(group, state, keys());
    });
  }

  #start(
    group: string,
    g: { running: Promise<Deno.KvEntryMaybe<unknown>[]> | null; next: Promise<unknown> | null },
    keys: Deno.KvKey[],
  ) {
    const read: Promise<Deno.KvEntryMaybe<unknown>[]> = this.kv.getMany(keys).finally(() => {
      if (g.running === read) g.running = null;
      if (g.running === null && g.next === null && this.#groups.get(group) === g) this.#groups.delete(group);
    });
    g.running = read;
    return read;
  }
}

const noop = () => {};

/**
 * The public keys tokens may be signed with, by `kid`: this process's own, and every key recorded on the KV
 * (kv/jwt_keys.ts), so a token of any process in a rolling restart verifies here. A `kid`'s public key never changes
 * (the kid is its thumbprint), so a key once read is kept for the process's life; whether it is retired is not kept
 * here but read by the gate on every request.
 *
 * A `kid` not known yet is looked up in a listing of the keys that started after the request arrived (so a key
 * recorded before its first token was signed is always found), and listings start at least `minListGapMs` apart
 * (default 1 s): tokens naming made-up kids cost at most one KV listing per second per process, and wait for it.
 */
export class JwtKeyRing {
  readonly #keys = new Map<string, CryptoKey>();
  #lastListStart = -Infinity;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  #signRecordedAt = -Infinity;

  constructor(
    private readonly kv: Deno.Kv,
    readonly signing: JwtKeys,
    private readonly minListGapMs = 1000,
  ) {
    this.#keys.set(signing.publicJwk.kid, signing.publicKey);
  }

  /** Records this process's key (at start): refuses, with `RetiredSigningKeyError`, a key an operator retired. */
  async recordSigningKey(now = new Date()): Promise<void> {
    await recordSigningKey(this.kv, this.signing.publicJwk, now);
    this.#signRecordedAt = now.getTime();
  }

  /**
   * Before a token is signed: refuses if an operator retired this process's key (one KV read per issuance, which is
   * not the partner read path), and moves the key's `lastSignedAt` forward at most once per
   * `SIGNING_RECORD_INTERVAL_MS`, which the JWKS adds to its window (kv/jwt_keys.ts `mayHaveLiveTokens`).
   */
  async beforeSigning(now = new Date()): Promise<void> {
    if (now.getTime() - this.#signRecordedAt >= SIGNING_RECORD_INTERVAL_MS) return await this.recordSigningKey(now);
    const record = (await this.kv.get<JwtKeyRecord>(jwtKeyKey(this.signing.publicJwk.kid))).value;
    if (record?.retiredAt) throw new RetiredSigningKeyError(record);
  }

  /** The public key named `kid`, or null when no process on this KV recorded it. */
  async verificationKey(kid: string): Promise<CryptoKey | null> {
    const known = this.#keys.get(kid);
    if (known) return known;
    if (!KID_PATTERN.test(kid)) return null;
    await this.#listAfterNow();
    return this.#keys.get(kid) ?? null;
  }

  #listAfterNow(): Promise<void> {
    return this.#next ??= (async () => {
      await this.#running?.catch(noop);
      const wait = this.#lastListStart + this.minListGapMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      // Requests arriving from here on wait for the listing after this one: this one may miss their key.
      this.#next = null;
      this.#lastListStart = Date.now();
      const run = this.#list();
      this.#running = run;
      try {
        await run;
      } finally {
        if (this.#running === run) this.#running = null;
      }
    })();
  }

  async #list(): Promise<void> {
    for (const record of await listJwtKeys(this.kv)) {
      if (this.#keys.has(record.kid)) continue;
      const { kty, n, e } = record.publicJwk;
      const key = await crypto.subtle.importKey(
        "jwk",
        { kty, n, e },
        { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
        false,
        ["verify"],
      );
      this.#keys.set(record.kid, key);
    }
  }
}
