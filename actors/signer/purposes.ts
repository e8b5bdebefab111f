/**
 * What the signer process expects a transaction to do for the purpose it is asked to sign for (docs/operations.md
 * "Roles", the signer process), read from the purpose's own record in KV, never from the request: one checker per
 * purpose kind. Built:
 * - `order`: a mint order's mint by the minter key (recipient, amount, deposit id, contract, chain id); a burn order's
 *   payout from an account chain's hot wallet (destination, amount, memo or tag), counted as outflow;
 * - `refund`: a native refund's payout from an account chain's hot wallet (counted as outflow), a uAsset refund's
 *   `transfer` from the transfer address (destination, amount, contract);
 * - `burn_batch`: the transfer address's `burn` of a recorded open batch (its total), or of a batch not recorded yet
 *   (the first attempt is signed before its record): at most what the due records of that uAsset redeemed.
 * - `sweep`: an account chain's deposit address (the key asked for) to the hot wallet in effect, nothing else;
 * - `cold_sweep`: a payout from the hot wallet in effect to the cold address in effect (kv/cold_addresses.ts), counted
 *   as outflow: a worker that forged the cold address record in KV can move no more than the hourly limit;
 * - `drain`: a retired hot wallet (the key asked for) to the hot wallet in effect (kv/hot_wallets.ts), nothing else.
 * The hot wallet in effect is the index kv/hot_wallets.ts records (docs/operations.md "Rotating a hot wallet"): a
 * payout is signed by that key only.
 *
 * UTXO chains (doge, zec; `expectedForUtxo`): every input is a treasury coin of ours, read from KV by the signer
 * (actors/signer/utxo.ts), and every output other than the one the record names goes to one of our change addresses
 * (the change index in effect or one rotated out: kv/hot_wallets.ts change address state), fee within the coin
 * selection's rule (`Explainer.maxFee`):
 * - `order`: a burn order's payout (its destination once, with its amount), counted as outflow;
 * - `refund`: a native refund's payout, counted as outflow;
 * - `consolidation`: every output ours (actors/sweeper.ts `consolidate`); not counted;
 * - `cold_sweep`: the cold address in effect once (none while a change of it waits), counted as outflow.
 * Every other kind is refused (fail closed).
 */
import {
  type AccountChain,
  type EvmChain,
  isEvmChain,
  isNativeChain,
  type NativeChain,
  type UAsset,
  UASSETS,
  type UtxoChain,
} from "../../chains/catalog.ts";
import type { TxEffects, TxIntent } from "../../chains/effects.ts";
import type { SignRequest, SignUtxoRequest } from "../../chains/signer_protocol.ts";
import type { Coin } from "../../kv/treasury.ts";
import type { EvmFacts, Explainer } from "../../chains/verify.ts";
import { coldAddressAt, readColdAddress } from "../../kv/cold_addresses.ts";
import { hotIndexOf, readChangeAddressState, readHotIndex, readHotWalletState } from "../../kv/hot_wallets.ts";
import { burnsDueTotal, getBurnBatch } from "../../kv/onchain_burns.ts";
import { getOrder } from "../../kv/orders.ts";
import { getRefund } from "../../kv/refunds.ts";
import { coldSweepMemo } from "../cold_sweep.ts";
import { mintRequestOf, payoutRequestOf } from "../order_actor.ts";

/** What the signer knows besides KV: its own keys' addresses, each chain's decoder and its EVM facts. */
export interface SignerFacts {
  explainer(chain: SignRequest["chain"]): Explainer | undefined;
  evm(chain: SignRequest["chain"]): EvmFacts | undefined;
  /** The signer's own hot wallet at derivation index `index` (chains/derivation.ts `hotWalletPath`). */
  hotWallet(chain: AccountChain, index: number): string;
  /** The signer's own deposit address at `index` (what a sweep must spend from). */
  depositAddress(chain: AccountChain, index: number): string;
  /** UTXO chains: the signer's change address at change index `index` (chains/derivation.ts `CHANGE_PARENT_PATHS`). */
  changeAddress?(chain: UtxoChain, index: number): string;
}

export interface Expected {
  intent: TxIntent;
  /** What leaves our control (native smallest units on `intent.chain`), counted against the hourly limit; null: none. */
  outflow: { chain: NativeChain; amount: bigint } | null;
}

/** A request the signer understood and says no to; its message is the reason (logged, alerted, answered). */
export class Refusal extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "Refusal";
  }
}

/** The order statuses in which a transaction is signed for it: prepared (processing), replaced or re-signed after. */
const ORDER_SIGNING = new Set(["processing", "minting", "burning"]);
/** A refund signs while pending (prepared) or sending (a replacement, or re-signed after its attempt died). */
const REFUND_SIGNING = new Set(["pending", "sending"]);

/**
 * The transaction `req` must be for its purpose. `effects` (what the signed bytes do) is read only where the record
 * bounds the transaction rather than fixing it (a burn batch not recorded yet).
 */
export async function expectedFor(
  kv: Deno.Kv,
  facts: SignerFacts,
  req: SignRequest,
  effects: TxEffects,
  now: Date,
): Promise<Expected> {
  const purpose = req.purpose;
  if (purpose === null) throw new Refusal("the request names no purpose: the signer signs only for a recorded one");
  switch (purpose.kind) {
    case "order":
      return await forOrder(kv, facts, req, purpose.id);
    case "refund":
      return await forRefund(kv, facts, req, purpose.id);
    case "burn_batch":
      return await forBurnBatch(kv, facts, req, purpose.id, effects);
    case "sweep":
      return await forSweep(kv, facts, req, purpose.id);
    case "cold_sweep":
      return await forColdSweep(kv, facts, req, purpose.id, effects, now);
    case "drain":
      return await forDrain(kv, facts, req, purpose.id);
    default:
      throw new Refusal(`the signer cannot check a ${purpose.kind} yet (not supported in signer mode)`);
  }
}

async function forOrder(kv: Deno.Kv, facts: SignerFacts, req: SignRequest, id: string): Promise<Expected> {
  const entry = await getOrder(kv, id);
  if (entry.versionstamp === null) throw new Refusal(`no order ${id} is recorded`);
  if (entry.invalid) throw new Refusal(`order ${id} is invalid: ${entry.invalid.message}`);
  const order = entry.value;
  if (!ORDER_SIGNING.has(order.status)) throw new Refusal(`order ${id} is ${order.status}: nothing is signed for it`);
  if (order.type === "mint") {
    const chain = order.destinationChain;
    if (req.chain !== chain || !isEvmChain(chain)) throw new Refusal(`order ${id} mints on ${chain}, not ${req.chain}`);
    if (req.branch !== "minter") {
      throw new Refusal(`order ${id}'s mint is signed by the minter key, not a ${req.branch} key`);
    }
    const evm = evmFactsOf(facts, chain);
    const mint = mintRequestOf(order);
    return {
      intent: {
        kind: "mint",
        chain,
        chainId: evm.chainId,
        from: evm.minter,
        contract: evm.contract(mint.asset),
        asset: mint.asset,
        depositId: mint.depositId,
        to: mint.to,
        amount: mint.amountWei,
      },
      outflow: null,
    };
  }
  const { request } = payoutRequestOf(order);
  return await hotWalletPayout(kv, facts, req, order.destinationChain, `order ${id}`, request);
}

async function forRefund(kv: Deno.Kv, facts: SignerFacts, req: SignRequest, id: string): Promise<Expected> {
  let refund;
  try {
    refund = (await getRefund(kv, id)).value;
  } catch (err) {
    throw new Refusal(`refund ${id} is invalid: ${(err as Error).message}`);
  }
  if (!refund) throw new Refusal(`no refund ${id} is recorded`);
  if (!REFUND_SIGNING.has(refund.status)) {
    throw new Refusal(`refund ${id} is ${refund.status}: nothing is signed for it`);
  }
  const amount = BigInt(refund.amount);
  if (refund.kind === "native") {
    return await hotWalletPayout(kv, facts, req, refund.chain, `refund ${id}`, { to: refund.to, amount, memo: null });
  }
  const chain = refund.chain;
  if (req.chain !== chain || !isEvmChain(chain)) throw new Refusal(`refund ${id} is on ${chain}, not ${req.chain}`);
  transferAddressKey(req, `refund ${id}`);
  const evm = evmFactsOf(facts, chain);
  const asset = refund.asset as UAsset;
  if (!UASSETS.includes(asset)) throw new Refusal(`refund ${id} names ${refund.asset}, not a uAsset`);
  return {
    intent: {
      kind: "transfer",
      chain,
      chainId: evm.chainId,
      from: evm.transferAddress,
      contract: evm.contract(asset),
      asset,
      to: refund.to,
      amount,
    },
    outflow: null,
  };
}

async function forBurnBatch(
  kv: Deno.Kv,
  facts: SignerFacts,
  req: SignRequest,
  id: string,
  effects: TxEffects,
): Promise<Expected> {
  const chain = req.chain;
  if (!isEvmChain(chain)) throw new Refusal(`burn batch ${id}: burns are on EVM chains, not ${chain}`);
  transferAddressKey(req, `burn batch ${id}`);
  const evm = evmFactsOf(facts, chain);
  let batch;
  try {
    batch = await getBurnBatch(kv, chain, id);
  } catch (err) {
    throw new Refusal(`burn batch ${id} is invalid: ${(err as Error).message}`);
  }
  const base = { kind: "burn" as const, chain, chainId: evm.chainId, from: evm.transferAddress };
  if (batch) {
    if (batch.status !== "open") throw new Refusal(`burn batch ${id} is ${batch.status}: nothing is signed for it`);
    const amount = BigInt(batch.totalWei);
    return { intent: { ...base, contract: evm.contract(batch.asset), asset: batch.asset, amount }, outflow: null };
  }
  // Not recorded yet: its first attempt is signed before the batch and its transaction are recorded together
  // (actors/onchain_burn.ts recordAndSend). It may burn at most what the due records of its uAsset redeemed.
  const contract = effects.call?.contract ?? "";
  const asset = UASSETS.find((a) => evm.contract(a).toLowerCase() === contract.toLowerCase());
  if (!asset) throw new Refusal(`burn batch ${id} calls ${contract || "no contract"}, not a uAsset of ${chain}`);
  const due = await burnsDueTotal(kv, chain, asset);
  const amount = effects.call?.amount ?? 0n;
  if (amount > due) {
    throw new Refusal(`burn batch ${id} burns ${amount} wei of ${asset}, more than the ${due} its due orders redeemed`);
  }
  return { intent: { ...base, contract: evm.contract(asset), asset, amount }, outflow: null };
}

/**
 * A sweep moves a deposit address's balance to the hot wallet in effect: both are the signer's own keys (the deposit
 * key it is asked to sign with, at `req.index`, and its hot wallet), so no record can make it pay anyone else, and its
 * fee is bounded like a payout's. Not counted as outflow. Its record is written after it is signed
 * (actors/sweeper.ts), so there is none to read yet.
 */
async function forSweep(kv: Deno.Kv, facts: SignerFacts, req: SignRequest, id: string): Promise<Expected> {
  const chain = accountChainOf(facts, req, `sweep ${id}`);
  if (req.branch !== "deposit") throw new Refusal(`sweep ${id} is signed by a deposit key, not the ${req.branch} key`);
  const to = facts.hotWallet(chain, await readHotIndex(kv, chain));
  return { intent: { kind: "sweep", chain, from: facts.depositAddress(chain, req.index), to }, outflow: null };
}

/**
 * A cold sweep (actors/cold_sweep.ts) pays the hot surplus to the cold address in effect, read here from KV at the
 * time of signing; its record is written after it is signed, so the amount is the bytes' own, bounded by the hourly
 * outflow limit it is counted against (the cold address is ours only as far as the record says).
 */
async function forColdSweep(
  kv: Deno.Kv,
  facts: SignerFacts,
  req: SignRequest,
  id: string,
  effects: TxEffects,
  now: Date,
): Promise<Expected> {
  const chain = accountChainOf(facts, req, `cold sweep ${id}`);
  const cold = coldAddressAt((await readColdAddress(kv, chain)).value, now);
  if (!cold.current) throw new Refusal(`cold sweep ${id}: no cold address is in effect on ${chain}`);
  if (cold.pending) throw new Refusal(`cold sweep ${id}: the ${chain} cold address is changing; nothing is swept`);
  // The amount is the bytes' first payment; the comparison below refuses any other shape (one payment, to cold).
  const amount = effects.outputs[0]?.amount ?? 0n;
  if (amount <= 0n) throw new Refusal(`cold sweep ${id} moves no amount`);
  return await hotWalletPayout(kv, facts, req, chain, `cold sweep ${id}`, {
    to: cold.current.address,
    amount,
    memo: coldSweepMemo(chain),
  });
}

/**
 * A drain (actors/hot_wallet_rotation.ts) moves a retired hot wallet's balance into the hot wallet in effect: the key
 * asked for must be a retired one, the destination the wallet in effect, both read from the chain's hot-wallet record.
 * Not counted as outflow.
 */
async function forDrain(kv: Deno.Kv, facts: SignerFacts, req: SignRequest, id: string): Promise<Expected> {
  const chain = accountChainOf(facts, req, `drain ${id}`);
  const { state } = await readHotWalletState(kv, chain);
  if (req.branch !== "hot" || !state?.retired.some((r) => r.index === req.index)) {
    throw new Refusal(`drain ${id} is signed by a retired ${chain} hot wallet, not the ${req.branch} key ${req.index}`);
  }
  const to = facts.hotWallet(chain, hotIndexOf(state));
  return { intent: { kind: "sweep", chain, from: facts.hotWallet(chain, req.index), to }, outflow: null };
}

/** The live account chain `req` signs on, or a refusal: sweeps, cold sweeps and drains are account chains' only. */
function accountChainOf(facts: SignerFacts, req: SignRequest, what: string): AccountChain {
  const chain = req.chain;
  if (chain !== "sol" && chain !== "xrp" && chain !== "sui") {
    throw new Refusal(`${what}: ${chain} is not an account chain (not supported in signer mode)`);
  }
  if (!facts.explainer(chain)) throw new Refusal(`${chain} is not a live chain of this signer`);
  return chain;
}

/** An account chain's payout from its hot wallet in effect, paying exactly `request`; counted as outflow. */
async function hotWalletPayout(
  kv: Deno.Kv,
  facts: SignerFacts,
  req: SignRequest,
  chain: string,
  what: string,
  request: { to: string; amount: bigint; memo: string | null },
): Promise<Expected> {
  if (req.chain !== chain || !isNativeChain(chain)) throw new Refusal(`${what} pays out on ${chain}, not ${req.chain}`);
  if (chain !== "sol" && chain !== "xrp" && chain !== "sui") {
    throw new Refusal(`${chain} payouts are signed by a signUtxo request, every input at once`);
  }
  const index = await readHotIndex(kv, chain);
  if (req.branch !== "hot" || req.index !== index) {
    throw new Refusal(`${what}'s payout is signed by the ${chain} hot wallet in effect (index ${index})`);
  }
  const explainer = facts.explainer(chain);
  if (!explainer) throw new Refusal(`${chain} is not a live chain of this signer`);
  return {
    intent: {
      kind: "payout",
      chain,
      to: request.to,
      amount: request.amount,
      memo: explainer.memoOnChain(request.memo),
      from: facts.hotWallet(chain, index),
    },
    outflow: { chain, amount: request.amount },
  };
}

function evmFactsOf(facts: SignerFacts, chain: EvmChain): EvmFacts {
  const evm = facts.evm(chain);
  if (!evm) throw new Refusal(`${chain} is not a live EVM chain of this signer`);
  return evm;
}

/** The transfer address is the mnemonic's EVM key 0 (chains/evm `TRANSFER_ADDRESS_INDEX`). */
function transferAddressKey(req: SignRequest, what: string): void {
  if (req.branch !== "deposit" || req.index !== 0) throw new Refusal(`${what} is signed by the transfer address`);
}

// ---------------------------------------------------------------- UTXO chains

/** What a UTXO transaction must do, and the change output it is compared with (an output at one of ours). */
export interface ExpectedUtxo extends Expected {
  change: { index: number; address: string; amount: bigint } | undefined;
}

/**
 * The transaction `req` must be for its purpose on a UTXO chain: `coins` are the treasury coins its inputs spend, as
 * the signer read them from KV (their amounts bound the fee; never the request's), `effects` what its signed bytes do.
 */
export async function expectedForUtxo(
  kv: Deno.Kv,
  facts: SignerFacts,
  req: SignUtxoRequest,
  coins: readonly Coin[],
  effects: TxEffects,
  now: Date,
): Promise<ExpectedUtxo> {
  const purpose = req.purpose;
  if (purpose === null) throw new Refusal("the request names no purpose: the signer signs only for a recorded one");
  const chain = req.chain;
  const ours = await changeAddressesOf(kv, facts, chain);
  const what = `${purpose.kind} ${purpose.id}`;
  switch (purpose.kind) {
    case "order": {
      const entry = await getOrder(kv, purpose.id);
      if (entry.versionstamp === null) throw new Refusal(`no order ${purpose.id} is recorded`);
      if (entry.invalid) throw new Refusal(`order ${purpose.id} is invalid: ${entry.invalid.message}`);
      const order = entry.value;
      if (!ORDER_SIGNING.has(order.status)) {
        throw new Refusal(`order ${purpose.id} is ${order.status}: nothing is signed for it`);
      }
      if (order.type !== "burn" || order.destinationChain !== chain) {
        throw new Refusal(`order ${purpose.id} is not a burn paying out on ${chain}`);
      }
      const { request } = payoutRequestOf(order);
      return utxoPayout(facts, chain, coins, effects, ours, { to: request.to, amount: request.amount }, true);
    }
    case "refund": {
      let refund;
      try {
        refund = (await getRefund(kv, purpose.id)).value;
      } catch (err) {
        throw new Refusal(`refund ${purpose.id} is invalid: ${(err as Error).message}`);
      }
      if (!refund) throw new Refusal(`no refund ${purpose.id} is recorded`);
      if (!REFUND_SIGNING.has(refund.status)) {
        throw new Refusal(`refund ${purpose.id} is ${refund.status}: nothing is signed for it`);
      }
      if (refund.kind !== "native" || refund.chain !== chain) {
        throw new Refusal(`refund ${purpose.id} is not a native refund on ${chain}`);
      }
      return utxoPayout(facts, chain, coins, effects, ours, { to: refund.to, amount: BigInt(refund.amount) }, true);
    }
    case "cold_sweep": {
      const cold = coldAddressAt((await readColdAddress(kv, chain)).value, now);
      if (!cold.current) throw new Refusal(`${what}: no cold address is in effect on ${chain}`);
      if (cold.pending) throw new Refusal(`${what}: the ${chain} cold address is changing; nothing is swept`);
      const to = cold.current.address;
      // Its record is written after it is signed (actors/cold_sweep.ts): the amount is the bytes' own, bounded by
      // the hourly outflow limit it is counted against.
      const amount = effects.outputs.find((o) => o.to === to)?.amount ?? 0n;
      if (amount <= 0n) throw new Refusal(`${what} pays nothing to the ${chain} cold address in effect ${to}`);
      return utxoPayout(facts, chain, coins, effects, ours, { to, amount }, true);
    }
    case "consolidation": {
      // Every output ours: the first names which of our change addresses it merges into (any other is refused by
      // the comparison), and its amount is the bytes' own; the fee stays within the rule.
      const first = effects.outputs[0];
      const to = first && ours.has(first.to) ? first.to : ours.inEffect;
      return utxoPayout(facts, chain, coins, effects, ours, { to, amount: first?.amount ?? 0n }, false);
    }
    default:
      throw new Refusal(`the signer cannot check a ${purpose.kind} on ${chain} (not supported in signer mode)`);
  }
}

/** Our change addresses on `chain`: the one in effect and every one rotated out (their coins stay ours). */
async function changeAddressesOf(
  kv: Deno.Kv,
  facts: SignerFacts,
  chain: UtxoChain,
): Promise<{ inEffect: string; has(address: string): boolean }> {
  if (!facts.changeAddress) throw new Refusal(`${chain} is not a live chain of this signer`);
  const { state } = await readChangeAddressState(kv, chain);
  const indexes = [state?.current.index ?? 0, ...(state?.retired.map((r) => r.index) ?? [])];
  const addresses = indexes.map((i) => facts.changeAddress!(chain, i));
  const set = new Set(addresses);
  return { inEffect: addresses[0], has: (a) => set.has(a) };
}

/**
 * A UTXO payout of exactly `pay` from `coins`, any other output to one of our change addresses: compared by the one
 * comparison (chains/effects.ts `differences`) with the change output found among ours. `outflow`: the amount paid
 * counts against the hourly limit (a consolidation's does not: every output is ours).
 */
function utxoPayout(
  facts: SignerFacts,
  chain: UtxoChain,
  coins: readonly Coin[],
  effects: TxEffects,
  ours: { inEffect: string; has(address: string): boolean },
  pay: { to: string; amount: bigint },
  outflow: boolean,
): ExpectedUtxo {
  const explainer = facts.explainer(chain);
  if (!explainer?.maxFee) throw new Refusal(`${chain} is not a live chain of this signer`);
  const others = effects.outputs.map((o, index) => ({ ...o, index })).filter((o) => o.to !== pay.to);
  const change = others.length === 1 && ours.has(others[0].to) ? others[0] : undefined;
  return {
    intent: {
      kind: "payout",
      chain,
      to: pay.to,
      amount: pay.amount,
      memo: null,
      coins: coins.map((c) => ({ ...c.outpoint, amount: c.amount })),
      changeAddress: outflow ? (change?.to ?? ours.inEffect) : pay.to,
      maxFee: explainer.maxFee(coins.length),
    },
    change: change && { index: change.index, address: change.to, amount: change.amount },
    outflow: outflow ? { chain, amount: pay.amount } : null,
  };
}
