/**
 * Traffic on a test anvil, fast: `eth_sendTransaction` from its unlocked dev accounts in one JSON-RPC batch (anvil
 * answers batches), mined into one block. For catch-up tests and benches that need busy blocks
 * (tests/evm_catchup_test.ts, bench/evm_catchup.ts).
 */
import { type Address, encodeFunctionData, type Hex, toHex } from "viem";
import { UASSET_ABI } from "../../contracts/uasset.ts";
import assert from "node:assert/strict";
import { anvilRpc } from "./anvil.ts";

export interface TxCall {
  method: "eth_sendTransaction";
  params: [{ from: Address; to: Address; gas: Hex; data: Hex; nonce?: Hex }];
}

let rpcId = 0;
/** One JSON-RPC batch to anvil (it answers batches): `eth_sendTransaction` from its unlocked dev accounts. */
export async function batch(url: string, calls: TxCall[]): Promise<void> {
  // Nonces given explicitly: anvil answers a batch's calls concurrently, and would give one sender's the same nonce.
  const next = new Map<string, number>();
  for (const c of calls) {
    const from = c.params[0].from;
    let nonce = next.get(from);
    nonce ??= Number(await anvilRpc<string>(url, "eth_getTransactionCount", [from, "pending"]));
    Object.assign(c.params[0], { nonce: toHex(nonce) });
    next.set(from, nonce + 1);
  }
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map((c) => ({ jsonrpc: "2.0", id: ++rpcId, ...c }))),
  });
  const answers = await res.json() as { error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`anvil refused a test transaction: ${failed.error!.message}`);
}

/** An ERC-20 `transfer` of a uAsset by `from`. */
export const transferCall = (token: Address, from: Address, to: Address, amount: bigint): TxCall => ({
  method: "eth_sendTransaction",
  params: [{
    from,
    to: token,
    gas: toHex(60_000),
    data: encodeFunctionData({ abi: UASSET_ABI, functionName: "transfer", args: [to, amount] }),
  }],
});

export const blockNumber = async (url: string) => Number(await anvilRpc<string>(url, "eth_blockNumber"));

/** Sends `calls`, then mines them into one block; returns its number. */
export async function mineBlockWith(url: string, calls: TxCall[]): Promise<number> {
  await batch(url, calls);
  await anvilRpc(url, "evm_mine");
  const n = await blockNumber(url);
  const block = await anvilRpc<{ transactions: string[] }>(url, "eth_getBlockByNumber", [toHex(n), false]);
  assert.equal(block.transactions.length, calls.length, `block ${n} holds every transaction sent for it`);
  return n;
}

/** A uAsset `mint` by `minter` (MINTER_ROLE) with deposit id `id` (hex digits, zero-padded). */
export const mintCall = (token: Address, minter: Address, to: Address, amount: bigint, id: string): TxCall => ({
  method: "eth_sendTransaction",
  params: [{
    from: minter,
    to: token,
    gas: toHex(200_000),
    data: encodeFunctionData({
      abi: UASSET_ABI,
      functionName: "mint",
      args: [to, amount, `0x${id.padStart(64, "0")}`],
    }),
  }],
});
