/**
 * Amounts as a person reads them: `1.5 SOL`, `0.00089088 SOL`, `9,999,999,999,999.999999999998999109 uSOL`. The one
 * formatter for the dashboard, the CLI's text and the admin API's `display` fields (docs/dashboard.md "Units"). Exact:
 * bigint digits in, a string out, no float ever touches an amount; the thousands of the whole part are separated by
 * commas and the fraction keeps every significant digit (trailing zeros dropped). The exact base-unit integer stays in
 * the records, the API's own fields and `--json`.
 */
import { NATIVE, NATIVE_CHAINS, type NativeChain, UASSET_DECIMALS } from "../chains/catalog.ts";

/** A whole number of base units, as records store it: an optional minus and digits. */
const BASE_UNITS = /^-?\d+$/;

/** `amount` base units as whole units with `decimals` places, thousands separated: (1500000000n, 9) -> "1.5". */
export function formatUnits(amount: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new Error(`decimals must be a whole number >= 0: ${decimals}`);
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = decimals === 0 ? "" : digits.slice(digits.length - decimals).replace(/0+$/, "");
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${negative ? "-" : ""}${grouped}${fraction ? `.${fraction}` : ""}`;
}

export interface Unit {
  symbol: string;
  decimals: number;
}

/** The unit of a token symbol: a native coin (SOL, XRP, ...), a uAsset (18 decimals) or an EVM chain's ETH (wei). */
export function unitOf(symbol: string): Unit | null {
  for (const chain of NATIVE_CHAINS) {
    const info = NATIVE[chain];
    if (info.token.symbol === symbol) return { symbol, decimals: info.token.decimals };
    if (info.uAsset.symbol === symbol) return { symbol, decimals: UASSET_DECIMALS };
  }
  if (symbol === "ETH") return { symbol, decimals: 18 };
  return null;
}

/** The native coin of a native chain. */
export function nativeUnit(chain: NativeChain): Unit {
  return { symbol: NATIVE[chain].token.symbol, decimals: NATIVE[chain].token.decimals };
}

/**
 * `1.5 SOL`: `amount` (a base-unit string or bigint) in `unit`, with `suffix` after it (`0.00089088 SOL reserve`).
 * An amount that is not a whole number, or an unknown unit, is shown as given, never guessed at.
 */
export function displayAmount(amount: string | bigint, unit: Unit | string | null, suffix = ""): string {
  const u = typeof unit === "string" ? unitOf(unit) : unit;
  const text = typeof amount === "bigint" ? amount.toString() : amount.trim();
  const tail = suffix ? ` ${suffix}` : "";
  if (!u) return `${text}${typeof unit === "string" ? ` ${unit}` : ""}${tail}`;
  if (!BASE_UNITS.test(text)) return `${text} ${u.symbol}${tail}`;
  return `${formatUnits(BigInt(text), u.decimals)} ${u.symbol}${tail}`;
}

/** An amount of `asset` on `chain`: a symbol (SOL, uSOL), or "native" for the chain's own coin (held transfers). */
export function displayAssetAmount(amount: string | bigint, asset: string, chain: string): string {
  const unit = asset === "native" && (NATIVE_CHAINS as readonly string[]).includes(chain)
    ? nativeUnit(chain as NativeChain)
    : unitOf(asset);
  return unit ? displayAmount(amount, unit) : displayAmount(amount, asset);
}

/** "1,234": a count, thousands separated. */
export function formatCount(n: number | bigint): string {
  return BigInt(n).toString().replace(/\B(?=(\d{3})+$)/g, ",");
}

/**
 * The `display` field of an operation's answer: for every base-unit string found under a key in `amountKeys`, at any
 * depth, its path (`hotWallet.reserve`, `pendingPayouts.0.amount`) and its human form in `unit`. The answer's own
 * fields keep the exact integers.
 */
export function displayPaths(value: unknown, unit: Unit, amountKeys: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (v: unknown, path: string[]) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, String(i)]));
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    } else if (typeof v === "string" && BASE_UNITS.test(v) && amountKeys.has(path[path.length - 1] ?? "")) {
      out[path.join(".")] = displayAmount(v, unit);
    }
  };
  walk(value, []);
  return out;
}
