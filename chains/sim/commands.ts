/**
 * What a developer does to the simulated chains, shared by the `/sim/*` endpoints and `deno task sim`: native
 * deposits, uAsset faucet credits and transfers to the transfer address, balances, and fault injection.
 * Inputs are validated here with zod; amounts are decimal strings of smallest units, never floats.
 */
import { z } from "zod";
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, type UAsset, UTXO_CHAINS } from "../catalog.ts";
import { SimLedger } from "./ledger.ts";

const amount = z.string().regex(/^[1-9][0-9]{0,40}$/, "Must be a positive integer in the smallest unit, as a string");
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "Must be an EVM address");
const uAsset = z.enum(NATIVE_CHAINS.map((c) => NATIVE[c].uAsset.symbol) as [UAsset, ...UAsset[]]);
const address = z.string().min(1).max(128);

export const DepositInput = z.object({
  chain: z.enum(NATIVE_CHAINS),
  address,
  amount,
  from: address.optional(),
});
/** A miner's coinbase output to `address` (doge, zec): the watcher holds it for an operator, never credits it. */
export const CoinbaseInput = z.object({ chain: z.enum(UTXO_CHAINS), address, amount });
export const FaucetInput = z.object({ chain: z.enum(EVM_CHAINS), address: evmAddress, token: uAsset, amount });
export const TransferInput = z.object({ chain: z.enum(EVM_CHAINS), from: evmAddress, token: uAsset, amount });
export const BalanceInput = z.object({
  chain: z.enum([...NATIVE_CHAINS, ...EVM_CHAINS]),
  address,
  token: uAsset.optional(),
});
export const FaultsInput = z.object({
  chain: z.enum([...NATIVE_CHAINS, ...EVM_CHAINS]),
  rpcErrorRate: z.number().min(0).max(1).optional(),
  revertNextMint: z.number().int().min(0).max(1000).optional(),
  failNextPayout: z.number().int().min(0).max(1000).optional(),
  /** The next payouts stay out of every block until their expiry drops them. */
  stallPayouts: z.number().int().min(0).max(1000).optional(),
  reorgDepth: z.number().int().min(1).max(100).optional(),
  stallMs: z.number().int().min(0).max(86_400_000).optional(),
});

/** A request the simulated chain refuses (the HTTP layer answers 400 with this message). */
export class SimRefusal extends Error {}

/** The sender of a simulated deposit when none is given: an outside wallet of that chain. */
export const SIM_DEPOSIT_SENDER: Record<string, string> = {
  sol: "SimSender1111111111111111111111111111111111",
  xrp: "rSimSender1111111111111111111111",
  sui: "0x" + "5".repeat(64),
  doge: "DSimSender11111111111111111111111",
  zec: "t1SimSender1111111111111111111111",
};

export async function simDeposit(kv: Deno.Kv, input: z.infer<typeof DepositInput>) {
  const ledger = new SimLedger(kv, input.chain);
  return await ledger.submitNativeTransfer({
    from: input.from ?? SIM_DEPOSIT_SENDER[input.chain],
    to: input.address,
    amount: BigInt(input.amount),
  });
}

export async function simCoinbase(kv: Deno.Kv, input: z.infer<typeof CoinbaseInput>) {
  return await new SimLedger(kv, input.chain).mineCoinbase({ to: input.address, amount: BigInt(input.amount) });
}

export async function simFaucet(kv: Deno.Kv, input: z.infer<typeof FaucetInput>) {
  return await new SimLedger(kv, input.chain).faucet({
    address: input.address,
    asset: input.token,
    amount: BigInt(input.amount),
  });
}

export async function simTransfer(kv: Deno.Kv, input: z.infer<typeof TransferInput>, transferAddress: string) {
  const res = await new SimLedger(kv, input.chain).submitErc20Transfer({
    from: input.from,
    to: transferAddress,
    asset: input.token,
    amount: BigInt(input.amount),
  });
  if (!res.ok) throw new SimRefusal("Insufficient balance");
  return { txHash: res.txHash, blockNumber: res.blockNumber };
}

export async function simBalance(kv: Deno.Kv, input: z.infer<typeof BalanceInput>) {
  const balance = await new SimLedger(kv, input.chain).balance(input.address, input.token ?? "native");
  return { balance: balance.toString() };
}

export async function simFaults(kv: Deno.Kv, input: z.infer<typeof FaultsInput>, nowMs = Date.now()) {
  const ledger = new SimLedger(kv, input.chain);
  const change: Record<string, number> = {};
  if (input.rpcErrorRate !== undefined) change.rpcErrorRate = input.rpcErrorRate;
  if (input.revertNextMint !== undefined) change.revertNextMint = input.revertNextMint;
  if (input.failNextPayout !== undefined) change.failNextPayout = input.failNextPayout;
  if (input.stallPayouts !== undefined) change.stallPayouts = input.stallPayouts;
  if (input.stallMs !== undefined) change.stalledUntil = input.stallMs === 0 ? 0 : nowMs + input.stallMs;
  if (Object.keys(change).length > 0) await ledger.setFaults(change);
  if (input.reorgDepth !== undefined) await ledger.reorg(input.reorgDepth);
  return { chain: input.chain, faults: await ledger.getFaults(), head: await ledger.head() };
}
