/**
 * The Sui GraphQL client (chains/sui/client.ts) on a Sui-GraphQL-shaped server: failover over URLs, GraphQL `errors`
 * as the node's typed answer, transport failures as TransientChainError, and exact big numbers and addresses.
 */
import assert from "node:assert/strict";
import { TransientChainError } from "../chains/adapter.ts";
import { bigIntOf, isSuiCoinType, normalizeSuiAddress, suiGraphql, SuiGraphqlError } from "../chains/sui/client.ts";
import { CHECKPOINT_DIGEST, LATEST_CHECKPOINT } from "../chains/sui/graphql.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";

/** A URL where nothing listens. */
function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return `http://127.0.0.1:${port}/graphql`;
}

Deno.test("sui GraphQL client on a Sui-GraphQL-shaped server: fails over, names calls, types errors", async () => {
  const server = await startSuiGraphqlServer();
  try {
    const calls: string[] = [];
    const gql = suiGraphql({ urls: [deadUrl(), server.url], onRpc: ({ method }) => calls.push(method) });
    const data = await gql.request<{ checkpoint: { sequenceNumber: number } }>(LATEST_CHECKPOINT);
    assert.equal(data.checkpoint.sequenceNumber, 0);
    assert.deepEqual(calls, ["SuiLatestCheckpoint", "SuiLatestCheckpoint"], "one per URL tried, by operation name");
    // The node's own answer (a variable of the wrong type): typed, not failed over, not transient.
    const err = await gql.request(CHECKPOINT_DIGEST, { sequenceNumber: "not a number" }).catch((e) => e);
    assert.ok(err instanceof SuiGraphqlError, String(err));
    assert.equal(err.operation, "SuiCheckpointDigest");
    // A document the server does not serve is refused as GraphQL errors too.
    await assert.rejects(gql.request("query Other { chainIdentifier }"), SuiGraphqlError);
  } finally {
    await server.close();
  }
  const down = suiGraphql({ urls: [deadUrl()], timeoutMs: 2_000 });
  await assert.rejects(down.request(LATEST_CHECKPOINT), TransientChainError);
  assert.throws(() => suiGraphql({ urls: [] }), /SUI_RPC_URLS: no RPC URL configured/);
});

Deno.test("sui GraphQL client: amounts are exact bigints, addresses and SUI coin types normalised", () => {
  assert.equal(bigIntOf("18446744073709551615", "x"), 18446744073709551615n);
  assert.equal(bigIntOf("-5", "x"), -5n);
  assert.throws(() => bigIntOf(1.5, "x"), TransientChainError);
  assert.throws(() => bigIntOf("1e9", "x"), TransientChainError);
  assert.equal(normalizeSuiAddress("0x2"), "0x" + "2".padStart(64, "0"));
  assert.equal(normalizeSuiAddress("0x" + "AB".repeat(32)), "0x" + "ab".repeat(32));
  assert.throws(() => normalizeSuiAddress("2"), /not a Sui address/);
  assert.ok(isSuiCoinType("0x2::sui::SUI"));
  assert.ok(isSuiCoinType("0x" + "2".padStart(64, "0") + "::sui::SUI"));
  assert.ok(!isSuiCoinType("0x3::sui::SUI"));
  assert.ok(!isSuiCoinType("0x2::sui::SUIX"));
  assert.ok(!isSuiCoinType("0x2::coin::Coin<0x2::sui::SUI>"));
});
