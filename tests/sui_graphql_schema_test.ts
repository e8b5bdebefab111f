/**
 * Every GraphQL document the Sui adapter sends (chains/sui/graphql.ts) parses and validates against the schema shipped
 * inside `@mysten/sui` (src/graphql/generated/schema.graphql): a field or argument that does not exist, or a variable
 * of the wrong type, fails here and never in production.
 */
import assert from "node:assert/strict";
import { buildSchema, type GraphQLSchema, parse, validate } from "graphql";
import {
  operationName,
  SCAN_CHECKPOINTS,
  SCAN_MAX_CHECKPOINTS,
  scanOutputNodes,
  SUI_DOCUMENTS,
  SUI_GRAPHQL_LIMITS,
} from "../chains/sui/graphql.ts";
import { inputUsage, limitRefusal, MAX_OUTPUT_NODES, outputNodes } from "./support/sui_graphql_server.ts";

/** The schema file of the pinned @mysten/sui, from node_modules (`deno install`, which `deno task test` runs first). */
export async function suiSchema(): Promise<GraphQLSchema> {
  const root = new URL("../node_modules/", import.meta.url);
  const direct = new URL("@mysten/sui/src/graphql/generated/schema.graphql", root);
  const pinned = new URL(
    ".deno/@mysten+sui@2.33.1/node_modules/@mysten/sui/src/graphql/generated/schema.graphql",
    root,
  );
  let text: string;
  try {
    text = await Deno.readTextFile(direct);
  } catch {
    text = await Deno.readTextFile(pinned);
  }
  return buildSchema(text);
}

function errorsOf(schema: GraphQLSchema, document: string): string[] {
  return validate(schema, parse(document)).map((e) => e.message);
}

Deno.test("sui: every GraphQL document we send validates against the schema shipped in @mysten/sui", async (t) => {
  const schema = await suiSchema();
  assert.ok(Object.keys(SUI_DOCUMENTS).length >= 10);
  const names = new Set<string>();
  for (const [name, document] of Object.entries(SUI_DOCUMENTS)) {
    await t.step(name, () => {
      assert.deepEqual(errorsOf(schema, document), [], `${name} is not valid against the Sui schema`);
      // At the largest page the reader asks (the scan's `$first`); the other documents' pages are literals.
      const nodes = outputNodes(parse(document), { first: SCAN_MAX_CHECKPOINTS });
      assert.ok(nodes <= MAX_OUTPUT_NODES, `${name}: about ${nodes} output nodes, over Sui's default limit`);
      const input = inputUsage(parse(document));
      assert.ok(input.nodes <= SUI_GRAPHQL_LIMITS.maxQueryNodes, `${name}: ${input.nodes} input nodes`);
      assert.ok(input.depth <= SUI_GRAPHQL_LIMITS.maxQueryDepth, `${name}: ${input.depth} deep`);
      const body = JSON.stringify({ query: document, variables: {}, operationName: operationName(document) });
      assert.ok(body.length + 200 <= SUI_GRAPHQL_LIMITS.maxQueryPayloadSize, `${name}: a ${body.length}-byte request`);
      const op = operationName(document);
      assert.ok(!names.has(op), `operation name ${op} is unique`);
      names.add(op);
    });
  }
});

Deno.test("sui: the schema check fails on a misspelt field, a wrong argument and a wrong variable type", async () => {
  const schema = await suiSchema();
  const { TX_STATUS, SCAN_CHECKPOINTS, BALANCE } = SUI_DOCUMENTS;
  const misspelt = TX_STATUS.replace("executionError", "executionErrors");
  assert.notEqual(misspelt, TX_STATUS);
  assert.match(errorsOf(schema, misspelt).join("\n"), /Cannot query field "executionErrors"/);
  const wrongArg = SCAN_CHECKPOINTS.replace("filter: { afterCheckpoint:", "filter: { afterSequence:");
  assert.notEqual(wrongArg, SCAN_CHECKPOINTS);
  assert.ok(errorsOf(schema, wrongArg).length > 0);
  const wrongType = BALANCE.replace("$address: SuiAddress!", "$address: String!");
  assert.ok(errorsOf(schema, wrongType).length > 0);
});

Deno.test("sui: the scan's output estimate is the service's, and a page above its limits is refused as it refuses it", () => {
  const doc = parse(SCAN_CHECKPOINTS);
  for (const first of [1, 7, SCAN_MAX_CHECKPOINTS]) {
    assert.equal(outputNodes(doc, { first }), scanOutputNodes(first), `${first} checkpoints`);
  }
  assert.equal(limitRefusal(doc, { first: SCAN_MAX_CHECKPOINTS }), null);
  assert.match(limitRefusal(doc, { first: 51 })!, /^Page size is too large: 51 > 50$/);
  // A provider configured as the old sui-graphql-rpc (100,000 output nodes): 50 checkpoints refused, 7 served.
  const strict = { ...SUI_GRAPHQL_LIMITS, maxOutputNodes: 100_000 };
  assert.match(limitRefusal(doc, { first: 50 }, strict)!, /estimated to produce over 100000 output nodes/);
  assert.equal(limitRefusal(doc, { first: 6 }, strict), null);
});
