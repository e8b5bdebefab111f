/**
 * The signer process's UTXO checks (docs/operations.md "Roles", the signer process; actors/signer/utxo.ts), over its
 * real unix socket and a real KV file, with real chain bytes: doge transactions built with bitcoinjs-lib and zec v5
 * transactions built with @bitgo/utxo-lib by the payer's own steps (chains/utxo/doge_tx.ts, zec_tx.ts), signed through
 * the real client (chains/signer_client.ts). The signer reads every coin from its KV treasury records and recomputes
 * each sighash itself. A zec payout goes end to end on a Zebra-shaped RPC server (tests/support/zebra_rpc_server.ts,
 * which verifies every ZIP-244 signature as Zebra's mempool does; no Zebra runs here), and a doge payout on litecoind
 * regtest (Bitcoin Core family, standing in for Dogecoin Core: same legacy P2PKH sighash, regtest address versions).
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import type { PayoutCoin } from "../chains/adapter.ts";
import { NATIVE_CHAINS, type UtxoChain } from "../chains/catalog.ts";
import { explainerOf } from "../chains/explainers.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { RemoteSigner } from "../chains/signer_client.ts";
import { SignerRefusedError } from "../chains/signer_protocol.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { explainUtxoTx } from "../chains/utxo/explain.ts";
import { UTXO_TX, utxoAdapters, type UtxoSettings } from "../chains/utxo/index.ts";
import { outputScript, p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import type { UtxoTxPlan } from "../chains/utxo/tx.ts";
import { ZEC_BRANCH_IDS } from "../chains/utxo/zec_tx.ts";
import { serveSigner } from "../actors/signer/service.ts";
import { getAlert } from "../kv/alerts.ts";
import { coldAddressKey } from "../kv/cold_addresses.ts";
import { changeAddressStateKey } from "../kv/hot_wallets.ts";
import { refundKey, validRefund } from "../kv/refunds.ts";
import type { Refund } from "../model/refund.ts";
import { openKv } from "../kv/open.ts";
import { createOrder } from "../kv/orders.ts";
import { readOutflow } from "../kv/signer_outflow.ts";
import { addCoins, holdCoinsAbove } from "../kv/treasury.ts";
import { addReservations } from "../kv/chain_state.ts";
import type { Order } from "../model/order.ts";
import { makeOrder } from "./support/orders.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";

const LITECOIND = litecoindAvailable("tests/signer_utxo_test.ts");

const DOGE = 100_000_000n;
const NETWORKS = { doge: utxoNetwork("doge", "regtest"), zec: utxoNetwork("zec", "regtest") } as const;
const NU6_3 = ZEC_BRANCH_IDS["NU6.3"];
/** The payer's node is asked nothing for a doge payout (no tip, no branch id); nothing listens here. */
const UNUSED_NODE = "http://user:pass@127.0.0.1:9/";

async function setup(limits: { doge?: bigint; zec?: bigint } = { doge: 15n * DOGE, zec: 15n * DOGE }) {
  const dir = await Deno.makeTempDir({ prefix: "issuance-signer-utxo-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  const signer = Signer.fromMnemonic(generateMnemonic(wordlist, 256), { doge: "regtest", zec: "regtest" });
  const fees = { doge: utxoFee("doge"), zec: utxoFee("zec") };
  const utxo = new Map(
    (["doge", "zec"] as const).map((c) => [c, { network: NETWORKS[c], family: UTXO_TX[c], fee: fees[c] }]),
  );
  const explainer = explainerOf({ simulated: new Set(), liveEvm: new Set(), liveUtxo: utxo, liveAccount: new Set() });
  const path = `${dir}/signer.sock`;
  const logs: string[] = [];
  const server = await serveSigner({
    path,
    kv,
    signer,
    minter: null,
    facts: {
      explainer,
      evm: () => undefined,
      hotWallet: (chain, index) => signer.address(chain, index, "hot"),
      depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
      changeAddress: (chain, index) => signer.address(chain, index, "change"),
    },
    utxo: (chain) => utxo.get(chain),
    limits,
    now: () => new Date(),
    log: (m) => logs.push(m),
  });
  const remote = await RemoteSigner.connect(path, [
    { chain: "doge", index: 0, branch: "change" },
    { chain: "zec", index: 0, branch: "change" },
  ]);
  /** The worker's payer of `chain`, signing through the socket (no key in it). */
  const payer = (chain: UtxoChain, rpcUrl = UNUSED_NODE) => {
    const settings: UtxoSettings = { confirmations: 1, fee: fees[chain], expiryWindow: 40 };
    const rpc = utxoRpc({ chain, urls: [rpcUrl] });
    return utxoAdapters({ chain, network: NETWORKS[chain], rpc, signer: remote, settings });
  };
  /** A treasury coin of ours at deposit index `index`, recorded in KV as the watcher records one. */
  const coin = async (chain: UtxoChain, index: number, amount: bigint, txHash = randomTxid(), output = 0) => {
    const c: PayoutCoin = {
      txHash,
      index: output,
      address: signer.address(chain, index, "deposit"),
      derivationIndex: index,
      amount,
      height: 100,
    };
    await addCoins(kv, [{
      chain,
      outpoint: { txHash: c.txHash, index: c.index },
      address: c.address,
      derivationIndex: c.derivationIndex,
      amount: c.amount,
      height: c.height,
      coinbase: false,
    }]);
    return c;
  };
  return {
    kv,
    signer,
    remote,
    payer,
    coin,
    logs,
    async close() {
      await server.close();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** A P2PKH address of a key that is not ours (a fresh mnemonic's). */
function strangerAddress(chain: UtxoChain): string {
  return p2pkhAddress(NETWORKS[chain], Signer.fromMnemonic(generateMnemonic(wordlist, 128)).publicKey(chain, 0));
}

function randomTxid(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A burn order paying `sats` to a stranger's address on `chain`, in `processing` (its payout is due). */
async function burnOrder(
  t: Setup,
  chain: UtxoChain,
  sats: bigint,
  to = strangerAddress(chain),
): Promise<Order & { type: "burn" }> {
  const base = makeOrder("0x" + "ab".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf(chain));
  const order = {
    ...base,
    amount: (sats * 10n ** 10n).toString(), // 18-decimal uAsset wei for 8-decimal sats and zats
    destinationWallet: to,
  } as Order & { type: "burn" };
  assert.ok(await createOrder(t.kv, order));
  return order;
}

/**
 * What a worker taken over could send: `plan` built by the family's own steps, each sighash computed with the coins'
 * amounts as `plan` claims them, and each input's key the coin's, asked for `purpose`.
 */
async function ask(t: Setup, chain: UtxoChain, plan: UtxoTxPlan, purpose: { kind: string; id: string }) {
  const network = NETWORKS[chain];
  const unsigned = UTXO_TX[chain].build(network, plan);
  const spent = plan.inputs.map((c) => ({ amount: c.amount, script: outputScript(network, c.address) }));
  const digests = UTXO_TX[chain].sighashes(network, unsigned, spent);
  const inputs = plan.inputs.map((c, i) => ({
    index: c.derivationIndex,
    branch: "deposit" as const,
    digest: digests[i],
  }));
  return await withSigningPurpose(purpose, () => t.remote.signUtxoInputs(chain, unsigned, inputs));
}

async function refusal(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SignerRefusedError, String(err));
    assert.match(err.message, pattern);
    return true;
  });
}

const changeOf = (t: Setup, chain: UtxoChain) => t.signer.address(chain, 0, "change");

Deno.test("signer (utxo): a doge payout of a burn order is signed through the socket, the same bytes as in process", async () => {
  const t = await setup();
  try {
    const order = await burnOrder(t, "doge", 5n * DOGE);
    const coins = [await t.coin("doge", 3, 4n * DOGE), await t.coin("doge", 4, 3n * DOGE)];
    const req = { orderId: order.id, to: order.destinationWallet, amount: 5n * DOGE, memo: null, coins };
    const prepared = await withSigningPurpose(
      { kind: "order", id: order.id },
      () => t.payer("doge").payer.preparePayout(req),
    );
    const effects = await explainUtxoTx(prepared.raw, NETWORKS.doge);
    assert.equal(effects.outputs[0].to, order.destinationWallet);
    assert.equal(effects.outputs[0].amount, 5n * DOGE);
    assert.equal(effects.outputs[1].to, changeOf(t, "doge"));
    // RFC 6979 signatures are deterministic: the payer signing in process with the same keys gives the same bytes.
    const local = utxoAdapters({
      chain: "doge",
      network: NETWORKS.doge,
      rpc: utxoRpc({ chain: "doge", urls: [UNUSED_NODE] }),
      signer: t.signer,
      settings: { confirmations: 1, fee: utxoFee("doge"), expiryWindow: 40 },
    });
    assert.equal(prepared.raw, (await local.payer.preparePayout(req)).raw);
    const window = await readOutflow(t.kv, "doge");
    assert.deepEqual(Object.values(window.value ?? {}), [(5n * DOGE).toString()], "the payout counted as outflow");
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): a tampered doge destination, amount or change is refused, alerted, nothing spent", async () => {
  const t = await setup();
  try {
    const order = await burnOrder(t, "doge", 5n * DOGE);
    const inputs = [await t.coin("doge", 3, 10n * DOGE)];
    const purpose = { kind: "order", id: order.id };
    const fee = utxoFee("doge")(1, 2);
    const change = 5n * DOGE - fee;
    const stranger = strangerAddress("doge");
    const plan = (to: string, amount: bigint, changeTo: string): UtxoTxPlan => ({
      inputs,
      outputs: [{ address: to, amount }, { address: changeTo, amount: 10n * DOGE - amount - fee }],
    });
    await refusal(
      ask(t, "doge", plan(stranger, 5n * DOGE, changeOf(t, "doge")), purpose),
      /not our change address|pays/,
    );
    await refusal(
      ask(t, "doge", plan(order.destinationWallet, 5n * DOGE + 1n, changeOf(t, "doge")), purpose),
      /pays .* 500000001, not 500000000/,
    );
    await refusal(
      ask(t, "doge", plan(order.destinationWallet, 5n * DOGE, stranger), purpose),
      new RegExp(`output 1 pays ${change} to ${stranger}, not our change address`),
    );
    // The change may not hide a fee above the coin selection's rule either.
    await refusal(
      ask(t, "doge", { inputs, outputs: [{ address: order.destinationWallet, amount: 5n * DOGE }] }, purpose),
      /in fee, above/,
    );
    assert.equal((await getAlert(t.kv, "signer_refused", `order:${order.id}`))?.count, 4);
    assert.equal((await readOutflow(t.kv, "doge")).versionstamp, null, "a refusal spends nothing of the limit");
    // The untampered payout of the same order is signed.
    const signed = await ask(t, "doge", plan(order.destinationWallet, 5n * DOGE, changeOf(t, "doge")), purpose);
    assert.equal(signed.length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): zec sighashes use the treasury's amounts: a request claiming another amount is refused", async () => {
  const t = await setup();
  try {
    const order = await burnOrder(t, "zec", 1n * DOGE);
    const coin = await t.coin("zec", 2, 3n * DOGE);
    const fee = utxoFee("zec")(1, 2);
    const outputs = [{ address: order.destinationWallet, amount: 1n * DOGE }, {
      address: changeOf(t, "zec"),
      amount: 2n * DOGE - fee,
    }];
    const purpose = { kind: "order", id: order.id };
    // A worker that says the coin holds less (so its fee looks small) computes another ZIP-244 digest: refused.
    const lying = { ...coin, amount: 2n * DOGE };
    await refusal(
      ask(t, "zec", { inputs: [lying], outputs, expiryHeight: 500, branchId: NU6_3 }, purpose),
      /input 0's sighash is not the one .* \(300000000 as the treasury records it\)/,
    );
    // With the treasury's amount, the same payout is signed.
    const sigs = await ask(t, "zec", { inputs: [coin], outputs, expiryHeight: 500, branchId: NU6_3 }, purpose);
    assert.equal(sigs.length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): an input that is not a treasury coin of ours, or signed by another key, is refused", async () => {
  const t = await setup();
  try {
    const order = await burnOrder(t, "doge", 1n * DOGE);
    const ours = await t.coin("doge", 3, 2n * DOGE);
    // Our own address, but a coin the treasury never recorded (or already spent).
    const unknown: PayoutCoin = { ...ours, txHash: randomTxid() };
    const fee = utxoFee("doge")(2, 2);
    const outputs = [{ address: order.destinationWallet, amount: 1n * DOGE }, {
      address: changeOf(t, "doge"),
      amount: 3n * DOGE - fee,
    }];
    const purpose = { kind: "order", id: order.id };
    await refusal(
      ask(t, "doge", { inputs: [ours, { ...unknown, amount: 1n * DOGE }], outputs }, purpose),
      new RegExp(`input 1 spends ${unknown.txHash}:0, which is not an unspent treasury coin of ours`),
    );
    // A recorded coin asked to be signed by another key of ours than its own.
    await refusal(
      ask(t, "doge", {
        inputs: [{ ...ours, derivationIndex: 5 }],
        outputs: [outputs[0], { address: changeOf(t, "doge"), amount: 1n * DOGE - utxoFee("doge")(1, 2) }],
      }, purpose),
      /input 0 spends .* \(index 3\), not an address of the deposit key 5/,
    );
    // No purpose, or one the signer cannot check on a UTXO chain: refused.
    await refusal(
      t.remote.signUtxoInputs("doge", UTXO_TX.doge.build(NETWORKS.doge, { inputs: [ours], outputs }), [
        { index: 3, branch: "deposit", digest: new Uint8Array(32) },
      ]),
      /names no purpose/,
    );
    await refusal(ask(t, "doge", { inputs: [ours], outputs }, { kind: "sweep", id: "x" }), /cannot check a sweep/);
    // A coin a recorded transaction spends (its lock, kv/chain_state.ts), or one held for an operator: refused.
    const locked = await t.coin("doge", 5, 2n * DOGE);
    await addReservations(t.kv.atomic(), {
      txHash: "cd".repeat(32),
      raw: "00",
      reservations: [{ kind: "coins", chain: "doge", outpoints: [{ txHash: locked.txHash, index: 0 }] }],
    }).commit();
    await refusal(
      ask(t, "doge", { inputs: [locked], outputs }, purpose),
      new RegExp(`input 0 spends ${locked.txHash}:0, which recorded transaction ${"cd".repeat(32)} spends`),
    );
    const held = await t.coin("doge", 6, 2n * DOGE);
    await holdCoinsAbove(t.kv, "doge", 99, { reason: "reorged past finality", at: new Date().toISOString() });
    await refusal(ask(t, "doge", { inputs: [held], outputs }, purpose), /held for an operator: reorged past finality/);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): a native zec refund pays its record's destination and amount, only while it is due", async () => {
  const t = await setup();
  try {
    const to = strangerAddress("zec");
    const now = new Date().toISOString();
    const refund: Refund = validRefund({
      id: "refund-zec-1",
      heldId: "transfer:zec:ABC:0",
      kind: "native",
      chain: "zec",
      asset: "ZEC",
      to,
      amount: "20000000",
      createdBy: "operator-1",
      createdAt: now,
      status: "pending",
      attempts: [],
      updatedAt: now,
    });
    await t.kv.set(refundKey(refund.id), refund);
    const coin = await t.coin("zec", 6, DOGE);
    const fee = utxoFee("zec")(1, 2);
    const plan = (amount: bigint) => ({
      inputs: [coin],
      outputs: [{ address: to, amount }, { address: changeOf(t, "zec"), amount: DOGE - amount - fee }],
      expiryHeight: 500,
      branchId: NU6_3,
    });
    const purpose = { kind: "refund", id: refund.id };
    await refusal(ask(t, "zec", plan(20_000_001n), purpose), /pays .* 20000001, not 20000000/);
    assert.equal((await ask(t, "zec", plan(20_000_000n), purpose)).length, 1);
    assert.deepEqual(Object.values((await readOutflow(t.kv, "zec")).value ?? {}), ["20000000"]);
    await t.kv.set(refundKey(refund.id), {
      ...refund,
      status: "failed",
      failedIntent: { chain: "zec", txHash: "ab".repeat(32), raw: "00", preparedAt: now },
    });
    await refusal(ask(t, "zec", plan(20_000_000n), purpose), /refund refund-zec-1 is failed: nothing is signed/);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): change may go to a change address rotated in or out, never to a change index never used", async () => {
  const t = await setup();
  try {
    const order = await burnOrder(t, "doge", DOGE);
    const coin = await t.coin("doge", 3, 3n * DOGE);
    const fee = utxoFee("doge")(1, 2);
    const payTo = (change: string): UtxoTxPlan => ({
      inputs: [coin],
      outputs: [{ address: order.destinationWallet, amount: DOGE }, { address: change, amount: 2n * DOGE - fee }],
    });
    const purpose = { kind: "order", id: order.id };
    const at = (i: number) => t.signer.address("doge", i, "change");
    // Before any rotation only change index 0 is ours to pay change to; index 1 is a key of ours, but not in use.
    await refusal(ask(t, "doge", payTo(at(1)), purpose), /not our change address/);
    // Rotated to index 1 (docs/operations.md "Rotating a hot wallet", UTXO change): the new one and the old one both
    // take change.
    const since = new Date().toISOString();
    await t.kv.set(changeAddressStateKey("doge"), {
      chain: "doge",
      current: { index: 1, address: at(1), since, by: "operator-1" },
      retired: [{ index: 0, address: at(0), retiredAt: since, by: "operator-1" }],
    });
    assert.equal((await ask(t, "doge", payTo(at(1)), purpose)).length, 1);
    assert.equal((await ask(t, "doge", payTo(at(0)), purpose)).length, 1);
    await refusal(ask(t, "doge", payTo(at(2)), purpose), /not our change address/);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): a consolidation merges into our change address, not counted; paying a stranger is refused", async () => {
  const t = await setup();
  try {
    const coins = [await t.coin("zec", 1, 1n * DOGE), await t.coin("zec", 2, 1n * DOGE)];
    const fee = utxoFee("zec")(2, 1);
    const stranger = strangerAddress("zec");
    const purpose = { kind: "consolidation", id: "c-1" };
    const plan = (outputs: UtxoTxPlan["outputs"]) => ({ inputs: coins, outputs, expiryHeight: 500, branchId: NU6_3 });
    await refusal(
      ask(t, "zec", plan([{ address: stranger, amount: 2n * DOGE - fee }]), purpose),
      /consolidation output 0 pays .* not our change address/,
    );
    await refusal(
      ask(
        t,
        "zec",
        plan([{ address: changeOf(t, "zec"), amount: DOGE }, { address: stranger, amount: DOGE - fee }]),
        purpose,
      ),
      /consolidation output 1 pays .* not our change address/,
    );
    const sigs = await ask(t, "zec", plan([{ address: changeOf(t, "zec"), amount: 2n * DOGE - fee }]), purpose);
    assert.equal(sigs.length, 2);
    assert.equal((await readOutflow(t.kv, "zec")).versionstamp, null, "a move between our addresses is no outflow");
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): a doge cold sweep goes to the cold address in effect only, counted against the hourly limit", async () => {
  const t = await setup({ doge: 8n * DOGE });
  try {
    const cold = strangerAddress("doge");
    const other = strangerAddress("doge");
    const coins = [await t.coin("doge", 1, 10n * DOGE)];
    const fee = utxoFee("doge")(1, 2);
    const sweep = (to: string, amount: bigint): UtxoTxPlan => ({
      inputs: coins,
      outputs: [{ address: to, amount }, { address: changeOf(t, "doge"), amount: 10n * DOGE - amount - fee }],
    });
    const purpose = (id: string) => ({ kind: "cold_sweep", id });
    await refusal(ask(t, "doge", sweep(cold, 5n * DOGE), purpose("cs-0")), /no cold address is in effect/);
    const since = new Date(0).toISOString();
    await t.kv.set(coldAddressKey("doge"), { current: { address: cold, since }, pending: null });
    await refusal(ask(t, "doge", sweep(other, 5n * DOGE), purpose("cs-1")), /pays nothing to the doge cold address/);
    assert.equal((await ask(t, "doge", sweep(cold, 5n * DOGE), purpose("cs-2"))).length, 1);
    // 5 of the hour's 8 DOGE are spent: a second sweep of 5 is refused by the limit.
    await refusal(ask(t, "doge", sweep(cold, 5n * DOGE), purpose("cs-3")), /hourly outflow limit of 800000000 on doge/);
  } finally {
    await t.close();
  }
});

Deno.test("signer (utxo): the hourly limit bounds doge payouts; a chain without a limit pays nothing out", async () => {
  const t = await setup({ doge: 15n * DOGE });
  try {
    const fee = utxoFee("doge")(1, 2);
    const pay = async (id: string, to: string) => {
      const c = await t.coin("doge", 3, 10n * DOGE);
      const outputs = [{ address: to, amount: 6n * DOGE }, { address: changeOf(t, "doge"), amount: 4n * DOGE - fee }];
      return ask(t, "doge", { inputs: [c], outputs }, { kind: "order", id });
    };
    const first = await burnOrder(t, "doge", 6n * DOGE);
    const second = await burnOrder(t, "doge", 6n * DOGE);
    const third = await burnOrder(t, "doge", 6n * DOGE);
    await pay(first.id, first.destinationWallet);
    await pay(second.id, second.destinationWallet);
    await refusal(
      pay(third.id, third.destinationWallet),
      /hourly outflow limit of 1500000000 on doge would be exceeded: 1200000000 signed/,
    );
  } finally {
    await t.close();
  }
  const u = await setup({ doge: 15n * DOGE }); // no zec limit
  try {
    const order = await burnOrder(u, "zec", 1n * DOGE);
    const c = await u.coin("zec", 2, 2n * DOGE);
    const outputs = [{ address: order.destinationWallet, amount: DOGE }, {
      address: changeOf(u, "zec"),
      amount: DOGE - utxoFee("zec")(1, 2),
    }];
    await refusal(
      ask(u, "zec", { inputs: [c], outputs, expiryHeight: 500, branchId: NU6_3 }, { kind: "order", id: order.id }),
      /no hourly outflow limit is configured for zec/,
    );
  } finally {
    await u.close();
  }
});

Deno.test("signer (utxo): a zec payout signed through the signer is accepted by a Zebra-shaped server, which checks every ZIP-244 signature", async () => {
  const t = await setup();
  const zebra = ZebraShapedServer.start({ network: NETWORKS.zec, initialBlocks: 3 });
  try {
    const order = await burnOrder(t, "zec", 1n * DOGE);
    const coins: PayoutCoin[] = [];
    for (const [index, amount] of [[4, DOGE], [5, DOGE / 2n]] as const) {
      const address = t.signer.address("zec", index, "deposit");
      const { txid } = zebra.deposit(address, amount);
      coins.push(await t.coin("zec", index, amount, txid));
    }
    zebra.mine(1);
    const zec = t.payer("zec", zebra.url);
    const prepared = await withSigningPurpose({ kind: "order", id: order.id }, () =>
      zec.payer.preparePayout({
        orderId: order.id,
        to: order.destinationWallet,
        amount: 1n * DOGE,
        memo: null,
        coins,
      }));
    await zec.payer.broadcast(prepared);
    zebra.mine(1);
    const status = await zec.reader.txStatus(prepared.txHash);
    assert.equal(status.state, "included", JSON.stringify(status));
  } finally {
    await zebra.close();
    await t.close();
  }
});

Deno.test({
  name: "signer (utxo): a doge payout signed through the signer is accepted and mined by litecoind regtest " +
    "(Bitcoin Core family, standing in for Dogecoin Core)",
  ignore: !LITECOIND,
}, async () => {
  const t = await setup();
  const node = await startLitecoind();
  try {
    const doge = t.payer("doge", node.url);
    const coins: PayoutCoin[] = [];
    for (const [index, amount] of [[8, 3n * DOGE], [9, 2n * DOGE]] as const) {
      const address = t.signer.address("doge", index, "deposit");
      const txHash = await node.send(address, amount);
      await node.mine(1);
      const out = (await doge.reader.transfersOf(txHash))!.find((o) => o.to === address && o.amount === amount)!;
      coins.push(await t.coin("doge", index, amount, txHash, out.index));
    }
    const destination = await node.call<string>("getnewaddress", ["", "legacy"]);
    const order = await burnOrder(t, "doge", 4n * DOGE, destination);
    const prepared = await withSigningPurpose(
      { kind: "order", id: order.id },
      () => doge.payer.preparePayout({ orderId: order.id, to: destination, amount: 4n * DOGE, memo: null, coins }),
    );
    await doge.payer.broadcast(prepared);
    await node.mine(1);
    const status = await doge.reader.txStatus(prepared.txHash);
    assert.equal(status.state, "included", JSON.stringify(status));
    const paid = (await doge.reader.transfersOf(prepared.txHash))!.find((o) => o.to === destination);
    assert.equal(paid?.amount, 4n * DOGE);
  } finally {
    await node.stop();
    await t.close();
  }
});
