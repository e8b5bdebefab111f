/**
 * A simulated transaction: its schema, its raw form and its parser. The ledger (ledger.ts) stores and applies them,
 * the UTXO rules (utxo.ts) read their outputs; both import this module, so neither imports the other.
 */
import { z } from "zod";
import { type ChainSymbol, isEvmChain, UASSETS } from "../catalog.ts";

const amount = z.string().regex(/^(0|[1-9][0-9]*)$/, "amount must be a non-negative decimal integer").transform(BigInt);
const address = z.string().min(1).max(128);
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "not an EVM address").transform((a) => a.toLowerCase());
const depositId = z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, "deposit id must be 32 bytes of hex")
  .transform((d) => d.toLowerCase());
const nonce = z.string().min(1).max(128);
const expiry = z.object({ kind: z.enum(["height", "ledger", "epoch"]), value: z.number().int().min(0) }).strict();
/** A UTXO-mode input: the outpoint, with the address and amount of the output it spends (what a signer needs). */
const input = z.object({ txHash: z.string().min(1), index: z.number().int().min(0), address, amount }).strict();
const change = z.object({ address, amount }).strict();

const NativeTxSchema = z.discriminatedUnion("kind", [
  /** A deposit from an outside sender, who has unlimited funds and is never debited. */
  z.object({ kind: z.literal("transfer"), from: address, to: address, amount, memo: z.string().nullable(), nonce }),
  /** UTXO mode: an output the operator holds from the genesis block (`ensureGenesisOutput`); never submitted. */
  z.object({ kind: z.literal("genesis"), to: address, amount, nonce }),
  /**
   * UTXO mode: a block reward output (`mineCoinbase`), output 0 to `to`. Scans mark it `coinbase`: never credited, as
   * on Dogecoin (240 blocks to mature) and Zcash (spendable only to shielded outputs).
   */
  z.object({ kind: z.literal("coinbase"), to: address, amount, nonce }),
  /** The operator's hot wallet paying a burn out. */
  z.object({
    kind: z.literal("payout"),
    from: address,
    to: address,
    amount,
    memo: z.string().nullable(),
    orderId: z.string().min(1),
    nonce,
    expiry: expiry.nullable().optional(),
    /**
     * UTXO mode (doge, zec): the outputs it spends, and the change (output 1) back to the operator. The fee is what
     * the inputs hold beyond the outputs. Without inputs a payout debits the hot wallet's account-style balance.
     */
    inputs: z.array(input).min(1).optional(),
    change: change.nullable().optional(),
  }),
  /** A deposit address's balance moved to the hot wallet (its reserve stays); the sim checks no signature. */
  z.object({
    kind: z.literal("sweep"),
    from: address,
    to: address,
    amount,
    sweepId: z.string().min(1),
    nonce,
    expiry: expiry.nullable().optional(),
  }),
]);
const EvmTxSchema = z.discriminatedUnion("kind", [
  /** A call to the uAsset contract's mint, which refuses a deposit id it has minted. */
  z.object({ kind: z.literal("mint"), to: evmAddress, asset: z.enum(UASSETS), amount, depositId, nonce }),
  z.object({ kind: z.literal("faucet"), to: evmAddress, asset: z.enum(UASSETS), amount, nonce }),
  z.object({ kind: z.literal("erc20"), from: evmAddress, to: evmAddress, asset: z.enum(UASSETS), amount, nonce }),
  /** ERC20Burnable `burn(amount)` by `from` (the transfer address): debits it and lowers the total supply. */
  z.object({
    kind: z.literal("burn"),
    from: evmAddress,
    asset: z.enum(UASSETS),
    amount,
    batchId: z.string().min(1),
    nonce,
  }),
]);
export type SimTx = z.infer<typeof NativeTxSchema> | z.infer<typeof EvmTxSchema>;

/**
 * The raw form of a transaction: JSON with a fixed field order, so one transaction has one raw string and one hash.
 * It stands in for signed bytes; `nonce` makes two preparations of the same request two different transactions.
 */
export function encodeSimTx(tx: SimTx): string {
  const a = tx.amount.toString();
  switch (tx.kind) {
    case "transfer":
      return JSON.stringify({ kind: tx.kind, from: tx.from, to: tx.to, amount: a, memo: tx.memo, nonce: tx.nonce });
    case "genesis":
    case "coinbase":
      return JSON.stringify({ kind: tx.kind, to: tx.to, amount: a, nonce: tx.nonce });
    case "payout":
      return JSON.stringify({
        kind: tx.kind,
        from: tx.from,
        to: tx.to,
        amount: a,
        memo: tx.memo,
        orderId: tx.orderId,
        nonce: tx.nonce,
        expiry: tx.expiry ?? null,
        // Only in UTXO mode, so an account-style payout keeps its raw form (and hash).
        ...(tx.inputs
          ? {
            inputs: tx.inputs.map((i) => ({
              txHash: i.txHash,
              index: i.index,
              address: i.address,
              amount: i.amount.toString(),
            })),
            change: tx.change ? { address: tx.change.address, amount: tx.change.amount.toString() } : null,
          }
          : {}),
      });
    case "sweep":
      return JSON.stringify({
        kind: tx.kind,
        from: tx.from,
        to: tx.to,
        amount: a,
        sweepId: tx.sweepId,
        nonce: tx.nonce,
        expiry: tx.expiry ?? null,
      });
    case "mint":
      return JSON.stringify({
        kind: tx.kind,
        to: tx.to,
        asset: tx.asset,
        amount: a,
        depositId: tx.depositId,
        nonce: tx.nonce,
      });
    case "faucet":
      return JSON.stringify({ kind: tx.kind, to: tx.to, asset: tx.asset, amount: a, nonce: tx.nonce });
    case "erc20":
      return JSON.stringify({ kind: tx.kind, from: tx.from, to: tx.to, asset: tx.asset, amount: a, nonce: tx.nonce });
    case "burn":
      return JSON.stringify({
        kind: tx.kind,
        from: tx.from,
        asset: tx.asset,
        amount: a,
        batchId: tx.batchId,
        nonce: tx.nonce,
      });
  }
}

/** Parses and validates a raw transaction for `chain`: EVM kinds only on EVM chains, native kinds on native ones. */
export function parseSimTx(chain: ChainSymbol, raw: string): SimTx {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error(`sim ${chain}: raw transaction is not JSON`);
  }
  const parsed = (isEvmChain(chain) ? EvmTxSchema : NativeTxSchema).safeParse(json);
  if (!parsed.success) {
    throw new Error(`sim ${chain}: invalid raw transaction: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  return parsed.data;
}
