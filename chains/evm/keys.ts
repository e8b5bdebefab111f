// How many versions of one recorded transaction the EVM adapter keeps (its state is in chains/evm/state.ts; the keys it
// is stored under are kv/chain_state.ts's).

/**
 * Most versions (the original and its replacements) one recorded transaction may have. Keeps the list, stored in one
 * KV value, far below the 64 KiB value limit (a mint's version is under 1 KiB), and every status read bounded.
 */
export const MAX_TX_VERSIONS = 16;
