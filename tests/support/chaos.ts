/**
 * Crash consistency under SIGKILL, shared by `tests/crash_test.ts` (short) and `bench/chaos.ts` (long).
 *
 * The real server runs as a child process on one KV file. Partners' deposits and burns go to it over HTTP across every
 * chain while it is killed with SIGKILL at seeded random moments and restarted. After the last restart the pipeline
 * drains, the server stops, and everything is checked from the KV file itself: every transfer the chains carry has
 * exactly one order (or held record), every order ended as its amount says it must, every completed mint minted once,
 * every completed burn paid once, and per asset deposited = minted and burned = paid + recorded remainder.
 *
 * A request whose response was lost (the server died under it) may or may not have happened. Every operation has a
 * unique amount, so each transaction on the simulated chains is matched back to the one request that made it.
 */
import { Deriver } from "../../chains/derivation.ts";
import {
  chainFamily,
  type ChainSymbol,
  EVM_CHAINS,
  type EvmChain,
  NATIVE,
  NATIVE_CHAINS,
  type NativeChain,
  nativeToWei,
  type UAsset,
  weiPerNativeUnit,
} from "../../chains/catalog.ts";
import { SimLedger } from "../../chains/sim/ledger.ts";
import type { SimTx } from "../../chains/sim/tx.ts";
import { simChains } from "../../chains/sim/adapters.ts";
import { type ReconciliationReport, runReconciliation } from "../../actors/reconciliation.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { listDepositAddresses } from "../../kv/mint_wallets.ts";
import { openKv } from "../../kv/open.ts";
import type { BurnOrder, Order } from "../../model/order.ts";
import { countDue, type HeldTransfer, listHeld, seenKey, type SeenTransfer } from "../../kv/pipeline.ts";
import { listBurnBatches, listBurnsDue, listLeftOutBurns } from "../../kv/onchain_burns.ts";
import { listSweeps, type Sweep } from "../../kv/treasury.ts";
import { coldAddressKey } from "../../kv/cold_addresses.ts";
import { listColdSweeps } from "../../kv/cold_sweeps.ts";
import { hotBandVariable } from "../../config/hot_band.ts";
import { seededRandom } from "./seeded_random.ts";

/** The order `errorMessage` values partners may see (spec 2.4, and ours for a reorganised burn source). */
const ORDER_ERROR_TEXTS = [
  "Insufficient deposit amount",
  "Wallet address inactive",
  "Blockchain confirmation timeout",
  "Minting contract error",
  "Amount below minimum burn",
  "Invalid destination address",
  "Transaction failed on destination chain",
  "Source transfer changed by a chain reorganization",
];

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
/** Fixed, so tokens issued before a kill stay valid on the restarted server (it listens on a new port each time). */
const BASE_URL = "http://chaos.test";
/** Where redeemed coins are paid: addresses of another mnemonic, never ours. */
const OUTSIDE = Deriver.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");
const CHAINS: ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];
const OPEN_STATUSES = ["pending", "processing", "minting", "burning"] as const;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

export interface ChaosOptions {
  /** Drives the plan (wallets, chains, amounts) and the kill moments; printed so a run can be repeated. */
  seed: number;
  /** Deposits plus burns sent. */
  operations: number;
  /** SIGKILLs while requests are being sent. */
  trafficKills: number;
  /** SIGKILLs after the last request, while orders are still moving. */
  drainKills: number;
  wallets: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Mean pause of each sender between two requests. */
  paceMs: number;
  blockMs: number;
  sweepMs: number;
  /** Injected transient RPC failures on every chain (0..1). */
  rpcErrorRate: number;
  drainTimeoutMs: number;
  /**
   * Cold sweeps on (docs/operations.md "Cold addresses"): every native chain gets a hot band (`coldBand`) and a cold
   * address (an outside address) before the server starts, so the sims' large hot-wallet and UTXO geneses and the swept
   * deposits go to cold while payouts go on from what the band keeps.
   */
  coldSweeps?: boolean;
  /** Keep the folder (KV file, server logs) afterwards; it is kept anyway when a check fails. */
  keepDir?: boolean;
  log?: (line: string) => void;
}

/**
 * The short run of `deno task test`. Random kills rarely land in a narrow window; with these figures a mutant that
 * broadcasts before recording its intent (a double payout after a crash) was caught in 4 runs out of 4.
 */
export const CHAOS_TEST_OPTIONS: Omit<ChaosOptions, "seed"> = {
  operations: 200,
  trafficKills: 8,
  drainKills: 3,
  wallets: 6,
  concurrency: 6,
  paceMs: 20,
  blockMs: 50,
  sweepMs: 100,
  rpcErrorRate: 0,
  drainTimeoutMs: 40_000,
};

// ---- the plan ----

export interface Wallet {
  address: string;
  token: string;
  /** Our deposit addresses of this wallet, per native chain. */
  depositAddresses: Map<NativeChain, { address: string; dest: EvmChain }[]>;
  /** Native chains it has a burn configuration for, with the configured destination. */
  burnConfigs: Map<NativeChain, string>;
  /** EVM chains it holds uAssets on and burns from. */
  burnChains: EvmChain[];
}

type Expect = "completed" | "failed" | "held";

interface DepositOp {
  kind: "deposit";
  id: number;
  chain: NativeChain;
  address: string;
  owner: string;
  dest: EvmChain;
  amount: bigint;
  expect: Expect;
  message: string | null;
}

interface BurnOp {
  kind: "burn";
  id: number;
  evm: EvmChain;
  wallet: string;
  native: NativeChain;
  asset: UAsset;
  amount: bigint;
  expect: Expect;
  message: string | null;
  destination: string | null;
}

export type Op = DepositOp | BurnOp;

export type Outcome =
  | { state: "accepted"; txHash: string }
  | { state: "refused"; detail: string }
  | { state: "lost"; detail: string };

// ---- results ----

export interface RequestFigures {
  sent: number;
  accepted: number;
  refused: number;
  /** No answer: the server died under the request. */
  lost: number;
  /** Lost requests that happened anyway, found on the chain. */
  lostLanded: number;
}

export interface AssetFigures {
  chain: NativeChain;
  token: string;
  uAsset: UAsset;
  /** Native transfers into our deposit addresses, read from the chain. */
  deposits: number;
  depositOrders: number;
  depositsCompleted: number;
  depositsFailed: number;
  /** Native units of the deposits whose orders completed. */
  deposited: bigint;
  /** Native units minted (mint wei / 10^(18-decimals)). */
  minted: bigint;
  /** uAsset transfers to the transfer address, read from the chain. */
  burns: number;
  burnOrders: number;
  held: number;
  burnsCompleted: number;
  burnsFailed: number;
  /** Wei of the burns whose orders completed. */
  burned: bigint;
  /** Native units paid out. */
  paid: bigint;
  /** Wei recorded as `details.remainderWei`, too small to pay. */
  remainderWei: bigint;
}

export interface SweepFigures {
  completed: number;
  /** Proven dead, each followed by a completed sweep of the same address. */
  dead: number;
  open: number;
  dueLeft: number;
}

export interface ColdSweepFigures {
  completed: number;
  dead: number;
  open: number;
  moved: Partial<Record<NativeChain, bigint>>;
}

export interface ChaosResult {
  /** `sim`: every chain simulated; `live`: the chains on anvil, litecoind and local protocol servers. */
  mode?: "sim" | "live";
  options: ChaosOptions;
  dir: string;
  seconds: number;
  kills: number;
  trafficKills: number;
  drainKills: number;
  /** Requests in flight at each kill while sending. */
  requestsAtKills: number[];
  /** Orders not yet terminal at each kill while draining. */
  ordersAtKills: number[];
  starts: number;
  unexpectedExits: string[];
  requests: { deposits: RequestFigures; burns: RequestFigures };
  assets: AssetFigures[];
  failedByMessage: Record<string, number>;
  orders: number;
  transfers: number;
  ordersNotTerminal: number;
  mintsExactlyOnce: number;
  completedMints: number;
  payoutsExactlyOnce: number;
  completedBurns: number;
  dueLeft: number;
  /** Sweeps of deposits into the hot wallets (sol, xrp, sui), by status; marks left to sweep. */
  sweeps: SweepFigures;
  /**
   * Cold sweeps of the hot surplus (docs/operations.md "Cold addresses"), by status, and what the completed ones moved
   * per chain.
   */
  coldSweeps: ColdSweepFigures;
  /** On-chain burn batches (docs/onchain-burn.md): all of them, and those burned. */
  burnBatches: { total: number; burned: number; orders: number };
  /** Mints and payouts sent well after their intent was recorded: the write-ahead recovery path at work. */
  recoveredBroadcasts: number;
  pendingSimTxs: number;
  errorsLogged: string[];
  /** The operators' reconciliation (actors/reconciliation.ts) over the KV file and sim chains after the run. */
  reconciliation: ReconciliationReport;
  problems: string[];
}

// ---- seeded randomness ----

/** A test plan is driven from a printed seed (tests/support/seeded_random.ts). */
export { seededRandom };

function randomBelow(random: () => number, n: bigint): bigint {
  if (n <= 0n) return 0n;
  let x = 0n;
  for (let i = 0; i < 4; i++) x = (x << 32n) | BigInt(Math.floor(random() * 2 ** 32));
  return x % n;
}

const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the server process ----

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * One server child process at a time, on the same KV file; a new port per start. Several of them may share a file
 * (tests/two_processes_test.ts): `name` keeps their log files apart.
 */
export class ServerProcess {
  #child: Deno.ChildProcess | null = null;
  #pipes: Promise<unknown>[] = [];
  #stopping = false;
  readonly #killedByUs = new WeakSet<Deno.ChildProcess>();
  #serial: Promise<unknown> = Promise.resolve();
  #up: Promise<void> = new Promise(() => {});
  #markUp: () => void = () => {};
  starts = 0;
  url = "";
  readonly unexpectedExits: string[] = [];
  readonly logs: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly env: Record<string, string>,
    private readonly client: Deno.HttpClient,
    private readonly name = "server",
  ) {
    this.#markDown();
  }

  /** The running child's process id (it names this process's leases), or null before the first start. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Resolves once a server answers /healthz. */
  ready(): Promise<void> {
    return this.#up;
  }

  start(): Promise<void> {
    return this.#queue(() => this.#start());
  }

  /** SIGKILL, then a new process on the same KV file. */
  killAndRestart(): Promise<void> {
    return this.#queue(async () => {
      await this.#kill("SIGKILL");
      await this.#start();
    });
  }

  /** SIGKILL, and no restart: another server on the same KV file must carry on alone. */
  kill(): Promise<void> {
    return this.#queue(async () => {
      await this.#kill("SIGKILL");
    });
  }

  /** SIGTERM, and no restart; resolves with the exit status (null when no server ran). */
  stop(): Promise<Deno.CommandStatus | null> {
    return this.#queue(() => {
      this.#stopping = true;
      return this.#kill("SIGTERM");
    });
  }

  /** SIGTERM (a graceful shutdown), then a new process on the same KV file; resolves with the old one's exit status. */
  terminateAndRestart(): Promise<Deno.CommandStatus | null> {
    return this.#queue(async () => {
      const status = await this.#kill("SIGTERM");
      await this.#start();
      return status;
    });
  }

  #queue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#serial.then(work);
    this.#serial = next.catch(() => {});
    return next;
  }

  #markDown() {
    this.#up = new Promise((resolve) => (this.#markUp = resolve));
  }

  async #start() {
    const port = freePort();
    const n = ++this.starts;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "--unstable-cron", MAIN],
      cwd: ROOT,
      env: { ...this.env, PORT: String(port) },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    const out = `${this.dir}/${this.name}-${n}.out.log`;
    const err = `${this.dir}/${this.name}-${n}.err.log`;
    this.logs.push(out, err);
    this.#pipes = [
      child.stdout.pipeTo((await Deno.open(out, { write: true, create: true })).writable),
      child.stderr.pipeTo((await Deno.open(err, { write: true, create: true })).writable),
    ];
    let exited = false;
    child.status.then(async (s) => {
      exited = true;
      if (this.#stopping || this.#killedByUs.has(child)) return;
      // The server died by itself: record it with its last words, and bring it back so the run can finish.
      await Promise.allSettled(this.#pipes);
      const tail = (await Deno.readTextFile(err).catch(() => "")).trim().split("\n").slice(-5).join(" | ");
      this.unexpectedExits.push(`${this.name} ${n} exited by itself (code ${s.code}, signal ${s.signal}): ${tail}`);
      this.#markDown();
      this.#queue(() => this.#start()).catch(() => {});
    });
    this.url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !exited) {
      try {
        const res = await fetch(`${this.url}/healthz`, { client: this.client });
        await res.body?.cancel();
        if (res.ok) {
          this.#markUp();
          return;
        }
      } catch { /* not listening yet */ }
      await sleep(20);
    }
    const tail = await Deno.readTextFile(err).catch(() => "");
    throw new Error(`${this.name} ${n} did not become healthy${exited ? " (it exited)" : ""}: ${tail.slice(-2000)}`);
  }

  async #kill(signal: Deno.Signal): Promise<Deno.CommandStatus | null> {
    const child = this.#child;
    if (!child) return null;
    this.#markDown();
    this.#killedByUs.add(child);
    try {
      child.kill(signal);
    } catch { /* already gone */ }
    const status = await child.status;
    await Promise.allSettled(this.#pipes);
    if (this.#stopping) this.#child = null;
    return status;
  }
}

// ---- HTTP ----

// deno-lint-ignore no-explicit-any
type Json = any;

export class Http {
  constructor(private readonly server: ServerProcess, private readonly client: Deno.HttpClient) {}

  async call(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Json }> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${this.server.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      client: this.client,
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, body };
  }

  /** For set-up, which runs before any kill: anything but `expected` is a failure of the harness. */
  async ok(method: string, path: string, expected: number, opts: Parameters<Http["call"]>[2] = {}): Promise<Json> {
    const res = await this.call(method, path, opts);
    if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

// ---- set-up: partners, wallets, deposit addresses, burn configurations ----

/** With several servers, wallet `w` gets its token from `http[w % n]` and uses it on the next one. */
export async function setUp(
  http: Http | Http[],
  kvPath: string,
  random: () => number,
  count: number,
): Promise<{ wallets: Wallet[]; transferAddress: string }> {
  // API keys are an operator's job: written on a second handle on the running server's file, as the admin CLI does.
  const kv = await openKv(kvPath);
  const keys: string[] = [];
  try {
    for (const partner of ["chaos-a", "chaos-b"]) keys.push((await createApiKey(kv, partner)).apiKey);
  } finally {
    kv.close();
  }
  const wallets: Wallet[] = [];
  let transferAddress = "";
  for (let w = 0; w < count; w++) {
    const [issuer, via] = Array.isArray(http) ? [http[w % http.length], http[(w + 1) % http.length]] : [http, http];
    const address = "0x" + Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join("");
    const { token } = await issuer.ok("POST", "/auth/token", 200, {
      headers: { "X-API-Key": keys[w % keys.length] },
      body: { walletAddress: address },
    });
    const wallet: Wallet = {
      address,
      token,
      depositAddresses: new Map(),
      burnConfigs: new Map(),
      burnChains: [EVM_CHAINS[w % EVM_CHAINS.length], EVM_CHAINS[(w + 3) % EVM_CHAINS.length]],
    };
    for (const [i, chain] of NATIVE_CHAINS.entries()) {
      const dests = [...new Set([EVM_CHAINS[(w + i) % 5], EVM_CHAINS[(w + i + 2) % 5]])];
      const list: { address: string; dest: EvmChain }[] = [];
      for (const dest of dests) {
        const { data } = await via.ok("POST", "/mint/wallets", 201, {
          token,
          body: { chain, destinationChain: dest },
        });
        list.push({ address: data.address, dest });
      }
      wallet.depositAddresses.set(chain, list);
      // The last wallet has no configuration for two chains: its transfers of those uAssets must be held.
      if (w === count - 1 && (chain === "doge" || chain === "zec")) continue;
      const destination = OUTSIDE.depositAddress(chain, w * NATIVE_CHAINS.length + i);
      const { data } = await via.ok("POST", "/burn/wallets", 201, {
        token,
        body: { destinationChain: chain, destinationAddress: destination, memo: chain === "xrp" ? `${7000 + w}` : "" },
      });
      transferAddress = String(data.uAssetTransferAddress).toLowerCase();
      wallet.burnConfigs.set(chain, destination);
    }
    wallets.push(wallet);
  }
  return { wallets, transferAddress };
}

/** The operations, decided up front from the seed; every amount unique per chain (and asset) so it names its request. */
export function plan(random: () => number, wallets: Wallet[], operations: number): Op[] {
  const ops: Op[] = [];
  const used = new Set<string>();
  const unique = (prefix: string, amount: bigint) => {
    while (used.has(`${prefix}|${amount}`)) amount++;
    used.add(`${prefix}|${amount}`);
    return amount;
  };
  for (let id = 0; id < operations; id++) {
    const w = wallets[Math.floor(random() * wallets.length)];
    if (random() < 0.55) {
      const chain = pick(random, NATIVE_CHAINS);
      const { address, dest } = pick(random, w.depositAddresses.get(chain)!);
      const min = NATIVE[chain].minimumDeposit;
      const below = random() < 0.1;
      // Below the minimum but not dust: dust is only counted in an aggregate, never an order.
      const dust = NATIVE[chain].dustDeposit;
      const amount = unique(
        chain,
        below
          ? dust + randomBelow(random, min - dust)
          : min * BigInt(1 + Math.floor(random() * 20)) + randomBelow(random, min),
      );
      const ok = amount >= min;
      ops.push({
        kind: "deposit",
        id,
        chain,
        address,
        owner: w.address,
        dest,
        amount,
        expect: ok ? "completed" : "failed",
        message: ok ? null : "Insufficient deposit amount",
      });
    } else {
      const evm = pick(random, w.burnChains);
      const native = pick(random, NATIVE_CHAINS);
      const asset = NATIVE[native].uAsset.symbol;
      const min = NATIVE[native].uAsset.minimumBurnAmount;
      // Below the minimum only from a configured wallet: from any other sender it is dust, only counted.
      const below = random() < 0.12 && w.burnConfigs.has(native);
      // Whole units plus a sub-unit remainder of wei that cannot be paid natively.
      const amount = unique(
        `${evm}|${asset}`,
        below
          ? 1n + randomBelow(random, min - 1n)
          : min * BigInt(1 + Math.floor(random() * 4)) + randomBelow(random, min) +
            randomBelow(random, weiPerNativeUnit(native)),
      );
      const destination = w.burnConfigs.get(native) ?? null;
      const expect: Expect = destination === null ? "held" : amount >= min ? "completed" : "failed";
      ops.push({
        kind: "burn",
        id,
        evm,
        wallet: w.address,
        native,
        asset,
        amount,
        expect,
        message: expect === "failed" ? "Amount below minimum burn" : null,
        destination,
      });
    }
  }
  return ops;
}

/** Funds every (wallet, chain, uAsset) with exactly what its planned burns need. */
export async function fund(http: Http, ops: Op[]) {
  const need = new Map<string, { chain: EvmChain; address: string; token: UAsset; amount: bigint }>();
  for (const op of ops) {
    if (op.kind !== "burn") continue;
    const key = `${op.evm}|${op.wallet}|${op.asset}`;
    const prev = need.get(key) ?? { chain: op.evm, address: op.wallet, token: op.asset, amount: 0n };
    need.set(key, { ...prev, amount: prev.amount + op.amount });
  }
  for (const n of need.values()) {
    await http.ok("POST", "/sim/faucet", 201, { body: { ...n, amount: n.amount.toString() } });
  }
}

export async function send(http: Http, op: Op): Promise<Outcome> {
  const [path, body] = op.kind === "deposit"
    ? ["/sim/deposits", { chain: op.chain, address: op.address, amount: op.amount.toString() }]
    : ["/sim/transfers", { chain: op.evm, from: op.wallet, token: op.asset, amount: op.amount.toString() }];
  try {
    const res = await http.call("POST", path, { body });
    if (res.status === 201) return { state: "accepted", txHash: res.body.data.txHash };
    // A 4xx was refused before anything happened; a 5xx may have failed after the commit: it counts as lost.
    if (res.status < 500) return { state: "refused", detail: `${res.status} ${JSON.stringify(res.body)}` };
    return { state: "lost", detail: `HTTP ${res.status}` };
  } catch (err) {
    return { state: "lost", detail: err instanceof Error ? err.message : String(err) };
  }
}

/** Orders in all, and orders not yet terminal, over every wallet, as partners see them. */
export async function countOrders(http: Http, wallets: Wallet[]): Promise<{ total: number; open: number }> {
  let total = 0;
  let open = 0;
  for (const w of wallets) {
    const all = await http.ok("GET", "/orders?limit=1", 200, { token: w.token });
    total += all.data.pagination.total;
    for (const status of OPEN_STATUSES) {
      const page = await http.ok("GET", `/orders?limit=1&status=${status}`, 200, { token: w.token });
      open += page.data.pagination.total;
    }
  }
  return { total, open };
}

// ---- the run ----

/** The environment of a server of a run on `kvPath`. */
/**
 * The band of a chaos run with cold sweeps: the target covers many times what one run's burns to the chain can pay
 * (at most about 5 minimum burns each, a few dozen burns per chain), so payouts never wait for a refill nobody sends.
 */
export function coldBand(chain: NativeChain): { floor: bigint; target: bigint; ceiling: bigint } {
  const unit = NATIVE[chain].uAsset.minimumBurnAmount / weiPerNativeUnit(chain);
  return { floor: 0n, target: 2_000n * unit, ceiling: 4_000n * unit };
}

/** Where a chaos run's cold sweeps go: an address of an outside mnemonic, never ours. */
export const chaosColdAddress = (chain: NativeChain): string => OUTSIDE.depositAddress(chain, 9_999);

export function serverEnv(
  kvPath: string,
  options: Pick<ChaosOptions, "blockMs" | "sweepMs" | "coldSweeps">,
): Record<string, string> {
  const bands: Record<string, string> = {};
  if (options.coldSweeps) {
    for (const chain of NATIVE_CHAINS) {
      const b = coldBand(chain);
      bands[hotBandVariable(chain)] = `${b.floor},${b.target},${b.ceiling}`;
    }
  }
  return {
    ...bands,
    KV_PATH: kvPath,
    BASE_URL,
    PIPELINE: "on",
    SIM_BLOCK_MS: String(options.blockMs),
    SWEEP_MS: String(options.sweepMs),
    // Generous: a deposit must not time out because the server was down; timeouts are not what this tests.
    SIM_CONFIRMATION_TIMEOUT_MS: "600000",
  };
}

/**
 * Sends `ops` from `options.concurrency` workers (each waiting for the server between requests) and calls
 * `interrupt` `count` times at seeded points of progress: the `j`th after a fraction `j + spread[0] + spread[1] * r`
 * of the requests started, plus a seeded delay up to `maxDelayMs`, with the number of requests then in flight.
 * The SIGKILL chaos run and the SIGTERM test share it; returns every request's outcome.
 */
export async function sendWithInterruptions(
  http: Http,
  server: ServerProcess,
  ops: Op[],
  options: Pick<ChaosOptions, "concurrency" | "paceMs">,
  random: () => number,
  interruptions: {
    count: number;
    spread: [number, number];
    maxDelayMs: number;
    interrupt: (inFlight: number) => Promise<void>;
  },
  /**
   * How an operation is sent (default: the sim endpoints, over HTTP, while a server is up). Live chains take their
   * transactions from outsiders whether our server is up or not: `waitForServer` false keeps sending through a kill.
   */
  how: { send?: (op: Op) => Promise<Outcome>; waitForServer?: boolean } = {},
): Promise<Outcome[]> {
  const sendOp = how.send ?? ((op: Op) => send(http, op));
  const outcomes: Outcome[] = new Array(ops.length);
  let next = 0;
  let started = 0;
  let inFlight = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= ops.length) return;
      if (how.waitForServer !== false) await server.ready();
      started++;
      inFlight++;
      outcomes[i] = await sendOp(ops[i]);
      inFlight--;
      await sleep(random() * 2 * options.paceMs);
    }
  };
  const interrupter = async () => {
    const { count, spread, maxDelayMs, interrupt } = interruptions;
    for (let j = 0; j < count; j++) {
      const at = Math.floor((ops.length * (j + spread[0] + spread[1] * random())) / count);
      while (started < at) await sleep(2);
      await sleep(random() * maxDelayMs);
      await interrupt(inFlight);
    }
  };
  await Promise.all([...Array.from({ length: options.concurrency }, worker), interrupter()]);
  return outcomes;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const began = performance.now();
  const random = seededRandom(options.seed);
  const dir = await Deno.makeTempDir({ prefix: "issuance-chaos-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const client = Deno.createHttpClient({});
  const server = new ServerProcess(dir, serverEnv(kvPath, options), client);
  const http = new Http(server, client);
  const problems: string[] = [];
  let trafficKills = 0;
  let drainKills = 0;
  const requestsAtKills: number[] = [];
  const ordersAtKills: number[] = [];
  try {
    log(`chaos: seed ${options.seed}, ${options.operations} operations, folder ${dir}`);
    if (options.coldSweeps) await setColdAddresses(kvPath);
    await server.start();
    const { wallets, transferAddress } = await setUp(http, kvPath, random, options.wallets);
    const ops = plan(random, wallets, options.operations);
    await fund(http, ops);
    if (options.rpcErrorRate > 0) {
      for (const chain of CHAINS) {
        await http.ok("POST", "/sim/faults", 201, { body: { chain, rpcErrorRate: options.rpcErrorRate } });
      }
    }
    log(`chaos: set up ${wallets.length} wallets; sending with ${options.trafficKills} kills`);

    // Traffic, with kills at seeded points of progress plus a seeded delay: requests and orders are in flight.
    const outcomes = await sendWithInterruptions(http, server, ops, options, random, {
      count: options.trafficKills,
      spread: [0.2, 0.6],
      maxDelayMs: 150,
      interrupt: async (inFlight) => {
        requestsAtKills.push(inFlight);
        await server.killAndRestart();
        trafficKills++;
      },
    });

    // Kills while the pipeline works through what was sent (confirmations, mints, payouts); none once all ended.
    for (let j = 0; j < options.drainKills; j++) {
      await sleep(50 + random() * 300);
      const open = (await countOrders(http, wallets)).open;
      if (open === 0) break;
      ordersAtKills.push(open);
      await server.killAndRestart();
      drainKills++;
    }
    const expectedAtLeast = ops.filter((op, i) => outcomes[i].state === "accepted" && op.expect !== "held").length;
    log(`chaos: sent; ${trafficKills + drainKills} kills; draining`);
    await drain(http, server, wallets, expectedAtLeast, options, problems);
    await settleBurns(kvPath, options, problems);
    await server.stop();

    const result = await verify(kvPath, ops, outcomes, transferAddress, problems);
    result.errorsLogged = await errorsLogged(server.logs);
    problems.push(...server.unexpectedExits);
    return {
      ...result,
      options,
      dir,
      seconds: (performance.now() - began) / 1000,
      kills: trafficKills + drainKills,
      trafficKills,
      drainKills,
      requestsAtKills,
      ordersAtKills,
      starts: server.starts,
      unexpectedExits: server.unexpectedExits,
      problems,
    };
  } finally {
    await server.stop().catch(() => {});
    client.close();
    if (!options.keepDir && problems.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else log(`chaos: kept ${dir} (KV file and server logs)`);
  }
}

/** Each native chain's cold address in effect from the start, written as the operator's change would be once due. */
export async function setColdAddresses(kvPath: string): Promise<void> {
  const kv = await openKv(kvPath);
  try {
    for (const chain of NATIVE_CHAINS) {
      const current = { address: chaosColdAddress(chain), since: new Date(0).toISOString() };
      await kv.set(coldAddressKey(chain), { current, pending: null });
    }
  } finally {
    kv.close();
  }
}

/** Waits until every order is terminal and the count has held still for a while (lost requests may add orders). */
export async function drain(
  http: Http,
  server: ServerProcess,
  wallets: Wallet[],
  expectedAtLeast: number,
  options: ChaosOptions,
  problems: string[],
) {
  const deadline = Date.now() + options.drainTimeoutMs;
  const stableMs = Math.max(1500, options.blockMs * 30);
  let last = { total: -1, open: -1 };
  let since = Date.now();
  while (Date.now() < deadline) {
    await server.ready();
    try {
      const now = await countOrders(http, wallets);
      if (now.total !== last.total || now.open !== 0) since = Date.now();
      last = now;
      if (now.open === 0 && now.total >= expectedAtLeast && Date.now() - since >= stableMs) return;
    } catch { /* the server is restarting after a crash of its own */ }
    await sleep(200);
  }
  problems.push(
    `drain timed out after ${options.drainTimeoutMs} ms: ${last.total} orders (>= ${expectedAtLeast} expected), ` +
      `${last.open} not terminal`,
  );
}

/**
 * Waits until what follows the orders is done: the on-chain burns of the completed burn orders (nothing due, no batch
 * open) and the sweeps of minted deposits into the hot wallets (no sweep due, no address locked by an open sweep).
 */
export async function settleBurns(kvPath: string, options: Pick<ChaosOptions, "drainTimeoutMs">, problems: string[]) {
  const kv = await openKv(kvPath);
  const any = async (prefix: Deno.KvKey) => {
    for await (const _ of kv.list({ prefix }, { limit: 1 })) return true;
    return false;
  };
  try {
    const deadline = Date.now() + options.drainTimeoutMs;
    while (Date.now() < deadline) {
      const busy = await any(["onchain_burn_open"]) || (await listBurnsDue(kv)).length > 0 ||
        await any(["treasury_sweep_due"]) || await any(["treasury_account_lock"]) || await any(["cold_sweep_open"]);
      if (!busy) return;
      await sleep(100);
    }
    problems.push(`on-chain burns or sweeps not settled after ${options.drainTimeoutMs} ms`);
  } finally {
    kv.close();
  }
}

export async function errorsLogged(logs: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of logs) {
    const text = await Deno.readTextFile(path).catch(() => "");
    for (const line of text.split("\n")) {
      // Injected RPC failures are expected and retried; anything else the server calls an error is worth a look.
      if (line.includes("TransientChainError")) continue;
      if (/step crashed|failed unexpectedly|broadcast failed|tick failed|Uncaught|error:/i.test(line)) out.push(line);
    }
  }
  return out;
}

// ---- verification, from the KV file with the server gone ----

/**
 * One transaction as the checks read it: the sim ledger's own record (chains/sim/ledger.ts keeps it under
 * ["sim", chain, "tx", hash]), or a live chain's transaction described in the same shape (tests/support/chaos_live.ts).
 */
export interface LedgerTx {
  hash: string;
  tx: SimTx;
  success: boolean;
  reason: string | null;
  status: "pending" | "included" | "dropped";
  /** When it was broadcast (ms); NaN where the chain does not say (live chains). */
  submittedAt: number;
  /**
   * A deposit's position in its transaction, as the chain's deposit id names it (an output, an account key, a balance
   * change); the sim's transfers have one, at 0.
   */
  index?: number;
}

/**
 * What the checks read from the chains, so the same checks run over the simulated ledgers (`simFacts`) and over live
 * chains (tests/support/chaos_live.ts). Everything else they read comes from the KV file.
 */
export interface ChainFacts {
  nativeChains: readonly NativeChain[];
  evmChains: readonly EvmChain[];
  /**
   * Every transaction on `chain` the checks care about: native chains, deposits (`transfer`) and payouts (`payout`);
   * EVM chains, mints, faucet credits, uAsset transfers (`erc20`) and on-chain burns (`burn`).
   */
  txs(chain: ChainSymbol): Promise<LedgerTx[]>;
  /** Transactions accepted by a chain and not yet in a block. */
  pending(): Promise<number>;
  /** The transaction the uAsset contract on `chain` says minted `depositId`, or null. */
  mintedBy(chain: EvmChain, depositId: string): Promise<string | null>;
  /** uAsset balances per address over the EVM chains (their sum is the supply), and what the transfer address holds. */
  supply(transferAddress: string): Promise<{ supply: Map<UAsset, bigint>; atTransfer: Map<UAsset, bigint> }>;
  /** The operators' reconciliation (actors/reconciliation.ts) over the KV file and these chains. */
  reconcile(transferAddress: string): Promise<ReconciliationReport>;
}

/** The simulated ledgers' facts, read from the KV file they live in. */
export function simFacts(kv: Deno.Kv): ChainFacts {
  return {
    nativeChains: NATIVE_CHAINS,
    evmChains: EVM_CHAINS,
    txs: async (chain) => (await listValues<LedgerTx>(kv, ["sim", chain, "tx"])).map((e) => e.value),
    pending: async () => {
      let n = 0;
      for (const chain of CHAINS) n += (await listValues(kv, ["sim", chain, "pending"])).length;
      return n;
    },
    mintedBy: (chain, depositId) => new SimLedger(kv, chain).mintedBy(depositId),
    supply: async (transferAddress) => {
      const supply = new Map<UAsset, bigint>();
      const atTransfer = new Map<UAsset, bigint>();
      for (const chain of EVM_CHAINS) {
        for (const e of await listValues<bigint>(kv, ["sim", chain, "balance"])) {
          const [, , , address, asset] = e.key as [string, string, string, string, UAsset];
          supply.set(asset, (supply.get(asset) ?? 0n) + e.value);
          if (address === transferAddress) atTransfer.set(asset, (atTransfer.get(asset) ?? 0n) + e.value);
        }
      }
      return { supply, atTransfer };
    },
    // The sims' injected RPC errors are for the pipeline; here every read answers (`random` 1 never rolls an error).
    reconcile: (transferAddress) =>
      runReconciliation({
        kv,
        chains: simChains(kv, { random: () => 1 }),
        transferAddress,
        enabledChains: CHAINS,
        now: () => new Date(),
      }),
  };
}

/** A broadcast this long after its intent was recorded came from recovery (after a kill or an RPC error). */
const RECOVERED_AFTER_MS = 400;

function recoveredBroadcast(o: Order, t: LedgerTx): boolean {
  if (!Number.isFinite(t.submittedAt)) return false;
  const preparedAt = Date.parse(String(o.details.intent?.preparedAt));
  return Number.isFinite(preparedAt) && t.submittedAt - preparedAt >= RECOVERED_AFTER_MS;
}

async function listValues<T>(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvEntry<T>[]> {
  const out: Deno.KvEntry<T>[] = [];
  for await (const e of kv.list<T>({ prefix })) out.push(e);
  return out;
}

export type Verified = Omit<
  ChaosResult,
  | "options"
  | "dir"
  | "seconds"
  | "kills"
  | "trafficKills"
  | "drainKills"
  | "requestsAtKills"
  | "ordersAtKills"
  | "starts"
  | "unexpectedExits"
>;

/**
 * Every cold sweep settled, each completed one sent exactly once (one successful transaction, its recorded hash, its
 * amount to its destination), a dead one never landed, and no transaction to cold without its record.
 */
export async function checkColdSweeps(
  kv: Deno.Kv,
  nativeChains: readonly NativeChain[],
  coldTxs: Map<string, LedgerTx[]>,
  problem: (msg: string) => void,
): Promise<ColdSweepFigures> {
  const figures: ColdSweepFigures = { completed: 0, dead: 0, open: 0, moved: {} };
  const seen = new Set<string>();
  for (const chain of nativeChains) {
    for (const c of await listColdSweeps(kv, chain)) {
      const key = `cold-sweep:${c.id}`;
      seen.add(key);
      const landed = (coldTxs.get(key) ?? []).filter((t) => t.success && t.status === "included");
      if (c.status === "prepared") {
        figures.open++;
        problem(`cold sweep ${chain} ${c.id} still open`);
      } else if (c.status === "dead") {
        figures.dead++;
        if (landed.length > 0) problem(`dead cold sweep ${chain} ${c.id} landed: ${landed.map((t) => t.hash)}`);
      } else {
        figures.completed++;
        figures.moved[chain] = (figures.moved[chain] ?? 0n) + BigInt(c.amount);
        const ok = landed.length === 1 && landed[0].hash === c.txHash && landed[0].tx.kind === "payout" &&
          landed[0].tx.amount === BigInt(c.amount) && landed[0].tx.to === c.destination;
        if (!ok) {
          problem(`completed cold sweep ${chain} ${c.id}: ${landed.length} landed [${landed.map((t) => t.hash)}]`);
        }
      }
    }
  }
  for (const [key, ts] of coldTxs) {
    if (!seen.has(key) && ts.some((t) => t.success)) problem(`${ts.length} transaction(s) for ${key}, no record`);
  }
  return figures;
}

export async function verify(
  kvPath: string,
  ops: Op[],
  outcomes: Outcome[],
  transferAddress: string,
  problems: string[],
  factsOf: (kv: Deno.Kv) => ChainFacts = simFacts,
): Promise<Verified> {
  const kv = await openKv(kvPath);
  try {
    const facts = factsOf(kv);
    const nativeChains = facts.nativeChains;
    const evmChains = facts.evmChains;
    const problem = (msg: string) => problems.push(msg);
    const assets = new Map<NativeChain, AssetFigures>(nativeChains.map((c) => [c, {
      chain: c,
      token: NATIVE[c].token.symbol,
      uAsset: NATIVE[c].uAsset.symbol,
      deposits: 0,
      depositOrders: 0,
      depositsCompleted: 0,
      depositsFailed: 0,
      deposited: 0n,
      minted: 0n,
      burns: 0,
      burnOrders: 0,
      held: 0,
      burnsCompleted: 0,
      burnsFailed: 0,
      burned: 0n,
      paid: 0n,
      remainderWei: 0n,
    }]));

    // The chains: every transaction, all of which must be sealed by now.
    const txs = new Map<ChainSymbol, LedgerTx[]>();
    for (const chain of [...nativeChains, ...evmChains]) {
      const list = await facts.txs(chain);
      txs.set(chain, list);
      for (const t of list) if (t.status !== "included") problem(`${chain} transaction ${t.hash} is ${t.status}`);
    }
    const pendingSimTxs = await facts.pending();

    // Each deposit and uAsset transfer on chain back to the one request that made it.
    const byKey = new Map<string, Op>();
    const opKey = (op: Op) =>
      op.kind === "deposit"
        ? `deposit|${op.chain}|${op.address}|${op.amount}`
        : `burn|${op.evm}|${op.wallet}|${op.asset}|${op.amount}`;
    for (const op of ops) byKey.set(opKey(op), op);
    const landed = new Map<number, LedgerTx>();
    const matchLanded = (key: string, t: LedgerTx) => {
      const op = byKey.get(key);
      if (!op) return problem(`transaction ${t.hash} (${key}) matches no request`);
      if (landed.has(op.id)) return problem(`request ${op.id} landed twice: ${landed.get(op.id)!.hash}, ${t.hash}`);
      landed.set(op.id, t);
    };
    const ours = new Map<NativeChain, Set<string>>();
    for (const chain of nativeChains) {
      ours.set(chain, new Set((await listDepositAddresses(kv, chain)).keys()));
      for (const t of txs.get(chain)!) {
        if (t.tx.kind !== "transfer") continue;
        if (!ours.get(chain)!.has(t.tx.to)) {
          problem(`${chain} deposit ${t.hash} to ${t.tx.to}, not one of our addresses`);
          continue;
        }
        matchLanded(`deposit|${chain}|${t.tx.to}|${t.tx.amount}`, t);
      }
    }
    for (const chain of evmChains) {
      for (const t of txs.get(chain)!) {
        if (t.tx.kind !== "erc20" || t.tx.to !== transferAddress) continue;
        matchLanded(`burn|${chain}|${t.tx.from}|${t.tx.asset}|${t.tx.amount}`, t);
      }
    }
    const requests = { deposits: emptyRequests(), burns: emptyRequests() };
    ops.forEach((op, i) => {
      const r = op.kind === "deposit" ? requests.deposits : requests.burns;
      const outcome = outcomes[i];
      const tx = landed.get(op.id);
      r.sent++;
      if (outcome.state === "accepted") {
        r.accepted++;
        if (!tx) problem(`accepted ${op.kind} ${outcome.txHash} (request ${op.id}) is not on chain`);
        else if (tx.hash !== outcome.txHash) {
          problem(`request ${op.id}: accepted as ${outcome.txHash}, landed ${tx.hash}`);
        }
      } else if (outcome.state === "refused") {
        r.refused++;
        if (tx) problem(`refused request ${op.id} (${outcome.detail}) is on chain as ${tx.hash}`);
      } else {
        r.lost++;
        if (tx) r.lostLanded++;
      }
    });

    // Orders, grouped by the transfer they come from.
    const orders = (await listValues<Order>(kv, ["order"])).map((e) => e.value);
    const bySource = new Map<string, Order[]>();
    const sourceKey = (chain: string, hash: string, index: number) => `${chain}|${hash}|${index}`;
    for (const o of orders) {
      const s = o.details.source;
      const key = sourceKey(s.chain, s.txHash, s.index);
      bySource.set(key, [...(bySource.get(key) ?? []), o]);
    }
    const held = new Map<string, HeldTransfer>();
    for (const h of await listHeld(kv)) held.set(sourceKey(h.chain, h.txHash, h.index), h);
    const explained = new Set<string>();
    let ordersNotTerminal = 0;
    const failedByMessage: Record<string, number> = {};
    const allowed = new Set<string>(ORDER_ERROR_TEXTS);
    for (const o of orders) {
      if (!TERMINAL.has(o.status)) {
        ordersNotTerminal++;
        problem(`order ${o.id} (${o.type}) stuck in ${o.status}`);
      }
      if (o.status === "failed") {
        failedByMessage[o.errorMessage ?? "(none)"] = (failedByMessage[o.errorMessage ?? "(none)"] ?? 0) + 1;
        if (!allowed.has(o.errorMessage ?? "")) problem(`order ${o.id} failed with a message not in the spec`);
      }
    }
    for (const op of ops) {
      const t = landed.get(op.id);
      if (!t) continue;
      const chain = op.kind === "deposit" ? op.chain : op.evm;
      const key = sourceKey(chain, t.hash, t.index ?? 0);
      explained.add(key);
      const group = bySource.get(key) ?? [];
      const seen = (await kv.get<SeenTransfer>(seenKey(chain, t.hash, t.index ?? 0))).value;
      const a = assets.get(op.kind === "deposit" ? op.chain : op.native)!;
      if (op.kind === "deposit") a.deposits++;
      else a.burns++;
      if (!t.success) problem(`request ${op.id}: transaction ${t.hash} failed on chain (${t.reason})`);
      if (op.expect === "held") {
        const h = held.get(key);
        if (seen?.kind !== "held" || !h) problem(`burn ${t.hash} without configuration: not held (${seen?.kind})`);
        else if (h.amount !== op.amount.toString()) problem(`held ${t.hash}: amount ${h.amount} != ${op.amount}`);
        else a.held++;
        if (group.length > 0) problem(`burn ${t.hash} without configuration has ${group.length} orders`);
        continue;
      }
      if (held.has(key)) problem(`${op.kind} ${t.hash} was held`);
      if (group.length !== 1) {
        problem(`${op.kind} ${t.hash} on ${chain} has ${group.length} orders`);
        if (group.length === 0) continue;
      }
      const o = group[0];
      if (seen?.kind !== "order" || seen.orderId !== o.id) problem(`${op.kind} ${t.hash}: dedupe record ${seen}`);
      if (o.amount !== op.amount.toString()) problem(`order ${o.id}: amount ${o.amount} != ${op.amount}`);
      if (op.kind === "deposit") {
        a.depositOrders++;
        if (o.type !== "mint" || o.owner !== op.owner || o.destinationChain !== op.dest || o.sourceChain !== op.chain) {
          problem(`order ${o.id} does not describe deposit ${t.hash}`);
        }
      } else {
        a.burnOrders++;
        if (
          o.type !== "burn" || o.owner !== op.wallet || o.destinationChain !== op.native ||
          o.destinationWallet !== op.destination
        ) problem(`order ${o.id} does not describe burn ${t.hash}`);
      }
      const completed = o.status === "completed";
      if (o.status !== op.expect || (o.status === "failed" && o.errorMessage !== op.message)) {
        problem(
          `order ${o.id} (${op.kind} of ${op.amount}) ended ${o.status} "${o.errorMessage}", expected ${op.expect}`,
        );
      }
      if (op.kind === "deposit") {
        if (completed) {
          a.depositsCompleted++;
          a.deposited += BigInt(o.amount);
        } else if (o.status === "failed") a.depositsFailed++;
      } else if (completed) {
        a.burnsCompleted++;
        a.burned += BigInt(o.amount);
        if (o.type === "burn") a.remainderWei += BigInt(o.details.remainderWei ?? "0");
      } else if (o.status === "failed") a.burnsFailed++;
    }
    for (const [key, group] of bySource) {
      if (!explained.has(key)) problem(`${group.length} order(s) from transfer ${key}, which no request made`);
    }
    for (const key of held.keys()) if (!explained.has(key)) problem(`held record for ${key}, which no request made`);

    // Mints: exactly one mint transaction per completed mint order, none for the others.
    const mints = new Map<string, { chain: EvmChain; t: LedgerTx }[]>();
    const mintedWei = new Map<UAsset, bigint>();
    const faucetWei = new Map<UAsset, bigint>();
    for (const chain of evmChains) {
      for (const t of txs.get(chain)!) {
        if (t.tx.kind === "faucet" && t.success) {
          faucetWei.set(t.tx.asset, (faucetWei.get(t.tx.asset) ?? 0n) + t.tx.amount);
        }
        if (t.tx.kind !== "mint") continue;
        mints.set(t.tx.depositId, [...(mints.get(t.tx.depositId) ?? []), { chain, t }]);
        if (t.success) mintedWei.set(t.tx.asset, (mintedWei.get(t.tx.asset) ?? 0n) + t.tx.amount);
      }
    }
    let mintsExactlyOnce = 0;
    let recoveredBroadcasts = 0;
    let completedMints = 0;
    const mintOrderDeposits = new Set<string>();
    for (const o of orders.filter((o) => o.type === "mint")) {
      const depositId = o.details.depositId.toLowerCase();
      mintOrderDeposits.add(depositId);
      const attempts = mints.get(depositId) ?? [];
      if (o.status !== "completed") {
        if (attempts.length > 0) problem(`${o.status} mint order ${o.id} has ${attempts.length} mint transaction(s)`);
        continue;
      }
      completedMints++;
      const native = o.sourceChain as NativeChain;
      const dest = o.destinationChain as EvmChain;
      const [m] = attempts;
      const onChain = await facts.mintedBy(dest, depositId);
      if (
        attempts.length === 1 && m.t.success && m.chain === dest && m.t.hash === o.transactionHash &&
        onChain === m.t.hash && m.t.tx.kind === "mint" && m.t.tx.amount === nativeToWei(native, BigInt(o.amount)) &&
        m.t.tx.to === o.owner && m.t.tx.asset === NATIVE[native].uAsset.symbol
      ) {
        mintsExactlyOnce++;
        if (recoveredBroadcast(o, m.t)) recoveredBroadcasts++;
      } else {
        problem(
          `completed mint ${o.id}: ${attempts.length} mint tx(s) [${
            attempts.map((x) => `${x.chain}:${x.t.hash}:${x.t.success ? "ok" : x.t.reason}`).join(", ")
          }], order tx ${o.transactionHash}, contract says ${onChain}`,
        );
      }
    }
    for (const [depositId, attempts] of mints) {
      if (!mintOrderDeposits.has(depositId)) problem(`${attempts.length} mint(s) of deposit ${depositId}, no order`);
    }

    // Payouts: exactly one per completed burn order, none for the others.
    const payouts = new Map<string, { chain: NativeChain; t: LedgerTx }[]>();
    const coldTxs = new Map<string, LedgerTx[]>();
    for (const chain of nativeChains) {
      for (const t of txs.get(chain)!) {
        if (t.tx.kind !== "payout") continue;
        if (t.tx.orderId.startsWith("cold-sweep:")) {
          // A cold sweep (actors/cold_sweep.ts): payout-shaped, checked against its own records below.
          coldTxs.set(t.tx.orderId, [...(coldTxs.get(t.tx.orderId) ?? []), t]);
          continue;
        }
        payouts.set(t.tx.orderId, [...(payouts.get(t.tx.orderId) ?? []), { chain, t }]);
        if (t.success) assets.get(chain)!.paid += t.tx.amount;
      }
    }
    let payoutsExactlyOnce = 0;
    let completedBurns = 0;
    const burnOrderIds = new Set<string>();
    for (const o of orders.filter((o): o is BurnOrder => o.type === "burn")) {
      burnOrderIds.add(o.id);
      const attempts = payouts.get(o.id) ?? [];
      if (o.status !== "completed") {
        if (attempts.length > 0) problem(`${o.status} burn order ${o.id} has ${attempts.length} payout(s)`);
        continue;
      }
      completedBurns++;
      const native = o.destinationChain as NativeChain;
      const [p] = attempts;
      if (o.details.nativeAmount === undefined || o.details.remainderWei === undefined) {
        problem(`completed burn order ${o.id} has no payout amounts`);
        continue;
      }
      const nativeAmount = BigInt(o.details.nativeAmount);
      const remainder = BigInt(o.details.remainderWei);
      if (
        attempts.length === 1 && p.t.success && p.chain === native && p.t.hash === o.transactionHash &&
        p.t.tx.kind === "payout" && p.t.tx.amount === nativeAmount && p.t.tx.to === o.destinationWallet &&
        nativeAmount * weiPerNativeUnit(native) + remainder === BigInt(o.amount) &&
        remainder < weiPerNativeUnit(native)
      ) {
        payoutsExactlyOnce++;
        if (recoveredBroadcast(o, p.t)) recoveredBroadcasts++;
      } else {
        problem(
          `completed burn ${o.id}: ${attempts.length} payout(s) [${
            attempts.map((x) => `${x.chain}:${x.t.hash}:${x.t.success ? "ok" : x.t.reason}`).join(", ")
          }], order tx ${o.transactionHash}, native ${nativeAmount} + ${remainder} wei of ${o.amount}`,
        );
      }
    }
    for (const [orderId, attempts] of payouts) {
      if (!burnOrderIds.has(orderId)) problem(`${attempts.length} payout(s) for ${orderId}, no such burn order`);
    }

    // Sums per asset, and the uAsset supply on the chains.
    const { supply: balances, atTransfer } = await facts.supply(transferAddress);
    const burnedOnChain = new Map<UAsset, bigint>();
    for (const t of landed.values()) {
      if (t.tx.kind === "erc20") burnedOnChain.set(t.tx.asset, (burnedOnChain.get(t.tx.asset) ?? 0n) + t.tx.amount);
    }
    // On-chain burns (docs/onchain-burn.md): every completed burn order in exactly one burned batch, each batch burned
    // by exactly one successful transaction, nothing else burned.
    const burnedByBatches = new Map<UAsset, bigint>();
    const redeemedByOrders = new Map<UAsset, bigint>();
    const burnTxs = new Map<string, LedgerTx[]>();
    for (const chain of evmChains) {
      for (const t of txs.get(chain)!) {
        if (t.tx.kind !== "burn" || !t.success) continue;
        burnTxs.set(t.tx.batchId, [...(burnTxs.get(t.tx.batchId) ?? []), t]);
        burnedByBatches.set(t.tx.asset, (burnedByBatches.get(t.tx.asset) ?? 0n) + t.tx.amount);
      }
    }
    const batchOf = new Map<string, string>();
    const burnBatches = { total: 0, burned: 0, orders: 0 };
    for (const chain of evmChains) {
      for (const b of await listBurnBatches(kv, chain, 10_000)) {
        const sent = burnTxs.get(b.id) ?? [];
        burnTxs.delete(b.id);
        burnBatches.total++;
        burnBatches.orders += b.orders.length;
        if (b.status === "burned") burnBatches.burned++;
        else problem(`burn batch ${b.id} on ${chain} still ${b.status}`);
        if (sent.length !== 1 || sent[0].hash !== b.burnedTxHash || sent[0].tx.amount !== BigInt(b.totalWei)) {
          problem(
            `burn batch ${b.id}: ${sent.length} successful burn(s) [${sent.map((t) => t.hash)}], ${b.burnedTxHash}`,
          );
        }
        for (const { orderId } of b.orders) {
          if (batchOf.has(orderId)) problem(`order ${orderId} in burn batches ${batchOf.get(orderId)} and ${b.id}`);
          batchOf.set(orderId, b.id);
        }
      }
    }
    for (const [batchId, sent] of burnTxs) problem(`${sent.length} burn(s) for batch ${batchId}, no such batch`);
    for (const o of orders) {
      if (o.type !== "burn") continue;
      const batch = batchOf.get(o.id);
      if (o.status === "completed") {
        redeemedByOrders.set(o.token as UAsset, (redeemedByOrders.get(o.token as UAsset) ?? 0n) + BigInt(o.amount));
        if (!batch) problem(`completed burn order ${o.id} is in no burn batch`);
      } else if (batch) problem(`${o.status} burn order ${o.id} is in burn batch ${batch}`);
    }
    const burnsDueLeft = (await listBurnsDue(kv)).length;
    if (burnsDueLeft > 0) problem(`${burnsDueLeft} burn-due record(s) left after the burns settled`);
    // A burn-due record moved aside means its transfer was found gone: no transfer of this run may be.
    const leftOut = await listLeftOutBurns(kv);
    if (leftOut.length > 0) problem(`${leftOut.length} burn-due record(s) left out: ${leftOut.map((b) => b.orderId)}`);
    const sweeps = await checkSweeps(kv, nativeChains, problem);
    const coldSweeps = await checkColdSweeps(kv, nativeChains, coldTxs, problem);
    for (const a of assets.values()) {
      const unit = weiPerNativeUnit(a.chain);
      const wei = mintedWei.get(a.uAsset) ?? 0n;
      if (wei % unit !== 0n) problem(`${a.uAsset}: ${wei} wei minted is not a whole number of ${a.token} units`);
      a.minted = wei / unit;
      if (a.deposited !== a.minted) problem(`${a.token}: deposited ${a.deposited} (completed) != minted ${a.minted}`);
      if (a.burned !== a.paid * unit + a.remainderWei) {
        problem(`${a.uAsset}: burned ${a.burned} wei != paid ${a.paid} x ${unit} + remainder ${a.remainderWei}`);
      }
      const supply = balances.get(a.uAsset) ?? 0n;
      const burnedTx = burnedByBatches.get(a.uAsset) ?? 0n;
      const expected = (faucetWei.get(a.uAsset) ?? 0n) + wei - burnedTx;
      if (supply !== expected) problem(`${a.uAsset}: supply ${supply} != faucet + minted - burned ${expected}`);
      if (burnedTx !== (redeemedByOrders.get(a.uAsset) ?? 0n)) {
        problem(`${a.uAsset}: burned on chain ${burnedTx} != redeemed ${redeemedByOrders.get(a.uAsset) ?? 0n}`);
      }
      if ((atTransfer.get(a.uAsset) ?? 0n) !== (burnedOnChain.get(a.uAsset) ?? 0n) - burnedTx) {
        problem(
          `${a.uAsset}: transfer address holds ${atTransfer.get(a.uAsset)} != sent ${
            burnedOnChain.get(a.uAsset)
          } - burned ${burnedTx}`,
        );
      }
    }

    // The operators' own check must agree: every coin adds up, nothing unknown.
    const reconciliation = await facts.reconcile(transferAddress);
    for (const m of reconciliation.mismatches) {
      problem(`reconciliation: ${m.kind} ${m.asset} ${m.chain ?? "(all chains)"}: ${m.message}`);
    }
    for (const u of reconciliation.unknown) problem(`reconciliation: unknown ${u}`);

    const dueLeft = await countDue(kv);
    if (dueLeft > 0) problem(`${dueLeft} due entries left after every order ended`);
    if (pendingSimTxs > 0) problem(`${pendingSimTxs} sim transactions still pending`);
    return {
      requests,
      assets: [...assets.values()],
      failedByMessage,
      orders: orders.length,
      transfers: landed.size,
      ordersNotTerminal,
      mintsExactlyOnce,
      completedMints,
      payoutsExactlyOnce,
      completedBurns,
      dueLeft,
      sweeps,
      coldSweeps,
      burnBatches,
      recoveredBroadcasts,
      pendingSimTxs,
      errorsLogged: [],
      reconciliation,
      problems,
    };
  } finally {
    kv.close();
  }
}

/**
 * Sweeps (kv/treasury.ts, docs/reconciliation.md): every record completed, or proven dead and followed by a completed
 * sweep of the same address (its successor `<order>#<n+1>`, or a later sweep that took the address's whole balance
 * under the address lock); none still open; no sweep due mark left.
 */
async function checkSweeps(
  kv: Deno.Kv,
  nativeChains: readonly NativeChain[],
  problem: (msg: string) => void,
): Promise<SweepFigures> {
  const figures: SweepFigures = { completed: 0, dead: 0, open: 0, dueLeft: 0 };
  const accountChains = nativeChains.flatMap((c) => {
    const f = chainFamily(c);
    return f.family === "account" ? [f.chain] : [];
  });
  for (const chain of accountChains) {
    const { sweeps, invalid } = await listSweeps(kv, chain);
    for (const e of invalid) problem(`${chain} sweep record fails its schema: ${e.message}`);
    const byId = new Map(sweeps.map((s) => [s.sweepId, s]));
    const settledLater = (dead: Sweep): boolean => {
      const [base, n] = dead.sweepId.split("#");
      const next = byId.get(`${base}#${Number(n ?? 0) + 1}`);
      if (next) return next.status === "completed" || (next.status === "dead" && settledLater(next));
      return sweeps.some((s) =>
        s.status === "completed" && s.from.address === dead.from.address &&
        Date.parse(s.preparedAt) >= Date.parse(dead.preparedAt)
      );
    };
    for (const s of sweeps) {
      if (s.status === "completed") figures.completed++;
      else if (s.status === "dead") {
        figures.dead++;
        if (!settledLater(s)) problem(`${chain} sweep ${s.sweepId} proven dead with no completed sweep after it`);
      } else {
        figures.open++;
        problem(`${chain} sweep ${s.sweepId} of ${s.from.address} still ${s.status}`);
      }
    }
    const due = await listValues(kv, ["treasury_sweep_due", chain]);
    figures.dueLeft += due.length;
    if (due.length > 0) problem(`${due.length} ${chain} sweep due mark(s) left: ${due.map((e) => e.key[2])}`);
  }
  return figures;
}

function emptyRequests(): RequestFigures {
  return { sent: 0, accepted: 0, refused: 0, lost: 0, lostLanded: 0 };
}

// ---- the figures ----

export function formatChaos(r: ChaosResult): string {
  const pad = (v: unknown, n: number) => String(v).padStart(n);
  const lines: string[] = [];
  const o = r.options;
  lines.push(
    `chaos run (${r.mode ?? "sim"}): seed ${o.seed}, ${o.operations} operations, ${o.wallets} wallets, ` +
      `${o.concurrency} senders, blocks every ${o.blockMs} ms, RPC error rate ${o.rpcErrorRate}, ` +
      `${r.seconds.toFixed(1)} s`,
  );
  lines.push(
    `kills: ${r.kills} SIGKILLs (${r.trafficKills} while sending, ${r.drainKills} while draining), ` +
      `${r.starts} server starts, ${r.unexpectedExits.length} exits on its own`,
  );
  lines.push(
    `  requests in flight at the kills while sending: ${r.requestsAtKills.join(", ") || "-"}; ` +
      `orders not terminal at the kills while draining: ${r.ordersAtKills.join(", ") || "-"}`,
  );
  lines.push(
    `requests    ${pad("sent", 6)}${pad("accepted", 10)}${pad("refused", 9)}${pad("lost", 6)}${pad("lost+landed", 13)}`,
  );
  for (const [name, q] of Object.entries(r.requests)) {
    lines.push(
      `  ${name.padEnd(9)} ${pad(q.sent, 6)}${pad(q.accepted, 10)}${pad(q.refused, 9)}${pad(q.lost, 6)}${
        pad(q.lostLanded, 13)
      }`,
    );
  }
  lines.push(
    `mint      ${pad("deposits", 9)}${pad("orders", 8)}${pad("completed", 10)}${pad("failed", 8)}${
      pad("deposited (native units)", 26)
    }${pad("minted (native units)", 24)}`,
  );
  for (const a of r.assets) {
    lines.push(
      `  ${a.token.padEnd(7)} ${pad(a.deposits, 9)}${pad(a.depositOrders, 8)}${pad(a.depositsCompleted, 10)}${
        pad(a.depositsFailed, 8)
      }${pad(a.deposited, 26)}${pad(a.minted, 24)}  ${a.deposited === a.minted ? "=" : "MISMATCH"}`,
    );
  }
  lines.push(
    `burn      ${pad("burns", 6)}${pad("orders", 7)}${pad("held", 5)}${pad("completed", 10)}${pad("failed", 7)}${
      pad("burned (wei)", 26)
    }${pad("paid (native)", 16)}${pad("remainder (wei)", 21)}`,
  );
  for (const a of r.assets) {
    const ok = a.burned === a.paid * weiPerNativeUnit(a.chain) + a.remainderWei;
    lines.push(
      `  ${a.uAsset.padEnd(7)} ${pad(a.burns, 6)}${pad(a.burnOrders, 7)}${pad(a.held, 5)}${pad(a.burnsCompleted, 10)}${
        pad(a.burnsFailed, 7)
      }${pad(a.burned, 26)}${pad(a.paid, 16)}${pad(a.remainderWei, 21)}  ${ok ? "= paid x 10^" : "MISMATCH "}${
        18 - NATIVE[a.chain].token.decimals
      } + remainder`,
    );
  }
  const rec = r.reconciliation;
  lines.push(
    `reconciliation: ${
      rec.ok ? "OK" : `${rec.mismatches.length} MISMATCH(ES), ${rec.unknown.length} unknown`
    } (deposits = minted on chain, transfer address = paid + remainders + held + failed, supply <= controlled)`,
  );
  lines.push(
    `sweeps: ${r.sweeps.completed} completed, ${r.sweeps.dead} proven dead (each followed by a completed one), ` +
      `${r.sweeps.open} open, ${r.sweeps.dueLeft} due marks left; on-chain burn batches: ` +
      `${r.burnBatches.burned}/${r.burnBatches.total} burned (${r.burnBatches.orders} burn orders)`,
  );
  if (r.coldSweeps.completed + r.coldSweeps.dead + r.coldSweeps.open > 0) {
    const moved = Object.entries(r.coldSweeps.moved).map(([c, n]) => `${c} ${n}`).join(", ");
    lines.push(
      `cold sweeps: ${r.coldSweeps.completed} completed (moved ${moved}), ${r.coldSweeps.dead} proven dead, ` +
        `${r.coldSweeps.open} open`,
    );
  }
  const failed = Object.entries(r.failedByMessage).map(([m, n]) => `"${m}" ${n}`).join(", ") || "none";
  lines.push(`failed orders by message: ${failed}`);
  lines.push(
    `checks: ${r.transfers} transfers on chain -> ${r.orders} orders + ${r.assets.reduce((s, a) => s + a.held, 0)} ` +
      `held; ${r.ordersNotTerminal} orders not terminal; mints exactly once ${r.mintsExactlyOnce}/${r.completedMints}; ` +
      `payouts exactly once ${r.payoutsExactlyOnce}/${r.completedBurns}; ${r.dueLeft} due entries left; ` +
      `${r.pendingSimTxs} transactions pending on the chains; ` +
      (r.mode === "live"
        ? "broadcast times are not known on live chains"
        : `${r.recoveredBroadcasts} mints/payouts broadcast >= ${RECOVERED_AFTER_MS} ms after their intent was ` +
          "recorded (recovery after a kill or RPC error)"),
  );
  if (r.errorsLogged.length > 0) {
    lines.push(
      `server logged ${r.errorsLogged.length} error line(s), first: ${r.errorsLogged.slice(0, 3).join(" | ")}`,
    );
  }
  lines.push(
    r.problems.length === 0
      ? "problems: none"
      : `problems (${r.problems.length}):\n  ${r.problems.slice(0, 30).join("\n  ")}`,
  );
  return lines.join("\n");
}
