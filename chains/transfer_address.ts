/** The one shared EVM address partners send uAssets to for burning (spec 2.3). */
import type { Deriver } from "./derivation.ts";

/** Derived at this path of the master mnemonic unless BURN_TRANSFER_ADDRESS names another address. */
export const TRANSFER_ADDRESS_PATH = "m/44'/60'/0'/0/0";

export function uAssetTransferAddress(config: { burnTransferAddress?: string }, deriver: Deriver): string {
  return config.burnTransferAddress ?? deriver.evmAddress(TRANSFER_ADDRESS_PATH);
}
