/**
 * scripts/walkthrough.sh through the partner client (client/mod.ts): a mint and a burn on the simulated chains,
 * waiting on the wallet's order events (SSE) instead of polling. Run it from the repository root while
 * `deno task dev` serves:
 *
 *   deno install                   # once: the client's libraries are in deno.json, installed by hand
 *   deno run -A scripts/walkthrough.ts
 *
 * BASE_URL (default http://localhost:8000) names the server, WAIT_SECONDS (default 120) bounds each wait for an
 * order. It exits non-zero, saying why, on any failure. The API key comes from `deno task admin api-key create`, as an
 * operator would run it on the server's KV (or from API_KEY when set).
 */
import { ApiError, createClient, type OrderEvent } from "../client/mod.ts";

const BASE_URL = Deno.env.get("BASE_URL") ?? "http://localhost:8000";
const WAIT_SECONDS = Number(Deno.env.get("WAIT_SECONDS") ?? "120");

function fail(why: string): never {
  console.error(`walkthrough failed: ${why}`);
  Deno.exit(1);
}

/** 1. An operator creates an API key for a partner; the key is the last line printed, shown once. */
async function operatorApiKey(): Promise<string> {
  const given = Deno.env.get("API_KEY");
  if (given) return given;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", "api-key", "create", "--partner", "acme"],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const key = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  if (!out.success || !key.includes(".")) fail("deno task admin api-key create printed no key");
  return key;
}

const randomWallet = () =>
  "0x" + Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, "0")).join("");

async function main() {
  const apiKey = await operatorApiKey();

  // 2. The partner's client, bound to its EVM wallet (a new one each run): it gets the token itself (valid 365 days).
  const walletAddress = randomWallet();
  const client = createClient({ baseUrl: BASE_URL, apiKey, walletAddress });
  await client.auth.token();

  // The wallet's order events from its first one on (lastEventId 0): nothing is missed while we act below.
  const events = client.orders.watch({ lastEventId: 0 });
  /** Waits for the wallet's order of `type` to complete, printing each status it enters. */
  const waitFor = async (type: "mint" | "burn") => {
    const timer = setTimeout(
      () => fail(`the ${type} order did not complete within ${WAIT_SECONDS}s`),
      WAIT_SECONDS * 1e3,
    );
    try {
      for (;;) {
        const next: IteratorResult<OrderEvent> = await events.next();
        if (next.done) fail("the event stream ended");
        const { order } = next.value;
        if (order.type !== type) continue;
        console.log(`${type} order ${order.status}`);
        if (order.status === "completed") return order;
        if (order.status === "failed" || order.status === "cancelled") {
          fail(`the ${type} order is ${order.status}: ${JSON.stringify(order)}`);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  };

  // 3. A deposit address: SOL sent here is minted as uSOL to the wallet on Base.
  const { address } = await client.mint.createWallet({ chain: "sol", destinationChain: "base" });
  console.log(`deposit address: ${address}`);

  // 4. Send 0.5 SOL (500000000 lamports) to it on the simulated Solana.
  await client.sim.deposit({ chain: "sol", address, amount: "500000000" });

  // 5. The order goes pending (waiting for confirmations) -> processing -> minting -> completed, in a few seconds.
  const mint = await waitFor("mint");
  console.log(`mint order completed: ${JSON.stringify(mint)}`);
  const minted = await client.sim.balance({ chain: "base", address: walletAddress, token: "uSOL" });
  if (BigInt(minted.balance) !== 500_000_000_000_000_000n) fail(`expected 0.5 uSOL (18 decimals): ${minted.balance}`);
  console.log(`0.5 uSOL minted to ${walletAddress} on Base`);

  // 6. Burn: say where redeemed SOL goes, then send 1.5 uSOL from the wallet to the shared transfer address.
  const dest = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
  const before = BigInt((await client.sim.balance({ chain: "sol", address: dest })).balance);
  await client.burn.createWallet({ destinationChain: "sol", destinationAddress: dest });
  await client.sim.faucet({ chain: "base", address: walletAddress, token: "uSOL", amount: "1000000000000000000" });
  await client.sim.transfer({ chain: "base", from: walletAddress, token: "uSOL", amount: "1500000000000000000" });

  // 7. The burn order completes and 1.5 SOL (1500000000 lamports) arrives at the destination.
  const burn = await waitFor("burn");
  console.log(`burn order completed: ${JSON.stringify(burn)}`);
  const after = BigInt((await client.sim.balance({ chain: "sol", address: dest })).balance);
  if (after - before !== 1_500_000_000n) fail(`expected 1.5 SOL more at ${dest}, got ${before} -> ${after} lamports`);
  console.log(`1.5 SOL arrived at ${dest} (${before} -> ${after} lamports)`);
  await events.return();

  // Public configuration, no token needed.
  await client.config.mint();
  await client.config.burn();
  console.log("walkthrough completed: a mint and a burn");
}

try {
  await main();
} catch (err) {
  fail(err instanceof ApiError ? `${err.operation} answered ${err.status}: ${err.message}` : String(err));
}
