/**
 * What the signer process (docs/operations.md "Roles", the signer process) costs per signature: XRP Ledger payouts of
 * recorded burn orders signed through its unix socket (connect, JSON line, digest recomputed, signed, read back by the
 * xrp explainer, the order read from KV, the hourly window spent in one commit), against the same signature in process.
 * One real KV file, no node (the signer talks to none). Prints ms per signature and signatures per second, one at a
 * time and with `BENCH_CONCURRENCY` in flight. Figures only.
 * Run: deno task bench:signer   (BENCH_SIGNATURES=300, BENCH_CONCURRENCY=8)
 */
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { hexToBytes } from "@noble/hashes/utils.js";
import { encodeForSigning, type Payment } from "xrpl";
import { serveSigner } from "../actors/signer/service.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { explainerOf } from "../chains/explainers.ts";
import { Signer } from "../chains/signer.ts";
import { RemoteSigner } from "../chains/signer_client.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { sha512Half } from "../chains/xrp/payer.ts";
import { createOrder } from "../kv/orders.ts";
import { openKv } from "../kv/open.ts";
import type { Order } from "../model/order.ts";
import { makeOrder } from "../tests/support/orders.ts";
import { positiveNumberEnv as num } from "./support/env.ts";

const SIGNATURES = num("BENCH_SIGNATURES", 300);
const CONCURRENCY = num("BENCH_CONCURRENCY", 8);
const DROPS = 5_000_000n;

const dir = await Deno.makeTempDir({ prefix: "bench-signer-" });
const kv = await openKv(`${dir}/kv.sqlite3`);
const signer = Signer.fromMnemonic(generateMnemonic(wordlist, 256));
const path = `${dir}/signer.sock`;
const server = await serveSigner({
  path,
  kv,
  signer,
  minter: null,
  facts: {
    explainer: explainerOf({
      simulated: new Set(),
      liveEvm: new Set(),
      liveUtxo: new Map(),
      liveAccount: new Set(["xrp"]),
    }),
    evm: () => undefined,
    hotWallet: (chain) => signer.address(chain, 0, "hot"),
    depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
  },
  limits: { xrp: DROPS * BigInt(SIGNATURES) * 4n },
  now: () => new Date(),
  log: () => {},
});
const remote = await RemoteSigner.connect(path, [{ chain: "xrp", index: 0, branch: "hot" }]);
const hot = signer.address("xrp", 0, "hot");
const publicKey = Buffer.from(signer.publicKey("xrp", 0, "hot")).toString("hex").toUpperCase();

async function newOrder(i: number): Promise<Order> {
  const base = makeOrder("0x" + "ab".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("xrp"));
  const order = {
    ...base,
    amount: (DROPS * 10n ** 12n).toString(),
    destinationWallet: signer.address("xrp", 1000 + (i % 50)),
    details: { ...base.details, memo: "12345" },
  } as Order;
  await createOrder(kv, order);
  return order;
}

function payment(order: Order, sequence: number) {
  const tx = {
    TransactionType: "Payment",
    Account: hot,
    Destination: order.destinationWallet,
    Amount: DROPS.toString(),
    DestinationTag: 12345,
    Fee: "12",
    Sequence: sequence,
    LastLedgerSequence: 1000,
    SigningPubKey: publicKey,
  } as unknown as Payment;
  const unsigned = encodeForSigning(tx);
  return { unsigned, digest: sha512Half(hexToBytes(unsigned)) };
}

async function run(
  label: string,
  orders: Order[],
  concurrency: number,
  sign: (o: Order, i: number) => Promise<unknown>,
) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < orders.length) {
      const i = next++;
      await sign(orders[i], i);
    }
  }));
  const ms = performance.now() - started;
  console.log(
    `${label.padEnd(44)} ${orders.length} signatures, concurrency ${concurrency}: ` +
      `${(ms / orders.length).toFixed(2)} ms each, ${(orders.length / (ms / 1000)).toFixed(0)}/s`,
  );
}

try {
  const orders: Order[] = [];
  for (let i = 0; i < SIGNATURES * 2; i++) orders.push(await newOrder(i));
  const viaSocket = (o: Order, i: number) => {
    const p = payment(o, i + 1);
    return withSigningPurpose(
      { kind: "order", id: o.id },
      () => remote.signDigest("xrp", 0, p.digest, "hot", { unsigned: p.unsigned }),
    );
  };
  // deno-lint-ignore require-await
  const inProcess = async (o: Order, i: number) => signer.signDigest("xrp", 0, payment(o, i + 1).digest, "hot");
  await run("in process (Signer, no checks)", orders.slice(0, SIGNATURES), 1, inProcess);
  await run("signer process over its socket, checked", orders.slice(0, SIGNATURES), 1, viaSocket);
  await run("signer process over its socket, checked", orders.slice(SIGNATURES), CONCURRENCY, viaSocket);
} finally {
  await server.close();
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
