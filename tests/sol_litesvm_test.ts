/**
 * Our signed Solana payouts and sweeps (chains/sol/tx.ts, the bytes the payer records and broadcasts) executed in
 * LiteSVM, an in-process Solana VM (npm `litesvm-linux-x64-gnu`: the N-API addon of `litesvm`, loaded directly since
 * the `litesvm` package's optional macOS binaries break installs here; needs --allow-ffi). Balances move exactly
 * (5,000 lamports per signature), a payout leaving a new account below rent fails as on chain, and a transaction
 * with an unknown or expired blockhash is refused.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { base58, base64 } from "@scure/base";
import { LAMPORTS_PER_SIGNATURE, signTransfer, solAddress } from "../chains/sol/tx.ts";
import { NATIVE } from "../chains/catalog.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { ours, signer, stranger } from "./support/sol_env.ts";

interface NativeLiteSvm {
  airdrop(address: Uint8Array, lamports: bigint): unknown;
  getBalance(address: Uint8Array): bigint | null;
  latestBlockhash(): string;
  getTransaction(signature: Uint8Array): unknown;
  expireBlockhash(): void;
  minimumBalanceForRentExemption(dataLen: bigint): bigint;
  sendLegacyTransaction(bytes: Uint8Array): { err?: () => unknown; toString(): string };
}

function loadLiteSvm(): { new (): NativeLiteSvm; name: string } {
  const require = createRequire(import.meta.url);
  return require("litesvm-linux-x64-gnu").LiteSvm;
}

const SOL = 1_000_000_000n;
const hot = solAddress(signer.address("sol", 0, "hot"), "hot wallet");
const key = (a: string) => base58.decode(a);

function vm() {
  const svm = new (loadLiteSvm())();
  return {
    svm,
    balance: (a: string) => svm.getBalance(key(a)) ?? 0n,
    /** Sends the base64 wire bytes the payer would broadcast; true when it executed successfully. */
    send(wire: string) {
      const r = svm.sendLegacyTransaction(base64.decode(wire));
      return { ok: typeof r.err !== "function", detail: r.toString() };
    },
  };
}

function payout(svm: NativeLiteSvm, to: string, lamports: bigint, blockhash = svm.latestBlockhash()) {
  return signTransfer({
    from: hot,
    to: solAddress(to, "destination"),
    lamports,
    memos: ["partner memo 42", "payout order-1"],
    blockhash,
    lastValidBlockHeight: 150n,
    sign: (m) => signer.signMessage("sol", 0, m, "hot"),
  });
}

Deno.test("sol payout in LiteSVM: balances move exactly, the fee is 5,000 lamports per signature", () => {
  const { svm, balance, send } = vm();
  svm.airdrop(key(hot), 10n * SOL);
  const rent = svm.minimumBalanceForRentExemption(0n);
  const to = stranger(1);
  const tx = payout(svm, to, 2n * SOL);
  const r = send(tx.wire);
  assert.ok(r.ok, r.detail);
  assert.equal(balance(hot), 10n * SOL - 2n * SOL - LAMPORTS_PER_SIGNATURE);
  assert.equal(balance(to), 2n * SOL);
  assert.ok(rent > 0n);
  // The same bytes again are the same transaction: refused as already processed, nothing moves twice.
  const again = send(tx.wire);
  assert.ok(!again.ok);
  assert.match(again.detail, /AlreadyProcessed/);
  assert.equal(balance(to), 2n * SOL);
});

Deno.test("sol payout in LiteSVM: a payout leaving a new account below the rent-exempt minimum fails as on chain", () => {
  const { svm, balance, send } = vm();
  svm.airdrop(key(hot), 10n * SOL);
  const rent = svm.minimumBalanceForRentExemption(0n);
  const to = stranger(2);
  const r = send(payout(svm, to, rent - 1n).wire);
  assert.ok(!r.ok, "below rent: refused");
  assert.match(r.detail, /InsufficientFundsForRent/);
  assert.equal(balance(to), 0n);
  assert.equal(balance(hot), 10n * SOL - LAMPORTS_PER_SIGNATURE, "a failed transaction still pays its fee");
  const ok = send(payout(svm, to, rent).wire);
  assert.ok(ok.ok, ok.detail);
  assert.equal(balance(to), rent, "exactly the minimum creates the account");
});

Deno.test("sol sweep in LiteSVM: the whole balance less the fee moves to the hot wallet and closes the deposit account", () => {
  const { svm, balance, send } = vm();
  const deposit = ours(3);
  svm.airdrop(key(deposit), 250_000_000n);
  svm.airdrop(key(hot), 1n * SOL);
  const tx = signTransfer({
    from: solAddress(deposit, "deposit"),
    to: hot,
    lamports: 250_000_000n - LAMPORTS_PER_SIGNATURE,
    memos: ["sweep order-7"],
    blockhash: svm.latestBlockhash(),
    lastValidBlockHeight: 150n,
    sign: (m) => signer.signMessage("sol", 3, m, "deposit"),
  });
  const r = send(tx.wire);
  assert.ok(r.ok, r.detail);
  assert.equal(balance(deposit), 0n, "closed at 0, which rent allows");
  assert.equal(balance(hot), 1n * SOL + 250_000_000n - LAMPORTS_PER_SIGNATURE);
});

Deno.test("sol payout in LiteSVM: a transaction with an unknown or expired blockhash is refused", () => {
  const { svm, balance, send } = vm();
  svm.airdrop(key(hot), 10n * SOL);
  const unknown = send(payout(svm, stranger(4), SOL, base58.encode(new Uint8Array(32).fill(7))).wire);
  assert.ok(!unknown.ok);
  assert.match(unknown.detail, /BlockhashNotFound/);
  const old = payout(svm, stranger(4), SOL);
  svm.expireBlockhash();
  const expired = send(old.wire);
  assert.ok(!expired.ok);
  assert.match(expired.detail, /BlockhashNotFound/);
  assert.equal(balance(stranger(4)), 0n);
  assert.equal(balance(hot), 10n * SOL, "a refused transaction pays no fee");
});

Deno.test("sol payout in LiteSVM: a signature by another key is refused", () => {
  const { svm, send } = vm();
  svm.airdrop(key(hot), 10n * SOL);
  const forged = signTransfer({
    from: hot,
    to: solAddress(stranger(5), "destination"),
    lamports: SOL,
    memos: ["payout order-9"],
    blockhash: svm.latestBlockhash(),
    lastValidBlockHeight: 150n,
    sign: (m) => signer.signMessage("sol", 0, m, "deposit"), // the deposit key 0, not the hot wallet's
  });
  const r = send(forged.wire);
  assert.ok(!r.ok);
  assert.match(r.detail, /SignatureFailure/);
});

/**
 * The payer itself (chains/sol/payer.ts) against LiteSVM: a JSON-RPC shim serves the four calls the payer makes
 * (getBalance, getMinimumBalanceForRentExemption, getLatestBlockhash, sendTransaction) from the VM, so the bytes the
 * payer prepares and broadcasts are the ones LiteSVM executes.
 */
/** A sweep of `lamports` signed by deposit key `index`, built directly (what the payer would refuse to build). */
function sweepOf(from: string, index: number, lamports: bigint) {
  return (svm: NativeLiteSvm) => {
    const signed = signTransfer({
      from: solAddress(from, "deposit"),
      to: hot,
      lamports,
      memos: ["sweep by hand"],
      blockhash: svm.latestBlockhash(),
      lastValidBlockHeight: 150n,
      sign: (m) => signer.signMessage("sol", index, m, "deposit"),
    });
    return { txHash: signed.signature, raw: signed.wire };
  };
}

function liteSvmRpc(svm: NativeLiteSvm) {
  const handle = (req: { id: number; method: string; params: unknown[] }) => {
    const ok = (result: unknown) => ({ jsonrpc: "2.0", id: req.id, result });
    switch (req.method) {
      case "getBalance":
        return ok({ context: { slot: 1 }, value: Number(svm.getBalance(key(String(req.params[0]))) ?? 0n) });
      case "getMinimumBalanceForRentExemption":
        return ok(Number(svm.minimumBalanceForRentExemption(BigInt(Number(req.params[0])))));
      case "getLatestBlockhash":
        return ok({ context: { slot: 1 }, value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 150 } });
      case "sendTransaction": {
        const r = svm.sendLegacyTransaction(base64.decode(String(req.params[0])));
        if (typeof r.err === "function") {
          return {
            jsonrpc: "2.0",
            id: req.id,
            error: { code: -32002, message: `Transaction failed: ${r.toString()}` },
          };
        }
        return ok("sent");
      }
      default:
        return { jsonrpc: "2.0", id: req.id, error: { code: -32601, message: "Method not found" } };
    }
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    return Response.json(Array.isArray(body) ? body.map(handle) : handle(body));
  });
  return { url: `http://127.0.0.1:${server.addr.port}/`, close: () => server.shutdown() };
}

Deno.test("sol payer in LiteSVM: the payer's own payout and sweep (as the sweeper asks) execute with exact balances", async () => {
  const { svm, balance } = vm();
  const rpc = liteSvmRpc(svm);
  try {
    const { payer } = solAdapters({ urls: [rpc.url], signer, confirmations: 1 });
    svm.airdrop(key(hot), 5n * SOL);
    const deposit = ours(11);
    svm.airdrop(key(deposit), 400_000_000n);
    // The sweeper asks for the balance less the catalog's reserve; the fee comes out of it.
    const reserve = NATIVE.sol.reserve;
    assert.equal(reserve, svm.minimumBalanceForRentExemption(0n), "the catalog's reserve is the VM's rent minimum");
    const sweep = await payer.prepareSweep!({
      sweepId: "mint-11",
      from: deposit,
      derivationIndex: 11,
      amount: 400_000_000n - reserve,
    });
    await payer.broadcast(sweep);
    assert.equal(balance(deposit), reserve);
    assert.equal(balance(hot), 5n * SOL + 400_000_000n - reserve - LAMPORTS_PER_SIGNATURE);
    const swept = 5n * SOL + 400_000_000n - reserve - LAMPORTS_PER_SIGNATURE;
    // What is left (the reserve) cannot pay its own fee: the runtime would leave the fee payer below rent.
    await assert.rejects(
      () => payer.prepareSweep!({ sweepId: "mint-11b", from: deposit, derivationIndex: 11 }),
      /below the rent-exempt minimum/,
    );
    await assert.rejects(
      () => payer.broadcast(sweepOf(deposit, 11, reserve - LAMPORTS_PER_SIGNATURE)(svm)),
      /InsufficientFundsForRent \{ account_index: 0 \}/,
    );
    assert.equal(balance(deposit), reserve);
    // A whole balance that can pay its fee: the account closes at 0.
    const other = ours(14);
    svm.airdrop(key(other), 2_000_000n);
    await payer.broadcast(await payer.prepareSweep!({ sweepId: "mint-14", from: other, derivationIndex: 14 }));
    assert.equal(balance(other), 0n);
    const before = balance(hot);
    assert.equal(before, swept + 2_000_000n - LAMPORTS_PER_SIGNATURE);
    const to = stranger(12);
    const req = { orderId: "burn-12", to, amount: 3n * SOL, memo: "99" };
    assert.equal((await payer.checkPayout!(req)).ok, true);
    const tx = await payer.preparePayout(req);
    await payer.broadcast(tx);
    assert.equal(balance(to), 3n * SOL);
    assert.equal(balance(hot), before - 3n * SOL - LAMPORTS_PER_SIGNATURE);
    assert.ok(svm.getTransaction(base58.decode(tx.txHash)), "the VM knows the payout by the signature we recorded");
    // The same bytes again: "already processed" is success, and nothing moves twice.
    await payer.broadcast(tx);
    assert.equal(balance(to), 3n * SOL);
    // Below rent to a new account: checkPayout refuses what the VM would.
    const small = { orderId: "burn-13", to: stranger(13), amount: reserve - 1n, memo: null };
    const check = await payer.checkPayout!(small);
    assert.ok(!check.ok && check.reason === "destination_below_reserve");
    await assert.rejects(() => payer.preparePayout(small).then((t) => payer.broadcast(t)), /InsufficientFundsForRent/);
  } finally {
    await rpc.close();
  }
});
