/**
 * The EVM adapters' KV records. Their keys and reads/writes live in kv/chain_state.ts (the only KV code chains need);
 * re-exported here for the adapter's modules and tests. Addresses and hashes are lower-cased there, so the same
 * account or transaction always lands on the same key whatever checksum casing a caller used.
 */
export {
  feeCapReachedKey,
  type MintNote,
  mintNoteKey,
  nonceKey,
  type Replacement,
  replacementsKey,
} from "../../kv/chain_state.ts";

/**
 * Most versions (the original and its replacements) one recorded transaction may have. Keeps the list, stored in one
 * KV value, far below the 64 KiB value limit (a mint's version is under 1 KiB), and every status read bounded.
 */
export const MAX_TX_VERSIONS = 16;
