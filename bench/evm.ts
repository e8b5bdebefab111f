/**
 * The live EVM adapters on a real node (anvil, Base's chain id), in process:
 * - mints per second through the minter adapter, each the pipeline's full write-ahead cycle: prepare (sign) ->
 *   commit the intent with the nonce reservation in one KV atomic -> broadcast -> receipt; one sender, then several
 *   concurrent senders sharing the minter key (their reservations race on the nonce key; a loser prepares again);
 * - burn detections per second: many uAsset transfers to the transfer address (with transfers elsewhere and empty
 *   blocks between), then the reader's scan over those blocks, timed;
 * - RPC calls per scanned block, counted with the client's `onRpc` hook, for that busy range and for quiet blocks.
 * anvil mines each transaction at once (automine) in the mint part, so the mint figures are the adapter's and KV's
 * cost, not a chain's block time.
 * Run: deno task bench:evm   (BENCH_MINTS=300, BENCH_MINT_CONCURRENCY=4, BENCH_TRANSFERS=2000, BENCH_PER_BLOCK=10)
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  keccak256,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PreparedTx } from "../chains/adapter.ts";
import { EVM } from "../chains/catalog.ts";
import { deployUAssets, parseSupplyCaps } from "../chains/evm/deploy.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { openKv } from "../kv/open.ts";
import { addReservations, evmKvState } from "../kv/chain_state.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, startAnvil } from "../tests/support/anvil.ts";

const num = (name: string, fallback: number) => {
  const n = Number(Deno.env.get(name) ?? fallback);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number`);
  return n;
};
const MINTS = num("BENCH_MINTS", 300);
const MINT_CONCURRENCY = num("BENCH_MINT_CONCURRENCY", 4);
const TRANSFERS = num("BENCH_TRANSFERS", 2000);
const PER_BLOCK = num("BENCH_PER_BLOCK", 10);
/** Empty blocks after each block with transfers: a chain where most blocks carry nothing for us. */
const EMPTY_BETWEEN = 4;
const QUIET_BLOCKS = 2_000;

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;
const deployer = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const holders = [2, 3, 4, 5].map((i) => privateKeyToAccount(ANVIL_PRIVATE_KEYS[i]));
const transferAddress = privateKeyToAccount(ANVIL_PRIVATE_KEYS[8]).address;
const elsewhere = privateKeyToAccount(ANVIL_PRIVATE_KEYS[9]).address;

const rpcCalls = new Map<string, number>();
const rpcTotal = () => [...rpcCalls.values()].reduce((a, b) => a + b, 0);
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}
function byMethod(): string {
  return [...rpcCalls.entries()].sort((a, b) => b[1] - a[1]).map(([m, n]) => `${m} ${n}`).join(", ");
}

const anvil = await startAnvil({ chainId: CHAIN_ID });
const dir = await Deno.makeTempDir({ prefix: "bench-evm-" });
const kv = await openKv(`${dir}/kv.sqlite3`);
try {
  const { addresses: uAssets } = await deployUAssets({
    chain: CHAIN,
    rpcUrl: anvil.url,
    deployer,
    admin: deployer.address,
    minter: minter.address,
    supplyCap: parseSupplyCaps("1000000000000000000000"), // the bench mints far more than a real chain would
    minterAllowance: parseSupplyCaps("1000000000000000000000", "the minter allowance"),
  });
  const { client, reader, minter: mintAdapter } = await evmChainAdapters({
    chain: CHAIN,
    state: evmKvState(kv),
    urls: [anvil.url],
    account: minter,
    uAssets,
    transferAddress,
    onRpc: ({ method }) => rpcCalls.set(method, (rpcCalls.get(method) ?? 0) + 1),
  });
  console.log(`anvil ${anvil.url}, chain id ${CHAIN_ID}; five uAssets deployed; KV ${dir}/kv.sqlite3`);

  // ---- mints ----

  let mintSeq = 0;
  /** One mint through the adapter exactly as the order actor drives it; returns the number of nonce races lost. */
  const mintOnce = async (): Promise<number> => {
    const n = mintSeq++;
    const req = {
      depositId: keccak256(toHex(`bench-evm:mint:${n}`)),
      to: holders[n % holders.length].address,
      asset: "uSOL" as const,
      amountWei: 10n ** 18n + BigInt(n),
    };
    let lost = 0;
    let tx: PreparedTx;
    for (;;) {
      tx = await mintAdapter.prepareMint(req);
      const atomic = kv.atomic().set(["bench_intent", req.depositId], { txHash: tx.txHash, raw: tx.raw });
      addReservations(atomic, tx);
      if ((await atomic.commit()).ok) break;
      lost++; // another sender reserved this nonce first: nothing of ours was sent, sign again
    }
    await mintAdapter.broadcast(tx);
    for (;;) {
      const status = await reader.txStatus(tx.txHash);
      if (status.state === "included") {
        if (!status.success) throw new Error(`mint ${n} reverted`);
        return lost;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  const mintRun = async (total: number, concurrency: number) => {
    rpcCalls.clear();
    const latencies: number[] = [];
    let lost = 0;
    let left = total;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        const t0 = performance.now();
        lost += await mintOnce();
        latencies.push(performance.now() - t0);
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    console.log(
      `  ${concurrency} sender(s): ${fmt(total)} mints in ${seconds.toFixed(2)} s = ${
        fmt(total / seconds, 1)
      } mints/s; ` +
        `latency p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms; ` +
        `${lost} nonce reservations lost and re-signed; ${(rpcTotal() / total).toFixed(1)} RPC calls per mint ` +
        `(${byMethod()})`,
    );
  };

  console.log(
    "mints through the minter adapter (prepare -> commit intent + nonce reservation -> broadcast -> receipt):",
  );
  await mintOnce(); // warm-up: first fee estimate, first KV nonce
  await mintRun(MINTS, 1);
  await mintRun(MINTS, MINT_CONCURRENCY);
  const supply = await client.readContract({ address: uAssets.uSOL, abi: UASSET_ABI, functionName: "totalSupply" });
  const expected = BigInt(2 * MINTS + 1) * 10n ** 18n + BigInt((2 * MINTS) * (2 * MINTS + 1) / 2);
  if (supply !== expected) throw new Error(`uSOL supply ${supply}, expected ${expected}: a mint was lost or doubled`);

  // ---- burn detections ----

  // Fund the holders (the deployer takes MINTER_ROLE for this), then send transfers by signing locally with our
  // own nonces and mining PER_BLOCK of them per block, so sending is not what is measured.
  const chain = defineChain({
    id: CHAIN_ID,
    name: "anvil-base",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  });
  const plain = createPublicClient({ chain, transport: http(anvil.url) });
  const admin = createWalletClient({ account: deployer, chain, transport: http(anvil.url) });
  const grant = await admin.writeContract({
    address: uAssets.uSOL,
    abi: UASSET_ABI,
    functionName: "configureMinter",
    args: [deployer.address, 2n ** 200n],
  });
  await plain.waitForTransactionReceipt({ hash: grant, pollingInterval: 5 });
  for (const h of holders) {
    const hash = await admin.writeContract({
      address: uAssets.uSOL,
      abi: UASSET_ABI,
      functionName: "mint",
      args: [h.address, 10n ** 30n, keccak256(toHex(`bench-evm:fund:${h.address}`))],
    });
    await plain.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  }
  await anvilRpc(anvil.url, "evm_setAutomine", [false]);
  const fees = await plain.estimateFeesPerGas();
  const nonces = await Promise.all(holders.map((h) => plain.getTransactionCount({ address: h.address })));
  const send = async (i: number, to: Address, amount: bigint) => {
    const k = i % holders.length;
    const raw = await holders[k].signTransaction({
      type: "eip1559",
      chainId: CHAIN_ID,
      nonce: nonces[k]++,
      to: uAssets.uSOL,
      data: encodeFunctionData({ abi: UASSET_ABI, functionName: "transfer", args: [to, amount] }),
      gas: 80_000n,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    await anvilRpc(anvil.url, "eth_sendRawTransaction", [raw]);
  };
  const from = Number(await plain.getBlockNumber()) + 1;
  const sendStarted = performance.now();
  let sent = 0;
  let noise = 0;
  while (sent < TRANSFERS) {
    const batch: Promise<void>[] = [];
    for (let j = 0; j < PER_BLOCK && sent < TRANSFERS; j++) batch.push(send(sent, transferAddress, BigInt(++sent)));
    for (let j = 0; j < Math.ceil(PER_BLOCK / 2); j++, noise++) batch.push(send(sent + j, elsewhere, 1n));
    await Promise.all(batch);
    await anvilRpc(anvil.url, "evm_mine");
    await anvilRpc(anvil.url, "anvil_mine", [toHex(EMPTY_BETWEEN)]);
  }
  const to = Number(await plain.getBlockNumber());
  const pending = await anvilRpc<{ pending: Record<string, unknown> }>(anvil.url, "txpool_content");
  if (Object.keys(pending.pending ?? {}).length > 0) throw new Error("transactions left unmined");
  console.log(
    `burn detections: ${fmt(TRANSFERS)} uSOL transfers to the transfer address and ${fmt(noise)} elsewhere, ` +
      `${PER_BLOCK} per block + ${EMPTY_BETWEEN} empty blocks after each, blocks ${from}..${to} ` +
      `(${fmt(to - from + 1)} blocks; sent in ${((performance.now() - sendStarted) / 1000).toFixed(1)} s)`,
  );

  await reader.scan(from, to); // warm-up (JIT, node caches); not timed
  for (const maxRange of [1_000, 100]) {
    const { reader: r } = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minter,
      uAssets,
      transferAddress,
      maxRange,
      skipChainIdCheck: true,
      onRpc: ({ method }) => rpcCalls.set(method, (rpcCalls.get(method) ?? 0) + 1),
    });
    rpcCalls.clear();
    const t0 = performance.now();
    const blocks = await r.scan(from, to);
    const seconds = (performance.now() - t0) / 1000;
    const found = blocks.reduce((s, b) => s + b.transfers.length, 0);
    if (found !== TRANSFERS) throw new Error(`scan found ${found} transfers, ${TRANSFERS} were sent`);
    const blockCount = to - from + 1;
    console.log(
      `  scan, maxRange ${fmt(maxRange)}: ${fmt(found)} detected in ${(seconds * 1000).toFixed(0)} ms = ` +
        `${fmt(found / seconds)} detections/s; ${rpcTotal()} RPC calls = ` +
        `${(rpcTotal() / blockCount).toFixed(3)} per scanned block (${byMethod()})`,
    );
  }

  // ---- quiet blocks ----

  await anvilRpc(anvil.url, "anvil_mine", [toHex(QUIET_BLOCKS)]);
  const quietTo = Number(await plain.getBlockNumber());
  rpcCalls.clear();
  const tq = performance.now();
  const quiet = await reader.scan(to + 1, quietTo);
  const quietMs = performance.now() - tq;
  console.log(
    `quiet chain: ${fmt(quietTo - to)} blocks with nothing for us scanned in ${quietMs.toFixed(0)} ms, ` +
      `${quiet.length} block(s) returned, ${rpcTotal()} RPC calls = ` +
      `${(rpcTotal() / (quietTo - to)).toFixed(4)} per scanned block (${byMethod()})`,
  );
} finally {
  kv.close();
  await anvil.stop();
  await Deno.remove(dir, { recursive: true });
}
