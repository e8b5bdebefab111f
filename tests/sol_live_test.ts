/**
 * The whole service over HTTP with live Solana against a Solana-RPC-shaped server (tests/support/solana_rpc_server.ts:
 * no validator runs here; it answers in the shapes Solana's RPC documents, verifies every ed25519 signature, runs
 * System Program transfers with the fee and rent rules, and drops a transaction whose blockhash expired).
 * `CHAIN_MODE=devnet` (the server's genesis hash is not mainnet-beta's), `SOL_RPC_URLS` pointing at it, Base live on
 * anvil. Deposit -> completed mint of uSOL -> swept into the hot wallet, the deposit address keeping its rent-exempt
 * reserve; a real uSOL burn -> a payout from the hot wallet with the partner's memo, exactly the burned lamports; a
 * payout the server drops is proven dead past its lastValidBlockHeight and re-signed once; a SIGKILL between recording
 * a payout and broadcasting it ends with the recorded bytes landing, once.
 */
import assert from "node:assert/strict";
import { NATIVE } from "../chains/catalog.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { openKv } from "../kv/open.ts";
import { getOrder, listOrders } from "../kv/orders.ts";
import { type Order } from "../model/order.ts";
import { readSweep } from "../kv/treasury.ts";
import { expectedDepositId, waitUntil } from "./support/chain_facts.ts";
import { ChildServer } from "./support/child_server.ts";
import { holder, type LiveBase, liveBase, minter } from "./support/live_base.ts";
import { depositAddress, FAST_PIPELINE, type Json, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, randomWallet, startTestServer, type TestServer, tokenFor } from "./support/server.ts";
import { signer as testSigner, stranger } from "./support/sol_env.ts";
import {
  FEE_PER_SIGNATURE,
  RENT_EXEMPT_MINIMUM_0,
  type SolanaRpcServer,
  startSolanaRpcServer,
} from "./support/solana_rpc_server.ts";

const LAMPORTS_TO_WEI = 10n ** 9n;
const SOL = 1_000_000_000n;
const RESERVE = NATIVE.sol.reserve!;
const TEST_MNEMONIC = "test test test test test test test test test test test junk";
/** Short blockhash lifetime (mainnet: 150 blocks), so an expiry passes in a second of 25 ms blocks. */
const VALIDITY = 20;

async function storedOrder(kv: Deno.Kv, id: string): Promise<Order> {
  const e = await getOrder(kv, id);
  if (!e.value) throw new Error(`no order ${id}`);
  return e.value;
}

function solEnv(live: LiveBase, sol: SolanaRpcServer, over: Record<string, string> = {}) {
  return {
    ...FAST_PIPELINE,
    ...live.env(),
    SOL_RPC_URLS: sol.url,
    // Deposits from here on are seen; nothing older is scanned.
    SOL_START_BLOCK: String(sol.finalizedSlot),
    SOL_BLOCK_MS: "25",
    ...over,
  };
}

async function solSetup() {
  const sol = startSolanaRpcServer({ blockhashValidity: VALIDITY });
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer(solEnv(live, sol));
  const stopBlocks = sol.produceEvery(25);
  const hot = server.services.pipeline!.chains.payer("sol").hotWallet!;
  return {
    sol,
    live,
    server,
    hot,
    async close() {
      await server.close();
      stopBlocks();
      await stopMining();
      await live.close();
      await sol.close();
    },
  };
}

/**
 * A deposit of `lamports` by a stranger to a new deposit address, finalized by the server, minted on anvil and swept
 * into the hot wallet. Asserts the exact mint, one Minted log, the completed sweep and the balances it left.
 */
async function mintAndSweep(s: Awaited<ReturnType<typeof solSetup>>, lamports: bigint) {
  const { server, sol, live, hot } = s;
  const kv = server.services.kv;
  const wallet = randomWallet().toLowerCase();
  const token = await tokenFor(server, wallet);
  const address = await depositAddress(server, token, "sol", "base");
  const hotBefore = sol.balance(hot);
  const sender = stranger(7);
  const signature = sol.inject({ payer: sender, credits: [{ to: address, lamports }] });
  const seen = new Map<string, string[]>();
  const [order] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), {
    seen,
    timeoutMs: 15_000,
  });
  assert.equal(order.status, "completed", JSON.stringify(order));
  assert.equal(order.token, "SOL");
  assert.equal(order.amount, lamports.toString());
  assert.equal(order.sourceWallet, sender);
  assert.deepEqual(seen.get(order.id)!.filter((x) => x === "pending" || x === "completed").at(-1), "completed");
  assert.equal(await live.balanceOf("uSOL", wallet), lamports * LAMPORTS_TO_WEI, "exact wei: lamports x 10^9");
  const stored = await storedOrder(kv, order.id);
  assert.equal(stored.details.source.txHash, signature);
  assert.equal(stored.details.depositId, await expectedDepositId("sol", signature, stored.details.source.index));
  const logs = await live.mintedLogs("uSOL", stored.details.depositId);
  assert.deepEqual(logs.map((l) => l.transactionHash), [order.transactionHash], "exactly one Minted log");

  // The sweeper moves the deposit into the hot wallet, recorded before broadcast, completed once finalized.
  const sweep = await waitUntil("the sweep completed", async () => {
    const sw = await readSweep(kv, "sol", order.id);
    return sw?.status === "completed" ? sw : null;
  }, 15_000);
  assert.equal(sweep.from.address, address);
  assert.equal(sweep.to, hot);
  assert.equal(sweep.amount, (lamports - RESERVE).toString(), "what leaves the address, the fee included");
  assert.equal(sweep.leave, RESERVE.toString());
  assert.equal(sweep.expiry?.kind, "height");
  const moved = lamports - RESERVE - FEE_PER_SIGNATURE;
  assert.deepEqual(sol.paymentsTo(hot).filter((p) => p.signature === sweep.txHash).map((p) => p.lamports), [moved]);
  assert.deepEqual(sol.memosOf(sweep.txHash), [`sweep ${order.id}`]);
  assert.equal(sol.balance(address), RESERVE, "the deposit address keeps its rent-exempt reserve");
  assert.equal(sol.balance(hot), hotBefore + moved, "the hot wallet grew by the swept amount less the fee");
  assert.equal(sweep.delivered, moved.toString(), "what the hot wallet received, recorded");
  assert.equal(sweep.fee, FEE_PER_SIGNATURE.toString(), "the fee the sweep paid, recorded apart");
  await waitUntil("the sweep mark cleared", async () => {
    for await (const _ of kv.list({ prefix: ["treasury_sweep_due", "sol"] })) return false;
    return true;
  });
  return { order, address, sweep, moved };
}

/** Registers `destination` (with `memo`) as the holder's sol burn destination; returns the holder's token. */
async function solBurner(server: TestServer, destination: string, memo?: string) {
  const token = await tokenFor(server, holder.address);
  const configured = await call(server, "POST", "/burn/wallets", {
    token,
    body: { destinationChain: "sol", destinationAddress: destination, ...(memo ? { memo } : {}) },
  });
  assert.equal(configured.status, 201, JSON.stringify(configured.body));
  return token;
}

// ---------------------------------------------------------------- 1. deposit -> mint -> sweep

Deno.test("live sol on a Solana-RPC-shaped server: a deposit mints exact uSOL on anvil and is swept into the hot wallet once", async () => {
  const started = performance.now();
  const s = await solSetup();
  try {
    assert.deepEqual(s.server.services.chainPlan.liveAccount, ["sol"]);
    const lamports = 2_345_678_901n; // 2.345678901 SOL
    const { moved, sweep } = await mintAndSweep(s, lamports);
    assert.deepEqual(s.sol.paymentsTo(s.hot).map((p) => [p.signature, p.lamports]), [[sweep.txHash, moved]]);
    assert.equal(await s.live.client.getTransactionCount({ address: minter.address }), 1, "one mint sent");
    // Later ticks sweep nothing more: the address holds only its reserve.
    const blocks = s.sol.slot;
    await waitUntil("more blocks", () => Promise.resolve(s.sol.slot > blocks + 10));
    assert.equal(s.sol.paymentsTo(s.hot).length, 1, "swept exactly once");
  } finally {
    await s.close();
    console.log(`sol mint+sweep test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 2. burn -> payout

Deno.test("live sol on a Solana-RPC-shaped server: a uSOL burn on anvil is paid from the swept hot wallet with its memo, once", async () => {
  const started = performance.now();
  const s = await solSetup();
  try {
    const kv = s.server.services.kv;
    await mintAndSweep(s, 3n * SOL);
    const destination = stranger(11);
    const token = await solBurner(s.server, destination, "invoice 42");
    await s.live.fund("uSOL", holder.address, 10n * 10n ** 18n);
    // 1.500000001 SOL and 77 wei below one lamport: 1500000001 lamports are paid, the 77 wei recorded.
    const lamports = 1_500_000_001n;
    const wei = lamports * LAMPORTS_TO_WEI + 77n;
    const hotBefore = s.sol.balance(s.hot);
    await s.live.transfer("uSOL", s.server.services.uAssetTransferAddress, wei);
    const [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
      timeoutMs: 15_000,
    });
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.destinationChain, "sol");
    assert.equal(order.destinationWallet, destination);
    assert.equal(order.amount, wei.toString());
    const stored = await storedOrder(kv, order.id);
    assert.ok(stored.type === "burn");
    assert.equal(stored.details.nativeAmount, lamports.toString());
    assert.equal(stored.details.remainderWei, "77");
    const intent = stored.details.intent!;
    assert.equal(order.transactionHash, intent.txHash, "the recorded payout is the one that landed");
    assert.equal(intent.expiry?.kind, "height");
    assert.equal(stored.details.deadIntents, undefined);
    assert.deepEqual(s.sol.paymentsTo(destination).map((p) => [p.signature, p.lamports]), [[intent.txHash, lamports]]);
    assert.equal(s.sol.balance(destination), lamports, "the destination holds exactly the burned amount");
    assert.deepEqual(s.sol.memosOf(intent.txHash), ["invoice 42", `payout ${order.id}`]);
    assert.equal(s.sol.balance(s.hot), hotBefore - lamports - FEE_PER_SIGNATURE, "paid from the hot wallet");
    assert.ok(s.sol.balance(s.hot) >= RENT_EXEMPT_MINIMUM_0);
  } finally {
    await s.close();
    console.log(`sol burn test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 3. a dropped payout

Deno.test("live sol on a Solana-RPC-shaped server: a payout the leader drops is proven dead past its lastValidBlockHeight and re-signed once", async () => {
  const started = performance.now();
  const s = await solSetup();
  try {
    const kv = s.server.services.kv;
    s.sol.fund(s.hot, 5n * SOL); // the operator funds the hot wallet
    const destination = stranger(12);
    const token = await solBurner(s.server, destination);
    const dropping = s.sol.dropNextSent((tx) => tx.accounts.includes(destination));
    await s.live.fund("uSOL", holder.address, 10n * 10n ** 18n);
    const lamports = 1_250_000_000n;
    await s.live.transfer("uSOL", s.server.services.uAssetTransferAddress, lamports * LAMPORTS_TO_WEI);
    const dropped = await dropping;
    const [order] = await waitForOrders(s.server, token, (o) => o.length === 1 && terminal(o[0]), {
      timeoutMs: 20_000,
    });
    assert.equal(order.status, "completed", JSON.stringify(order));
    const stored = await storedOrder(kv, order.id);
    const dead = stored.details.deadIntents ?? [];
    assert.equal(dead.length, 1, JSON.stringify(dead));
    assert.equal(dead[0].txHash, dropped);
    assert.equal(dead[0].proof.kind, "expired");
    const expiry = dead[0].expiry!;
    assert.equal(expiry.kind, "height");
    assert.ok(dead[0].proof.kind === "expired" && dead[0].proof.reached > expiry.value, JSON.stringify(dead[0]));
    const intent = stored.details.intent!;
    assert.notEqual(intent.txHash, dropped, "a new transaction, signed after the proof");
    assert.equal(order.transactionHash, intent.txHash);
    assert.ok(intent.expiry!.kind === "height" && intent.expiry!.value > expiry.value, "a newer blockhash");
    assert.equal(s.sol.landedAt(dropped), null, "the dropped one never landed");
    assert.ok(s.sol.sends(dropped) >= 2, "while unknown, the same bytes were sent again before the proof");
    assert.deepEqual(s.sol.paymentsTo(destination).map((p) => [p.signature, p.lamports]), [[intent.txHash, lamports]]);
    assert.equal(s.sol.balance(destination), lamports, "paid once");
  } finally {
    await s.close();
    console.log(`sol dropped payout test: ${Math.round(performance.now() - started)} ms`);
  }
});

// ---------------------------------------------------------------- 4. SIGKILL between record and broadcast

async function childTerminal(server: ChildServer, token: string, what: string): Promise<Json> {
  let last: Json = null;
  return await waitUntil(what, async () => {
    const res = await server.call("GET", "/orders", { token });
    last = res.body?.data?.orders;
    return Array.isArray(last) && last.length === 1 && terminal(last[0]) ? last[0] : null;
  }, 20_000).catch(async (err) => {
    throw new Error(`${err.message}; last ${JSON.stringify(last)}; log: ${await server.errTail()}`);
  });
}

Deno.test("live sol on a Solana-RPC-shaped server: SIGKILL after recording the payout, before broadcasting: the restarted server sends the recorded bytes, one payout lands", async () => {
  const started = performance.now();
  // Mainnet's blockhash lifetime: the recorded payout must still be valid when the restarted server sends it.
  const sol = startSolanaRpcServer();
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const kvPath = `${live.dir}/kv.sqlite3`;
  const mnemonicFile = `${live.dir}/mnemonic.txt`;
  await Deno.writeTextFile(mnemonicFile, `${TEST_MNEMONIC}\n`, { mode: 0o600 });
  const env = {
    ...solEnv(live, sol),
    KV_PATH: kvPath,
    MASTER_MNEMONIC_FILE: mnemonicFile,
    // Fixed, so the partner's token (aud) stays valid on the restarted server, which listens on a new port.
    BASE_URL: "http://sol-live.test",
  };
  const hot = testSigner.address("sol", 0, "hot");
  let stopBlocks: (() => void) | null = null;
  let server: ChildServer | null = null;
  try {
    const adminKv = await openKv(kvPath);
    const apiKey = (await createApiKey(adminKv, "sol-crash-partner")).apiKey;
    adminKv.close();
    sol.fund(hot, 4n * SOL); // the operator funds the hot wallet through the server's hook

    // The burn, on a server that dies right after recording its payout. No blocks are produced while it is down.
    server = await ChildServer.start(live.dir, { ...env, FAULT_CRASH_POINT: "after-record" });
    const destination = stranger(13);
    const token = await server.token(apiKey, holder.address);
    const configured = await server.call("POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: destination, memo: "crash-case" },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    const transferAddress = configured.body.data.uAssetTransferAddress as string;
    await live.fund("uSOL", holder.address, 10n * 10n ** 18n);
    const lamports = 2_000_000_003n;
    await live.transfer("uSOL", transferAddress, lamports * LAMPORTS_TO_WEI);
    const died = await server.exited(20_000);
    assert.ok(died, `the server did not crash at after-record: ${await server.errTail()}`);
    assert.equal(died.signal, "SIGKILL", `exit ${JSON.stringify(died)}: ${await server.errTail()}`);
    assert.match(await server.errTail(), /FAULT_CRASH_POINT=after-record/);
    server = null;

    // What the dead process left: the payout recorded, never sent.
    let kv = await openKv(kvPath);
    const { orders } = await listOrders(kv, holder.address.toLowerCase(), { limit: 10, offset: 0 });
    assert.equal(orders.length, 1);
    assert.equal(orders[0].status, "burning");
    const recorded = orders[0].details.intent!;
    assert.ok(recorded, "the payout was recorded before the crash");
    kv.close();
    assert.equal(sol.sends(recorded.txHash), 0, "recorded, never broadcast");

    // Restarted without the crash point: the recorded bytes go out and land; the order completes.
    server = await ChildServer.start(live.dir, env);
    stopBlocks = sol.produceEvery(25);
    const order = await childTerminal(server, token, "the burn to end after the restart");
    assert.equal(order.status, "completed", JSON.stringify(order));
    assert.equal(order.transactionHash, recorded.txHash, "the payout recorded before the crash is the one that landed");
    assert.ok(sol.sends(recorded.txHash) >= 1);
    assert.notEqual(sol.landedAt(recorded.txHash), null);
    assert.deepEqual(sol.paymentsTo(destination).map((p) => [p.signature, p.lamports]), [[recorded.txHash, lamports]]);
    assert.equal(sol.balance(destination), lamports, "paid once, exactly");
    assert.deepEqual(sol.memosOf(recorded.txHash), ["crash-case", `payout ${order.id}`]);
    await server.stop();
    server = null;
    kv = await openKv(kvPath);
    const after = await storedOrder(kv, order.id);
    assert.equal(after.details.deadIntents, undefined, "never re-signed");
    kv.close();
  } finally {
    await server?.stop();
    stopBlocks?.();
    await stopMining();
    await live.close();
    await sol.close();
    console.log(`sol crash after-record test: ${Math.round(performance.now() - started)} ms`);
  }
});
