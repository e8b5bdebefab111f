/**
 * Public facts derived from key material, written by a process that holds the keys (ROLE=worker or all) for one that
 * holds none (ROLE=api, docs/operations.md "Roles"): the shared uAsset transfer address (spec 2.3). Addresses only;
 * never a key.
 */
const transferAddressKey: Deno.KvKey = ["public_config", "uasset_transfer_address"];

/** Stores the transfer address this process derived (or was given); a write only when it changed. */
export async function publishTransferAddress(kv: Deno.Kv, address: string): Promise<void> {
  const stored = await kv.get<string>(transferAddressKey);
  if (stored.value !== address) await kv.set(transferAddressKey, address);
}

/** The transfer address a worker published, or null before any did. */
export async function publishedTransferAddress(kv: Deno.Kv): Promise<string | null> {
  return (await kv.get<string>(transferAddressKey)).value;
}
