/** Sim mode only: drive the simulated chains over HTTP (`deno task sim` does the same from a shell). */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import {
  BalanceInput,
  DepositInput,
  FaucetInput,
  FaultsInput,
  simBalance,
  simDeposit,
  simFaucet,
  simFaults,
  SimRefusal,
  simTransfer,
  TransferInput,
} from "../chains/sim/commands.ts";
import { notSimulated } from "../messages.ts";
import { apiError, badRequest } from "./errors.ts";
import { type ChainSymbol, EVM_CHAINS, NATIVE_CHAINS } from "../chains/catalog.ts";
import { errorResponses, jsonBody, jsonResponse, okEnvelope, router, TAGS } from "./openapi.ts";

/** A transaction the simulated chain accepted (chains/sim/ledger.ts `Submitted`). */
const SubmittedSchema = z.object({
  txHash: z.string(),
  blockNumber: z.number().int().describe("Its block, or the next block while it is pending"),
});

const FaultsAnswer = z.object({
  chain: z.enum([...NATIVE_CHAINS, ...EVM_CHAINS]),
  faults: z.object({
    rpcErrorRate: z.number(),
    revertNextMint: z.number().int(),
    failNextPayout: z.number().int(),
    stalledUntil: z.number().int().describe("Epoch ms before which no block is produced"),
    stallPayouts: z.number().int(),
  }),
  head: z.object({ number: z.number().int(), hash: z.string() }),
});

const BalanceAnswer = z.object({
  balance: z.string().regex(/^(0|[1-9][0-9]*)$/).describe("In the smallest unit"),
});

const simPost = <I extends z.ZodType, O extends z.ZodType>(
  path: string,
  input: I,
  output: O,
  summary: string,
  description: string,
) =>
  createRoute({
    method: "post",
    path,
    tags: [TAGS.sim],
    summary,
    description,
    request: { body: jsonBody(input) },
    responses: { 201: jsonResponse(okEnvelope(output), "Done"), ...errorResponses(400, 500) },
  });

const routes = {
  deposits: simPost(
    "/deposits",
    DepositInput,
    SubmittedSchema,
    "Deposit native coins",
    "A native transfer from an outside sender to `address` (a deposit address starts a mint).",
  ),
  faucet: simPost("/faucet", FaucetInput, SubmittedSchema, "Credit uAssets", "Credits uAssets to an EVM address."),
  transfers: simPost(
    "/transfers",
    TransferInput,
    SubmittedSchema,
    "Send uAssets to the transfer address",
    "An ERC-20 transfer of `from`'s uAssets to the uAsset transfer address (starts a burn).",
  ),
  faults: simPost(
    "/faults",
    FaultsInput,
    FaultsAnswer,
    "Inject faults",
    "RPC errors, reverted mints, failed or stalled payouts, stalled blocks and reorgs on a simulated chain.",
  ),
  balances: createRoute({
    method: "get",
    path: "/balances",
    tags: [TAGS.sim],
    summary: "Read a balance",
    description: "A native balance, or a uAsset balance on an EVM chain when `token` is given.",
    request: { query: BalanceInput },
    responses: { 200: jsonResponse(okEnvelope(BalanceAnswer), "The balance"), ...errorResponses(400, 500) },
  }),
};

export function simRoutes(kv: Deno.Kv, transferAddress: string, simulated: readonly ChainSymbol[]): OpenAPIHono {
  const app = router();
  const onlySimulated = (chain: ChainSymbol) => {
    if (!simulated.includes(chain)) throw apiError(notSimulated(chain));
  };
  const refusalsAs400 = async <T>(run: () => Promise<T>) => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof SimRefusal) throw badRequest(err.message);
      throw err;
    }
  };

  app.openapi(routes.deposits, async (c) => {
    const input = c.req.valid("json");
    onlySimulated(input.chain);
    return c.json({ success: true as const, data: await refusalsAs400(() => simDeposit(kv, input)) }, 201);
  });
  app.openapi(routes.faucet, async (c) => {
    const input = c.req.valid("json");
    onlySimulated(input.chain);
    return c.json({ success: true as const, data: await refusalsAs400(() => simFaucet(kv, input)) }, 201);
  });
  app.openapi(routes.transfers, async (c) => {
    const input = c.req.valid("json");
    onlySimulated(input.chain);
    const data = await refusalsAs400(() => simTransfer(kv, input, transferAddress));
    return c.json({ success: true as const, data }, 201);
  });
  app.openapi(routes.faults, async (c) => {
    const input = c.req.valid("json");
    onlySimulated(input.chain);
    return c.json({ success: true as const, data: await refusalsAs400(() => simFaults(kv, input)) }, 201);
  });
  app.openapi(routes.balances, async (c) => {
    const input = c.req.valid("query");
    onlySimulated(input.chain);
    return c.json({ success: true as const, data: await simBalance(kv, input) }, 200);
  });
  return app;
}
