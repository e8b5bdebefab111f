/**
 * What a native chain holds cold, read from the chain (docs/reconciliation.md "Cold", docs/operations.md "Cold
 * addresses"): the one rule reconciliation and the treasury report share.
 *
 * - Account chains (sol, xrp, sui): the balance of every cold address we know of, each once: the one in effect and the
 *   destination of every cold sweep recorded (an address replaced since still holds what was swept to it). Everything
 *   at those addresses counts, whoever sent it.
 * - UTXO chains (doge, zec): Dogecoin Core 1.14 has no address index, so only the outputs our completed cold sweeps
 *   paid to cold are asked about (`gettxout`; on Zebra, which has no `gettxout`, its `getaddressutxos`), and those
 *   still unspent count. Coins sent to a cold address from elsewhere are not counted.
 * - In flight: the amounts of cold sweeps recorded and not yet settled. Not added to what is controlled: until its
 *   sweep is settled, a UTXO cold sweep's coins are still treasury coins (locked), and an account chain's transfer is
 *   in exactly one of the two balances read at the tip (the hot wallet's, read first, or the cold address's).
 *
 * Any read that fails throws: the caller names the part unknown, never counts it as zero.
 */
import type { Chains } from "../chains/adapter.ts";
import { chainFamily, type NativeChain } from "../chains/catalog.ts";
import { coldAddressAt, readColdAddress } from "../kv/cold_addresses.ts";
import { listColdSweeps } from "../kv/cold_sweeps.ts";

export interface ColdHoldings {
  /** Smallest units held cold, as the chain says now. */
  cold: bigint;
  /** Recorded cold sweeps not yet settled: their amounts (already counted hot, see the module comment). */
  inFlight: bigint;
  inFlightCount: number;
  /** The addresses read (account chains), or holding the outputs asked about (UTXO chains). */
  addresses: string[];
}

export async function readColdHoldings(
  kv: Deno.Kv,
  chains: Chains,
  chain: NativeChain,
  now: Date,
): Promise<ColdHoldings> {
  const sweeps = await listColdSweeps(kv, chain);
  const open = sweeps.filter((s) => s.status === "prepared");
  const inFlight = open.reduce((sum, s) => sum + BigInt(s.amount), 0n);
  const family = chainFamily(chain);
  const reader = chains.reader(chain);
  if (family.family === "account") {
    const addresses = new Set(sweeps.map((s) => s.destination));
    const current = coldAddressAt((await readColdAddress(kv, chain)).value, now).current;
    if (current) addresses.add(current.address);
    if (addresses.size === 0) return { cold: 0n, inFlight, inFlightCount: open.length, addresses: [] };
    if (!reader.balance) throw new Error(`the ${chain} reader cannot read balances`);
    let cold = 0n;
    for (const a of addresses) cold += await reader.balance(a);
    return { cold, inFlight, inFlightCount: open.length, addresses: [...addresses] };
  }
  const byAddress = new Map<string, { txHash: string; index: number; amount: bigint }[]>();
  for (const s of sweeps) {
    if (s.status !== "completed") continue;
    const outputs = byAddress.get(s.destination) ?? [];
    for (const o of s.coldOutputs ?? []) outputs.push({ txHash: o.txHash, index: o.index, amount: BigInt(o.amount) });
    byAddress.set(s.destination, outputs);
  }
  let cold = 0n;
  for (const [address, outputs] of byAddress) {
    if (outputs.length === 0) continue;
    if (!reader.unspent) throw new Error(`the ${chain} reader cannot say whether an output is unspent`);
    const unspent = await reader.unspent(address, outputs);
    outputs.forEach((o, i) => {
      if (unspent[i]) cold += o.amount;
    });
  }
  return { cold, inFlight, inFlightCount: open.length, addresses: [...byAddress.keys()] };
}
