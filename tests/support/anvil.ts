/**
 * A real EVM node for tests: anvil from the npm package `@foundry-rs/anvil-linux-amd64` (pinned in deno.json, so
 * Deno's npm resolution puts it in node_modules with no extra step), on 127.0.0.1 and a free port.
 *
 * Test-only: the keys below are anvil's public, well-known development keys. Never fund them anywhere real.
 */
import { fileURLToPath } from "node:url";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { EvmChain } from "../../chains/catalog.ts";
import { deployUAssets, parseSupplyCaps } from "../../chains/evm/deploy.ts";

const REPO_ROOT = new URL("../../", import.meta.url);
export const ANVIL_BIN = fileURLToPath(new URL("node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil", REPO_ROOT));

export const ANVIL_DEFAULT_CHAIN_ID = 31337;

/** The mnemonic anvil derives its ten funded dev accounts from (m/44'/60'/0'/0/i), 10,000 ETH each. */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";

/** Private keys of anvil's default accounts 0..9, in `eth_accounts` order. */
export const ANVIL_PRIVATE_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
] as const satisfies readonly `0x${string}`[];

export interface AnvilOptions {
  chainId?: number;
  /** Seconds between blocks (interval mining). Omitted: automine, one block per transaction. */
  blockTime?: number;
  /**
   * `--slots-in-an-epoch`: anvil's `safe` block is `latest - slots` and `finalized` is `latest - 2 * slots`.
   * Omitted: anvil's default, 32.
   */
  slotsInAnEpoch?: number;
  /** How long to wait for `eth_chainId` to answer. */
  readyTimeoutMs?: number;
}

export interface Anvil {
  url: string;
  port: number;
  chainId: number;
  /** Terminates the node and waits for it to exit. Idempotent; call it in `finally` (also after `kill()`). */
  stop(): Promise<void>;
  /** SIGKILL right away, without waiting: simulates a node crash. `stop()` still reaps the process. */
  kill(): void;
}

export class AnvilRpcError extends Error {
  constructor(readonly method: string, readonly code: number, message: string, readonly data?: unknown) {
    super(`${method}: ${message} (code ${code})`);
    this.name = "AnvilRpcError";
  }
}

let rpcId = 0;

/** Raw JSON-RPC, for the node's own methods: `evm_snapshot`, `evm_revert`, `evm_mine`, `anvil_setBlockTimestampInterval`... */
export async function anvilRpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const text = await res.text();
  if (!res.ok) throw new AnvilRpcError(method, res.status, `HTTP ${res.status}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text) as { result?: T; error?: { code: number; message: string; data?: unknown } };
  if (body.error) throw new AnvilRpcError(method, body.error.code, body.error.message, body.error.data);
  return body.result as T;
}

let binaryReady: Promise<string> | undefined;

/** Finds the anvil binary, installing the npm dependencies once if node_modules lacks it, and makes it executable. */
export function ensureAnvilBinary(): Promise<string> {
  binaryReady ??= locateAnvil().catch((err) => {
    binaryReady = undefined;
    throw err;
  });
  return binaryReady;
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

async function locateAnvil(): Promise<string> {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new Error(
      `anvil for tests comes from npm @foundry-rs/anvil-linux-amd64, which runs on linux x86_64 only (this is ${Deno.build.os} ${Deno.build.arch})`,
    );
  }
  let info = await statOrNull(ANVIL_BIN);
  if (!info) {
    // deno.json's imports reach node_modules by `deno install` (nodeModulesDir "manual", docs/runtime.md), which
    // `deno task test` runs first; this covers a plain `deno test` in a checkout that never ran it.
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["install"],
      cwd: fileURLToPath(REPO_ROOT),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    info = await statOrNull(ANVIL_BIN);
    if (!info) {
      const stderr = new TextDecoder().decode(out.stderr).slice(-2000);
      throw new Error(
        `anvil binary not found at ${ANVIL_BIN} even after \`deno install\` (exit ${out.code}). ` +
          `deno.json must import "npm:@foundry-rs/anvil-linux-amd64@…"; if node_modules ` +
          `was partly deleted, remove it whole and run \`deno install\` again.\n${stderr}`,
      );
    }
  }
  // Some npm extractors drop the exec bit of a package's binaries.
  if (info.mode !== null && (info.mode & 0o111) !== 0o111) await Deno.chmod(ANVIL_BIN, 0o755);
  return ANVIL_BIN;
}

/** A loopback port free right now (the caller binds it soon; another process may take it first). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A local URL nothing listens on: connections to it are refused at once. `path` stands for a provider's key. */
export function closedPortUrl(path = ""): string {
  return `http://127.0.0.1:${freePort()}${path}`;
}

// Best effort if a test forgets `stop()` or the runner exits early: no anvil outlives the test process.
const liveChildren = new Set<Deno.ChildProcess>();
globalThis.addEventListener("unload", () => {
  for (const child of liveChildren) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startAnvil(opts: AnvilOptions = {}): Promise<Anvil> {
  const bin = await ensureAnvilBinary();
  const chainId = opts.chainId ?? ANVIL_DEFAULT_CHAIN_ID;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 15_000;
  let lastError = "";
  // The free port is only reserved until we close it: another process may take it first, so retry on a new one.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort();
    const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--silent"];
    if (opts.blockTime !== undefined) args.push("--block-time", String(opts.blockTime));
    if (opts.slotsInAnEpoch !== undefined) args.push("--slots-in-an-epoch", String(opts.slotsInAnEpoch));
    const child = new Deno.Command(bin, { args, stdin: "null", stdout: "null", stderr: "piped" }).spawn();
    liveChildren.add(child);

    let stderr = "";
    const decoder = new TextDecoder();
    const stderrDone = child.stderr.pipeTo(
      new WritableStream({
        write(chunk) {
          if (stderr.length < 16_384) stderr += decoder.decode(chunk, { stream: true });
        },
      }),
    ).catch(() => {});
    let exited: Deno.CommandStatus | null = null;
    const status = child.status.then((s) => {
      exited = s;
      liveChildren.delete(child);
      return s;
    });

    let stopped: Promise<void> | null = null;
    const kill = () => {
      if (exited) return;
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
    };
    const stop = () => {
      stopped ??= (async () => {
        if (!exited) {
          try {
            child.kill("SIGTERM");
          } catch { /* already exited */ }
        }
        const timer = setTimeout(kill, 3_000);
        await status;
        clearTimeout(timer);
        await stderrDone;
      })();
      return stopped;
    };

    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + readyTimeoutMs;
    while (!exited && Date.now() < deadline) {
      try {
        const answered = await anvilRpc<string>(url, "eth_chainId");
        if (Number(answered) !== chainId) {
          await stop();
          throw new Error(`anvil on port ${port} answered chain id ${answered}, expected ${chainId}`);
        }
        return { url, port, chainId, stop, kill };
      } catch (err) {
        if (!(err instanceof TypeError)) throw err; // connection refused: not listening yet
      }
      await sleep(25);
    }
    await stop();
    const s = exited as Deno.CommandStatus | null;
    lastError = s
      ? `anvil exited with code ${s.code}${s.signal ? ` (${s.signal})` : ""}: ${stderr.trim()}`
      : `anvil did not answer eth_chainId on ${url} within ${readyTimeoutMs} ms: ${stderr.trim()}`;
    if (!/address already in use|os error 98/i.test(stderr)) break;
  }
  throw new Error(`could not start anvil (${bin}): ${lastError}`);
}

/**
 * The five uAssets on a test node: anvil's account 0 deploys them and is their admin, `minter` gets MINTER_ROLE, and
 * each supply cap is `supplyCap` whole tokens (by default more than any test mints), and the minter's allowance
 * `minterAllowance` whole tokens (by default as much as the default cap: a test about the cap never meets the allowance).
 */
export function deployTestUAssets(
  rpcUrl: string,
  minter: Address,
  opts: { chain?: EvmChain; chainId?: number; supplyCap?: string; minterAllowance?: string } = {},
) {
  const deployer = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
  return deployUAssets({
    chain: opts.chain ?? "base",
    rpcUrl,
    deployer,
    admin: deployer.address,
    minter,
    supplyCap: parseSupplyCaps(opts.supplyCap ?? "1000000000"),
    minterAllowance: parseSupplyCaps(opts.minterAllowance ?? "1000000000", "the minter allowance"),
    chainId: opts.chainId,
  });
}
