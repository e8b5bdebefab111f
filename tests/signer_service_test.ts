/**
 * The signer process's checks (docs/operations.md "Roles", the signer process; actors/signer/service.ts), over its real
 * unix socket and a real KV file, with real chain bytes: an XRP Ledger payout built with xrpl's own encoder (as
 * chains/xrp/payer.ts builds it) and an EVM mint serialized with viem (as chains/evm/tx_sender.ts signs it). No node is
 * needed: the signer never talks to one. The worker's side is the real client (chains/signer_client.ts).
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import {
  encodeFunctionData,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerializableEIP1559,
} from "viem";
import { encodeForSigning, type Payment } from "xrpl";
import { hexToBytes } from "@noble/hashes/utils.js";
import { EVM, NATIVE_CHAINS, UASSETS, weiToNative } from "../chains/catalog.ts";
import { evmFactsOf, explainerOf } from "../chains/explainers.ts";
import { MinterKey } from "../chains/minter_key.ts";
import { Signer } from "../chains/signer.ts";
import { RemoteSigner } from "../chains/signer_client.ts";
import { encodeLine, MAX_SIGNER_LINE_BYTES, readLine, SignerRefusedError } from "../chains/signer_protocol.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { UASSET_ADAPTER_ABI } from "../chains/evm/abi.ts";
import { sha512Half } from "../chains/xrp/payer.ts";
import { explainXrpTx } from "../chains/xrp/explain.ts";
import { explainSolTx } from "../chains/sol/explain.ts";
import { buildTransfer } from "../chains/sol/tx.ts";
import type { Address as SolAddress } from "@solana/kit";
import { suiAdapters } from "../chains/sui/index.ts";
import { decodeSuiRaw } from "../chains/sui/payer.ts";
import { explainSuiTx } from "../chains/sui/explain.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";
import { evmAddressFromPublicKey } from "../chains/derivation.ts";
import { serveSigner } from "../actors/signer/service.ts";
import { getAlert } from "../kv/alerts.ts";
import { createOrder, getOrder } from "../kv/orders.ts";
import { openKv } from "../kv/open.ts";
import { readOutflow } from "../kv/signer_outflow.ts";
import { mintRequestOf } from "../actors/order_actor.ts";
import type { Order } from "../model/order.ts";
import type { Refund } from "../model/refund.ts";
import { refundKey, validRefund } from "../kv/refunds.ts";
import { makeOrder } from "./support/orders.ts";
import { generatePrivateKey } from "viem/accounts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { hotWalletStateKey } from "../kv/hot_wallets.ts";
import { HotWalletStateSchema } from "../model/hot_wallet.ts";

const XRP_DROPS = 5_000_000n; // 5 XRP
const CONTRACTS = Object.fromEntries(
  UASSETS.map((a, i) => [a, `0x${(i + 1).toString(16).padStart(40, "c")}`]),
) as Record<
  typeof UASSETS[number],
  string
>;

async function setup(
  limits: { xrp?: bigint; sol?: bigint; sui?: bigint } = { xrp: 3n * XRP_DROPS / 2n, sol: 10n ** 12n, sui: 10n ** 12n },
) {
  const dir = await Deno.makeTempDir({ prefix: "issuance-signer-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  const signer = Signer.fromMnemonic(generateMnemonic(wordlist, 256));
  const minter = new MinterKey(generatePrivateKey());
  const minterAddress = evmAddressFromPublicKey(minter.publicKey());
  const explainer = explainerOf({
    simulated: new Set(),
    liveEvm: new Set(["base"]),
    liveUtxo: new Map(),
    liveAccount: new Set(["xrp", "sol", "sui"]),
  });
  const evm = evmFactsOf({
    simulated: new Set(),
    transferAddress: signer.address("base", 0),
    live: new Map([["base", { minter: minterAddress, chainId: EVM.base.chainId, uAssets: CONTRACTS }]]),
  });
  const logs: string[] = [];
  const path = `${dir}/signer.sock`;
  const server = await serveSigner({
    path,
    kv,
    signer,
    minter,
    facts: {
      explainer,
      evm: (chain) => chain === "base" ? evm("base") : undefined,
      hotWallet: (chain, index) => signer.address(chain, index, "hot"),
      depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
    },
    limits,
    now: () => new Date(),
    log: (m) => logs.push(m),
  });
  const remote = await RemoteSigner.connect(path, [
    { chain: "xrp", index: 0, branch: "hot" },
    { chain: "sol", index: 0, branch: "hot" },
    { chain: "sui", index: 0, branch: "hot" },
    { chain: "base", index: 0, branch: "minter" },
  ]);
  return {
    dir,
    kv,
    signer,
    remote,
    path,
    logs,
    minterAddress,
    async close() {
      await server.close();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** A burn order paying XRP_DROPS to an xrp address with a destination tag, in `processing` (its payout is due). */
async function xrpBurnOrder(t: Setup): Promise<Order & { type: "burn" }> {
  const base = makeOrder("0x" + "ab".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("xrp"));
  const order = {
    ...base,
    amount: (XRP_DROPS * 10n ** 12n).toString(), // 18-decimal uXRP wei for 6-decimal drops
    destinationWallet: t.signer.address("xrp", 7),
    details: { ...base.details, memo: "12345" },
  } as Order & { type: "burn" };
  assert.equal(weiToNative("xrp", BigInt(order.amount)).native, XRP_DROPS);
  assert.ok(await createOrder(t.kv, order));
  return order;
}

/** The payment chains/xrp/payer.ts builds for a payout, as the unsigned bytes it hands the signer. */
function xrpPayment(t: Setup, to: string, drops: bigint, tag: number | undefined, sequence = 1) {
  const tx = {
    TransactionType: "Payment",
    Account: t.remote.address("xrp", 0, "hot"),
    Destination: to,
    Amount: drops.toString(),
    ...(tag === undefined ? {} : { DestinationTag: tag }),
    Fee: "12",
    Sequence: sequence,
    LastLedgerSequence: 1000,
    SigningPubKey: Buffer.from(t.remote.publicKey("xrp", 0, "hot")).toString("hex").toUpperCase(),
  } as unknown as Payment;
  const unsigned = encodeForSigning(tx);
  return { tx, unsigned, digest: sha512Half(hexToBytes(unsigned)) };
}

function signPayout(t: Setup, orderId: string | null, p: ReturnType<typeof xrpPayment>) {
  const ask = () => t.remote.signDigest("xrp", 0, p.digest, "hot", { unsigned: p.unsigned });
  return orderId === null ? ask() : withSigningPurpose({ kind: "order", id: orderId }, ask);
}

async function refusal(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SignerRefusedError, String(err));
    assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("the signer signs an xrp payout whose bytes pay what the order records, and the blob verifies", async () => {
  const t = await setup();
  try {
    const order = await xrpBurnOrder(t);
    const p = xrpPayment(t, order.destinationWallet, XRP_DROPS, 12345);
    const sig = await signPayout(t, order.id, p);
    assert.equal(sig.format, "der");
    // The signature makes the payer's blob, which the chain's own explainer reads as signed by the hot wallet.
    const { encode } = await import("xrpl");
    const blob = encode({ ...p.tx, TxnSignature: Buffer.from(sig.bytes).toString("hex").toUpperCase() });
    const effects = await explainXrpTx(blob);
    assert.equal(effects.from, t.remote.address("xrp", 0, "hot"));
    assert.deepEqual(effects.outputs, [{ to: order.destinationWallet, amount: XRP_DROPS }]);
    // It counted against the hour's limit.
    const window = await readOutflow(t.kv, "xrp");
    assert.deepEqual(Object.values(window.value ?? {}), [XRP_DROPS.toString()]);
  } finally {
    await t.close();
  }
});

Deno.test("the signer refuses a tampered payout (destination, amount, tag), alerting, and spends nothing", async () => {
  const t = await setup();
  try {
    const order = await xrpBurnOrder(t);
    const stranger = t.signer.address("xrp", 99);
    await refusal(signPayout(t, order.id, xrpPayment(t, stranger, XRP_DROPS, 12345)), /pays .* not /);
    await refusal(
      signPayout(t, order.id, xrpPayment(t, order.destinationWallet, XRP_DROPS + 1n, 12345)),
      /pays 5000001, not 5000000/,
    );
    await refusal(signPayout(t, order.id, xrpPayment(t, order.destinationWallet, XRP_DROPS, 999)), /memo|tag/);
    const alert = await getAlert(t.kv, "signer_refused", `order:${order.id}`);
    assert.equal(alert?.count, 3);
    assert.match(alert!.message, /refused to sign on xrp/);
    assert.equal((await readOutflow(t.kv, "xrp")).versionstamp, null, "a refusal spends nothing of the limit");
    // The order is untouched: still processing, nothing recorded on it.
    const after = await getOrder(t.kv, order.id);
    assert.equal(after.value?.status, "processing");
    assert.equal(after.value?.details.intent, undefined);
  } finally {
    await t.close();
  }
});

Deno.test("the signer refuses an unrecorded purpose, no purpose, and a digest that is not the bytes' own", async () => {
  const t = await setup();
  try {
    const order = await xrpBurnOrder(t);
    const p = xrpPayment(t, order.destinationWallet, XRP_DROPS, 12345);
    await refusal(signPayout(t, crypto.randomUUID(), p), /no order .* is recorded/);
    await refusal(signPayout(t, null, p), /names no purpose/);
    // A digest of other bytes (another amount) shown with these bytes: the signer recomputes it and says no.
    const other = xrpPayment(t, order.destinationWallet, XRP_DROPS * 100n, 12345);
    await refusal(
      withSigningPurpose(
        { kind: "order", id: order.id },
        () => t.remote.signDigest("xrp", 0, other.digest, "hot", { unsigned: p.unsigned }),
      ),
      /not the digest of the unsigned transaction/,
    );
    // A purpose kind it has no checker for is refused, not trusted.
    await refusal(
      withSigningPurpose({ kind: "consolidation", id: "c1" }, () => t.remote.signDigest("xrp", 0, p.digest, "hot", p)),
      /cannot check a consolidation yet/,
    );
    assert.ok(await getAlert(t.kv, "signer_refused", "no purpose"));
    assert.equal((await readOutflow(t.kv, "xrp")).versionstamp, null);
  } finally {
    await t.close();
  }
});

Deno.test("the hourly outflow limit refuses the payout that would exceed it, writing nothing", async () => {
  const t = await setup({ xrp: 3n * XRP_DROPS / 2n });
  try {
    const first = await xrpBurnOrder(t);
    const second = await xrpBurnOrder(t);
    await signPayout(t, first.id, xrpPayment(t, first.destinationWallet, XRP_DROPS, 12345, 1));
    const before = await readOutflow(t.kv, "xrp");
    await refusal(
      signPayout(t, second.id, xrpPayment(t, second.destinationWallet, XRP_DROPS, 12345, 2)),
      /hourly outflow limit of 7500000 on xrp would be exceeded: 5000000 signed in the last hour/,
    );
    assert.equal((await readOutflow(t.kv, "xrp")).versionstamp, before.versionstamp, "the window is unchanged");
    assert.match((await getAlert(t.kv, "signer_refused", `order:${second.id}`))!.message, /hourly outflow limit/);
  } finally {
    await t.close();
  }
});

Deno.test("a chain without an hourly limit pays nothing out through the signer", async () => {
  const t = await setup({});
  try {
    const order = await xrpBurnOrder(t);
    await refusal(
      signPayout(t, order.id, xrpPayment(t, order.destinationWallet, XRP_DROPS, 12345)),
      /no hourly outflow limit is configured for xrp/,
    );
  } finally {
    await t.close();
  }
});

/** A mint order of sol to base, in processing: the signer's minter key signs its mint. */
async function mintOrder(t: Setup): Promise<Order> {
  const order = makeOrder("0x" + "cd".repeat(20), "mint", "processing", 0);
  assert.equal(order.destinationChain, "base");
  assert.ok(await createOrder(t.kv, order));
  return order;
}

function mintTx(order: Order, overrides: { to?: string; amount?: bigint } = {}): TransactionSerializableEIP1559 {
  const req = mintRequestOf(order);
  return {
    type: "eip1559",
    chainId: EVM.base.chainId,
    nonce: 3,
    to: CONTRACTS[req.asset] as `0x${string}`,
    data: encodeFunctionData({
      abi: UASSET_ADAPTER_ABI,
      functionName: "mint",
      args: [
        (overrides.to ?? req.to) as `0x${string}`,
        overrides.amount ?? req.amountWei,
        req.depositId as `0x${string}`,
      ],
    }),
    value: 0n,
    gas: 100_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
  };
}

Deno.test("the signer's minter key signs the mint the order records, and refuses another recipient or amount", async () => {
  const t = await setup();
  try {
    const order = await mintOrder(t);
    const account = t.remote.minterAccount("base");
    assert.equal(account.address, t.minterAddress);
    const purpose = { kind: "order", id: order.id };
    const raw = await withSigningPurpose(purpose, () => account.signTransaction(mintTx(order)));
    assert.equal(await recoverTransactionAddress({ serializedTransaction: raw as `0x02${string}` }), t.minterAddress);
    assert.equal(parseTransaction(raw as `0x${string}`).nonce, 3);
    await refusal(
      withSigningPurpose(purpose, () => account.signTransaction(mintTx(order, { to: "0x" + "66".repeat(20) }))),
      /recipient/,
    );
    await refusal(
      withSigningPurpose(purpose, () => account.signTransaction(mintTx(order, { amount: 10n ** 30n }))),
      /amount/,
    );
    // A mint never counts as outflow: no native coin leaves.
    assert.equal((await readOutflow(t.kv, "sol")).versionstamp, null);
    // Another order's purpose does not cover this order's mint (its deposit id, recipient and amount are its own).
    const burnRaw = mintTx(order);
    const other = await mintOrder(t);
    await refusal(
      withSigningPurpose({ kind: "order", id: other.id }, () => account.signTransaction(burnRaw)),
      /deposit id|recipient|amount/,
    );
  } finally {
    await t.close();
  }
});

Deno.test("the socket is mode 0660 (owner and group), refuses an oversized or malformed request, answers publicKey, and is not taken over", async () => {
  const t = await setup();
  try {
    assert.equal((await Deno.stat(t.path)).mode! & 0o777, 0o660);
    const ask = async (bytes: Uint8Array) => {
      const conn = await Deno.connect({ transport: "unix", path: t.path });
      try {
        await conn.write(bytes).catch(() => 0);
        return JSON.parse(await readLine(conn));
      } finally {
        conn.close();
      }
    };
    const big = new TextEncoder().encode("x".repeat(MAX_SIGNER_LINE_BYTES + 10) + "\n");
    const tooBig = await ask(big);
    assert.equal(tooBig.ok, false);
    assert.match(tooBig.error, /longer than/);
    const bad = await ask(new TextEncoder().encode('{"op":"sign","chain":"xrp"}\n'));
    assert.deepEqual([bad.ok, bad.kind], [false, "invalid"]);
    const key = await ask(encodeLine({ op: "publicKey", chain: "xrp", index: 0, branch: "hot" }));
    assert.equal(key.publicKey, Buffer.from(t.signer.publicKey("xrp", 0, "hot")).toString("hex"));
    // A second signer on the same socket refuses to take it over from the live one.
    await assert.rejects(
      serveSigner({
        path: t.path,
        kv: t.kv,
        signer: t.signer,
        minter: null,
        facts: { explainer: () => undefined, evm: () => undefined, hotWallet: () => "", depositAddress: () => "" },
        limits: {},
        now: () => new Date(),
        log: () => {},
      }),
      /another signer is listening/,
    );
  } finally {
    await t.close();
  }
});

Deno.test("the signer signs an xrp sweep from its own deposit key to the hot wallet only, and counts no outflow", async () => {
  const t = await setup();
  try {
    // The keyless worker loads the deposit key's public key first (the xrp payer's prepareSweep does).
    await t.remote.loadKey("xrp", 4, "deposit");
    const from = t.remote.address("xrp", 4, "deposit");
    assert.equal(from, t.signer.address("xrp", 4));
    const sweep = (to: string) => {
      const tx = {
        TransactionType: "Payment",
        Account: from,
        Destination: to,
        Amount: "9000000",
        Fee: "12",
        Sequence: 5,
        LastLedgerSequence: 1000,
        SigningPubKey: Buffer.from(t.remote.publicKey("xrp", 4, "deposit")).toString("hex").toUpperCase(),
      } as unknown as Payment;
      const unsigned = encodeForSigning(tx);
      return withSigningPurpose(
        { kind: "sweep", id: "sweep-1" },
        () => t.remote.signDigest("xrp", 4, sha512Half(hexToBytes(unsigned)), "deposit", { unsigned }),
      );
    };
    assert.equal((await sweep(t.remote.address("xrp", 0, "hot"))).format, "der");
    await refusal(sweep(t.signer.address("xrp", 99)), /not the hot wallet/);
    assert.equal((await readOutflow(t.kv, "xrp")).versionstamp, null, "a sweep is not outflow");
  } finally {
    await t.close();
  }
});

Deno.test("the signer signs a sol payout built as chains/sol/tx.ts builds it, and refuses another destination", async () => {
  const t = await setup();
  try {
    const base = makeOrder("0x" + "ef".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("sol"));
    const lamports = 2_000_000_000n;
    const order = {
      ...base,
      amount: (lamports * 10n ** 9n).toString(), // 18-decimal uSOL wei for 9-decimal lamports
      destinationWallet: t.signer.address("sol", 8),
      details: { ...base.details, memo: "exchange-memo-7" },
    } as Order;
    assert.ok(await createOrder(t.kv, order));
    const transfer = (to: string) =>
      buildTransfer({
        from: t.remote.address("sol", 0, "hot") as SolAddress,
        to: to as SolAddress,
        lamports,
        memos: ["exchange-memo-7", `payout ${order.id}`],
        blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn",
        lastValidBlockHeight: 100n,
      });
    const sign = (built: ReturnType<typeof transfer>) =>
      withSigningPurpose(
        { kind: "order", id: order.id },
        () =>
          t.remote.signMessage("sol", 0, built.message, "hot", {
            unsigned: Buffer.from(built.message).toString("base64"),
          }),
      );
    const good = transfer(order.destinationWallet);
    const effects = await explainSolTx(good.finish(await sign(good)).wire);
    assert.deepEqual(effects.outputs, [{ to: order.destinationWallet, amount: lamports }]);
    await refusal(sign(transfer(t.signer.address("sol", 9))), /pays .* not /);
    const window = await readOutflow(t.kv, "sol");
    assert.deepEqual(Object.values(window.value ?? {}), [lamports.toString()]);
  } finally {
    await t.close();
  }
});

Deno.test("the real sui payer on a Sui-GraphQL-shaped server signs through the signer: a payout and a sweep", async () => {
  const t = await setup();
  const server = await startSuiGraphqlServer({ checkpointsPerEpoch: 1000 });
  try {
    const SUI = 1_000_000_000n;
    const hot = t.remote.address("sui", 0, "hot");
    const base = makeOrder("0x" + "12".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("sui"));
    const order = {
      ...base,
      amount: (3n * SUI * 10n ** 9n).toString(),
      destinationWallet: "0x" + "ab".repeat(32),
    } as Order;
    assert.ok(await createOrder(t.kv, order));
    server.deposit(hot, 10n * SUI);
    server.mine(1);
    const { payer } = suiAdapters({ urls: [server.url], signer: t.remote, confirmations: 1 });
    const inOrder = <T>(fn: () => Promise<T>) => withSigningPurpose({ kind: "order", id: order.id }, fn);
    const req = { orderId: order.id, to: order.destinationWallet, amount: 3n * SUI, memo: null };
    const tx = await inOrder(() => payer.preparePayout(req));
    const effects = await explainSuiTx(tx.raw);
    assert.equal(effects.from, hot);
    assert.deepEqual(effects.outputs, [{ to: order.destinationWallet, amount: 3n * SUI }]);
    assert.ok(decodeSuiRaw(tx.raw).signature);
    // The same payer asked for more than the order says: the signer refuses, the payer throws, nothing is signed.
    await refusal(inOrder(() => payer.preparePayout({ ...req, amount: 4n * SUI })), /pays .* not /);

    // A sweep of deposit address 3: the keyless payer asks the signer for its public key first.
    const deposit = t.signer.address("sui", 3);
    server.deposit(deposit, 2n * SUI);
    server.mine(1);
    const sweep = await withSigningPurpose(
      { kind: "sweep", id: "sweep-sui-1" },
      () => payer.prepareSweep({ sweepId: "sweep-sui-1", from: deposit, derivationIndex: 3 }),
    );
    const swept = await explainSuiTx(sweep.raw);
    assert.equal(swept.from, deposit);
    assert.deepEqual(swept.outputs.map((o) => o.to), [hot]);
  } finally {
    await server.close();
    await t.close();
  }
});

Deno.test("two signer services on one KV file, each with its own handle and socket, cannot both spend the last of the hour's limit", async () => {
  const t = await setup({ xrp: 3n * XRP_DROPS / 2n });
  // A second signer on the same KV file, through its own KV handle and socket, with the same keys and limit.
  const kv2 = await openKv(`${t.dir}/kv.sqlite3`);
  const path2 = `${t.dir}/signer2.sock`;
  const server2 = await serveSigner({
    path: path2,
    kv: kv2,
    signer: t.signer,
    minter: null,
    facts: {
      explainer: explainerOf({
        simulated: new Set(),
        liveEvm: new Set(),
        liveUtxo: new Map(),
        liveAccount: new Set(["xrp"]),
      }),
      evm: () => undefined,
      hotWallet: (chain) => t.signer.address(chain, 0, "hot"),
      depositAddress: (chain, index) => t.signer.address(chain, index, "deposit"),
    },
    limits: { xrp: 3n * XRP_DROPS / 2n },
    now: () => new Date(),
    log: () => {},
  });
  try {
    const remote2 = await RemoteSigner.connect(path2, [{ chain: "xrp", index: 0, branch: "hot" }]);
    const orders = await Promise.all([xrpBurnOrder(t), xrpBurnOrder(t), xrpBurnOrder(t), xrpBurnOrder(t)]);
    // Four payouts of 5 XRP at once, two through each signer, against a 7.5 XRP hour: exactly one is signed.
    const results = await Promise.allSettled(orders.map((order, i) => {
      const p = xrpPayment(t, order.destinationWallet, XRP_DROPS, 12345, i + 1);
      const remote = i % 2 === 0 ? t.remote : remote2;
      return withSigningPurpose(
        { kind: "order", id: order.id },
        () => remote.signDigest("xrp", 0, p.digest, "hot", { unsigned: p.unsigned }),
      );
    }));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1, JSON.stringify(results));
    for (const r of results.filter((r) => r.status === "rejected")) {
      assert.match(String((r as PromiseRejectedResult).reason), /hourly outflow limit/);
    }
    const window = await readOutflow(t.kv, "xrp");
    assert.deepEqual(Object.values(window.value ?? {}), [XRP_DROPS.toString()]);
  } finally {
    await server2.close();
    kv2.close();
    await t.close();
  }
});

Deno.test("the signer pays a native refund exactly as its record says, counted as outflow, and nothing for a finished one", async () => {
  const t = await setup();
  try {
    const to = t.signer.address("xrp", 11);
    const refund: Refund = validRefund({
      id: "refund-1",
      heldId: "transfer:xrp:ABC:0",
      kind: "native",
      chain: "xrp",
      asset: "XRP",
      to,
      amount: "2000000",
      createdBy: "operator-1",
      createdAt: new Date().toISOString(),
      status: "pending",
      attempts: [],
      updatedAt: new Date().toISOString(),
    });
    await t.kv.set(refundKey(refund.id), refund);
    const ask = (p: ReturnType<typeof xrpPayment>) =>
      withSigningPurpose(
        { kind: "refund", id: refund.id },
        () => t.remote.signDigest("xrp", 0, p.digest, "hot", { unsigned: p.unsigned }),
      );
    await refusal(ask(xrpPayment(t, to, 2_000_001n, undefined)), /pays 2000001, not 2000000/);
    assert.equal((await ask(xrpPayment(t, to, 2_000_000n, undefined))).format, "der");
    assert.deepEqual(Object.values((await readOutflow(t.kv, "xrp")).value ?? {}), ["2000000"]);
    await t.kv.set(refundKey(refund.id), {
      ...refund,
      status: "failed",
      failedIntent: { chain: "xrp", txHash: "AB", raw: "00", preparedAt: refund.createdAt },
    });
    await refusal(ask(xrpPayment(t, to, 2_000_000n, undefined, 2)), /refund refund-1 is failed: nothing is signed/);
  } finally {
    await t.close();
  }
});

/** An xrp Payment from the hot key at `index` (or any key of `branch`), as chains/xrp/payer.ts builds it, signed for `purpose`. */
async function xrpTransfer(
  t: Setup,
  key: { index: number; branch: "hot" | "deposit" },
  to: string,
  drops: bigint,
  purpose: { kind: string; id: string },
  tag?: number,
) {
  await t.remote.loadKey("xrp", key.index, key.branch);
  const tx = {
    TransactionType: "Payment",
    Account: t.remote.address("xrp", key.index, key.branch),
    Destination: to,
    Amount: drops.toString(),
    ...(tag === undefined ? {} : { DestinationTag: tag }),
    Fee: "12",
    Sequence: 3,
    LastLedgerSequence: 1000,
    SigningPubKey: Buffer.from(t.remote.publicKey("xrp", key.index, key.branch)).toString("hex").toUpperCase(),
  } as unknown as Payment;
  const unsigned = encodeForSigning(tx);
  return withSigningPurpose(
    purpose,
    () => t.remote.signDigest("xrp", key.index, sha512Half(hexToBytes(unsigned)), key.branch, { unsigned }),
  );
}

/**
 * The xrp hot wallet rotated from index 0 to 1 (docs/operations.md "Rotating a hot wallet"), written as a rotation
 * writes it.
 */
async function rotatedXrp(t: Setup): Promise<void> {
  const at = new Date().toISOString();
  const ref = (index: number) => ({ index, address: t.signer.address("xrp", index, "hot") });
  const state = HotWalletStateSchema.parse({
    chain: "xrp",
    current: { ...ref(1), since: at, by: "test" },
    retired: [{ ...ref(0), into: ref(1), retiredAt: at, by: "test", status: "draining", deadAttempts: [] }],
  });
  await t.kv.set(hotWalletStateKey("xrp"), state);
}

Deno.test("after a hot-wallet rotation the signer pays out only from the wallet in effect, and drains only a retired one into it", async () => {
  const t = await setup();
  try {
    const order = await xrpBurnOrder(t);
    await rotatedXrp(t);
    const purpose = { kind: "order", id: order.id };
    const hot1 = { index: 1, branch: "hot" as const };
    await refusal(
      xrpTransfer(t, { index: 0, branch: "hot" }, order.destinationWallet, XRP_DROPS, purpose, 12345),
      /signed by the xrp hot wallet in effect \(index 1\)/,
    );
    assert.equal((await xrpTransfer(t, hot1, order.destinationWallet, XRP_DROPS, purpose, 12345)).format, "der");
    // The drain: the retired key 0 into the wallet in effect, nothing else, and no outflow counted for it.
    const before = await readOutflow(t.kv, "xrp");
    const drain = { kind: "drain", id: "drain-0-test" };
    const into = t.signer.address("xrp", 1, "hot");
    assert.equal((await xrpTransfer(t, { index: 0, branch: "hot" }, into, 9_000_000n, drain)).format, "der");
    await refusal(xrpTransfer(t, { index: 0, branch: "hot" }, t.signer.address("xrp", 99), 9_000_000n, drain), /not /);
    await refusal(xrpTransfer(t, hot1, t.signer.address("xrp", 2, "hot"), 1n, drain), /signed by a retired xrp hot/);
    assert.equal((await readOutflow(t.kv, "xrp")).versionstamp, before.versionstamp, "a drain is not outflow");
    // A sweep goes into the wallet in effect, no longer into the retired one.
    const sweep = { kind: "sweep", id: "sweep-2" };
    await refusal(
      xrpTransfer(t, { index: 4, branch: "deposit" }, t.signer.address("xrp", 0, "hot"), 9_000_000n, sweep),
      /not /,
    );
    assert.equal((await xrpTransfer(t, { index: 4, branch: "deposit" }, into, 9_000_000n, sweep)).format, "der");
  } finally {
    await t.close();
  }
});

Deno.test("the signer signs a cold sweep only to the cold address in effect, counted as outflow, and none while it changes", async () => {
  const t = await setup({ xrp: 20_000_000n });
  try {
    const hot = { index: 0, branch: "hot" as const };
    const purpose = { kind: "cold_sweep", id: "cs-1" };
    const cold = t.signer.address("xrp", 500);
    await refusal(xrpTransfer(t, hot, cold, 9_000_000n, purpose, 0), /no cold address is in effect on xrp/);
    const since = new Date(Date.now() - 1000).toISOString();
    await t.kv.set(coldAddressKey("xrp"), { current: { address: cold, since }, pending: null });
    await refusal(xrpTransfer(t, hot, t.signer.address("xrp", 99), 9_000_000n, purpose, 0), /pays .* not /);
    assert.equal((await xrpTransfer(t, hot, cold, 9_000_000n, purpose, 0)).format, "der");
    assert.deepEqual(Object.values((await readOutflow(t.kv, "xrp")).value ?? {}), ["9000000"]);
    // The hourly limit bounds what a forged cold address record could move.
    await refusal(xrpTransfer(t, hot, cold, 12_000_000n, purpose, 0), /hourly outflow limit of 20000000 on xrp/);
    const pending = { address: t.signer.address("xrp", 501), at: since, effectiveAt: since, by: "op" };
    const future = { ...pending, effectiveAt: new Date(Date.now() + 3_600_000).toISOString() };
    await t.kv.set(coldAddressKey("xrp"), { current: { address: cold, since }, pending: future });
    await refusal(xrpTransfer(t, hot, cold, 1_000_000n, purpose, 0), /cold address is changing/);
  } finally {
    await t.close();
  }
});
