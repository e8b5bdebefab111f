/**
 * What a signing call carries besides the key's (chain, index, branch) and the digest or message: the purpose it signs
 * for and the unsigned transaction bytes the digest was computed from (docs/operations.md "Roles", the signer process).
 * An in-process Signer (chains/signer.ts) needs neither; a separate signer process (`ROLE=signer`) recomputes the
 * digest from the bytes, decodes them with the chain's explainer and compares the effects with the purpose's record in
 * KV before it signs, so a worker that is taken over can only ask for what the records already say.
 *
 * Why the purpose is ambient (an AsyncLocalStorage scope) and the bytes are explicit: the bytes are the payer's own
 * (only the chain adapter builds them), but the purpose is a fact of the pipeline step that asks for the transaction
 * (an order step, a sweep, a refund, a burn batch), several layers above the adapter; viem's account interface, which
 * the EVM senders sign through, has no parameter to pass it down. The step opens the scope once
 * (`withSigningPurpose`) and every signature asked for inside it, the prepare and any fee-bumped replacement alike,
 * carries it. A call outside any scope carries none, and the signer process refuses it.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The record a signature is for: `order` (a mint or a burn's payout, by order id), `refund`, `sweep`, `consolidation`,
 * `burn_batch`, ... The list is open: each purpose the signer can check has one checker there (actors/signer/).
 */
export interface SigningPurpose {
  kind: string;
  id: string;
}

/** The unsigned transaction a digest or message was computed from, in the form the chain signs. */
export interface SigningContext {
  /**
   * xrp: `encodeForSigning` (hex, prefix included); sui: the TransactionData BCS bytes (base64); sol: the message
   * itself (it is what is signed); EVM: the serialized unsigned transaction (hex).
   */
  unsigned: string;
}

/** What a signing port may answer: a value (in process) or a promise of one (over the signer's socket). */
export type Awaitable<T> = T | Promise<T>;

const scope = new AsyncLocalStorage<SigningPurpose>();

/** Runs `fn` with every signature asked for inside it carrying `purpose`. */
export function withSigningPurpose<T>(purpose: SigningPurpose, fn: () => T): T {
  return scope.run(purpose, fn);
}

/** The purpose of the innermost `withSigningPurpose` around this call, or null outside any. */
export function currentSigningPurpose(): SigningPurpose | null {
  return scope.getStore() ?? null;
}
