/**
 * The Zebra JSON-RPC answers the zec node reads (chains/utxo/zebra.ts), as zod schemas: the fields its module comment
 * lists, in the shapes Zebra's snapshot tests pin, and nothing else (chains/shared/answers.ts says what a refusal is).
 *
 * Amounts are `valueZat`, integer zatoshis; the float `value` is never read. A `valueZat` is a non-negative safe JSON
 * integer and nothing else: Zebra writes it as a JSON integer, every zatoshi amount (at most 21 million ZEC, about
 * 2^51 zatoshis) is a safe integer, so a string, a fraction or an unsafe integer is not Zebra's answer.
 */
import { z } from "zod";
import { missingOr, readAnswer, text, whole } from "../shared/answers.ts";

/** `answer` to `method` read through `schema`; else a `MalformedAnswerError` naming the method and the field. */
export function zebraAnswer<S extends z.ZodType>(method: string, schema: S, answer: unknown): z.output<S> {
  return readAnswer("zec", method, schema, answer);
}

/** Zebra's `valueZat`: a non-negative safe JSON integer of zatoshis, as bigint. */
export const zatoshi = z.unknown().transform((v, ctx) => {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  ctx.addIssue({ code: "custom", message: missingOr("a whole number of zatoshis")({ input: v }), input: v });
  return z.NEVER;
});

/** A block or transaction hash as Zebra writes it: 64 lowercase hex digits. */
export const hash = text.regex(/^[0-9a-f]{64}$/, { error: "is not a 256-bit hash in lowercase hex" });

/** `getblockchaininfo`: the chain's name, the tip, and (read only where needed) the next block's branch id. */
export const chainInfoAnswer = z.object({
  chain: text,
  blocks: whole,
  bestblockhash: hash,
  consensus: z.object({ nextblock: z.unknown() }).partial().optional(),
}, { error: missingOr("chain info") });
export type ZebraChainInfo = z.output<typeof chainInfoAnswer>;

/** `getblockhash`. */
export const blockHashAnswer = hash;

const vin = z.object({
  coinbase: text.optional(),
  txid: hash.optional(),
  vout: whole.optional(),
}, { error: missingOr("an input") }).superRefine((input, ctx) => {
  // A transparent input names the outpoint it spends; only the coinbase input has none.
  if (input.coinbase !== undefined) return;
  if (input.txid === undefined) ctx.addIssue({ code: "custom", message: "is missing", path: ["txid"] });
  if (input.vout === undefined) ctx.addIssue({ code: "custom", message: "is missing", path: ["vout"] });
});

const vout = z.object({
  n: whole,
  valueZat: zatoshi,
  scriptPubKey: z.object({ hex: text.regex(/^([0-9a-fA-F]{2})*$/, { error: "is not hex" }) }, {
    error: missingOr("a script"),
  }),
}, { error: missingOr("an output") });

/**
 * A TransactionObject (`getblock` verbosity 2, `getrawtransaction` verbose): `vin`/`vout`, or `hex` in releases
 * without them; `height`, `confirmations` and `blockhash` only when it is in a best-chain block.
 */
const transaction = z.object({
  txid: hash.optional(),
  hex: text.optional(),
  height: whole.optional(),
  confirmations: whole.optional(),
  blockhash: hash.optional(),
  vin: z.array(vin).optional(),
  vout: z.array(vout).optional(),
}, { error: missingOr("a transaction") });
export type ZebraTx = z.output<typeof transaction>;

/** `getrawtransaction(txid, 1)`. */
export const rawTransactionAnswer = transaction;

/** `getblock(height, 2)`: every transaction of a block carries its txid. */
export const blockAnswer = z.object({
  hash,
  height: whole,
  previousblockhash: hash.optional(),
  tx: z.array(transaction.extend({ txid: hash }), { error: missingOr("a list of transactions") }),
}, { error: missingOr("a block") });
export type ZebraBlock = z.output<typeof blockAnswer>;
