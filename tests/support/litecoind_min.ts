/**
 * A minimal real Bitcoin-Core-family regtest node for configuration tests: Debian's `litecoind` (0.21), on 127.0.0.1
 * and free ports, in a temporary data directory, with no wallet use beyond `validateaddress`. Its
 * `getblockchaininfo.chain` is "regtest", which is what CHAIN_MODE=devnet demands of a doge node.
 *
 * Kept tiny on purpose: tests/support/litecoind.ts (the full helper, with mining and wallets) is written on another
 * branch; once both are merged this file should become a re-export of that one.
 *
 * Without litecoind the tests that need it skip with a LOUD message; under CI=true they fail instead.
 */

export const LITECOIND = "/usr/bin/litecoind";

export interface LitecoindMin {
  /** `http://u:p@127.0.0.1:<port>/`: the form DOGE_RPC_URLS takes. */
  url: string;
  /** One JSON-RPC 1.0 call; throws on a JSON-RPC error. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

/** True when litecoind can run here; false after a loud warning; throws under CI=true, where it must run. */
export async function litecoindAvailable(testName: string): Promise<boolean> {
  const found = await Deno.stat(LITECOIND).then(() => true, () => false);
  if (found) return true;
  if (Deno.env.get("CI") === "true") {
    throw new Error(`${testName}: ${LITECOIND} is missing and CI=true: install it (apt-get install -y litecoind)`);
  }
  console.warn(
    `\n!!!!! SKIPPED "${testName}": ${LITECOIND} is not installed (apt-get install -y litecoind). It runs in CI. !!!!!\n`,
  );
  return false;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

export async function startLitecoindMin(): Promise<LitecoindMin> {
  const dir = await Deno.makeTempDir({ prefix: "litecoind-min-" });
  const rpcPort = freePort();
  const child = new Deno.Command(LITECOIND, {
    args: [
      "-regtest",
      `-datadir=${dir}`,
      `-rpcport=${rpcPort}`,
      `-port=${freePort()}`,
      "-rpcuser=u",
      "-rpcpassword=p",
      "-rpcbind=127.0.0.1",
      "-rpcallowip=127.0.0.1",
      "-listen=0",
      "-daemon=0",
      "-server=1",
      "-printtoconsole=0",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const endpoint = `http://127.0.0.1:${rpcPort}/`;
  let id = 0;
  async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Basic ${btoa("u:p")}` },
      body: JSON.stringify({ jsonrpc: "1.0", id: ++id, method, params }),
    });
    const body = await res.json() as { result: T; error: { code: number; message: string } | null };
    if (body.error) throw new Error(`${method}: ${body.error.message} (code ${body.error.code})`);
    return body.result;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      // SIGKILL: the data directory is thrown away, and on SIGTERM litecoind waits ~30 s for the keep-alive HTTP
      // connections fetch leaves open before it exits.
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  // Ready when RPC answers (-28 "warming up" and refused connections mean not yet). Bounded by attempts, not time.
  for (let attempt = 0;; attempt++) {
    try {
      await rpc("getblockchaininfo");
      break;
    } catch (err) {
      if (attempt >= 300) {
        await stop();
        throw new Error(`litecoind did not answer RPC: ${err instanceof Error ? err.message : err}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url: `http://u:p@127.0.0.1:${rpcPort}/`, rpc, stop };
}
