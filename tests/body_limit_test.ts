/**
 * The one request-body size limit (routes/body_limit.ts) over real HTTP: a POST or PUT body above 64 KiB is 413 with
 * the envelope before any route reads it, and changes nothing; a body at the limit is read as usual. The answers are
 * checked against /openapi.json by `call()`, so the 413 must be documented on every POST and PUT.
 */
import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../routes/body_limit.ts";
import { API_ERRORS } from "../messages.ts";
import { call, randomWallet, startTestServer, tokenFor } from "./support/server.ts";

const TOO_LARGE = { success: false, message: API_ERRORS.bodyTooLarge.message };

/** A JSON body of exactly `size` bytes: the given fields plus padding in an ignored field. */
function bodyOf(size: number, fields: Record<string, string>): string {
  const base = JSON.stringify({ ...fields, pad: "" });
  return JSON.stringify({ ...fields, pad: "x".repeat(size - base.length) });
}

Deno.test("request bodies above 64 KiB are 413 with the envelope and change nothing; at the limit they are read", async () => {
  const server = await startTestServer();
  try {
    const token = await tokenFor(server, randomWallet());
    const fields = { chain: "sol", destinationChain: "base" };
    const over = bodyOf(MAX_BODY_BYTES + 1, fields);
    assert.equal(new TextEncoder().encode(over).length, MAX_BODY_BYTES + 1);
    const refused = await call(server, "POST", "/mint/wallets", { token, rawBody: over });
    assert.equal(refused.status, 413);
    assert.deepEqual(refused.body, TOO_LARGE);
    assert.deepEqual((await call(server, "GET", "/mint/wallets", { token })).body.data, [], "nothing created");

    const put = await call(server, "PUT", "/burn/wallets", {
      token,
      rawBody: bodyOf(MAX_BODY_BYTES + 1, { destinationChain: "sol", destinationAddress: "x" }),
    });
    assert.equal(put.status, 413);
    // The token endpoint too, before its key is even looked at: no credential makes a large body readable.
    const tokenRes = await call(server, "POST", "/auth/token", { rawBody: bodyOf(MAX_BODY_BYTES + 1, {}) });
    assert.equal(tokenRes.status, 413);

    const atLimit = await call(server, "POST", "/mint/wallets", { token, rawBody: bodyOf(MAX_BODY_BYTES, fields) });
    assert.equal(atLimit.status, 201, JSON.stringify(atLimit.body));
  } finally {
    await server.close();
  }
});
