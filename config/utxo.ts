/**
 * Live UTXO chains (doge, zec), configured per chain by environment like the EVM ones (config/evm.ts). A chain is
 * configured when `<CHAIN>_RPC_URLS` is set (`DOGE_RPC_URLS`, `ZEC_RPC_URLS`); which modes accept it, and on which
 * network, is config/chain_mode.ts. The variables every native chain shares are read by config/native.ts; every
 * value is checked at start and refused with a sentence naming the variable; no message ever quotes an RPC URL beyond
 * its origin, so a password in the URL never reaches a log.
 *
 * - `<CHAIN>_RPC_URLS`: comma-separated http(s) URLs in order of preference, credentials as userinfo
 *   (`http://user:password@127.0.0.1:22555/`; Zebra's cookie is `__cookie__:<cookie>`).
 * - `<CHAIN>_CONFIRMATIONS`: default the catalog's (doge 40, zec 24), at least 1.
 * - `<CHAIN>_START_BLOCK`: a block height or `tip` (default): where the watcher starts on its first run.
 * - `<CHAIN>_RPC_TIMEOUT_MS`, `<CHAIN>_BLOCK_MS`, `<CHAIN>_CONFIRMATION_TIMEOUT_MS`: as for EVM chains.
 * - `DOGE_FEE_PER_KB`: koinu (1e-8 DOGE) per 1,000 bytes, default 1,000,000 (0.01 DOGE/kB, Dogecoin Core's
 *   recommended fee). Refused below 100,000 (0.001 DOGE/kB): Dogecoin Core 1.14.5+ `DEFAULT_MIN_RELAY_TX_FEE`
 *   (`RECOMMENDED_MIN_TX_FEE / 10`, src/validation.h); a cheaper payout is one no default node relays, stuck for good.
 *   Refused above 100,000,000 (1 DOGE/kB, the pre-1.14.5 fee and 100 times today's): a typo must not drain the
 *   treasury into fees.
 * - `ZEC_EXPIRY_WINDOW`: `nExpiryHeight` = tip + this many blocks, default the catalog's 40 (ZIP-203's default since
 *   Blossom). At least 4: zcashd refuses a transaction as `tx-expiring-soon` when `nExpiryHeight` < next height + 3
 *   (`TX_EXPIRING_SOON_THRESHOLD`), and the next height is tip + 1. At most 1,152 (a day of 75-second blocks): ZIP-203
 *   allows more, but a lost payout is proven dead only after its expiry, so a longer window only delays its re-sending.
 */
import { z } from "zod";
import { NATIVE, UTXO_CHAINS, type UtxoChain } from "../chains/catalog.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import {
  type LiveNativeChain,
  liveNativeChainFromEnv,
  NATIVE_RPC_TIMEOUT_MS_DEFAULT,
  parseRpcUrls,
  wholeFromEnv,
} from "./native.ts";

export { parseRpcUrls };

/** A live doge or zec chain: config/native.ts has the fields every native chain shares. */
export type LiveUtxoChain = LiveNativeChain<UtxoChain>;

export interface UtxoConfig {
  chains: Partial<Record<UtxoChain, LiveUtxoChain>>;
  /** doge payouts and coin selection: koinu per 1,000 bytes (`DOGE_FEE_PER_KB`). */
  dogeFeePerKb: bigint;
  /** zec payouts: `nExpiryHeight` = tip + this (`ZEC_EXPIRY_WINDOW`). */
  zecExpiryWindow: number;
}

/** 0.01 DOGE per kB: Dogecoin Core's recommended fee (doc/fee-recommendation.md, 1.14.5). */
export const DOGE_FEE_PER_KB_DEFAULT = 1_000_000n;
/** 0.001 DOGE per kB: Dogecoin Core 1.14.5+ default minimum relay fee. */
export const DOGE_FEE_PER_KB_MIN = 100_000n;
/** 1 DOGE per kB. */
export const DOGE_FEE_PER_KB_MAX = 100_000_000n;
export const ZEC_EXPIRY_WINDOW_MIN = 4;
export const ZEC_EXPIRY_WINDOW_MAX = 1_152;
/** The RPC client's default (chains/utxo/rpc.ts). */
export const UTXO_RPC_TIMEOUT_MS_DEFAULT = NATIVE_RPC_TIMEOUT_MS_DEFAULT;

/** No live UTXO chain, the defaults: what a process without UTXO configuration (or an old caller) gets. */
export const NO_LIVE_UTXO: UtxoConfig = Object.freeze({
  chains: {},
  dogeFeePerKb: DOGE_FEE_PER_KB_DEFAULT,
  zecExpiryWindow: NATIVE.zec.expiry.kind === "height" ? NATIVE.zec.expiry.window : 40,
});

export function loadUtxoConfig(env: Record<string, string | undefined>): UtxoConfig {
  const chains: Partial<Record<UtxoChain, LiveUtxoChain>> = {};
  for (const chain of UTXO_CHAINS) {
    const live = liveNativeChainFromEnv(env, chain);
    if (live) chains[chain] = live;
  }
  return {
    chains,
    dogeFeePerKb: dogeFeePerKb(env.DOGE_FEE_PER_KB),
    zecExpiryWindow: wholeFromEnv(
      env,
      "ZEC_EXPIRY_WINDOW",
      NO_LIVE_UTXO.zecExpiryWindow,
      ZEC_EXPIRY_WINDOW_MIN,
      ZEC_EXPIRY_WINDOW_MAX,
      " of blocks",
    ),
  };
}

const feeText = z.string().regex(/^[1-9]\d{0,11}$/);

function dogeFeePerKb(value: string | undefined): bigint {
  const text = value?.trim();
  if (text === undefined || text === "") return DOGE_FEE_PER_KB_DEFAULT;
  if (!feeText.safeParse(text).success) {
    throw new Error(
      `DOGE_FEE_PER_KB must be a whole number of koinu (1e-8 DOGE) per 1,000 bytes, e.g. 1000000 for 0.01 DOGE/kB ` +
        `(got ${JSON.stringify(text)})`,
    );
  }
  const fee = BigInt(text);
  if (fee < DOGE_FEE_PER_KB_MIN) {
    throw new Error(
      `DOGE_FEE_PER_KB ${fee} is below Dogecoin Core's minimum relay fee of ${DOGE_FEE_PER_KB_MIN} koinu per kB ` +
        "(0.001 DOGE/kB): nodes would not relay our payouts",
    );
  }
  if (fee > DOGE_FEE_PER_KB_MAX) {
    throw new Error(
      `DOGE_FEE_PER_KB ${fee} is above the cap of ${DOGE_FEE_PER_KB_MAX} koinu per kB (1 DOGE/kB, 100 times the ` +
        "recommended 0.01 DOGE/kB): refused as a likely typo",
    );
  }
  return fee;
}

/**
 * The fee rule of a live UTXO chain: doge at `DOGE_FEE_PER_KB`, zec ZIP-317's (no setting). The one place the
 * configured rate meets chains/shared/utxo_fee.ts; the pipeline settings (`settings.utxoFee`) hand it to coin
 * selection and the payer alike.
 */
export function configuredUtxoFee(chain: UtxoChain, utxo: Pick<UtxoConfig, "dogeFeePerKb">): FeeFunction {
  return chain === "doge" ? utxoFee(chain, { dogeSatsPerKb: utxo.dogeFeePerKb }) : utxoFee(chain);
}
