/**
 * The JSON-RPC answers the UTXO nodes read, as zod schemas: Zebra's for zec (chains/utxo/zebra.ts: the fields its
 * module comment lists, in the shapes Zebra's snapshot tests pin) and the Bitcoin Core family's for doge
 * (chains/utxo/bitcoin_core.ts), and nothing else (chains/shared/answers.ts says what a refusal is).
 *
 * Dogecoin amounts are never read from JSON: its `value` is a float, so transactions are read as raw hex and decoded
 * (bitcoinjs-lib, bigint values). The Bitcoin Core schemas below hold no amount.
 *
 * Amounts are `valueZat`, integer zatoshis; the float `value` is never read. A `valueZat` is a non-negative safe JSON
 * integer and nothing else: Zebra writes it as a JSON integer, every zatoshi amount (at most 21 million ZEC, about
 * 2^51 zatoshis) is a safe integer, so a string, a fraction or an unsafe integer is not Zebra's answer.
 */
import { z } from "zod";
import type { UtxoChain } from "../catalog.ts";
import { missingOr, readAnswer, text, whole } from "../shared/answers.ts";

/** `chain`'s answer to `method` read through `schema`; else a `MalformedAnswerError` naming the method and field. */
export function utxoAnswer<S extends z.ZodType>(
  chain: UtxoChain,
  method: string,
  schema: S,
  answer: unknown,
): z.output<S> {
  return readAnswer(chain, method, schema, answer);
}

/** Zebra's `valueZat`: a non-negative safe JSON integer of zatoshis, as bigint. */
export const zatoshi = z.unknown().transform((v, ctx) => {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  ctx.addIssue({ code: "custom", message: missingOr("a whole number of zatoshis")({ input: v }), input: v });
  return z.NEVER;
});

/** A block or transaction hash as Zebra and Bitcoin Core write it: 64 lowercase hex digits. */
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

// ------------------------------------------------------------------------------------------------ Bitcoin Core family

/** Serialised bytes in hex. */
const hexBytes = text.regex(/^([0-9a-fA-F]{2})*$/, { error: "is not hex bytes" });

/** Confirmations: -1 for a block or transaction that left the best chain, else how deep it is. */
const confirmations = z.int({ error: missingOr("a whole number of confirmations") });

/** `getblockchaininfo`: the tip, read under one lock (the chain's name is read at start, config/chain_mode.ts). */
export const coreChainInfoAnswer = z.object({ blocks: whole, bestblockhash: hash }, { error: missingOr("chain info") });

/** `getblockhash`. */
export const coreBlockHashAnswer = hash;

/** `getblock(hash, false)`: the block's bytes (chains/utxo/raw_block.ts reads them). */
export const coreRawBlockAnswer = hexBytes;

/** `getrawtransaction(txid, true)`: only `hex`, `blockhash` and `confirmations` are read. */
export const coreVerboseTxAnswer = z.object({
  hex: hexBytes,
  blockhash: hash.optional(),
  confirmations: confirmations.optional(),
}, { error: missingOr("a transaction") });

/** `getblockheader(hash)`. */
export const coreHeaderAnswer = z.object({ height: whole, confirmations }, { error: missingOr("a block header") });

/** `gettxout`: null when the output is spent (or never existed), else an object; a reply without either is refused. */
export const coreTxOutAnswer = z.looseObject({}, { error: missingOr("an output or null") }).nullable();
