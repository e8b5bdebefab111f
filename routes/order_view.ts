/**
 * The order as partners see it (spec 2.4) as a zod schema: the response schema of every route and event that carries
 * orders (GET /orders, GET /orders/:id, SSE, webhooks). `toOrderView` (model/order.ts) builds the value; this describes
 * it for /openapi.json and for tests that validate responses.
 */
import { z } from "zod";
import { EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { ORDER_STATUSES, ORDER_TYPES } from "../model/order.ts";

const isoTime = z.iso.datetime();

export const OrderViewSchema = z.object({
  id: z.string().describe("Unique order identifier (UUIDv7)"),
  type: z.enum(ORDER_TYPES),
  status: z.enum(ORDER_STATUSES),
  sourceChain: z.enum([...NATIVE_CHAINS, ...EVM_CHAINS]),
  destinationChain: z.enum([...NATIVE_CHAINS, ...EVM_CHAINS]),
  token: z.string().describe("mint: SOL, XRP, SUI, DOGE, ZEC; burn: uSOL, uXRP, uSUI, uDOGE, uZEC"),
  amount: z.string().regex(/^(0|[1-9][0-9]*)$/).describe("Integer amount in the token's smallest unit"),
  sourceWallet: z.string(),
  destinationWallet: z.string(),
  workflowId: z.string(),
  transactionHash: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime.nullable(),
  // Additions (docs/order-reads.md), shown on pending orders only, after the spec 2.4 fields; absent in every other
  // status.
  confirmations: z.int().min(0).optional().describe(
    "Pending orders only: blocks the deposit or uAsset transfer has on its source chain as this service's watcher " +
      "last saw them, at most requiredConfirmations. Always 0 on chains final by a flag (live sol, xrp, sui) until " +
      "the order leaves pending. Absent in other statuses.",
  ),
  requiredConfirmations: z.int().min(1).optional().describe(
    "Pending orders only: confirmations the source transfer needs before the order moves to processing. Absent in " +
      "other statuses.",
  ),
});
