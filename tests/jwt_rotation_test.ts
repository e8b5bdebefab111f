/**
 * JWT signing key rotation (docs/operations.md "Rotating the JWT signing key"; kv/jwt_keys.ts), as a rolling restart
 * runs it: two servers on one KV file, each with its own key, over real HTTP. Tokens of either key work on both and the
 * JWKS of both lists both kids; the operator retires the old key with `deno task admin` (its own process), and from the
 * next request on its tokens, cached by both servers, answer spec 5's 401 `Invalid or expired token` on both, the
 * JWKS drops it and the audit log has the entry. Refusals (the signing key itself, an unknown or malformed kid, a
 * key already retired) change nothing.
 */
import assert from "node:assert/strict";
import { decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { listAudit } from "../kv/audit.ts";
import { API_ERRORS } from "../messages.ts";
import { runTask } from "./support/cli.ts";
import { countReads } from "./support/kv_reads.ts";
import {
  call,
  newApiKey,
  operatorKeyFor,
  randomWallet,
  startPeerServer,
  startTestServer,
  type TestServer,
  tokenFor,
} from "./support/server.ts";

const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;

async function jwksKids(server: TestServer): Promise<string[]> {
  const res = await call(server, "GET", "/auth/.well-known/jwks.json");
  assert.equal(res.status, 200);
  return res.body.keys.map((k: { kid: string }) => k.kid);
}

async function statusWith(server: TestServer, token: string) {
  const res = await call(server, "GET", "/mint/wallets", { token });
  return { status: res.status, message: res.body.message };
}

Deno.test("JWT key rotation: two keys on one KV, then the old one retired by the operator", async (t) => {
  const a = await startTestServer(); // the old key, generated into its folder as `deno task dev` does
  const newKeyFile = `${a.dir}/new-jwt-key.pem`;
  await Deno.writeTextFile(newKeyFile, await newPrivateKeyPem(), { mode: 0o600 });
  const b = await startPeerServer(a, { JWT_PRIVATE_KEY_FILE: newKeyFile });
  try {
    const oldKid = a.services.tokens!.keys.publicJwk.kid;
    const newKid = b.services.tokens!.keys.publicJwk.kid;
    assert.notEqual(oldKid, newKid);
    const apiKey = await newApiKey(a);
    const oldToken = await tokenFor(a, randomWallet(), apiKey);
    const newToken = await tokenFor(b, randomWallet(), apiKey);
    assert.equal(kidOf(oldToken), oldKid);
    assert.equal(kidOf(newToken), newKid);
    const operatorKey = await operatorKeyFor(b);
    const admin = (method: string, path: string) =>
      call(b, method, `/admin${path}`, { headers: { Authorization: `Bearer ${operatorKey}` } });
    // `--by` goes before a "--", after which a kid (base64url, it may start with "-") is never read as an option.
    const cli = (...args: string[]) => {
      const end = args.includes("--") ? args.indexOf("--") : args.length;
      const withBy = [...args.slice(0, end), "--by", "rotation-test", ...args.slice(end)];
      return runTask("admin", { KV_PATH: a.kvPath, JWT_PRIVATE_KEY_FILE: newKeyFile }, withBy);
    };

    await t.step("a token of either key works on both servers", async () => {
      for (const server of [a, b]) {
        for (const token of [oldToken, newToken]) assert.equal((await statusWith(server, token)).status, 200);
      }
    });

    await t.step("the JWKS of each server lists both kids, its own first", async () => {
      assert.deepEqual(await jwksKids(a), [oldKid, newKid]);
      assert.deepEqual(await jwksKids(b), [newKid, oldKid]);
    });

    await t.step("the retired-key check rides in the gate's one KV read: no read of its own", async () => {
      const reads = countReads(a.services.kv);
      assert.equal((await statusWith(a, newToken)).status, 200); // verified before: from the token cache
      // The gate's one getMany (wallet, API key, signing key), then the route's own listing of the mint wallets.
      assert.deepEqual(reads.reads.map((r) => r.op), ["getMany", "list"]);
      assert.deepEqual(reads.touching("jwt_key"), [reads.reads[0]]);
      assert.ok(reads.reads[0].keys.some((k) => k[0] === "jwt_key" && k[1] === newKid));
    });

    await t.step(
      "tokens naming kids no process recorded are forgeries: 403, at most one listing a second",
      async () => {
        const { privateKey } = await generateKeyPair("RS256");
        const forge = (kid: string) =>
          new SignJWT({})
            .setProtectedHeader({ alg: "RS256", kid })
            .setSubject(randomWallet().toLowerCase())
            .setIssuedAt()
            .setExpirationTime("1h")
            .sign(privateKey);
        const forged = await Promise.all(["A", "C", "D", "E", "F"].map((c) => forge(c.repeat(43))));
        const reads = countReads(b.services.kv);
        const began = performance.now();
        const answers = await Promise.all(forged.map((token) => statusWith(b, token)));
        for (const answer of answers) {
          assert.deepEqual(answer, {
            status: API_ERRORS.invalidSignature.status,
            message: API_ERRORS.invalidSignature.message,
          });
        }
        // Five concurrent unknown kids: one listing, or two when the first was still running as others arrived.
        const listings = reads.reads.filter((r) => r.op === "list" && r.keys[0][0] === "jwt_key").length;
        assert.ok(listings >= 1 && listings <= 2, `${listings} listings`);
        if (listings === 2) assert.ok(performance.now() - began >= 900, "listings closer than the 1 s gap");
        assert.deepEqual(await statusWith(a, forged[0]), {
          status: API_ERRORS.invalidSignature.status,
          message: API_ERRORS.invalidSignature.message,
        });
      },
    );

    await t.step("jwt keys lists both, as the API and the CLI", async () => {
      const res = await admin("GET", "/jwt/keys");
      assert.equal(res.status, 200);
      const states = Object.fromEntries(
        res.body.data.keys.map((k: { kid: string; state: string }) => [k.kid, k.state]),
      );
      assert.deepEqual(states, { [newKid]: "signing", [oldKid]: "published" });
      const shell = await cli("jwt", "keys");
      assert.equal(shell.code, 0, shell.stderr);
      assert.match(shell.stdout, new RegExp(`${newKid}\\tsigning`));
      assert.match(shell.stdout, new RegExp(`${oldKid}\\tpublished`));
    });

    const auditBefore = (await listAudit(a.services.kv)).length;
    await t.step("refusals change nothing: the signing key itself, an unknown kid, a malformed kid", async () => {
      const own = await admin("POST", `/jwt/keys/${newKid}/retire`);
      assert.equal(own.status, 409);
      assert.match(own.body.message, /is the key this server signs with/);
      const ownCli = await cli("jwt", "retire", "--", newKid); // a kid may start with "-": after "--"
      assert.equal(ownCli.code, 2);
      assert.match(ownCli.stderr + ownCli.stdout, /is the key this configuration signs with/);
      const unknown = await admin("POST", `/jwt/keys/${"B".repeat(43)}/retire`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.message, `no JWT signing key ${"B".repeat(43)} is recorded`);
      const unknownCli = await cli("jwt", "retire", "B".repeat(43));
      assert.equal(unknownCli.code, 2);
      assert.match(unknownCli.stderr + unknownCli.stdout, /no JWT signing key B+ is recorded/);
      const malformed = await admin("POST", "/jwt/keys/not-a-kid/retire");
      assert.equal(malformed.status, 400);
      assert.match(JSON.stringify(malformed.body), /must be a key id/);
      assert.equal((await listAudit(a.services.kv)).length, auditBefore);
      assert.deepEqual(await jwksKids(a), [oldKid, newKid]);
      for (const token of [oldToken, newToken]) assert.equal((await statusWith(a, token)).status, 200);
    });

    await t.step("retiring the old key (CLI): its cached tokens are refused at once on both servers", async () => {
      const res = await cli("jwt", "retire", "--", oldKid);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, new RegExp(`retired JWT key ${oldKid}`));
      for (const server of [a, b]) {
        assert.deepEqual(await statusWith(server, oldToken), {
          status: API_ERRORS.invalidToken.status,
          message: API_ERRORS.invalidToken.message,
        });
        assert.equal((await statusWith(server, newToken)).status, 200);
      }
    });

    await t.step("the JWKS drops it on both; the audit log has the entry", async () => {
      assert.deepEqual(await jwksKids(a), [newKid]);
      assert.deepEqual(await jwksKids(b), [newKid]);
      const entries = (await listAudit(a.services.kv)).slice(auditBefore);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].action, "jwt-key.retire");
      assert.equal(entries[0].subject, oldKid);
      assert.equal(entries[0].by, "rotation-test");
      assert.equal((entries[0].before as { retiredAt: unknown }).retiredAt, null);
      assert.ok((entries[0].after as { retiredAt: string }).retiredAt);
      const listed = await admin("GET", "/jwt/keys");
      const old = listed.body.data.keys.find((k: { kid: string }) => k.kid === oldKid);
      assert.equal(old.state, "retired");
      assert.equal(old.retiredBy, "rotation-test");
    });

    await t.step("retiring it again is refused and changes nothing", async () => {
      const res = await admin("POST", `/jwt/keys/${oldKid}/retire`);
      assert.equal(res.status, 409);
      assert.match(res.body.message, /was already retired at .* by rotation-test/);
      assert.equal((await listAudit(a.services.kv)).length, auditBefore + 1);
    });

    await t.step("a process still holding the retired key issues no token, and does not start again", async () => {
      const res = await call(a, "POST", "/auth/token", {
        headers: { "X-API-Key": apiKey },
        body: { walletAddress: randomWallet() },
      });
      assert.equal(res.status, 500);
      // A peer without JWT_PRIVATE_KEY_FILE uses the key generated into a's folder: the retired one.
      await assert.rejects(startPeerServer(a), /the JWT signing key .* was retired/);
    });
  } finally {
    await b.close();
    await a.close();
  }
});
