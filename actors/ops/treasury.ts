/**
 * Treasury reports (actors/treasury_report.ts for doge and zec, read from KV alone; actors/account_treasury_report.ts
 * for sol, xrp and sui, whose hot-wallet balance is read through the chain's reader). Amounts are decimal strings in
 * the chain's smallest unit.
 */
import { z } from "zod";
import {
  type AccountChain,
  chainFamily,
  chainsOf,
  NATIVE_CHAINS,
  type NativeChain,
  UTXO_CHAINS,
} from "../../chains/catalog.ts";
import { type AccountTreasuryReport, accountTreasuryReport, accountTreasuryText } from "../account_treasury_report.ts";
import { type TreasuryReport, treasuryReport, treasuryText } from "../treasury_report.ts";
import { defineOp, type OpContext } from "./op.ts";
import { formatError } from "../../chains/shared/redact.ts";
import { type BandShown, bandShown, readHotFunds } from "../hot_band.ts";
import { readColdHoldings } from "../cold_balance.ts";
import { displayAmount, displayPaths, nativeUnit, type Unit } from "../../model/amounts.ts";

const ACCOUNT_CHAINS = chainsOf("account", NATIVE_CHAINS) as [
  AccountChain,
  ...AccountChain[],
];

/** The hot-wallet band (actors/hot_band.ts `bandShown`), or null when `<CHAIN>_HOT_BAND` is unset. */
const BandSchema = z.object({
  floor: z.string(),
  target: z.string(),
  ceiling: z.string(),
  hot: z.string().nullable().describe("what is hot and spendable now (account chains: balance less reserve and holds)"),
  waiting: z.string().nullable().describe("what the payouts waiting in processing need"),
  error: z.string().optional().describe("why the hot wallet's balance could not be read"),
  refill: z.string().nullable().describe("how much to send from cold (hot_wallet_refill), null within the band"),
  coldAddress: z.string().nullable(),
}).nullable().describe("The hot-wallet band (<CHAIN>_HOT_BAND) and the refill wanted; null: no band");

/** Hot / cold / in flight to cold (actors/cold_balance.ts): each null with its error when it could not be read. */
const CustodySchema = z.object({
  hot: z.string().nullable().describe("what is hot and spendable now (the band's `hot`)"),
  hotError: z.string().optional(),
  cold: z.string().nullable().describe("what the cold addresses hold, read from the chain (docs/reconciliation.md)"),
  coldError: z.string().optional(),
  inFlight: z.string().nullable().describe("cold sweeps recorded, not yet settled (still counted hot)"),
  inFlightCount: z.number().int().nullable(),
}).describe("Hot, cold and in flight to cold, in the chain's smallest unit");

/** The amount fields of a treasury report: base-unit strings under these keys are shown in `display`. */
export const TREASURY_AMOUNT_KEYS: ReadonlySet<string> = new Set([
  "amount",
  "balance",
  "reserve",
  "fee",
  "fees",
  "leave",
  "floor",
  "target",
  "ceiling",
  "hot",
  "waiting",
  "refill",
  "cold",
  "inFlight",
  "confirmed",
  "locked",
  "spendable",
  "held",
  "coinbase",
  "pending",
]);
const DisplaySchema = z.record(z.string(), z.string()).describe(
  "Each amount of this report in the chain's coin, for people (`hotWallet.reserve`: `0.00089088 SOL`), by its path; " +
    "the fields themselves keep the exact smallest units (model/amounts.ts)",
);

const PayoutObservationSchema = z.object({
  state: z.enum(["pending", "unknown", "included"]),
  confirmations: z.number().int().optional(),
  at: z.string(),
});

const ExpirySchema = z.object({ kind: z.enum(["height", "ledger", "epoch"]), value: z.number().int() });

/** A consolidation as recorded (kv/consolidations.ts), its signed bytes included. */
export const ConsolidationSchema = z.object({
  id: z.string(),
  chain: z.enum(UTXO_CHAINS),
  status: z.enum(["prepared", "completed", "dead"]),
  by: z.string(),
  preparedAt: z.string(),
  txHash: z.string(),
  raw: z.string(),
  expiry: ExpirySchema.optional(),
  inputs: z.array(z.object({
    txHash: z.string(),
    index: z.number().int(),
    amount: z.string(),
    address: z.string(),
    derivationIndex: z.number().int(),
    height: z.number().int(),
  })),
  output: z.object({
    index: z.number().int(),
    address: z.string(),
    derivationIndex: z.number().int(),
    amount: z.string(),
  }),
  fee: z.string(),
  completedAt: z.string().optional(),
  blockNumber: z.number().int().optional(),
  proof: z.unknown().optional().describe("The chain's proof that it is dead (chains/adapter.ts DeathProof)"),
  detail: z.string().optional(),
  deadAt: z.string().optional(),
});

const UtxoTreasurySchema = z.object({
  chain: z.enum(UTXO_CHAINS),
  at: z.string(),
  balances: z.object({
    confirmed: z.string(),
    locked: z.string(),
    spendable: z.string(),
    held: z.string(),
    coinbase: z.string(),
    pending: z.string(),
  }),
  utxoCount: z.number().int(),
  spendableCount: z.number().int(),
  heldCoins: z.array(z.object({
    outpoint: z.string(),
    amount: z.string(),
    height: z.number().int(),
    coinbase: z.boolean(),
    reason: z.string(),
  })),
  pendingDeposits: z.array(z.object({
    orderId: z.string(),
    amount: z.string(),
    outpoint: z.string(),
    blockNumber: z.number().int(),
    note: z.string().optional(),
  })),
  pendingPayouts: z.array(z.object({
    orderId: z.string(),
    status: z.string(),
    amount: z.string(),
    heldReason: z.string().optional(),
    fundable: z.boolean(),
    inputs: z.number().int().optional(),
    fee: z.string().optional(),
    why: z.string().optional(),
  })),
  stuckPayouts: z.array(z.object({
    orderId: z.string(),
    txHash: z.string(),
    outpoints: z.array(z.string()),
    amount: z.string(),
    recordedAt: z.string(),
    ageMs: z.number().int(),
    age: z.string(),
    lastStatus: PayoutObservationSchema.nullable(),
  })),
  consolidation: ConsolidationSchema.nullable(),
  consolidationInvalid: z.string().optional().describe("the open consolidation's record fails its schema"),
  band: BandSchema,
  custody: CustodySchema,
  display: DisplaySchema,
}).describe("A UTXO treasury (doge, zec), read from KV only but for its cold outputs (gettxout)");

const AccountTreasurySchema = z.object({
  chain: z.enum(ACCOUNT_CHAINS),
  at: z.string(),
  hotWallet: z.object({
    address: z.string().nullable(),
    balance: z.string().nullable(),
    balanceError: z.string().optional(),
    reserve: z.string(),
    held: z.object({ count: z.number().int(), amount: z.string() }),
    index: z.number().int().describe(
      'the hot wallet\'s derivation index in effect (docs/operations.md "Rotating a hot wallet")',
    ),
  }),
  retiredWallets: z.array(z.object({
    index: z.number().int(),
    address: z.string(),
    status: z.enum(["draining", "drained"]),
    balance: z.string().nullable().describe("still controlled: its reserve for good, the rest until drained"),
    drainTxHash: z.string().nullable().describe("the drain in flight, or the final one"),
  })).describe("hot wallets rotated out, counted as controlled"),
  swept: z.object({
    count: z.number().int(),
    amount: z.string().describe("what left the deposit addresses, sweep fees included"),
    fees: z.string().describe("sweep fees recorded (sweeps completed before fees were recorded count none)"),
  }),
  unswept: z.object({
    count: z.number().int(),
    amount: z.string(),
    oldest: z.object({ orderId: z.string(), mintedAt: z.string(), ageMs: z.number().int(), age: z.string() })
      .nullable(),
    deposits: z.array(z.object({
      orderId: z.string(),
      amount: z.string(),
      source: z.string(),
      mintedAt: z.string(),
      age: z.string(),
      deadSweeps: z.number().int(),
    })),
  }),
  openSweeps: z.array(z.object({
    sweepId: z.string(),
    from: z.string(),
    amount: z.string(),
    leave: z.string(),
    txHash: z.string(),
    preparedAt: z.string(),
    age: z.string(),
  })),
  deadSweeps: z.number().int(),
  invalidSweeps: z.array(z.string()).optional().describe("stored sweeps failing their schema, counted nowhere"),
  pendingPayouts: z.array(z.object({
    orderId: z.string(),
    amount: z.string(),
    to: z.string(),
    heldReason: z.string().optional(),
    waitingSince: z.string(),
    age: z.string(),
    fundable: z.boolean(),
    why: z.string().optional(),
  })),
  stuckPayouts: z.array(z.object({
    orderId: z.string(),
    txHash: z.string(),
    amount: z.string(),
    recordedAt: z.string(),
    ageMs: z.number().int(),
    age: z.string(),
    lastStatus: PayoutObservationSchema.nullable(),
  })),
  band: BandSchema,
  custody: CustodySchema,
  display: DisplaySchema,
}).describe("An account-chain treasury (sol, xrp, sui): the hot wallet's balance is read through the chain");

export const treasury = defineOp({
  name: "treasury",
  summary: "A native chain's treasury: balances, held coins or the hot wallet and its sweeps, payouts waiting for " +
    "funds (fundable now or not), stuck payouts with their age, and the hot-wallet band with the refill wanted from cold",
  scope: "read",
  http: { method: "get", path: "/treasury/{chain}" },
  input: z.object({ chain: z.enum(NATIVE_CHAINS, { error: `must be one of ${NATIVE_CHAINS.join(", ")}` }) }),
  output: z.union([UtxoTreasurySchema, AccountTreasurySchema]),
  run: async (ctx, { chain }) => {
    const family = chainFamily(chain);
    const band = await bandOf(ctx, chain);
    const custody = await custodyOf(ctx, chain);
    const withDisplay = <T extends object>(r: T) => ({
      ...r,
      display: displayPaths(r, nativeUnit(chain), TREASURY_AMOUNT_KEYS),
    });
    switch (family.family) {
      case "utxo":
        return withDisplay({
          ...await treasuryReport(ctx.kv, family.chain, ctx.settings().utxoFee(family.chain), ctx.now()),
          band,
          custody,
        });
      case "account":
        return withDisplay({
          ...await accountTreasuryReport(ctx.kv, await ctx.chains(), family.chain, ctx.now()),
          band,
          custody,
        });
    }
  },
  text: (r) => [
    ...(chainFamily(r.chain).family === "utxo"
      ? treasuryText(r as TreasuryReport)
      : accountTreasuryText(r as AccountTreasuryReport)),
    bandText(r.band, nativeUnit(r.chain)),
    custodyText(r.custody, nativeUnit(r.chain)),
  ],
});

type Custody = z.infer<typeof CustodySchema>;

/** Hot, cold and in flight to cold now; a part that cannot be read is null with its reason, never 0. */
async function custodyOf(ctx: OpContext, chain: NativeChain): Promise<Custody> {
  const chains = await ctx.chains();
  const out: Custody = { hot: null, cold: null, inFlight: null, inFlightCount: null };
  try {
    out.hot = (await readHotFunds(ctx.kv, chains, chain)).hot.toString();
  } catch (err) {
    out.hotError = formatError(err).split("\n")[0];
  }
  try {
    const c = await readColdHoldings(ctx.kv, chains, chain, ctx.now());
    Object.assign(out, { cold: c.cold.toString(), inFlight: c.inFlight.toString(), inFlightCount: c.inFlightCount });
  } catch (err) {
    out.coldError = formatError(err).split("\n")[0];
  }
  return out;
}

function custodyText(c: Custody, unit: Unit): string {
  const part = (v: string | null, err?: string) =>
    v === null ? `unknown (${err ?? "not read"})` : displayAmount(v, unit);
  return `custody: hot ${part(c.hot, c.hotError)}, cold ${part(c.cold, c.coldError)}, in flight to cold ` +
    `${part(c.inFlight, c.coldError)}${c.inFlightCount ? ` (${c.inFlightCount} cold sweep open)` : ""}`;
}

/** The band with what is hot and waiting now (the same reads and rule as the checks tick's alert). */
async function bandOf(ctx: OpContext, chain: NativeChain): Promise<BandShown | null> {
  const band = ctx.settings().hotBand(chain);
  if (!band) return null;
  let funds;
  try {
    funds = await readHotFunds(ctx.kv, await ctx.chains(), chain);
  } catch (err) {
    const shown = await bandShown(ctx.kv, band, chain, { hot: 0n, waiting: 0n, waitingCount: 0 }, ctx.now());
    return { ...shown, hot: null, waiting: null, refill: null, error: formatError(err).split("\n")[0] };
  }
  return await bandShown(ctx.kv, band, chain, funds, ctx.now());
}

function bandText(b: BandShown | null, unit: Unit): string {
  if (!b) return "hot-wallet band: none (<CHAIN>_HOT_BAND unset)";
  const $ = (v: string | null) => v === null ? "unknown" : displayAmount(v, unit);
  const range = `floor ${$(b.floor)}, target ${$(b.target)}, ceiling ${$(b.ceiling)}`;
  if (b.error) return `hot-wallet band: ${range}; unknown: ${b.error}`;
  return `hot-wallet band: ${range}; hot ${$(b.hot)}, waiting ${$(b.waiting)}; ` +
    (b.refill === null
      ? "within the band, no refill wanted"
      : `REFILL wanted: send ${$(b.refill)} from cold${
        b.coldAddress ? ` (${b.coldAddress})` : " (no cold address set)"
      }`);
}

export const TREASURY_OPS = [treasury];
