/**
 * Operator configuration, read from the environment once at start. Defaults make `deno task dev` work with
 * nothing set; see docs/configuration.md.
 */
import { z } from "zod";
import { type EvmConfig, loadEvmConfig } from "./evm.ts";
import { loadUtxoConfig, type UtxoConfig } from "./utxo.ts";
import { type AccountConfig, loadAccountConfig } from "./account.ts";
import { loadWatchConfig, type WatchConfig } from "./watch_plan.ts";
import { type ExplorerConfig, loadExplorerConfig } from "./explorers.ts";
import { type HotBands, loadHotBands } from "./hot_band.ts";
import type { NativeChain } from "../chains/catalog.ts";

/**
 * `sim`: every chain simulated (the default, `deno task dev`); `live`: configured chains only, the rest disabled;
 * `devnet`: tests only, live chains on local nodes (anvil, a regtest UTXO node) beside simulated ones.
 * config/chain_mode.ts holds the rules.
 */
/**
 * Where a crash test may kill the process (`FAULT_CRASH_POINT`; actors/context.ts `faultPoint` is called at each): signed
 * but not recorded, recorded but not broadcast, broadcast but its completion not recorded.
 */
export const FAULT_POINTS = [
  "after-sign",
  "after-record",
  "after-broadcast",
  "sweep-after-record",
  "burn-after-record",
  "cold-sweep-after-record",
  "drain-after-record",
] as const;
export type FaultPoint = typeof FAULT_POINTS[number];

export const CHAIN_MODES = ["sim", "live", "devnet"] as const;
export type ChainMode = typeof CHAIN_MODES[number];

/**
 * `process`: a long-running process (`deno task start`, the binary): setTimeout loops, the KV queue doorbell, cron
 * as a backstop, a local KV file. `deploy`: Deno Deploy (detected from `DENO_DEPLOYMENT_ID`, or `RUNTIME_MODE=deploy`):
 * cron alone drives the pipeline (no timer, no queue), the platform's KV, secrets from the environment only, nothing
 * written to disk.
 */
export const RUNTIME_MODES = ["process", "deploy"] as const;
export type RuntimeMode = typeof RUNTIME_MODES[number];

/**
 * docs/operations.md "Roles": `all` (the default) runs everything in one process; `api` serves the partner and admin
 * HTTP API holding the JWT key only (no mnemonic, no EVM key: deposit addresses come from the pool the worker fills);
 * `worker` runs the watchers, actors and signing and serves only health and metrics; `signer` holds the mnemonic and
 * the EVM minter key for a worker started with `SIGNER_SOCKET`, answering on that socket only after checking each
 * request against KV (actors/signer/service.ts).
 */
export const ROLES = ["all", "api", "worker", "signer"] as const;
export type Role = typeof ROLES[number];

/** Variables that carry key material other than the JWT key: ROLE=api refuses to start when any is set. */
export const KEY_MATERIAL_VARIABLES = [
  "MASTER_MNEMONIC",
  "MASTER_MNEMONIC_FILE",
  "EVM_MINTER_KEY",
  "EVM_MINTER_KEY_FILE",
] as const;

/** The JWT signing key's variables: ROLE=worker, which serves no partner route, refuses them. */
export const JWT_KEY_VARIABLES = ["JWT_PRIVATE_KEY", "JWT_PRIVATE_KEY_FILE"] as const;

/** Pre-derived deposit addresses per native chain (kv/mint_wallets.ts `refillDepositPool`). */
export interface DepositPoolConfig {
  /** The worker refills a chain's pool when fewer than this many addresses wait. */
  lowWater: number;
  /** How many addresses one refill derives (one KV commit, so at most 500). */
  refill: number;
}

export const DEFAULT_DEPOSIT_POOL: DepositPoolConfig = { lowWater: 50, refill: 100 };

export interface Config {
  port: number;
  role: Role;
  /**
   * `SIGNER_SOCKET`: the signer process's unix socket. ROLE=signer listens on it; a worker given it holds no key and
   * signs through it (docs/operations.md "Roles", the signer process).
   */
  signerSocket: string | undefined;
  /** `SIGNER_HOURLY_LIMITS` (ROLE=signer): the most each native chain may pay out per rolling hour, smallest units. */
  signerHourlyLimits: Partial<Record<NativeChain, bigint>>;
  depositPool: DepositPoolConfig;
  runtimeMode: RuntimeMode;
  /** The KV file, or a KV Connect URL; "" in deploy mode without KV_PATH: the platform's own KV (`Deno.openKv()`). */
  kvPath: string;
  /** Folder beside the KV file where sim mode keeps generated secrets. */
  dataDir: string;
  baseUrl: string;
  authUrl: string;
  claimNamespace: string;
  jwtPrivateKeyFile: string | undefined;
  masterMnemonicFile: string | undefined;
  /** Deploy mode: the JWT signing key (PKCS8 PEM) itself, from `JWT_PRIVATE_KEY`. */
  jwtPrivateKey: string | undefined;
  /** Deploy mode: the master mnemonic itself, from `MASTER_MNEMONIC`. */
  masterMnemonic: string | undefined;
  chainMode: ChainMode;
  /** Overrides the derived shared uAsset transfer address (an operator-held EVM address). */
  burnTransferAddress: string | undefined;
  /** `off` serves the API without watchers, actors or block production. */
  pipeline: "on" | "off";
  /** Sim mode: one block per chain every this many ms. */
  simBlockMs: number;
  /** Sim mode: how long a deposit may wait for its confirmations. */
  simConfirmationTimeoutMs: number;
  /**
   * Sim mode: what each account chain's hot wallet is credited at its first payout, in native smallest units. Unset:
   * the ledger's large default, so faucet-funded burns are always paid; 0: a finite hot wallet that only sweeps of
   * deposits fund.
   */
  simHotWalletGenesis: bigint | undefined;
  /**
   * Sim mode: native smallest units the operator's change address holds at genesis on each simulated UTXO chain
   * (doge, zec), in the treasury from the start, so burns of faucet uAssets can be paid; 0: the treasury holds only
   * what deposits bring.
   */
  simUtxoGenesis: bigint;
  /** How often the due-order sweep runs (the queue wakes actors sooner when it is available). */
  sweepMs: number;
  /**
   * `minter_allowance_low` is raised when a mint leaves the minter's allowance below this percent of what the admin
   * last set (docs/live-chains.md "Minter allowance"); 0 never raises it.
   */
  minterAllowanceAlertPercent: number;
  /**
   * How long a change of a chain's cold address waits before it takes effect (`COLD_ADDRESS_DELAY_HOURS`, default 24):
   * a stolen operator key cannot redirect reserves before the alert raised at the change is seen (kv/cold_addresses.ts).
   */
  coldAddressDelayMs: number;
  /** Each native chain's hot-wallet band (`<CHAIN>_HOT_BAND`, config/hot_band.ts); a chain without one has no band. */
  hotBands: HotBands;
  /** Live EVM chains (`<CHAIN>_RPC_URLS`, `<CHAIN>_UASSETS`, `EVM_MINTER_KEY_FILE`, ...). */
  evm: EvmConfig;
  /** Live UTXO chains (`DOGE_RPC_URLS`, `ZEC_RPC_URLS`, `DOGE_FEE_PER_KB`, `ZEC_EXPIRY_WINDOW`, ...): config/utxo.ts. */
  utxo: UtxoConfig;
  /** Live account chains (`SOL_RPC_URLS`, `XRP_RPC_URLS`, `SUI_RPC_URLS`, ...): config/account.ts. */
  account: AccountConfig;
  /** Which chains this process watches and a cron run's budgets (`WATCH_CHAINS`, ...): config/watch_plan.ts. */
  watch: WatchConfig;
  /** `<CHAIN>_EXPLORER_TX_URL`: the transaction links of the order page (config/explorers.ts). */
  explorers: ExplorerConfig;
  /** Webhook deliveries: the timeout of one request and the first retry's delay (doubling, capped at 1 h). */
  webhookTimeoutMs: number;
  webhookBackoffBaseMs: number;
  /** What one partner and one API key may hold or do (docs/partners.md "Decisions where the spec is silent"). */
  limits: PartnerLimits;
  /** Crash tests only: the process SIGKILLs itself the first time an order step reaches this point. */
  faultCrashPoint: FaultPoint | undefined;
}

/**
 * Bounds per partner (its API keys may bind any number of wallets, so the per-wallet limits of streams and webhook
 * endpoints alone bound nothing) and per API key.
 */
export interface PartnerLimits {
  /** Open `GET /orders/stream` connections of all the partner's wallets, across every server process. */
  streamsPerPartner: number;
  /** Registered webhook endpoints of all the partner's wallets. */
  webhookEndpointsPerPartner: number;
  /** Wallets one API key may bind (their first token) per UTC day; tokens for wallets already bound do not count. */
  newWalletsPerKeyPerDay: number;
}

/**
 * The defaults, and why (docs/partners.md "Limits per partner and per API key"): ten wallets' worth of the per-wallet
 * limits (10 streams, 10 endpoints) for a partner, and a thousand new end users a day per key, far above an onboarding
 * day yet a bound on what a leaked key can create before an operator revokes it.
 */
export const DEFAULT_PARTNER_LIMITS: PartnerLimits = {
  streamsPerPartner: 100,
  webhookEndpointsPerPartner: 100,
  newWalletsPerKeyPerDay: 1000,
};

/** 100,000,000 DOGE or ZEC (8 decimals): more than any sim run pays out. */
export const SIM_UTXO_GENESIS_DEFAULT = 10n ** 16n;

/** The default of `COLD_ADDRESS_DELAY_HOURS`. */
export const DEFAULT_COLD_ADDRESS_DELAY_HOURS = 24;

/** The default of `MINTER_ALLOWANCE_ALERT_PERCENT`. */
export const DEFAULT_MINTER_ALLOWANCE_ALERT_PERCENT = 20;

const EnvSchema = z.object({
  PORT: z.string().regex(/^\d{1,5}$/, "PORT must be a port number").optional(),
  ROLE: z.enum(ROLES).optional(),
  SIGNER_SOCKET: z.string().min(1).max(100, "SIGNER_SOCKET must be a path of at most 100 bytes (a unix socket's)")
    .optional(),
  SIGNER_HOURLY_LIMITS: z.string().regex(
    /^(sol|xrp|sui|doge|zec)=(0|[1-9]\d{0,35})(,(sol|xrp|sui|doge|zec)=(0|[1-9]\d{0,35}))*$/,
    "SIGNER_HOURLY_LIMITS must be chain=amount pairs, comma-separated (e.g. sol=5000000000,xrp=1000000000), each " +
      "amount a whole number in the chain's smallest unit",
  ).optional(),
  DEPOSIT_POOL_LOW_WATER: z.string().regex(/^[1-9]\d{0,5}$/, "must be a whole number from 1 to 999999").optional(),
  DEPOSIT_POOL_REFILL: z.string().regex(/^([1-9]\d?|[1-4]\d\d|500)$/, "must be a whole number from 1 to 500")
    .optional(),
  RUNTIME_MODE: z.enum(RUNTIME_MODES).optional(),
  DENO_DEPLOYMENT_ID: z.string().optional(),
  JWT_PRIVATE_KEY: z.string().min(1).optional(),
  MASTER_MNEMONIC: z.string().min(1).optional(),
  KV_PATH: z.string().min(1).optional(),
  BASE_URL: z.url().optional(),
  AUTH_URL: z.url().optional(),
  CLAIM_NAMESPACE: z.string().min(1).optional(),
  JWT_PRIVATE_KEY_FILE: z.string().min(1).optional(),
  MASTER_MNEMONIC_FILE: z.string().min(1).optional(),
  CHAIN_MODE: z.enum(CHAIN_MODES).optional(),
  BURN_TRANSFER_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "BURN_TRANSFER_ADDRESS must be an EVM address")
    .optional(),
  PIPELINE: z.enum(["on", "off"]).optional(),
  FAULT_CRASH_POINT: z.enum(FAULT_POINTS).optional(),
  SIM_BLOCK_MS: z.string().regex(/^\d{1,7}$/, "SIM_BLOCK_MS must be a whole number of ms").optional(),
  SIM_CONFIRMATION_TIMEOUT_MS: z.string().regex(/^\d{1,9}$/, "must be a whole number of ms").optional(),
  SIM_HOT_WALLET_GENESIS: z.string().regex(/^(0|[1-9]\d{0,35})$/, "must be a whole number of native smallest units")
    .optional(),
  SIM_UTXO_GENESIS: z.string().regex(/^(0|[1-9][0-9]{0,29})$/, "SIM_UTXO_GENESIS must be a whole number").optional(),
  SWEEP_MS: z.string().regex(/^\d{1,7}$/, "SWEEP_MS must be a whole number of ms").optional(),
  WEBHOOK_TIMEOUT_MS: z.string().regex(/^[1-9]\d{0,6}$/, "WEBHOOK_TIMEOUT_MS must be a whole number of ms").optional(),
  WEBHOOK_BACKOFF_BASE_MS: z.string().regex(/^[1-9]\d{0,7}$/, "must be a whole number of ms").optional(),
  PARTNER_MAX_STREAMS: positiveCount("PARTNER_MAX_STREAMS"),
  PARTNER_MAX_WEBHOOK_ENDPOINTS: positiveCount("PARTNER_MAX_WEBHOOK_ENDPOINTS"),
  API_KEY_MAX_NEW_WALLETS_PER_DAY: positiveCount("API_KEY_MAX_NEW_WALLETS_PER_DAY"),
  COLD_ADDRESS_DELAY_HOURS: z.string().regex(/^([1-9]\d{0,3})$/, "must be a whole number of hours from 1 to 9999")
    .optional(),
  MINTER_ALLOWANCE_ALERT_PERCENT: z.string().regex(/^(100|[1-9]?[0-9])$/, "must be a whole percent from 0 to 100")
    .optional(),
});

function positiveCount(name: string) {
  return z.string().regex(/^[1-9]\d{0,6}$/, `${name} must be a whole number from 1 to 9999999`).optional();
}

const NAMES = Object.keys(EnvSchema.shape) as (keyof typeof EnvSchema.shape)[];

/** Reads the known variables from `env`; empty strings count as unset. Throws with every problem named. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, string> = {};
  for (const name of NAMES) {
    const value = env[name];
    if (value !== undefined && value !== "") raw[name] = value;
  }
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const role: Role = e.ROLE ?? "all";
  if (role === "api") {
    const held = KEY_MATERIAL_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== "");
    if (held.length > 0) {
      throw new Error(
        `ROLE=api must not hold key material, but ${held.join(", ")} ${held.length > 1 ? "are" : "is"} set: ` +
          'unset them for the api process and give them to the worker (docs/operations.md "Roles")',
      );
    }
  }
  if (role === "worker") {
    const held = JWT_KEY_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== "");
    if (held.length > 0) {
      throw new Error(
        `ROLE=worker signs no tokens and must not hold the JWT key, but ${held.join(", ")} ` +
          `${held.length > 1 ? "are" : "is"} set: give it to the api processes only (docs/operations.md \"Roles\")`,
      );
    }
  }
  const signerSocket = e.SIGNER_SOCKET;
  if (role === "worker" && signerSocket !== undefined) {
    const held = KEY_MATERIAL_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== "");
    if (held.length > 0) {
      throw new Error(
        `ROLE=worker with SIGNER_SOCKET signs through the signer process and must not hold key material, but ` +
          `${held.join(", ")} ${held.length > 1 ? "are" : "is"} set: give them to the ROLE=signer process only ` +
          '(docs/operations.md "Roles")',
      );
    }
  }
  if (role === "signer") {
    if (signerSocket === undefined) {
      throw new Error('ROLE=signer needs SIGNER_SOCKET, the socket it listens on (docs/operations.md "Roles")');
    }
    const held = JWT_KEY_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== "");
    if (held.length > 0) {
      throw new Error(
        `ROLE=signer signs no tokens and must not hold the JWT key, but ${held.join(", ")} ` +
          `${held.length > 1 ? "are" : "is"} set (docs/operations.md "Roles")`,
      );
    }
  }
  if (role === "signer" && (e.RUNTIME_MODE === "deploy" || (e.RUNTIME_MODE === undefined && e.DENO_DEPLOYMENT_ID))) {
    throw new Error("ROLE=signer listens on a unix socket beside its worker: it runs as a process, not on Deno Deploy");
  }
  if ((role === "all" || role === "api") && signerSocket !== undefined) {
    throw new Error(`SIGNER_SOCKET is for ROLE=worker (which signs through it) and ROLE=signer, not ROLE=${role}`);
  }
  if (role === "worker" && e.PIPELINE === "off") {
    throw new Error(
      'ROLE=worker with PIPELINE=off would run nothing: a worker is the pipeline (docs/operations.md "Roles")',
    );
  }
  const port = e.PORT === undefined ? 8000 : Number(e.PORT);
  // Deno Deploy sets DENO_DEPLOYMENT_ID in every deployment; RUNTIME_MODE wins either way.
  const runtimeMode: RuntimeMode = e.RUNTIME_MODE ?? (e.DENO_DEPLOYMENT_ID ? "deploy" : "process");
  const deploy = runtimeMode === "deploy";
  const kvPath = e.KV_PATH ?? (deploy ? "" : "./data/kv.sqlite3");
  const baseUrl = trimSlash(e.BASE_URL ?? `http://localhost:${port}`);
  const authUrl = trimSlash(e.AUTH_URL ?? `${baseUrl}/auth`);
  return {
    port,
    role,
    signerSocket,
    signerHourlyLimits: hourlyLimits(e.SIGNER_HOURLY_LIMITS),
    depositPool: {
      lowWater: Number(e.DEPOSIT_POOL_LOW_WATER ?? DEFAULT_DEPOSIT_POOL.lowWater),
      refill: Number(e.DEPOSIT_POOL_REFILL ?? DEFAULT_DEPOSIT_POOL.refill),
    },
    runtimeMode,
    kvPath,
    dataDir: dirname(kvPath),
    baseUrl,
    authUrl,
    claimNamespace: trimSlash(e.CLAIM_NAMESPACE ?? baseUrl),
    jwtPrivateKeyFile: e.JWT_PRIVATE_KEY_FILE,
    masterMnemonicFile: e.MASTER_MNEMONIC_FILE,
    jwtPrivateKey: e.JWT_PRIVATE_KEY,
    masterMnemonic: e.MASTER_MNEMONIC,
    chainMode: e.CHAIN_MODE ?? "sim",
    burnTransferAddress: e.BURN_TRANSFER_ADDRESS,
    pipeline: e.PIPELINE ?? "on",
    simBlockMs: Math.max(10, Number(e.SIM_BLOCK_MS ?? 1000)),
    // Cron drives deploy mode once a minute: a sim deposit's few blocks take minutes there, not seconds.
    simConfirmationTimeoutMs: Number(e.SIM_CONFIRMATION_TIMEOUT_MS ?? (deploy ? 30 * 60_000 : 120_000)),
    simHotWalletGenesis: e.SIM_HOT_WALLET_GENESIS === undefined ? undefined : BigInt(e.SIM_HOT_WALLET_GENESIS),
    simUtxoGenesis: e.SIM_UTXO_GENESIS === undefined ? SIM_UTXO_GENESIS_DEFAULT : BigInt(e.SIM_UTXO_GENESIS),
    sweepMs: Math.max(10, Number(e.SWEEP_MS ?? 1000)),
    // The api role never signs on EVM chains: a live EVM chain needs no minter key there (it holds none).
    evm: loadEvmConfig(env, deploy, role !== "api" && !(role === "worker" && signerSocket !== undefined)),
    utxo: loadUtxoConfig(env),
    account: loadAccountConfig(env),
    watch: loadWatchConfig(env),
    explorers: loadExplorerConfig(env),
    hotBands: loadHotBands(env),
    webhookTimeoutMs: Number(e.WEBHOOK_TIMEOUT_MS ?? 10_000),
    webhookBackoffBaseMs: Number(e.WEBHOOK_BACKOFF_BASE_MS ?? 10_000),
    limits: {
      streamsPerPartner: Number(e.PARTNER_MAX_STREAMS ?? DEFAULT_PARTNER_LIMITS.streamsPerPartner),
      webhookEndpointsPerPartner: Number(
        e.PARTNER_MAX_WEBHOOK_ENDPOINTS ?? DEFAULT_PARTNER_LIMITS.webhookEndpointsPerPartner,
      ),
      newWalletsPerKeyPerDay: Number(
        e.API_KEY_MAX_NEW_WALLETS_PER_DAY ?? DEFAULT_PARTNER_LIMITS.newWalletsPerKeyPerDay,
      ),
    },
    faultCrashPoint: e.FAULT_CRASH_POINT,
    coldAddressDelayMs: Number(e.COLD_ADDRESS_DELAY_HOURS ?? DEFAULT_COLD_ADDRESS_DELAY_HOURS) * 3_600_000,
    minterAllowanceAlertPercent: e.MINTER_ALLOWANCE_ALERT_PERCENT === undefined
      ? DEFAULT_MINTER_ALLOWANCE_ALERT_PERCENT
      : Number(e.MINTER_ALLOWANCE_ALERT_PERCENT),
  };
}

/** `sol=5,xrp=7` (already checked by its pattern) by chain; a chain named twice keeps its last amount. */
function hourlyLimits(text: string | undefined): Partial<Record<NativeChain, bigint>> {
  const out: Partial<Record<NativeChain, bigint>> = {};
  for (const pair of text ? text.split(",") : []) {
    const [chain, amount] = pair.split("=");
    out[chain as NativeChain] = BigInt(amount);
  }
  return out;
}

/** Reads the process environment (needs --allow-env). */
export function configFromProcess(): Config {
  return loadConfig(Deno.env.toObject());
}

/** The path under which the token endpoints are served: AUTH_URL's path on this server. */
export function authMountPath(config: Config): string {
  const path = trimSlash(new URL(config.authUrl).pathname);
  return path === "" ? "/" : path;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  if (i < 0) return ".";
  return i === 0 ? "/" : path.slice(0, i);
}
