/**
 * Burn configurations: per owner and destination (native) chain, where redeemed coins are paid. Every change keeps
 * the previous version in a history entry written in the same commit, since a changed payout address is what an
 * operator investigates first after a dispute. The history keeps the last BURN_CONFIG_HISTORY_CAP versions: the oldest
 * goes in the commit that adds one, so a partner updating in a loop cannot grow our storage.
 */
import type { NativeChain } from "../chains/catalog.ts";

export interface BurnConfig {
  owner: string;
  destinationChain: NativeChain;
  destinationAddress: string;
  memo: string | null;
  createdAt: string;
  updatedAt: string;
}

const burnConfigKey = (owner: string, chain: NativeChain): Deno.KvKey => ["burn_config", owner, chain];
const burnConfigPrefix = (owner: string): Deno.KvKey => ["burn_config", owner];
const historyKey = (owner: string, chain: NativeChain, at: string): Deno.KvKey => [
  "burn_config_history",
  owner,
  chain,
  at,
];
const historyPrefix = (owner: string, chain: NativeChain): Deno.KvKey => ["burn_config_history", owner, chain];

/** Earlier versions kept per (owner, chain). */
export const BURN_CONFIG_HISTORY_CAP = 50;

export type BurnConfigWrite =
  | { ok: true; config: BurnConfig }
  | { ok: false; reason: "duplicate" | "not_found" };

export async function createBurnConfig(
  kv: Deno.Kv,
  owner: string,
  chain: NativeChain,
  destinationAddress: string,
  memo: string | null,
): Promise<BurnConfigWrite> {
  const now = new Date().toISOString();
  const config: BurnConfig = {
    owner,
    destinationChain: chain,
    destinationAddress,
    memo,
    createdAt: now,
    updatedAt: now,
  };
  const key = burnConfigKey(owner, chain);
  const res = await kv.atomic().check({ key, versionstamp: null }).set(key, config).commit();
  return res.ok ? { ok: true, config } : { ok: false, reason: "duplicate" };
}

export async function updateBurnConfig(
  kv: Deno.Kv,
  owner: string,
  chain: NativeChain,
  destinationAddress: string,
  memo: string | null,
): Promise<BurnConfigWrite> {
  const key = burnConfigKey(owner, chain);
  for (;;) {
    const entry = await kv.get<BurnConfig>(key);
    if (!entry.value) return { ok: false, reason: "not_found" };
    const now = new Date().toISOString();
    const next: BurnConfig = { ...entry.value, destinationAddress, memo, updatedAt: now };
    const atomic = kv.atomic()
      .check(entry)
      .set(key, next)
      .set(historyKey(owner, chain, `${now}-${entry.versionstamp}`), entry.value);
    // Every history write checks the configuration's version, so this count cannot change before the commit.
    const history: Deno.KvKey[] = [];
    for await (const e of kv.list({ prefix: historyPrefix(owner, chain) })) history.push(e.key);
    for (const old of history.slice(0, Math.max(0, history.length + 1 - BURN_CONFIG_HISTORY_CAP))) atomic.delete(old);
    const res = await atomic.commit();
    if (res.ok) return { ok: true, config: next };
  }
}

export async function getBurnConfig(kv: Deno.Kv, owner: string, chain: NativeChain): Promise<BurnConfig | null> {
  return (await kv.get<BurnConfig>(burnConfigKey(owner, chain))).value;
}

export async function listBurnConfigs(kv: Deno.Kv, owner: string): Promise<BurnConfig[]> {
  const out: BurnConfig[] = [];
  for await (const e of kv.list<BurnConfig>({ prefix: burnConfigPrefix(owner) })) out.push(e.value);
  return out;
}

/** Earlier versions of a configuration, oldest first. */
export async function listBurnConfigHistory(kv: Deno.Kv, owner: string, chain: NativeChain): Promise<BurnConfig[]> {
  const out: BurnConfig[] = [];
  for await (const e of kv.list<BurnConfig>({ prefix: historyPrefix(owner, chain) })) out.push(e.value);
  return out;
}

/** The response shape of spec 2.3. */
export function toBurnConfigView(c: BurnConfig, uAssetTransferAddress: string) {
  return {
    uAssetTransferAddress,
    destinationChain: c.destinationChain,
    destinationAddress: c.destinationAddress,
    memo: c.memo,
  };
}
