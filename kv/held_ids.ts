/**
 * The ids operators give held records (docs/admin-api.md): `order:<orderId>` for an order hold (kv/pipeline.ts
 * `orderHoldKey`: a reorg past finality or a cap) and `transfer:<chain>:<txHash>:<index>[:<revision>]` for a held
 * transfer (kv/pipeline.ts `heldKey`). One parser for `held list`, `held release` and `held refund`.
 */
import { CHAIN_SYMBOLS, type ChainSymbol } from "../chains/catalog.ts";
import type { HeldTransfer } from "./pipeline.ts";

export type HeldId =
  | { kind: "order"; orderId: string }
  | { kind: "transfer"; chain: ChainSymbol; txHash: string; index: number; revision: number };

export const HELD_ID_FORMAT = "order:<orderId> or transfer:<chain>:<txHash>:<index>[:<revision>]";

/** Parses a held record id, or null when it is not one (a 400 for the operator). */
export function parseHeldId(id: string): HeldId | null {
  const parts = id.split(":");
  if (parts[0] === "order" && parts.length === 2 && /^[0-9a-f-]{36}$/i.test(parts[1])) {
    return { kind: "order", orderId: parts[1] };
  }
  if (parts[0] !== "transfer" || (parts.length !== 4 && parts.length !== 5)) return null;
  const [, chain, txHash, index, revision = "0"] = parts;
  if (!(CHAIN_SYMBOLS as readonly string[]).includes(chain)) return null;
  if (!/^[0-9A-Za-z]{1,128}$/.test(txHash) || !/^\d{1,6}$/.test(index) || !/^\d{1,6}$/.test(revision)) return null;
  return { kind: "transfer", chain: chain as ChainSymbol, txHash, index: Number(index), revision: Number(revision) };
}

/** The id of a held transfer. */
export function heldTransferId(h: Pick<HeldTransfer, "chain" | "txHash" | "index" | "revision">): string {
  return `transfer:${h.chain}:${h.txHash}:${h.index}${h.revision ? `:${h.revision}` : ""}`;
}
