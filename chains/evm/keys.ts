/**
 * The EVM adapters' KV keys, built in one place. Addresses and hashes are lower-cased so the same account or
 * transaction always lands on the same key whatever checksum casing a caller used.
 */
import type { EvmChain } from "../catalog.ts";

// Reserved in the recording atomic, so built by kv/chain_state.ts; re-exported for the adapter's readers and tests.
export { type MintNote, mintNoteKey, nonceKey } from "../../kv/chain_state.ts";

/** A fee-bumped replacement of a recorded transaction: same nonce, so at most one of them is ever mined. */
export interface Replacement {
  txHash: string;
  raw: string;
  /** When it was signed (ms): the next bump waits a full threshold after it. */
  at: number;
}

/** Replacements of `originalHash`, oldest first; written before each replacement is broadcast. */
export function replacementsKey(chain: EvmChain, originalHash: string): Deno.KvKey {
  return ["evm_replacements", chain, originalHash.toLowerCase()];
}

/**
 * Most versions (the original and its replacements) one recorded transaction may have. Keeps the list, stored in one
 * KV value, far below the 64 KiB value limit (a mint's version is under 1 KiB), and every status read bounded.
 */
export const MAX_TX_VERSIONS = 16;

/** Set once the fee cap (or the version limit) stopped the replacements of `originalHash`: one alert, not one a tick. */
export function feeCapReachedKey(chain: EvmChain, originalHash: string): Deno.KvKey {
  return ["evm_fee_cap_reached", chain, originalHash.toLowerCase()];
}
