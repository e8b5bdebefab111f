/**
 * What the signer process (docs/operations.md "Roles", the signer process: doge and zec) costs per UTXO transaction:
 * zec payouts of recorded burn orders, two treasury coins each, signed through its unix socket (the unsigned v5
 * transaction read back, each coin read from the KV treasury, each ZIP-244 sighash recomputed, both inputs signed, the
 * transaction assembled and read back by the zec explainer (two parsers), the order read, the hourly window spent),
 * against the same two signatures in process. One real KV file, no node (the signer talks to none). Figures only.
 * Run: deno task bench:signer-utxo   (BENCH_SIGNATURES=200, BENCH_CONCURRENCY=8)
 */
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { serveSigner } from "../actors/signer/service.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { explainerOf } from "../chains/explainers.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { RemoteSigner } from "../chains/signer_client.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { UTXO_TX } from "../chains/utxo/index.ts";
import { outputScript, utxoNetwork } from "../chains/utxo/network.ts";
import type { UtxoSigningPort, UtxoTxPlan } from "../chains/utxo/tx.ts";
import { ZEC_BRANCH_IDS } from "../chains/utxo/zec_tx.ts";
import { createOrder } from "../kv/orders.ts";
import { openKv } from "../kv/open.ts";
import { addCoins } from "../kv/treasury.ts";
import type { Order } from "../model/order.ts";
import { makeOrder } from "../tests/support/orders.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const SIGNATURES = num("BENCH_SIGNATURES", 200);
const CONCURRENCY = num("BENCH_CONCURRENCY", 8);
const ZATS = 10_000_000n; // 0.1 ZEC per payout
const network = utxoNetwork("zec", "mainnet");
const fee = utxoFee("zec");

const dir = await Deno.makeTempDir({ prefix: "bench-signer-utxo-" });
const kv = await openKv(`${dir}/kv.sqlite3`);
const signer = Signer.fromMnemonic(generateMnemonic(wordlist, 256));
const path = `${dir}/signer.sock`;
const utxo = new Map([["zec" as const, { network, family: UTXO_TX.zec, fee }]]);
const server = await serveSigner({
  path,
  kv,
  signer,
  minter: null,
  facts: {
    explainer: explainerOf({ simulated: new Set(), liveEvm: new Set(), liveUtxo: utxo, liveAccount: new Set() }),
    evm: () => undefined,
    hotWallet: (chain, index) => signer.address(chain, index, "hot"),
    depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
    changeAddress: (chain, index) => signer.address(chain, index, "change"),
  },
  utxo: (chain) => chain === "zec" ? utxo.get("zec") : undefined,
  limits: { zec: ZATS * BigInt(SIGNATURES) * 4n },
  now: () => new Date(),
  log: () => {},
});
const remote = await RemoteSigner.connect(path, [{ chain: "zec", index: 0, branch: "change" }]);
const change = signer.address("zec", 0, "change");

/** A burn order and the two treasury coins its payout spends (recorded in KV, as the watcher records them). */
async function newPayout(i: number): Promise<{ order: Order; plan: UtxoTxPlan }> {
  const base = makeOrder("0x" + "ab".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("zec"));
  const order = {
    ...base,
    amount: (ZATS * 10n ** 10n).toString(),
    destinationWallet: signer.address("zec", 100_000 + (i % 50)),
  } as Order;
  await createOrder(kv, order);
  const inputs = [0, 1].map((k) => {
    const txHash = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
    const index = 1 + (i * 2 + k) % 500;
    return { txHash, index: 0, address: signer.address("zec", index), derivationIndex: index, amount: ZATS, height: 1 };
  });
  await addCoins(
    kv,
    inputs.map((c) => ({ ...c, chain: "zec" as const, outpoint: { txHash: c.txHash, index: 0 }, coinbase: false })),
  );
  const outputs = [{ address: order.destinationWallet, amount: ZATS }, { address: change, amount: ZATS - fee(2, 2) }];
  return { order, plan: { inputs, outputs, expiryHeight: 3_500_000, branchId: ZEC_BRANCH_IDS["NU6.3"] } };
}

/** The payer's steps (chains/utxo/payer.ts): build, sighashes, the port's signatures, assembly. */
async function sign(port: UtxoSigningPort, plan: UtxoTxPlan) {
  const unsigned = UTXO_TX.zec.build(network, plan);
  const spent = plan.inputs.map((c) => ({ amount: c.amount, script: outputScript(network, c.address) }));
  const digests = UTXO_TX.zec.sighashes(network, unsigned, spent);
  const keys = plan.inputs.map((c, i) => ({
    index: c.derivationIndex,
    branch: "deposit" as const,
    digest: digests[i],
  }));
  const ders = await port.signUtxoInputs("zec", unsigned, keys);
  return UTXO_TX.zec.assemble(
    network,
    unsigned,
    ders.map((der, i) => ({ der, publicKey: signer.publicKey("zec", plan.inputs[i].derivationIndex) })),
  );
}

async function run(
  label: string,
  payouts: { order: Order; plan: UtxoTxPlan }[],
  concurrency: number,
  port: UtxoSigningPort,
) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < payouts.length) {
      const { order, plan } = payouts[next++];
      await withSigningPurpose({ kind: "order", id: order.id }, () => sign(port, plan));
    }
  }));
  const ms = performance.now() - started;
  console.log(
    `${label.padEnd(44)} ${payouts.length} transactions (2 inputs), concurrency ${concurrency}: ` +
      `${(ms / payouts.length).toFixed(2)} ms each, ${(payouts.length / (ms / 1000)).toFixed(0)}/s`,
  );
}

try {
  const payouts = [];
  for (let i = 0; i < SIGNATURES * 2; i++) payouts.push(await newPayout(i));
  await run("in process (Signer, no checks)", payouts.slice(0, SIGNATURES), 1, signer);
  await run("signer process over its socket, checked", payouts.slice(0, SIGNATURES), 1, remote);
  await run("signer process over its socket, checked", payouts.slice(SIGNATURES), CONCURRENCY, remote);
} finally {
  await server.close();
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
