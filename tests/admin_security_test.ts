/**
 * Security review of the operator surface (issue 14), over real HTTP: no secret an operator action returns is kept
 * readable anywhere, and the operator gate holds on every path.
 */
import assert from "node:assert/strict";
import { call, operatorKeyFor, startTestServer } from "./support/server.ts";

async function kvDump(kv: Deno.Kv, prefix: Deno.KvKey): Promise<string[]> {
  const out: string[] = [];
  const dec = new TextDecoder();
  for await (const e of kv.list({ prefix })) {
    // Stored bodies are bytes: read them as text too, so a secret in them is found.
    out.push(JSON.stringify(e.value, (_k, v) => v instanceof Uint8Array ? dec.decode(v) : v));
  }
  return out;
}

Deno.test("admin security: api-key create under an Idempotency-Key keeps no readable secret", async () => {
  const server = await startTestServer();
  try {
    const op = await operatorKeyFor(server, ["keys"]);
    const headers = { "Idempotency-Key": "create-acme-1" };
    const first = await call(server, "POST", "/admin/api-keys", { token: op, body: { partner: "acme" }, headers });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const secret = (first.body.data.apiKey as string).split(".")[1];
    const stored = await kvDump(server.services.kv, ["idempotency"]);
    assert.ok(stored.length > 0, "the response is kept for replay");
    assert.ok(stored.every((s) => !s.includes(secret)), "no partner key secret readable in the Idempotency-Key store");
    const again = await call(server, "POST", "/admin/api-keys", { token: op, body: { partner: "acme" }, headers });
    assert.equal(again.status, 200);
    assert.equal(again.body.data.apiKey, first.body.data.apiKey, "the retry replays the same key");
  } finally {
    await server.close();
  }
});
