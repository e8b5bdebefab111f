/** Sim mode only: drive the simulated chains over HTTP (`deno task sim` does the same from a shell). */
import { type Context, Hono } from "hono";
import type { z } from "zod";
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
import { apiError, badRequest, parseBody, validationError } from "./errors.ts";
import type { ChainSymbol } from "../chains/catalog.ts";

export function simRoutes(kv: Deno.Kv, transferAddress: string, simulated: readonly ChainSymbol[]): Hono {
  const app = new Hono();
  const onlySimulated = (chain: ChainSymbol) => {
    if (!simulated.includes(chain)) throw apiError(notSimulated(chain));
  };
  const post = <S extends z.ZodType>(path: string, schema: S, run: (input: z.infer<S>) => Promise<unknown>) =>
    app.post(path, async (c: Context) => {
      const input = await parseBody(c, schema);
      onlySimulated((input as { chain: ChainSymbol }).chain);
      try {
        return c.json({ success: true, data: await run(input) }, 201);
      } catch (err) {
        if (err instanceof SimRefusal) throw badRequest(err.message);
        throw err;
      }
    });

  post("/deposits", DepositInput, (input) => simDeposit(kv, input));
  post("/faucet", FaucetInput, (input) => simFaucet(kv, input));
  post("/transfers", TransferInput, (input) => simTransfer(kv, input, transferAddress));
  post("/faults", FaultsInput, (input) => simFaults(kv, input));
  app.get("/balances", async (c) => {
    const parsed = BalanceInput.safeParse(c.req.query());
    if (!parsed.success) throw validationError(parsed.error);
    onlySimulated(parsed.data.chain);
    return c.json({ success: true, data: await simBalance(kv, parsed.data) });
  });
  return app;
}
