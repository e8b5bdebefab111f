/**
 * What the EVM adapter remembers between calls: the next nonce of its account, the note of a mint it recorded, the
 * fee-bumped versions of a recorded transaction, and whether the fee cap already stopped those bumps. The adapter
 * does not know where these live; kv/chain_state.ts `evmKvState` keeps them in KV and config/registry.ts hands it in
 * (docs/architecture.md "Layout": chains/ never imports kv/).
 */
import type { EvmChain, UAsset } from "../catalog.ts";

/** Which uAsset contract a deposit id is minted on, and the transaction recorded for it (replacements under it). */
export interface MintNote {
  asset: UAsset;
  txHash: string;
}

/** A fee-bumped replacement of a recorded transaction: same nonce, so at most one of them is ever mined. */
export interface Replacement {
  txHash: string;
  raw: string;
  /** When it was signed (ms): the next bump waits a full threshold after it. */
  at: number;
}

/** An account's nonce counter as stored, with the versionstamp a `nonce` reservation must check. */
export interface NonceCounter {
  next: bigint | null;
  versionstamp: string | null;
}

export interface EvmState {
  readNonceCounter(chain: EvmChain, account: string): Promise<NonceCounter>;
  readMintNote(chain: EvmChain, depositId: string): Promise<MintNote | null>;
  /** Replacements of `originalHash`, oldest first, as an entry `recordReplacements` checks unchanged. */
  readReplacements(chain: EvmChain, originalHash: string): Promise<Deno.KvEntryMaybe<Replacement[]>>;
  /**
   * Records the versions of `originalHash` (the list read as `entry`, plus a new one) before the new one is sent;
   * false when another writer changed the list since it was read (nothing written).
   */
  recordReplacements(
    entry: Deno.KvEntryMaybe<Replacement[]>,
    chain: EvmChain,
    originalHash: string,
    replacements: Replacement[],
  ): Promise<boolean>;
  /**
   * Raises the `fee_cap_reached` alert of `originalHash` once: false (nothing raised) when it was raised before, so a
   * nudge every tick raises nothing more.
   */
  raiseFeeCapReached(chain: EvmChain, originalHash: string, message: string, at: number): Promise<boolean>;
}
