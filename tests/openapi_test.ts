/**
 * /openapi.json (docs/openapi.md): every route the app serves is in the document with its method and path, the document
 * is valid OpenAPI 3.1, the response checker of tests/support/server.ts catches undocumented answers, request bodies
 * that are not JSON are spec 7's `Invalid request body`, and /docs serves the pinned Scalar bundle.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createApp } from "../app.ts";
import { SCALAR_PIN, sha256Hex } from "../cli/docs_bundle.ts";
import { API_ERRORS } from "../messages.ts";
import { SCALAR_GZIP_BASE64, SCALAR_SHA256, SCALAR_VERSION } from "../routes/docs_bundle.generated.ts";
import { call, checkResponse, randomWallet, ResponseChecker, startTestServer, tokenFor } from "./support/server.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** `METHOD /path` of every operation of the document. */
function documentedRoutes(doc: Json): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) =>
      Object.keys(item).filter((k) => METHODS.includes(k)).map((m) => `${m.toUpperCase()} ${path}`)
    )
    .sort();
}

/**
 * HTML pages for people, not API operations: deliberately left out of /openapi.json. Only the operator dashboard
 * (routes/admin_ui.ts, docs/dashboard.md: server-rendered pages and form posts behind its own session cookie); /docs,
 * the reference page, is documented as an operation of the Reference tag.
 */
const HTML_ROUTE_PREFIXES = ["/admin/ui"];
const isHtmlRoute = (route: string) =>
  HTML_ROUTE_PREFIXES.some((p) => route.split(" ")[1] === p || route.split(" ")[1].startsWith(`${p}/`));

/**
 * `METHOD /path` of every handler Hono routes to, in OpenAPI's path syntax (`:id{<pattern>}` is `{id}`, the pattern's
 * own `{n}` quantifiers included). Middleware is not an operation: `app.use` registers it as "ALL", and a
 * method-scoped middleware such as the Idempotency-Key one (`app.on("POST", "*")`) has a wildcard path.
 */
function servedRoutes(app: { routes: { method: string; path: string }[] }): string[] {
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && !r.path.endsWith("*"))
    .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)(\{(?:[^{}]|\{[^{}]*\})*\})?/g, "{$1}")}`)
    .filter((r) => !isHtmlRoute(r));
  return [...new Set(routes)].sort();
}

Deno.test("every route the app serves is in /openapi.json with its method and path, and the document is OpenAPI 3.1", async () => {
  // Sim mode with the pipeline on mounts everything, the /sim routes too.
  const server = await startTestServer({ PIPELINE: "on" });
  try {
    const res = await fetch(`${server.url}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("Content-Type") ?? "", /^application\/json/);
    const doc = await res.json();

    const served = servedRoutes(server.app);
    const documented = documentedRoutes(doc);
    assert.ok(served.includes("POST /sim/deposits") && served.includes("GET /healthz"), served.join("\n"));
    assert.deepEqual(
      served.filter((r) => !documented.includes(r)),
      [],
      "routes the app serves that /openapi.json does not document",
    );
    assert.deepEqual(documented.filter((r) => !served.includes(r)), [], "documented routes the app does not serve");

    assert.equal(doc.openapi, "3.1.0");
    assert.ok(doc.info.title && doc.info.version);
    assert.deepEqual(doc.servers, [{ url: server.services.config.baseUrl }]);
    assert.deepEqual(doc.components.securitySchemes, {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "JWT",
        description: doc.components.securitySchemes.bearerAuth.description,
      },
      apiKeyAuth: {
        type: "apiKey",
        in: "header",
        name: "X-API-Key",
        description: doc.components.securitySchemes.apiKeyAuth.description,
      },
      operatorAuth: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "op_<keyId>.<secret>",
        description: doc.components.securitySchemes.operatorAuth.description,
      },
    });
    // Every operation has a tag the document lists, and JWT routes name the bearer scheme.
    const tags = new Set(doc.tags.map((t: { name: string }) => t.name));
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) {
        assert.ok(op.tags?.length === 1 && tags.has(op.tags[0]), `${method} ${path}: tag ${op.tags}`);
      }
    }
    assert.deepEqual(doc.paths["/mint/wallets"].post.security, [{ bearerAuth: [] }]);

    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(validator.version, "3.1");
    assert.ok(result.valid, `not valid OpenAPI 3.1: ${JSON.stringify(result.errors, null, 2)}`);
  } finally {
    await server.close();
  }
});

Deno.test("a server that mounts no /sim documents no /sim route and no Simulator tag", async () => {
  const server = await startTestServer();
  try {
    // As in live mode, where no chain is simulated.
    const app = createApp({ ...server.services, simulatedChains: [] });
    const doc = await (await app.request("/openapi.json")).json();
    assert.deepEqual(documentedRoutes(doc), servedRoutes(app));
    assert.ok(!documentedRoutes(doc).some((r) => r.includes("/sim/")));
    assert.ok(!doc.tags.some((t: { name: string }) => t.name === "Simulator"));
    assert.ok(documentedRoutes((await call(server, "GET", "/openapi.json")).body).includes("POST /sim/deposits"));
  } finally {
    await server.close();
  }
});

Deno.test("the response checker refuses answers the document does not describe", async () => {
  const server = await startTestServer();
  try {
    const doc = (await call(server, "GET", "/openapi.json")).body;
    const checker = new ResponseChecker(doc);
    const json = "application/json";
    const wallet = { address: "addr", chain: "sol", destinationChain: "base" };
    assert.equal(checker.problem("POST", "/mint/wallets", 201, json, { success: true, data: wallet }), null);
    // A status the route does not list (409 is listed on every POST: the Idempotency-Key middleware answers it).
    assert.match(checker.problem("POST", "/mint/wallets", 418, json, { success: false, message: "x" })!, /418/);
    assert.equal(checker.problem("POST", "/mint/wallets", 409, json, { success: false, message: "x" }), null);
    // A field missing, a wrong type, a wrong enum value.
    assert.match(
      checker.problem("POST", "/mint/wallets", 201, json, {
        success: true,
        data: { chain: "sol", destinationChain: "base" },
      })!,
      /address/,
    );
    assert.match(checker.problem("GET", "/mint/wallets", 200, json, { success: true, data: {} })!, /array/);
    assert.match(
      checker.problem("POST", "/mint/wallets", 201, json, { success: true, data: { ...wallet, chain: "btc" } })!,
      /allowed values/,
    );
    // An error without the envelope, another media type, an undocumented route.
    assert.ok(checker.problem("POST", "/mint/wallets", 400, json, { error: "bad" }));
    assert.ok(checker.problem("GET", "/mint/wallets", 200, "text/plain", "[]"));
    assert.match(checker.problem("GET", "/nowhere", 200, json, {})!, /not in \/openapi\.json/);
    // The service's 404 for an unknown route is the one answer an undocumented route may give.
    assert.equal(checker.problem("GET", "/nowhere", 404, json, { success: false, message: "Not found" }), null);
    // Through call(): a server's real answers pass (call() throws otherwise).
    assert.equal((await call(server, "GET", "/nowhere")).status, 404);
    await assert.rejects(
      checkResponse(server, "GET", "/healthz", 200, json, { success: true, data: { status: "down" } }),
      /response not as documented: GET \/healthz 200/,
    );
  } finally {
    await server.close();
  }
});

Deno.test("a request body that is not JSON is 400 Invalid request body and changes nothing", async () => {
  const server = await startTestServer();
  try {
    const token = await tokenFor(server, randomWallet());
    const body = JSON.stringify({ chain: "sol", destinationChain: "base" });
    const cases: { name: string; headers: Record<string, string>; body?: string }[] = [
      { name: "text/plain", headers: { "Content-Type": "text/plain" }, body },
      { name: "form", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "chain=sol" },
      { name: "no Content-Type", headers: {}, body },
      { name: "empty body, no Content-Type", headers: {} },
      { name: "empty JSON body", headers: { "Content-Type": "application/json" }, body: "" },
      { name: "malformed JSON", headers: { "Content-Type": "application/json" }, body: "{" },
    ];
    for (const c of cases) {
      const res = await fetch(`${server.url}/mint/wallets`, {
        method: "POST",
        headers: { ...c.headers, Authorization: `Bearer ${token}` },
        body: c.body,
      });
      const answer = await res.json();
      assert.equal(res.status, 400, c.name);
      assert.deepEqual(answer, { success: false, message: API_ERRORS.invalidRequestBody.message }, c.name);
      await checkResponse(server, "POST", "/mint/wallets", res.status, res.headers.get("Content-Type"), answer);
    }
    // JSON with a charset parameter is JSON.
    const ok = await call(server, "POST", "/mint/wallets", {
      token,
      rawBody: body,
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    assert.equal(ok.status, 201);
    assert.equal((await call(server, "GET", "/mint/wallets", { token })).body.data.length, 1);
  } finally {
    await server.close();
  }
});

Deno.test("/docs and /docs/scalar.js serve the pinned Scalar bundle from this server", async () => {
  // The generated module is the pinned package's bundle (cli/docs_bundle.ts writes it from `npm pack`).
  assert.equal(SCALAR_VERSION, SCALAR_PIN, "run `deno task build:docs` after changing SCALAR_PIN");
  const gz = Uint8Array.fromBase64(SCALAR_GZIP_BASE64);
  const plain = new Uint8Array(
    await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
  );
  assert.equal(await sha256Hex(plain), SCALAR_SHA256);

  const server = await startTestServer();
  try {
    const page = await call(server, "GET", "/docs");
    assert.equal(page.status, 200);
    assert.match(page.body, /<script src="\/docs\/scalar\.js\?v=[0-9a-f]{16}"><\/script>/);
    assert.match(page.body, /"url":"\/openapi\.json"/);
    // The page names no other host: everything it loads comes from this server.
    assert.doesNotMatch(page.body, /https?:\/\//);

    // Deno's fetch asks for gzip and decodes it; a client that takes no encoding gets the plain bytes.
    for (const encoding of ["gzip, br", "identity"]) {
      const res = await fetch(`${server.url}/docs/scalar.js`, { headers: { "Accept-Encoding": encoding } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Content-Encoding"), encoding === "identity" ? null : "gzip");
      assert.match(res.headers.get("Content-Type")!, /^text\/javascript/);
      assert.equal(await sha256Hex(new Uint8Array(await res.arrayBuffer())), SCALAR_SHA256);
    }
    const etag = `"${SCALAR_SHA256}"`;
    const cached = await fetch(`${server.url}/docs/scalar.js`, { headers: { "If-None-Match": etag } });
    await cached.body?.cancel();
    assert.equal(cached.status, 304);
  } finally {
    await server.close();
  }
});
