/**
 * UTXO treasury actions (doge, zec): consolidation (actors/sweeper.ts `consolidate`, write-ahead and exactly once) and
 * the resolution of a coin held after a reorg past finality (kv/treasury.ts `CoinHold`). Each appends its audit entry
 * in the commit that makes the change.
 */
import { MAX_TX_INPUTS } from "../../chains/shared/coin_select.ts";
import { z } from "zod";
import { UTXO_CHAINS } from "../../chains/catalog.ts";
import { appendAudit } from "../../kv/audit.ts";
import { addSpent, type CoinHold, coinHoldKey } from "../../kv/treasury.ts";
import { consolidate } from "../sweeper.ts";
import { ConsolidationSchema } from "./treasury.ts";
import { defineOp, OpError } from "./op.ts";

/**
 * Coins merged by one consolidation unless `maxInputs` says otherwise: the most one transaction of ours spends
 * (chains/shared/coin_select.ts `MAX_TX_INPUTS`: its recording atomic checks each coin's lock).
 */
export const DEFAULT_CONSOLIDATION_MAX_INPUTS = MAX_TX_INPUTS;
const DEFAULT_CONSOLIDATION_MIN_INPUTS = 2;

const utxoChain = z.enum(UTXO_CHAINS, { error: `must be one of ${UTXO_CHAINS.join(", ")}` })
  .describe("The UTXO chain");
const COUNT = /^[1-9]\d{0,3}$/;
const count = (description: string) =>
  z.string().regex(COUNT, "must be a whole number from 1 to 9999").optional().describe(description);

export const utxoConsolidate = defineOp({
  name: "utxo consolidate",
  summary: "Merges the smallest spendable coins into one at the change address, write-ahead and exactly once; while " +
    "one is open it is shown and re-sent instead, never a second started",
  scope: "operate",
  http: { method: "post", path: "/utxo/{chain}/consolidate" },
  input: z.object({
    chain: utxoChain,
    maxInputs: count(`At most this many coins (default ${DEFAULT_CONSOLIDATION_MAX_INPUTS})`),
    minInputs: count(
      `At least this many coins worth merging, else nothing is done (default ${DEFAULT_CONSOLIDATION_MIN_INPUTS})`,
    ),
  }).superRefine((input, ctx) => {
    const max = input.maxInputs ?? String(DEFAULT_CONSOLIDATION_MAX_INPUTS);
    const min = input.minInputs ?? String(DEFAULT_CONSOLIDATION_MIN_INPUTS);
    // Compared only when both are valid counts (their own issues say what is wrong otherwise).
    if (COUNT.test(max) && COUNT.test(min) && Number(min) > Number(max)) {
      ctx.addIssue({ code: "custom", path: ["minInputs"], message: "must not exceed --max-inputs" });
    }
    if (COUNT.test(max) && Number(max) > MAX_TX_INPUTS) {
      ctx.addIssue({
        code: "custom",
        path: ["maxInputs"],
        message: `must not exceed ${MAX_TX_INPUTS}, the most coins one transaction of ours spends`,
      });
    }
  }),
  output: z.discriminatedUnion("kind", [
    z.object({
      kind: z.literal("nothing"),
      chain: z.enum(UTXO_CHAINS),
      spendable: z.number().int(),
      reason: z.string(),
    }),
    z.object({
      kind: z.literal("open"),
      chain: z.enum(UTXO_CHAINS),
      consolidation: ConsolidationSchema,
      step: z.enum(["completed", "dead", "resent", "waiting"]).describe("What driving it one step did"),
    }),
    z.object({
      kind: z.literal("started"),
      chain: z.enum(UTXO_CHAINS),
      consolidation: ConsolidationSchema,
      by: z.string(),
      auditId: z.string(),
      broadcast: z.enum(["sent", "failed"]),
    }),
  ]),
  run: async (ctx, input) => {
    const chain = input.chain;
    const settings = ctx.settings();
    const res = await consolidate(ctx.kv, await ctx.chains(), chain, settings.confirmations(chain), {
      fee: settings.utxoFee(chain),
      maxInputs: Number(input.maxInputs ?? DEFAULT_CONSOLIDATION_MAX_INPUTS),
      minInputs: Number(input.minInputs ?? DEFAULT_CONSOLIDATION_MIN_INPUTS),
      by: ctx.by,
      now: ctx.now(),
      afterRecord: () => {
        // Tests: the CLI crashing between the record and the broadcast. Never in the server.
        if (ctx.via === "cli" && Deno.env.get("ADMIN_CRASH_AFTER_RECORD") === "1") Deno.exit(137);
      },
    });
    if (res.kind === "nothing") return { kind: res.kind, chain, spendable: res.spendable, reason: res.reason };
    if (res.kind === "open") return { kind: res.kind, chain, consolidation: res.consolidation, step: res.step };
    return {
      kind: res.kind,
      chain,
      consolidation: res.consolidation,
      by: ctx.by,
      auditId: res.audit.id,
      broadcast: res.broadcast,
    };
  },
  text: (r) => {
    if (r.kind === "nothing") {
      return [`nothing to consolidate on ${r.chain}: ${r.reason} (${r.spendable} spendable coin(s))`];
    }
    const c = r.consolidation;
    const what =
      `${c.inputs.length} coin(s) -> ${c.output.amount} at ${c.output.address} (fee ${c.fee}), tx ${c.txHash}`;
    if (r.kind === "open") {
      return [
        `consolidation ${c.id} on ${r.chain} is already open (recorded ${c.preparedAt} by ${c.by}): ${what}`,
        `its state now: ${r.step}; no second consolidation was started`,
      ];
    }
    return [
      `consolidation ${c.id} on ${r.chain} recorded by ${r.by} (audit ${r.auditId}): ${what}`,
      r.broadcast === "sent"
        ? "broadcast; the running service settles it once final"
        : "recorded but the broadcast failed; the running service (or this command again) sends the same bytes",
    ];
  },
});

const OUTPOINT = /^([0-9A-Za-z]{1,128}):(\d{1,6})$/;

const CoinHoldInput = z.object({
  chain: utxoChain,
  outpoint: z.string().regex(OUTPOINT, { error: (issue) => `${issue.input} is not an outpoint <txid:index>` })
    .describe("The held coin, `<txid>:<index>`"),
});
const CoinHoldResult = z.object({
  chain: z.enum(UTXO_CHAINS),
  outpoint: z.string(),
  by: z.string(),
  auditId: z.string(),
});

/**
 * A coin held after a reorg past finality: `release` once the operator saw it unspent on the node (`gettxout`), so
 * payouts may spend it again; `forget` when the node does not have it (the reorg took it away), so it leaves the
 * treasury (a spent marker stays, so a rescan never adds it back). Audited.
 */
function coinHoldOp(action: "release" | "forget") {
  return defineOp({
    name: `utxo ${action}-coin`,
    summary: action === "release"
      ? "Releases a coin held after a reorg, once the node shows it unspent: payouts may spend it again"
      : "Forgets a held coin the node does not have (a reorg took it away): it leaves the treasury for good",
    scope: "operate",
    http: { method: "post", path: `/utxo/{chain}/coins/{outpoint}/${action}` },
    input: CoinHoldInput,
    positionals: ["outpoint"],
    output: CoinHoldResult,
    run: async (ctx, { chain, outpoint: text }) => {
      const match = OUTPOINT.exec(text)!;
      const outpoint = { txHash: match[1], index: Number(match[2]) };
      const hold = await ctx.kv.get<CoinHold>(coinHoldKey(chain, outpoint));
      if (hold.value === null) throw new OpError(404, `coin ${text} on ${chain} is not held`);
      const at = ctx.now();
      const op = ctx.kv.atomic().check(hold).delete(hold.key);
      if (action === "forget") addSpent(op, chain, [outpoint], `forgotten by operator ${ctx.by}`);
      const audit = appendAudit(
        op,
        { by: ctx.by, action: `utxo.${action}-coin`, subject: `${chain}:${text}`, before: hold.value, after: null },
        at,
      );
      if (!(await op.commit()).ok) throw new OpError(409, `coin ${text} changed meanwhile; try again`);
      return { chain, outpoint: text, by: ctx.by, auditId: audit.id };
    },
    text: (r) => [
      action === "release"
        ? `coin ${r.outpoint} on ${r.chain} released by ${r.by} (audit ${r.auditId}); payouts may spend it`
        : `coin ${r.outpoint} on ${r.chain} forgotten by ${r.by} (audit ${r.auditId}); it left the treasury`,
    ],
  });
}

export const utxoReleaseCoin = coinHoldOp("release");
export const utxoForgetCoin = coinHoldOp("forget");

export const UTXO_OPS = [utxoConsolidate, utxoReleaseCoin, utxoForgetCoin];
