/**
 * The on-chain burn report (docs/onchain-burn.md): what completed burn orders left to burn per EVM chain and uAsset,
 * and the burn batches (open ones and the most recent final ones), read from KV alone.
 */
import { z } from "zod";
import { EVM_CHAINS, type EvmChain } from "../../chains/catalog.ts";
import { type BurnBatch, listBurnBatches, listBurnsDue } from "../../kv/onchain_burns.ts";
import { getAlert } from "../../kv/alerts.ts";
import { defineOp } from "./op.ts";

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
    batches: z.array(BatchSchema),
  }),
  run: async (ctx, input) => {
    const chains: readonly EvmChain[] = input.chain ? [input.chain] : EVM_CHAINS;
    const limit = Number(input.limit ?? "20");
    const transferAddress = await ctx.transferAddress();
    const disabled = await getAlert(ctx.kv, "burn_disabled", transferAddress.toLowerCase());
    const sums = new Map<string, z.infer<typeof DueSchema>>();
    for (const d of await listBurnsDue(ctx.kv)) {
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
      // Open batches first (what an operator watches), then the most recent.
      batches: [...batches.filter((b) => b.status === "open"), ...batches.filter((b) => b.status !== "open")]
        .map(batchView),
    };
  },
  text: ({ transferAddress, burnsDisabled, due, batches }) => [
    `transfer address ${transferAddress}${burnsDisabled ? `: NOT BURNING (${burnsDisabled})` : ""}`,
    ...due.map((d) => `due\t${d.chain}\t${d.asset}\t${d.orders} order(s)\t${d.totalWei} wei\tsince ${d.oldestAt}`),
    ...batches.map((b) =>
      `batch\t${b.id}\t${b.chain}\t${b.asset}\t${b.status}\t${b.orderIds.length} order(s)\t${b.totalWei} wei\t` +
      `attempts=${b.attempts}\t${b.txHash}${b.burnedAt ? `\tburned ${b.burnedAt}` : ""}`
    ),
    `${due.reduce((n, d) => n + d.orders, 0)} order(s) due, ${batches.length} batch(es) shown`,
  ],
});

export const BURN_OPS = [burnsReport];
