/**
 * The live SUI adapters over GraphQL (Sui's JSON-RPC is retired on Sui Foundation mainnet nodes): the reader scans
 * certified checkpoints (chains/sui/reader.ts), the payer sends payouts from the hot wallet and sweeps deposit
 * addresses into it (chains/sui/payer.ts). Every document sent is in chains/sui/graphql.ts.
 */
import type { AccountAdapterOptions, AccountAdapters } from "../adapter.ts";
import { suiGraphql } from "./client.ts";
import { suiPayer } from "./payer.ts";
import { suiReader } from "./reader.ts";

export function suiAdapters(opts: AccountAdapterOptions): AccountAdapters {
  const gql = suiGraphql({ urls: opts.urls, timeoutMs: opts.timeoutMs, onRpc: opts.onRpc });
  return { reader: suiReader(gql), payer: suiPayer(gql, opts.signer) };
}
