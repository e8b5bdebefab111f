/**
 * Each native chain's hot-wallet band (docs/operations.md "Cold addresses"; docs/architecture.md "The sent transaction
 * and custody tiers", custody tiers): `<CHAIN>_HOT_BAND=floor,target,ceiling`, whole numbers in the chain's smallest
 * unit (lamports, drops, MIST, koinu, zatoshis), parsed to bigint and never through a float. Unset: no band, and
 * nothing is alerted for that chain. actors/hot_band.ts raises `hot_wallet_refill` from it.
 */
import { NATIVE_CHAINS, type NativeChain } from "../chains/catalog.ts";

export interface HotBand {
  floor: bigint;
  target: bigint;
  ceiling: bigint;
}

export type HotBands = Partial<Record<NativeChain, HotBand>>;

export const hotBandVariable = (chain: NativeChain): string => `${chain.toUpperCase()}_HOT_BAND`;

const WHOLE = /^(0|[1-9]\d{0,35})$/;

/** Reads every `<CHAIN>_HOT_BAND` set; throws naming each variable that is malformed or out of order. */
export function loadHotBands(env: Record<string, string | undefined>): HotBands {
  const bands: HotBands = {};
  const problems: string[] = [];
  for (const chain of NATIVE_CHAINS) {
    const name = hotBandVariable(chain);
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const parts = raw.split(",").map((s) => s.trim());
    if (parts.length !== 3 || !parts.every((p) => WHOLE.test(p))) {
      problems.push(
        `${name} must be floor,target,ceiling: three whole numbers in the smallest unit of ${chain} (got "${raw}")`,
      );
      continue;
    }
    const [floor, target, ceiling] = parts.map(BigInt);
    if (!(floor <= target && target <= ceiling)) {
      problems.push(`${name} must have floor <= target <= ceiling (got ${floor}, ${target}, ${ceiling})`);
      continue;
    }
    bands[chain] = { floor, target, ceiling };
  }
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  return bands;
}
