/**
 * The hot wallet's band (config/hot_band.ts; docs/operations.md "Cold addresses"; docs/architecture.md "The sent
 * transaction and custody tiers", custody tiers): when what is hot falls below the floor, or the payouts waiting for
 * funds exceed it, the `hot_wallet_refill` alert (subject: the chain) says how much to send from cold to bring the hot
 * wallet back to the target with every waiting payout paid; it is cleared once the hot wallet is back within the band.
 * Payouts keep waiting visibly meanwhile (the treasury report's pending payouts). Sweeping the surplus above the
 * ceiling to cold is not done here.
 *
 * What is hot: an account chain's hot-wallet balance (read through the chain's reader, as the treasury report does)
 * less the account's reserve and what recorded, not yet final payouts hold (kv/hot_wallet.ts); a UTXO chain's
 * spendable treasury coins (kv/treasury.ts). Waiting: the burns in `processing` to the chain, in native units.
 *
 * KV cost (actors/runtime.ts, the idle-cost rule): reads only, and a commit only when the alert's content changes
 * (raised, its amount moved, cleared), never to count it again at rest.
 */
import { chainFamily, NATIVE, type NativeChain, weiToNative } from "../chains/catalog.ts";
import type { Chains } from "../chains/adapter.ts";
import { formatError } from "../chains/shared/redact.ts";
import type { HotBand } from "../config/hot_band.ts";
import { addAlert, clearAlert, readAlert } from "../kv/alerts.ts";
import { coldAddressAt, readColdAddress } from "../kv/cold_addresses.ts";
import { readHotWalletHolds } from "../kv/hot_wallet.ts";
import { payerAtHotIndex } from "./hot_wallet_in_effect.ts";
import { coinStates, isSpendable } from "../kv/treasury.ts";
import type { PipelineContext } from "./context.ts";
import { ordersIn } from "./treasury_report.ts";

/** What a chain holds hot and what its waiting payouts need, in smallest units. */
export interface HotFunds {
  hot: bigint;
  waiting: bigint;
  waitingCount: number;
}

/**
 * The refill the band asks for: target + waiting - hot, when hot is below the floor or the waiting payouts exceed
 * what is hot; else null (within the band, or above its ceiling: that surplus is the sweep's, not a refill).
 */
export function refillWanted(band: HotBand, f: HotFunds): bigint | null {
  if (f.hot >= band.floor && f.waiting <= f.hot) return null;
  return band.target + f.waiting - f.hot;
}

/** Reads what `chain` holds hot and what waits for it; throws when the hot wallet's balance cannot be read. */
export async function readHotFunds(kv: Deno.Kv, chains: Chains, chain: NativeChain): Promise<HotFunds> {
  const family = chainFamily(chain);
  let hot: bigint;
  if (family.family === "utxo") {
    hot = (await coinStates(kv, family.chain)).filter(isSpendable).reduce((sum, s) => sum + s.coin.amount, 0n);
  } else {
    // The wallet in effect (docs/operations.md "Rotating a hot wallet") and its holds only: a retired wallet pays
    // nothing more.
    const holds = await readHotWalletHolds(kv, family.chain);
    const address = payerAtHotIndex(chains, family.chain, holds.hotIndex).hotWallet;
    const reader = chains.reader(family.chain);
    if (address === null) throw new Error(`the ${chain} payer has no hot wallet`);
    if (!reader.balance) throw new Error(`the ${chain} reader cannot read balances`);
    const balance = await reader.balance(address);
    hot = balance - NATIVE[chain].reserve - holds.held;
  }
  let waiting = 0n, waitingCount = 0;
  for (const o of await ordersIn(kv, "processing", (o) => o.type === "burn" && o.destinationChain === chain)) {
    waiting += weiToNative(chain, BigInt(o.amount)).native;
    waitingCount++;
  }
  return { hot: hot < 0n ? 0n : hot, waiting, waitingCount };
}

export interface BandShown {
  floor: string;
  target: string;
  ceiling: string;
  /** Null when the hot wallet's balance could not be read (`error` says why). */
  hot: string | null;
  waiting: string | null;
  error?: string;
  /** How much to send from cold, or null when the hot wallet is within its band. */
  refill: string | null;
  /** The cold address in effect (kv/cold_addresses.ts), or null when none has taken effect. */
  coldAddress: string | null;
}

/** The band as the treasury report and the alert show it. */
export async function bandShown(
  kv: Deno.Kv,
  band: HotBand,
  chain: NativeChain,
  f: HotFunds,
  now: Date,
): Promise<BandShown> {
  const refill = refillWanted(band, f);
  return {
    floor: band.floor.toString(),
    target: band.target.toString(),
    ceiling: band.ceiling.toString(),
    hot: f.hot.toString(),
    waiting: f.waiting.toString(),
    refill: refill === null ? null : refill.toString(),
    coldAddress: coldAddressAt((await readColdAddress(kv, chain)).value, now).current?.address ?? null,
  };
}

function refillMessage(chain: NativeChain, b: BandShown, waitingCount: number): string {
  const unit = `smallest units of ${NATIVE[chain].token.symbol}`;
  return `send ${b.refill} (${unit}) from cold` + (b.coldAddress ? ` (${b.coldAddress})` : " (no cold address set)") +
    ` to the ${chain} hot wallet: it holds ${b.hot} spendable, band floor ${b.floor}, target ${b.target}, ceiling ` +
    `${b.ceiling}; ${waitingCount} payout(s) wait for ${b.waiting}. Payouts wait until it is funded ` +
    "(deno task admin treasury --chain " + chain + "); cleared when the hot wallet is back within its band";
}

/**
 * Raises, updates or clears `hot_wallet_refill` for each native chain with a band, run by the checks tick
 * (actors/ticks.ts) once a minute. Returns the refill wanted per chain checked (null: within the band).
 */
export async function hotBandCheck(ctx: PipelineContext, chains: readonly NativeChain[]) {
  const out: Partial<Record<NativeChain, bigint | null>> = {};
  for (const chain of chains) {
    const band = ctx.settings.hotBand(chain);
    if (!band) continue;
    let funds: HotFunds;
    try {
      funds = await readHotFunds(ctx.kv, ctx.chains, chain);
    } catch (err) {
      // Unknown is not "within the band": the alert stays as it is until the balance can be read again.
      ctx.log(`hot band ${chain}: the hot wallet's balance could not be read: ${formatError(err).split("\n")[0]}`);
      continue;
    }
    const shown = await bandShown(ctx.kv, band, chain, funds, ctx.now());
    const alert = await readAlert(ctx.kv, "hot_wallet_refill", chain);
    out[chain] = shown.refill === null ? null : BigInt(shown.refill);
    if (shown.refill === null) {
      if (alert.value && (await clearAlert(ctx.kv, "hot_wallet_refill", chain))) {
        ctx.log(`hot band ${chain}: the hot wallet is back within its band (${shown.hot}); hot_wallet_refill cleared`);
      }
      continue;
    }
    const message = refillMessage(chain, shown, funds.waitingCount);
    if (alert.value?.message === message) continue; // unchanged: nothing to commit
    const op = ctx.kv.atomic();
    addAlert(op, alert, { kind: "hot_wallet_refill", subject: chain, chain, message, now: ctx.now() });
    if ((await op.commit()).ok) ctx.log(`hot band ${chain}: ${message}`);
  }
  return out;
}
