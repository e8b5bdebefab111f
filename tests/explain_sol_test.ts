/**
 * Verify before record, Solana (chains/sol/explain.ts, chains/effects.ts): the real payer (chains/sol/payer.ts) builds
 * and signs payouts and sweeps against a Solana-RPC-shaped server (tests/support/solana_rpc_server.ts; no validator
 * runs here), `explainSolTx` reads them back from their own wire bytes, and `differences` compares them with the
 * intent. A payer made to lie (another amount, destination, memo, hot wallet) is named; bytes that do not decode or
 * hold what we never build (another program or System instruction, a transfer from another account, a lookup table,
 * a bad signature) are refused.
 */
import assert from "node:assert/strict";
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  type Instruction,
  isAddress,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes,
} from "@solana/kit";
import { getAdvanceNonceAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import type { AccountAdapterOptions, PreparedTx } from "../chains/adapter.ts";
import { differences, type TxIntent } from "../chains/effects.ts";
import { explainSolTx } from "../chains/sol/explain.ts";
import { solAdapters } from "../chains/sol/index.ts";
import { signTransfer } from "../chains/sol/tx.ts";
import { Signer } from "../chains/signer.ts";
import { FEE_PER_SIGNATURE, type SolanaRpcServer, startSolanaRpcServer } from "./support/solana_rpc_server.ts";
import { ours, signer, solOn, stranger } from "./support/sol_env.ts";

const SOL = 1_000_000_000n;
const hot = signer.address("sol", 0, "hot");
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
/** Another operator's keys (a public test mnemonic): a hot wallet that is not ours. */
const otherSigner = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");
const strangerHot = otherSigner.address("sol", 0, "hot");

const payoutIntent = (to: string, amount: bigint, memo: string | null): TxIntent => ({
  kind: "payout",
  chain: "sol",
  from: hot,
  to,
  amount,
  memo,
});

/** A payer whose signer lies about (or signs as) another hot wallet: the builder itself doing something else. */
function payerWithHot(server: SolanaRpcServer, hotAddress: string, signHot: Signer) {
  const lying: AccountAdapterOptions["signer"] = {
    publicKey: (chain, index, branch) =>
      branch === "hot" ? signHot.publicKey(chain, index, branch) : signer.publicKey(chain, index, branch),
    address: (chain, index, branch) => branch === "hot" ? hotAddress : signer.address(chain, index, branch),
    signMessage: (chain, index, message, branch) =>
      (branch === "hot" ? signHot : signer).signMessage(chain, index, message, branch),
    signDigest: (chain, index, digest, branch) => signer.signDigest(chain, index, digest, branch),
  };
  return solAdapters({ urls: [server.url], signer: lying, confirmations: 1 }).payer;
}

const blockhash = ours(100) as Blockhash; // any 32 bytes in base58 serve as a blockhash for decoding
type Key = { address: string; sign: (m: Uint8Array) => Uint8Array };

function withSignatures(compiled: ReturnType<typeof compileTransaction>, keys: Key[]): string {
  const signatures = { ...compiled.signatures };
  for (const k of keys) {
    signatures[address(k.address)] = k.sign(new Uint8Array(compiled.messageBytes)) as SignatureBytes;
  }
  return getBase64EncodedWireTransaction({ ...compiled, signatures });
}

/** A legacy message of our making, signed with the given keys: shapes the payer never builds. */
function signedWire(feePayer: string, instructions: Instruction[], keys: Key[]): string {
  const message = pipe(
    createTransactionMessage({ version: "legacy" }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 1_000n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return withSignatures(compileTransaction(message), keys);
}

/** A version 0 message whose accounts (other than signers and programs) come from the given lookup tables. */
function signedV0Wire(feePayer: string, instructions: Instruction[], keys: Key[], tables: Record<string, string[]>) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 1_000n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) =>
      compressTransactionMessageUsingAddressLookupTables(
        m,
        Object.fromEntries(Object.entries(tables).map(([t, list]) => [address(t), list.map((a) => address(a))])),
      ),
  );
  return withSignatures(compileTransaction(message), keys);
}

const hotKey: Key = { address: hot, sign: (m: Uint8Array) => signer.signMessage("sol", 0, m, "hot") };
const depositKey = (i: number): Key => ({ address: ours(i), sign: (m: Uint8Array) => signer.signMessage("sol", i, m) });
const transferIx = (from: string, to: string, lamports: bigint): Instruction =>
  getTransferSolInstruction({
    source: createNoopSigner(address(from)),
    destination: address(to),
    amount: lamports,
  });
const memoIx = (text: string): Instruction => ({
  programAddress: MEMO_PROGRAM,
  data: new TextEncoder().encode(text),
});

Deno.test("explainSolTx on payouts from the real payer against a Solana-RPC-shaped server: with and without a destination memo", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { payer } = solOn(server);
    server.fund(hot, 10n * SOL);

    const withMemo = await payer.preparePayout({ orderId: "burn-1", to: stranger(3), amount: 2n * SOL, memo: "7421" });
    const effects = await explainSolTx(withMemo.raw);
    assert.equal(effects.chain, "sol");
    assert.equal(effects.from, hot, "the fee payer: the hot wallet");
    assert.deepEqual(effects.outputs, [{ to: stranger(3), amount: 2n * SOL }]);
    assert.equal(effects.memo, "7421", "the destination memo, not our `payout burn-1` reference after the transfer");
    // Not in the bytes (chains/sol/explain.ts): the blockhash's last valid height, the fee, a nonce.
    assert.equal(effects.expiry, undefined);
    assert.equal(effects.maxFee, undefined);
    assert.equal(effects.nonce, undefined);
    assert.equal(effects.inputs, undefined);
    assert.equal(effects.call, undefined);
    assert.equal(effects.chainId, undefined);
    assert.deepEqual(differences(payoutIntent(stranger(3), 2n * SOL, "7421"), effects, withMemo), []);

    const noMemo = await payer.preparePayout({ orderId: "refund-2", to: stranger(4), amount: SOL + 1n, memo: null });
    const plain = await explainSolTx(noMemo.raw);
    assert.deepEqual(plain, { chain: "sol", from: hot, outputs: [{ to: stranger(4), amount: SOL + 1n }], memo: null });
    assert.deepEqual(differences(payoutIntent(stranger(4), SOL + 1n, null), plain, noMemo), []);
    // Compared with the intent of the other payout, every difference is named.
    assert.deepEqual(differences(payoutIntent(stranger(3), 2n * SOL, "7421"), plain, noMemo), [
      `carries memo/tag null, not "7421"`,
      `pays ${stranger(4)}, not ${stranger(3)}`,
      `pays ${SOL + 1n}, not ${2n * SOL}`,
    ]);

    // What explain read is what the node executes: the payment and both memos, in order.
    await payer.broadcast(withMemo);
    server.produce(1);
    assert.deepEqual(server.paymentsTo(stranger(3)).map((p) => [p.signature, p.lamports]), [[
      withMemo.txHash,
      2n * SOL,
    ]]);
    assert.deepEqual(server.memosOf(withMemo.txHash), ["7421", "payout burn-1"]);
  } finally {
    await server.close();
  }
});

Deno.test("explainSolTx on a sweep from the real payer against a Solana-RPC-shaped server: deposit address to the hot wallet, its reference memo not a destination memo", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { payer } = solOn(server);
    server.fund(hot, SOL);
    server.fund(ours(5), 300_000_000n);
    const sweep = await payer.prepareSweep!({ sweepId: "mint-5", from: ours(5), derivationIndex: 5 });
    const effects = await explainSolTx(sweep.raw);
    assert.deepEqual(effects, {
      chain: "sol",
      from: ours(5),
      outputs: [{ to: hot, amount: 300_000_000n - FEE_PER_SIGNATURE }],
      memo: null, // `sweep mint-5` follows the transfer: our reference, not a memo for the destination
    });
    const intent: TxIntent = { kind: "sweep", chain: "sol", from: ours(5), to: hot };
    assert.deepEqual(differences(intent, effects, sweep), []);
    assert.deepEqual(differences({ ...intent, from: ours(6) }, effects, sweep), [
      `sweeps from ${ours(5)}, not the deposit address ${ours(6)}`,
    ]);
    await payer.broadcast(sweep);
    server.produce(1);
    assert.deepEqual(server.memosOf(sweep.txHash), ["sweep mint-5"]);
    assert.equal(server.balance(ours(5)), 0n);
  } finally {
    await server.close();
  }
});

Deno.test("explainSolTx against a Solana-RPC-shaped server: a real payer asked for another amount, destination or no memo is named by differences", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { payer } = solOn(server);
    server.fund(hot, 10n * SOL);
    const intent = payoutIntent(stranger(3), 2n * SOL, "7421");
    const compare = async (tx: PreparedTx) => differences(intent, await explainSolTx(tx.raw), tx);

    const amount = await payer.preparePayout({ orderId: "b1", to: stranger(3), amount: 2n * SOL + 1n, memo: "7421" });
    assert.deepEqual(await compare(amount), [`pays ${2n * SOL + 1n}, not ${2n * SOL}`]);

    const destination = await payer.preparePayout({ orderId: "b1", to: stranger(4), amount: 2n * SOL, memo: "7421" });
    assert.deepEqual(await compare(destination), [`pays ${stranger(4)}, not ${stranger(3)}`]);

    const dropped = await payer.preparePayout({ orderId: "b1", to: stranger(3), amount: 2n * SOL, memo: null });
    assert.deepEqual(await compare(dropped), [`carries memo/tag null, not "7421"`]);

    const otherMemo = await payer.preparePayout({ orderId: "b1", to: stranger(3), amount: 2n * SOL, memo: "7412" });
    assert.deepEqual(await compare(otherMemo), [`carries memo/tag "7412", not "7421"`]);

    // The payer's signer answering for another operator's hot wallet: paid (and signed) from it.
    const elsewhere = payerWithHot(server, strangerHot, otherSigner);
    server.fund(strangerHot, 10n * SOL);
    const fromStranger = await elsewhere.preparePayout({
      orderId: "b1",
      to: stranger(3),
      amount: 2n * SOL,
      memo: "7421",
    });
    assert.deepEqual(await compare(fromStranger), [`paid from ${strangerHot}, not the hot wallet ${hot}`]);
  } finally {
    await server.close();
  }
});

Deno.test("explainSolTx against a Solana-RPC-shaped server: a real sweep to a stranger instead of the hot wallet is named by differences", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    // The payer's hot wallet is a stranger's: its sweeps pay there, signed by our deposit key as usual.
    const lying = payerWithHot(server, strangerHot, otherSigner);
    server.fund(strangerHot, SOL);
    server.fund(ours(7), 300_000_000n);
    const sweep = await lying.prepareSweep!({ sweepId: "mint-7", from: ours(7), derivationIndex: 7 });
    const effects = await explainSolTx(sweep.raw);
    assert.deepEqual(effects.outputs, [{ to: strangerHot, amount: 300_000_000n - FEE_PER_SIGNATURE }]);
    assert.equal(effects.from, ours(7));
    assert.deepEqual(differences({ kind: "sweep", chain: "sol", from: ours(7), to: hot }, effects, sweep), [
      `pays ${300_000_000n - FEE_PER_SIGNATURE} to ${strangerHot}, not the hot wallet ${hot} alone`,
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("explainSolTx against a Solana-RPC-shaped server: a payout the payer signed with another key than its fee payer's is refused", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    // Says our hot wallet, signs with another operator's hot key: the bytes name our hot wallet, the signature is not its.
    const miss = payerWithHot(server, hot, otherSigner);
    server.fund(hot, 10n * SOL);
    const tx = await miss.preparePayout({ orderId: "b2", to: stranger(3), amount: SOL, memo: null });
    await assert.rejects(() => explainSolTx(tx.raw), /fee payer's signature does not verify over the message/);
  } finally {
    await server.close();
  }
});

Deno.test("explainSolTx refuses bytes that are not a wire transaction", async () => {
  const good = signTransfer({
    from: address(hot),
    to: address(stranger(3)),
    lamports: SOL,
    memos: ["payout x"],
    blockhash: ours(100),
    lastValidBlockHeight: 10n,
    sign: hotKey.sign,
  }).wire;
  assert.equal((await explainSolTx(good)).outputs[0].amount, SOL, "the untampered bytes decode");
  await assert.rejects(() => explainSolTx(""), /the raw transaction is empty/);
  await assert.rejects(() => explainSolTx("not base64!"), /the raw transaction is not base64/);
  await assert.rejects(() => explainSolTx(`${good}\n`), /the raw transaction is not base64$/);
  await assert.rejects(() => explainSolTx("AQ"), /the raw transaction is not canonical base64/, "padding left out");
  await assert.rejects(() => explainSolTx("AR=="), /the raw transaction is not canonical base64/, "stray low bits");
  await assert.rejects(
    () => explainSolTx(btoa("garbage bytes, not a tx")),
    /sol: cannot decode the (wire transaction|transaction's message)/,
  );
  const bytes = Uint8Array.from(atob(good), (c) => c.charCodeAt(0));
  const trailing = btoa(String.fromCharCode(...bytes, 0, 0, 0));
  await assert.rejects(
    () => explainSolTx(trailing),
    /cannot decode the transaction.s message: 3 bytes follow the message/,
  );
  const cut = btoa(String.fromCharCode(...bytes.slice(0, bytes.length - 5)));
  await assert.rejects(() => explainSolTx(cut), /sol: cannot decode the transaction's message/);
  // One flipped bit in the amount (the transfer's last 8 bytes precede the 11-byte `payout x` memo instruction):
  // still a transaction, no longer the one the hot wallet signed.
  const flipped = bytes.slice();
  flipped[flipped.length - 11 - 8] ^= 1;
  await assert.rejects(
    () => explainSolTx(btoa(String.fromCharCode(...flipped))),
    /the fee payer's signature does not verify over the message/,
  );
});

Deno.test("explainSolTx refuses a transaction holding what we never build", async () => {
  const pay = transferIx(hot, ours(3), SOL);
  const refused = async (wire: string, why: RegExp) => await assert.rejects(() => explainSolTx(wire), why);

  // A priority fee (ComputeBudget SetComputeUnitPrice, discriminator 3 then u64 micro-lamports).
  const price: Instruction = {
    programAddress: address("ComputeBudget111111111111111111111111111111"),
    data: new Uint8Array([3, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0]),
  };
  await refused(signedWire(hot, [price, pay], [hotKey]), /instruction 0 is a ComputeBudget instruction/);
  // Another program (SPL Token): it could move value we do not see.
  const token: Instruction = {
    programAddress: address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
    data: new Uint8Array([3]),
  };
  await refused(
    signedWire(hot, [pay, token], [hotKey]),
    /instruction 1 calls program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA, which we never call/,
  );
  // The old Memo program: not the one we use.
  const oldMemo: Instruction = {
    programAddress: address("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"),
    data: new TextEncoder().encode("7421"),
  };
  await refused(signedWire(hot, [oldMemo, pay], [hotKey]), /calls program Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo/);
  // A durable nonce (System AdvanceNonceAccount first): a transaction that never expires.
  const advance = getAdvanceNonceAccountInstruction({
    nonceAccount: address(ours(50)),
    nonceAuthority: createNoopSigner(address(hot)),
  });
  await refused(
    signedWire(hot, [advance, pay], [hotKey]),
    /instruction 0 is System Program AdvanceNonceAccount, not a transfer/,
  );
  // A transfer from another account of ours (a deposit address co-signing), not the fee payer.
  await refused(
    signedWire(hot, [transferIx(ours(3), stranger(3), SOL)], [hotKey, depositKey(3)]),
    new RegExp(`transfer 0 moves lamports from ${ours(3)}, not from the fee payer ${hot}`),
  );
  // A second signer the transfer does not need (its destination marked as signing, and signing).
  const cosigned: Instruction = {
    ...pay,
    accounts: [pay.accounts![0], { address: address(ours(3)), role: AccountRole.WRITABLE_SIGNER }],
  };
  await refused(
    signedWire(hot, [cosigned], [hotKey, depositKey(3)]),
    /the message asks 2 signers; ours are signed by their fee payer alone/,
  );
  // A transfer with data beyond its amount, or a third account.
  const padded: Instruction = { ...pay, data: new Uint8Array([...pay.data!, 0]) };
  await refused(signedWire(hot, [padded], [hotKey]), /transfer 0 carries 13 bytes of data, not 12/);
  const extra: Instruction = {
    ...pay,
    accounts: [...pay.accounts!, { address: address(stranger(8)), role: AccountRole.WRITABLE }],
  };
  await refused(signedWire(hot, [extra], [hotKey]), /transfer 0 names 3 accounts, not 2/);
  // A memo naming a signer; two memos where the destination's goes; a memo that is not UTF-8.
  const signedMemo: Instruction = {
    ...memoIx("7421"),
    accounts: [{ address: address(hot), role: AccountRole.READONLY_SIGNER }],
  };
  await refused(signedWire(hot, [signedMemo, pay], [hotKey]), /memo 0 names 1 signer account\(s\); ours name none/);
  await refused(
    signedWire(hot, [memoIx("7421"), memoIx("9999"), pay], [hotKey]),
    /2 memos precede the transfer; we put at most one/,
  );
  const binary: Instruction = { programAddress: MEMO_PROGRAM, data: new Uint8Array([0xff, 0xfe]) };
  await refused(signedWire(hot, [binary, pay], [hotKey]), /memo 0 is not UTF-8/);
  // A version 0 message whose destination comes from an address lookup table.
  await refused(
    signedV0Wire(hot, [pay], [hotKey], { [ours(60)]: [ours(3)] }),
    /a version 0 message with 1 address lookup table\(s\); we build legacy messages only/,
  );
  // Unsigned: the fee payer's signature slot left empty.
  await refused(signedWire(hot, [pay], []), new RegExp(`carries no signature of its fee payer ${hot}`));
});

Deno.test("explainSolTx reports every transfer in order, so differences names a payout that pays twice", async () => {
  const wire = signedWire(hot, [
    memoIx("7421"),
    transferIx(hot, stranger(3), SOL),
    transferIx(hot, stranger(4), 5n),
    memoIx("payout b9"),
  ], [
    hotKey,
  ]);
  const effects = await explainSolTx(wire);
  assert.deepEqual(effects.outputs, [{ to: stranger(3), amount: SOL }, { to: stranger(4), amount: 5n }]);
  assert.equal(effects.memo, "7421");
  const prepared: PreparedTx = { txHash: "t", raw: wire };
  assert.deepEqual(differences(payoutIntent(stranger(3), SOL, "7421"), effects, prepared), [
    `makes 2 payments (${SOL} to ${stranger(3)}, 5 to ${stranger(4)}), not 1`,
  ]);
  assert.deepEqual(differences({ kind: "sweep", chain: "sol", from: hot, to: stranger(3) }, effects, prepared), [
    `pays ${SOL} to ${stranger(3)}, 5 to ${stranger(4)}, not the hot wallet ${stranger(3)} alone`,
  ]);
});

Deno.test("explainSolTx against a Solana-RPC-shaped server: a destination changed only in letter case is another key, and differences names it", async () => {
  const server = startSolanaRpcServer({ finalityLag: 0 });
  try {
    const { payer } = solOn(server);
    server.fund(hot, 10n * SOL);
    // One letter of the destination in the other case that still decodes to 32 bytes: another account.
    const to = stranger(3);
    const variant = [...to].map((c, i) =>
      to.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + to.slice(i + 1)
    )
      .find((v) => v !== to && isAddress(v));
    assert.ok(variant, "a case-flipped variant that is a valid address");
    const tx = await payer.preparePayout({ orderId: "b3", to: variant, amount: SOL, memo: null });
    const effects = await explainSolTx(tx.raw);
    assert.deepEqual(effects.outputs, [{ to: variant, amount: SOL }]);
    const intent = payoutIntent(to, SOL, null);
    // Base58 is case-sensitive: chains/effects.ts compares native addresses exactly.
    assert.deepEqual(differences(intent, effects, tx), [`pays ${variant}, not ${to}`]);
    const honest = await payer.preparePayout({ orderId: "b3", to, amount: SOL, memo: null });
    assert.deepEqual(differences(intent, await explainSolTx(honest.raw), honest), []);
  } finally {
    await server.close();
  }
});
