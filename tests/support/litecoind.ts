/**
 * A real Bitcoin-Core-family node for tests: Debian's `litecoind` 0.21 on regtest, standing in for Dogecoin Core
 * (same RPC family; regtest P2PKH version 111 like Dogecoin regtest, so it accepts our doge regtest payouts and pays
 * our doge regtest deposit addresses). Started in a temporary datadir on free ports, with a legacy wallet funded by
 * mining; stopped and removed by `stop()`.
 *
 * Flags: `-txindex` (the adapter reads mined transactions by txid, as it needs on Dogecoin Core), `-listen=0` (no
 * peers), `-fallbackfee` (the wallet pays deposits without fee estimates), and `-vbparams=mweb:-2:0`: MWEB never
 * activates. Without it litecoind activates MWEB at regtest height 432, and from there every block needs a HogEx
 * transaction that cannot be built until something pegs into MWEB, so mining fails with `bad-txns-vin-empty`.
 * Dogecoin has no MWEB.
 *
 * Without litecoind the tests that need it skip with a loud message; under CI=true they fail instead (`.ci/run`
 * installs it).
 */
import { type UtxoRpc, utxoRpc } from "../../chains/utxo/rpc.ts";

export const LITECOIND = "/usr/bin/litecoind";

/** Whether litecoind tests run: true when installed; false (after a loud message) when not; throws under CI=true. */
export function litecoindAvailable(testFile: string): boolean {
  let found = false;
  try {
    found = Deno.statSync(LITECOIND).isFile;
  } catch {
    found = false;
  }
  if (found) return true;
  const message = `litecoind is not installed (${LITECOIND}): ${testFile} needs a Bitcoin-Core-family regtest node. ` +
    "Install it with `apt-get install -y litecoind`.";
  if (Deno.env.get("CI") === "true") throw new Error(`${message} CI=true: failing instead of skipping.`);
  console.error(`\n!!!!! SKIPPED: ${message} !!!!!\n`);
  return false;
}

export interface Litecoind {
  /** The RPC URL with credentials in its userinfo (what `DOGE_RPC_URLS` would hold). */
  url: string;
  port: number;
  /** A client for the node's own calls (wallet, mining, invalidateblock). */
  rpc: UtxoRpc;
  /** Raw call; throws `RpcError` with the node's code. */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** A legacy (P2PKH) address of the node's wallet: where mined coins go. */
  minerAddress: string;
  /** Mines `n` blocks to the wallet; returns their hashes. */
  mine(n: number): Promise<string[]>;
  /** Pays `sats` from the node's wallet to `address`; returns the txid. */
  send(address: string, sats: bigint): Promise<string>;
  /**
   * Spends one whole confirmed wallet coin to `address` (less a 0.001 fee), one output and no change: a transaction
   * whose only transfer is to `address`. Returns the txid and the amount paid.
   */
  sendWhole(address: string): Promise<{ txHash: string; amount: bigint }>;
  stop(): Promise<void>;
}

/** A decimal amount as the node prints it (exact text or a whole number) in sats. */
export function satsOf(amount: string | number): bigint {
  const [whole, frac = ""] = String(amount).split(".");
  return BigInt(whole) * 100_000_000n + BigInt(frac.padEnd(8, "0"));
}

/** Sats as the node's decimal amount text (8 decimals): never a float. */
export function coinsText(sats: bigint): string {
  const whole = sats / 100_000_000n;
  const frac = (sats % 100_000_000n).toString().padStart(8, "0");
  return `${whole}.${frac}`;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts a regtest node with a funded wallet (101 blocks mined: one mature coinbase, more as tests mine). */
export async function startLitecoind(opts: { fund?: boolean; txindex?: boolean } = {}): Promise<Litecoind> {
  const datadir = await Deno.makeTempDir({ prefix: "litecoind-regtest-" });
  const port = freePort();
  const user = "test";
  const password = crypto.randomUUID();
  const child = new Deno.Command(LITECOIND, {
    args: [
      "-regtest",
      `-datadir=${datadir}`,
      "-server",
      `-txindex=${opts.txindex === false ? 0 : 1}`,
      "-listen=0",
      "-discover=0",
      "-dnsseed=0",
      "-printtoconsole=0",
      `-rpcuser=${user}`,
      `-rpcpassword=${password}`,
      `-rpcport=${port}`,
      "-rpcbind=127.0.0.1",
      "-rpcallowip=127.0.0.1",
      `-port=${freePort()}`,
      "-fallbackfee=0.001",
      // Every wallet output P2PKH, as on Dogecoin: the reader sees the wallet as a sender (senderOf).
      "-addresstype=legacy",
      "-changetype=legacy",
      "-vbparams=mweb:-2:0",
      // An idle keep-alive RPC connection (the service's fetch pool keeps them) is closed after 1 s: `stop` waits for
      // open connections, which otherwise holds every test's teardown for the default 30 s.
      "-rpcservertimeout=1",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://${user}:${password}@127.0.0.1:${port}/`;
  const rpc = utxoRpc({ chain: "doge", urls: [url], timeoutMs: 30_000 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      await rpc.call("stop");
    } catch {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
    }
    await child.status;
    await Deno.remove(datadir, { recursive: true }).catch(() => {});
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await rpc.call("getblockchaininfo");
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`litecoind did not answer RPC in 30 s: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await rpc.call("createwallet", ["w"]);
    const minerAddress = await rpc.call<string>("getnewaddress", ["", "legacy"]);
    const node: Litecoind = {
      url,
      port,
      rpc,
      call: (method, params = []) => rpc.call(method, params),
      minerAddress,
      mine: (n) => rpc.call<string[]>("generatetoaddress", [n, minerAddress]),
      send: (address, sats) => rpc.call<string>("sendtoaddress", [address, coinsText(sats)]),
      async sendWhole(address) {
        const coins = await rpc.call<{ txid: string; vout: number; amount: string | number }[]>("listunspent", [1]);
        const coin = coins.find((c) => satsOf(c.amount) > 1_000_000n);
        if (!coin) throw new Error("litecoind: no confirmed wallet coin to spend; mine more blocks");
        const amount = satsOf(coin.amount) - 100_000n;
        const raw = await rpc.call<string>("createrawtransaction", [
          [{ txid: coin.txid, vout: coin.vout }],
          [{ [address]: coinsText(amount) }],
        ]);
        const signed = await rpc.call<{ hex: string }>("signrawtransactionwithwallet", [raw]);
        return { txHash: await rpc.call<string>("sendrawtransaction", [signed.hex]), amount };
      },
      stop,
    };
    if (opts.fund !== false) await node.mine(101);
    return node;
  } catch (err) {
    await stop();
    throw err;
  }
}
