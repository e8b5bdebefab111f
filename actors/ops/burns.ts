/**
 * The on-chain burn report (docs/onchain-burn.md): what completed burn orders left to burn per EVM chain and uAsset,
 * and the burn batches (open ones and the most recent final ones), read from KV alone.
 */
import { displayAmount } from "../../model/amounts.ts";
import { z } from "zod";
import { EVM_CHAINS, type EvmChain } from "../../chains/catalog.ts";
import {
  type BurnBatch,
  listBurnBatches,
  listBurnsDue,
  listLeftOutBurns,
  restoreLeftOutBurn,
} from "../../kv/onchain_burns.ts";
import { getAlert } from "../../kv/alerts.ts";
import { appendAudit } from "../../kv/audit.ts";
import { defineOp, OpError } from "./op.ts";

const BatchSchema = z.object({
  id: z.string(),
  chain: z.enum(EVM_CHAINS),
  asset: z.string(),
  status: z.enum(["open", "burned"]),
  totalWei: z.string().describe("What the batch burns, wei"),
  orderIds: z.array(z.string()),
  attempts: z.number().int().describe("Signed transactions; all but the last were proven dead"),
  txHash: z.string().describe("The current attempt's transaction (or, when burned, the one on chain)"),
  createdAt: z.string(),
  burnedAt: z.string().nullable(),
  blockNumber: z.number().int().nullable(),
});

const DueSchema = z.object({
  chain: z.enum(EVM_CHAINS),
  asset: z.string(),
  orders: z.number().int(),
  totalWei: z.string(),
  oldestAt: z.string().describe("When the oldest of these orders completed"),
});

function batchView(b: BurnBatch): z.infer<typeof BatchSchema> {
  return {
    id: b.id,
    chain: b.chain,
    asset: b.asset,
    status: b.status,
    totalWei: b.totalWei,
    orderIds: b.orders.map((o) => o.orderId),
    attempts: b.attempts.length + (b.droppedAttempts ?? 0),
    txHash: b.burnedTxHash ?? b.attempts[b.attempts.length - 1].txHash,
    createdAt: b.createdAt,
    burnedAt: b.burnedAt ?? null,
    blockNumber: b.blockNumber ?? null,
  };
}

export const burnsReport = defineOp({
  name: "burns",
  summary: "On-chain burns of redeemed uAssets: what is due per chain and uAsset, open and recent burn batches",
  scope: "read",
  http: { method: "get", path: "/burns" },
  input: z.object({
    chain: z.enum(EVM_CHAINS).optional().describe("Only this EVM chain"),
    limit: z.string().regex(/^[1-9]\d{0,2}$/, "Must be a whole number from 1 to 999").optional()
      .describe("Recent batches per chain (default 20)"),
  }),
  output: z.object({
    transferAddress: z.string(),
    burnsDisabled: z.string().nullable().describe("Why nothing is burned (a foreign transfer address), or null"),
    due: z.array(DueSchema),
    leftOut: z.array(z.object({
      chain: z.enum(EVM_CHAINS),
      asset: z.string(),
      orderId: z.string(),
      amountWei: z.string(),
      why: z.string(),
      at: z.string(),
    })).describe("Due records left out of batches: their transfer is not on chain as recorded (`burn restore`)"),
    batches: z.array(BatchSchema),
  }),
  run: async (ctx, input) => {
    const chains: readonly EvmChain[] = input.chain ? [input.chain] : EVM_CHAINS;
    const limit = Number(input.limit ?? "20");
    const transferAddress = await ctx.transferAddress();
    const disabled = await getAlert(ctx.kv, "burn_disabled", transferAddress.toLowerCase());
    const sums = new Map<string, z.infer<typeof DueSchema>>();
    const leftOut = (await listLeftOutBurns(ctx.kv)).filter((l) => chains.includes(l.chain));
    const left = new Set(leftOut.map((l) => l.orderId));
    for (const d of await listBurnsDue(ctx.kv)) {
      if (left.has(d.orderId)) continue;
      if (!chains.includes(d.chain)) continue;
      const key = `${d.chain}:${d.asset}`;
      const s = sums.get(key) ?? { chain: d.chain, asset: d.asset, orders: 0, totalWei: "0", oldestAt: d.at };
      s.orders += 1;
      s.totalWei = (BigInt(s.totalWei) + BigInt(d.amountWei)).toString();
      if (d.at < s.oldestAt) s.oldestAt = d.at;
      sums.set(key, s);
    }
    const batches: BurnBatch[] = [];
    for (const chain of chains) batches.push(...await listBurnBatches(ctx.kv, chain, limit));
    return {
      transferAddress,
      burnsDisabled: disabled?.message ?? null,
      due: [...sums.values()],
      leftOut: leftOut.map((l) => ({
        chain: l.chain,
        asset: l.asset,
        orderId: l.orderId,
        amountWei: l.amountWei,
        why: l.leftOut.why,
        at: l.leftOut.at,
      })),
      // Open batches first (what an operator watches), then the most recent.
      batches: [...batches.filter((b) => b.status === "open"), ...batches.filter((b) => b.status !== "open")]
        .map(batchView),
    };
  },
  text: ({ transferAddress, burnsDisabled, due, leftOut, batches }) => [
    `transfer address ${transferAddress}${burnsDisabled ? `: NOT BURNING (${burnsDisabled})` : ""}`,
    ...due.map((d) =>
      `due\t${d.chain}\t${d.asset}\t${d.orders} order(s)\t${displayAmount(d.totalWei, d.asset)}\tsince ${d.oldestAt}`
    ),
    ...leftOut.map((l) =>
      `LEFT OUT\t${l.chain}\t${l.asset}\torder ${l.orderId}\t${displayAmount(l.amountWei, l.asset)}\t${l.at}\t${l.why}`
    ),
    ...batches.map((b) =>
      `batch\t${b.id}\t${b.chain}\t${b.asset}\t${b.status}\t${b.orderIds.length} order(s)\t${
        displayAmount(b.totalWei, b.asset)
      }\t` +
      `attempts=${b.attempts}\t${b.txHash}${b.burnedAt ? `\tburned ${b.burnedAt}` : ""}`
    ),
    `${due.reduce((n, d) => n + d.orders, 0)} order(s) due, ${batches.length} batch(es) shown`,
  ],
});

export const burnRestore = defineOp({
  name: "burn restore",
  summary: "Puts a burn left out of batches (its transfer was not found on chain as recorded) back among the due " +
    "burns, once the operator has checked the transfer on chain; the next batch reads it back again",
  scope: "operate",
  http: { method: "post", path: "/burns/{orderId}/restore" },
  input: z.object({ orderId: z.string().regex(/^[0-9a-f-]{36}$/i, "Must be an order id") }),
  positionals: ["orderId"],
  output: z.object({ orderId: z.string(), chain: z.enum(EVM_CHAINS), asset: z.string(), auditId: z.string() }),
  run: async (ctx, { orderId }) => {
    const left = (await listLeftOutBurns(ctx.kv)).find((l) => l.orderId === orderId);
    if (!left) throw new OpError(404, `no burn of order ${orderId} is left out`);
    let auditId = "";
    const ok = await restoreLeftOutBurn(ctx.kv, left.chain, left.asset, orderId, (op, before) => {
      auditId =
        appendAudit(op, { by: ctx.by, action: "burn.restore", subject: orderId, before, after: null }, ctx.now())
          .id;
    });
    if (!ok) {
      throw new OpError(409, `the left-out burn of order ${orderId} changed meanwhile (or is in a batch); look again`);
    }
    return { orderId, chain: left.chain, asset: left.asset, auditId };
  },
  text: (r) => [`burn of order ${r.orderId} (${r.asset} on ${r.chain}) is due again (audit ${r.auditId})`],
});

export const BURN_OPS = [burnsReport, burnRestore];
