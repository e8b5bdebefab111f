/**
 * What the signer process expects a transaction to do for the purpose it is asked to sign for (README "Roles", the
 * signer process), read from the purpose's own record in KV, never from the request: one checker per purpose kind.
 * Built: `order` (a mint order's mint with the minter key; a burn order's payout from an account chain's hot wallet).
 * Every other kind is refused until its checker is written here (fail closed): refunds, sweeps, consolidations,
 * on-chain burn batches, cold sweeps.
 */
import { type AccountChain, isEvmChain, isNativeChain, type NativeChain } from "../../chains/catalog.ts";
import type { TxIntent } from "../../chains/effects.ts";
import type { SignRequest } from "../../chains/signer_protocol.ts";
import type { EvmFacts, Explainer } from "../../chains/verify.ts";
import { getOrder } from "../../kv/orders.ts";
import { mintRequestOf, payoutRequestOf } from "../order_actor.ts";

/** What the signer knows besides KV: its own keys' addresses, each chain's decoder and its EVM facts. */
export interface SignerFacts {
  explainer(chain: SignRequest["chain"]): Explainer | undefined;
  evm(chain: SignRequest["chain"]): EvmFacts | undefined;
  hotWallet(chain: AccountChain): string;
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
const SIGNING_STATUSES = new Set(["processing", "minting", "burning"]);

export async function expectedFor(kv: Deno.Kv, facts: SignerFacts, req: SignRequest): Promise<Expected> {
  const purpose = req.purpose;
  if (purpose === null) throw new Refusal("the request names no purpose: the signer signs only for a recorded one");
  switch (purpose.kind) {
    case "order":
      return await forOrder(kv, facts, req, purpose.id);
    default:
      throw new Refusal(`the signer cannot check a ${purpose.kind} yet (not supported in signer mode)`);
  }
}

async function forOrder(kv: Deno.Kv, facts: SignerFacts, req: SignRequest, id: string): Promise<Expected> {
  const entry = await getOrder(kv, id);
  if (entry.versionstamp === null) throw new Refusal(`no order ${id} is recorded`);
  if (entry.invalid) throw new Refusal(`order ${id} is invalid: ${entry.invalid.message}`);
  const order = entry.value;
  if (!SIGNING_STATUSES.has(order.status)) {
    throw new Refusal(`order ${id} is ${order.status}: nothing is signed for it`);
  }
  if (order.type === "mint") {
    const chain = order.destinationChain;
    if (req.chain !== chain || !isEvmChain(chain)) throw new Refusal(`order ${id} mints on ${chain}, not ${req.chain}`);
    if (req.branch !== "minter") {
      throw new Refusal(`order ${id}'s mint is signed by the minter key, not a ${req.branch} key`);
    }
    const evm = facts.evm(chain);
    if (!evm) throw new Refusal(`${chain} is not a live EVM chain of this signer`);
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
  const chain = order.destinationChain;
  if (req.chain !== chain || !isNativeChain(chain)) {
    throw new Refusal(`order ${id} pays out on ${chain}, not ${req.chain}`);
  }
  if (chain !== "sol" && chain !== "xrp" && chain !== "sui") {
    throw new Refusal(`${chain} payouts are not supported in signer mode`);
  }
  if (req.branch !== "hot" || req.index !== 0) throw new Refusal(`order ${id}'s payout is signed by the hot wallet`);
  const explainer = facts.explainer(chain);
  if (!explainer) throw new Refusal(`${chain} is not a live chain of this signer`);
  const { request } = payoutRequestOf(order);
  return {
    intent: {
      kind: "payout",
      chain,
      to: request.to,
      amount: request.amount,
      memo: explainer.memoOnChain(request.memo),
      from: facts.hotWallet(chain),
    },
    outflow: { chain, amount: request.amount },
  };
}
