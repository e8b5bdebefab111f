/**
 * Every message a partner can see, defined once: the API's errors with their HTTP status (spec 5 and 7, and the
 * docs/partners.md "Decisions where the spec is silent"), the messages of validation issues, and the order
 * `errorMessage` values (spec 2.4). Code refers to them by name; the texts are the contract, so tests assert them
 * literally. Routes, actors, kv and cli depend on this module; it depends on nothing but a type of the catalog.
 */
import type { NativeChain } from "./chains/catalog.ts";

/** An API error as the partner sees it: the status and the envelope's `message`. */
export interface PartnerError {
  readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503;
  readonly message: string;
}

const error = <S extends PartnerError["status"]>(status: S, message: string) => ({ status, message }) as const;

export const API_ERRORS = {
  // Spec 5: obtaining and presenting tokens.
  missingApiKey: error(401, "Missing or malformed X-API-Key"),
  invalidApiKey: error(403, "Invalid API key"),
  missingAuthorization: error(401, "Missing authorization header"),
  invalidToken: error(401, "Invalid or expired token"),
  tokenExpired: error(401, "Token expired"),
  invalidSignature: error(403, "Invalid token signature"),
  walletNotActive: error(403, "Wallet is not active"),
  /**
   * docs/partners.md "A wallet belongs to one partner": a wallet belongs to the partner whose key issued its first
   * token.
   */
  walletOfAnotherPartner: error(403, "Wallet belongs to another partner"),

  // Spec 7: mint wallets.
  mintWalletExists: error(400, "A wallet already exists for this chain and destination combination"),
  unsupportedSourceChain: error(400, "Unsupported source chain"),
  unsupportedDestinationChain: error(400, "Unsupported destination chain"),

  /**
   * docs/operations.md "Roles": the api process holds no mnemonic and the chain's pool of pre-derived addresses is
   * empty. The spec's table has no temporary failure; spec 7 tells clients to retry 5xx with backoff, so 503 (not 500:
   * nothing is broken, the worker refills the pool).
   */
  depositAddressesUnavailable: error(503, "Deposit addresses are temporarily unavailable; retry later"),

  // Spec 7: burn configurations (the address formats are INVALID_ADDRESS_FORMAT, one per chain).
  burnWalletExists: error(400, "Wallet already exists for this chain"),
  memoRequired: error(400, "Memo is required for XRP and TXRP chains"),
  memoNotNumeric: error(400, "Memo must be numeric for XRP and TXRP chains"),
  /** docs/partners.md "PUT /burn/wallets": without a configuration. */
  burnConfigNotFound: error(404, "Burn configuration not found for this chain"),

  // Spec 7: request bodies and queries.
  invalidRequestBody: error(400, "Invalid request body"),
  validationError: error(400, "Validation error"),

  // Spec 4.7 and 7: orders.
  ordersUnavailable: error(500, "Failed to retrieve orders"),
  /**
   * docs/order-reads.md: GET /orders/:id for an id that is unknown, malformed or another wallet's (never told apart).
   */
  orderNotFound: error(404, "Order not found"),
  /** docs/order-reads.md: GET /orders/:id when the store could not be read. */
  orderUnavailable: error(500, "Failed to retrieve order"),

  // docs/idempotency.md: the Idempotency-Key header of every POST.
  idempotencyKeyMalformed: error(400, "Idempotency-Key must be 1 to 255 printable ASCII characters"),
  idempotencyKeyInFlight: error(
    409,
    "A request with this Idempotency-Key is still in progress; retry once it has completed",
  ),
  idempotencyKeyReused: error(
    422,
    "This Idempotency-Key was already used with a different request (method, path or body); use a new key",
  ),
  // docs/streaming.md: GET /orders/stream.
  tooManyStreams: error(429, "Too many open event streams for this wallet; close one before opening another"),
  /**
   * docs/partners.md "Limits per partner and per API key": the partner's streams, all its wallets and server processes
   * together (PARTNER_MAX_STREAMS).
   */
  tooManyPartnerStreams: error(
    429,
    "Too many open event streams for this partner; close one before opening another",
  ),
  // docs/webhooks.md: endpoints and their delivery logs, scoped to the token's wallet.
  webhookUrlInvalid: error(400, "Webhook URL must be an absolute https URL"),
  webhookUrlNotHttps: error(
    400,
    "Webhook URL must use https (plain http is accepted only to a loopback address in sim and devnet modes)",
  ),
  webhookUrlCredentials: error(400, "Webhook URL must not contain credentials"),
  webhookUrlPrivateHost: error(
    400,
    "Webhook URL must not point to localhost or a loopback, private or link-local address",
  ),
  webhookEndpointNotFound: error(404, "Webhook endpoint not found"),
  webhookDeliveryNotFound: error(404, "Webhook delivery not found"),

  // docs/partners.md "Errors": unknown routes and unexpected failures (details only in the server log).
  notFound: error(404, "Not found"),
  internal: error(500, "Internal server error"),
  /**
   * docs/partners.md "Request bodies are at most 64 KiB": every POST and PUT body is at most 64 KiB
   * (routes/body_limit.ts).
   */
  bodyTooLarge: error(413, "Request body too large: at most 65536 bytes"),
} as const;

/** Spec 7: an xrp memo (destination tag) above the chain's maximum, which the catalog's memo rule gives. */
export const memoTooLarge = (max: bigint) => error(400, `Memo must not exceed maximum value (${max})`);

/** docs/webhooks.md: registering more endpoints than a wallet may have. */
export const webhookEndpointLimit = (max: number) =>
  error(400, `A wallet may register at most ${max} webhook endpoints`);

/**
 * docs/partners.md "Limits per partner and per API key": webhook endpoints of all a partner's wallets together
 * (PARTNER_MAX_WEBHOOK_ENDPOINTS).
 */
export const partnerWebhookEndpointLimit = (max: number) =>
  error(400, `A partner may register at most ${max} webhook endpoints`);

/**
 * docs/partners.md "Limits per partner and per API key": wallets one API key binds by their first token, per UTC day
 * (API_KEY_MAX_NEW_WALLETS_PER_DAY).
 */
export const newWalletLimit = (max: number) =>
  error(429, `An API key may bind at most ${max} new wallets per UTC day; try again after 00:00 UTC`);

/** Sim mode's /sim routes (developers): a chain that runs live has no simulator to drive. */
export const notSimulated = (chain: string) => error(400, `${chain} is a live chain here; it has no simulator`);

/** Spec 7 gives Solana's; docs/partners.md "Destination addresses": one per chain in the same style. */
export const INVALID_ADDRESS_FORMAT: Readonly<Record<NativeChain, string>> = {
  sol: "Invalid Solana address format. Must be base58 encoded, 32-44 characters.",
  xrp: "Invalid XRP address format. Must be a classic address starting with r, 25-34 characters.",
  sui: "Invalid Sui address format. Must be 0x followed by 64 hexadecimal characters.",
  doge: "Invalid Dogecoin address format. Must start with D, A or 9 and be 34 characters.",
  zec: "Invalid Zcash address format. Must be a transparent address starting with t1, 35 characters.",
};

/** Messages of the issues in a `Validation error`'s `error.issues`. */
export const ISSUE_MESSAGES = {
  /** Spec 7: a missing required field. */
  required: "Required",
  evmAddress: "Must be a 20-byte hex EVM address (0x followed by 40 hex)",
  /** docs/partners.md "Refused wallets". */
  zeroAddress: "Must not be the zero address",
  transferAddress: "Must not be the service's uAsset transfer address",
  nonNegativeInteger: "Must be a non-negative integer",
  /** docs/order-reads.md "Incremental sync": a `cursor` that no answer of GET /orders gave. */
  invalidCursor: "Must be a nextCursor from an earlier answer",
  /** docs/order-reads.md "Incremental sync": positions come from the cursor, never from an offset. */
  offsetWithCursor: "Must be 0 (or absent) with cursor or updatedSince",
} as const;

/**
 * Why an order failed, as a stable kind, and the one `errorMessage` partners see for it (spec 2.4; the last one is
 * ours: a burn's transfer re-executed with other facts after a reorg). Decisions (an operator's retry) use the kind,
 * which is stored on the order; the text may be reworded without changing any decision.
 */
export const ORDER_ERRORS = {
  insufficient_deposit: "Insufficient deposit amount",
  wallet_inactive: "Wallet address inactive",
  confirmation_timeout: "Blockchain confirmation timeout",
  minting_error: "Minting contract error",
  below_minimum_burn: "Amount below minimum burn",
  invalid_destination: "Invalid destination address",
  payout_failed: "Transaction failed on destination chain",
  source_changed: "Source transfer changed by a chain reorganization",
} as const;

export type OrderErrorKind = keyof typeof ORDER_ERRORS;
export const ORDER_ERROR_KINDS = Object.keys(ORDER_ERRORS) as [OrderErrorKind, ...OrderErrorKind[]];

/** Operators' readiness probe (`GET /readyz`, 503): why this process takes no traffic right now. */
export const NOT_READY = {
  starting: "Starting",
  shuttingDown: "Shutting down",
  kvUnreachable: "KV store unreachable",
} as const;

/**
 * Operator credentials (docs/admin-api.md: the admin API, `/metrics`; docs/operations.md "Operator control"). Never a
 * partner's key.
 */
export const OPERATOR_ERRORS = {
  missingCredentials: error(
    401,
    "Missing or malformed operator credentials: send Authorization: Bearer <operator key>",
  ),
  invalidKey: error(403, "Invalid operator key"),
} as const;

/** An operator key without the scope an operation needs. */
export const operatorScopeMissing = (scope: string) => error(403, `This operator key lacks the ${scope} scope`);
